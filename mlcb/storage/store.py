"""The results store: where ``mlcb run`` and ``mlcb compare`` keep results and resumable parts.

A result lives in one directory ``OUT/NAME/`` (``curves.parquet``, ``experts.parquet``,
``replications.parquet``, ``metadata.json`` and the figures). The store guarantees:

Atomic results
    A result is written into a temporary sibling ``OUT/.NAME.tmp-<pid>-<random>/`` (every file
    flushed and fsync'ed) and renamed into place; an existing result is first renamed aside
    (``OUT/.NAME.old-<pid>-<random>/``) and removed after the new one is in place. A reader sees
    the old result or the new one, never a mix; a save that fails halfway leaves the old one.
    Old figures go with the old result.
One writer
    ``OUT/.NAME.lock`` is locked (``fcntl.flock``) by the writer, which writes its pid and host
    into it; a second writer refuses at once with one line naming the holder. The operating system
    releases the lock of a process that dies, so a stale lock never blocks anyone.
Parts
    Every finished replication is kept as ``OUT/NAME/.parts/<setting key>/replication-N.npz``
    (written under a unique temporary name, fsync'ed, then ``os.replace``'d), and survives the
    replacement of the result. A run removes only the parts of its own settings, and only after
    its result is saved. A part that cannot be read, has arrays of the wrong shape for its setting
    or whose stored index differs from its file name is named in a warning, renamed
    ``*.corrupt`` and recomputed (:func:`mlcb.engine.load_parts`).
Overwrite is a decision
    :meth:`Store.check_experiment` refuses an ``OUT/NAME`` that holds a different experiment (other
    setting keys) unless told to overwrite; the same experiment resumes.

Every problem with a path is a ``ValueError`` with one line. Nothing here imports or calls
anything named in a file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import shutil
import socket
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: The files of a saved result, and what else may sit in a result directory.
from mlcb import validation
from mlcb.storage import result_files

RESULT_FILES = result_files.NAMES
#: The figure kinds of :mod:`mlcb.plot` (here, so that the command line lists them without
#: importing matplotlib and seaborn).
FIGURE_KINDS = ("regret", "panels", "theory", "budget")
FIGURES = (*(f"{kind}.png" for kind in FIGURE_KINDS), "report.html")
PARTS = ".parts"
_KNOWN = frozenset(RESULT_FILES + FIGURES + (PARTS,))


class LockedError(ValueError):
    """Another writer holds the lock of an output directory."""


def _suffix() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def make_directory(path: Path, where: str = "") -> None:
    """Create the directory ``path`` and its parents, or raise a one-line ``ValueError`` (its text
    prefixed by ``where``)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"{where}{path}: cannot create the directory ({error.strerror})") from None


def _not_a_file(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise ValueError(f"{path} is not a directory; cannot save a result there")


def fsync_directory(path: Path) -> None:
    """Make a rename or a new entry in ``path`` durable (a no-op where directories cannot be
    opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(path: Path, write: Callable[[Any], None]) -> None:
    """``write(file)`` into a unique temporary sibling of ``path``, flushed and fsync'ed, then
    ``os.replace``'d onto ``path``: a reader never sees half a file."""
    tmp = path.with_name(f".{path.name}.{_suffix()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        fsync_directory(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def sync_tree(path: Path) -> None:
    """fsync every file of the directory ``path`` (not below ``.parts``), then the directory."""
    for entry in path.iterdir():
        if entry.is_file() and not entry.is_symlink():
            with open(entry, "rb") as handle:
                os.fsync(handle.fileno())
    fsync_directory(path)


def foreign_entries(path: Path) -> list[str]:
    """Entries of directory ``path`` that are no part of an mlcb result."""
    return sorted(e.name for e in path.iterdir() if e.name not in _KNOWN)


def replace_directory(path: Path, fill: Callable[[Path], None], force: bool = False) -> Path:
    """Write a result directory atomically: ``fill(tmp)`` writes the files into a fresh temporary
    sibling, which then replaces ``path`` (the old directory renamed aside first, its ``.parts``
    carried over, then removed). Refuses (``ValueError``) to replace a file, or a directory holding
    entries that are no part of a result unless ``force``."""
    path = Path(path)
    _not_a_file(path)
    if path.is_dir() and not force:
        foreign = foreign_entries(path)
        if foreign:
            raise ValueError(
                f"{path} holds files that are no part of an mlcb result ({', '.join(foreign[:3])}); "
                "save elsewhere or remove them"
            )
    parent = path.parent
    make_directory(parent)
    suffix = _suffix()
    tmp = parent / f".{path.name}.tmp-{suffix}"
    old = parent / f".{path.name}.old-{suffix}"
    try:
        tmp.mkdir()
        fill(tmp)
        sync_tree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if path.exists():
        os.rename(path, old)
    os.rename(tmp, path)
    if old.exists():
        if (old / PARTS).is_dir() and not (path / PARTS).exists():
            os.rename(old / PARTS, path / PARTS)
        shutil.rmtree(old, ignore_errors=True)
    fsync_directory(parent)
    return path


def save(path: str | Path, fill: Callable[[Path], None]) -> Path:
    """Save a result into the directory ``path`` atomically (:func:`replace_directory`) under its
    writer's lock (:func:`lock`): ``fill(tmp)`` writes the files. ``path`` may be missing or hold a
    result; a file, or a directory holding other files, is refused with a ``ValueError``."""
    path = validation.path("path", path)
    _not_a_file(path)
    make_directory(path.parent)
    with lock(path):
        return replace_directory(path, fill)


def _holder(lock: Path) -> str:
    try:
        text = lock.read_text().strip()
    except OSError:
        text = ""
    return text or "another process"


@contextlib.contextmanager
def lock(path: Path) -> Iterator[Path]:
    """Hold the writer's lock of the output directory ``path`` (``.NAME.lock`` beside it), or raise
    :class:`LockedError` at once, naming the holder. The lock file holds ``pid <pid> on <host>``
    and is removed on release; a dead holder's lock is free (the system releases it)."""
    path = Path(path)
    lock_path = path.parent / f".{path.name}.lock"
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise ValueError(f"{path.parent}: cannot write there ({error.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise LockedError(
                    f"{path} is being written by {_holder(lock_path)} (lock {lock_path}); "
                    "wait for it to finish"
                ) from None
            raise
        try:  # the file we locked may have been removed by the holder we waited for
            same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        os.fsync(fd)
        yield lock_path
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)
        os.close(fd)


class Store:
    """The output directory ``root / name`` of one experiment; see the module docstring.

    Construction checks the path (one-line ``ValueError``): ``root`` must be a writable directory
    (created if missing), and ``root / name`` must stay inside it and not be a file."""

    def __init__(self, root: str | Path, name: str):
        root = validation.path("out", root)
        if not isinstance(name, str) or not name or "\x00" in name:
            raise ValueError(f"out: the result name must be a non-empty string, got {name!r}")
        if root.exists() and not root.is_dir():
            raise ValueError(f"--out {root} is a file, not a directory")
        make_directory(root, "--out ")
        if not os.access(root, os.W_OK | os.X_OK):
            raise ValueError(f"--out {root} is not writable")
        resolved, path = root.resolve(), (root / name).resolve()
        if path == resolved or resolved not in path.parents:
            raise ValueError(f"result name {name!r} would write outside --out {root}")
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {root}: {path} is a file, not a result directory")
        make_directory(path.parent, f"--out {root}: ")
        self.root, self.name, self.path = root, name, root / name

    @property
    def parts(self) -> Path:
        """The parts directory (``simulate(parts=...)`` adds each setting's key)."""
        return self.path / PARTS

    def lock(self) -> contextlib.AbstractContextManager:
        """The writer's lock (see :func:`lock`)."""
        return lock(self.path)

    def recover(self) -> None:
        """Undo what a writer that died in the middle of a save left (call under the lock): put
        an old result renamed aside back if no result is in place, carry its parts over, and
        remove temporary and old directories."""
        parent, stem = self.path.parent, f".{self.path.name}."
        olds = sorted(parent.glob(f"{stem}old-*"), key=lambda p: p.stat().st_mtime)
        if not self.path.exists() and olds:
            os.rename(olds.pop(), self.path)
        for old in olds:
            if (old / PARTS).is_dir() and not self.parts.exists():
                os.rename(old / PARTS, self.parts)
            shutil.rmtree(old, ignore_errors=True)
        for tmp in parent.glob(f"{stem}tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)

    def saved_keys(self) -> tuple[set[str] | None, str | None]:
        """The setting keys of the result in place: ``(keys, None)``, ``(None, None)`` when
        there is none, or ``(None, why)`` when what is there is not a readable result."""
        if not self.path.exists():
            return None, None
        present = [n for n in RESULT_FILES if (self.path / n).exists()]
        foreign = foreign_entries(self.path)
        if foreign:
            return None, f"holds files that are no part of an mlcb result ({', '.join(foreign[:3])})"
        if not present:
            return None, None  # only parts or figures: nothing saved yet
        try:
            _, metadata = result_files.read(self.path)
        except (ValueError, OSError) as error:
            return None, f"holds a damaged result ({result_files.first_line(error)})"
        return {str(s.get("key")) for s in metadata["settings"].values()}, None

    def check_experiment(self, keys: Iterable[str], overwrite: bool) -> None:
        """Refuse (``ValueError``) a directory holding a different experiment than the settings
        ``keys`` (or something unreadable) unless ``overwrite``."""
        saved, why = self.saved_keys()
        if overwrite:
            return
        if why is not None:
            raise ValueError(f"{self.path} {why}; pass --overwrite to replace it")
        if saved is not None and saved != set(keys):
            raise ValueError(
                f"{self.path} holds a different experiment (other settings); pass --overwrite to "
                "replace it, or choose another --out"
            )

    def write(self, fill: Callable[[Path], None]) -> Path:
        """Replace the result in place with what ``fill(tmp)`` writes (call under the lock)."""
        return replace_directory(self.path, fill, force=True)

    def remove_parts(self, keys: Iterable[str]) -> None:
        """Remove the parts of the settings ``keys`` only, and ``.parts`` if it is left empty."""
        for key in keys:
            shutil.rmtree(self.parts / key, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.parts.rmdir()
