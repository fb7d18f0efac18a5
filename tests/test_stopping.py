"""mlcb.engine.stopping: runs in a thread other than the main one stop when asked (an interrupt
reaches the main thread only), keep what finished, and resume to the uninterrupted result."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mlcb import engine, presets
from mlcb.config import checkpoint_grid
from mlcb.engine import python_loop, stopping
from mlcb.engine import replications as compiled_replications

HORIZON = 6_000


def _problem():
    return engine.build(presets.get("trap").config(2, horizon=HORIZON, replications=3))


def _run(kind, problem, parts=None, on_rounds=None, on_done=None):
    grid = checkpoint_grid(HORIZON, 10)
    if kind == "compiled":
        return compiled_replications.run_replications(
            problem, 0, range(3), HORIZON, grid, threads=1, parts=parts, on_rounds=on_rounds, on_done=on_done
        )
    return python_loop.run_replications(
        problem, 0, range(3), HORIZON, grid, parts=parts, on_rounds=on_rounds, on_done=on_done, block=1
    )


@pytest.fixture
def small_steps(monkeypatch):
    """Slices of 256 rounds in the compiled loop, a look every 64 rounds in the Python loop."""
    monkeypatch.setattr(compiled_replications, "FIRST_SLICE", 256)
    monkeypatch.setattr(compiled_replications, "SLICE_SECONDS", 1e-9)  # no growing slices
    monkeypatch.setattr(stopping, "EVERY", 64)
    monkeypatch.setattr(python_loop, "REPORT_EVERY", 64)


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_a_replication_in_flight_stops_within_a_slice(kind, small_steps, tmp_path):
    """The event set in the middle of the first replication stops it there (before, the rounds
    went on to the end of every replication) and the others before they start: nothing is saved,
    the stop is an interrupt."""
    event = threading.Event()
    told: list[int] = []

    def on_rounds(replication, rounds):
        told.append(rounds)
        if sum(told) >= 1_000:
            event.set()

    with stopping.stop_when(event), pytest.raises(stopping.Stopped) as stopped:
        _run(kind, _problem(), parts=tmp_path, on_rounds=on_rounds)
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert 1_000 <= sum(told) <= 1_000 + 256, sum(told)
    assert not list(tmp_path.glob("replication-*"))


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_a_stopped_run_resumes_to_the_uninterrupted_result(kind, small_steps, tmp_path):
    problem = _problem()
    whole = _run(kind, problem)
    event = threading.Event()

    def on_rounds(replication, rounds):  # one worker: replication 0 has finished
        if replication == 1:
            event.set()

    with stopping.stop_when(event), pytest.raises(stopping.Stopped):
        _run(kind, problem, parts=tmp_path, on_rounds=on_rounds)
    kept = sorted(p.name for p in tmp_path.glob("replication-*"))
    assert kept == ["replication-000000.npz"], kept
    with stopping.stop_when(threading.Event()):  # an event never set: played in slices
        resumed = _run(kind, problem, parts=tmp_path)
    for got, want in zip(resumed, whole, strict=True):
        for name in engine.Replication._ARRAYS:
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)


def test_the_event_is_this_threads_only():
    """Another thread's runs, and this thread's outside the block, do not stop."""
    event = threading.Event()
    event.set()
    seen: list[threading.Event | None] = []
    with stopping.stop_when(event):
        worker = threading.Thread(target=lambda: seen.append(stopping.current()))
        worker.start()
        worker.join()
        with pytest.raises(stopping.Stopped):
            stopping.check()
    assert seen == [None] and stopping.current() is None
    stopping.check()
