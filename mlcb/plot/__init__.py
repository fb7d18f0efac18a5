"""Figures from a :class:`~mlcb.storage.results.Result`, drawn with seaborn over its tidy frames
(plots read the frames and the plain metadata only: nothing named in a result is ever imported or
called). seaborn is imported when a figure is drawn, not with the package.

:func:`regret`
    mean regret against rounds on log-log axes, one colour per setting, with the data-dependent
    certificate Delta(t) and, where the result recorded it, the numeric worst-case bound
    B_num(t); the slope fitted over the last decade of rounds in the legend.
:func:`panels`
    the paper's three panels: regret against rounds, deployments and training rounds per expert.
:func:`theory`
    one panel per setting: the regret, the certificate, the worst case and the main theorem's
    curve on log-log axes, with the slope fitted over the last decade of rounds and the theorem's
    exponent ``max(1/2, alpha)``.
:func:`budget`
    final regret against the budget M with the theorem's ``sqrt(K/M) + (K/M)^(1-alpha)`` shape
    overlaid, and against K and T when the result holds settings over several of them.

Each returns a seaborn :class:`~seaborn.FacetGrid` (``.figure``, ``.axes``, ``.savefig``,
``.set_axis_labels``, ``.set_titles``, ``.set`` restyle it), or, with ``ax`` (one matplotlib Axes
for :func:`regret`, one per panel for the others), draws into those axes and returns them.

Bands say what they are: with :data:`FEW_RUNS` replications or more, the band is two standard
errors of the mean either side of it; with fewer, each run is drawn as a thin line of its own.
The figures are sized for a documentation column (7 inches wide) with the legend below them.

A figure states nothing it cannot show. A curve of one round (a horizon of 1) is drawn as a point;
a mean of zero throughout (every expert as good as the best) puts the values on a symmetric log
axis, as a negative one does; no slope is stated where the rounds do not reach back a decade,
fewer than :data:`SLOPE_POINTS` points lie in it or the curve reaches zero in it. A ``metric``
that some setting did not record is refused, and the default is pseudo-regret only where every
setting recorded it; the budget figure gives pools told apart by their labels only a line each
rather than average them into one point. Beyond ten settings of several policies at several
budgets (a comparison), each policy has a hue and each budget a shade of it.

:data:`KINDS` names them. Figures are registered like policies and experts
(:mod:`mlcb.storage.outputs`): :func:`register` adds one of one's own (a plugin's, say), which
:func:`draw`, ``mlcb plot --kind``, ``mlcb report`` and the sweeps' figures then know; :func:`names`
lists them all.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from mlcb import theory as _theory
from mlcb import validation
from mlcb.plot import _look as look
from mlcb.plot._look import FEW_RUNS, SPREAD_SETTINGS, WIDTH, colours
from mlcb.storage import outputs
from mlcb.storage.results import Result
from mlcb.validation import InputError, InputTypeError

_METRICS = ("regret", "pseudo_regret", "top_m_regret")
#: The built-in figure kinds (every registered one: :func:`names`).
KINDS = ("regret", "panels", "theory", "budget")
#: Settings drawn by :func:`theory` at most (one panel each) unless ``settings`` names them.
THEORY_PANELS = 6
#: What the columns and curves are called on the axes and in the legends.
LABELS = {
    "regret": "regret",
    "pseudo_regret": "pseudo-regret",
    "top_m_regret": "Top-M regret",
    "certificate": "certificate Δ(t)",
    "worst_case": "worst case B_num(t)",
    "theorem": "theorem's curve, unit constants",
    "fit": "fit over the last decade",
    "round": "round t",
    "expert": "expert",
    "deployed": "deployments",
    "trained": "training rounds",
}
#: The colours of the theory figure's curves (seaborn's palette, by position).
_THEORY_COLOURS = {"metric": 0, "certificate": 1, "worst_case": 2, "theorem": 3}


def _result(result: Any) -> Result:
    """``result`` itself, or the result saved in the folder ``result`` names (by ``mlcb run``,
    :meth:`Result.save` or a sweep, as ``mlcb plot`` reads it); anything else is an
    :class:`~mlcb.validation.InputTypeError` naming it."""
    if isinstance(result, Result):
        return result
    if isinstance(result, (str, os.PathLike)):
        from mlcb.sweeps import load_any

        return load_any(os.fspath(result))
    raise InputTypeError(
        f"result must be a Result (mlcb.simulate, mlcb.load) or the folder of a saved one, "
        f"got {type(result).__name__}"
    )


def _unrecorded(result: Result, metric: str) -> list[str]:
    """The settings of ``result`` with no finite value of ``metric``."""
    finite = np.isfinite(result.curves[metric].to_numpy(float))  # (nan is not finite)
    recorded = set(result.curves.loc[finite, "setting"])
    return [setting for setting in result.settings if setting not in recorded]


def default_metric(result: Result) -> str:
    """The figures' default curve: ``"pseudo_regret"`` where every setting of the result has it,
    else the realised ``"regret"`` (streams of real data, where no expected loss is known, record
    no pseudo-regret; a figure of pseudo-regret would leave their settings out)."""
    return "regret" if not len(result.curves) or _unrecorded(result, "pseudo_regret") else "pseudo_regret"


def _metric(result: Result, metric: str | None) -> str:
    """``metric``, checked, or the result's :func:`default_metric`. A metric that some setting
    did not record (no finite value) is an :class:`~mlcb.validation.InputError` naming them: its
    figure would leave them out."""
    if metric is None:
        return default_metric(result)
    if metric not in _METRICS:
        raise InputError(f"metric must be one of {_METRICS}, got {metric!r}")
    missing = _unrecorded(result, metric)
    if missing:
        raise InputError(
            f"metric {metric!r}: settings {validation.shown_list(missing, most=4)} record no value of "
            "it (streams of real data, where no expected loss is known, record no pseudo-regret); "
            "use metric='regret'"
        )
    return metric


#: The fewest points a slope is fitted on (:func:`last_decade_slope`).
SLOPE_POINTS = 3


def last_decade_slope(rounds: Any, values: Any) -> float:
    """Least-squares log-log slope of ``values`` against ``rounds`` over the last decade of rounds
    (``rounds >= max(rounds) / 10``); ``nan`` where the rounds do not reach back a whole decade
    (a horizon of 2 has no last decade) or where fewer than :data:`SLOPE_POINTS` usable points
    (finite, ``> 0``) lie in it.

    Examples
    --------
    >>> rounds = np.geomspace(1, 10_000, 41)
    >>> round(last_decade_slope(rounds, np.sqrt(rounds) + 5 * rounds ** 0.1), 2)
    0.43
    """
    x = np.asarray(rounds, dtype=float)
    y = np.asarray(values, dtype=float)
    if x.size == 0 or not (x > 0).any() or x.max() < 10.0 * x[x > 0].min():
        return float("nan")
    keep = (x >= x.max() / 10.0) & np.isfinite(y) & (y > 0)
    if np.unique(x[keep]).size < SLOPE_POINTS:
        return float("nan")
    return _theory.loglog_slope(x[keep], y[keep], tail=1.0)


def _shown_slope(mean: pd.Series) -> float:
    """The slope a figure states for the mean curve ``mean`` (indexed by round):
    :func:`last_decade_slope`, or ``nan`` where the curve is zero or below somewhere in the last
    decade (a realised regret around zero follows no power law; a fit to its positive points only
    would say it did)."""
    rounds, values = mean.index.to_numpy(float), mean.to_numpy(float)
    window = values[(rounds >= rounds.max() / 10.0) & np.isfinite(values)] if rounds.size else values
    if (window <= 0).any():
        return float("nan")
    return last_decade_slope(rounds, values)


# --- what the figures read of a result -------------------------------------------------------
def _setting_meta(result: Result, setting: str) -> dict:
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    meta = settings.get(setting) if isinstance(settings, dict) else None
    return meta if isinstance(meta, dict) else {}


def _recorded_exponent(expert: dict) -> float | None:
    """The rate exponent of an expert as an older result's configuration records it: its
    ``alpha`` (in (0, 1)), which for epsilon-greedy with the valid rate is the exploration
    schedule's, and the rate's exponent ``max(alpha, 1 - alpha/2)``
    (:attr:`agents.bandits.EpsilonGreedy.rate_exponent`)."""
    alpha = expert.get("alpha")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        return None
    greedy = expert.get("class") == "agents.bandits:EpsilonGreedy" and expert.get("rate") != "authors"
    return 1.0 - alpha / 2.0 if greedy and alpha < 2.0 / 3.0 else float(alpha)


def setting_values(result: Result, setting: str) -> dict[str, Any]:
    """What the figures need of a setting, from the result's frames and plain metadata only:
    ``policy``, ``M``, ``K``, ``T``, ``delta``, ``calibration`` and the rate exponent ``alpha``
    (``None`` when the result does not record it)."""
    meta = _setting_meta(result, setting)
    config: dict = meta["config"] if isinstance(meta.get("config"), dict) else {}
    rows = result.curves[result.curves["setting"] == setting]
    experts = config.get("experts")
    n_experts = meta.get("n_experts", len(experts) if isinstance(experts, list) else None)
    if n_experts is None:
        n_experts = int(result.experts.loc[result.experts["setting"] == setting, "expert"].max()) + 1
    alpha = meta.get("rate_exponent")
    if alpha is None and isinstance(experts, list):  # a result saved before runs recorded it
        declared = [a for e in experts if isinstance(e, dict) and (a := _recorded_exponent(e)) is not None]
        alpha = max(declared) if declared else None
    delta = config.get("delta", 0.1)
    return {
        "policy": str(rows["policy"].iloc[0]) if len(rows) else str(config.get("policy", "?")),
        "M": int(rows["budget"].iloc[0]) if len(rows) else int(config.get("budget", 1)),
        "K": int(n_experts),
        "T": int(rows["round"].max()) if len(rows) else int(config.get("horizon", 1)),
        "delta": float(delta) if isinstance(delta, (int, float)) and 0 < delta < 1 else 0.1,
        "calibration": str(rows["calibration"].iloc[0]) if len(rows) else "?",
        "alpha": float(alpha) if isinstance(alpha, (int, float)) and 0 <= alpha < 1 else None,
    }


def _heuristic(result: Result, setting: str) -> bool:
    """Whether the setting's certificate is recorded as not valid (a heuristic)."""
    return _setting_meta(result, setting).get("certificate_valid") is False


def _references(result: Result) -> str:
    """What regret is measured against, where a family recorded it (``"reference"``)."""
    settings = result.metadata.get("settings") if isinstance(result.metadata, dict) else None
    found = {m.get("reference") for m in (settings or {}).values() if isinstance(m, dict)} - {None}
    return ", ".join(sorted(str(r) for r in found))


def _bound_curve(result: Result, setting: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The recorded ``(rounds, B_num)`` of ``setting``; ``None`` when absent or malformed."""
    curve = _setting_meta(result, setting).get("theory")
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


def _palette(result: Result, settings: list[str]) -> dict[str, Any]:
    """One colour per setting (:func:`colours`). Beyond ten settings, where they are several
    policies at several budgets (a comparison), one hue per policy, lighter for a smaller budget:
    twenty-four hues side by side cannot be told apart, eight policies in three shades can."""
    plain = dict(zip(settings, colours(len(settings))))
    if len(settings) <= 10:
        return plain
    values = {setting: setting_values(result, setting) for setting in settings}
    policies = list(dict.fromkeys(v["policy"] for v in values.values()))
    pairs = {(v["policy"], v["M"]) for v in values.values()}
    if not 2 <= len(policies) <= 10 or len(pairs) < len(settings):  # not one setting per policy and M
        return plain
    sns = look.seaborn()
    palette = {}
    for policy, hue in zip(policies, colours(len(policies))):
        members = [setting for setting in settings if values[setting]["policy"] == policy]
        budgets = sorted({values[setting]["M"] for setting in members})
        shades = sns.light_palette(hue, n_colors=len(budgets) + 2)[2:]  # the palest two too pale
        palette.update({s: shades[budgets.index(values[s]["M"])] for s in members})
    return palette


# --- the regret figure ---------------------------------------------------------------------------
def regret(
    result: Result | str | os.PathLike[str],
    metric: str | None = None,
    theory: bool = True,
    ax: Any = None,
) -> Any:
    """Regret against rounds on log-log axes, one colour per setting.

    Parameters
    ----------
    result : Result or path
        A result, or the folder of a saved one or of a sweep.
    metric : {"pseudo_regret", "regret", "top_m_regret"}, optional
        The curve: the mean over replications, with a band of two standard errors (or, with fewer
        than :data:`FEW_RUNS` replications, each run drawn thin). Default :func:`default_metric`:
        pseudo-regret where recorded, else regret.
    theory : bool
        Also draw, per setting, the mean certificate Delta(t) (dashed) and, where the result
        recorded it, the worst-case bound B_num(t) (dotted).
    ax : matplotlib Axes, optional
        Draw into these axes (a panel of a figure of one's own) and return them.

    Returns
    -------
    seaborn.FacetGrid
        The figure (``.figure``, ``.ax``), or ``ax`` when given.

    Examples
    --------
    >>> import mlcb
    >>> result = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=3)
    >>> grid = regret(result)
    >>> grid.ax.get_xlabel(), grid.ax.get_ylabel()
    ('round t', 'pseudo-regret')
    """
    result = _result(result)
    metric = _metric(result, metric)
    validation.flag("theory", theory)
    sns = look.seaborn()
    curves = result.curves[result.curves["round"] > 0]
    settings = result.settings
    runs = look.runs_shown(curves, len(settings))
    with look.style():
        grid = None if ax is not None else look.grid(sns, ["regret"], 1, 4.2)
        axis = grid.ax if grid is not None else look.given(ax, 1)[0]
        palette = _palette(result, settings)
        handles, labels = [], []
        drawn, spread = [], []
        for setting in settings:
            rows = curves.loc[curves["setting"] == setting, ["replication", "round", metric, "certificate"]]
            rows = rows.dropna(subset=[metric])
            if rows.empty:
                continue
            spread.append(
                look.mean_and_spread(sns, axis, rows, metric, runs, color=palette[setting], linewidth=1.6)
            )
            mean = rows.groupby("round")[metric].mean()
            drawn.append(mean.to_numpy(float))
            slope = _shown_slope(mean)
            note = f"slope {slope:.2f}" if np.isfinite(slope) else ""
            if theory and _heuristic(result, setting):
                note += ("; " if note else "") + "heuristic certificate"
            handles.append(look.proxy(color=palette[setting], linewidth=1.6))
            labels.append(look.wrap(f"{setting}{f' ({note})' if note else ''}", WIDTH * 0.9, 8))
        styles = [(look.proxy(color=".25", linewidth=1.6), f"mean of the runs; {look.band_text(runs)}")]
        if theory:
            for setting in settings:
                rows = curves[curves["setting"] == setting]
                certificate = rows.groupby("round")["certificate"].mean()
                if np.isfinite(certificate.to_numpy(float)).any():
                    values = certificate.to_numpy(float)
                    look.curve(axis, certificate.index, values, "--", color=palette[setting], lw=1)
                    drawn.append(values)
                bound = _bound_curve(result, setting)
                if bound is not None:
                    look.curve(axis, *bound, ":", color=palette[setting], linewidth=1.2)
                    drawn.append(bound[1])
            if axis.lines and any(line.get_linestyle() == "--" for line in axis.lines):
                styles.append((look.proxy(color=".25", linestyle="--", linewidth=1), LABELS["certificate"]))
            if any(_bound_curve(result, s) is not None for s in settings):
                styles.append((look.proxy(color=".25", linestyle=":", linewidth=1.2), LABELS["worst_case"]))
        look.log_scale(axis, "x")
        look.value_scale(
            axis,
            np.concatenate(drawn) if drawn else np.zeros(0),
            np.concatenate(spread) if spread else np.zeros(0),
            whole=look.vanishes(drawn[: len(spread)]),
        )
        axis.set_xlabel(LABELS["round"])
        axis.set_ylabel(LABELS[metric])
        if grid is not None:
            reference = _references(result)
            calibrations = ", ".join(sorted(str(c) for c in result.curves["calibration"].unique()))
            title = f"{LABELS[metric].capitalize()} against rounds (calibration {calibrations})"
            axis.set_title(look.wrap(title, WIDTH, 10), fontsize=10)
            if reference:
                styles.append(
                    (look.proxy(linestyle=""), look.wrap(f"regret against {reference}", WIDTH * 0.9, 8))
                )
        look.legend(
            axis.figure,
            handles + [h for h, _ in styles],
            labels + [t for _, t in styles],
            grid is not None,
            axis,
        )
    return grid if grid is not None else axis


# --- the paper's three panels ---------------------------------------------------------------------
def _final_counts(result: Result) -> pd.DataFrame:
    """Deployments and training rounds per expert at each setting's horizon (mean over runs)."""
    experts = result.experts
    last = experts.groupby("setting")["round"].transform("max")
    final = experts[experts["round"] == last]
    return final.groupby(["setting", "expert"], sort=False)[["deployed", "trained"]].mean().reset_index()


def panels(result: Result | str | os.PathLike[str], metric: str | None = None, ax: Any = None) -> Any:
    """The paper's three panels, one above the other: (a) ``metric`` (default
    :func:`default_metric`) against rounds, its mean over replications with its band (as in
    :func:`regret`); (b) deployments per expert at the horizon and (c) training rounds per expert
    (means over replications, log scale; bars, or lines for pools of over 40 experts).
    ``ax``: three matplotlib Axes to draw into (returned). Returns the seaborn FacetGrid."""
    result = _result(result)
    metric = _metric(result, metric)
    sns = look.seaborn()
    settings = result.settings
    curves = result.curves
    runs = look.runs_shown(curves, len(settings))
    titles = [f"(a) {LABELS[metric]}", "(b) deployments per expert", "(c) training rounds per expert"]
    with look.style():
        grid = None if ax is not None else look.grid(sns, titles, 1, 2.3)
        axes = list(grid.axes.ravel()) if grid is not None else look.given(ax, 3)
        palette = _palette(result, settings)
        for setting in settings:
            rows = curves.loc[curves["setting"] == setting, ["replication", "round", metric]].dropna()
            look.mean_and_spread(sns, axes[0], rows, metric, runs, color=palette[setting], linewidth=1.4)
        axes[0].set_xlabel(LABELS["round"])
        axes[0].set_ylabel(LABELS[metric])
        axes[0].xaxis.set_major_formatter("{x:,.0f}")  # 250,000 rather than 250000
        axes[0].xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # rounds: no 1.5
        counts = _final_counts(result)
        counts = counts[counts["setting"].isin(settings)]
        many = counts["expert"].nunique() > 40
        for axis, column in zip(axes[1:], ("deployed", "trained")):
            if many:
                sns.lineplot(
                    data=counts, x="expert", y=column, hue="setting", hue_order=settings, palette=palette,
                    ax=axis, legend=False, linewidth=1,
                )  # fmt: skip
            else:
                sns.barplot(
                    data=counts, x="expert", y=column, hue="setting", hue_order=settings, palette=palette,
                    errorbar=None, ax=axis, legend=False, saturation=0.8, width=0.85,
                )  # fmt: skip
            if many and (counts[column] <= 0).any():  # a line through zeros: none dropped from a log axis
                axis.set_yscale("symlog", linthresh=1.0)
                axis.set_ylim(bottom=0.0)  # counts: nothing below zero
            else:  # a bar of zero is no bar, on either axis
                look.log_scale(axis, "y")
            axis.set_xlabel(LABELS["expert"])
            axis.set_ylabel(f"{LABELS[column]}\n(mean of the runs)")
        for axis, title in zip(axes, titles):
            axis.set_title(title, fontsize=10, loc="left")
        handles = [look.proxy(color=palette[s], linewidth=2) for s in settings]
        labels = [look.wrap(s, WIDTH * 0.9, 8) for s in settings]
        handles.append(look.band_handle(runs, ".4"))
        labels.append(f"(a) mean of the runs; {look.band_text(runs)}")
        reference = _references(result)
        if reference:
            handles.append(look.proxy(linestyle=""))
            labels.append(look.wrap(f"regret against {reference}", WIDTH * 0.9, 8))
        look.legend(axes[0].figure, handles, labels, grid is not None, axes[0])
    return grid if grid is not None else axes


# --- the theory figure ---------------------------------------------------------------------------
def theory(
    result: Result | str | os.PathLike[str],
    metric: str | None = None,
    settings: list[str] | None = None,
    ax: Any = None,
) -> Any:
    """The theory figure: one log-log panel per setting (at most :data:`THEORY_PANELS` unless
    ``settings`` names them), two a row, with the mean ``metric`` and its band, the mean
    certificate Delta(t), the worst case B_num(t) where recorded, the main theorem's curve with
    unit constants (:func:`mlcb.theory.theorem_rate`) and the straight line fitted over the last
    decade of rounds. Each panel states the fitted slope, the theorem curve's slope there, and the
    theorem's exponent ``max(1/2, alpha)``, the rate a slope approaches only for very long
    horizons. ``metric`` defaults to :func:`default_metric`; ``ax``, one matplotlib Axes per
    setting drawn, to draw into (returned). Returns the seaborn FacetGrid."""
    result = _result(result)
    metric = _metric(result, metric)
    sns = look.seaborn()
    if isinstance(settings, str) or not (settings is None or isinstance(settings, (list, tuple))):
        raise InputTypeError(
            "settings must be a list of the result's setting names (['mlcb M=1']), got "
            + validation.shown(settings)
        )
    chosen = list(settings) if settings is not None else result.settings[:THEORY_PANELS]
    unknown = [s for s in chosen if s not in result.settings]
    if unknown or not chosen:
        raise InputError(
            f"settings must name settings of the result {result.settings[:4]}, got {unknown or chosen}"
        )
    columns = 1 if len(chosen) == 1 else 2
    runs = look.runs_shown(result.curves)
    with look.style():
        grid = None if ax is not None else look.grid(sns, chosen, columns, 3.0 if columns == 2 else 4.0)
        axes = list(grid.axes.ravel()) if grid is not None else look.given(ax, len(chosen))
        palette = colours(4)
        colour = {name: palette[i] for name, i in _THEORY_COLOURS.items()}
        kinds: dict[str, Any] = {}
        for axis, setting in zip(axes, chosen):
            values = setting_values(result, setting)
            rows = result.curves.loc[
                (result.curves["setting"] == setting) & (result.curves["round"] > 0),
                ["replication", "round", metric, "certificate"],
            ].dropna(subset=[metric])
            look.mean_and_spread(sns, axis, rows, metric, runs, color=colour["metric"], linewidth=1.5)
            kinds.setdefault(
                f"{LABELS[metric]}: mean of the runs; {look.band_text(runs)}",
                look.proxy(color=colour["metric"]),
            )
            mean = rows.groupby("round")[metric].mean()
            rounds = mean.index.to_numpy(float)
            drawn = [mean.to_numpy(float)]
            certificate = rows.groupby("round")["certificate"].mean()
            if np.isfinite(certificate.to_numpy(float)).any():
                certified = certificate.to_numpy(float)
                look.curve(axis, certificate.index, certified, "--", color=colour["certificate"])
                kinds.setdefault(
                    LABELS["certificate"], look.proxy(color=colour["certificate"], linestyle="--")
                )
                drawn.append(certificate.to_numpy(float))
            bound = _bound_curve(result, setting)
            if bound is not None:
                look.curve(axis, *bound, ":", color=colour["worst_case"], linewidth=1.4)
                kinds.setdefault(LABELS["worst_case"], look.proxy(color=colour["worst_case"], linestyle=":"))
                drawn.append(bound[1])
            lines = []
            slope = _shown_slope(mean)
            if np.isfinite(slope):
                lines.append(f"fitted slope {slope:.2f}")
            alpha = values["alpha"]
            if alpha is not None and rounds.size:
                curve = _theory.theorem_rate(rounds, values["K"], values["M"], alpha, values["delta"])
                look.curve(axis, rounds, curve, "-.", color=colour["theorem"], linewidth=1.2)
                kinds.setdefault(LABELS["theorem"], look.proxy(color=colour["theorem"], linestyle="-."))
                theorem = last_decade_slope(rounds, curve)
                if np.isfinite(theorem):  # no "nan" where the rounds hold no decade
                    lines.append(f"theorem's curve {theorem:.2f}")
                drawn.append(np.asarray(curve, float))
            if np.isfinite(slope):
                keep = (rounds >= rounds.max() / 10) & (mean.to_numpy(float) > 0)
                xs, ys = rounds[keep], mean.to_numpy(float)[keep]
                if xs.size:
                    level = np.exp(np.mean(np.log(ys) - slope * np.log(xs)))
                    axis.plot(xs, level * xs**slope, color="black", linewidth=2.2, alpha=0.55)
                    kinds.setdefault(LABELS["fit"], look.proxy(color="black", linewidth=2.2, alpha=0.55))
            exponent = "unknown" if alpha is None else f"{max(0.5, alpha):.2f} (α = {alpha:.2f})"
            lines.append(f"exponent max(1/2, α) = {exponent}")
            look.log_scale(axis, "x")
            # Log-log: a run below zero runs off; a mean of zero throughout, a symmetric log.
            look.value_scale(axis, np.concatenate(drawn), whole=look.vanishes(drawn[:1]))
            look.corner_text(
                axis, "\n".join(lines), fontsize=7,
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": ".8", "alpha": 0.85},
            )  # fmt: skip
            axis.set_xlabel(LABELS["round"])
            axis.set_ylabel(LABELS[metric])
            title = f"{setting} (K = {values['K']}, {values['calibration']})"
            axis.set_title(look.wrap(title, WIDTH / columns - 0.8, 9), fontsize=9)  # the axes' width
        if grid is not None and settings is None and len(result.settings) > len(chosen):
            grid.figure.suptitle(f"the first {len(chosen)} of {len(result.settings)} settings", fontsize=9)
        look.legend(axes[0].figure, list(kinds.values()), list(kinds), grid is not None, axes[0])
    return grid if grid is not None else axes


# --- the budget figure -----------------------------------------------------------------------------
def _final_table(result: Result, metric: str) -> pd.DataFrame:
    final = result.final()[["setting", "replication", metric]].copy()
    values = {s: setting_values(result, s) for s in result.settings}
    for column in ("policy", "M", "K", "T", "calibration", "alpha", "delta"):
        final[column] = final["setting"].map(lambda s, c=column: values[s][c])
    return final


def _line_label(names: tuple, row: pd.Series) -> str:
    """The legend label of a line of a budget figure: ``policy M=2 K=10`` and the like."""
    return " ".join(f"{c}={v}" if c in "MKT" else v for c, v in zip(names, row))


def _lines(table: pd.DataFrame, others: list[str], dimension: str) -> pd.Series:
    """The line of a budget figure's panel each row of ``table`` belongs to: named by the setting
    values ``others`` that vary (the policy alone where none does); where two settings would then
    share a point (pools of one's own at one budget, told apart by their labels only), by each
    setting's label with its ``dimension=value`` left out, so that no setting is averaged into
    another's point, and prefixed by its values of ``others`` where a line named so would join
    settings that differ in them (two budgets drawn as one line against T)."""
    if others:
        line = table[others].astype(str).agg(functools.partial(_line_label, tuple(others)), axis=1)
    else:
        line = pd.Series(str(table["policy"].iloc[0]), index=table.index)
    if table.assign(line=line).groupby(["line", dimension])["setting"].nunique().max() <= 1:
        return line

    def without(row: pd.Series) -> str:
        token = rf"(?<!\S){dimension}\s*=\s*{int(row[dimension])}(?!\S)"
        return " ".join(re.sub(token, " ", str(row["setting"])).split()) or str(row["setting"])

    named = table.apply(without, axis=1)
    if not others:
        return named
    mixed = table.assign(named=named).groupby("named")[others].nunique().max(axis=1) > 1
    return named.where(~named.isin(mixed[mixed].index), line + " " + named)


def _shape(dimension: str, x: np.ndarray, row: pd.Series) -> np.ndarray | None:
    """The theorem's dependence on ``dimension`` at ``x``, the other quantities of ``row`` fixed;
    ``None`` without a rate exponent."""
    alpha = row["alpha"]
    if alpha is None or not np.isfinite(alpha):
        return None
    if dimension == "M":
        ratio = row["K"] / x
        return np.sqrt(ratio) + ratio ** (1.0 - alpha)
    if dimension == "K":
        return np.array(
            [
                _theory.theorem_rate(row["T"], int(k), min(int(row["M"]), int(k)), alpha, row["delta"])
                for k in x
            ]
        )
    return np.asarray(_theory.theorem_rate(x, row["K"], row["M"], alpha, row["delta"]))


_SHAPE_TEXT = {
    "M": "theorem's shape √(K/M) + (K/M)^(1−α), scaled to each line",
    "K": "theorem's curve in K, scaled to each line",
    "T": "theorem's curve in T, scaled to each line",
}
_DIMENSION_TEXT = {"M": "budget M (experts trained per round)", "K": "experts K", "T": "horizon T"}


def budget(result: Result | str | os.PathLike[str], metric: str | None = None, ax: Any = None) -> Any:
    """Final ``metric`` (mean, error bars of two standard errors over replications) against the
    budget M, one line per policy and other setting values, with the theorem's shape
    ``sqrt(K/M) + (K/M)^(1-alpha)`` overlaid (dotted, scaled to each line by a least-squares fit
    in log space: the theorem fixes the shape, not the constant); and, when the result holds
    several values of K or T, the same against K and against T with the theorem's curve
    (:func:`mlcb.theory.theorem_rate`) in that variable. ``metric`` defaults to
    :func:`default_metric`; ``ax``, one matplotlib Axes per panel (M, then K and T where the
    result varies them), to draw into (returned). Returns the seaborn FacetGrid."""
    result = _result(result)
    metric = _metric(result, metric)
    sns = look.seaborn()
    final = _final_table(result, metric)
    dimensions = ["M"] + [d for d in ("K", "T") if final[d].nunique() > 1]
    with look.style():
        grid = None if ax is not None else look.grid(sns, dimensions, 1, 2.9)
        axes = list(grid.axes.ravel()) if grid is not None else look.given(ax, len(dimensions))
        for axis, dimension in zip(axes, dimensions):
            entries: dict[str, Any] = {}
            others = [
                c
                for c in ("policy", "calibration", "M", "K", "T")
                if c != dimension and final[c].nunique() > 1
            ]
            table = final.copy()
            table["line"] = _lines(table, others, dimension)
            lines = list(dict.fromkeys(table["line"]))
            palette = dict(zip(lines, colours(len(lines))))
            sns.lineplot(
                data=table, x=dimension, y=metric, hue="line", hue_order=lines, palette=palette,
                errorbar=("se", 2), err_style="bars", marker="o", markeredgecolor="white", ax=axis,
                legend=False, err_kws={"capsize": 2},
            )  # fmt: skip
            drew_shape = False
            for line in lines:
                rows = table[table["line"] == line]
                means = rows.groupby(dimension)[metric].mean()
                x, y = means.index.to_numpy(float), means.to_numpy(float)
                shape = _shape(dimension, x, rows.iloc[0])
                keep = (y > 0) & np.isfinite(y)
                if shape is None or not keep.any() or len(x) < 2:  # a shape needs two points
                    continue
                scale = np.exp(np.mean(np.log(y[keep]) - np.log(shape[keep])))
                xs = np.linspace(x.min(), x.max(), 60) if len(x) > 1 else x
                if dimension == "K":
                    xs = np.unique(np.round(xs))
                axis.plot(xs, scale * _shape(dimension, xs, rows.iloc[0]), ":", color=palette[line], lw=1.4)
                drew_shape = True
            for line in lines:
                entries.setdefault(look.wrap(line, 2.2, 8), look.proxy(color=palette[line], marker="o"))
            if drew_shape:
                entries.setdefault(
                    look.wrap(_SHAPE_TEXT[dimension], 2.2, 8), look.proxy(color=".3", linestyle=":")
                )
            if table.groupby(["line", dimension])["replication"].nunique().max() > 1:  # else none drawn
                entries.setdefault(
                    look.wrap("error bars: ± 2 standard errors of the mean", 2.2, 8), look.proxy(linestyle="")
                )
            values = sorted(table[dimension].unique())
            if dimension == "T":
                look.log_scale(axis, "x")
                look.value_scale(axis, table[metric])
                if len(values) <= 6:  # the horizons run, as numbers, rather than powers of ten
                    axis.set_xticks(values, [f"{int(v):,}" for v in values])
                    axis.xaxis.set_minor_locator(look.NoTicks())
            else:
                axis.set_xticks(values)
            axis.set_xlabel(_DIMENSION_TEXT[dimension])
            axis.set_ylabel(f"final {LABELS[metric]}")
            axis.set_title(f"final {LABELS[metric]} against {dimension}", fontsize=9, loc="left")
            if grid is not None:  # each panel's lines differ: its own legend, on its right
                axis.legend(
                    list(entries.values()), list(entries), loc="center left", bbox_to_anchor=(1.02, 0.5),
                    fontsize=8, frameon=False,
                )  # fmt: skip
            else:
                axis.legend(list(entries.values()), list(entries), fontsize="x-small", loc="best")
        if grid is not None:  # panels as tall as the tallest legend beside them (many long lines)
            figure = grid.figure
            renderer = figure.canvas.get_renderer()
            tallest = max(a.get_legend().get_window_extent(renderer).height for a in axes) / figure.dpi
            figure.set_figheight(max(figure.get_figheight(), len(axes) * (tallest + 0.7)))
    return grid if grid is not None else axes


# --- the registry of figures -------------------------------------------------------------------------
def register(name: str, entry_point: str, summary: str = "", *, override: bool = False) -> None:
    """Register the figure ``name``: ``entry_point`` (``"module:function"``) draws it,
    ``function(result)`` returning a matplotlib Figure or anything that holds one as ``.figure``
    (a seaborn grid, an Axes); it is saved as ``NAME.png``
    (:func:`mlcb.storage.outputs.register_figure`). A name that is taken is refused unless
    ``override=True``.

    A module that registers figures joins the command line with ``--plugin MODULE``
    (docs/extending.md has the recipe).
    """
    outputs.register_figure(name, entry_point, summary, override=override)


def names() -> list[str]:
    """Every registered figure, sorted (the built-in :data:`KINDS` and those of plugins).

    Examples
    --------
    >>> [name for name in names() if name in KINDS]
    ['budget', 'panels', 'regret', 'theory']
    """
    return outputs.FIGURES.names()


def figure_of(drawn: Any) -> Any:
    """The matplotlib Figure of what a figure function returned: a Figure, a seaborn grid, an Axes
    (or a sequence of them)."""
    if isinstance(drawn, (list, tuple, np.ndarray)) and len(drawn):
        drawn = np.asarray(drawn, dtype=object).ravel()[0]
    figure = getattr(drawn, "figure", None)
    if figure is None or not hasattr(figure, "savefig"):
        raise InputTypeError(
            f"a figure function must return a matplotlib Figure or a seaborn grid, got {drawn!r}"
        )
    return figure


def draw(result: Result | str | os.PathLike[str], kind: str) -> Any:
    """What the registered figure ``kind`` (:func:`names`) draws for ``result``: for mlcb's own, the
    seaborn FacetGrid (:func:`figure_of` gives its matplotlib Figure)."""
    result = _result(result)
    if not isinstance(kind, str) or kind not in outputs.FIGURES:
        raise InputError(f"kind must be one of {tuple(names())}, got {kind!r}")
    return outputs.draw(result, kind, characters=look.font_characters())


__all__ = [
    "FEW_RUNS",
    "KINDS",
    "LABELS",
    "SLOPE_POINTS",
    "SPREAD_SETTINGS",
    "THEORY_PANELS",
    "WIDTH",
    "budget",
    "colours",
    "default_metric",
    "draw",
    "figure_of",
    "last_decade_slope",
    "names",
    "panels",
    "regret",
    "register",
    "setting_values",
    "theory",
]
