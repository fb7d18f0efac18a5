"""Bad input: a clear error naming the parameter and the allowed values, before any work starts."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
import pytest

import agents
import envs
import mlcb
from agents.bco import BCO_FAMILY, bco_rate
from mlcb import engine, kernels, presets
from mlcb.cli import main
from mlcb.config import SimulationConfig
from mlcb.config.toml import load_toml
from mlcb.contracts import BuildContext
from mlcb.errors import ExpertLossError
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel
from mlcb.policies import names as policy_names

POLICY_NAMES = ", ".join(policy_names())
#: How an unknown name says that a plugin registers more (issue 38, item 4).
PLUGIN_HINT = "(a module of one's own registers more: --plugin MODULE)"


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a simulation actually starts."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the input was validated")

    monkeypatch.setattr(engine.replications, "run_replications", refuse)
    monkeypatch.setattr(engine.replications, "run_replication", refuse)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"budget": 0}, r"budget must be an integer in \[1, n_experts=10\], got 0"),
        ({"budget": 11}, r"budget must be an integer in \[1, n_experts=10\], got 11"),
        ({"budget": 1.5}, r"budget must be an integer in \[1, n_experts=10\], got 1.5"),
        ({"delta": 0.0}, r"delta must be a number in \(0, 1\), got 0.0"),
        ({"delta": 1.0}, r"delta must be a number in \(0, 1\), got 1.0"),
        ({"delta": math.nan}, r"delta must be a number in \(0, 1\), got nan"),
        ({"delta": True}, r"delta must be a number in \(0, 1\)"),
        ({"horizon": 0}, r"horizon must be an integer >= 1, got 0"),
        ({"horizon": -5}, r"horizon must be an integer >= 1, got -5"),
        ({"replications": 0}, r"replications must be an integer >= 1, got 0"),
        ({"seed": -1}, r"seed must be a non-negative integer, got -1"),
        ({"checkpoints": 0}, r"checkpoints must be an integer >= 1"),
        (
            {"policy": "nope"},
            r"unknown policy 'nope'; registered policy names: .*d3rb, dynamic-balancing, ed2rb, .*, mlcb, mlcb-topm, .*uniform",
        ),
        ({"policy_params": {"bonus_scale": -1}}, r"bonus_scale must be a finite number > 0, got -1"),
        ({"policy_params": {"bounds": "x"}}, r"bounds must be one of \('theory', 'authors'\)"),
        ({"smoothing": "median"}, r"smoothing must be one of \('counts', 'average', 'uniform', 'last'\)"),
        ({"env": "mlcb/Nope-v0"}, r"unknown environment 'mlcb/Nope-v0'; registered environment names: "),
        ({"experts": ()}, r"experts must be a non-empty list"),
    ],
)
def test_bad_setting_is_refused_before_work(no_work, fields, message):
    with pytest.raises(ValueError, match=message):
        mlcb.simulate(preset="trap", **fields)


def test_bad_preset_and_calibration(no_work):
    with pytest.raises(ValueError, match=r"unknown preset 'nope'; presets: (.*, )?glm, (.*, )?trap"):
        mlcb.simulate(preset="nope")
    with pytest.raises(
        ValueError, match=r"calibration must be one of \['authors', 'authors-rates', 'practical', 'theory'\]"
    ):
        mlcb.simulate(preset="trap", calibration="magic")


def test_a_near_miss_is_named(no_work, capsys):
    """A mistyped preset, policy, expert, environment or calibration: the name meant is suggested."""
    for make, message in [
        (lambda: mlcb.simulate(preset="tarp"), "unknown preset 'tarp' (did you mean 'trap'?); presets: "),
        (lambda: mlcb.simulate(preset="trap", policy="mlbc"), "unknown policy 'mlbc' (did you mean 'mlcb'?)"),
        (lambda: agents.make("UCB1"), "unknown expert 'UCB1' (did you mean 'ucb1'?)"),
        (lambda: mlcb.simulate(preset="trap", calibration="theroy"), "got 'theroy' (did you mean 'theory'?)"),
        (
            lambda: envs.make("mlcb/trap-v0"),
            "unknown environment 'mlcb/trap-v0' (did you mean 'mlcb/Trap-v0'?)",
        ),
    ]:
        with pytest.raises(ValueError) as caught:
            make()
        assert message in str(caught.value)
    assert main(["run", "tarp"]) == 2
    assert "(did you mean 'trap'?)" in capsys.readouterr().err


def test_a_whole_number_is_taken_however_written(tmp_path, capsys):
    """``1e4`` is the integer 10,000 wherever a whole number is asked for: in Python, in a TOML
    setting and on the command line; a number that is not whole is refused by name."""
    result = mlcb.simulate(
        preset="trap", budget=2.0, horizon=1e4, replications=2.0, seed=1e0, checkpoints=2e1
    )
    config = result.metadata["settings"][result.settings[0]]["config"]
    assert (config["horizon"], config["replications"], config["budget"]) == (10_000, 2, 2)
    assert isinstance(config["horizon"], int) and int(result.final()["round"].iloc[0]) == 10_000
    same = mlcb.simulate(preset="trap", budget=2, horizon=10_000, replications=2, seed=1, checkpoints=20)
    np.testing.assert_array_equal(result.curves["regret"], same.curves["regret"])
    setting = tmp_path / "s.toml"
    setting.write_text(
        'horizon = 1e3\nreplications = 2.0\nbudget = 2\n[[experts]]\nfamily = "ucb1"\ncount = 1e1\n'
    )
    assert load_toml(setting)[1][0].horizon == 1_000
    assert (
        main(["run", "trap", "-M", "2", "-T", "1e3", "-R", "2", "--out", str(tmp_path), "--no-plot", "-q"])
        == 0
    )
    assert mlcb.load(tmp_path / "trap").final()["round"].max() == 1_000
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main(["run", "trap", "-T", "2.5e3", "-R", "1.5"])
    assert exited.value.code == 2
    assert "argument --replications/-R: must be a whole number such as 1000, 1_000 or 1e6, got '1.5'" in (
        capsys.readouterr().err
    )
    # whole, but not exactly as floats (the last past the range of a decimal's default context)
    for written in ("1e99", "1e16", "9007199254740993.0", "1e999999999"):
        with pytest.raises(SystemExit):
            main(["run", "trap", "-T", written])
        assert (
            "argument --horizon/-T: must be a whole number such as 1000, 1_000 or 1e6, at most 2**53 = "
            f"9_007_199_254_740_992 when written with an exponent or a decimal point, got '{written}'"
        ) in capsys.readouterr().err
    for written in ("1e3x", "1.0000000000000001"):  # not a number; not whole, though its float is
        with pytest.raises(SystemExit):
            main(["run", "trap", "-T", "1e15", "-R", written])  # 1e15 is read
        assert capsys.readouterr().err.endswith(
            f"must be a whole number such as 1000, 1_000 or 1e6, got '{written}'\n"
        )
    for fields in ({"horizon": 2.5}, {"horizon": 1e300}, {"replications": float("nan")}, {"horizon": "1e4"}):
        with pytest.raises(ValueError, match="must be an integer"):
            mlcb.simulate(preset="trap", **fields)


def test_several_values_written_with_commas_are_told_the_spelling_that_works(capsys):
    """An option of several values takes them separated by spaces; `--budget 1,2` was 'must be a
    whole number', `--policies mlcb,limited-advice` an unknown policy named 'mlcb,limited-advice'.
    Each such option now says how to write them, before any work."""
    from mlcb.cli import main

    for argv, said in [
        (["run", "trap", "--budget", "1,2"], "argument --budget/-M: several values are separated by spaces, "
         "not commas: 1 2 (got '1,2')"),
        (["compare", "trap", "--policies", "mlcb,limited-advice"], "argument --policies: several values are "
         "separated by spaces, not commas: mlcb limited-advice (got 'mlcb,limited-advice')"),
        (["list", "policies,presets"], "not commas: policies presets"),
        (["paper", "--only", "glm,", "trap"], "argument --only: several values are separated by spaces, not "
         "commas: glm (got 'glm,')"),
        (["plot", "results/trap", "--kind", "regret,panels"], "not commas: regret panels"),
        (["run", "trap", "--write", "csv,"], "not commas: csv"),
    ]:  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.count("\n") == 1 and said in err, (argv, err)
    with pytest.raises(ValueError, match=r"n_arms must be an integer >= 2, got 2.5"):
        mlcb.simulate(preset="trap", env_params={"n_arms": 2.5})


def test_bad_pools(no_work):
    trap = presets.get("trap")
    with pytest.raises(ValueError, match=r"experts: this environment has 10 bandit experts, got 3"):
        mlcb.engine.build(trap.config(1, experts=(agents.make("ucb1"),) * 3))
    glm_expert = agents.make("ogd")
    # A pool may mix families (mlcb.learners.MixedFamily), but not where each expert owns its arms.
    with pytest.raises(
        ValueError, match=r"experts: a pool that mixes families \(mixed \(bandit \+ glm\)\)"
    ) as caught:
        mlcb.engine.build(trap.config(1, experts=(agents.make("ucb1"),) * 9 + (glm_expert,)))
    assert (
        "needs an environment whose experts all face one stream; TrapEnv gives each of its 10 experts"
        in str(caught.value)
    )
    with pytest.raises(
        ValueError, match=r"experts: GLM experts need a GLM stream \(e.g. mlcb/GLM-v0\), got TrapEnv"
    ):
        mlcb.engine.build(trap.config(1, experts=(glm_expert,) * 10))
    with pytest.raises(ValueError, match=r"experts: bandit experts need a bandit experts environment"):
        mlcb.engine.build(presets.get("glm").config(1, experts=(agents.make("ucb1"),) * 10))
    with pytest.raises(
        ValueError,
        match=r"smoothing must be one of \('average', 'uniform', 'last'\) for glm experts, got 'counts'",
    ):
        mlcb.engine.build(presets.get("glm").config(1, smoothing="counts"))
    with pytest.raises(ValueError, match=r"threads must be None or an integer >= 1, got 0"):
        mlcb.simulate(preset="trap", threads=0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: agents.make("ucb1", c=1.0), r"c must be > 1 for UCB1's theory rate"),
        (lambda: agents.make("ucb1", c=-2.0), r"c must be a finite number > 0, got -2.0"),
        (lambda: agents.make("epsilon-greedy", alpha=1.0), r"alpha must be a number in \(0, 1\), got 1.0"),
        (lambda: agents.make("epsilon-greedy", rate="fast"), r"rate must be one of \('theory', 'authors'\)"),
        (lambda: agents.make("ogd", link="sine"), r"link"),
        (lambda: agents.make("ogd", radius=0.0), r"radius must be a finite number > 0, got 0.0"),
        (lambda: agents.make("nope"), r"unknown expert 'nope'; registered expert names: "),
    ],
)
def test_bad_expert_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: agents.make("bco", perturbation=1e-308),
            "perturbation * shrink * radius (the first perturbation's radius) must be at least 1e-100, got 1e-308: the gradient estimate divides by it",
        ),
        (
            lambda: agents.make("bco", step_scale=1e300),
            "step_scale must be a finite number in (0, 1e+100], got 1e+300: beyond it the expert's steps overflow",
        ),
        (
            lambda: mlcb.simulate(
                env="mlcb/GLM-v0", experts=[agents.make("ogd", link="exp", radius=180)] * 2
            ),
            "experts[0]: radius must be a number in (0, 1] (the stream's weight_radius, the ball its loss scale is sized for), got 180; beyond it losses are clipped at 1",
        ),
        (
            lambda: bco_rate(10, 0.01, lipschitz="x"),
            "lipschitz must be a finite number >= 0 (or inf in the bounded case), got 'x'",
        ),
    ],
)
def test_bad_expert_parameters_quoted_whole(make, message):
    """Messages with brackets, matched as they are written (docs/bad-inputs.md quotes them)."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_a_uniform_pool_trained_past_its_horizon_is_refused():
    """A pool with smoothing 'uniform' keeps every past iterate in room for its horizon: trained more
    often (a session driven past its horizon) it is refused (it wrote past the array's end)."""
    env = envs.make("mlcb/ConvexBandit-v0")
    env_params, env_state = env.build(0, 0, 1)
    context = BuildContext([agents.make("bco")], env, env_params, 0.1, np.ones(1, np.uint64), "uniform", 1)
    params, state = BCO_FAMILY.build_pool(context)
    for t in range(3):
        kernels.train(params, state, env_params, env_state, 0, t)
    message = "smoothing 'uniform' keeps every past iterate of an expert, with room for the horizon its pool was built for and the warm start: this pool was trained more often; build it for a longer horizon, or use smoothing 'average'"
    with pytest.raises(ValueError, match=re.escape(message)):
        kernels.train(params, state, env_params, env_state, 0, 3)


def test_cli_reports_one_line_and_fails(capsys, no_work):
    for argv, message in [
        (
            ["run", "trap", "--budget", "0"],
            "mlcb: error: budget must be an integer in [1, n_experts=10], got 0\n",
        ),
        (
            ["run", "trap", "--budget", "12"],
            "mlcb: error: budget must be an integer in [1, n_experts=10], got 12\n",
        ),
        (["run", "trap", "--delta", "2"], "mlcb: error: delta must be a number in (0, 1), got 2.0\n"),
        (["run", "trap", "--horizon", "0"], "mlcb: error: horizon must be an integer >= 1, got 0\n"),
        (
            ["run", "trap", "--replications", "-1"],
            "mlcb: error: replications must be an integer >= 1, got -1\n",
        ),
        (["run", "nope"], f"mlcb: error: unknown preset 'nope'; presets: {', '.join(presets.names())}\n"),
        (
            ["run", "trap", "--policy", "x"],
            f"mlcb: error: unknown policy 'x'; registered policy names: {POLICY_NAMES} {PLUGIN_HINT}\n",
        ),
        (["run", "missing.toml"], "mlcb: error: target: no such TOML file 'missing.toml'\n"),
    ]:
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.err == message
        assert captured.out == ""


# --- a loss outside [0, 1] from an expert, through a compiled pool of one's own --------------
class FaultyParams(NamedTuple):
    loss: float  # what every training step reports
    after: int  # from this round on


class FaultyState(NamedTuple):
    steps: np.ndarray


@implements("train", FaultyParams)
@kernel
def _faulty_train(params, state, env_params, env_state, k, t):
    state.steps[k] += 1
    loss = params.loss if t >= params.after and k == 1 else 0.5
    return loss, float(state.steps[k])


@implements("deploy", FaultyParams)
@kernel
def _faulty_deploy(params, state, env_params, env_state, k, t, key, slot):
    return 0.5, 0.5


class FaultyFamily:
    """A family of one's own (mlcb.contracts.ExpertFamily) with a compiled pool."""

    name = "faulty"
    smoothing = ("last",)

    def check(self, experts, env):
        if len(experts) != env.n_experts:
            raise ValueError("experts: one per expert of the environment")

    def optimal_losses(self, experts, env, env_params):
        return np.array([env.optimal_loss(env_params, k) for k in range(len(experts))])

    def rates(self, experts, env, n, delta_prime):
        return None

    def heuristic(self, experts, env):
        return [True] * len(experts)

    def build_pool(self, context):
        expert = context.experts[0]
        return FaultyParams(float(expert.loss), int(expert.after)), FaultyState(context.zeros(dtype=np.int64))


@dataclass(frozen=True)
class FaultyExpert:
    """An expert whose compiled pool reports ``loss`` for expert 1 from round ``after`` on."""

    loss: float = math.nan
    after: int = 5

    family: ClassVar[FaultyFamily] = FaultyFamily()


@pytest.mark.parametrize("loss", [math.nan, 1.5, -0.25, math.inf])
def test_bad_training_loss_names_expert_round_and_range(loss):
    config = SimulationConfig(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.5, 0.5]] * 3},
        experts=(FaultyExpert(loss),) * 3,
        budget=3,
        horizon=20,
        replications=1,
    )
    with pytest.raises(
        ExpertLossError,
        match=r"^expert 1 \(FaultyExpert\), replication 0, round 5: training loss is .*; "
        r"losses must be numbers in \[0, 1\]$",
    ) as error:
        mlcb.simulate(config)
    assert (error.value.expert, error.value.round) == (1, 5)
    assert not (error.value.value >= 0 and error.value.value <= 1)


def test_bad_loss_from_the_warm_start_is_round_zero():
    config = SimulationConfig(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.5, 0.5]] * 2},
        experts=(FaultyExpert(2.0, after=0),) * 2,
        budget=1,
        horizon=5,
        replications=1,
    )
    with pytest.raises(
        ExpertLossError, match=r"^expert 1 \(FaultyExpert\), replication 0, round 0: training loss is 2.0"
    ):
        mlcb.simulate(config)


def test_cli_reports_a_faulty_expert_in_one_line_and_keeps_the_finished_work(tmp_path, capsys):
    """A compiled pool that fails in every replication at round 5: one line naming the expert,
    its class, the replication and the round; exit status 1; the parts directory is kept."""
    from unittest import mock

    config = SimulationConfig(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.5, 0.5]] * 3},
        experts=(FaultyExpert(1.5),) * 3,
        budget=3,
        horizon=20,
        replications=2,
    )
    with (
        mock.patch("mlcb.compare.comparison_configs", return_value=[config]),
        mock.patch("mlcb.presets.get") as preset,
    ):
        preset.return_value.name = "faulty"
        status = main(["compare", "trap", "--out", str(tmp_path), "--no-plot", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert len(err) == 1
    assert err[0].startswith("mlcb: error: expert 1 (FaultyExpert), replication ")
    assert "round 5: training loss is 1.5" in err[0]
    assert err[0].endswith("finished replications are kept, the same command resumes from them")
    assert (tmp_path / "faulty-comparison" / ".parts").is_dir()
