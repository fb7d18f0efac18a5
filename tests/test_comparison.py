"""Comparisons: the API, common random numbers, and the paper's claims on the trap."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlcb
from mlcb.compare import comparison_configs
from mlcb.presets import Entry


def test_compare_runs_every_policy_and_budget_on_common_random_numbers():
    result = mlcb.compare(
        "trap",
        [("mlcb", (1, 2)), ("limited-advice", (2,)), Entry("oracle", (1,), smoothing="last")],
        horizon=2_000,
        replications=3,
        seed=4,
    )
    assert result.settings == ["mlcb M=1", "mlcb M=2", "limited-advice M=2", "oracle M=1"]
    reps = result.replications
    # The same instance in every setting: the same best expert and optimal loss per replication.
    assert (reps.groupby("replication")[["best_expert", "best_loss"]].nunique() == 1).all().all()
    meta = result.metadata["settings"]
    assert meta["oracle M=1"]["config"]["smoothing"] == "last"
    assert meta["mlcb M=1"]["certificate_valid"] and not meta["limited-advice M=2"]["certificate_valid"]
    assert reps.loc[reps["setting"] == "limited-advice M=2", "certificate_violated"].isna().all()


def test_preset_comparisons_are_the_papers():
    trap = [(c.policy, c.budget, c.smoothing) for c in comparison_configs("trap")]
    assert trap == [("mlcb", m, "counts") for m in (1, 2, 3, 4)] + [
        ("limited-advice", m, "last") for m in (1, 2, 3, 4)
    ] + [("smooth-corral", 1, "counts")]
    glm = comparison_configs("glm")
    assert {(c.policy, c.budget) for c in glm} == {
        (p, m) for p in ("mlcb", "limited-advice", "ed2rb") for m in (1, 2, 3)
    }
    assert all(c.replications == 30 for c in glm)
    assert all(c.replications == 100 and c.horizon == 250_000 for c in comparison_configs("trap"))


#: Every preset whose comparison builds without a file of the user's (warfarin needs one).
BUILT_ALONE = sorted(set(mlcb.presets.PRESETS) - {"warfarin"})


@pytest.mark.parametrize("preset", BUILT_ALONE)
def test_a_policy_of_a_comparison_is_the_same_setting_through_run(preset):
    """`mlcb run PRESET --policy P` and `mlcb compare PRESET` name a setting "P M=m" alike: it
    must be one setting. The glm preset's ED2RB ran with c = 1 through `run` and with the
    comparison's c = 0.1 through `compare`, under one label."""
    from mlcb import presets

    chosen = presets.get(preset)
    entry_sets = [None, *chosen.entry_sets]
    checked = 0
    for entry_set in entry_sets:
        for config in comparison_configs(preset, entry_set=entry_set, horizon=100, replications=1):
            alone = chosen.config(config.budget, policy=config.policy, horizon=100, replications=1)
            assert (alone.label, alone.key()) == (config.label, config.key()), (entry_set, config.label)
            checked += 1
    assert checked >= 1


def test_comparison_filters_and_errors():
    kept = comparison_configs("trap", policies=["smooth-corral"], budget=[1, 3])
    assert [(c.policy, c.budget) for c in kept] == [("smooth-corral", 1)]
    with pytest.raises(ValueError, match=r"policies: \['nope'\] not in the comparison"):
        comparison_configs("trap", policies=["nope"])
    with pytest.raises(ValueError, match="budget: none of the requested budgets"):
        comparison_configs("trap", policies=["smooth-corral"], budget=[2])
    with pytest.raises(ValueError, match="give budgets for policy 'mlcb'"):
        comparison_configs("trap", ["mlcb"])


@pytest.fixture(scope="module")
def paper_trap():
    """The paper's trap experiment as the authors ran it (their calibration), 100 replications of
    250,000 rounds, the settings its claims are about."""
    entries = [  # the preset comparison's smoothing: LimitedAdvice deploys its current decision
        Entry("mlcb", (1, 2, 4), smoothing="counts"),
        Entry("limited-advice", (2, 4), smoothing="last"),
        Entry("smooth-corral", (1,), smoothing="counts"),
    ]
    result = mlcb.compare("trap", entries, calibration="authors", seed=2025)
    final = result.final()
    return {setting: rows["regret"].to_numpy() for setting, rows in final.groupby("setting")}


def _clearly_below(a: np.ndarray, b: np.ndarray) -> bool:
    """mean(a) < mean(b) by more than three standard errors of the difference of the means over
    100 replications (one-sided p < 0.0014 under the normal approximation)."""
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return b.mean() - a.mean() > 3 * se


def _difference_in_errors(a: np.ndarray, b: np.ndarray) -> float:
    """(mean(b) - mean(a)) in standard errors of the difference of the means."""
    return (b.mean() - a.mean()) / math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))


@pytest.mark.slow
def test_mlcb_beats_limited_advice_at_m2(paper_trap):
    assert _clearly_below(paper_trap["mlcb M=2"], paper_trap["limited-advice M=2"])


@pytest.mark.slow
def test_mlcb_is_level_with_limited_advice_at_m4(paper_trap):
    """The paper reports M-LCB ahead at every budget. At M = 4 the data here show it ahead on
    average but not clearly (about 1.7 standard errors with this seed: 1,227 against 1,298), so
    this test claims only what they support: M-LCB is not clearly behind (non-inferiority at the
    same three-standard-error margin)."""
    assert _difference_in_errors(paper_trap["mlcb M=4"], paper_trap["limited-advice M=4"]) > -3


@pytest.mark.slow
def test_mlcb_beats_smooth_corral_at_m1(paper_trap):
    assert _clearly_below(paper_trap["mlcb M=1"], paper_trap["smooth-corral M=1"])
