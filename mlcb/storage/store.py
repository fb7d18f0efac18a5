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
    its result is saved. A part that cannot be read, has arrays of the wrong shape for its setting,
    or whose stored index or setting key differs from its file's or its folder's name is named in
    a warning, renamed
    ``*.corrupt`` and recomputed (:func:`mlcb.engine.load_parts`).
Overwrite is a decision, and replaces only what mlcb wrote
    :meth:`Store.check_experiment` refuses an ``OUT/NAME`` that holds a different experiment (other
    setting keys, or another mlcb version's) unless told to overwrite; the same experiment
    resumes. Anything in ``OUT/NAME`` that mlcb did not write (another file, or one of its names
    that is a link or a folder) stops the run, named, whatever the flags; removing a result
    deletes only mlcb's files, one by one, and never follows a link. The lock file, the parts
    folder and each setting's folder are refused when they are links.

Every problem with a path is a ``ValueError`` with one line. Nothing here imports or calls
anything named in a file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import socket
import stat
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: The files of a saved result, and what else may sit in a result directory.
from mlcb import validation
from mlcb.errors import FileWarning, path_fault
from mlcb.storage import outputs, result_files
from mlcb.validation import InputError

RESULT_FILES = result_files.NAMES
PARTS = ".parts"


def _known() -> frozenset[str]:
    """The names mlcb writes in a result directory: the result's files, every registered figure
    and writer's files, the report (:func:`mlcb.storage.outputs.own_files`) and the parts folder."""
    return outputs.own_files() | {PARTS}


class LockedError(InputError):
    """Another writer holds the lock of an output directory (an
    :class:`~mlcb.validation.InputError`: the command line says so in one line)."""


def _suffix() -> str:
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def aside_name(path: Path, tag: str) -> Path:
    """A fresh name beside ``path`` to move it out of the way under, kept for inspection:
    ``NAME.TAG-<pid>-<nanoseconds>``, unique to this process and moment."""
    return path.with_name(f"{path.name}.{tag}-{os.getpid()}-{time.time_ns()}")


def make_directory(path: Path, where: str = "") -> None:
    """Create the directory ``path`` and its parents, or raise a one-line ``ValueError`` (its text
    prefixed by ``where``) and leave none of the folders it made (``/tmp/new/<a name too long>/x``
    left ``/tmp/new`` behind)."""
    try:
        make_folders(path)
    except OSError as error:
        dangling = next((p for p in (path, *path.parents) if p.is_symlink() and not p.exists()), None)
        if dangling is not None:
            raise InputError(f"{where}{dangling}: {result_files.DANGLING}") from None
        said = path_fault(error)  # said as every command says it where it meets such a path
        if said is not None:
            raise InputError(said) from None
        raise InputError(f"{where}{path}: cannot create the directory ({error.strerror})") from None


def make_folders(path: str | Path) -> None:
    """``Path(path).mkdir(parents=True, exist_ok=True)``, but a failure removes the folders this
    call made before it raises: a path refused is left as it was found."""
    path = Path(path)
    missing = []
    for folder in (path, *path.parents):
        if os.path.lexists(folder):
            break
        missing.append(folder)
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                if not folder.is_dir():
                    raise
                continue  # made meanwhile by another process: not ours to remove
            made.append(folder)
        path.mkdir(exist_ok=True)  # a path that exists must be a directory (or a link to one)
    except OSError:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _not_a_file(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise InputError(f"{path} is not a directory; cannot save a result there")


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
    """Entries of directory ``path`` that mlcb did not write: any other name, and any of its
    names that is not what mlcb writes there (a result file or figure that is a link, a folder or
    a pipe; ``.parts`` that is a link or a file)."""
    foreign = []
    known = _known()
    for entry in path.iterdir():
        if entry.name == PARTS:
            mine = entry.is_dir() and not entry.is_symlink()
        elif entry.name in known:
            mine = entry.is_file() and not entry.is_symlink()
        else:
            mine = bool(_TEMPORARY.fullmatch(entry.name)) and entry.is_file() and not entry.is_symlink()
        if not mine:
            foreign.append(entry.name + _kind(entry, entry.name in known))
    return sorted(foreign)


def _kind(entry: Path, known: bool) -> str:
    """What a known name is instead of what mlcb writes, in words (nothing for another name)."""
    if not known:
        return ""
    if entry.is_symlink():
        return ": a symbolic link"
    return ": a folder" if entry.is_dir() else ": a file" if entry.is_file() else ": not a regular file"


#: The temporary files of :func:`write_file` (``.NAME.<pid>-<hex>.tmp``), left by a writer that died.
_TEMPORARY = re.compile(r"\..+\.\d+-[0-9a-f]{8}\.tmp")


def refuse_foreign(path: Path) -> None:
    """An ``InputError`` naming the entries of ``path`` that mlcb did not write: they stop the
    run whatever the flags (``--overwrite`` replaces only what mlcb wrote)."""
    foreign = foreign_entries(path) if path.is_dir() and not path.is_symlink() else []
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise InputError(
            f"{path} holds files that are no part of an mlcb result ({shown}); mlcb never deletes "
            "what it did not write: move them away, or choose another --out"
        )


def remove_result(path: Path) -> None:
    """Remove the result directory ``path``, deleting only what mlcb writes there (its files,
    figures, temporaries and parts folder); a directory that then still holds anything is left in
    place (renamed, it is recovered by nobody) and named in a warning."""
    known = _known()
    for entry in list(path.iterdir()):
        if entry.name == PARTS and entry.is_dir() and not entry.is_symlink():
            remove_parts_folder(entry)
        elif entry.name in known or _TEMPORARY.fullmatch(entry.name):
            if entry.is_file() and not entry.is_symlink():
                with contextlib.suppress(OSError):
                    entry.unlink()
    try:
        path.rmdir()
    except OSError:
        left = ", ".join(p.name for p in sorted(path.iterdir())[:3]) if path.is_dir() else "?"
        warnings.warn(
            f"{path}: left in place, it holds files that mlcb did not write ({left})",
            FileWarning,
            stacklevel=2,
        )


#: What mlcb writes into a setting's parts folder: parts, set-aside parts, the record, temporaries.
_PART_FILE = re.compile(
    r"replication-\d+\.npz(\.corrupt)?|identity\.json|\.(replication-\d+\.npz|identity\.json)\.\d+-[0-9a-f]{8}\.tmp"
)
#: The folder of a run's best-in-hindsight references in its parts folder, and what mlcb writes there.
REFERENCES = "hindsight"
_REFERENCE_FILE = re.compile(r"\.?[0-9a-f]{64}-\d+\.json(\.\d+-[0-9a-f]{8}\.tmp)?")


def remove_parts_folder(parts: Path, keys: Iterable[str] | None = None) -> None:
    """Remove the settings ``keys`` (all without ``keys``) from the parts folder ``parts``,
    deleting only the files mlcb writes there and never following a link (a linked folder is
    unlinked, not emptied); a folder left with anything else stays, named in a warning. The
    run's best-in-hindsight references (:class:`mlcb.storage.replications.ReferenceStore`) go
    once no setting's folder is left, and the parts folder goes too when it is left empty."""
    if parts.is_symlink() or not parts.is_dir():
        return
    folders = [parts / key for key in keys] if keys is not None else list(parts.iterdir())
    for folder in folders:
        if folder.name == REFERENCES:
            continue
        if folder.is_symlink():
            folder.unlink()
            continue
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if _PART_FILE.fullmatch(entry.name) and (entry.is_symlink() or entry.is_file()):
                with contextlib.suppress(OSError):
                    entry.unlink()
        try:
            folder.rmdir()
        except OSError:
            if keys is not None or ".mismatched-" not in folder.name:
                warnings.warn(
                    f"{folder}: left in place, it holds files that mlcb did not write",
                    FileWarning,
                    stacklevel=2,
                )
    references = parts / REFERENCES
    if references.is_symlink():
        references.unlink()
    elif references.is_dir() and [p.name for p in parts.iterdir()] == [REFERENCES]:
        for entry in references.iterdir():
            if _REFERENCE_FILE.fullmatch(entry.name) and (entry.is_symlink() or entry.is_file()):
                with contextlib.suppress(OSError):
                    entry.unlink()
        with contextlib.suppress(OSError):
            references.rmdir()
    with contextlib.suppress(OSError):
        parts.rmdir()


def replace_directory(path: Path, fill: Callable[[Path], None]) -> Path:
    """Write a result directory atomically: ``fill(tmp)`` writes the files into a fresh temporary
    sibling, which then replaces ``path`` (the old directory renamed aside first, its ``.parts``
    carried over, then removed, file by file). Refuses (``InputError``) to replace a file, or a
    directory holding anything mlcb did not write (:func:`refuse_foreign`): nothing of the
    user's is ever deleted."""
    path = Path(path)
    _not_a_file(path)
    refuse_foreign(path)
    parent = path.parent
    make_directory(parent)
    suffix = _suffix()
    tmp = parent / f".{path.name}.tmp-{suffix}"
    old = parent / f".{path.name}.old-{suffix}"
    try:
        tmp.mkdir()
        fill(tmp)
        sync_tree(tmp)
        refuse_foreign(path)  # once more: a file put there while the result was written
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # the temporary folder is mlcb's own
        raise
    if path.exists():
        os.rename(path, old)
    os.rename(tmp, path)
    if old.exists():
        if (old / PARTS).is_dir() and not (old / PARTS).is_symlink() and not (path / PARTS).exists():
            os.rename(old / PARTS, path / PARTS)
        remove_result(old)
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
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise InputError(
                    f"{lock_path}: is a symbolic link; mlcb writes its lock file only as a file of its own "
                    "(remove the link)"
                ) from None
            raise InputError(f"{lock_path}: cannot write the lock file there ({error.strerror})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(f"{lock_path}: not a regular file; mlcb cannot lock {path} (move it away)")
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
            raise InputError(f"out: the result name must be a non-empty string, got {name!r}")
        if root.exists() and not root.is_dir():
            raise InputError(f"--out {root} is a file, not a directory")
        make_directory(root, "--out ")
        if not os.access(root, os.W_OK | os.X_OK):
            raise InputError(f"--out {root} is not writable")
        resolved, path = root.resolve(), (root / name).resolve()
        if path == resolved or resolved not in path.parents:
            raise InputError(f"result name {name!r} would write outside --out {root}")
        if path.exists() and not path.is_dir():
            raise InputError(f"--out {root}: {path} is a file, not a result directory")
        make_directory(path.parent, f"--out {root}: ")
        self.root, self.name, self.path = root, name, root / name
        self._saved_version: str | None = None

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
        olds = sorted(
            (p for p in parent.glob(f"{stem}old-*") if p.is_dir() and not p.is_symlink()),
            key=lambda p: p.stat().st_mtime,
        )
        if not self.path.exists() and olds:
            os.rename(olds.pop(), self.path)
        for old in olds:
            if old.is_symlink() or not old.is_dir():
                continue
            if (old / PARTS).is_dir() and not (old / PARTS).is_symlink() and not self.parts.exists():
                os.rename(old / PARTS, self.parts)
            remove_result(old)
        for tmp in parent.glob(f"{stem}tmp-*"):
            if tmp.is_dir() and not tmp.is_symlink():
                remove_result(tmp)

    def saved_keys(self) -> tuple[set[str] | None, str | None]:
        """The setting keys of the result in place: ``(keys, None)``, ``(None, None)`` when
        there is none, or ``(None, why)`` when what is there is not a readable result (files
        mlcb did not write are refused before, by :func:`refuse_foreign`)."""
        if not self.path.exists():
            return None, None
        present = [n for n in RESULT_FILES if (self.path / n).exists()]
        if not present:
            return None, None  # only parts or figures: nothing saved yet
        try:
            _, metadata = result_files.read(self.path)
        except (ValueError, OSError) as error:
            return None, f"holds a damaged result ({result_files.first_line(error)})"
        keys = {str(s.get("key")) for s in metadata["settings"].values()}
        self._saved_version = (
            (metadata.get("versions") or {}).get("mlcb")
            if isinstance(metadata.get("versions"), dict)
            else None
        )
        return keys, None

    def check_experiment(self, keys: Iterable[str], overwrite: bool) -> None:
        """Refuse (``InputError``) a directory holding files mlcb did not write, whatever
        ``overwrite``; and one holding a different experiment than the settings ``keys`` (or a
        damaged result) unless ``overwrite``. Also check that the parts folder is mlcb's."""
        refuse_foreign(self.path)
        parts = self.parts
        if parts.is_symlink():
            raise InputError(f"{parts}: is a symbolic link; mlcb keeps parts only in a folder of its own")
        self._saved_version = None
        saved, why = self.saved_keys()
        if overwrite:
            return
        if why is not None:
            raise InputError(f"{self.path} {why}; pass --overwrite to replace it")
        if saved is not None and saved != set(keys):
            from mlcb._version import __version__

            older = self._saved_version
            version = (
                f" (made by mlcb {older}, this is mlcb {__version__}: the settings' keys differ)"
                if older and older != __version__
                else " (other settings)"
            )
            raise InputError(
                f"{self.path} holds a different experiment{version}; pass --overwrite to replace it, or "
                "choose another --out"
            )

    def write(self, fill: Callable[[Path], None]) -> Path:
        """Replace the result in place with what ``fill(tmp)`` writes (call under the lock)."""
        return replace_directory(self.path, fill)

    def remove_parts(self, keys: Iterable[str]) -> None:
        """Remove the parts of the settings ``keys`` only (only the files mlcb writes there,
        never through a link), and ``.parts`` if it is left empty."""
        remove_parts_folder(self.parts, list(keys))
