"""The files of a saved result: their names, the frames' columns, and writing and reading them.

A saved result is a directory of ``curves.parquet``, ``experts.parquet``,
``replications.parquet`` (the tidy frames of :class:`mlcb.storage.results.Result`) and ``metadata.json``.
Reading checks everything before anything is used: the four files present and regular, each frame
readable with its columns and their kinds, its values (:data:`VALUES`: a regret finite, rounds
>= 1, no frame empty), the metadata a JSON object whose ``settings`` describes every setting of
the frames and no other, each field the readers take of the kind mlcb writes
(:data:`SETTING_FIELDS`, :data:`CONFIG_FIELDS`, :data:`TOP_FIELDS`; whole numbers within 64
bits), and the rows of each setting agreeing across the frames and with the metadata. Every
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
import math
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


#: The largest whole number a file of mlcb's may hold (a signed 64-bit integer): mlcb writes
#: none larger, and a larger one overflows where it is read as a float or an array.
LARGEST_WHOLE = 2**63 - 1


def _whole(text: str) -> int:
    """A JSON whole number, refused (a ``ValueError``) beyond :data:`LARGEST_WHOLE` in size."""
    digits = len(text.lstrip("-"))  # JSON has no leading zeros: 20 digits or more is too large
    if digits > 19 or (digits == 19 and abs(int(text)) > LARGEST_WHOLE):
        shown = text if len(text) <= 24 else f"{text[:12]}...{text[-4:]} ({len(text.lstrip('-')):,} digits)"
        raise InputError(f"the whole number {shown} is larger than a 64-bit integer")
    return int(text)


def loads(text: str | bytes) -> Any:
    """The JSON value of ``text``, refusing (a ``ValueError``) a whole number beyond a 64-bit
    integer (:data:`LARGEST_WHOLE`): a JSON number has no size of its own, and one of 400 digits
    overflows wherever it is read as a float."""
    return json.loads(text, parse_int=_whole)


def read_json(file: Path, within: Path | None = None) -> Any:
    """The JSON value in the regular ``file`` (:func:`open_regular`), or a one-line
    ``ValueError`` naming it (:func:`loads`: whole numbers within 64 bits)."""
    with open_regular(file, within) as handle:
        try:
            return loads(handle.read().decode("utf-8"))
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


def check_rows(path: Path, frames: list, metadata: dict, files: dict[str, Path] | None = None) -> None:
    """An ``InputError`` naming the file unless, for every setting, the frames agree with each
    other and with the metadata: ``R`` replications (``config.replications``) of ``C`` checkpoints
    from round 1 to the horizon (``config.horizon``), ``R * C`` rows of curves, ``R * C * K`` of
    experts (``K`` experts, ``expert < K``, none deployed more often than once a round) and ``R``
    of replications (``best_expert < K``), and one policy, budget and calibration, those of its
    ``config``. Each row is there once: one per replication and checkpoint in curves, one per
    replication, checkpoint and expert in experts, on the replications and checkpoints of curves.
    ``files`` names the file of each frame and of the metadata where they are not the result's
    (``path / "curves.parquet"``, ..., ``path / "metadata.json"``): a sweep's part."""
    curves, experts, replications = frames
    files = files or {**{name: path / f"{name}.parquet" for name in FRAMES}, "metadata": path / METADATA}
    settings = metadata["settings"]
    for label, group in curves.groupby("setting", sort=False):
        runs = group["replication"].nunique()
        points = group["round"].nunique()
        config = settings.get(label, {}).get("config") if isinstance(settings.get(label), dict) else None
        config = config if isinstance(config, dict) else {}
        declared = config.get("replications")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != runs:
            raise InputError(
                f"{files['curves']}: setting {label!r} holds {runs} replication(s), its metadata "
                f"says {declared}"
            )
        _refuse_twice(files["curves"], label, group, ["replication", "round"])
        if len(group) != runs * points:
            raise InputError(
                f"{files['curves']}: setting {label!r} has {len(group)} rows, expected {runs} "
                f"replication(s) x {points} checkpoint(s) = {runs * points}"
            )
        horizon = config.get("horizon")
        first, last = int(group["round"].min()), int(group["round"].max())
        if _is_whole(horizon, 1) and (first, last) != (1, horizon):
            raise InputError(
                f"{files['curves']}: setting {label!r} is recorded from round {first:,} to {last:,}, "
                f"its metadata says rounds 1 to its horizon {horizon:,}"
            )
        pool = config.get("experts")
        k = len(pool) if isinstance(pool, list) else None
        _check_sizes(files["metadata"], label, settings[label], k, horizon)
        said = settings[label].get("n_experts")
        k = said if k is None and _is_whole(said, 1) else k
        mine = experts[experts["setting"] == label]
        _refuse_twice(files["experts"], label, mine, ["replication", "round", "expert"])
        for column, what in (("replication", "replication"), ("round", "checkpoint")):
            stray = sorted(set(mine[column]) - set(group[column]))
            if stray:
                raise InputError(
                    f"{files['experts']}: setting {label!r} has rows at {what} {int(stray[0]):,}, "
                    f"which curves.parquet does not hold; the frames of a result share their {what}s"
                )
        if k is not None and len(mine) and int(mine["expert"].max()) >= k:
            raise InputError(
                f"{files['experts']}: setting {label!r} has rows of expert {int(mine['expert'].max()):,}, "
                f"outside its pool of {k} experts"
            )
        expected = runs * points * (k if k is not None else max(1, mine["expert"].nunique()))
        if len(mine) != expected:
            raise InputError(
                f"{files['experts']}: setting {label!r} has {len(mine)} rows, expected {expected} "
                f"(replications x checkpoints x experts, expert < {k if k is not None else 'K'})"
            )
        rows = replications[replications["setting"] == label]
        if len(rows) != runs or set(rows["replication"]) != set(group["replication"]):
            raise InputError(
                f"{files['replications']}: setting {label!r} has {len(rows)} rows, expected one per "
                f"replication of curves.parquet ({runs})"
            )
        if k is not None and int(rows["best_expert"].max()) >= k:
            raise InputError(
                f"{files['replications']}: setting {label!r} has best_expert "
                f"{int(rows['best_expert'].max())}, outside its pool of {k} experts"
            )
        deployed = mine["deployed"].to_numpy() > mine["round"].to_numpy()
        if deployed.any():
            row = mine.iloc[int(deployed.argmax())]
            raise InputError(
                f"{files['experts']}: setting {label!r} has expert {int(row['expert'])} deployed "
                f"{int(row['deployed'])} times by round {int(row['round'])}, more than once a round"
            )
        _check_setting_columns(files, label, config, {"curves": group, "experts": mine, "replications": rows})


def _check_sizes(file: Path, label: str, setting: dict, pool: int | None, horizon: Any) -> None:
    """An ``InputError`` naming ``metadata.json`` when the setting's own ``n_experts`` or
    ``horizon`` (a sweep's settings record both) differs from its config's pool or horizon: the
    figures take K from the first (the theorem's curve is drawn with it) and T from the frames."""
    for name, said, recorded in (
        ("n_experts", setting.get("n_experts"), pool),
        ("horizon", setting.get("horizon"), horizon),
    ):
        if _is_whole(said, 1) and _is_whole(recorded, 1) and said != recorded:
            raise InputError(f"{file}: setting {label!r} has {name} {said:,}, its config says {recorded:,}")


def _refuse_twice(file: Path, label: str, frame: Any, keys: list[str]) -> None:
    """An ``InputError`` naming ``file`` when two rows of setting ``label`` share the values of
    ``keys`` (a replication recorded twice at one checkpoint, say): the counts of rows alone
    would not tell a row moved onto another's place, and the mean over the rows would be wrong."""
    twice = frame.duplicated(keys)
    if twice.any():
        row = frame[twice].iloc[0]
        at = ", ".join(f"{key} {int(row[key]):,}" for key in keys)
        raise InputError(f"{file}: setting {label!r} has two rows at {at}; a result holds one")


def _plain(value: Any) -> Any:
    """A NumPy scalar of a frame as the Python value (``budget`` 2, not ``np.int64(2)``)."""
    return value.item() if hasattr(value, "item") else value


def _check_setting_columns(files: dict[str, Path], label: str, config: dict, frames: dict) -> None:
    """An ``InputError`` naming the file unless the setting columns (policy, budget, calibration)
    hold one value for setting ``label`` in every frame, the same in all three and, where its
    ``config`` records them, the ones recorded."""
    said = {column: config.get(column) for column in ("policy", "budget", "calibration")}
    for name, frame in frames.items():
        file = files[name]
        for column, recorded in said.items():
            values = [_plain(v) for v in frame[column].unique()]
            if len(values) != 1:
                shown = ", ".join(repr(v) for v in values[:3])
                raise InputError(
                    f"{file}: setting {label!r} has {len(values)} values of {column!r} ({shown}); a setting "
                    "has one"
                )
            if recorded is not None and values[0] != recorded:
                raise InputError(
                    f"{file}: setting {label!r} has {column} {values[0]!r}, its metadata says {recorded!r}"
                )
            said[column] = values[0]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_whole(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _numbers(value: Any, minimum: float | None = None) -> bool:
    """Whether ``value`` is a list of numbers (each finite and ``>= minimum`` when given)."""
    if not isinstance(value, list):
        return False
    if minimum is None:
        return all(_is_number(v) for v in value)
    return all(_is_number(v) and math.isfinite(v) and v >= minimum for v in value)


def _theory(value: Any) -> bool:
    """Whether ``value`` is a worst-case curve as mlcb records it: rounds (finite, >= 1) and
    their bounds, lists of numbers of one length."""
    if not isinstance(value, dict):
        return False
    rounds, bounds = value.get("rounds"), value.get("worst_case")
    return (
        isinstance(rounds, list)
        and isinstance(bounds, list)
        and _numbers(rounds, 1)
        and _numbers(bounds)
        and len(rounds) == len(bounds)
    )


#: What the readers (``mlcb show``, the figures, the report) take from a setting's description
#: (``metadata.json``'s settings, a sweep part's ``.json``) and what each must be where present:
#: ``(test, what)``. A field that is absent or null is read as unknown; one of another kind is
#: refused.
SETTING_FIELDS: dict[str, tuple[Any, str]] = {
    "config": (lambda v: isinstance(v, dict), "an object"),
    "key": (lambda v: isinstance(v, str), "a string"),
    "family": (lambda v: isinstance(v, str), "a string"),
    "engine": (lambda v: isinstance(v, str), "a string"),
    "reference": (lambda v: isinstance(v, str), "a string"),
    "certificate_problem": (lambda v: isinstance(v, str), "a string"),
    "certificate_valid": (lambda v: isinstance(v, bool), "true or false"),
    "heuristic_experts": (
        lambda v: isinstance(v, list) and all(_is_whole(k, 0) for k in v),
        "a list of expert indices",
    ),
    "theory": (
        _theory,
        "null or a curve {rounds, worst_case}: two lists of numbers of one length, rounds >= 1",
    ),
    "seconds": (lambda v: _is_number(v) and (v != v or 0 <= v < math.inf), "a number >= 0"),
    "rate_exponent": (lambda v: _is_number(v) and math.isfinite(v), "null or a finite number"),
    "n_experts": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
    "horizon": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
}
#: The same for the fields of a setting's ``config`` record that the readers take.
CONFIG_FIELDS: dict[str, tuple[Any, str]] = {
    "policy": (lambda v: isinstance(v, str), "a string"),
    "calibration": (lambda v: isinstance(v, str), "a string"),
    "label": (lambda v: isinstance(v, str), "a string"),
    "budget": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
    "horizon": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
    "replications": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
    "checkpoints": (lambda v: _is_whole(v, 1), "a whole number >= 1"),
    "seed": (lambda v: _is_whole(v, 0), "a whole number >= 0"),
    "delta": (lambda v: _is_number(v) and 0 < v < 1, "a number in (0, 1)"),
    "experts": (lambda v: isinstance(v, list), "a list"),
    "env_params": (lambda v: isinstance(v, dict), "an object"),
    "policy_params": (lambda v: isinstance(v, dict), "an object"),
}
#: The same for the top level of ``metadata.json``.
TOP_FIELDS: dict[str, tuple[Any, str]] = {
    "versions": (lambda v: isinstance(v, dict), "an object"),
    "git_revision": (lambda v: isinstance(v, str), "null or a string"),
    "created": (lambda v: isinstance(v, str), "null or a string"),
}


def _check_fields(file: Path, where: str, record: dict, fields: dict[str, tuple[Any, str]]) -> None:
    for name, (test, what) in fields.items():
        if record.get(name) is not None and not test(record[name]):
            from mlcb.validation import shown

            raise InputError(f"{file}: {where}{name!r} must be {what}, got {shown(record[name], 60)}")


def check_setting(file: Path, label: str, setting: Any) -> None:
    """An ``InputError`` naming ``file``, the setting and the field unless ``setting`` is an object
    whose fields that the readers take (:data:`SETTING_FIELDS`, and :data:`CONFIG_FIELDS` of its
    ``config``) are each of the kind mlcb writes."""
    if not isinstance(setting, dict):
        raise InputError(f"{file}: setting {label!r} must be an object, got {type(setting).__name__}")
    _check_fields(file, f"setting {label!r}: ", setting, SETTING_FIELDS)
    config = setting.get("config")
    if isinstance(config, dict):
        _check_fields(file, f"setting {label!r}: config ", config, CONFIG_FIELDS)


def check_metadata(file: Path, metadata: Any, frames: list) -> None:
    """A ``ValueError`` naming ``file`` unless ``metadata`` is an object whose ``settings`` maps
    every setting of ``frames``, and no other, to an object (:func:`check_setting`), its other
    fields of the kinds mlcb writes (:data:`TOP_FIELDS`)."""
    if not isinstance(metadata, dict):
        raise InputError(f"{file}: expected a JSON object, got {type(metadata).__name__}")
    settings = metadata.get("settings")
    if not isinstance(settings, dict):
        raise InputError(f"{file}: 'settings' must be an object of settings, got {type(settings).__name__}")
    _check_fields(file, "", metadata, TOP_FIELDS)
    for label, setting in settings.items():
        check_setting(file, label, setting)
    for name, frame in zip(FRAMES, frames):
        unknown = sorted(set(frame["setting"].astype(str)) - set(settings))
        if unknown:
            raise InputError(f"{file}: settings {unknown[:3]} of {name}.parquet are not described")
    held = set(frames[0]["setting"].astype(str))
    empty = [label for label in settings if label not in held]
    if empty:
        raise InputError(
            f"{file}: describes setting(s) {empty[:3]} that curves.parquet holds no rows of; a saved "
            "result describes only the settings it holds"
        )


#: The file that marks a sweep's folder (:mod:`mlcb.sweeps`).
SWEEP_FILE = "sweep.json"


def _not_a_result(path: Path) -> str:
    """Why the folder ``path``, which holds none of a result's files, is not a saved result, and
    what to read instead: a sweep (:func:`mlcb.sweeps.load`), or the results in its folders (the
    ``--out`` folder of several runs)."""
    if (path / SWEEP_FILE).exists() or (path / SWEEP_FILE).is_symlink():
        return (
            f"{path} is a sweep, not a saved mlcb result of one run: read it with "
            f"mlcb.sweeps.load({str(path)!r}) (mlcb show, plot and report read either)"
        )
    try:
        inside = sorted(
            entry.name
            for entry in path.iterdir()
            if entry.is_dir() and any((entry / name).is_file() for name in (METADATA, SWEEP_FILE))
        )
    except OSError:
        inside = []
    if inside:
        shown = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
        return (
            f"{path} is not a saved mlcb result but holds {len(inside)} in its folders ({shown}): name "
            f"one, e.g. {path / inside[0]}"
        )
    return f"{path} is not a saved mlcb result (missing {list(NAMES)})"


#: What a symbolic link that leads to nothing is, in words.
DANGLING = "a symbolic link that leads to nothing (to a missing path, or round a loop of links)"


def read(path: str | Path) -> tuple[list, dict]:
    """The frames (curves, experts, replications) and the metadata of the result saved in
    ``path``, all checked (see the module docstring). A directory holding none of the files is a
    ``FileNotFoundError``; any other problem a ``ValueError`` naming the file."""
    path = validation.path("path", path)
    if not path.exists():
        if path.is_symlink():
            raise InputNotFound(f"{path}: {DANGLING}")
        raise InputNotFound(f"{path}: no such folder (a saved mlcb result is a folder, e.g. results/trap)")
    if not path.is_dir():
        raise InputNotFound(f"{path} is a file, not a saved mlcb result (a folder, e.g. results/trap)")
    if not any((path / n).exists() or (path / n).is_symlink() for n in NAMES):
        raise InputNotFound(_not_a_result(path))
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
