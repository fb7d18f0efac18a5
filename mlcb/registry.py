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
imported, called or unpickled: a name in a file (a TOML setting's family, policy or environment, a
sweep grid's policy) resolves only to what is registered (:meth:`Registry.resolve`), never by
looking up an attribute of a module, so a plugin's module namespace (whatever it imports) is out
of reach of a file.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

from mlcb.validation import InputError, InputTypeError, did_you_mean, input_error, printable, shown

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
    #: Registered environments it runs on, where that is declared (experts: ``mlcb list`` says it).
    environments: tuple[str, ...] = ()

    def same_as(self, other: Any) -> bool:
        """Whether ``other`` registers the same thing (defaults that cannot be compared, such as
        arrays, count as different)."""
        try:
            return bool(self == other)
        except Exception:
            return False

    def load(self) -> Any:
        """The registered object; an :class:`~mlcb.validation.InputError` naming the entry point
        when its module does not exist or lacks the attribute (a plugin's typo). Any other error
        of importing the module (a dependency it needs) propagates as it is."""
        module_name, _, attribute = self.entry_point.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is None or not (
                module_name == error.name or module_name.startswith(error.name + ".")
            ):
                raise
            raise InputError(
                f"{self.name!r} is registered as {self.entry_point!r}, but there is no module "
                f"{error.name!r} (is its directory on PYTHONPATH?)"
            ) from error
        try:
            return getattr(module, attribute)
        except AttributeError:
            raise InputError(
                f"{self.name!r} is registered as {self.entry_point!r}, but module {module_name!r} "
                f"has no attribute {attribute!r}"
            ) from None


class Registry:
    """Names to entry points for one kind of object (``"policy"``, ``"expert"``, ``"environment"``)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    def register(
        self,
        name: str,
        entry_point: str,
        summary: str = "",
        *,
        override: bool = False,
        environments: Any = (),
        **defaults: Any,
    ) -> None:
        """Register ``name`` for ``entry_point`` (``"module:attr"``) with ``defaults``.

        A name that is taken (a built-in policy's, another plugin's) is refused in one line naming
        what holds it, unless ``override=True`` asks to replace it: then a one-line
        :class:`~mlcb.errors.NameTaken` warning says which registration now holds the name.
        Registering a name again exactly as it is (a plugin loaded twice) changes nothing.
        ``environments``: the registered environments it runs on (an expert's; ``mlcb list`` shows
        them).

        Examples
        --------
        >>> registry = Registry("policy")
        >>> registry.register("mine", "my_plugin:Mine")
        >>> registry.register("mine", "my_plugin:Mine")  # the same again: nothing changes
        >>> registry.register("mine", "other_plugin:Theirs")
        Traceback (most recent call last):
        ...
        mlcb.validation.InputError: policy name 'mine' is taken (by 'my_plugin:Mine'); register ...
        """
        if not isinstance(name, str) or not name or printable(name) != name:
            raise InputError(
                f"{self.kind} name must be a non-empty string without control characters, got {shown(name)}"
            )
        if not isinstance(entry_point, str) or ":" not in entry_point:
            raise InputError(f"entry_point must look like 'module:attr', got {shown(entry_point)}")
        if not isinstance(override, bool):
            raise InputError(f"override must be True or False, got {shown(override)}")
        if isinstance(environments, str) or not all(isinstance(e, str) for e in environments):
            raise InputError(f"environments must be a tuple of environment ids, got {shown(environments)}")
        entry = Entry(name, entry_point, dict(defaults), summary, tuple(environments))
        taken = self._entries.get(name)
        if taken is not None and not taken.same_as(entry):
            if not override:
                raise InputError(
                    f"{self.kind} name {shown(name)} is taken (by {shown(taken.entry_point, 80)}); register "
                    f"{shown(entry_point, 80)} under another name, or pass override=True to replace it"
                )
            import warnings

            from mlcb.errors import NameTaken

            warnings.warn(
                f"{self.kind} {shown(name)} is now {shown(entry_point, 80)} (override=True), in place of "
                f"{shown(taken.entry_point, 80)}; results name it {shown(name)} still",
                NameTaken,
                stacklevel=3,
            )
        self._entries[name] = entry

    def entries(self) -> list[Entry]:
        """Every registered entry, in the order the names were first registered."""
        return list(self._entries.values())

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def entry(self, name: str) -> Entry:
        """The entry of ``name``; an :class:`~mlcb.validation.InputError` listing the known names
        (and how a plugin adds more) if there is none."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise InputError(
                f"unknown {self.kind} {shown(name)}{did_you_mean(name, self.names())}; registered "
                f"{self.kind} names: {', '.join(self.names())} (a module of one's own registers more: "
                "--plugin MODULE)"
            ) from None

    def resolve(self, reference: Any, what: str) -> tuple[Entry, bool]:
        """The registered entry that ``reference``, a name read from a file, stands for, and
        whether its defaults apply: a registered name (defaults apply), or the ``"module:attr"``
        entry point of a registered name (the class alone). Nothing else resolves: no module is
        imported and no attribute looked up for a name that is not registered. ``what`` names the
        setting in the one-line :class:`~mlcb.validation.InputError`.

        Examples
        --------
        >>> registry = Registry("expert")
        >>> registry.register("ucb1", "agents.bandits:UCB1", c=2.0)
        >>> registry.resolve("ucb1", "family")[0].defaults
        {'c': 2.0}
        >>> registry.resolve("agents.bandits:UCB1", "family")[1]
        False
        >>> registry.resolve("subprocess:Popen", "family")
        Traceback (most recent call last):
        ...
        mlcb.validation.InputError: family = 'subprocess:Popen' is not a registered expert; ...
        """
        if not isinstance(reference, str):
            raise InputError(
                f"{what} must be a registered {self.kind} name (a string), got {shown(reference)}"
            )
        if reference in self._entries:
            return self._entries[reference], True
        if ":" in reference:
            for entry in self._entries.values():
                if entry.entry_point == reference:
                    return entry, False
            raise InputError(
                f"{what} = {shown(reference)} is not a registered {self.kind}; name one of `mlcb list`, "
                f"or register the class in a plugin module (e.g. agents.register('NAME', "
                f"{shown(reference)})) and name that module with --plugin MODULE"
            )
        return self.entry(reference), True

    def make(self, name: str, **params: Any) -> Any:
        """Build the object registered as ``name`` with its defaults updated by ``params``; a
        ``ValueError`` or ``TypeError`` its constructor raises for ``params`` comes out as an
        :class:`~mlcb.validation.InputError` (an ``InputTypeError`` for a ``TypeError``) with the
        same message. A registered default that the class takes no parameter for is refused
        naming the registration (the caller, who passed none of it, cannot fix it)."""
        entry = self.entry(name)
        factory = entry.load()
        try:  # a default the class does not take is the registration's fault, not the caller's
            check_parameters(
                factory, {key: value for key, value in entry.defaults.items() if key not in params}
            )
        except InputTypeError as error:
            raise InputTypeError(
                f"{self.kind} {shown(name)} is registered as {shown(entry.entry_point, 80)} with a default "
                f"it does not take: {error} (fix the plugin's register call)"
            ) from None
        return build(factory, {**entry.defaults, **params})

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def build(factory: Any, params: dict[str, Any]) -> Any:
    """``factory(**params)``, a ``ValueError`` or ``TypeError`` it raises turned into an
    :class:`~mlcb.validation.InputError` (the parameters are the user's). A parameter that
    ``factory`` does not take is refused before the call, by name, with the ones it takes."""
    check_parameters(factory, params)
    try:
        return factory(**params)
    except InputError:
        raise
    except (ValueError, TypeError) as error:
        raise input_error(error) from error


def check_parameters(
    factory: Any, params: dict[str, Any], caller: str | None = None, takes: str = "its parameters: "
) -> None:
    """An :class:`~mlcb.validation.InputTypeError` naming each key of ``params`` that ``factory``
    takes no keyword for, with the ones it takes; nothing when its signature cannot be read or
    takes any keyword (``**kwargs``). ``caller`` names who was given ``params`` (default: the
    factory), ``takes`` introduces the list of keywords.

    >>> def ucb(c=1.0, rate="auto"): ...
    >>> check_parameters(ucb, {"cc": 2.0})
    Traceback (most recent call last):
    mlcb.validation.InputTypeError: ucb has no parameter 'cc'; its parameters: c, rate
    """
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    keywords = []
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            return
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            keywords.append(parameter.name)
    unknown = [repr(name) for name in params if name not in keywords]
    if unknown:
        name = caller or getattr(factory, "__name__", type(factory).__name__)
        raise InputTypeError(
            f"{name} has no parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"{takes}{', '.join(keywords) or '(none)'}"
        )


def make_named(table: str, params: dict[str, Any], kind: Any, name: str) -> Any:
    """``kind.make(name, **params)`` (``kind``: :mod:`mlcb.policies` or :mod:`envs`): an unknown
    ``name`` raises its own error, any error of the parameters names ``table``
    (``"policy_params: MLCB has no parameter 'c'; ..."``)."""
    kind.registry.entry(name).load()  # an unknown name, an entry point that cannot load: their own errors
    try:
        return kind.make(name, **params)
    except InputError as error:
        raise type(error)(f"{table}: {error}") from None


# --- plugins -----------------------------------------------------------------------------------
def _is_module_name(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def load_plugin(name: str) -> types.ModuleType:
    """Import the module ``name``, a plugin the user named on the command line, so that it
    registers its names; returns it. An :class:`~mlcb.validation.InputError` in one line when it
    cannot be imported.

    Only for names given by the user directly (``--plugin``), never for a name read from a file.
    """
    if not isinstance(name, str) or not _is_module_name(name):
        hint = (
            " (name a module, not a file: its directory goes on PYTHONPATH)"
            if "/" in str(name) or str(name).endswith(".py")
            else ""
        )
        raise InputError(
            f"plugin: {shown(name)} is not a module name such as my_families or my_package.families{hint}"
        )
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and (name == error.name or name.startswith(error.name + ".")):
            raise InputError(f"plugin {name!r}: no such module (is its directory on PYTHONPATH?)") from error
        raise InputError(f"plugin {name!r} failed to import: {error}") from error
    except (Exception, SystemExit) as error:  # a module that parses arguments or exits on import
        raise InputError(f"plugin {name!r} failed to import: {type(error).__name__}: {error}") from error
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
        except (Exception, SystemExit) as error:
            raise InputError(
                f"plugin entry point {entry_point.name!r} ({entry_point.value}) of group {group!r} failed: "
                f"{type(error).__name__}: {error}"
            ) from error
        loaded.append(entry_point.name)
    return loaded
