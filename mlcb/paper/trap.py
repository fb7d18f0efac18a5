"""The paper's bandit experiment, the "suboptimal trap", as a section of the reproduced paper.

K = 10 experts, each a two-armed Bernoulli bandit (epsilon-greedy for experts 0-4, UCB1 for 5-9;
the preset ``trap``); M-LCB and LimitedAdvice at M in {1, 2, 3, 4} and Smooth CORRAL at M = 1, on
common random numbers. The paper ran it with its authors' code constants (the ``authors``
calibration); the section also runs the constants the paper's theorem is proved for (``theory``).

The paper publishes figures and claims for this experiment, no numbers: each claim (:data:`CLAIMS`)
gets one verdict over its tests, one per calibration, budget and wrapper (a difference of regrets,
paired replication by replication, with its standard error; a slope; a share of rounds), and every
test that does not hold says why, from the measured training and deployment of the policies.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from mlcb.paper import measure as m
from mlcb.paper.section import AUTHORS_CODE, NOT_SHOWN, Row, Section, Table, panels, save_figure
from mlcb.paper.verdicts import Spec, finish

#: Horizon and replications of each size ("paper": the paper's own, T = 250,000 and 100 runs).
SIZES = {
    "quick": {"horizon": 100_000, "replications": 20},
    "paper": {"horizon": 250_000, "replications": 100},
}
BUDGETS = (1, 2, 3, 4)
CALIBRATIONS = ("authors", "theory")
#: How the summary names each calibration.
CALIBRATION_NAMES = {"authors": "the authors' constants", "theory": "the theorem's constants"}
#: What the paper's figure plots: the expected regret of the played arms (the pseudo-regret).
METRIC = "pseudo_regret"
#: The names the tables give the policies.
NAMES = {"mlcb": "M-LCB", "limited-advice": "LimitedAdvice", "smooth-corral": "Smooth CORRAL"}
#: LimitedAdvice's other wrapper: M-LCB's own, play counts (its preset deploys its last iterate).
OTHER_WRAPPER = "counts"
#: How the tests name LimitedAdvice's two wrappers.
WRAPPER_NAMES = {"last": "LimitedAdvice's last iterate", OTHER_WRAPPER: "LimitedAdvice by play counts"}
#: The paper's claims about this experiment (and its authors' slides'), in the order of the page.
CLAIMS = (
    Spec("below-limited-advice", "M-LCB below LimitedAdvice at every budget", "M-LCB below LimitedAdvice"),
    Spec("below-corral", "M-LCB below Smooth CORRAL (M = 1)", "M-LCB below Smooth CORRAL"),
    Spec("falls-with-budget", "M-LCB's regret falls as M grows", "its regret falling with M"),
    Spec("sublinear", "all methods are sublinear", "sublinear regret"),
    Spec(
        "concentrates",
        "as M grows, M-LCB concentrates its deployments on k* faster",
        "deployments concentrating on k*",
    ),
    Spec(
        "focused-training",
        "M-LCB focuses its training budget on promising experts, LimitedAdvice spreads it more uniformly",
        "training focused on k*",
    ),
    Spec(
        "slower-growth",
        "M-LCB has slower regret growth at all budgets",
        "the slides' slower regret growth",
        source="slides",
    ),
)


def _mix(result, setting: str) -> dict[str, float]:
    """Where ``setting`` trains and deploys: the shares of k* (expert 0) and of the two groups."""
    n_experts = int(result.experts["expert"].max()) + 1
    half = n_experts // 2
    return {
        "deployed": m.best_share(result, setting, "deployed")[0],
        "trained": m.best_share(result, setting, "trained")[0],
        "greedy": m.group_share(result, setting, range(1, half))[0],
        "ucb": m.group_share(result, setting, range(half, n_experts))[0],
    }


def _training_reason(result, budget: int, other: str = "limited-advice", source=None) -> str:
    """Why M-LCB may lose to ``other`` at ``budget``: where both train and deploy (measured)."""
    mine, theirs = _mix(result, f"mlcb M={budget}"), _mix(source or result, f"{other} M={budget}")
    return (
        f"at M = {budget} M-LCB deploys k* in {mine['deployed']:.2f} of the rounds and gives it "
        f"{mine['trained']:.2f} of its training (the other epsilon-greedy experts {mine['greedy']:.2f}, the "
        f"fast UCB1 experts 5-9 {mine['ucb']:.2f}); {NAMES[other]} deploys k* in {theirs['deployed']:.2f} "
        f"and trains it in {theirs['trained']:.2f}"
    )


def _growth_reason(result, budget: int) -> str:
    """Why M-LCB's late slope may be above LimitedAdvice's: the regrets at T/10 and at T."""
    first, second = f"mlcb M={budget}", f"limited-advice M={budget}"
    early, _ = m.paired(m.at_round(result, first, "regret", 0.1), m.at_round(result, second, "regret", 0.1))
    late, _ = m.paired_difference(result, first, second, "regret")
    mine, theirs = m.slope(result, first, "regret"), m.slope(result, second, "regret")
    side = {True: "below", False: "above"}
    where = (
        f"M-LCB's regret is {abs(early):,.0f} {side[early < 0]} LimitedAdvice's at T/10 and "
        f"{abs(late):,.0f} {side[late < 0]} at T (late slopes {mine:.2f} and {theirs:.2f})"
    )
    if early < 0 and late < 0:
        return f"{where}: M-LCB ends lower because it starts lower, not because it grows more slowly"
    return where


def _comparison_table(result, counts, calibration: str) -> Table:
    rows = []
    claim = CLAIMS[0]
    for wrapper, source in (("last", result), (OTHER_WRAPPER, counts)):
        for budget in BUDGETS:
            mean, error, df = m.paired_estimate(
                m.final(result, f"mlcb M={budget}", METRIC),
                m.final(source, f"limited-advice M={budget}", METRIC),
            )
            label = "last iterate" if wrapper == "last" else "play counts"
            rows.append(
                m.claim_row(
                    f"pseudo-regret at T: M-LCB minus LimitedAdvice ({label}), M = {budget}",
                    claim.text,
                    mean,
                    error,
                    high=0.0,
                    claim=claim.key,
                    condition=f"{calibration}; M = {budget}; {WRAPPER_NAMES[wrapper]}",
                    reason=_training_reason(result, budget, source=source),
                    df=df,
                )
            )
    rows.append(
        m.difference_row(
            result,
            "pseudo-regret at T: M-LCB minus Smooth CORRAL, M = 1",
            CLAIMS[1].text,
            "mlcb M=1",
            "smooth-corral M=1",
            METRIC,
            claim=CLAIMS[1].key,
            condition=f"{calibration}; M = 1",
            reason=_training_reason(result, 1, "smooth-corral"),
        )
    )
    values = {budget: m.final(result, f"mlcb M={budget}", METRIC) for budget in BUDGETS}
    rows += m.trend_rows(
        values,
        "M-LCB pseudo-regret at T",
        CLAIMS[2].text,
        grows=False,
        claim=CLAIMS[2].key,
        where=calibration,
    )
    wrappers = m.wrapper_note(result, NAMES)
    note = (
        f"{wrappers} The rows 'play counts' run LimitedAdvice once more with M-LCB's wrapper, which "
        "lowers its regret."
    )
    return Table(f"Regret at the horizon ({calibration} calibration)", tuple(rows), note)


def _behaviour_table(result, calibration: str) -> Table:
    rows = m.slope_rows(result, "regret", "regret", names=NAMES, claim=CLAIMS[3].key, where=calibration)
    rows += m.growth_rows(
        result,
        BUDGETS,
        "limited-advice",
        "regret",
        f"{CLAIMS[6].text} (the authors' slides)",
        claim=CLAIMS[6].key,
        where=calibration,
        reasons={budget: _growth_reason(result, budget) for budget in BUDGETS},
    )
    rows += m.deploy_rows(result, BUDGETS, "k*", CLAIMS[4].text, claim=CLAIMS[4].key, where=calibration)
    rows += m.share_rows(
        result,
        BUDGETS,
        CLAIMS[5].text,
        claim=CLAIMS[5].key,
        where=calibration,
        reasons={budget: _training_reason(result, budget) for budget in BUDGETS},
    )
    return Table(f"What the figures show ({calibration} calibration)", tuple(rows))


def _test(section: Section, claim: str, condition: str) -> Row:
    return next(
        row
        for table in section.tables
        for row in table.rows
        if (row.claim, row.condition) == (claim, condition)
    )


def _wrapper_sentence(section: Section) -> str:
    """What LimitedAdvice's wrapper does to the verdict at M = 1 (authors' constants), from the rows."""
    rows = [
        _test(section, CLAIMS[0].key, f"authors; M = 1; {WRAPPER_NAMES[w]}") for w in ("last", OTHER_WRAPPER)
    ]
    numbers = [f"{row.package:+,.0f} ± {row.stderr:,.0f} ({row.verdict})" for row in rows]
    both = (
        f"M-LCB minus LimitedAdvice is {numbers[0]} against its last iterate and {numbers[1]} against "
        "its play counts"
    )
    lead = "At M = 1, with the authors' constants,"
    if rows[0].verdict != rows[1].verdict:
        return f"{lead} the verdict depends on LimitedAdvice's wrapper: {both}."
    if rows[0].verdict == NOT_SHOWN:
        return f"{lead} neither wrapper's comparison is decided at this size: {both}."
    return f"{lead} the verdict is the same under both of LimitedAdvice's wrappers: {both}."


def run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section:
    """Run the trap comparison at ``size`` under both calibrations; figures under ``out``."""
    import mlcb
    from mlcb.presets import Entry

    sizes: dict[str, Any] = SIZES[size]
    figures, tables, mixes = [], [], {}
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
        figure = panels(result, METRIC, f"The trap, {calibration} calibration, T = {sizes['horizon']:,}")
        figures.append(save_figure(figure, out / f"trap-{calibration}.png"))
        tables += [_comparison_table(result, counts, calibration), _behaviour_table(result, calibration)]
        mixes[calibration] = _mix(result, "mlcb M=1")
    scale = f"T = {sizes['horizon']:,}, {sizes['replications']} runs"
    section = finish(
        "trap",
        "Model selection among bandits: the suboptimal trap",
        "",
        figures,
        tables,
        CLAIMS,
        name="The trap",
        size=scale,
        groups=CALIBRATION_NAMES,
    )
    theory, authors = mixes["theory"]["greedy"], mixes["authors"]["greedy"]
    text = (
        f"K = 10 two-armed Bernoulli experts (the paper's trap: expert k's arms have rewards "
        f"0.2 (1 - k/K) and 0.1 (3 - k/K); epsilon-greedy experts 0-4, UCB1 experts 5-9), "
        f"T = {sizes['horizon']:,}, {sizes['replications']} replications, seed {seed}, common random "
        "numbers across policies. "
        "The paper's figure was made with its authors' code constants (calibration 'authors': a bonus "
        "c sqrt(g) + 0.66 g with the global round in g, heuristic expert rates, c = 0.5, delta = 0.1; "
        "LimitedAdvice's rate sqrt(M ln K / (K t)) and its last-iterate deployment; from "
        f"{AUTHORS_CODE}, stat_online/classical_bandits/algorithm.py); the theorem is proved for the "
        f"valid rates (calibration 'theory'), under which M-LCB gives {theory:.0%} of its training at "
        f"M = 1 to the slowly converging epsilon-greedy experts 1-4 ({authors:.0%} with the authors' "
        "constants). The paper's arm means for expert 0 are equal as printed; the authors' code "
        "(experiments/experiment_bandits.py), followed here, gives them 0.2 and 0.3. M-LCB and Smooth "
        "CORRAL deploy by play counts, LimitedAdvice its current decision, as in the authors' code; "
        "the comparison with LimitedAdvice is also run with LimitedAdvice deploying by play counts. "
        + _wrapper_sentence(section)
    )
    return dataclasses.replace(section, text=text)
