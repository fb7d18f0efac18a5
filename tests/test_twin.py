"""The compiled engine against the pure-Python twin: identical decisions and regret."""

from __future__ import annotations

import pytest

from mlcb import presets
from mlcb.testing.twins import core as twin

ROUNDS = 3_000


def _compare(config, replication: int = 0, rounds: int = ROUNDS):
    return twin.assert_matches_engine(config, replication, rounds)


@pytest.mark.parametrize("calibration", ["theory", "practical", "authors", "authors-rates"])
@pytest.mark.parametrize("budget", [1, 3])
def test_trap_matches_twin(calibration, budget):
    config = presets.get("trap").config(budget, calibration, seed=11, horizon=ROUNDS)
    _compare(config, replication=1)


@pytest.mark.parametrize("smoothing", ["average", "last"])
def test_trap_smoothing_matches_twin(smoothing):
    config = presets.get("trap").config(2, seed=3, horizon=ROUNDS, smoothing=smoothing)
    _compare(config)


def test_top_m_and_scan_match_twin():
    config = presets.get("trap").config(3, seed=5, horizon=ROUNDS, policy="mlcb-topm")
    _compare(config)
    config = presets.get("trap").config(2, seed=5, horizon=ROUNDS, policy_params={"selection": "scan"})
    _compare(config)


def test_thompson_pools_match_twin():
    import agents

    pool = [agents.make("thompson")] * 3 + [agents.make("clipped-thompson")] * 3
    for smoothing in ("counts", "last"):
        config = presets.get("trap").config(
            2,
            seed=2,
            horizon=1_000,
            experts=tuple(pool),
            env_params={"n_experts": 6, "n_arms": 3},
            smoothing=smoothing,
        )
        _compare(config, rounds=1_000)


@pytest.mark.parametrize("smoothing", ["average", "uniform", "last"])
def test_glm_matches_twin(smoothing):
    config = presets.get("glm").config(2, seed=4, horizon=600, smoothing=smoothing)
    _compare(config, rounds=600)
