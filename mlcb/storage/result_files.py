"""The files of a saved result: their names, the frames' columns, and writing and reading them.

A saved result is a directory of ``curves.parquet``, ``experts.parquet``,
``replications.parquet`` (the tidy frames of :class:`mlcb.storage.results.Result`) and ``metadata.json``.
Reading checks everything before anything is used: the four files present and regular, each frame
readable with its columns and their kinds, the metadata a JSON object whose ``settings`` describes
every setting of the frames. Every problem is a ``ValueError`` of one line naming the file; nothing
named in the files is imported or called. A sweep's parts are read with the same checks
(:mod:`mlcb.sweeps.parts`); where the files go, atomically and under a lock, is :mod:`mlcb.storage.store`'s
part.

Every file of a result, a part or a sweep is opened with :func:`open_regular`: a symbolic link is
refused rather than followed (a result's ``metadata.json`` linked to a file elsewhere, or its
Parquet file linked to another result's, is not read), as is anything but a regular file (a
directory, a named pipe, a device).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from mlcb import validation

#: The tidy frames, in the order of :class:`~mlcb.storage.results.Result`'s fields.
FRAMES = ("curves", "experts", "replications")
METADATA = "metadata.json"
#: The files of a saved result.
NAMES = (*(f"{name}.parquet" for name in FRAMES), METADATA)
#: Columns of the saved frames and their kinds: ``"str"``, ``"int"`` or ``"float"``.
_SETTING_SCHEMA = {"setting": "str", "policy": "str", "budget": "int", "calibration": "str"}
SCHEMA = {
    "curves": {
        **_SETTING_SCHEMA,
        "replication": "int",
        "round": "int",
        "regret": "float",
        "pseudo_regret": "float",
        "top_m_regret": "float",
        "certificate": "float",
    },
    "experts": {
        **_SETTING_SCHEMA,
        "replication": "int",
        "round": "int",
        "expert": "int",
        "trained": "int",
        "deployed": "int",
    },
    "replications": {
        **_SETTING_SCHEMA,
        "replication": "int",
        "best_expert": "int",
        "best_loss": "float",
        "certificate_violated": "float",
    },
}


def _link(path: Path) -> str:
    return (
        f"{path}: is a symbolic link; mlcb reads only regular files in saved results, parts and sweeps "
        "(copy the file instead of linking it)"
    )


def open_regular(file: str | Path, within: str | Path | None = None) -> BinaryIO:
    """``file`` opened for reading in binary mode, refusing (a one-line ``ValueError`` naming it)
    a symbolic link, anything but a regular file, and, with ``within``, a file reached through a
    linked directory below ``within``.

    The link is refused when the file is opened (``O_NOFOLLOW``), not by a check made before, so a
    link put in place in between is refused too; ``O_NONBLOCK`` keeps a named pipe from blocking
    the open.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "data.json").write_text("{}")
    >>> (folder / "link.json").symlink_to(folder / "data.json")
    >>> with open_regular(folder / "data.json") as handle:
    ...     handle.read()
    b'{}'
    >>> open_regular(folder / "link.json")
    Traceback (most recent call last):
    ...
    ValueError: ...link.json: is a symbolic link; mlcb reads only regular files in saved results, ...
    """
    file = Path(file)
    if within is not None:
        for parent in file.parents:
            if parent == Path(within):
                break
            if parent.is_symlink():
                raise ValueError(_link(parent))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(file, flags)
    except OSError as error:
        if error.errno == errno.ELOOP or file.is_symlink():
            raise ValueError(_link(file)) from None
        raise ValueError(f"{file}: cannot be read ({error.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{file}: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (its type's name when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def write(directory: Path, frames: list, metadata: dict) -> None:
    """Write ``frames`` (curves, experts, replications) and ``metadata`` into the existing
    ``directory``; no atomicity of its own (:mod:`mlcb.storage.store` gives it a temporary directory)."""
    for name, frame in zip(FRAMES, frames):
        frame.to_parquet(directory / f"{name}.parquet", index=False)
    (directory / METADATA).write_text(json.dumps(metadata, indent=2, default=str))


def read_json(file: Path, within: Path | None = None) -> Any:
    """The JSON value in the regular ``file`` (:func:`open_regular`), or a one-line
    ``ValueError`` naming it."""
    with open_regular(file, within) as handle:
        try:
            return json.loads(handle.read().decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ValueError(f"{file}: not readable JSON ({first_line(error)})") from None


def read_frame(file: Path, kind: str, within: Path | None = None) -> Any:
    """The frame ``kind`` (one of :data:`FRAMES`) in the regular Parquet ``file``
    (:func:`open_regular`), its columns checked."""
    import pandas as pd

    with open_regular(file, within) as handle:
        try:
            frame = pd.read_parquet(handle)
        except Exception as error:  # pyarrow raises many kinds on a damaged file
            raise ValueError(f"{file}: not a readable Parquet file ({first_line(error)})") from None
    check_columns(file, frame, SCHEMA[kind])
    return frame


def check_columns(file: Path, frame: Any, schema: dict[str, str]) -> None:
    """A ``ValueError`` naming ``file`` when ``frame`` lacks a column of ``schema`` or one has
    another kind."""
    import pandas as pd

    kinds = {
        "str": pd.api.types.is_string_dtype,
        "int": pd.api.types.is_integer_dtype,
        "float": pd.api.types.is_float_dtype,
    }
    missing = [c for c in schema if c not in frame.columns]
    if missing:
        raise ValueError(f"{file}: missing column(s) {missing}")
    for column, kind in schema.items():
        if not kinds[kind](frame[column].dtype):
            raise ValueError(f"{file}: column {column!r} has dtype {frame[column].dtype}, expected {kind}")


def check_metadata(file: Path, metadata: Any, frames: list) -> None:
    """A ``ValueError`` naming ``file`` unless ``metadata`` is an object whose ``settings`` maps
    every setting of ``frames`` to an object."""
    if not isinstance(metadata, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(metadata).__name__}")
    settings = metadata.get("settings")
    if not isinstance(settings, dict):
        raise ValueError(f"{file}: 'settings' must be an object of settings, got {type(settings).__name__}")
    for label, setting in settings.items():
        if not isinstance(setting, dict):
            raise ValueError(f"{file}: setting {label!r} must be an object, got {type(setting).__name__}")
    for name, frame in zip(FRAMES, frames):
        unknown = sorted(set(frame["setting"].astype(str)) - set(settings))
        if unknown:
            raise ValueError(f"{file}: settings {unknown[:3]} of {name}.parquet are not described")


def read(path: str | Path) -> tuple[list, dict]:
    """The frames (curves, experts, replications) and the metadata of the result saved in
    ``path``, all checked (see the module docstring). A directory holding none of the files is a
    ``FileNotFoundError``; any other problem a ``ValueError`` naming the file."""
    path = validation.path("path", path)
    if not path.is_dir() or not any((path / n).exists() or (path / n).is_symlink() for n in NAMES):
        raise FileNotFoundError(f"{path} is not a saved mlcb result (missing {list(NAMES)})")
    for name in NAMES:
        file = path / name
        if file.is_symlink():
            raise ValueError(_link(file))
        if not file.exists():
            raise ValueError(f"{file}: missing; {path} is a damaged mlcb result")
        if not file.is_file():
            raise ValueError(f"{file}: not a regular file; {path} is a damaged mlcb result")
    frames = [read_frame(path / f"{name}.parquet", name) for name in FRAMES]
    metadata = read_json(path / METADATA)
    check_metadata(path / METADATA, metadata, frames)
    return frames, metadata
