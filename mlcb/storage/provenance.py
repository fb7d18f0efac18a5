"""What produced a result: the versions of mlcb and of the libraries it ran on, and the git
revision of the package's source. Both go into every result's metadata (:mod:`mlcb.engine.collect`)."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path

from mlcb._version import __version__


def versions() -> dict[str, str]:
    """The versions of mlcb, NumPy, Numba, pandas and Python in this process.

    Examples
    --------
    >>> sorted(versions())
    ['mlcb', 'numba', 'numpy', 'pandas', 'python']
    """
    import numba
    import numpy
    import pandas

    return {
        "mlcb": __version__,
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "pandas": pandas.__version__,
        "python": platform.python_version(),
    }


#: Where the package's source lives (git looks for the checkout from there).
SOURCE = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str:
    """The output of ``git ARGS`` run in the package's directory (raises when git fails), without
    the optional locks: ``git status`` then reads the index without refreshing it, so recording
    provenance writes nothing into the checkout (its ``.git/index`` keeps its bytes and mtime)."""
    return subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=SOURCE,
        env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        capture_output=True,
        text=True,
        timeout=5,
        check=True,
    ).stdout.strip()


@functools.lru_cache(maxsize=1)
def git_revision() -> str | None:
    """The package's git revision (``-dirty`` with uncommitted changes), or ``None`` outside a
    git checkout, read without writing anything (:func:`_git`); once per process: the code a
    process runs is the code it imported, and two ``git`` calls cost milliseconds, a noticeable
    part of a small simulation.

    Examples
    --------
    >>> revision = git_revision()
    >>> revision is None or len(revision.removesuffix("-dirty")) == 40
    True
    """
    try:
        head = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")
