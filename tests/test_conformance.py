"""Every registered policy through the same checks (Gymnasium's check_env / river's checks idea)."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest

from mlcb import engine, policies, presets
from mlcb.testing.twins import core as twin

# Each policy module brings a pure-Python twin; importing registers it.
for _module in (
    "mlcb.testing.twins.limited_corral",
    "mlcb.testing.twins.balancing",
    "mlcb.testing.twins.references",
    "mlcb.testing.twins.practitioners",
):
    importlib.import_module(_module)

NAMES = policies.names()
SMALL_TRAP = {"env_params": {"n_experts": 6, "n_arms": 2}}


def _config(name: str, budget: int, seed: int = 1, horizon: int = 600, **fields):
    return presets.get("trap").config(budget, policy=name, seed=seed, horizon=horizon, **SMALL_TRAP, **fields)


def _run(config, replication: int = 0):
    grid = np.arange(1, config.horizon + 1)
    return engine.run_replication(
        engine.build(config),
        config.seed,
        replication,
        config.horizon,
        grid,
        trace_rounds=config.horizon,
    )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("budget", [1, 3])
def test_budget_and_deployment_are_valid(name, budget):
    config = _config(name, budget)
    policy = engine.build(config).policy
    size = engine.selection_size(policy, config.n_experts, budget)
    assert size == budget or name == "full-budget"
    result = _run(config)
    for row, deployed in zip(result.trace_selected, result.trace_deployed):
        chosen = row[row >= 0]
        assert 1 <= len(chosen) <= size
        assert len(set(chosen.tolist())) == len(chosen)
        assert np.all((chosen >= 0) & (chosen < config.n_experts))
        assert deployed == -1 or 0 <= deployed < config.n_experts
    warm = config.n_experts if getattr(policy, "warm_start", True) else 0
    assert result.trained[-1].sum() == warm + (result.trace_selected >= 0).sum()
    assert np.all(np.isfinite(result.regret)) and np.all(np.isfinite(result.pseudo_regret))
    assert np.all(np.diff(result.pseudo_regret) >= -1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_a_seed(name):
    config = _config(name, 2)
    first, second = _run(config), _run(config)
    np.testing.assert_array_equal(first.trace_selected, second.trace_selected)
    np.testing.assert_array_equal(first.trace_deployed, second.trace_deployed)
    np.testing.assert_array_equal(first.regret, second.regret)


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_glm_stream(name):
    config = presets.get("glm").config(2, policy=name, horizon=150, smoothing="last")
    result = _run(config)
    assert np.all(np.isfinite(result.pseudo_regret))


@pytest.mark.parametrize("name", NAMES)
def test_has_a_twin(name):
    assert type(policies.make(name)) in twin.POLICIES


def _bad_values(field: dataclasses.Field):
    default = field.default
    if isinstance(default, bool) or default is None or default is dataclasses.MISSING:
        return []
    if isinstance(default, str):
        return ["not-a-choice"]
    if isinstance(default, (int, float)):
        return [-1, float("nan")]
    return []


CASES = [
    (name, field.name, value)
    for name in NAMES
    for field in dataclasses.fields(policies.make(name))
    for value in _bad_values(field)
]


@pytest.mark.parametrize(("name", "field", "value"), CASES)
def test_bad_parameters_are_refused_by_name(name, field, value):
    with pytest.raises(ValueError, match=field):
        policies.make(name, **{field: value})


@pytest.mark.parametrize("name", NAMES)
def test_unknown_parameter_is_refused(name):
    with pytest.raises(TypeError, match="no_such_parameter"):
        policies.make(name, no_such_parameter=1)


@pytest.mark.parametrize("name", NAMES)
def test_documented(name):
    policy = policies.make(name)
    doc = type(policy).__doc__ or ""
    assert len(doc) > 200, f"{name}: the class docstring should cite its paper and state its parameters"
    assert "Parameters" in doc
