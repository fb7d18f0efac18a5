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
    (L*), and ``certificate_violated`` (1.0 if the pseudo-regret exceeded Delta at some
    checkpoint, 0.0 if not, NaN for policies without a certificate).

Every frame carries the setting columns ``setting``, ``policy``, ``budget`` and ``calibration``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SETTING_COLUMNS = ["setting", "policy", "budget", "calibration"]
_FRAMES = ("curves", "experts", "replications")


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


def _git_revision() -> str | None:
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
                "replication": np.repeat(index, n_points * n_experts),
                "round": np.tile(np.repeat(checkpoints, n_experts), n_reps),
                "expert": np.tile(np.arange(n_experts), n_reps * n_points),
                "trained": np.concatenate([r.trained.ravel() for r in replications]),
                "deployed": np.concatenate([r.deployed.ravel() for r in replications]),
            }
        )
        policy = config.make_policy()
        has_certificate = bool(getattr(policy, "has_certificate", False))
        violated = [
            float(np.any(r.pseudo_regret > r.certificate)) if has_certificate else np.nan
            for r in replications
        ]
        reps = pd.DataFrame(
            {
                "replication": index,
                "best_expert": [r.best_expert for r in replications],
                "best_loss": [r.best_loss for r in replications],
                "certificate_violated": violated,
            }
        )
        frames = [_with_setting(frame, setting) for frame in (curves, experts, reps)]
        heuristic = [k for k, e in enumerate(config.experts) if getattr(e, "heuristic", True)]
        metadata = {
            "settings": {
                config.label: {
                    "config": config.to_dict(),
                    "key": config.key(),
                    "certificate_valid": bool(getattr(policy, "certificate_valid", False)) and not heuristic,
                    "heuristic_experts": heuristic,
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
        return list(self.metadata.get("settings", {})) or list(self.curves["setting"].unique())

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
        ``metadata.json`` into directory ``path`` (created if needed); returns it."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        for name in _FRAMES:
            getattr(self, name).to_parquet(path / f"{name}.parquet", index=False)
        (path / "metadata.json").write_text(json.dumps(self.metadata, indent=2, default=str))
        return path

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Read a result written by :meth:`save`."""
        path = Path(path)
        missing = [f"{n}.parquet" for n in _FRAMES if not (path / f"{n}.parquet").exists()]
        if missing or not (path / "metadata.json").exists():
            raise FileNotFoundError(
                f"{path} is not a saved mlcb result (missing {missing or ['metadata.json']})"
            )
        frames = [pd.read_parquet(path / f"{name}.parquet") for name in _FRAMES]
        return cls(*frames, metadata=json.loads((path / "metadata.json").read_text()))


def _with_setting(frame: pd.DataFrame, setting: dict[str, Any]) -> pd.DataFrame:
    for position, (name, value) in enumerate(setting.items()):
        frame.insert(position, name, value)
    return frame


def load(path: str | Path) -> Result:
    """Read a result saved with :meth:`Result.save`."""
    return Result.load(path)
