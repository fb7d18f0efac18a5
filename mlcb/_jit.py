"""Numba settings shared by every compiled kernel in ``mlcb``, ``envs`` and ``agents``.

Kernels are compiled with ``cache=True`` (compile once per machine, load in milliseconds after)
and ``nogil=True`` (replications run in parallel threads).

Numba keys its on-disk cache on the source file of the decorated function only: a cached engine
kernel does not notice an edit in a kernel it calls from another module. The cache therefore lives
in a directory named after a digest of every source file of the three packages that defines
compiled code (it imports this module) and of the Numba version, so that any edit of a kernel
starts a fresh cache. A ``NUMBA_CACHE_DIR`` set by the user wins.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numba

_PACKAGES = ("mlcb", "envs", "agents")


def _source_digest() -> str:
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(numba.__version__.encode())
    for package in _PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            source = path.read_bytes()
            if b"mlcb._jit" in source or path.name == "_jit.py":
                digest.update(str(path.relative_to(root)).encode())
                digest.update(source)
    return digest.hexdigest()[:16]


def _configure_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    numba.config.CACHE_DIR = str(base / "mlcb" / f"numba-{_source_digest()}")


_configure_cache()

#: Options of every compiled function: cached on disk, GIL released, IEEE division semantics.
JIT_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}

#: Options of the round loop's kernels: as ``JIT_OPTIONS`` but without Numba's reference-counting
#: runtime (NRT). Passing a NamedTuple of arrays to a function copies it and increments the
#: reference count of every array, atomically; Numba's pruning pass removes few of these pairs in
#: branchy code, and in the round loop they cost more than the arithmetic (measured: 140 ns per
#: rate-function call with NRT, 25 ns without). Kernels built this way must not allocate arrays;
#: all arrays they touch are owned by the Python caller.
KERNEL_OPTIONS = {**JIT_OPTIONS, "_nrt": False}

#: ``@njit`` for compiled helpers that may allocate (outside the round loop).
njit = functools.partial(numba.njit, **JIT_OPTIONS)

#: ``@kernel`` for everything the round loop calls.
kernel = functools.partial(numba.njit, **KERNEL_OPTIONS)
