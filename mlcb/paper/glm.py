"""The paper's parametric experiment: model selection among online GLMs, as a section.

K = 10 generalised linear models, each projected online gradient descent with its own link, on
``x`` uniform on a sphere and a target from link 9 (the preset ``glm``); M-LCB, LimitedAdvice and
ED2RB (c = 0.1, the value the paper found best) at M in {1, 2, 3}, on common random numbers. The
paper publishes a figure and claims, no numbers: each row states a claim and the number that
checks it, with its verdict. A further table shows, link by link, what M-LCB's lower confidence
bounds are made of at the paper's size (the loss gap to link 9, the rate term ``U_k(n)/n``) and
where its training rounds go.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from mlcb.paper import measure as m
from mlcb.paper.section import AUTHORS_CODE, FIGURES, NOT_PUBLISHED, Row, Section, Table, save_figure

#: The paper's size is small enough for both: T = 2,500 rounds and 30 runs.
SIZES = {"quick": {"horizon": 2_500, "replications": 30}, "paper": {"horizon": 2_500, "replications": 30}}
BUDGETS = (1, 2, 3)
CALIBRATIONS = ("theory", "practical")
#: The names the tables give the policies.
NAMES = {"mlcb": "M-LCB", "limited-advice": "LimitedAdvice", "ed2rb": "ED2RB"}


def _table(result, calibration: str) -> Table:
    rows = []
    for budget in BUDGETS:
        for other in ("limited-advice", "ed2rb"):
            rows.append(
                m.difference_row(
                    result,
                    f"pseudo-regret at T: M-LCB minus {NAMES[other]}, M = {budget}",
                    "M-LCB competitive with both baselines (read: at or below)",
                    f"mlcb M={budget}",
                    f"{other} M={budget}",
                    "pseudo_regret",
                )
            )
    n_experts = int(result.experts["expert"].max()) + 1
    rows += m.identify_rows(result, BUDGETS, "k* = 9", "consistently identifies k = 9", n_experts)
    rows += m.share_rows(
        result, BUDGETS, "M-LCB spends its updates on the best models, LimitedAdvice spreads them uniformly"
    )
    rows += m.slope_rows(result, "pseudo_regret", "pseudo-regret")
    return Table(f"GLM comparison ({calibration} calibration)", tuple(rows), m.wrapper_note(result, NAMES))


def links(result, calibration: str, seed: int) -> list[dict[str, Any]]:
    """Link by link, for ``result`` (the preset's GLM comparison at ``calibration``) and its
    instances: the mean gap ``L_k* - min_j L_j*`` over replications, the gradient bound ``G_k``,
    the rate term ``U_k(n, delta')/n`` at ``n = T/K`` (the count of a uniform split at M = 1), and
    the shares (mean and standard error over replications) of M-LCB's and LimitedAdvice's training
    and deployment rounds at M = 1."""
    from mlcb import presets

    config = presets.get("glm").config(1, calibration)
    env, experts = config.make_env(), config.experts
    gaps = []
    for replication in sorted(result.replications["replication"].unique()):
        params, _ = env.build(seed, int(replication))
        best = np.array([env.optimal_loss_of(params, e.link, e.radius) for e in experts])
        gaps.append(best - best.min())
    n = max(1, int(result.curves["round"].max()) // len(experts))
    delta_prime = config.delta / (2 * len(experts))
    shares = {
        f"{policy} {column}": _per_expert(result, f"{policy} M=1", column)
        for policy in ("mlcb", "limited-advice")
        for column in ("trained", "deployed")
    }
    rows = []
    for k, expert in enumerate(experts):
        lipschitz = env.lipschitz(expert.link, expert.radius)
        rate = float(np.asarray(expert.rate_function(np.array([n]), lipschitz, delta_prime))[0])
        rows.append(
            {
                "expert": k,
                "link": expert.link,
                "gap": float(np.mean([g[k] for g in gaps])),
                "lipschitz": lipschitz,
                "rate": rate / n,
                "n": n,
                **{key: m.mean_and_error(table[k].to_numpy()) for key, table in shares.items()},
            }
        )
    return rows


def _per_expert(result, setting: str, column: str):
    experts = result.experts[result.experts["setting"] == setting]
    last = experts[experts["round"] == experts["round"].max()]
    table = last.pivot(index="replication", columns="expert", values=column)
    return table.div(table.sum(axis=1), axis=0)


def _links_table(result, seed: int, calibration: str) -> Table:
    rows = []
    for link in links(result, calibration, seed):
        trained, error = link["mlcb trained"]
        note = (
            f"gap L_k* - L* = {link['gap']:.4f}; G_k = {link['lipschitz']:.2f}; "
            f"U_k(n)/n at n = {link['n']}: {link['rate']:.2f}; "
            f"LimitedAdvice trains it {link['limited-advice trained'][0]:.3f}; "
            f"M-LCB deploys it {link['mlcb deployed'][0]:.3f}"
        )
        rows.append(
            Row(
                f"link {link['expert']} ({link['link']}): M-LCB's share of training rounds, M = 1",
                NOT_PUBLISHED,
                trained,
                error,
                note=note,
            )
        )
    return Table(
        f"Where M-LCB's training goes, link by link ({calibration} calibration, M = 1)",
        tuple(rows),
        note="M-LCB trains the M experts with the smallest LCB_k = L_k - U_k(n_k)/n_k. The gaps between "
        "the links' best losses are thousandths, while the rate terms U_k(n)/n of the valid rates are "
        "tenths and grow with the link's gradient bound G_k: within the paper's 2,500 rounds the "
        "training order is the order of the rate terms, not of the losses, and link 9, whose rate term "
        "is among the smallest, is trained and deployed less often than a uniform choice would.",
    )


def run(size: str, out: Path, seed: int = 0, threads: int | None = None) -> Section:
    """Run the GLM comparison at ``size`` under the theory and practical calibrations."""
    import mlcb
    from mlcb import plot

    sizes: dict[str, Any] = SIZES[size]
    figures, tables = [], []
    for calibration in CALIBRATIONS:
        result = mlcb.compare("glm", calibration=calibration, seed=seed, threads=threads, **sizes)
        with FIGURES:  # matplotlib, one figure at a time (sections run at once)
            figure = plot.panels(result, "pseudo_regret").figure
            figure.suptitle(f"GLMs, {calibration} calibration, T = {sizes['horizon']:,}")
            figures.append(save_figure(figure, out / f"glm-{calibration}.png"))
        tables += [_table(result, calibration), _links_table(result, seed, calibration)]
    text = (
        f"K = 10 online GLMs (projected OGD, one link each) on x uniform on a sphere of radius 2 in "
        f"d = 5, target link 9 with |w*| uniform in [0.7, 0.95] plus N(0, 0.02^2) noise, experts in "
        f"the unit ball from one shared random start of norm 0.5: the instance of the authors' code "
        f"({AUTHORS_CODE}, experiments/experiment_glm.py and stat_online/lin_bandits/). "
        f"T = {sizes['horizon']:,}, {sizes['replications']} replications, seed {seed}. Two choices "
        "differ from that code, both for the theorem: the square loss is scaled into [0, 1] by the "
        "largest error any link can make (B = 5.16, so the package's loss is the code's 1/2 (y - "
        "y_hat)^2 times 2/B^2 = 0.075), and each expert's rate is the valid OGD bound of its own link "
        "(1.5 G_k D sqrt(n) plus a concentration term), where the code gives every link 3 D G sqrt(n) "
        "with D = G = 0.1. The paper tuned M-LCB's concentration terms once on a validation "
        "environment and does not say to what; the section runs the theory constants and the "
        "'practical' calibration (both widths halved). Link 9 (the target's) reaches the Bayes loss; "
        "the other links' best losses lie about 0.003 above it, while the valid rate terms are "
        "tenths: M-LCB's training order follows the rates (the link-by-link table), and telling "
        "k* = 9 apart takes far more than 2,500 rounds."
    )
    return Section(
        "glm", "Model selection among generalised linear models", text, tuple(figures), tuple(tables)
    )
