"""The paper's parametric experiment: model selection among online GLMs, as a section.

K = 10 generalised linear models, each projected online gradient descent with its own link, on
``x`` uniform on a sphere and a target from link 9 (the preset ``glm``); M-LCB, LimitedAdvice and
ED2RB (c = 0.1, the value the paper found best) at M in {1, 2, 3}, on common random numbers. The
paper publishes a figure and claims, no numbers: each row states a claim and the number that
checks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlcb.paper import measure as m
from mlcb.paper.section import Section, Table, save_figure

#: The paper's size is small enough for both: T = 2,500 rounds and 30 runs.
SIZES = {"quick": {"horizon": 2_500, "replications": 30}, "paper": {"horizon": 2_500, "replications": 30}}
BUDGETS = (1, 2, 3)
CALIBRATIONS = ("theory", "practical")


def _table(result, calibration: str) -> Table:
    rows = []
    for budget in BUDGETS:
        for other, name in (("limited-advice", "LimitedAdvice"), ("ed2rb", "ED2RB")):
            rows.append(
                m.difference_row(
                    result,
                    f"pseudo-regret at T: M-LCB minus {name}, M = {budget}",
                    "M-LCB competitive with both baselines",
                    f"mlcb M={budget}",
                    f"{other} M={budget}",
                    "pseudo_regret",
                )
            )
    rows += m.deploy_rows(result, BUDGETS, "k* = 9", "consistently identifies k = 9")
    claims = (
        ("mlcb", "M-LCB spends its updates on the best models"),
        ("limited-advice", "LimitedAdvice spreads its updates uniformly (1/K = 0.1)"),
    )
    rows += m.share_rows(result, BUDGETS, claims)
    rows += m.slope_rows(result, "pseudo_regret", "pseudo-regret")
    return Table(f"GLM comparison ({calibration} calibration)", tuple(rows))


def run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section:
    """Run the GLM comparison at ``size`` under the theory and practical calibrations."""
    import mlcb
    from mlcb import plot

    sizes: dict[str, Any] = SIZES[size]
    figures, tables = [], []
    for calibration in CALIBRATIONS:
        result = mlcb.compare("glm", calibration=calibration, seed=seed, threads=threads, **sizes)
        figure = plot.panels(result, "pseudo_regret")
        figure.suptitle(f"GLMs, {calibration} calibration, T = {sizes['horizon']:,}", y=1.03)
        figures.append(save_figure(figure, out / f"glm-{calibration}.png"))
        tables.append(_table(result, calibration))
    text = (
        f"K = 10 online GLMs (projected OGD, one link each) on x uniform on a sphere of radius 2 in "
        f"d = 5, target link 9 plus N(0, 0.02^2) noise, square loss; T = {sizes['horizon']:,}, "
        f"{sizes['replications']} replications, seed {seed}. The paper tuned M-LCB's concentration "
        "terms once on a validation environment and does not say to what; the section runs the "
        "theory constants and the 'practical' calibration (both widths halved). Link 9 (the "
        "target's) reaches the Bayes loss; the other links' best losses lie about 0.003 above it on "
        "the scaled square loss, a gap that confidence widths resolve only after some 10^5 updates, "
        "so telling k* = 9 apart takes far more than 2,500 rounds."
    )
    return Section(
        "glm", "Model selection among generalised linear models", text, tuple(figures), tuple(tables)
    )
