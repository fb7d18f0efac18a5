"""benchmarks/bench_slopes.py runs: a tiny version of the slope table (so that the script cannot rot)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import envs
from tests.scripts import benchmark

bench_slopes = benchmark("bench_slopes")


def test_last_decade_slope_of_a_power_law():
    rounds = np.geomspace(1, 10_000, 40)
    assert bench_slopes.last_decade_slope(rounds, 3.0 * rounds**0.7, 10_000) == pytest.approx(0.7)
    # Only the last decade counts: a different power before T/10 changes nothing.
    bent = np.where(rounds < 1_000, rounds, 1_000**0.3 * rounds**0.7)
    assert bench_slopes.last_decade_slope(rounds, bent, 10_000) == pytest.approx(0.7)


def test_instances():
    assert len(bench_slopes.hedge_row()) == 29 and max(bench_slopes.hedge_row()) == 1.0
    assert len(bench_slopes.robust_row()) == 32 and min(bench_slopes.robust_row()) == pytest.approx(0.05)
    assert [row[0] for row in bench_slopes.ROWS] == ["1/2", "2/3", "2/3", "3/4", "3/4", "3/4", "5/6"]
    assert [row[2].alpha for row in bench_slopes.ROWS[-2:]] == [0.75, 5 / 6]
    stream = envs.make("mlcb/ConvexBandit-v0", **bench_slopes.bco_stream())
    assert stream.optimal_loss_of(2, 1.0) == pytest.approx(0.05)


def test_a_tiny_slope_table(capsys):
    rows = bench_slopes.main(["--horizon", "3000", "--replications", "2", "--threads", "1"])
    assert [row["target"] for row in rows] == [0.5, 2 / 3, 2 / 3, 0.75, 0.75, 0.75, 5 / 6]
    for row in rows:
        assert math.isfinite(row["slope"]) and 0.0 < row["slope"] < 1.5
        assert row["pseudo_regret"] > 0
    out = capsys.readouterr().out
    assert "| alpha | experts | slope | max(1/2, alpha) |" in out
    assert sum(line.startswith("|") for line in out.splitlines()) == 9  # header, rule, seven rows
