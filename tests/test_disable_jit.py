"""With ``NUMBA_DISABLE_JIT=1`` the whole package runs as Python and gives the compiled results.

Numba reads the variable when it is imported, so the interpreted runs happen in a subprocess. (The
GLM presets also run, but their optimal losses integrate numerically: minutes as Python.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numba
    import agents, mlcb

    def final(result):
        frame = result.final().sort_values(["setting", "replication"])
        return frame[["regret", "pseudo_regret", "top_m_regret", "certificate"]].to_numpy().tolist()

    class FirstArm:
        def learn(self, data):
            return data.loss(0)

        def deploy(self, data):
            return data.loss(0), data.mean(0)

    runs = {
        "trap": final(mlcb.simulate(preset="trap", budget=2, horizon=200, replications=2, seed=3)),
        "trap, Python engine": final(
            mlcb.simulate(preset="trap", budget=2, horizon=200, replications=2, seed=3, engine="python")
        ),
        "Python experts": final(
            mlcb.simulate(env="mlcb/Trap-v0", experts=[FirstArm()] * 10, budget=2, horizon=100, seed=3)
        ),
        "kl-ucb": final(
            mlcb.simulate(
                env="mlcb/Trap-v0", experts=[agents.make("kl-ucb")] * 10, budget=2, horizon=150,
                replications=2, seed=3,
            )
        ),
        "robust-ucb": final(
            mlcb.simulate(
                env="mlcb/Trap-v0", experts=[agents.make("robust-ucb", eps=0.5)] * 10, budget=2,
                horizon=150, replications=2, seed=3,
            )
        ),
        "hedge": final(
            mlcb.simulate(
                env="mlcb/Trap-v0", env_params={"n_arms": 4}, experts=[agents.make("hedge")] * 10,
                budget=2, horizon=150, replications=2, seed=3,
            )
        ),
        "bco": final(
            mlcb.simulate(
                env="mlcb/ConvexBandit-v0", experts=[agents.make("bco", dim=3), agents.make("bco-bounded")] * 2,
                budget=2, horizon=150, replications=2, seed=3, smoothing="uniform",
            )
        ),
    }
    json.dump({"disabled": bool(numba.config.DISABLE_JIT), "runs": runs}, sys.stdout)
    """
)


def _run(disable_jit: bool) -> dict:
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    if disable_jit:
        environment["NUMBA_DISABLE_JIT"] = "1"
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout)


def test_disabled_jit_runs_the_package_and_matches_the_compiled_results():
    interpreted = _run(disable_jit=True)
    compiled = _run(disable_jit=False)
    assert interpreted["disabled"] is True
    assert compiled["disabled"] is False
    for name, values in compiled["runs"].items():
        expected = np.array(values)
        got = np.array(interpreted["runs"][name])
        assert got.shape == expected.shape, name
        np.testing.assert_array_equal(got[:, 0], expected[:, 0], err_msg=f"{name}: final regret")
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=name)
