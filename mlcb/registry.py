"""One small registry idiom for policies and expert families (Gymnasium's ``register``/``make``).

Entry points are ``"module:attr"`` strings, imported on first use, so registering costs nothing and
third-party packages can add names without importing heavy modules.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Entry:
    """A registered name: where its class lives and the keyword defaults it is made with."""

    name: str
    entry_point: str
    defaults: dict[str, Any] = field(default_factory=dict)
    summary: str = ""

    def load(self) -> Any:
        module_name, _, attribute = self.entry_point.partition(":")
        return getattr(importlib.import_module(module_name), attribute)


class Registry:
    """Names to entry points for one kind of object (``"policy"``, ``"expert"``)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, entry_point: str, summary: str = "", **defaults: Any) -> None:
        """Register ``name``; re-registering a name replaces it."""
        if ":" not in entry_point:
            raise ValueError(f"entry_point must look like 'module:attr', got {entry_point!r}")
        self._entries[name] = Entry(name, entry_point, dict(defaults), summary)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def entry(self, name: str) -> Entry:
        """The entry of ``name``; a ``ValueError`` listing the known names if there is none."""
        try:
            return self._entries[name]
        except KeyError:
            raise ValueError(
                f"unknown {self.kind} {name!r}; registered {self.kind} names: {', '.join(self.names())}"
            ) from None

    def make(self, name: str, **params: Any) -> Any:
        """Build the object registered as ``name`` with its defaults updated by ``params``."""
        entry = self.entry(name)
        return entry.load()(**{**entry.defaults, **params})

    def __contains__(self, name: object) -> bool:
        return name in self._entries
