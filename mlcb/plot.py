"""Figures from a :class:`~mlcb.results.Result` (seaborn; plots read the tidy frames and the
plain metadata only: nothing named in a result is ever imported or called).

``regret``
    mean regret against rounds with a 5-95% band over replications, the data-dependent certificate
    Delta(t) and, where the result recorded it, the numeric worst-case bound B_num(t)
    (:func:`mlcb.results.worst_case_curve`), log-log, with the fitted slope in the legend.
``panels``
    the paper's three panels: cumulative regret, deployment counts per expert, training counts
    per expert.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from mlcb import theory
from mlcb.results import Result

_METRICS = ("regret", "pseudo_regret", "top_m_regret")


def regret(result: Result, metric: str = "pseudo_regret", theory_curves: bool = True, ax: Any = None) -> Any:
    """Regret against rounds, one colour per setting; returns the matplotlib Axes.

    Parameters
    ----------
    metric : {"pseudo_regret", "regret", "top_m_regret"}
        The curve: the mean over replications, with the band from their 5% to 95% quantiles.
    theory_curves : bool
        Also draw, per setting, the mean certificate Delta(t) (dashed) and, where the result
        recorded it, the worst-case bound B_num(t) (dotted).
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    curves = result.curves[result.curves["round"] > 0]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 5))
    palette = dict(zip(result.settings, sns.color_palette(n_colors=len(result.settings))))
    sns.lineplot(
        data=curves,
        x="round",
        y=metric,
        hue="setting",
        hue_order=result.settings,
        palette=palette,
        errorbar=("pi", 90),
        ax=ax,
    )
    handles, labels = ax.get_legend_handles_labels()
    labels = [_with_slope(label, curves, metric) for label in labels]
    if theory_curves:
        for setting in result.settings:
            rows = curves[curves["setting"] == setting]
            mean = rows.groupby("round")["certificate"].mean()
            (line,) = ax.plot(mean.index, mean.values, linestyle="--", color=palette[setting], linewidth=1)
            handles.append(line)
            labels.append(f"{setting}: certificate Delta(t){_heuristic_note(result, setting)}")
            bound = _bound_curve(result, setting)
            if bound is not None:
                (line,) = ax.plot(*bound, linestyle=":", color=palette[setting], linewidth=1)
                handles.append(line)
                labels.append(f"{setting}: worst case B_num(t)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(metric.replace("_", " "))
    calibrations = ", ".join(sorted(result.curves["calibration"].unique()))
    ax.set_title(
        f"{metric.replace('_', ' ')}: mean, 5-95% band over replications; calibration {calibrations}"
        f"{_references(result)}",
        fontsize=10,
    )
    ax.legend(handles, labels, fontsize=7, loc="upper left")
    return ax


def _with_slope(label: str, curves: pd.DataFrame, metric: str) -> str:
    rows = curves[curves["setting"] == label]
    if rows.empty:
        return label
    mean = rows.groupby("round")[metric].mean()
    slope = theory.loglog_slope(mean.index.to_numpy(float), mean.to_numpy(float))
    return f"{label} (log-log slope {slope:.2f})" if np.isfinite(slope) else label


def _heuristic_note(result: Result, setting: str) -> str:
    """``" (heuristic)"`` when the setting's certificate is recorded as not valid."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    return " (heuristic)" if isinstance(meta, dict) and meta.get("certificate_valid") is False else ""


def _references(result: Result) -> str:
    """What regret is measured against, where a family recorded it (``"reference"``)."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    found = {m.get("reference") for m in (settings or {}).values() if isinstance(m, dict)} - {None}
    return f"; against {', '.join(sorted(str(r) for r in found))}" if found else ""


def _bound_curve(result: Result, setting: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The recorded ``(rounds, B_num)`` of ``setting``; ``None`` when absent or malformed."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    curve = meta.get("theory") if isinstance(meta, dict) else None
    if not isinstance(curve, dict):
        return None
    try:
        rounds = np.asarray(curve.get("rounds"), dtype=float)
        values = np.asarray(curve.get("worst_case"), dtype=float)
    except (TypeError, ValueError):
        return None
    if rounds.ndim != 1 or rounds.shape != values.shape or rounds.size == 0:
        return None
    return rounds, values


def panels(result: Result, metric: str = "pseudo_regret") -> Any:
    """The paper's three panels; returns the matplotlib Figure.

    (a) ``metric`` against rounds with a band over replications; (b) deployment counts per expert
    at the horizon (mean over replications); (c) training counts per expert at the horizon.
    """
    figure, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    curves = result.curves
    sns.lineplot(
        data=curves,
        x="round",
        y=metric,
        hue="setting",
        hue_order=result.settings,
        errorbar=("pi", 90),
        ax=axes[0],
    )
    axes[0].set_title(f"(a) {metric.replace('_', ' ')}{_references(result)}")
    axes[0].set_xlabel("round t")
    last = result.experts.groupby("setting")["round"].transform("max")
    final = result.experts[result.experts["round"] == last]
    for ax, column, title in (
        (axes[1], "deployed", "(b) deployments per expert"),
        (axes[2], "trained", "(c) training rounds per expert"),
    ):
        sns.barplot(
            data=final, x="expert", y=column, hue="setting", hue_order=result.settings, errorbar=None, ax=ax
        )
        ax.set_title(title)
        ax.set_yscale("log")
    for ax in axes[1:]:
        ax.get_legend().remove()
    figure.tight_layout()
    return figure
