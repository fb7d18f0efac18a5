"""A round's decision given from outside is checked as the engine would take it, one validator
for every door (:mod:`mlcb.validation`: ``index``, ``indices``, ``decision``, ``point``): the
Gymnasium stream environments' ``step``, the selection environment and a round session; and a
pool is sized before any work."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import envs
import mlcb
from mlcb import policies
from mlcb.engine.session import Session

ROOT = Path(__file__).resolve().parent.parent


# --- the stream environments --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "message"),
    [
        (("0", "1"), "action[0] (the expert) must be an integer in [0, 10), got '0'"),
        ((True, 1), "action[0] (the expert) must be an integer in [0, 10), got True"),
        ((0, 0.5), "action[1] (the arm) must be an integer in [0, 2), got 0.5"),
        ((0, 2), "action[1] (the arm) must be an integer in [0, 2), got 2"),
        (None, "action must be a pair (expert, arm)"),
        (99, "action must be a pair (expert, arm)"),
        ((1, 1, 1), "action must be a pair (expert, arm)"),
    ],
)
def test_a_bandit_streams_action_is_an_expert_and_an_arm(action, message):
    env = envs.make("mlcb/Trap-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError) as raised:
        env.step(action)
    assert message in str(raised.value)
    assert env.step((1, np.int64(0)))[-1]["round"] == 1  # nothing was played before
    assert env.action_space.contains(np.array([1, 0]))


@pytest.mark.parametrize("action", ["x", "1", 1.0, True, 3, -1, None, [0]])
def test_a_real_data_streams_action_is_a_class_index(action):
    env = envs.make("mlcb/RealData-v0", dataset="ctg")
    env.reset(seed=0)
    with pytest.raises(ValueError) as raised:
        env.step(action)
    assert "action (a class index) must be an integer in [0, 3), got " in str(raised.value)
    env.step(np.int64(2))


@pytest.mark.parametrize("action", ["x", None, True, [1, 2], math.nan, math.inf])
def test_a_feature_streams_action_is_a_finite_prediction(action):
    env = envs.make("mlcb/GLM-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError) as raised:
        env.step(action)
    assert "action (a prediction) must be a finite number, got " in str(raised.value)
    assert env.step(np.array([0.25]))[1] <= 0.0


def test_the_convex_streams_action_is_a_point():
    env = envs.make("mlcb/ConvexBandit-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action \(a point of R\^"):
        env.step("0.1")


# --- a round session ------------------------------------------------------------------------------
def _session(**changes):
    fields = dict(budget=2, delta=0.1, horizon=10, rates=[np.sqrt] * 3)
    return Session.standalone(policies.make("mlcb"), 3, **{**fields, **changes})


def test_a_session_refuses_an_expert_trained_twice_and_experts_outside_the_pool():
    session = _session()
    session.warm_start([0.5, 0.2, 0.9])
    with pytest.raises(
        ValueError, match="train lists expert 0 twice; an expert trains at most once in a round"
    ):
        session.choose(1, [0, 0], 1)
    with pytest.raises(ValueError) as raised:
        session.choose(1, [0, 3], 1)
    assert "train[1] must be an integer in [0, 3), got 3" in str(raised.value)
    with pytest.raises(ValueError, match=r"deploy must be an integer in \[0, 3\), got '1'"):
        session.choose(1, [0], "1")
    with pytest.raises(ValueError, match="train must list at most 2 experts, got 3"):
        session.choose(1, [0, 1, 2], 1)
    session.choose(1, [0, 2], 1)  # nothing was begun by the refused ones: round 1 it is


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rates": [np.sqrt] * 2}, "rates must be a list of one rate function per expert (3)"),
        ({"rates": [np.sqrt, np.sqrt, 2.0]}, "rates[2] must be a function of the counts n"),
        ({"delta": 0}, "delta must be a number in (0, 1), got 0"),
        ({"horizon": -1}, "horizon must be an integer >= 1, got -1"),
        ({"budget": 4}, "budget must be an integer in [1, n_experts=3], got 4"),
        ({"keep": 1.5}, "keep must be a number in [0, 1], got 1.5"),
    ],
)
def test_a_sessions_settings_are_checked_as_a_simulations(changes, message):
    with pytest.raises(ValueError) as raised:
        _session(**changes)
    assert message in str(raised.value)


def test_a_session_used_out_of_order_says_what_to_do():
    session = _session()
    with pytest.raises(ValueError) as raised:
        session.warm_start([0.5, 0.2])
    assert "warm_start: losses must hold one value per expert (3)" in str(raised.value)
    session.warm_start([0.5, 0.2, 0.9])
    with pytest.raises(RuntimeError) as raised:
        session.deployed(0.0)
    assert "deployed: no round is under way; begin one with select(t)" in str(raised.value)
    with pytest.raises(RuntimeError, match="trained: no round is under way"):
        session.trained(0, 0.1)
    train, deployed = session.select(1)
    if deployed < 0:
        with pytest.raises(ValueError, match="give one loss per member"):
            session.deployed(0.0)
    session.deployed([0.0] * len(train) if deployed < 0 else 0.0)
    for k in train:
        session.trained(k, 0.1)
    session.end()
    with pytest.raises(RuntimeError, match="end: no round is under way"):
        session.end()


# --- a pool sized before work ---------------------------------------------------------------------
def test_a_pool_too_large_for_the_memory_is_refused_before_any_work(monkeypatch):
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 2 * 10**8)
    monkeypatch.setattr(sizes, "process_room", lambda: None)
    setting = dict(
        preset="trap", env_params={"n_experts": 400_000}, horizon=100, replications=1, checkpoints=2
    )
    with pytest.raises(ValueError) as raised:  # its frames fit; its replication's arrays beside them do not
        mlcb.simulate(**setting)
    message = str(raised.value)
    assert "400,000 experts: about" in message and "per replication" in message
    assert "more than this machine's 200.0 MB" in message


def test_a_pool_under_a_ulimit_is_sized_against_what_the_process_may_allocate():
    code = (
        "import resource, mlcb\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 10**9, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    mlcb.simulate(preset='trap', env_params={'n_experts': 10**6}, horizon=100, replications=1)\n"
        "except ValueError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert "this process may still allocate (ulimit -v" in out.stdout, out.stderr


def test_a_memory_limit_too_small_to_load_a_library_is_one_line():
    """Under ``ulimit -v`` of 300 MB Numba's compiler cannot be loaded: one line, exit status 1
    (before: a traceback reported as a bug of mlcb)."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (300 * 10**6, resource.RLIM_INFINITY))\n"
        "from mlcb.cli import main\n"
        "sys.exit(main(['run', 'trap', '-T', '50', '-R', '1', '--no-plot', '-q', '-o', sys.argv[1]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / ".no-such-results")], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "not enough memory to load" in lines[0] and "this process may use" in lines[0]
    assert "Traceback" not in out.stderr
