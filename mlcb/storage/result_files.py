"""The files of a saved result: their names, the frames' columns, and writing and reading them.

A saved result is a directory of ``curves.parquet``, ``experts.parquet``,
``replications.parquet`` (the tidy frames of :class:`mlcb.storage.results.Result`) and ``metadata.json``.
Reading checks everything before anything is used: the four files present and regular, each frame
readable with its columns and their kinds, its values (:data:`VALUES`: a regret finite, rounds
>= 1, no frame empty), the metadata a JSON object whose ``settings`` describes every setting of
the frames, and the rows of each setting agreeing across the frames and with the metadata. Every
problem is an ``InputError`` (a ``ValueError``) of one line naming the file; nothing named in the
files is imported or called. A sweep's parts are read with the same checks
(:mod:`mlcb.sweeps.parts`); where the files go, atomically and under a lock, is
:mod:`mlcb.storage.store`'s part.

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
from mlcb.validation import InputError, InputNotFound

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
    mlcb.validation.InputError: ...link.json: is a symbolic link; mlcb reads only regular files ...
    """
    file = Path(file)
    if within is not None:
        for parent in file.parents:
            if parent == Path(within):
                break
            if parent.is_symlink():
                raise InputError(_link(parent))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(file, flags)
    except OSError as error:
        if error.errno == errno.ELOOP or file.is_symlink():
            raise InputError(_link(file)) from None
        raise InputError(f"{file}: cannot be read ({error.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{file}: not a regular file")
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
        except RecursionError:
            raise InputError(f"{file}: not readable JSON (nested too deep)") from None
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise InputError(f"{file}: not readable JSON ({first_line(error)})") from None


def read_frame(file: Path, kind: str, within: Path | None = None) -> Any:
    """The frame ``kind`` (one of :data:`FRAMES`) in the regular Parquet ``file``
    (:func:`open_regular`), its columns checked."""
    import pandas as pd

    with open_regular(file, within) as handle:
        try:
            frame = pd.read_parquet(handle)
        except Exception as error:  # pyarrow raises many kinds on a damaged file
            raise InputError(f"{file}: not a readable Parquet file ({first_line(error)})") from None
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
        raise InputError(f"{file}: missing column(s) {missing}")
    for column, kind in schema.items():
        if not kinds[kind](frame[column].dtype):
            raise InputError(f"{file}: column {column!r} has dtype {frame[column].dtype}, expected {kind}")


#: What the values of each frame's columns must be: ``"finite"``, ``"not inf"`` (NaN means not
#: recorded), ``">= N"``, ``">= 0 or nan"`` (a certificate: infinite where a rate is) or
#: ``"0, 1 or nan"``.
VALUES = {
    "curves": {
        "budget": ">= 1",
        "replication": ">= 0",
        "round": ">= 1",
        "regret": "finite",
        "pseudo_regret": "not inf",
        "top_m_regret": "not inf",
        "certificate": ">= 0 or nan",
    },
    "experts": {
        "budget": ">= 1",
        "replication": ">= 0",
        "round": ">= 1",
        "expert": ">= 0",
        "trained": ">= 0",
        "deployed": ">= 0",
    },
    "replications": {
        "budget": ">= 1",
        "replication": ">= 0",
        "best_expert": ">= 0",
        "best_loss": "not inf",
        "certificate_violated": "0, 1 or nan",
    },
}


def check_values(file: Path, frame: Any, kind: str) -> None:
    """An ``InputError`` naming ``file``, the column and the first bad row unless ``frame`` has
    rows and every value of its columns is as :data:`VALUES` says (a regret finite, a round
    >= 1, ...)."""
    import numpy as np

    if len(frame) == 0:
        raise InputError(f"{file}: no rows; a saved frame holds at least one")
    for column, rule in VALUES[kind].items():
        values = frame[column].to_numpy()
        if rule == ">= 0 or nan":
            bad = values.astype(float) < 0
        elif rule.startswith(">="):
            bad = ~(values >= int(rule.split()[1]))
        else:
            values = values.astype(float)
            if rule == "finite":
                bad = ~np.isfinite(values)
            elif rule == "not inf":
                bad = np.isinf(values)
            else:
                bad = ~(np.isnan(values) | (values == 0.0) | (values == 1.0))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{file}: column {column!r} must hold values {rule}, got {values[row].item()!r} in row {row} "
                f"(setting {str(frame['setting'].iloc[row])!r})"
            )


def check_rows(path: Path, frames: list, metadata: dict) -> None:
    """An ``InputError`` naming the file unless, for every setting, the frames agree with each
    other and with the metadata: ``R`` replications (``config.replications``) of ``C`` checkpoints,
    ``R * C`` rows of curves, ``R * C * K`` of experts (``K`` experts, ``expert < K``) and ``R``
    of replications."""
    curves, experts, replications = frames
    settings = metadata["settings"]
    for label, group in curves.groupby("setting", sort=False):
        runs = group["replication"].nunique()
        points = group["round"].nunique()
        config = settings.get(label, {}).get("config") if isinstance(settings.get(label), dict) else None
        config = config if isinstance(config, dict) else {}
        declared = config.get("replications")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != runs:
            raise InputError(
                f"{path / 'curves.parquet'}: setting {label!r} holds {runs} replication(s), its metadata "
                f"says {declared}"
            )
        if len(group) != runs * points:
            raise InputError(
                f"{path / 'curves.parquet'}: setting {label!r} has {len(group)} rows, expected {runs} "
                f"replication(s) x {points} checkpoint(s) = {runs * points}"
            )
        pool = config.get("experts")
        k = len(pool) if isinstance(pool, list) else None
        mine = experts[experts["setting"] == label]
        expected = runs * points * (k if k is not None else max(1, mine["expert"].nunique()))
        if len(mine) != expected or (k is not None and len(mine) and int(mine["expert"].max()) >= k):
            raise InputError(
                f"{path / 'experts.parquet'}: setting {label!r} has {len(mine)} rows, expected {expected} "
                f"(replications x checkpoints x experts, expert < {k if k is not None else 'K'})"
            )
        rows = replications[replications["setting"] == label]
        if len(rows) != runs or set(rows["replication"]) != set(group["replication"]):
            raise InputError(
                f"{path / 'replications.parquet'}: setting {label!r} has {len(rows)} rows, expected one per "
                f"replication of curves.parquet ({runs})"
            )


def check_metadata(file: Path, metadata: Any, frames: list) -> None:
    """A ``ValueError`` naming ``file`` unless ``metadata`` is an object whose ``settings`` maps
    every setting of ``frames`` to an object."""
    if not isinstance(metadata, dict):
        raise InputError(f"{file}: expected a JSON object, got {type(metadata).__name__}")
    settings = metadata.get("settings")
    if not isinstance(settings, dict):
        raise InputError(f"{file}: 'settings' must be an object of settings, got {type(settings).__name__}")
    for label, setting in settings.items():
        if not isinstance(setting, dict):
            raise InputError(f"{file}: setting {label!r} must be an object, got {type(setting).__name__}")
    for name, frame in zip(FRAMES, frames):
        unknown = sorted(set(frame["setting"].astype(str)) - set(settings))
        if unknown:
            raise InputError(f"{file}: settings {unknown[:3]} of {name}.parquet are not described")


def read(path: str | Path) -> tuple[list, dict]:
    """The frames (curves, experts, replications) and the metadata of the result saved in
    ``path``, all checked (see the module docstring). A directory holding none of the files is a
    ``FileNotFoundError``; any other problem a ``ValueError`` naming the file."""
    path = validation.path("path", path)
    if not path.exists():
        raise InputNotFound(f"{path}: no such folder (a saved mlcb result is a folder, e.g. results/trap)")
    if not path.is_dir():
        raise InputNotFound(f"{path} is a file, not a saved mlcb result (a folder, e.g. results/trap)")
    if not any((path / n).exists() or (path / n).is_symlink() for n in NAMES):
        raise InputNotFound(f"{path} is not a saved mlcb result (missing {list(NAMES)})")
    for name in NAMES:
        file = path / name
        if file.is_symlink():
            raise InputError(_link(file))
        if not file.exists():
            raise InputError(f"{file}: missing; {path} is a damaged mlcb result")
        if not file.is_file():
            raise InputError(f"{file}: not a regular file; {path} is a damaged mlcb result")
    frames = [read_frame(path / f"{name}.parquet", name) for name in FRAMES]
    for name, frame in zip(FRAMES, frames):
        check_values(path / f"{name}.parquet", frame, name)
    metadata = read_json(path / METADATA)
    check_metadata(path / METADATA, metadata, frames)
    check_rows(path, frames, metadata)
    return frames, metadata
