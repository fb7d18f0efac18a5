"""The paper's bandit experiment, the "suboptimal trap", as a section of the reproduced paper.

K = 10 experts, each a two-armed Bernoulli bandit (epsilon-greedy for experts 0-4, UCB1 for 5-9;
the preset ``trap``); M-LCB and LimitedAdvice at M in {1, 2, 3, 4} and Smooth CORRAL at M = 1, on
common random numbers. The paper ran it with its authors' code constants (the ``authors``
calibration); the section also runs the constants the paper's theorem is proved for (``theory``).

The paper publishes figures and claims for this experiment, no numbers: each table row states a
claim and the package's number that checks it (a difference of regrets, paired replication by
replication, with its standard error; a slope; a share of rounds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mlcb.paper import measure as m
from mlcb.paper.section import AUTHORS_CODE, Section, Table, drawing, save_figure

#: Horizon and replications of each size ("paper": the paper's own, T = 250,000 and 100 runs).
SIZES = {
    "quick": {"horizon": 100_000, "replications": 20},
    "paper": {"horizon": 250_000, "replications": 100},
}
BUDGETS = (1, 2, 3, 4)
CALIBRATIONS = ("authors", "theory")
#: What the paper's figure plots: the expected regret of the played arms (the pseudo-regret).
METRIC = "pseudo_regret"
#: The names the tables give the policies.
NAMES = {"mlcb": "M-LCB", "limited-advice": "LimitedAdvice", "smooth-corral": "Smooth CORRAL"}
#: LimitedAdvice's other wrapper: M-LCB's own, play counts (its preset deploys its last iterate).
OTHER_WRAPPER = "counts"


def _comparison_table(result, counts, calibration: str) -> Table:
    rows = []
    for budget in BUDGETS:
        rows.append(
            m.difference_row(
                result,
                f"pseudo-regret at T: M-LCB minus LimitedAdvice (last iterate), M = {budget}",
                "M-LCB below LimitedAdvice at every budget",
                f"mlcb M={budget}",
                f"limited-advice M={budget}",
                METRIC,
            )
        )
    for budget in BUDGETS:  # the same claim, LimitedAdvice deploying as M-LCB does
        mean, error = m.paired(
            m.final(result, f"mlcb M={budget}", METRIC), m.final(counts, f"limited-advice M={budget}", METRIC)
        )
        rows.append(
            m.claim_row(
                f"pseudo-regret at T: M-LCB minus LimitedAdvice (play counts), M = {budget}",
                "M-LCB below LimitedAdvice at every budget",
                mean,
                error,
                high=0.0,
                note="LimitedAdvice deploying by play counts, as M-LCB does",
            )
        )
    rows.append(
        m.difference_row(
            result,
            "pseudo-regret at T: M-LCB minus Smooth CORRAL, M = 1",
            "M-LCB below Smooth CORRAL",
            "mlcb M=1",
            "smooth-corral M=1",
            METRIC,
        )
    )
    values = {budget: m.final(result, f"mlcb M={budget}", METRIC) for budget in BUDGETS}
    rows += m.trend_rows(values, "M-LCB pseudo-regret at T", "decreases as M grows", grows=False)
    wrappers = m.wrapper_note(result, NAMES)
    note = (
        f"{wrappers} The rows 'play counts' run LimitedAdvice once more with M-LCB's wrapper, which "
        "lowers its regret: the comparison depends on the wrapper, most at small budgets."
    )
    return Table(f"Regret at the horizon ({calibration} calibration)", tuple(rows), note)


def _behaviour_table(result, calibration: str) -> Table:
    rows = m.slope_rows(result, "regret", "regret")
    rows += m.growth_rows(
        result,
        BUDGETS,
        "limited-advice",
        "regret",
        "slower regret growth at all budgets (the authors' slides)",
    )
    rows += m.deploy_rows(
        result, BUDGETS, "k*", "grows with M: M-LCB concentrates its deployments on k* faster"
    )
    rows += m.share_rows(
        result,
        BUDGETS,
        "M-LCB focuses its training budget on promising experts, LimitedAdvice spreads it more uniformly",
    )
    return Table(f"What the figures show ({calibration} calibration)", tuple(rows))


def run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section:
    """Run the trap comparison at ``size`` under both calibrations; figures under ``out``."""
    import mlcb
    from mlcb.presets import Entry

    sizes: dict[str, Any] = SIZES[size]
    figures, tables = [], []
    for calibration in CALIBRATIONS:
        result = mlcb.compare("trap", calibration=calibration, seed=seed, threads=threads, **sizes)
        counts = mlcb.compare(
            "trap",
            [Entry("limited-advice", BUDGETS, smoothing=OTHER_WRAPPER)],
            calibration=calibration,
            seed=seed,
            threads=threads,
            **sizes,
        )
        figure = _panels(result, METRIC, f"The trap, {calibration} calibration, T = {sizes['horizon']:,}")
        figures.append(save_figure(figure, out / f"trap-{calibration}.png"))
        tables += [_comparison_table(result, counts, calibration), _behaviour_table(result, calibration)]
    text = (
        f"K = 10 two-armed Bernoulli experts (the paper's trap: expert k's arms have rewards "
        f"0.2 (1 - k/K) and 0.1 (3 - k/K); epsilon-greedy experts 0-4, UCB1 experts 5-9), "
        f"T = {sizes['horizon']:,}, {sizes['replications']} replications, seed {seed}, common random "
        "numbers across policies. "
        "The paper's figure was made with its authors' code constants (calibration 'authors': a bonus "
        "c sqrt(g) + 0.66 g with the global round in g, heuristic expert rates, c = 0.5, delta = 0.1; "
        "LimitedAdvice's rate sqrt(M ln K / (K t)) and its last-iterate deployment; from "
        f"{AUTHORS_CODE}, stat_online/classical_bandits/algorithm.py); the theorem is "
        "proved for the valid rates (calibration 'theory'), under which M-LCB over-trains the slowly "
        "converging epsilon-greedy experts. The paper's arm means for expert 0 are equal as printed; "
        "the authors' code (experiments/experiment_bandits.py), followed here, gives them 0.2 and 0.3. "
        "M-LCB and Smooth CORRAL deploy by play counts, LimitedAdvice its current decision, as in the "
        "authors' code; the comparison with LimitedAdvice is shown with both of its wrappers, since "
        "it depends on the choice (at M = 1 and T = 100,000 its sign does)."
    )
    return Section(
        "trap", "Model selection among bandits: the suboptimal trap", text, tuple(figures), tuple(tables)
    )


@drawing
def _panels(result, metric: str, title: str):
    from mlcb import plot

    figure = plot.panels(result, metric).figure
    figure.suptitle(title)
    return figure
