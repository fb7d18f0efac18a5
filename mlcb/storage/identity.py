"""What a setting is, for the parts a run keeps: a description of everything that decides its
numbers, as plain JSON, and a digest of it.

A run that resumes (``mlcb run``, ``mlcb.simulate(parts=...)``, a sweep) reuses a replication only
when it was made for the same setting. The description covers every object of the setting in
full: each value by content (arrays by a digest of their bytes, random generators by their
state), each object by its class (``"module:qualname"``) and its parameters, and each class or
function of one's own (outside mlcb's packages, whose version the description records) also by a
digest of its code and of what the names it reads refer to (helpers, constants, modules of one's
own), so that editing an expert's ``learn``, or a helper it calls, makes another setting. An object's
parameters are what its ``get_params()`` returns (scikit-learn's hook, which river models also
have as ``_get_params()``: the documented way to say what decides its numbers), else every
attribute it holds, private ones included, each described in turn, and what its own reduction
(``__reduce_ex__``, as ``pickle`` and ``copy`` read it) gives beyond them: the state an object
keeps in C, which no attribute shows (a ``functools.partial``'s function and arguments, a
``deque``'s items, a ``datetime``'s value). The reduction is only read, never run.

An object that cannot be described (no attributes and of no kind known here: a lock, an open
file, a C object) leaves the description incomplete; :func:`describe` then reports where, and a
run that keeps parts refuses to start rather than risk mixing in another setting's replications
(:meth:`mlcb.config.SimulationConfig.check_resumable`).

Examples
--------
>>> class Arm:
...     def __init__(self, arm):
...         self._arm = arm
>>> described = describe(Arm(0))
>>> described.problems, described.value["attributes"]
([], {'_arm': 0})
>>> digest(describe(Arm(0)).value) == digest(describe(Arm(1)).value)
False
"""

from __future__ import annotations

import copyreg
import dataclasses
import enum
import functools
import hashlib
import importlib.metadata
import json
import math
import random
import sys
import sysconfig
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Packages whose code the package version stands for (their classes are described without a
#: digest of their code).
OWN_PACKAGES = ("mlcb", "agents", "envs")
#: How deep a description goes; an object nested deeper cannot be described.
MAX_DEPTH = 32
#: The most elements of a container described one by one.
MAX_ELEMENTS = 1_000_000


@dataclass
class Described:
    """A description (plain JSON) and where it is incomplete (one line each)."""

    value: Any
    problems: list[str] = field(default_factory=list)


def digest(value: Any) -> str:
    """The SHA-256 (hex) of ``value``'s canonical JSON (keys sorted)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def label(obj: Any) -> str:
    """``"module:qualname"`` of a class, function or module (of ``obj``'s class otherwise)."""
    target = obj if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)) else type(obj)
    module = getattr(target, "__module__", None) or "?"
    return f"{module}:{getattr(target, '__qualname__', None) or getattr(target, '__name__', '?')}"


def own(obj: Any) -> bool:
    """Whether the class or function ``obj`` is mlcb's own or Python's (the package version, or
    Python's, stands for its code)."""
    module = getattr(obj, "__module__", None) or ""
    root = module.split(".")[0]
    return root in OWN_PACKAGES or root in sys.stdlib_module_names or root in ("", "builtins")


@functools.lru_cache(maxsize=256)
def library(root: str) -> str | None:
    """``"name version"`` when the top-level module ``root`` is an installed library (it lives in
    site-packages), else ``None`` (code of one's own: a script, a notebook, a plugin on
    ``PYTHONPATH``)."""
    module = sys.modules.get(root)
    path = getattr(module, "__file__", None) or ""
    installed = {sysconfig.get_paths()[name] for name in ("purelib", "platlib")}
    if not path or not any(Path(path).resolve().is_relative_to(Path(p).resolve()) for p in installed):
        return None
    try:
        version = importlib.metadata.version(root)
    except importlib.metadata.PackageNotFoundError:
        version = str(getattr(module, "__version__", "?"))
    return f"{root} {version}"


def origin(obj: Any) -> dict[str, Any]:
    """What stands for the code of the class or function ``obj``: nothing for mlcb's own and
    Python's, the library and its version for an installed library's, and a digest of the code
    for one's own (:func:`class_code`, :func:`code_digest`)."""
    if own(obj):
        return {}
    if isinstance(obj, type):
        libraries = sorted({found for base in obj.__mro__ if (found := _library_of(base))})
        code = class_code(obj)
        return {**({"libraries": libraries} if libraries else {}), **({"code": code} if code else {})}
    found = _library_of(obj)
    if found:
        return {"library": found}
    if isinstance(obj, types.FunctionType):
        return {"code": function_code(obj)}
    code = getattr(obj, "__code__", None)
    return {"code": code_digest(code)} if isinstance(code, types.CodeType) else {}


def _library_of(obj: Any) -> str | None:
    if own(obj):
        return None
    return library((getattr(obj, "__module__", None) or "").split(".")[0])


def _constant(value: Any) -> str:
    """A deterministic text of a code constant (frozensets sorted: their order varies by run)."""
    if isinstance(value, types.CodeType):
        return code_digest(value)
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(_constant(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(_constant(v) for v in value) + ")"
    return repr(value)


def code_digest(code: types.CodeType) -> str:
    """A digest of a code object: its bytecode, names and constants (nested code included)."""
    hasher = hashlib.sha256()
    hasher.update(code.co_code)
    hasher.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    hasher.update(",".join(_constant(c) for c in code.co_consts).encode())
    return hasher.hexdigest()[:16]


#: Class attributes that are no code of the class: Python's own, and ``__slotnames__``, which
#: ``copy`` and ``pickle`` add to a class the first time they copy one of its objects (a digest
#: that read it would change once an expert is copied, and a setting would not be told from
#: itself within one process).
_NOT_CODE = frozenset(("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__", "__slotnames__"))


def class_code(cls: type, seen: set[int] | None = None) -> str | None:
    """A digest of the code of a class of one's own and of its bases of one's own (every method,
    property and class attribute, each method with what it reads from its module:
    :func:`function_code`), or ``None`` when none is one's own (mlcb's, Python's or an installed
    library's)."""
    seen = set() if seen is None else seen
    seen.add(id(cls))
    parts = []
    for base in cls.__mro__:
        if own(base) or _library_of(base):
            continue
        for name, member in sorted(vars(base).items()):
            if name in _NOT_CODE:
                continue
            parts.append(f"{base.__qualname__}.{name}={_member(member, seen)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16] if parts else None


def _names_read(code: types.CodeType) -> set[str]:
    """The global and attribute names a code object (and the code nested in it) reads."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_read(constant)
    return names


def function_code(function: types.FunctionType, seen: set[int] | None = None) -> str:
    """A digest of a function of one's own: its code (:func:`code_digest`) and what each name it
    reads is in its module, so that editing a helper it calls, in its own module or in another of
    one's own, makes another digest. A function or class of one's own counts by its code (this
    function and :func:`class_code`, in turn), a module of one's own by its source file, a Numba
    kernel by its Python function, a plain value (numbers, text, arrays of numbers, containers of
    them) by its content; mlcb's, Python's and installed libraries' names, and any other object,
    by their name or class (their version stands for a library's code)."""
    seen = set() if seen is None else seen
    seen.add(id(function))
    parts = [code_digest(function.__code__)]
    namespace = getattr(function, "__globals__", None) or {}
    for name in sorted(_names_read(function.__code__)):
        if name in namespace:
            parts.append(f"{name}={_global(namespace[name], seen)}")
    # What the code reads besides its module: its default arguments, and the variables it closes
    # over (a class made by a function of one's own, ``def make(lr): class Learner: ...``, whose
    # methods read ``lr``): two such classes differ by these alone.
    parts += [f"default={_global(value, seen)}" for value in function.__defaults__ or ()]
    keywords = sorted((function.__kwdefaults__ or {}).items())
    parts += [f"{key}={_global(value, seen)}" for key, value in keywords]
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            parts.append(f"{name}={_global(cell.cell_contents, seen)}")
        except ValueError:  # an empty cell (a name assigned later)
            parts.append(f"{name}=<empty>")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _global(value: Any, seen: set[int]) -> str:
    """A text of what a global name of a function of one's own refers to (:func:`function_code`)."""
    if isinstance(value, (types.FunctionType, type)):
        if own(value) or _library_of(value):
            return label(value)
        if id(value) in seen:  # recursion, or a function that names its own class
            return f"{label(value)} (above)"
        if isinstance(value, type):
            return class_code(value, seen) or label(value)
        return function_code(value, seen)
    if isinstance(value, types.ModuleType):
        root = value.__name__.split(".")[0]
        if root in OWN_PACKAGES or root in sys.stdlib_module_names or library(root):
            return value.__name__
        return _source_digest(value)
    try:
        python = getattr(value, "py_func", None)  # a Numba kernel's Python function
    except Exception:  # noqa: BLE001 - a __getattr__ that raises another error
        python = None
    if isinstance(python, types.FunctionType):
        return _global(python, seen)
    if _plain(value):
        return json.dumps(_Describer().describe(value, "", 0), sort_keys=True)
    return label(value)  # any other object: by its class (what it holds is not read here)


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is a plain value: a number, text, ``None``, an array of numbers, or a
    list, tuple or dict of plain values (the constants a function may read from its module)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype != object
    if depth < 4 and isinstance(value, (list, tuple, frozenset)) and len(value) <= 10_000:
        return all(_plain(item, depth + 1) for item in value)
    if depth < 4 and isinstance(value, dict) and len(value) <= 10_000:
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _source_digest(module: types.ModuleType) -> str:
    """A digest of the source file of a module of one's own (its name where it has no file)."""
    path = getattr(module, "__file__", None)
    try:
        return file_digest(path) if path else module.__name__
    except OSError:
        return module.__name__


def file_digest(path: str | Path) -> str:
    """The SHA-256 (hex) of the file ``path``'s bytes (cached while its modification time and
    size stay the same)."""
    resolved = Path(path).resolve()
    stat = resolved.stat()
    return _file_digest(str(resolved), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _member(member: Any, seen: set[int] | None = None) -> str:
    """A text of a class member for :func:`class_code`."""
    if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
    if isinstance(member, property):
        return ",".join(_member(f, seen) for f in (member.fget, member.fset, member.fdel) if f is not None)
    if isinstance(member, types.FunctionType):
        return function_code(member, seen)
    code = getattr(member, "__code__", None)
    if isinstance(code, types.CodeType):
        return code_digest(code)
    try:
        return json.dumps(_Describer().describe(member, "", 0), sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return label(member)


def parameters(obj: Any) -> tuple[dict[str, Any] | None, str]:
    """``(parameters, source)``: what decides an object's numbers, as a dict, and where it came
    from (``"get_params"``, ``"fields"``, ``"attributes"``), or ``(None, "")`` when the object
    has neither a hook nor attributes."""
    for hook in ("get_params", "_get_params"):
        try:
            method = getattr(obj, hook, None)
        except Exception:  # noqa: BLE001 - a __getattr__ that raises another error: no hook
            method = None
        if callable(method) and not isinstance(obj, type):
            try:
                got = method()
            except TypeError:  # a get_params that needs arguments is not the hook
                continue
            if isinstance(got, dict):
                return dict(got), "get_params"
    if dataclasses.is_dataclass(obj) and own(type(obj)):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}, "fields"
    found: dict[str, Any] = {}
    has = False
    if isinstance(getattr(obj, "__dict__", None), dict):
        found.update(vars(obj))
        has = True
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()) if isinstance(getattr(cls, "__slots__", ()), tuple) else ():
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                found[slot] = getattr(obj, slot)
                has = True
    return (found, "attributes") if has else (None, "")


#: What a built-in function's ``__self__`` is when it is no method of an object.
_UNBOUND = (type(None), types.ModuleType)
#: The callable of the default reduction of a plain object (``copyreg.__newobj__``).
_NEW_OBJECT = getattr(copyreg, "__newobj__", None)


def _rebuilt(value: Any) -> list | None:
    """What ``value``'s own ``__reduce_ex__`` gives to rebuild it (the callable, its arguments,
    the state, the items), where that is more than the default of a plain object (its class, and
    its attributes, which :func:`parameters` reads anyway): the state of an object kept in C, which
    no attribute shows (a ``functools.partial``'s function and arguments, a ``deque``'s items, a
    ``datetime``'s value, a bound built-in method's object). Only read, never run; ``None`` when
    the object gives nothing more (or cannot be reduced: a lock, an open file)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # itertools' reduction (3.12)
            reducer = copyreg.dispatch_table.get(type(value))  # a reduction registered for the class
            reduced = reducer(value) if reducer is not None else value.__reduce_ex__(4)
        if not isinstance(reduced, tuple) or len(reduced) < 2 or reduced[0] is getattr:
            return None  # a global's name, or an attribute of one (a method, a descriptor)
        parts = list(reduced) + [None] * (5 - len(reduced))
        default = parts[0] is _NEW_OBJECT and parts[1] == (type(value),)
        if default and parts[3] is None and parts[4] is None:
            return None
        items = None if parts[3] is None else list(parts[3])
        entries = None if parts[4] is None else [list(entry) for entry in parts[4]]
    except Exception:  # noqa: BLE001 - an object that refuses to be reduced keeps its description
        return None
    return [label(parts[0]), list(parts[1]), parts[2], items, entries]


class _Describer:
    """One description: the problems met, the objects on the way (cycles) and those seen."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.on_path: set[int] = set()
        self.seen: dict[int, tuple[Any, Any]] = {}

    def problem(self, where: str, text: str) -> str:
        self.problems.append(f"{where or 'it'} {text}")
        return f"<undescribed: {text}>"

    def describe(self, value: Any, where: str, depth: int) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else repr(value)
        if isinstance(value, np.generic):
            return self.describe(value.item(), where, depth)
        if depth > MAX_DEPTH:
            return self.problem(where, f"is nested more than {MAX_DEPTH} levels deep")
        key = id(value)
        if key in self.on_path:
            return "<cycle>"
        if key in self.seen:
            return self.seen[key][1]
        self.on_path.add(key)
        try:
            described = self._describe(value, where, depth)
        finally:
            self.on_path.discard(key)
        self.seen[key] = (value, described)  # the value kept alive: ids stay unique in the call
        return described

    def _describe(self, value: Any, where: str, depth: int) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"bytes": hashlib.sha256(bytes(value)).hexdigest()}
        if isinstance(value, complex):
            return {"complex": [repr(value.real), repr(value.imag)]}
        if isinstance(value, enum.Enum):
            return {"enum": label(value), "value": self.describe(value.value, where, depth + 1)}
        if isinstance(value, np.ndarray):
            return self._array(value, where, depth)
        if isinstance(value, (list, tuple)):
            if len(value) > MAX_ELEMENTS:
                return self.problem(where, f"holds {len(value):,} elements, too many to describe")
            return [self.describe(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict):
            if len(value) > MAX_ELEMENTS:
                return self.problem(where, f"holds {len(value):,} entries, too many to describe")
            items = [
                (k if isinstance(k, str) else repr(k), self.describe(v, f"{where}[{k!r}]", depth + 1))
                for k, v in value.items()
            ]
            return {"dict": sorted(items, key=lambda item: item[0])}
        if isinstance(value, (set, frozenset)):
            members = [self.describe(v, f"{where}{{...}}", depth + 1) for v in value]
            return {"set": sorted(members, key=lambda m: json.dumps(m, sort_keys=True))}
        if isinstance(value, type):
            return {"class": label(value), **origin(value)}
        if isinstance(value, types.ModuleType):
            return {"module": value.__name__}
        if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
            return self._function(value, where, depth)
        if isinstance(value, (np.random.Generator, np.random.BitGenerator)):
            generator = value.bit_generator if isinstance(value, np.random.Generator) else value
            return {"class": label(value), "state": self.describe(generator.state, where, depth + 1)}
        if isinstance(value, np.random.RandomState):
            return {"class": label(value), "state": self.describe(value.get_state(), where, depth + 1)}
        if isinstance(value, random.Random):
            return {"class": label(value), "state": self.describe(value.getstate(), where, depth + 1)}
        if hasattr(value, "__array__") and not dataclasses.is_dataclass(value):
            described = self._array_like(value, where, depth)
            if described is not None:
                return described
        params, source = parameters(value)
        # Without a hook, what its attributes do not show: the state an object keeps in C (a
        # functools.partial's function and arguments, a deque's items, a datetime's value).
        rebuilt = _rebuilt(value) if source in ("attributes", "") else None
        if params is None and rebuilt is None:
            return self.problem(
                where, f"holds a {label(value)} object, which has neither parameters nor attributes"
            )
        out: dict[str, Any] = {"class": label(value), **origin(type(value))}
        if params is not None:
            out[source] = {
                str(name): self.describe(item, f"{where}.{name}" if where else str(name), depth + 1)
                for name, item in sorted(params.items(), key=lambda kv: str(kv[0]))
            }
        if rebuilt is not None:
            out["rebuilt"] = self.describe(rebuilt, where, depth + 1)
        return out

    def _array_like(self, value: Any, where: str, depth: int) -> Any:
        """An object that converts to an array (a tensor, a frame, a series) by its values, with
        its column and index labels where it has them; ``None`` when it does not convert."""
        data = value
        for step in ("detach", "cpu"):  # a tensor: off the autograd graph and the device first
            method = getattr(data, step, None)
            if callable(method):
                try:
                    data = method()
                except Exception:  # noqa: BLE001 - not a tensor's method after all
                    break
        try:
            array = np.asarray(data)
        except Exception:  # noqa: BLE001 - an __array__ that fails: described otherwise
            return None
        out: dict[str, Any] = {"class": label(value), "array": self._array(array, where, depth)}
        for axis in ("columns", "index"):
            labels = getattr(value, axis, None)
            if labels is not None and hasattr(labels, "tolist"):
                out[axis] = self.describe(list(labels.tolist()), f"{where}.{axis}", depth + 1)
        return out

    def _array(self, value: np.ndarray, where: str, depth: int) -> Any:
        if value.dtype.kind == "O":
            if value.size > MAX_ELEMENTS:
                return self.problem(where, f"holds an object array of {value.size:,} elements, too many")
            items = self.describe(value.ravel().tolist(), where, depth)
            return {"objects": list(value.shape), "items": items}
        data = np.ascontiguousarray(value)
        hasher = hashlib.sha256(data.tobytes())
        return {"array": [list(value.shape), str(value.dtype)], "sha256": hasher.hexdigest()}

    def _function(self, value: Any, where: str, depth: int) -> Any:
        if isinstance(value, types.MethodType):
            return {
                "method": value.__func__.__name__,
                "function": self._function(value.__func__, where, depth),
                "self": self.describe(value.__self__, f"{where}.__self__", depth + 1),
            }
        out: dict[str, Any] = {"function": label(value), **origin(value)}
        bound = getattr(value, "__self__", None)
        if isinstance(value, types.BuiltinMethodType) and not isinstance(bound, _UNBOUND):
            # A built-in method bound to an object (a list's append, a deque's popleft): by that object.
            out["self"] = self.describe(bound, f"{where}.__self__", depth + 1)
        code = getattr(value, "__code__", None)
        if isinstance(code, types.CodeType) and "code" in out:
            if value.__defaults__:
                out["defaults"] = self.describe(list(value.__defaults__), where, depth + 1)
            if value.__kwdefaults__:
                out["kwdefaults"] = self.describe(value.__kwdefaults__, where, depth + 1)
            if value.__closure__:
                cells = []
                for name, cell in zip(code.co_freevars, value.__closure__):
                    try:
                        content = cell.cell_contents
                    except ValueError:  # an empty cell
                        content = "<empty>"
                    cells.append([name, self.describe(content, f"{where}<{name}>", depth + 1)])
                out["closure"] = cells
        return out


def describe(value: Any, where: str = "") -> Described:
    """The description of ``value`` (see the module docstring) and where it is incomplete; never
    raises. ``where`` names the value in the problems (e.g. ``"experts[3]"``)."""
    describer = _Describer()
    try:
        value = describer.describe(value, where, 0)
    except RecursionError:
        return Described("<undescribed>", [f"{where or 'it'} is nested too deep to describe"])
    return Described(value, describer.problems)
