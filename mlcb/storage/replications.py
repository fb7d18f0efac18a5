"""Replications on disk: the record of one finished replication and its part file.

A run that is given a parts directory writes each replication there as soon as it finishes
(:meth:`Replication.save`: atomic and durable) and a later run with the same directory loads it
instead of running it again (:func:`load_parts`). A part is an ``.npz`` archive of plain arrays,
read without unpickling anything and validated against its setting's shapes; a damaged one is set
aside, named in one warning, and recomputed.

A setting's parts live in a folder named by its key, with ``identity.json`` beside them: what
made them (the setting's full digest, mlcb's version, the engine). :func:`claim_parts` checks it
before a run reuses any part: parts made otherwise (another version, another engine, or an older
mlcb that wrote no record) are refused, in one warning naming what differs, set aside and
recomputed; a folder that is a symbolic link is refused outright.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlcb.errors import CorruptPartWarning
from mlcb.storage.result_files import open_regular, read_json
from mlcb.storage.store import REFERENCES, aside_name, write_file
from mlcb.validation import InputError, shown


@dataclass
class Replication:
    """The recorded output of one replication (arrays on the checkpoint grid)."""

    index: int
    regret: np.ndarray
    pseudo_regret: np.ndarray
    top_m_regret: np.ndarray
    certificate: np.ndarray
    trained: np.ndarray  # (C, K)
    deployed: np.ndarray  # (C, K)
    optimal: np.ndarray  # (K,) L_k*
    best_expert: int
    best_loss: float
    trace_selected: np.ndarray  # (T_trace, M)
    trace_deployed: np.ndarray
    trace_loss: np.ndarray
    exceeded: bool = False  # the pseudo-regret exceeded the certificate in some round

    _ARRAYS = (
        "regret",
        "pseudo_regret",
        "top_m_regret",
        "certificate",
        "trained",
        "deployed",
        "optimal",
        "trace_selected",
        "trace_deployed",
        "trace_loss",
    )

    def save(self, path: Path) -> None:
        """Write to ``path`` (``.npz``) atomically and durably: into a unique temporary name,
        flushed and fsync'ed, then ``os.replace``'d; a reader never sees half a file, and
        concurrent writers never share a temporary file. The part records the name of its
        folder, its setting's key, which :meth:`load` checks: a part copied into the folder of
        another setting is never read as one of its replications."""
        path = Path(path)
        arrays = {name: getattr(self, name) for name in self._ARRAYS}
        write_file(
            path,
            lambda handle: np.savez(
                handle,
                setting=np.str_(path.parent.name),
                index=self.index,
                best_expert=self.best_expert,
                best_loss=self.best_loss,
                exceeded=int(self.exceeded),
                **arrays,
            ),
        )

    @classmethod
    def load(
        cls,
        path: Path,
        checkpoints: int | None = None,
        n_experts: int | None = None,
        trace_rounds: int | None = None,
    ) -> Replication:
        """Read a part written by :meth:`save` (never unpickling anything) and validate it: every
        array present with the shapes of its setting (``checkpoints`` C, ``n_experts`` K and
        ``trace_rounds`` where given), its stored index equal to the file name's and its stored
        setting the name of its folder (a part of another setting, another seed or horizon, say,
        copied there has arrays of the very same shapes). Any problem is a ``ValueError`` naming
        the file."""
        path = Path(path)
        handle = open_regular(path)  # a link or no regular file: a ValueError naming it
        try:
            # Our own handle: np.load leaves a path's file open when the archive is damaged.
            with handle:
                head = handle.read(4)
                if head != b"PK\x03\x04":
                    raise InputError("an empty file" if not head else "not an .npz archive")
                handle.seek(0)
                with np.load(handle, allow_pickle=False) as data:
                    names = ("index", "best_expert", "best_loss", "exceeded", *cls._ARRAYS)
                    missing = [n for n in names if n not in data]
                    if missing:
                        raise InputError(f"missing arrays {missing}")
                    arrays = {name: data[name] for name in cls._ARRAYS}
                    scalars = {name: data[name] for name in ("index", "best_expert", "best_loss", "exceeded")}
                    setting = data["setting"] if "setting" in data else None
        except ValueError as error:
            raise InputError(f"{path}: not a valid replication part ({_first_line(error)})") from None
        except Exception as error:  # zip, pickle, EOF and OS errors of a damaged file
            what = f"{type(error).__name__}: {_first_line(error)}"
            raise InputError(f"{path}: not a valid replication part ({what})") from None
        problem = _shape_problem(scalars, arrays, checkpoints, n_experts, trace_rounds)
        if problem is None:
            problem = _setting_problem(setting, path.parent.name)
        if problem is None:
            stem = path.name.split(".")[0]
            expected = stem.removeprefix("replication-")
            if (
                stem.startswith("replication-")
                and expected.isdigit()
                and int(expected) != int(scalars["index"])
            ):
                problem = f"stored index {int(scalars['index'])} differs from its file name's {int(expected)}"
        if problem is not None:
            raise InputError(f"{path}: not a valid replication part ({problem})")
        return cls(
            index=int(scalars["index"]),
            best_expert=int(scalars["best_expert"]),
            best_loss=float(scalars["best_loss"]),
            exceeded=bool(scalars["exceeded"]),
            **arrays,
        )


def _setting_problem(setting: np.ndarray | None, folder: str) -> str | None:
    """What is wrong with the setting a part records, read in the folder ``folder``, or ``None``."""
    if setting is None:
        return "it records no setting (written by an earlier mlcb)"
    if setting.shape != () or setting.dtype.kind != "U":
        return f"setting must be a string, got {setting.dtype} {setting.shape}"
    if str(setting) != folder:
        return f"made for setting {shown(str(setting), 40)}, not {shown(folder, 40)} of its folder"
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _shape_problem(
    scalars: dict, arrays: dict, checkpoints: int | None, n_experts: int | None, trace_rounds: int | None
) -> str | None:
    """What is wrong with the arrays of a part, or ``None``."""
    for name, value in scalars.items():
        kind = "f" if name == "best_loss" else "i"
        if value.shape != () or value.dtype.kind not in (kind, "i" if kind == "f" else kind):
            return f"{name} must be a scalar of kind {kind}, got {value.dtype} {value.shape}"
    c = checkpoints if checkpoints is not None else arrays["regret"].shape[0]
    k = n_experts if n_experts is not None else arrays["optimal"].shape[0]
    t = trace_rounds if trace_rounds is not None else arrays["trace_loss"].shape[0]
    expected = {
        "regret": (c,),
        "pseudo_regret": (c,),
        "top_m_regret": (c,),
        "certificate": (c,),
        "trained": (c, k),
        "deployed": (c, k),
        "optimal": (k,),
        "trace_deployed": (t,),
        "trace_loss": (t,),
    }
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            return f"{name} has shape {arrays[name].shape}, expected {shape}"
    selected = arrays["trace_selected"]
    if selected.ndim != 2 or selected.shape[0] != t:
        return f"trace_selected has shape {selected.shape}, expected ({t}, width)"
    for name, value in arrays.items():
        if value.dtype.kind not in "iuf":
            return f"{name} has dtype {value.dtype}, expected numbers"
    if not 0 <= int(scalars["best_expert"]) < k:
        return f"best_expert {int(scalars['best_expert'])} is not in [0, {k})"
    if int(scalars["index"]) < 0:
        return f"index {int(scalars['index'])} is negative"
    return None


def part_path(parts: Path, replication: int) -> Path:
    """Where replication ``replication`` is kept in the parts directory ``parts``."""
    return parts / f"replication-{replication:06d}.npz"


def load_parts(
    wanted: list[int],
    parts: Path | None,
    on_done: Callable[[Replication], None] | None = None,
    checkpoints: int | None = None,
    n_experts: int | None = None,
    trace_rounds: int | None = None,
) -> dict[int, Replication]:
    """The replications of ``wanted`` already saved in ``parts`` (none without it).

    Each part is validated (:meth:`Replication.load` with the setting's shapes); a corrupt one is
    named in a :class:`CorruptPartWarning`, renamed ``*.corrupt`` and left out, to be recomputed.
    """
    done: dict[int, Replication] = {}
    if parts is None:
        return done
    parts.mkdir(parents=True, exist_ok=True)
    for r in wanted:
        path = part_path(parts, r)
        if path.exists() or path.is_symlink():
            try:
                done[r] = Replication.load(path, checkpoints, n_experts, trace_rounds)
            except ValueError as error:
                aside = path.with_name(path.name + ".corrupt")
                try:
                    os.replace(path, aside)
                    where = f"moved to {aside.name}"
                except OSError:
                    where = "left in place"
                warnings.warn(
                    f"{error}; {where}, replication {r} is recomputed", CorruptPartWarning, stacklevel=2
                )
                continue
            if on_done:
                on_done(done[r])
    return done


#: The record of what made a setting's parts, in its folder.
IDENTITY = "identity.json"


def _what_differs(saved: dict, record: dict) -> str:
    """The fields of ``record`` that ``saved`` has otherwise, in words."""
    words = {"mlcb": "mlcb version", "engine": "engine", "digest": "setting", "setting": "setting label"}
    differs = [
        f"{words.get(name, name)} {saved.get(name)!r}, this run {value!r}"
        for name, value in record.items()
        if saved.get(name) != value
    ]
    return "; ".join(differs)


def claim_parts(folder: Path, record: dict[str, str]) -> None:
    """Make ``folder`` the parts folder of the setting ``record`` describes (``setting``,
    ``digest``, ``mlcb``, ``engine``): check the record of the parts already there, then write it.

    Parts made by another setting, mlcb version or engine, or by an mlcb that wrote no record,
    are refused: the folder is renamed ``*.mismatched-<pid>-<ns>`` (kept, never read again) with a
    :class:`CorruptPartWarning` naming what differs, and the replications are recomputed. A folder
    (or its parent) that is a symbolic link, or not a directory, is an ``InputError``.
    """
    from mlcb.storage.store import make_directory
    from mlcb.validation import InputError

    folder = Path(folder)
    for path in (folder.parent, folder):
        if path.is_symlink():
            raise InputError(
                f"{path}: is a symbolic link; mlcb keeps parts only in folders of its own (remove the link)"
            )
        if path.exists() and not path.is_dir():
            raise InputError(f"{path}: not a directory; cannot keep parts there (move it away)")
    record_path = folder / IDENTITY
    if folder.is_dir():
        parts = sorted(folder.glob("replication-*.npz"))
        why = None
        if record_path.exists() or record_path.is_symlink():
            try:
                saved = read_json(record_path)
            except ValueError as error:
                saved, why = None, f"its {IDENTITY} is unreadable ({error})"
            if isinstance(saved, dict) and saved != record:
                why = f"they were made otherwise ({_what_differs(saved, record)})"
            elif saved is not None and not isinstance(saved, dict):
                why = f"its {IDENTITY} is not a record"
        elif parts:
            why = f"they carry no {IDENTITY} (made by an older mlcb)"
        if why is not None:
            aside = aside_name(folder, "mismatched")
            os.rename(folder, aside)
            warnings.warn(
                f"{folder}: parts refused, {why}; set aside as {aside.name}, replications recomputed",
                CorruptPartWarning,
                stacklevel=2,
            )
    make_directory(folder)
    if not record_path.is_file() or read_json(record_path) != record:
        text = json.dumps(record, indent=1, sort_keys=True).encode()
        write_file(record_path, lambda handle: handle.write(text))


# --- the best-in-hindsight references of a run, kept beside its parts ----------------------------
class ReferenceStore:
    """The best-in-hindsight references of a run kept on disk, in the folder ``REFERENCES`` of its
    parts folder (:mod:`mlcb.engine.hindsight`): one JSON file per stream and replication mapping
    an expert's identity to its reference, numbers written exactly. Another setting of the run, or
    the same one resumed, reads them back instead of training every expert again. Nothing in a
    file is run; a file that cannot be read as such is ignored and written again.

    Examples
    --------
    >>> import tempfile
    >>> store = ReferenceStore(Path(tempfile.mkdtemp()))
    >>> store.write("stream-0", {"expert": 0.125})
    >>> store.read("stream-0"), store.read("another")
    ({'expert': 0.125}, {})
    """

    def __init__(self, parts: Path) -> None:
        self.folder = Path(parts) / REFERENCES

    def _path(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def read(self, name: str) -> dict[str, float]:
        """The values kept under ``name`` (``{}`` where there are none or the file is damaged;
        a value that is no number in ``[0, 1]`` is left out)."""
        try:
            with open_regular(self._path(name)) as handle:
                data = json.loads(handle.read())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        # A reference is a mean loss, in [0, 1]: anything else (an edited or damaged file) is
        # computed again, never read into every regret of the run.
        return {
            str(key): float(value)
            for key, value in data.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value <= 1.0
        }

    def write(self, name: str, values: dict[str, float]) -> None:
        """Add ``values`` to those kept under ``name``, atomically (a failure to write costs only a
        later recomputation, never the run)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            merged = {**self.read(name), **values}
            text = json.dumps(merged, sort_keys=True).encode()
            write_file(self._path(name), lambda handle: handle.write(text))
        except OSError:
            pass
