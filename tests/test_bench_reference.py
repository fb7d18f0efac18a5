"""The single-purpose reference kernel of benchmarks/ computes what the engine computes.

``benchmarks/bench_reference.py`` measures the engine against ``benchmarks/reference_kernel.py``;
the comparison means something only if both simulate the same thing. Here the reference gives the
engine's realized regret, pseudo-regret and counts at every checkpoint, bit for bit, for every
budget the benchmark runs and several seeds and replications, and the benchmark prints its rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlcb import engine, presets
from mlcb.config import checkpoint_grid
from tests.scripts import benchmark

HORIZON = 3_000


@pytest.mark.parametrize("budget", [1, 2, 4])
@pytest.mark.parametrize(("seed", "replication"), [(0, 0), (0, 1), (11, 3)])
def test_reference_matches_the_engine(budget, seed, replication):
    reference = benchmark("bench_reference").reference_kernel  # imported as the benchmark does
    config = presets.get("trap").config(budget, horizon=HORIZON, replications=1, seed=seed)
    grid = checkpoint_grid(HORIZON, 50)
    ours = engine.run_replication(engine.build(config), seed, replication, HORIZON, grid)
    regret, pseudo, trained, deployed = reference.run(seed, replication, HORIZON, budget, grid, config.delta)
    np.testing.assert_array_equal(regret, ours.regret)
    np.testing.assert_array_equal(pseudo, ours.pseudo_regret)
    np.testing.assert_array_equal(trained, ours.trained)
    np.testing.assert_array_equal(deployed, ours.deployed)
    # The budget is spent every round; past the first instance, S_t changes in the run (on the
    # first one the trap holds the first M experts throughout).
    assert trained[-1].sum() == config.n_experts + budget * HORIZON
    if (seed, replication) != (0, 0):
        assert np.count_nonzero(trained[-1] > 1) > budget


def test_the_benchmark_prints_every_row_against_its_target(capsys):
    rows = benchmark("bench_reference").main(["--horizons", "2000", "--budgets", "1", "2", "--repeats", "1"])
    out = capsys.readouterr().out
    assert [(row["horizon"], row["budget"]) for row in rows] == [(2000, 1), (2000, 2)]
    assert all(row["same"] and row["ratio"] > 0 and row["cpu_ratio"] > 0 for row in rows)
    assert out.count("0.8x") == 2 and "engine rounds/s" in out and "cores" in out
