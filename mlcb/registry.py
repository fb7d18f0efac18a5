"""One registry idiom for policies, expert families and environments (Gymnasium's ``register``/``make``).

Each kind of thing a simulation names has one :class:`Registry` and the same three functions
beside it:

* meta-policies: ``mlcb.policies.register``, ``make``, ``names`` and ``mlcb.policies.registry``;
* expert families: ``agents.register``, ``make``, ``names`` and ``agents.registry``;
* environments: ``envs.register``, ``make``, ``names`` and ``envs.registry`` (each id is also
  registered with Gymnasium, so that ``gymnasium.make`` builds it too).

``register(name, "module:attr", summary="...", **defaults)`` names a class; ``make(name,
**params)`` builds it with ``defaults`` updated by ``params``; ``names()`` lists the registered
names, and ``registry.entry(name).summary`` describes one (``mlcb list`` prints them). Entry points
are ``"module:attr"`` strings, imported on first use, so registering costs nothing and third-party
packages can add names without importing heavy modules. docs/extending.md has a recipe for each
kind.

Plugins. Code of one's own (policies, expert families, environments) joins the command line through a
*plugin*: a module that registers its names when imported (``mlcb.policies.register(...)``,
``agents.register(...)``, ``envs.register(...)``). Only two things are ever imported as plugins:
modules the user names on the command line (``mlcb run setting.toml --plugin my_families``,
:func:`load_plugin`), and the entry points of installed packages in the group :data:`PLUGIN_GROUP`
(:func:`load_entry_points`). Nothing read from a file (a TOML setting, a saved result) is ever
imported, called or unpickled: a TOML ``family = "module:Class"`` is resolved by
:func:`plugin_attribute` among the modules already loaded with ``--plugin``, and refused otherwise.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import types
from dataclasses import dataclass, field
from typing import Any

#: The ``importlib.metadata`` entry-point group of plugins: each entry point is a module (imported)
#: or a callable (imported, then called without arguments) that registers names. In a package's
#: ``pyproject.toml``: ``[project.entry-points."mlcb.plugins"]`` ``my_families = "my_package.families"``.
PLUGIN_GROUP = "mlcb.plugins"

#: Modules loaded by :func:`load_plugin` (named by the user on the command line), by name.
_PLUGINS: dict[str, types.ModuleType] = {}


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
    """Names to entry points for one kind of object (``"policy"``, ``"expert"``, ``"environment"``)."""

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


# --- plugins -----------------------------------------------------------------------------------
def _is_module_name(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def load_plugin(name: str) -> types.ModuleType:
    """Import the module ``name``, a plugin the user named on the command line, so that it
    registers its names; returns it. A ``ValueError`` in one line when it cannot be imported.

    Only for names given by the user directly (``--plugin``), never for a name read from a file.
    """
    if not isinstance(name, str) or not _is_module_name(name):
        hint = (
            " (name a module, not a file: its directory goes on PYTHONPATH)"
            if "/" in str(name) or str(name).endswith(".py")
            else ""
        )
        raise ValueError(
            f"plugin: {name!r} is not a module name such as my_families or my_package.families{hint}"
        )
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and (name == error.name or name.startswith(error.name + ".")):
            raise ValueError(f"plugin {name!r}: no such module (is its directory on PYTHONPATH?)") from error
        raise ValueError(f"plugin {name!r} failed to import: {error}") from error
    except Exception as error:
        raise ValueError(f"plugin {name!r} failed to import: {type(error).__name__}: {error}") from error
    _PLUGINS[name] = module
    return module


def plugins() -> list[str]:
    """The modules loaded with :func:`load_plugin`, in the order they were loaded."""
    return list(_PLUGINS)


def load_entry_points(group: str = PLUGIN_GROUP) -> list[str]:
    """Load every installed entry point of ``group``: import it, and call it when it is a callable
    rather than a module. Returns the entry points' names; a ``ValueError`` naming the first one
    that fails."""
    loaded = []
    for entry_point in importlib.metadata.entry_points(group=group):
        try:
            target = entry_point.load()
            if not isinstance(target, types.ModuleType) and callable(target):
                target()
        except Exception as error:
            raise ValueError(
                f"plugin entry point {entry_point.name!r} ({entry_point.value}) of group {group!r} failed: "
                f"{type(error).__name__}: {error}"
            ) from error
        loaded.append(entry_point.name)
    return loaded


def plugin_attribute(reference: str, what: str) -> Any:
    """The object ``attr`` of plugin module ``module`` for a ``"module:attr"`` read from a file.

    Accepted only when ``module`` was loaded with ``--plugin`` (:func:`load_plugin`): nothing is
    imported here. ``what`` names the setting in the one-line ``ValueError`` otherwise.
    """
    module_name, colon, attribute = str(reference).partition(":")
    if not colon or not _is_module_name(module_name) or not attribute.isidentifier():
        raise ValueError(f"{what} must be a registered name or 'module:Class', got {reference!r}")
    module = _PLUGINS.get(module_name)
    if module is None:
        raise ValueError(
            f"{what} = {reference!r}: module {module_name!r} is not a plugin; name it on the command line "
            f"with --plugin {module_name}"
        )
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"{what} = {reference!r}: plugin {module_name!r} has no {attribute!r}") from None
