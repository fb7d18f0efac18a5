"""Numba settings shared by every compiled kernel in ``mlcb``, ``envs`` and ``agents``.

Kernels are compiled with ``cache=True`` (compile once per machine, load in milliseconds after)
and ``nogil=True`` (replications run in parallel threads).

Numba keys its on-disk cache on the source file of the decorated function only: a cached engine
kernel does not notice an edit in a kernel it calls from another module. mlcb's kernels (and those
of any module built on ``mlcb.kernels``, a compiled family of one's own) are therefore cached by a
cache of mlcb's own (:func:`_function_cache`), in a directory named after a digest of every source
file of the three packages that defines compiled code (it imports this module) and of the Numba
version (:func:`cache_folder`), so that any edit of a kernel starts a fresh cache; a folder of
another digest that no process has used for a month is removed (:func:`prune_cache`). A
``NUMBA_CACHE_DIR`` set by the user wins (and is never pruned). Nothing of Numba's own
configuration changes: importing this module leaves every other compiled function of the process
(one's own ``numba.njit(cache=True)``) as Numba would cache it.

With ``NUMBA_DISABLE_JIT=1`` every kernel runs as plain Python (for a debugger, ``print`` or
``pdb``), with the compiled semantics kept where Python's differ (:func:`interpreted`): record
arrays are handed to kernels as ``np.recarray`` views so that ``stats[k].n += 1`` works, and
integer wrap-around and division by zero pass silently, as in compiled code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np

from mlcb.validation import InputTypeError

_PACKAGES = ("mlcb", "envs", "agents")


def _source_digest() -> str:
    here = Path(__file__).resolve()
    root = here.parent.parent.parent
    digest = hashlib.sha256(numba.__version__.encode())
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_bytes()
            if b"mlcb.kernels" in source or path.resolve() == here:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(source)
    return digest.hexdigest()[:16]


#: Days after which a cache folder of another digest that no process has used is removed.
STALE_DAYS = 30


def prune_cache(folder: Path, days: float = STALE_DAYS) -> list[Path]:
    """Mark the cache folder ``folder`` as used now (its modification time) and remove its sibling
    folders ``numba-*`` that no process has used for ``days`` days; returns those removed.

    Each digest of the sources has a folder of its own, so every upgrade of mlcb or Numba (and
    every edit of a kernel) leaves one behind, tens of megabytes that nothing reads again. A folder
    in use is marked by every process that starts with it, so only one unused for a month goes.
    Errors (permissions, a folder that another process removes at the same time) are ignored: the
    cache holds nothing that cannot be compiled again."""
    removed: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        cutoff = time.time() - days * 86400.0
        for sibling in folder.parent.glob("numba-*"):
            if sibling == folder or sibling.is_symlink() or not sibling.is_dir():
                continue
            if sibling.stat().st_mtime < cutoff:
                shutil.rmtree(sibling, ignore_errors=True)
                removed.append(sibling)
    except OSError:
        pass
    return removed


@functools.cache
def cache_folder() -> Path:
    """The folder of mlcb's compiled-code cache: ``~/.cache/mlcb/numba-<digest>`` (under
    ``XDG_CACHE_HOME`` when it is set), the digest that of mlcb's kernel sources and Numba's
    version. The first call marks it as used and prunes stale siblings (:func:`prune_cache`)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "mlcb" / f"numba-{_source_digest()}"
    prune_cache(folder)
    return folder


@functools.cache
def _uses_kernels(path: str) -> bool:
    """Whether the source file ``path`` is compiled code of mlcb's: a module of its packages, or
    any module that builds on ``mlcb.kernels`` (a compiled family of one's own: its cached code
    inlines mlcb's kernels, so it must be compiled again when they change)."""
    file = Path(path).resolve()
    root = Path(__file__).resolve().parent.parent.parent
    if any(file.is_relative_to(root / package) for package in _PACKAGES):
        return True
    try:
        return b"mlcb.kernels" in file.read_bytes()
    except OSError:
        return False


def _function_cache() -> type | None:
    """The class of mlcb's on-disk cache of one compiled function (``None`` where Numba's caching
    module is laid out otherwise: Numba's own cache is used then).

    It differs from Numba's ``FunctionCache`` in two things, which apply to mlcb's kernels only
    (the compiled functions of one's own keep Numba's behaviour): where the files go
    (:func:`cache_folder`, unless ``NUMBA_CACHE_DIR`` is set, which wins), and a damaged file
    (truncated by a full disk, a file-size limit or a process killed while writing it) is treated
    as missing: the function is compiled again and the file rewritten, with one
    :class:`~mlcb.errors.FileWarning` naming it. Without this, Numba stops at the first call with
    an ``UnpicklingError`` or ``EOFError``."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - another Numba layout: its own behaviour
        return None
    needed = ("_CacheLocator", "_SourceFileBackedLocatorMixin", "CompileResultCacheImpl", "FunctionCache")
    if not all(hasattr(caching, name) for name in needed) or not hasattr(caching, "IndexDataCacheFile"):
        return None  # pragma: no cover

    class Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(cache_folder() / self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if numba.config.CACHE_DIR or not _uses_kernels(py_file):  # NUMBA_CACHE_DIR wins
                return None
            return super().from_function(py_func, py_file)

    class Impl(caching.CompileResultCacheImpl):
        _locator_classes = [Locator, *caching.CompileResultCacheImpl._locator_classes]

    class TolerantFile(caching.IndexDataCacheFile):
        def _load_index(self) -> dict:
            try:
                return super()._load_index()
            except Exception as error:  # noqa: BLE001 - any damage: an empty index, rewritten by the save
                _damaged(self._index_path, error)
                return {}

        def _load_data(self, name: str) -> Any:
            try:
                return super()._load_data(name)
            except OSError:
                raise
            except Exception as error:  # noqa: BLE001 - an OSError makes Numba compile the function again
                _damaged(self._data_path(name), error)
                raise OSError(f"damaged cache file {name}") from error

    class KernelCache(caching.FunctionCache):
        _impl_class = Impl

        def __init__(self, py_func: Any) -> None:
            super().__init__(py_func)
            numba_file: Any = self.__dict__["_cache_file"]  # Numba's, replaced by the tolerant one
            stamp = numba_file._source_stamp
            self._cache_file = TolerantFile(
                cache_path=self._cache_path, filename_base=self._impl.filename_base, source_stamp=stamp
            )

    return KernelCache


_TOLD: set[str] = set()


def _damaged(path: Any, error: BaseException) -> None:
    """One :class:`~mlcb.errors.FileWarning` per damaged cache file."""
    import warnings

    from mlcb.errors import FileWarning

    if str(path) in _TOLD:
        return
    _TOLD.add(str(path))
    warnings.warn(
        f"{path}: a damaged file of the compiled-code cache ({type(error).__name__}); compiled again",
        FileWarning,
        stacklevel=2,
    )


_KERNEL_CACHE = _function_cache()


#: Options of every compiled function: cached on disk, GIL released, IEEE division semantics.
JIT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True, "error_model": "numpy"}

#: Options of the round loop's kernels: as ``JIT_OPTIONS`` but without Numba's reference-counting
#: runtime (NRT), and inlined into their callers by LLVM. Passing a NamedTuple of arrays to a
#: function copies it and increments the reference count of every array, atomically; Numba's
#: pruning pass removes few of these pairs in branchy code, and in the round loop they cost more
#: than the arithmetic around them (several times a rate-function call's own work). Kernels built
#: this way must not allocate arrays; all arrays they touch are owned by the Python caller.
#:
#: ``forceinline`` marks each kernel ``alwaysinline`` for LLVM: the round loop, the kernels its
#: generic operations resolve to and the helpers they call compile into one function. LLVM does
#: not inline a large kernel by itself, and a call passes every array of its arguments as 7 to 11
#: machine words, copied on each call: that marshalling cost more than the work of a round (on the
#: trap, M-LCB's round loop ran 2 to 3 times faster once inlined). LLVM inlining leaves the
#: arithmetic alone (no fast-math, no contraction): the results are the same bits.
KERNEL_OPTIONS: dict[str, Any] = {**JIT_OPTIONS, "_nrt": False, "forceinline": True}

#: Options of the kernels on a round's rare paths (a rate computed past its tables, a gamma
#: variate's rejection loop): as ``KERNEL_OPTIONS`` but left out of line, so that they do not
#: grow every round loop that could reach them (and its compile time).
COLD_KERNEL_OPTIONS: dict[str, Any] = {**KERNEL_OPTIONS, "forceinline": False}

#: Whether Numba's JIT is disabled (``NUMBA_DISABLE_JIT=1`` when Numba was imported): every
#: kernel then runs as Python through :func:`interpreted`.
JIT_DISABLED = bool(numba.config.DISABLE_JIT)


# --- NUMBA_DISABLE_JIT: kernels as Python with the compiled semantics -------------------------
@functools.cache
def _check_fields(dtype: np.dtype) -> None:
    shadowed = sorted(set(dtype.names or ()) & set(dir(np.record)))
    if shadowed:
        raise InputTypeError(
            f"record fields {shadowed} are shadowed by NumPy attributes of the same name when Numba's "
            "JIT is disabled (record.field reads the attribute); rename them to run with "
            "NUMBA_DISABLE_JIT=1"
        )


def as_records(value: Any) -> Any:
    """``value`` with every structured array in it (also inside tuples, ``NamedTuple``\\ s and
    lists) viewed as an ``np.recarray``, and every structured scalar as an ``np.record``: views
    of the same memory whose fields read and write as attributes, as in compiled code."""
    if isinstance(value, np.ndarray):
        if value.dtype.names is not None and not isinstance(value, np.recarray):
            _check_fields(value.dtype)
            return value.view(np.recarray)
        return value
    if isinstance(value, np.void):
        if value.dtype.names is not None and not isinstance(value, np.record):
            _check_fields(value.dtype)
            return value.view((np.record, value.dtype))
        return value
    if isinstance(value, (tuple, list)):
        items = [as_records(item) for item in value]
        if all(new is old for new, old in zip(items, value)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


#: Argument types passed to an interpreted kernel as they are (the common case, checked first).
_PLAIN = frozenset(
    {
        int,
        float,
        bool,
        complex,
        str,
        type(None),
        np.float64,
        np.float32,
        np.int64,
        np.int32,
        np.uint64,
        np.uint32,
        np.bool_,
    }
)
#: Converted tuples by ``id``, each with the tuple itself (so that its ``id`` stays its own): a
#: kernel is called again and again with the same parameter ``NamedTuple``\\ s.
_CONVERTED: dict[int, tuple[Any, Any]] = {}


def _cacheable(value: tuple) -> bool:
    """Whether a tuple holds no list, at any depth (a list may grow after it was converted)."""
    return all(
        not isinstance(item, list) and (not isinstance(item, tuple) or _cacheable(item)) for item in value
    )


def _argument(value: Any) -> Any:
    """:func:`as_records` of one argument, tuples remembered."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, tuple):
        hit = _CONVERTED.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        converted = as_records(value)
        if _cacheable(value):
            if len(_CONVERTED) >= 256:
                _CONVERTED.clear()
            _CONVERTED[id(value)] = (value, converted)
        return converted
    return as_records(value)


class _RecordNumPy:
    """NumPy as interpreted kernels see it: its array constructors return structured arrays as
    ``np.recarray`` views (what Numba's record arrays behave like)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def _constructor(function: Callable) -> Callable:
    @functools.wraps(function)
    def construct(*args: Any, **kwargs: Any) -> Any:
        return as_records(function(*args, **kwargs))

    return construct


_CONSTRUCTORS = (
    "array",
    "asarray",
    "ascontiguousarray",
    "copy",
    "empty",
    "empty_like",
    "full",
    "full_like",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
)
for _name in _CONSTRUCTORS:
    setattr(_RecordNumPy, _name, staticmethod(_constructor(getattr(np, _name))))
_RECORD_NUMPY = _RecordNumPy()


class _Globals(dict):
    """The globals of an interpreted kernel: its module's, read live, with NumPy replaced by
    :class:`_RecordNumPy`."""

    def __init__(self, module_globals: dict) -> None:
        super().__init__()
        self.module_globals = module_globals
        if "__builtins__" in module_globals:
            self["__builtins__"] = module_globals["__builtins__"]

    def __missing__(self, name: str) -> Any:
        value = self.module_globals[name]
        return _RECORD_NUMPY if value is np else value


_INTERPRETING = threading.local()


def interpreted(function: Callable) -> Callable:
    """``function`` (a kernel's Python source, or a Numba dispatcher's ``py_func``) run as Python
    with the semantics of compiled code, as with ``NUMBA_DISABLE_JIT=1``.

    Arguments are passed through :func:`as_records`; inside, ``np.zeros`` and the other array
    constructors return record arrays as ``np.recarray``; and the outermost call runs under
    ``np.errstate(all="ignore")``: unsigned wrap-around (the counter-based generator relies on
    it), division by zero and invalid operations give their IEEE results without a warning.
    Python's own ``float`` division by zero still raises ``ZeroDivisionError``, where compiled
    code with ``error_model="numpy"`` returns ``inf`` or ``nan``.
    """
    if getattr(function, "interpreted", False):
        return function
    python_function = getattr(function, "py_func", function)
    patched = types.FunctionType(
        python_function.__code__,
        _Globals(python_function.__globals__),
        python_function.__name__,
        python_function.__defaults__,
        python_function.__closure__,
    )
    patched.__kwdefaults__ = python_function.__kwdefaults__

    @functools.wraps(python_function)
    def run(*args: Any, **kwargs: Any) -> Any:
        for argument in args:
            if type(argument) not in _PLAIN:
                args = tuple(_argument(argument) for argument in args)
                break
        if kwargs:
            kwargs = {name: _argument(argument) for name, argument in kwargs.items()}
        if getattr(_INTERPRETING, "active", False):
            return patched(*args, **kwargs)
        _INTERPRETING.active = True
        try:
            with np.errstate(all="ignore"):
                return patched(*args, **kwargs)
        finally:
            _INTERPRETING.active = False

    run.py_func = python_function  # type: ignore[attr-defined]  # as a Numba dispatcher has
    run.interpreted = True  # type: ignore[attr-defined]
    return run


def jit(function: Callable | None = None, **options: Any) -> Any:
    """``numba.njit(function, **options)``, or :func:`interpreted` when the JIT is disabled.

    Usable as ``@jit``, ``@jit(**options)`` or ``jit(function, **options)``.
    """
    if function is None:
        return functools.partial(jit, **options)
    if JIT_DISABLED:
        return interpreted(function)
    if not options.get("cache") or _KERNEL_CACHE is None:
        return numba.njit(function, **options)
    dispatcher = numba.njit(function, **{**options, "cache": False})
    dispatcher._cache = _KERNEL_CACHE(function)  # numba's enable_caching(), with mlcb's cache
    return dispatcher


def uncached(function: Callable, **options: Any) -> Callable:
    """A twin of the compiled ``function`` built with ``options`` and no on-disk cache
    (``function`` itself when the JIT is disabled)."""
    if JIT_DISABLED:
        return interpreted(function)
    options.pop("cache", None)
    return numba.njit(function.py_func, **options)  # type: ignore[attr-defined]  # a Numba dispatcher


def njit(function: Callable) -> Any:
    """``@njit`` for compiled helpers that may allocate (outside the round loop):
    :func:`jit` with ``JIT_OPTIONS``."""
    return jit(function, **JIT_OPTIONS)


def kernel(function: Callable) -> Any:
    """``@kernel`` for everything the round loop calls: :func:`jit` with ``KERNEL_OPTIONS``."""
    return jit(function, **KERNEL_OPTIONS)


def cold_kernel(function: Callable) -> Any:
    """``@cold_kernel`` for a kernel on a round's rare path: :func:`jit` with
    ``COLD_KERNEL_OPTIONS`` (called, not inlined)."""
    return jit(function, **COLD_KERNEL_OPTIONS)


# --- indices known to be non-negative ------------------------------------------------------------
#: Every bit of an int64 but its sign.
_SIGN_CLEARED = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _nonnegative(value):
    """``value``, an integer the caller knows to be ``>= 0``, with that fact made plain to LLVM.

    Numba indexes an array with a signed integer as Python does, ``a[i]`` reading
    ``a[len(a) + i]`` when ``i < 0``: each such index costs a comparison, a selection and the
    array's length kept at hand, unless the compiler can prove ``i >= 0``. An index loaded from
    memory (an expert taken from an array, a count read from a record) is beyond its proof;
    ``a[nonnegative(i)]`` clears the sign bit, one instruction, and the test goes wherever the value
    flows. For ``i >= 0`` it is ``i`` itself; use it only where the code guarantees that.
    """
    return value & _SIGN_CLEARED


def _identity(value: Any) -> Any:
    """``value`` itself: :func:`_nonnegative` with Numba's JIT disabled (where indices wrap as in
    Python, and a test of the sign costs nothing worth saving)."""
    return value


#: :func:`_nonnegative` as a kernel (the value itself when Numba's JIT is disabled).
nonnegative = _identity if JIT_DISABLED else jit(_nonnegative, **KERNEL_OPTIONS)


# --- what compiling costs, said while it happens ------------------------------------------------
class CompileWatch:
    """Numba's compilations while it is active (a context manager): ``on_start(cached)`` is called
    when the first one starts (``cached``: whether the function compiled is kept in the on-disk
    cache, so that later processes load it instead), then ``count`` and ``seconds`` add up every
    compilation (nested ones counted in their caller's time). A function loaded from the cache is
    not compiled and fires nothing. With the JIT disabled nothing is ever compiled.

    Examples
    --------
    >>> with CompileWatch() as watch:
    ...     pass
    >>> watch.count, watch.seconds
    (0, 0.0)
    """

    def __init__(self, on_start: Callable[[bool], None] | None = None) -> None:
        self.on_start = on_start
        self.count = 0
        self.seconds = 0.0
        self._depth = 0
        self._began = 0.0
        self._listener: Any = None

    def _started(self, event: Any) -> None:
        self.count += 1
        if self._depth == 0:
            self._began = time.perf_counter()
        self._depth += 1
        if self.count == 1 and self.on_start is not None:
            dispatcher = getattr(event, "data", None)
            dispatcher = dispatcher.get("dispatcher") if isinstance(dispatcher, dict) else None
            cache = getattr(dispatcher, "_cache", None)
            self.on_start(cache is not None and type(cache).__name__ != "NullCache")

    def _ended(self, event: Any) -> None:
        self._depth = max(0, self._depth - 1)
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._began

    def __enter__(self) -> CompileWatch:
        if not JIT_DISABLED:
            from numba.core import event

            watch = self

            class _Listener(event.Listener):
                def on_start(self, event: Any) -> None:
                    watch._started(event)

                def on_end(self, event: Any) -> None:
                    watch._ended(event)

            self._listener = _Listener()
            event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._listener is not None:
            from numba.core import event

            event.unregister("numba:compile", self._listener)
            self._listener = None
