"""Results: tidy pandas frames plus metadata, saved as Parquet + JSON.

A :class:`Result` holds one or more *settings* (a policy at a budget on an instance, see
:class:`mlcb.config.SimulationConfig`), each with its replications recorded on a checkpoint grid.
Three long frames, one row per observation (seaborn's "tidy" layout):

``curves``
    one row per (setting, replication, checkpoint): ``regret`` (realized), ``pseudo_regret``,
    ``top_m_regret``, ``certificate`` (Delta(t)).
``experts``
    one row per (setting, replication, checkpoint, expert): ``trained`` (n_k, warm start
    included) and ``deployed`` counts.
``replications``
    one row per (setting, replication): the best expert ``best_expert`` (k*), ``best_loss``
    (L*), and ``certificate_violated`` (1.0 if the pseudo-regret exceeded Delta in some
    round, checked every round, 0.0 if not, NaN for policies without a certificate and where
    the pseudo-regret is not recorded, as on real data).

Every frame carries the setting columns ``setting``, ``policy``, ``budget`` and ``calibration``.

``metadata["settings"][label]`` describes each setting in plain JSON, computed once from the
configuration in memory when the setting is collected: ``config`` (a record: nothing in it is
ever imported or called back), ``key``, ``family`` (the experts' family name),
``heuristic_experts`` (experts whose rate is not valid on the environment run),
``certificate_valid`` (the policy's certificate holds and no expert is heuristic) and ``theory``
(the worst-case certificate ``B_num(t)``, ``{"rounds": [...], "worst_case": [...]}``, or ``None``
when some rate depends on more than the count or the setting is too large to tabulate). Reading,
summarising and plotting a result use the frames and this metadata only.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlcb import theory
from mlcb._jit import kernel
from mlcb.contracts import family_of

SETTING_COLUMNS = ["setting", "policy", "budget", "calibration"]
_FRAMES = ("curves", "experts", "replications")
#: The worst-case curve is tabulated up to this horizon, at this many rounds, for pools whose
#: rates fit in this many numbers (K T).
THEORY_HORIZON = 2_000_000
THEORY_POINTS = 24
THEORY_ENTRIES = 20_000_000


def _versions() -> dict[str, str]:
    import platform

    import numba

    import mlcb

    return {
        "mlcb": mlcb.__version__,
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
        "python": platform.python_version(),
    }


@functools.lru_cache(maxsize=1)
def _git_revision() -> str | None:
    """The package's git revision (``-dirty`` with uncommitted changes), once per process: the
    code a process runs is the code it imported, and two ``git`` calls cost milliseconds, a
    noticeable part of a small simulation."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _unrecorded(replication: Any) -> bool:
    """Whether ``replication``'s final pseudo-regret is nan (not recorded)."""
    values = replication.pseudo_regret
    return bool(len(values)) and bool(np.isnan(values[-1]))


@dataclass
class Result:
    """Tidy results of one or more simulation settings; see the module docstring."""

    curves: pd.DataFrame
    experts: pd.DataFrame
    replications: pd.DataFrame
    metadata: dict[str, Any] = field(default_factory=dict)

    # --- construction ------------------------------------------------------------------
    @classmethod
    def from_replications(
        cls, config: Any, replications: list, checkpoints: np.ndarray, extra: dict[str, Any] | None = None
    ) -> Result:
        """Collect the recorded arrays of ``replications`` of one ``config``."""
        setting = {
            "setting": config.label,
            "policy": config.policy,
            "budget": config.budget,
            "calibration": config.calibration,
        }
        n_reps, n_points, n_experts = len(replications), len(checkpoints), config.n_experts
        index = np.array([r.index for r in replications])
        curves = pd.DataFrame(
            {
                **setting,
                "replication": np.repeat(index, n_points),
                "round": np.tile(checkpoints, n_reps),
                **{
                    name: np.concatenate([getattr(r, name) for r in replications])
                    for name in ("regret", "pseudo_regret", "top_m_regret", "certificate")
                },
            }
        )
        experts = pd.DataFrame(
            {
                **setting,
                "replication": np.repeat(index, n_points * n_experts),
                "round": np.tile(np.repeat(checkpoints, n_experts), n_reps),
                "expert": np.tile(np.arange(n_experts), n_reps * n_points),
                "trained": np.concatenate([r.trained.ravel() for r in replications]),
                "deployed": np.concatenate([r.deployed.ravel() for r in replications]),
            }
        )
        policy = config.make_policy()
        has_certificate = bool(getattr(policy, "has_certificate", False))
        # A pseudo-regret that is not recorded (nan: a stream without expected losses, such as
        # real data) cannot be checked against the certificate; an exceedance seen before it
        # became nan still counts.
        violated = [
            float(r.exceeded) if has_certificate and (r.exceeded or not _unrecorded(r)) else np.nan
            for r in replications
        ]
        reps = pd.DataFrame(
            {
                **setting,
                "replication": index,
                "best_expert": [r.best_expert for r in replications],
                "best_loss": [r.best_loss for r in replications],
                "certificate_violated": violated,
            }
        )
        # The setting's columns come first, one value broadcast over the rows (built into the
        # frames: inserting columns afterwards cost milliseconds per result).
        frames = [curves, experts, reps]
        env = config.make_env()
        pool = list(config.experts)
        family = family_of(pool)
        heuristic = [k for k, flag in enumerate(family.heuristic(pool, env)) if flag]
        best = np.bincount([r.best_expert for r in replications], minlength=n_experts)
        theory = _worst_case_of(config, family, pool, env, int(np.argmax(best)))
        # What regret is measured against, where it is not the experts' L_k*: the family's
        # statement (e.g. the Bayes loss), else the environment's (e.g. a real-data stream's).
        reference = getattr(family, "reference", None) or getattr(env, "reference", None)
        reference = reference if isinstance(reference, str) else None
        metadata = {
            "settings": {
                config.label: {
                    "config": config.to_dict(),
                    "key": config.key(),
                    "family": str(getattr(family, "name", type(family).__name__)),
                    "certificate_valid": bool(getattr(policy, "certificate_valid", False)) and not heuristic,
                    "heuristic_experts": heuristic,
                    "theory": theory,
                    **({"reference": str(reference)} if reference else {}),
                    **(extra or {}),
                }
            },
            "versions": _versions(),
            "git_revision": _git_revision(),
            "created": pd.Timestamp.now(tz="UTC").isoformat(),
        }
        return cls(*frames, metadata=metadata)

    @staticmethod
    def concat(results: list[Result]) -> Result:
        """One result holding the settings of all ``results`` (labels must be distinct)."""
        if not results:
            raise ValueError("results must be a non-empty list of Result objects")
        settings: dict[str, Any] = {}
        for result in results:
            for label, data in result.metadata.get("settings", {}).items():
                if label in settings:
                    raise ValueError(
                        f"results: setting {label!r} appears twice; give settings distinct labels"
                    )
                settings[label] = data
        metadata = {**results[-1].metadata, "settings": settings}
        frames = [pd.concat([getattr(r, name) for r in results], ignore_index=True) for name in _FRAMES]
        return Result(*frames, metadata=metadata)

    # --- views ---------------------------------------------------------------------------
    @property
    def settings(self) -> list[str]:
        """Setting labels, in the order they were added."""
        settings = self.metadata.get("settings") if isinstance(self.metadata, dict) else None
        return list(settings if isinstance(settings, dict) else {}) or list(self.curves["setting"].unique())

    def to_frame(self, kind: str = "curves") -> pd.DataFrame:
        """One of the tidy frames: ``"curves"``, ``"experts"`` or ``"replications"``."""
        if kind not in _FRAMES:
            raise ValueError(f"kind must be one of {_FRAMES}, got {kind!r}")
        return getattr(self, kind)

    def final(self) -> pd.DataFrame:
        """The ``curves`` rows at each setting's last checkpoint."""
        last = self.curves.groupby("setting")["round"].transform("max")
        return self.curves[self.curves["round"] == last]

    def summary(self) -> pd.DataFrame:
        """Per setting: final regret (mean and standard deviation over replications), final
        pseudo-regret, Top-M regret, certificate, the share of rounds the best expert was
        deployed, and the fraction of replications whose pseudo-regret exceeded the certificate.

        Examples
        --------
        >>> import mlcb
        >>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=2)
        >>> list(result.summary().columns)[:4]
        ['setting', 'policy', 'budget', 'calibration']
        """
        final = self.final()
        by = SETTING_COLUMNS
        table = (
            final.groupby(by, sort=False)
            .agg(
                rounds=("round", "max"),
                replications=("replication", "nunique"),
                regret=("regret", "mean"),
                regret_std=("regret", "std"),
                pseudo_regret=("pseudo_regret", "mean"),
                top_m_regret=("top_m_regret", "mean"),
                certificate=("certificate", "mean"),
            )
            .reset_index()
        )
        experts = self.experts.merge(
            self.replications[["setting", "replication", "best_expert"]], on=["setting", "replication"]
        )
        last = experts.groupby("setting")["round"].transform("max")
        best = experts[(experts["round"] == last) & (experts["expert"] == experts["best_expert"])]
        share = (best["deployed"] / best["round"]).groupby(best["setting"]).mean()
        table["best_deployed_share"] = table["setting"].map(share)
        violated = self.replications.groupby("setting")["certificate_violated"].mean()
        table["certificate_violations"] = table["setting"].map(violated)
        return table

    # --- storage -------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``curves.parquet``, ``experts.parquet``, ``replications.parquet`` and
        ``metadata.json`` into directory ``path``; returns it.

        The save is atomic (:mod:`mlcb.store`): the files are written into a temporary sibling
        that then replaces ``path``, so a reader, or a save that fails halfway, sees the old result
        or the new one, never a mix. ``path`` may be missing, or a directory holding a result; a
        directory with other files is refused (``ValueError``), as is a save while another writer
        holds the directory's lock."""
        from mlcb import store

        path = Path(path)
        if path.exists() and not path.is_dir():
            raise ValueError(f"{path} is not a directory; cannot save a result there")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"{path.parent}: cannot create the directory ({error.strerror})") from None
        with store.lock(path):
            return store.replace_directory(path, self.write_files)

    def write_files(self, directory: Path) -> None:
        """Write the three frames and the metadata into the existing ``directory`` (no atomicity
        of its own: :meth:`save` and :class:`mlcb.store.Store` write into a temporary directory)."""
        directory = Path(directory)
        for name in _FRAMES:
            getattr(self, name).to_parquet(directory / f"{name}.parquet", index=False)
        (directory / "metadata.json").write_text(json.dumps(self.metadata, indent=2, default=str))

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Read a result written by :meth:`save`, validating it: the four files present and
        regular files, each frame's columns and dtypes, the metadata a JSON object whose
        ``settings`` maps every setting of the frames to an object. A directory holding none of
        the files is a ``FileNotFoundError``; any other problem a ``ValueError`` with one line
        naming the file and what is wrong. Nothing named in the files is imported or called."""
        path = Path(path)
        names = [f"{n}.parquet" for n in _FRAMES] + ["metadata.json"]
        if not path.is_dir() or not any((path / n).exists() or (path / n).is_symlink() for n in names):
            raise FileNotFoundError(f"{path} is not a saved mlcb result (missing {names})")
        for name in names:
            file = path / name
            if not file.exists():
                raise ValueError(f"{file}: missing; {path} is a damaged mlcb result")
            if not file.is_file():
                raise ValueError(f"{file}: not a regular file; {path} is a damaged mlcb result")
        frames = []
        for name in _FRAMES:
            file = path / f"{name}.parquet"
            try:
                frame = pd.read_parquet(file)
            except Exception as error:  # pyarrow raises many kinds on a damaged file
                raise ValueError(f"{file}: not a readable Parquet file ({_first_line(error)})") from None
            _check_columns(file, frame, _SCHEMA[name])
            frames.append(frame)
        file = path / "metadata.json"
        try:
            metadata = json.loads(file.read_text())
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ValueError(f"{file}: not readable JSON ({_first_line(error)})") from None
        _check_metadata(file, metadata, frames)
        return cls(*frames, metadata=metadata)


#: Columns of the saved frames and their kinds: ``"str"``, ``"int"`` or ``"float"``.
_SETTING_SCHEMA = {"setting": "str", "policy": "str", "budget": "int", "calibration": "str"}
_SCHEMA = {
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
_KINDS = {
    "str": pd.api.types.is_string_dtype,
    "int": pd.api.types.is_integer_dtype,
    "float": pd.api.types.is_float_dtype,
}


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _check_columns(file: Path, frame: pd.DataFrame, schema: dict[str, str]) -> None:
    missing = [c for c in schema if c not in frame.columns]
    if missing:
        raise ValueError(f"{file}: missing column(s) {missing}")
    for column, kind in schema.items():
        if not _KINDS[kind](frame[column].dtype):
            raise ValueError(f"{file}: column {column!r} has dtype {frame[column].dtype}, expected {kind}")


def _check_metadata(file: Path, metadata: Any, frames: list[pd.DataFrame]) -> None:
    if not isinstance(metadata, dict):
        raise ValueError(f"{file}: expected a JSON object, got {type(metadata).__name__}")
    settings = metadata.get("settings")
    if not isinstance(settings, dict):
        raise ValueError(f"{file}: 'settings' must be an object of settings, got {type(settings).__name__}")
    for label, setting in settings.items():
        if not isinstance(setting, dict):
            raise ValueError(f"{file}: setting {label!r} must be an object, got {type(setting).__name__}")
    for name, frame in zip(_FRAMES, frames):
        unknown = sorted(set(frame["setting"].astype(str)) - set(settings))
        if unknown:
            raise ValueError(f"{file}: settings {unknown[:3]} of {name}.parquet are not described")


#: Recent worst-case curves by setting (the curve depends neither on the policy nor on the number
#: of replications: a comparison or a repeated run computes it once).
_CURVES: dict[str, dict[str, list] | None] = {}


def _worst_case_of(config: Any, family: Any, experts: list, env: Any, best_expert: int) -> dict | None:
    """:func:`worst_case_curve` of ``config``, remembered when the setting is plain data."""
    key = _setting_key(config, experts, best_expert)
    if key is not None and key in _CURVES:
        curve = _CURVES[key]
    else:
        budget, horizon = config.budget, config.horizon
        curve = worst_case_curve(family, experts, env, config.delta, budget, horizon, best_expert)
        if key is not None:
            while len(_CURVES) >= 16:
                _CURVES.pop(next(iter(_CURVES)))
            _CURVES[key] = curve
    return None if curve is None else {name: list(values) for name, values in curve.items()}


def _setting_key(config: Any, experts: list, best_expert: int) -> str | None:
    """What the curve depends on, as exact JSON; ``None`` unless every part of it is plain data
    (dataclass experts whose fields are JSON, JSON environment parameters)."""
    described = []
    for expert in experts:
        if not dataclasses.is_dataclass(expert) or isinstance(expert, type):
            return None
        cls = type(expert)
        fields = {f.name: getattr(expert, f.name) for f in dataclasses.fields(expert)}
        described.append([f"{cls.__module__}:{cls.__qualname__}", fields])
    setting = [config.env, config.env_params, described, config.delta, config.budget, config.horizon]
    try:
        return json.dumps([setting, best_expert], sort_keys=True)
    except (TypeError, ValueError):
        return None


def worst_case_curve(
    family: Any, experts: list, env: Any, delta: float, budget: int, horizon: int, best_expert: int
) -> dict[str, list] | None:
    """``B_num(t)`` at about :data:`THEORY_POINTS` rounds up to ``horizon``, as plain lists
    ``{"rounds": [...], "worst_case": [...]}``; ``None`` when some rate depends on more than the
    count (``family.rates`` gives ``None``), the horizon is over :data:`THEORY_HORIZON` or the
    pool's rates would hold over :data:`THEORY_ENTRIES` numbers.

    ``B_num(t) = sum_{n <= t} w_{k*}(n) + (1/M) (sum of the M t largest w_k(n), n <= t)`` with
    ``w_k(n) = sqrt(2 log(4 K n^2 / delta) / n) + U_k(n, delta / 2K) / n``: the largest certificate
    any allocation of the budget could produce (:func:`mlcb.theory.numeric_worst_case`). Experts
    with equal rates are counted once, with their multiplicity.

    Examples
    --------
    >>> import envs
    >>> from agents.bandits import BANDITS, UCB1
    >>> curve = worst_case_curve(BANDITS, [UCB1()] * 10, envs.make("mlcb/Trap-v0"), 0.1, 2, 1_000, 0)
    >>> curve["rounds"][:3], len(curve["rounds"]) == len(curve["worst_case"])
    ([10, 12, 14], True)
    """
    n_experts, horizon = len(experts), int(horizon)
    if horizon > THEORY_HORIZON or n_experts * horizon > THEORY_ENTRIES:
        return None
    counts = np.arange(1, horizon + 1, dtype=np.float64)
    try:
        rates = family.rates(experts, env, np.arange(1, horizon + 1), delta / (2 * n_experts))
        if rates is None:
            return None
        rates = np.asarray(rates, dtype=float)
        if rates.shape != (n_experts, horizon) or not np.all(np.isfinite(rates) & (rates >= 0)):
            return None
        rows: dict[bytes, int] = {}
        inverse = np.array(
            [
                rows.setdefault(hashlib.blake2b(np.ascontiguousarray(row)).digest(), k)
                for k, row in enumerate(rates)
            ]
        )
        firsts, inverse = np.unique(inverse, return_inverse=True)
        multiplicity = np.bincount(inverse, minlength=len(firsts))
        widths = theory.confidence_width(counts, n_experts, delta, rates[firsts])
    except (ValueError, TypeError, ArithmeticError, MemoryError):  # no curve rather than no result
        return None
    del rates
    own = np.cumsum(widths[inverse[best_expert]])
    start = min(10, horizon)
    rounds = np.unique(np.geomspace(start, horizon, THEORY_POINTS).astype(np.int64))
    sizes = [budget * int(t) for t in rounds]
    if len(widths) <= _SORTED_ROWS and np.all(np.diff(widths, axis=1) <= 0):
        largest = _largest_sums_of_sorted(widths, multiplicity, rounds, sizes)
    else:
        largest = [_largest_sum(widths[:, :t], multiplicity, size) for t, size in zip(rounds, sizes)]
    values = [own[t - 1] + top / budget for t, top in zip(rounds, largest)]
    return {"rounds": [int(t) for t in rounds], "worst_case": [float(v) for v in values]}


#: Up to this many distinct rates, non-increasing widths are selected by bisection.
_SORTED_ROWS = 32


def _largest_sums_of_sorted(
    widths: np.ndarray, multiplicity: np.ndarray, rounds: np.ndarray, sizes: list[int]
) -> list[float]:
    """:func:`_largest_sum` of ``widths[:, :t]`` for every ``t`` of ``rounds``, for rows that are
    non-increasing and >= 0: the ``size`` largest entries are a prefix of every row, cut at the
    ``size``-th largest value, found by bisection on the bits of the (ordered) positive floats."""
    widths = np.ascontiguousarray(widths + 0.0)  # no -0.0: the bits of floats >= 0 are ordered
    prefix = np.concatenate([np.zeros((len(widths), 1)), np.cumsum(widths, axis=1)], axis=1)
    weights = multiplicity.astype(np.int64)
    rounds = np.asarray(rounds, dtype=np.int64)
    cuts = np.empty(len(rounds), dtype=np.int64)
    above = np.empty((len(rounds), len(widths)), dtype=np.int64)
    _sorted_cuts(widths.view(np.int64), weights, rounds, np.asarray(sizes, dtype=np.int64), cuts, above)
    out = []
    for p, size in enumerate(sizes):
        cut = float(np.int64(cuts[p]).view(np.float64))  # the size-th largest entry
        taken = float(weights @ prefix[np.arange(len(widths)), above[p]])
        out.append(taken + (size - int(weights @ above[p])) * cut)
    return out


@kernel
def _count_at_least(row, t, bits):
    """How many of ``row[:t]`` (non-increasing bit patterns) are ``>= bits``."""
    low, high = 0, t
    while low < high:
        middle = (low + high) // 2
        if row[middle] >= bits:
            low = middle + 1
        else:
            high = middle
    return low


@kernel
def _sorted_cuts(bits, weights, rounds, sizes, cuts, above):
    """For each ``t`` of ``rounds``, into ``cuts``: the bits of the ``size``-th largest of the
    rows' first ``t`` entries (row ``j`` counted ``weights[j]`` times; bisection on the bit
    patterns of floats >= 0, which order as the floats do); into ``above``: each row's count of
    entries above it."""
    n_rows = bits.shape[0]
    for p in range(len(rounds)):
        t = rounds[p]
        low = bits[0, t - 1]  # every entry is >= it
        high = bits[0, 0]
        for j in range(1, n_rows):
            low = min(low, bits[j, t - 1])
            high = max(high, bits[j, 0])
        high += 1  # no entry is >= it
        while high - low > 1:
            middle = low + (high - low) // 2  # low + high would overflow past 2.0
            total = 0
            for j in range(n_rows):
                total += weights[j] * _count_at_least(bits[j], t, middle)
            if total >= sizes[p]:
                low = middle
            else:
                high = middle
        cuts[p] = low
        for j in range(n_rows):
            above[p, j] = _count_at_least(bits[j], t, low + 1)


def _largest_sum(values: np.ndarray, multiplicity: np.ndarray, size: int) -> float:
    """Sum of the ``size`` largest numbers of ``values`` (J, t), row ``j`` counted
    ``multiplicity[j]`` times: a weighted selection, ``O(J t)`` per step on a shrinking array."""
    flat = values.ravel()
    if np.all(multiplicity == 1):
        first = flat.size - size
        return float(np.partition(flat, first)[first:].sum())
    weights = np.repeat(multiplicity.astype(np.int64), values.shape[1])
    total, need = 0.0, int(size)
    while True:
        # A pivot at the unweighted rank of the weighted target: exact whatever it is.
        share = need / float(weights.sum())
        rank = min(max(int((1.0 - share) * flat.size), 0), flat.size - 1)
        pivot = np.partition(flat, rank)[rank]
        above = flat > pivot
        above_weight = int(weights[above].sum())
        if above_weight >= need:
            flat, weights = flat[above], weights[above]
            continue
        equal_weight = int(weights[flat == pivot].sum())
        above_sum = float(flat[above] @ weights[above])
        if above_weight + equal_weight >= need:
            return total + above_sum + (need - above_weight) * float(pivot)
        total += above_sum + equal_weight * float(pivot)
        need -= above_weight + equal_weight
        below = flat < pivot
        flat, weights = flat[below], weights[below]


def load(path: str | Path) -> Result:
    """Read a result saved with :meth:`Result.save`."""
    return Result.load(path)
