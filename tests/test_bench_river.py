"""benchmarks/bench_river.py's verdicts: each stream's gap to halving at equal updates, with the
standard error of that gap over the shuffles beside it (not part of the target)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tests.scripts import benchmark

pytest.importorskip("river")


@pytest.fixture
def script():
    return benchmark("bench_river")


def _frame(rows):
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "task": task,
                "selector": selector,
                "shuffle": shuffle,
                "value": value,
                "us_per_sample": 1.0,
            }
            for dataset, task, selector, shuffle, value in rows
        ]
    )


def test_the_gap_and_its_standard_error_pair_the_shuffles(script):
    # Classification: accuracy differences 0.01, 0.03, -0.01 (points: +1, +3, -1), the rows of
    # halving listed in another order than M-LCB's, as a reused run may list them.
    rows = [("s", "classification", "mlcb M=1", i, v) for i, v in enumerate([0.80, 0.83, 0.79])]
    rows += [("s", "classification", "equal-halving M=1", i, v) for i, v in [(2, 0.80), (0, 0.79), (1, 0.80)]]
    # Regression: MAE differences (halving - M-LCB) of 1, 3, 2 against training everything's 50.
    rows += [("r", "regression", "mlcb M=1", i, v) for i, v in enumerate([10.0, 9.0, 12.0])]
    rows += [("r", "regression", "equal-halving M=1", i, v) for i, v in enumerate([11.0, 12.0, 14.0])]
    rows += [("r", "regression", "train-everything", i, 50.0) for i in range(3)]
    frame = _frame(rows)
    assert script.ahead(frame, "s", 1) == pytest.approx(1.0)
    assert script.ahead_error(frame, "s", 1) == pytest.approx(2.0 / math.sqrt(3))  # sd of 1, 3, -1
    assert script.ahead(frame, "r", 1) == pytest.approx(4.0)  # 2 of 50, in %
    assert script.ahead_error(frame, "r", 1) == pytest.approx(2.0 / math.sqrt(3))  # sd of 2, 6, 4 (%)
    text, missed = script.verdicts(frame, {})
    assert f"M=1 +1.00 ± {2 / math.sqrt(3):.2f} s.e. points vs halving" in text
    assert missed == 0


def test_one_shuffle_has_no_standard_error(script):
    frame = _frame(
        [("s", "classification", "mlcb M=1", 0, 0.70), ("s", "classification", "equal-halving M=1", 0, 0.75)]
    )
    assert math.isnan(script.ahead_error(frame, "s", 1))
    text, missed = script.verdicts(frame, {})
    assert "MISSED M=1 -5.00 points vs halving" in text and "s.e." not in text
    assert missed == 2  # the stream's gap and the mean over the streams
