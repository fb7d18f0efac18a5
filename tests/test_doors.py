"""One setting, one meaning, through every door: Python's ``simulate``, the command line, a TOML
setting file, a sweep's task, the Gymnasium environment and a round session give bit-identical
numbers for the same setting, on every preset.

The horizon is the setting's one number that the environment also needs (a real-data stream's
regret reference is taken over the run's rounds, and a data set read once must hold them); each
preset runs here at a horizon other than its own, so a door that gave the environment another
horizon would show.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

import mlcb
from mlcb import engine, presets
from mlcb.engine import python_loop
from mlcb.engine.session import Session
from mlcb.kernels import begin_round

#: Every preset but ``warfarin`` (it reads the user's IWPC file; ``warfarin-like`` runs the same
#: pool and stream code on another table), with the extra its pool needs.
NEEDS = {"moe": "torch", "phishing": "river", "bananas": "river", "ctg-like": "river"}
NEEDS |= {"warfarin-like": "sklearn", "warfarin-scaling": "sklearn"}
PRESETS = [name for name in presets.names() if name != "warfarin"]
#: The setting of each door: a short run at a horizon no preset has.
HORIZON, REPLICATIONS, SEED = 37, 2, 3


def _skip_without(name: str) -> None:
    extra = NEEDS.get(name)
    if extra is not None and importlib.util.find_spec(extra) is None:
        pytest.skip(f"the {name} preset needs {extra}")


def _config(name: str) -> mlcb.SimulationConfig:
    preset = presets.get(name)
    return preset.config(preset.budgets[-1], horizon=HORIZON, replications=REPLICATIONS, seed=SEED)


def _final(result: mlcb.Result) -> dict[str, np.ndarray]:
    """The numbers a door must give alike: each replication's regret, pseudo-regret, Top-M
    regret and certificate at the horizon, each expert's training and deployment counts, and the
    pool's rate exponent that the theory figures read (nan: none)."""
    curves = result.curves[result.curves["round"] == HORIZON].sort_values("replication")
    experts = result.experts[result.experts["round"] == HORIZON].sort_values(["replication", "expert"])
    out = {
        name: curves[name].to_numpy() for name in ("regret", "pseudo_regret", "top_m_regret", "certificate")
    }
    out |= {name: experts[name].to_numpy() for name in ("trained", "deployed")}
    out["best_loss"] = result.replications.sort_values("replication")["best_loss"].to_numpy()
    (setting,) = result.metadata["settings"].values()
    exponent = setting["rate_exponent"]
    out["rate_exponent"] = np.array([math.nan if exponent is None else exponent])
    return out


def _same(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray], door: str) -> None:
    for name, values in ours.items():
        np.testing.assert_array_equal(theirs[name], values, err_msg=f"{door}: {name}")


@pytest.fixture(scope="module")
def simulated() -> dict[str, dict[str, np.ndarray]]:
    """The numbers of ``mlcb.simulate`` for each preset, computed once."""
    return {}


def _simulated(name: str, cache: dict) -> dict[str, np.ndarray]:
    if name not in cache:
        preset = presets.get(name)
        result = mlcb.simulate(
            preset=name, budget=preset.budgets[-1], horizon=HORIZON, replications=REPLICATIONS, seed=SEED
        )
        cache[name] = _final(result)
    return cache[name]


@pytest.mark.parametrize("name", PRESETS)
def test_the_command_line_and_python_agree(name, simulated, tmp_path):
    _skip_without(name)
    budget = str(presets.get(name).budgets[-1])
    arguments = ["run", name, "--budget", budget, "--horizon", str(HORIZON), "--replications"]
    arguments += [str(REPLICATIONS), "--seed", str(SEED), "--out", str(tmp_path), "--no-plot", "-q"]
    assert mlcb.cli.main(arguments) == 0
    _same(_simulated(name, simulated), _final(mlcb.load(tmp_path / name)), "the command line")


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return repr(value)


def _setting_file(config: mlcb.SimulationConfig, path: Path) -> Path | None:
    """``config`` written as a TOML setting file, or ``None`` when its pool cannot be (experts
    that are not registered specifications: river models, torch networks)."""
    import agents

    by_class = {agents.registry.entry(n).load(): n for n in agents.names()}
    lines = [f"env = {_toml_value(config.env)}", f"policy = {_toml_value(config.policy)}"]
    for name in (
        "budget",
        "horizon",
        "replications",
        "seed",
        "delta",
        "smoothing",
        "checkpoints",
        "calibration",
    ):
        lines.append(f"{name} = {_toml_value(getattr(config, name))}")
    for name in ("env_params", "policy_params"):
        lines.append(f"{name} = {_toml_value(getattr(config, name))}")
    for expert in config.experts:
        family = by_class.get(type(expert))
        if family is None or not dataclasses.is_dataclass(expert):
            return None
        lines.append(f"[[experts]]\nfamily = {_toml_value(family)}")
        for field in dataclasses.fields(expert):
            value = getattr(expert, field.name)
            if value is not None:
                lines.append(f"{field.name} = {_toml_value(value)}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("name", PRESETS)
def test_a_toml_setting_file_and_python_agree(name, simulated, tmp_path):
    _skip_without(name)
    config = _config(name)
    path = _setting_file(config, tmp_path / "setting.toml")
    if path is None:
        pytest.skip(f"the {name} preset's pool is not made of registered specifications")
    from mlcb.config.toml import load_toml

    _, (from_file,) = load_toml(path)
    assert from_file.key() == config.key()
    _same(_simulated(name, simulated), _final(mlcb.simulate(from_file)), "a TOML file")
    assert mlcb.cli.main(["run", str(path), "--out", str(tmp_path), "--no-plot", "-q"]) == 0
    _same(_simulated(name, simulated), _final(mlcb.load(tmp_path / "setting")), "a TOML file, run")


@pytest.mark.parametrize("name", PRESETS)
def test_a_sweep_task_and_python_agree(name, simulated):
    _skip_without(name)
    from mlcb.sweeps.grid import make_grid
    from mlcb.sweeps.worker import payload, run_task

    budget = presets.get(name).budgets[-1]
    grid = make_grid(
        {"preset": name, "budget": budget, "horizon": HORIZON, "seed": SEED, "replications": REPLICATIONS}
    )
    (task,) = (
        grid.tasks()[:1] if REPLICATIONS == 1 else [dataclasses.replace(grid.tasks()[0], stop=REPLICATIONS)]
    )
    output = run_task(payload(grid, task))
    metadata = {"settings": {task.label: output["setting"]}}
    result = mlcb.Result(output["curves"], output["experts"], output["replications"], metadata=metadata)
    _same(_simulated(name, simulated), _final(result), "a sweep task")


def _engine_replication(problem, replication: int):
    """One replication on the engine that ``simulate`` chooses, traced round by round."""
    rounds, grid = problem.horizon, np.arange(1, problem.horizon + 1)
    if problem.compiled:
        return engine.run_replication(problem, problem.seed, replication, rounds, grid, trace_rounds=rounds)
    (run,) = python_loop.run_replications(
        problem, problem.seed, [replication], rounds, grid, trace_rounds=rounds
    )
    return run


@pytest.mark.parametrize("name", PRESETS)
def test_the_gymnasium_environment_replays_the_engine(name, simulated):
    """The selection environment fed M-LCB's decisions of each replication records the engine's
    numbers round by round."""
    _skip_without(name)
    from mlcb.selection_env import BudgetedSelectionEnv

    config = _config(name)
    problem = engine.build(config)
    env = BudgetedSelectionEnv(config, replication=0)
    expected = _simulated(name, simulated)
    for replication in range(REPLICATIONS):
        run = _engine_replication(problem, replication)
        if replication == 0:
            env.reset(seed=SEED)
        else:
            env.reset()
        for t in range(HORIZON):
            row = run.trace_selected[t]
            train = np.where(row >= 0, row, env.n_experts)
            observation, reward, _, _, info = env.step({"train": train, "deploy": int(run.trace_deployed[t])})
            assert info["regret"] == run.regret[t] and reward == -run.trace_loss[t]
        assert info["regret"] == expected["regret"][replication]
        assert info["pseudo_regret"] == expected["pseudo_regret"][replication] or (
            math.isnan(info["pseudo_regret"]) and math.isnan(expected["pseudo_regret"][replication])
        )
        k = env.n_experts
        np.testing.assert_array_equal(
            observation["counts"], expected["trained"][replication * k : (replication + 1) * k]
        )


@pytest.mark.parametrize("name", PRESETS)
def test_a_round_session_of_the_policy_and_python_agree(name, simulated):
    """A session that plays the setting's own policy round by round (its ``select``), the pool
    driven as the Python engine drives it, records ``simulate``'s numbers."""
    _skip_without(name)
    problem = engine.build(_config(name))
    expected = _simulated(name, simulated)
    k = problem.n_experts
    for replication in range(REPLICATIONS):
        session = Session.for_problem(problem, replication)
        env_params, env_state = session.environment
        pool = session.pool()
        begin_round(env_params, env_state, 0)
        losses, rates, updates = python_loop.warm_start_pool(pool, np.array([session.identity_order]))
        by_pool = np.empty((3, k))
        by_pool[:, session.identity_order] = losses[0], rates[0], updates[0]
        session.warm_start(by_pool[0], by_pool[1], by_pool[2].astype(int).tolist())
        for t in range(1, HORIZON + 1):
            begin_round(env_params, env_state, t)
            train, deployed = session.select(t)
            shown = train if deployed < 0 else [deployed]
            out = np.zeros((2, 1, len(shown)))
            pool.deploy(t, np.array([shown]), np.array([len(shown)]), out[0], out[1])
            session.deployed(
                out[0, 0] if deployed < 0 else out[0, 0, 0], out[1, 0] if deployed < 0 else out[1, 0, 0]
            )
            if train:
                trained = np.zeros((2, 1, len(train)))
                pool.train(t, np.array([train]), np.array([len(train)]), trained[0], trained[1])
                for j, expert in enumerate(train):
                    session.trained(expert, trained[0, 0, j], trained[1, 0, j])
            session.end()
        assert session.regret == expected["regret"][replication]
        np.testing.assert_array_equal(
            session.counts, expected["trained"][replication * k : (replication + 1) * k]
        )


def test_a_horizon_given_to_the_environment_is_refused_naming_its_home():
    """The run's horizon lives in the setting alone: a stream that has no horizon of its own says
    where it goes (before: ``env_params`` carried a second horizon, which only the command line
    kept equal to the run's)."""
    with pytest.raises(TypeError) as raised:
        mlcb.simulate(preset="ctg", env_params={"horizon": 300}, horizon=300, replications=1)
    assert "RealDataEnv has no parameter 'horizon'" in str(raised.value)
    assert "(the horizon is the setting's own: horizon=... in Python" in str(raised.value)


def _csv(path: Path) -> Path:
    """A small two-class CSV file at ``path``."""
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{c:.3f},{int(a + b > 1)}" for a, b, c in rng.random((40, 3))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a,b,c,y\n" + "\n".join(rows) + "\n")
    return path


def test_a_setting_files_data_path_is_read_from_its_folder(tmp_path, monkeypatch):
    """A relative ``dataset`` in a setting or grid file means the file beside it, wherever the
    command runs (it was read from the working directory: the same file meant other data, or none,
    from another folder); ``~`` is the home folder. A path given on the command line stays the
    working directory's."""
    from mlcb.config.toml import load_toml
    from mlcb.sweeps.grid import load_grid
    from mlcb.validation import InputError

    study = tmp_path / "study"
    data = _csv(study / "data" / "mine.csv")
    setting = study / "setting.toml"
    setting.write_text(
        'env = "mlcb/RealData-v0"\nhorizon = 30\nenv_params = { dataset = "data/mine.csv", label = "y" }\n'
        '[[experts]]\nfamily = "perceptron"\ncount = 2\n'
    )
    grid = study / "grid.toml"
    grid.write_text(
        'preset = "ctg"\nhorizon = 30\nreplications = 1\n"env_params.label" = "y"\n'
        '[grid]\n"env_params.dataset" = ["data/mine.csv", "~/elsewhere.csv"]\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _csv(tmp_path / "home" / "elsewhere.csv")
    _, (config,) = load_toml(setting)
    assert config.env_params["dataset"] == str(data)
    settings = load_grid(grid).settings
    assert [s.config.env_params["dataset"] for s in settings] == [
        str(data),
        str(tmp_path / "home" / "elsewhere.csv"),
    ]
    # given with the command line's --data, a relative path is the working directory's
    _csv(elsewhere / "data" / "mine.csv")
    _, (given,) = load_toml(setting, env_params={"dataset": "data/mine.csv"})
    assert given.env_params["dataset"] == "data/mine.csv"
    data.unlink()
    with pytest.raises(InputError, match=re.escape(f"dataset: no such file '{data}'")):
        mlcb.simulate(load_toml(setting)[1][0])
    # a bare name (no separator, no suffix) of a file beside the setting file is that file, even
    # where the working directory holds one of that name; a bundled name stays the bundled data
    bare = _csv(study / "mydata")
    _csv(elsewhere / "mydata")
    for name, read in (("mydata", str(bare)), ("ctg", "ctg"), ("nodata", "nodata")):
        setting.write_text(
            f'env = "mlcb/RealData-v0"\nhorizon = 30\nenv_params = {{ dataset = "{name}", label = "y" }}\n'
            '[[experts]]\nfamily = "perceptron"\ncount = 2\n'
        )
        assert load_toml(setting)[1][0].env_params["dataset"] == read, name
