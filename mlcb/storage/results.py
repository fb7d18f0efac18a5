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
configuration in memory when the setting is collected (:mod:`mlcb.engine.collect`): ``config`` (a
record: nothing in it is ever imported or called back), ``key``, ``family`` (the experts' family
name), ``heuristic_experts`` (experts whose rate is not valid on the environment run),
``certificate_valid`` (the policy's certificate holds and no expert is heuristic) and ``theory``
(the worst-case certificate ``B_num(t)``, ``{"rounds": [...], "worst_case": [...]}``, or ``None``
when some rate depends on more than the count or the setting is too large to tabulate). Reading,
summarising and plotting a result use the frames and this metadata only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mlcb.storage import result_files, store
from mlcb.validation import InputError

SETTING_COLUMNS = ["setting", "policy", "budget", "calibration"]


#: What regret is measured against unless a setting records otherwise (``"reference"``).
DEFAULT_REFERENCE = "L* = min_k L_k*, the least expected loss of the best expert"

#: The columns of :meth:`~mlcb.storage.results.Result.summary` as a reader sees them, in order.
SUMMARY_COLUMNS = {
    "setting": "setting",
    "rounds": "T",
    "replications": "R",
    "regret": "regret",
    "regret_std": "sd",
    "pseudo_regret": "pseudo-regret",
    "top_m_regret": "Top-M regret",
    "certificate": "certificate",
    "best_deployed_share": "best deployed",
    "certificate_violations": "PR > Delta",
}


def summary_table(summary: pd.DataFrame, columns: Iterable[str] = tuple(SUMMARY_COLUMNS)) -> pd.DataFrame:
    """The ``columns`` (names of :data:`SUMMARY_COLUMNS`) of a result's ``summary()`` under their
    headings."""
    return summary[list(columns)].rename(columns=SUMMARY_COLUMNS)


@dataclass(repr=False)
class Result:
    """Tidy results of one or more simulation settings; see the module docstring.

    In a notebook a result shows itself as a compact HTML summary (:meth:`_repr_html_`); its
    ``repr`` is one line.
    """

    curves: pd.DataFrame
    experts: pd.DataFrame
    replications: pd.DataFrame
    metadata: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def concat(results: list[Result]) -> Result:
        """One result holding the settings of all ``results`` (labels must be distinct)."""
        if isinstance(results, Result) or not isinstance(results, (list, tuple)) or not results:
            raise InputError("results must be a non-empty list of Result objects")
        for i, result in enumerate(results):
            if not isinstance(result, Result):
                raise InputError(f"results[{i}] must be a Result, got {type(result).__name__}")
        settings: dict[str, Any] = {}
        for result in results:
            for label, data in result.metadata.get("settings", {}).items():
                if label in settings:
                    raise InputError(
                        f"results: setting {label!r} appears twice; give settings distinct labels"
                    )
                settings[label] = data
        metadata = {**results[-1].metadata, "settings": settings}
        frames = [
            pd.concat([getattr(r, name) for r in results], ignore_index=True) for name in result_files.FRAMES
        ]
        curves, experts, replications = frames
        return Result(curves, experts, replications, metadata=metadata)

    # --- views ---------------------------------------------------------------------------
    @property
    def settings(self) -> list[str]:
        """Setting labels, in the order they were added."""
        settings = self.metadata.get("settings") if isinstance(self.metadata, dict) else None
        return list(settings if isinstance(settings, dict) else {}) or list(self.curves["setting"].unique())

    def to_frame(self, kind: str = "curves") -> pd.DataFrame:
        """One of the tidy frames: ``"curves"``, ``"experts"`` or ``"replications"``."""
        if kind not in result_files.FRAMES:
            raise InputError(f"kind must be one of {result_files.FRAMES}, got {kind!r}")
        return getattr(self, kind)

    def final(self) -> pd.DataFrame:
        """The ``curves`` rows at each setting's last checkpoint."""
        last = self.curves.groupby("setting")["round"].transform("max")
        return self.curves[self.curves["round"] == last]

    def summary(self) -> pd.DataFrame:
        """Per setting: final regret (mean and standard deviation over replications), final
        pseudo-regret, Top-M regret, certificate, the share of rounds the best expert was
        deployed, the fraction of replications whose pseudo-regret exceeded the certificate, and
        ``reference``: what the regret and the pseudo-regret are measured against (``L*`` per
        round: :data:`DEFAULT_REFERENCE`, or what the setting recorded, e.g. the best expert in
        hindsight for a pool of one's own); the Top-M regret is measured against the mean
        ``L_k*`` of the best ``M`` experts.

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
        settings = self.metadata.get("settings") if isinstance(self.metadata, dict) else None
        said = {
            label: meta.get("reference")
            for label, meta in (settings if isinstance(settings, dict) else {}).items()
            if isinstance(meta, dict) and isinstance(meta.get("reference"), str)
        }
        table["reference"] = [said.get(label, DEFAULT_REFERENCE) for label in table["setting"]]
        return table

    # --- display -------------------------------------------------------------------------
    def _describe(self) -> str:
        """One line: the settings, replications, horizon and calibration."""
        settings = self.settings
        shown = ", ".join(settings[:4]) + (f", ... ({len(settings)} in all)" if len(settings) > 4 else "")
        replications = self.replications.groupby("setting")["replication"].nunique()
        rounds = self.curves.groupby("setting")["round"].max()

        def span(values: pd.Series, form: str) -> str:
            low, high = (int(values.min()), int(values.max())) if len(values) else (0, 0)
            return form.format(low) if low == high else f"{form.format(low)} to {form.format(high)}"

        calibrations = ", ".join(sorted(str(c) for c in self.curves["calibration"].unique()))
        return (
            f"{len(settings)} setting{'s' if len(settings) != 1 else ''} ({shown}); "
            f"{span(replications, '{}')} replications, T = {span(rounds, '{:,}')}; calibration {calibrations}"
        )

    def __repr__(self) -> str:
        return f"Result({self._describe()})"

    def _repr_html_(self) -> str:
        """A compact HTML summary for notebooks: one line describing the result and the summary
        table (final regret with its standard deviation, pseudo-regret, the share of rounds the
        best expert was deployed, and how often the certificate was exceeded)."""
        import html

        columns = ("setting", "rounds", "replications", "regret", "regret_std", "pseudo_regret")
        table = summary_table(self.summary(), (*columns, "best_deployed_share", "certificate_violations"))
        body = table.to_html(
            index=False, na_rep="", float_format=lambda v: f"{v:,.3f}" if abs(v) < 10 else f"{v:,.0f}"
        )
        return f"<div><p><b>mlcb Result</b>: {html.escape(self._describe())}</p>{body}</div>"

    # --- storage -------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``curves.parquet``, ``experts.parquet``, ``replications.parquet`` and
        ``metadata.json`` into directory ``path``; returns it.

        The save is atomic (:mod:`mlcb.storage.store`): the files are written into a temporary sibling
        that then replaces ``path``, so a reader, or a save that fails halfway, sees the old result
        or the new one, never a mix. ``path`` may be missing, or a directory holding a result; a
        directory with other files is refused (``ValueError``), as is a save while another writer
        holds the directory's lock."""
        return store.save(path, self.write_files)

    def write_files(self, directory: Path) -> None:
        """Write the three frames and the metadata into the existing ``directory`` (no atomicity
        of its own: :meth:`save` and :class:`mlcb.storage.store.Store` write into a temporary directory)."""
        result_files.write(Path(directory), [self.curves, self.experts, self.replications], self.metadata)

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Read a result written by :meth:`save`, validating it (:func:`mlcb.storage.result_files.read`):
        the four files present and regular files, each frame's columns and dtypes, the metadata a
        JSON object whose ``settings`` maps every setting of the frames to an object. A directory
        holding none of the files is a ``FileNotFoundError``; any other problem a ``ValueError``
        with one line naming the file and what is wrong. Nothing named in the files is imported or
        called."""
        (curves, experts, replications), metadata = result_files.read(path)
        return cls(curves, experts, replications, metadata=metadata)


def load(path: str | Path) -> Result:
    """Read a result saved with :meth:`Result.save`."""
    return Result.load(path)
