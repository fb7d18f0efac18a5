"""Pools of torch mixture-of-experts networks: masked updates, reference steps, the per-member
adapter, the clustered stream, the preset and life without torch."""

from __future__ import annotations

import dataclasses
import fractions
import math
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import envs
import mlcb
from envs.clustered import _begin_round, bayes_loss, regression_expected_loss
from mlcb.engine.batch import Batch
from mlcb.kernels.seeding import stream_keys

torch = pytest.importorskip("torch")

from agents.moe import (  # noqa: E402
    TORCH_MESSAGE,
    ModuleExpert,
    MoEExpert,
    MoEPool,
    TorchLearner,
    moe_network,
)

MIXED = [
    MoEExpert(n_experts=1, top_k=1, hidden=4, lr=0.05, weight_decay=0.01),
    MoEExpert(n_experts=4, top_k=2, hidden=8, lr=0.01),
    MoEExpert(n_experts=3, top_k=1, hidden=6, lr=0.02, optimizer="sgd", weight_decay=0.001),
    MoEExpert(n_experts=2, top_k=2, hidden=8, lr=0.003, weight_decay=0.1),
]


def _f64(experts, **changes):
    return [e.__class__(**{**e.__dict__, "dtype": "float64", "device": "cpu", **changes}) for e in experts]


def _pool(experts, task="regression", replications=2, smoothing="ema"):
    env = envs.make("mlcb/Clustered-v0", task=task, holdout=16)
    built = [env.build(0, r, 100) for r in range(replications)]
    batch = Batch(
        env=env,
        replications=list(range(replications)),
        env_params=[b[0] for b in built],
        env_states=[b[1] for b in built],
        expert_keys=[stream_keys(0, r, len(experts)).experts for r in range(replications)],
        deploy_keys=np.zeros(replications, dtype=np.uint64),
        seed=0,
        horizon=100,
    )
    return env, built, MoEPool(experts, env, batch, 0.1, smoothing)


def _train(pool, built, t, selected):
    for params, state in built:
        _begin_round(params, state, t)
    selected = np.asarray(selected, dtype=np.int64)
    counts = (selected >= 0).sum(axis=1)
    losses, rates = np.zeros(selected.shape), np.zeros(selected.shape)
    pool.train(t, selected, counts, losses, rates)
    return losses


def _state(pool):
    group = pool.groups[0]
    return [tensor.clone() for tensor in (group.flat, group.first, group.second, group.average)]


# --- masked updates ----------------------------------------------------------------------------
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_untrained_members_stay_bit_identical_optimizer_state_included(task):
    _, built, pool = _pool(MIXED, task=task)
    for t in range(1, 6):  # every member has taken steps: moments and averages are non-zero
        _train(pool, built, t, [[0, 1, 2, 3], [0, 1, 2, 3]])
    before, steps = _state(pool), pool.steps.copy()
    trained = {(0, 1), (0, 3), (1, 0)}
    for t in range(6, 12):
        _train(pool, built, t, [[1, 3], [0, -1]])
    after = _state(pool)
    for r in range(2):
        for k in range(4):
            same = [torch.equal(a[r, k], b[r, k]) for a, b in zip(before, after)]
            if (r, k) in trained:
                assert not any(same[:1]) and not same[3], (r, k)
                assert pool.steps[r, k] == steps[r, k] + 6
            else:
                assert all(same), (r, k)
                assert pool.steps[r, k] == steps[r, k]


def _unpadded(pool, r, k, spec):
    group = pool.groups[0]
    named = group.layout.unflatten(group.flat[r, k])
    e, h = spec.n_experts, spec.hidden
    cut = {"gate_w": (slice(None), slice(0, e)), "gate_b": (slice(0, e),), "w1": (slice(0, e), slice(None), slice(0, h)),
           "b1": (slice(0, e), slice(0, h)), "w2": (slice(0, e), slice(0, h)), "b2": (slice(0, e),)}  # fmt: skip
    return {name: value[cut[name]].detach().clone() for name, value in named.items()}


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_trained_step_equals_an_unbatched_torch_optim_step(task):
    experts = _f64(MIXED)
    env, built, pool = _pool(experts, task=task)
    d, o = env.input_dim, env.output_dim
    references = {}
    for k, spec in enumerate(experts):
        net = moe_network(spec, d, o, _unpadded(pool, 1, k, spec))
        optimizer = (torch.optim.Adam if spec.optimizer == "adam" else torch.optim.SGD)(
            net.parameters(), lr=spec.lr, weight_decay=spec.weight_decay
        )
        references[k] = (net, optimizer)
    for t in range(1, 8):
        selection = [[0, 1, 2, 3], [0, 1, 2, 3]] if t < 4 else [[0, 1, -1, -1], [t % 4, (t + 1) % 4, -1, -1]]
        losses = _train(pool, built, t, selection)
        x = torch.as_tensor(built[1][1].x[None])
        y = torch.as_tensor(built[1][1].y)
        for j, k in enumerate(k for k in selection[1] if k >= 0):
            net, optimizer = references[k]
            out, aux = net(x)
            if task == "regression":
                smooth = ((out[:, 0] - y) / env.scale) ** 2
            else:
                q = torch.softmax(out, dim=-1)
                smooth = 0.5 * ((q - torch.nn.functional.one_hot(y.long(), o)) ** 2).sum(-1)
            assert losses[1, j] == pytest.approx(min(1.0, float(smooth.detach()[0])), abs=1e-12)
            optimizer.zero_grad()
            (smooth.sum() + experts[k].balance * aux).backward()
            optimizer.step()
    for k, spec in enumerate(experts):
        mine = _unpadded(pool, 1, k, spec)
        for name, value in references[k][0].named_parameters():
            torch.testing.assert_close(mine[name], value.detach(), rtol=1e-10, atol=1e-12)


def test_vmap_backend_gives_the_same_steps_as_grouped_matmuls():
    states = []
    for backend in ("bmm", "vmap"):
        _, built, pool = _pool(_f64(MIXED, backend=backend))
        for t in range(1, 6):
            _train(pool, built, t, [[0, 1, 2, 3], [1, 2, -1, -1]])
        states.append(_state(pool))
    for a, b in zip(*states):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


# --- the batched pool against the members one by one -------------------------------------------
def _small_module(input_dim, output_dim):
    return torch.nn.Sequential(torch.nn.Linear(input_dim, 8), torch.nn.Tanh(), torch.nn.Linear(8, output_dim))


POOLS = {
    "moe": _f64(MIXED),
    "module": [
        ModuleExpert(factory=_small_module, lr=0.01, device="cpu", dtype="float64"),
        ModuleExpert(factory=_small_module, lr=0.05, optimizer="sgd", device="cpu", dtype="float64"),
        *_f64(MIXED[:2]),
    ],
}


@pytest.mark.parametrize("smoothing", ["ema", "last"])
@pytest.mark.parametrize("pool", sorted(POOLS))
def test_batched_pool_equals_members_one_by_one_through_the_python_adapter(pool, smoothing):
    experts = POOLS[pool]
    settings = dict(env="mlcb/Clustered-v0", env_params={"holdout": 16, "task": "classification" if pool == "module" else "regression"},
                    budget=2, horizon=60, replications=2, seed=4)  # fmt: skip
    batched = mlcb.simulate(experts=experts, smoothing=smoothing, **settings)
    adapters = [TorchLearner(e, smoothing) for e in experts]
    single = mlcb.simulate(experts=adapters, **settings)
    assert batched.metadata["settings"]["mlcb M=2"]["family"] == "moe"
    for column in ("regret", "pseudo_regret"):
        np.testing.assert_allclose(batched.curves[column], single.curves[column], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(batched.experts["trained"], single.experts["trained"])


def test_the_one_member_adapter_refuses_what_it_cannot_run_before_any_round():
    """TorchLearner took any spec and smoothing it was given, and met another stream, a device
    torch does not see or a module that does not fit only in its first training step: 'learn
    raised AttributeError: 'GLMEnvParams' object has no attribute 'holdout_target''."""
    with pytest.raises(ValueError, match=re.escape("spec must be an MoEExpert or a ModuleExpert, got None")):
        TorchLearner(None)
    with pytest.raises(
        ValueError,
        match=re.escape("smoothing must be one of ('ema', 'last'), got 'Ema' (did you mean 'ema'?)"),
    ):
        TorchLearner(MoEExpert(), "Ema")
    wide = ModuleExpert(factory=lambda i, o: torch.nn.Linear(i, o + 1), device="cpu")
    cases = [
        ("mlcb/GLM-v0", MoEExpert(device="cpu"),
         "TorchLearner of MoEExpert: torch networks run on the clustered stream (mlcb/Clustered-v0); GLMEnv has no 'input_dim'"),
        ("mlcb/Clustered-v0", wide, "TorchLearner of ModuleExpert: the module must map (B, 4) to (B, 1), got output "
         "shape (2, 2)"),
    ]  # fmt: skip
    if not torch.cuda.is_available():
        cases.append(
            ("mlcb/Clustered-v0", MoEExpert(device="cuda"), "TorchLearner of MoEExpert: device 'cuda' was asked for "
             "but torch sees no CUDA device; use 'auto' or 'cpu'")
        )  # fmt: skip
    for env, spec, message in cases:
        learners = [TorchLearner(spec), TorchLearner(MoEExpert(device="cpu"))]
        with pytest.raises(ValueError, match=re.escape(message) + "$"):
            mlcb.simulate(env=env, experts=learners, budget=1, horizon=5, replications=1)


class _NoBias(torch.nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.linear = torch.nn.Linear(input_dim, output_dim, bias=False)

    def forward(self, x):
        return self.linear(x)


class _Penalised(_NoBias):
    """An L2 penalty of 0.3 on the weights, as the aux beside the outputs."""

    def forward(self, x):
        return self.linear(x), 0.5 * 0.3 * (self.linear.weight**2).sum()


def test_the_aux_a_module_returns_is_added_to_its_training_loss():
    """ModuleExpert says the scalar aux a module returns beside its outputs is added to the
    training loss, but the batched pool and TorchLearner weighted it by a balance the member does
    not have (0): a module with a penalty trained exactly as one without. A penalty of 0.3 on the
    weights now trains as SGD's weight decay of 0.3, in the pool and one by one."""
    settings = dict(
        env="mlcb/Clustered-v0", policy="full-budget", budget=1, horizon=10, replications=1, seed=1
    )
    member = dict(optimizer="sgd", lr=0.05, device="cpu", dtype="float64")
    decayed = ModuleExpert(factory=_NoBias, weight_decay=0.3, **member)
    penalised = ModuleExpert(factory=_Penalised, **member)
    plain = ModuleExpert(factory=_NoBias, **member)
    for wrap in (list, lambda pool: [TorchLearner(e) for e in pool]):
        curves = [
            mlcb.simulate(experts=wrap([e, e]), **settings).curves["pseudo_regret"]
            for e in (decayed, penalised, plain)
        ]
        np.testing.assert_allclose(curves[0], curves[1], rtol=1e-12)
        assert not np.allclose(curves[1], curves[2], rtol=1e-6)


def test_a_factory_that_returns_one_module_every_time_shares_no_weights():
    """ModuleExpert(factory=lambda i, o: net) trained the user's own net in place in the one-member
    adapter, one set of weights for every member and replication (results unlike the pool's), and
    the pool turned the user's net to float64."""
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    before = [p.detach().clone() for p in net.parameters()]
    spec = ModuleExpert(factory=lambda i, o: net, device="cpu", dtype="float64")
    settings = dict(env="mlcb/Clustered-v0", budget=1, horizon=20, replications=2, seed=0)
    batched = mlcb.simulate(experts=[spec, spec], **settings)
    single = mlcb.simulate(experts=[TorchLearner(spec), TorchLearner(spec)], **settings)
    np.testing.assert_allclose(batched.curves["regret"], single.curves["regret"], rtol=1e-9, atol=1e-9)
    assert all(p.dtype == torch.float32 and torch.equal(p, b) for p, b in zip(net.parameters(), before))


# --- the stream ----------------------------------------------------------------------------------
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_gymnasium_env_reproduces_the_engines_stream(task):
    env = envs.make("mlcb/Clustered-v0", task=task)
    params, state = env.build(3, 2, 100)
    observation, _ = env.reset(seed=3, options={"replication": 2})
    for t in range(1, 30):
        _begin_round(params, state, t)
        np.testing.assert_array_equal(observation, state.x)
        prediction = np.full(env.output_dim, 1.0 / env.output_dim)
        observation, reward, *_, info = env.step(prediction)
        assert info["y"] == state.y[0]
        assert 0.0 <= -reward <= 1.0
    assert env.optimal_loss(params, 0) == bayes_loss(
        env.task, env.noise, env.scale, env.label_noise, env.n_classes
    )


def test_regression_bayes_loss_and_expected_loss_match_monte_carlo():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(400_000)
    for error, noise in ((0.0, 0.1), (0.3, 0.5), (1.2, 0.4)):
        sampled = np.minimum(1.0, (error - noise * z) ** 2).mean()
        assert regression_expected_loss(np.array([error]), noise, 1.0)[0] == pytest.approx(sampled, abs=3e-3)
    assert bayes_loss(0, 0.1, 1.0, 0.0, 2) == pytest.approx(0.01, rel=1e-6)


def test_classification_targets_and_bayes_loss():
    env = envs.make("mlcb/Clustered-v0", task="classification", label_noise=0.3, n_classes=3)
    params, state = env.build(0, 0, 100)
    np.testing.assert_allclose(params.holdout_target.sum(axis=1), 1.0)
    labels = []
    for t in range(1, 4001):
        _begin_round(params, state, t)
        p = env.targets(params, state.x)[0]
        labels.append(p[int(state.y[0])])
    # the label is the clean class with probability 0.7 + 0.3 / 3
    assert np.mean(np.isclose(labels, 0.8)) == pytest.approx(0.8, abs=0.03)
    assert env.optimal_loss(params, 0) == pytest.approx(0.5 * (1 - 0.8**2 - 2 * 0.1**2))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"task": "ranking"}, "task must be one of"),
        ({"dim": 0}, "dim must be an integer >= 1"),
        ({"label_noise": 1.5}, r"label_noise must be a number in \[0.0, 1.0\]"),
        ({"spread": 0}, r"spread must be a number in \(0.0"),
    ],
)
def test_clustered_env_rejects_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        envs.make("mlcb/Clustered-v0", **params)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"top_k": 3, "n_experts": 2}, "top_k must be in [1, n_experts=2], got 3"),
        ({"lr": 0}, "lr must be a finite number > 0, got 0"),
        # the range the message gave, (0, inf], held inf, which was refused
        ({"lr": math.inf}, "lr must be a finite number > 0, got inf"),
        ({"weight_decay": -1.0}, "weight_decay must be a finite number >= 0, got -1.0"),
        ({"beta": math.nan}, "beta must be a finite number > 0, got nan"),
        ({"ema": 2}, "ema must be a number in [0, 1], got 2"),
        # a bool was taken for 1 by balance and init_scale (True is an int to Python)
        ({"balance": True}, "balance must be a finite number >= 0, got True"),
        ({"init_scale": np.True_}, "init_scale must be a finite number > 0, got np.True_"),
        (
            {"optimizer": "Adam"},
            "optimizer must be one of ('adam', 'sgd'), got 'Adam' (did you mean 'adam'?)",
        ),
        ({"backend": "jit"}, "backend must be one of ('bmm', 'vmap'), got 'jit'"),
        ({"dtype": "float16"}, "dtype must be one of ('float32', 'float64'), got 'float16'"),
        ({"threads": 0}, "threads must be an integer >= 1, got 0"),
        # refused when the member is made, not when a pool is first built
        ({"device": "mps"}, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'mps'"),
        ({"device": None}, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got None"),
        ({"device": "cuda:x"}, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'cuda:x'"),
    ],
)
def test_moe_expert_rejects_bad_parameters(params, message):
    with pytest.raises(ValueError, match=re.escape(message) + "$"):
        MoEExpert(**params)
    if "top_k" not in params:  # the fields a module of one's own shares are checked the same way
        shared = {f.name for f in dataclasses.fields(ModuleExpert)}
        if set(params) <= shared:
            with pytest.raises(ValueError, match=re.escape(message) + "$"):
                ModuleExpert(factory=_small_module, **params)


def test_numbers_of_any_real_type_are_taken_and_kept_as_python_floats():
    """A NumPy float32 step size (a sweep over np.linspace(...).astype(np.float32)) was refused as
    'lr must be a number in (0, inf], got np.float32(0.01)'; torch's device and dtype objects were
    refused though they name what the strings name."""
    expert = MoEExpert(
        lr=np.float32(0.25), balance=fractions.Fraction(1, 4), ema=np.float64(0.5), n_experts=np.int64(2),
        device=torch.device("cpu"), dtype=torch.float64,
    )  # fmt: skip
    assert (expert.lr, expert.balance, expert.ema, expert.n_experts) == (0.25, 0.25, 0.5, 2)
    assert all(type(value) in (int, float) for value in (expert.lr, expert.balance, expert.ema))
    assert (expert.device, expert.dtype) == ("cpu", "float64")
    assert MoEExpert(device=torch.device("cuda", 1)).device == "cuda:1"
    # ints and floats are kept as given: the setting's key is made from the fields as they are
    assert type(MoEExpert(lr=1).lr) is int
    module = ModuleExpert(factory=_small_module, lr=np.float32(0.5), device=torch.device("cpu"))
    assert (type(module.lr), module.device) == (float, "cpu")
    with pytest.raises(ValueError, match=re.escape("architecture must be a string of printable characters")):
        ModuleExpert(factory=_small_module, architecture="two\nlines")
    long = ModuleExpert(factory=_small_module, architecture="x" * 500)  # a factory's name may be long
    assert dataclasses.replace(long, device="cpu").architecture == "x" * 500


def test_pool_rejects_other_streams_and_mixed_devices():
    with pytest.raises(ValueError, match="run on the clustered stream"):
        mlcb.engine.build(mlcb.SimulationConfig(env="mlcb/GLM-v0", experts=(MoEExpert(),) * 2, budget=1))
    with pytest.raises(ValueError, match="one dtype"):
        mlcb.engine.build(
            mlcb.SimulationConfig(
                env="mlcb/Clustered-v0", experts=(MoEExpert(), MoEExpert(dtype="float64")), budget=1
            )
        )
    with pytest.raises(ValueError, match="no CUDA device|device"):
        mlcb.engine.build(
            mlcb.SimulationConfig(
                env="mlcb/Clustered-v0", experts=(MoEExpert(device="cuda:7"),) * 2, budget=1
            )
        )


# --- the preset ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_moe_preset_regret_is_sublinear_and_mlcb_trains_the_capable_members_more():
    horizon = 2_000
    result = mlcb.simulate(preset="moe", budget=2, horizon=horizon, replications=2, seed=0)
    settings = result.metadata["settings"]["mlcb M=2"]
    assert settings["certificate_valid"] is False and settings["family"] == "moe"
    curve = result.curves.groupby("round")["pseudo_regret"].mean()
    last = curve[curve.index >= horizon // 10]
    slope = np.polyfit(np.log(last.index.values), np.log(last.values), 1)[0]
    assert slope < 0.9
    trained = result.experts.groupby(["round", "expert"])["trained"].mean().unstack()
    capable = [k for k, e in enumerate(presets_experts()) if e.n_experts >= 4]
    share = trained[capable].sum(axis=1) / trained.sum(axis=1)
    early = share[share.index >= horizon // 10].iloc[0]
    assert share.iloc[-1] > early + 0.1


def presets_experts():
    from mlcb import presets

    return presets.get("moe").config(2).experts


def test_cli_device_option(tmp_path, capsys):
    from mlcb.cli import main

    code = main(
        [
            "run",
            "moe",
            "-M",
            "1",
            "-T",
            "20",
            "-R",
            "1",
            "--device",
            "cpu",
            "--no-plot",
            "-q",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    assert main(["run", "glm", "-T", "5", "-R", "1", "--device", "cpu", "--out", str(tmp_path)]) == 2
    assert "--device applies to pools of torch networks" in capsys.readouterr().err


@pytest.mark.parametrize("device", ["mps", "meta", "nope", ""])
def test_a_device_mlcb_does_not_run_on_is_refused_in_one_line(device, tmp_path, capsys):
    """torch.device("mps") exists, and failed later as "a bug in mlcb" on a build without it."""
    from mlcb.cli import main

    argv = ["run", "moe", "-T", "5", "-R", "1", "--device", device, "--no-plot", "-q", "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"mlcb: error: device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}\n"


def test_a_cuda_index_beyond_the_devices_is_refused(monkeypatch):
    import torch

    from agents.moe import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0").index == 0
    with pytest.raises(
        ValueError, match=re.escape("device 'cuda:7': torch sees 1 CUDA device(s), cuda:0 to cuda:0")
    ):
        resolve_device("cuda:7")


# --- without torch -------------------------------------------------------------------------------
def test_without_torch_one_line_message_and_everything_else_works(tmp_path):
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # import torch now raises ImportError
        import mlcb, agents.moe
        from mlcb.cli import main
        try:
            mlcb.simulate(preset="moe", budget=1, horizon=5, replications=1)
        except ImportError as error:
            assert str(error) == {TORCH_MESSAGE!r}, error
        else:
            raise SystemExit("no error")
        assert main(["run", "moe", "-T", "5", "-R", "1", "--out", {str(tmp_path)!r}]) == 2
        adapters = [agents.moe.TorchLearner(agents.moe.MoEExpert())] * 2
        try:  # the one-member adapter says the same, before any round
            mlcb.simulate(env="mlcb/Clustered-v0", experts=adapters, budget=1, horizon=5, replications=1)
        except ImportError as error:
            assert str(error) == {TORCH_MESSAGE!r}, error
        else:
            raise SystemExit("no error from the adapter")
        result = mlcb.simulate(preset="glm", budget=1, horizon=50, replications=1)
        assert result.summary()["regret"].notna().all()
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert out.stderr.strip().splitlines() == [f"mlcb: error: {TORCH_MESSAGE}"]


def test_the_defaults_the_page_states_are_the_members_defaults():
    """docs/moe.md wrote MoEExpert's signature with placeholders and without init_scale; it now
    states the defaults (the first of two choices), and they must stay the dataclass's."""
    from pathlib import Path

    page = (Path(__file__).parents[1] / "docs" / "moe.md").read_text(encoding="utf-8")
    signature = re.search(r"`MoEExpert\((.*?)\)`", page, re.S).group(1)
    stated = dict(item.strip().split("=", 1) for item in signature.replace("\n", " ").split(","))
    defaults = {f.name: f.default for f in dataclasses.fields(MoEExpert)}
    assert set(stated) == set(defaults)
    for name, text in stated.items():
        first = text.split("|")[0].strip('"')
        assert type(defaults[name])(first) == defaults[name], name


def test_readme_own_module_example_runs(capsys):
    from tests.test_readme import _example

    namespace: dict = {"__name__": "readme_example"}
    exec(compile(_example("own-module"), "docs/moe.md", "exec"), namespace)  # noqa: S102 (the project's own docs)
    result = namespace["result"]
    assert result.metadata["settings"]["mlcb M=2"]["family"] == "moe"
    assert result.metadata["settings"]["mlcb M=2"]["reference"] == "the Bayes loss of the stream"
    assert result.summary()["pseudo_regret"].notna().all()
    assert "pseudo_regret" in capsys.readouterr().out


def test_networks_beyond_memory_are_refused_before_anything_is_built(monkeypatch):
    """MoEExpert(hidden=10**7) went on to torch's allocator ("can't allocate memory", reported as
    a bug in mlcb on the command line). The estimate counts the peak of a training step and the
    hidden units of a deployed network on the held-out points (every sub-expert is evaluated)."""
    import mlcb
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 10**9)
    pool = [MoEExpert(hidden=10**7), MoEExpert()]
    with pytest.raises(
        ValueError, match=re.escape("experts: this setting needs about 89.9 GB of memory (2 mixture")
    ):
        mlcb.engine.build(
            mlcb.SimulationConfig(
                env="mlcb/Clustered-v0", experts=tuple(pool), budget=1, horizon=5, replications=1
            )
        )
    mlcb.engine.build(
        mlcb.SimulationConfig(
            env="mlcb/Clustered-v0", experts=(MoEExpert(), MoEExpert()), budget=1, horizon=5
        )
    )

    class Constant:  # a Python learner beside one network: a pool that mixes families
        def learn(self, data):
            return 0.5

        def deploy(self, data):
            return 0.5

    mixed = (MoEExpert(hidden=10**7), Constant())
    with pytest.raises(
        ValueError,
        match=re.escape(
            "experts: this setting needs about 86.1 GB of memory (1 mixture-of-experts network of"
        ),
    ):
        mlcb.engine.build(
            mlcb.SimulationConfig(env="mlcb/Clustered-v0", experts=mixed, budget=1, horizon=5, replications=1)
        )


def test_the_memory_check_counts_the_replications_run_at_once_in_one_pool(monkeypatch):
    """The check counted one replication, but the engine runs up to 16 in one pool: a setting
    that fit once passed and then failed in torch's allocator (under a 8 GB limit, two members of
    2,000 sub-experts of width 2,000 at R = 16)."""
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 10**9)
    pool = (MoEExpert(n_experts=64, hidden=1024),) * 2

    def build(replications):
        config = mlcb.SimulationConfig(
            env="mlcb/Clustered-v0", experts=pool, budget=1, horizon=5, replications=replications
        )
        return mlcb.engine.build(config)

    build(4)  # about 0.6 GB
    message = (
        "for one replication; 16 replications run at once, in one pool), more than this machine's 1.0 GB"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        build(40)  # blocks of 16


def test_a_module_of_ones_own_that_fails_is_named_before_any_work():
    """A factory or module that raised anything but a ValueError escaped as it was (a
    ZeroDivisionError here); a wrong output shape and a factory returning no module are named."""
    import torch

    import mlcb
    from agents.moe import ModuleExpert

    def fields(factory):
        good = ModuleExpert(lambda i, o: torch.nn.Linear(i, o))
        return dict(env="mlcb/Clustered-v0", experts=(ModuleExpert(factory), good), budget=1, horizon=5)

    cases = [
        (lambda i, o: 1 / 0, "experts[0]: building the module and running it on a batch of zeros raised "
         "ZeroDivisionError: division by zero"),
        (lambda i, o: torch.nn.Linear(i, o + 1), "experts[0]: the module must map (B, 4) to (B, 1), got output shape (2, 2)"),
        (lambda i, o: None, "experts[0]: factory must return a torch.nn.Module, got NoneType"),
    ]  # fmt: skip
    for factory, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            mlcb.engine.build(mlcb.SimulationConfig(**fields(factory)))


class _Returns(torch.nn.Module):
    """A linear module whose forward returns ``self.shape(outputs)``."""

    def __init__(self, input_dim, output_dim, shape):
        super().__init__()
        self.linear, self.shape = torch.nn.Linear(input_dim, output_dim), shape

    def forward(self, x):
        return self.shape(self.linear(x))


def test_a_module_the_pool_cannot_train_is_named_before_any_work():
    """Modules that passed the check on a batch of zeros and then stopped the run in its first
    training step (a RuntimeError from torch.func.vmap, reported as a bug of mlcb on the command
    line): dropout (a random operation), .item(); or that trained wrongly without a word: an aux
    of one value per sample was broadcast against the members' losses."""
    import functools

    cases = [
        (lambda y: torch.nn.functional.dropout(y, 0.5),
         "experts[0]: the pool runs the module under torch.func.vmap, which raised RuntimeError: vmap: called random operation while in randomness error mode."),
        (lambda y: y * y.sum().item(), "experts[0]: the pool runs the module under torch.func.vmap, which raised "
         "RuntimeError: vmap: It looks like you're calling .item() on a Tensor."),
        (lambda y: (y, y.sum(-1)), "experts[0]: the aux the module returns beside its outputs must be a scalar, got shape (2,)"),
        (lambda y: (y, 0.0, 1.0), "experts[0]: the module must return a tensor of outputs or a pair (outputs, aux), got a tuple of 3"),
        (lambda y: [y], "experts[0]: the module must return a tensor of outputs or a pair (outputs, aux), got a list"),
    ]  # fmt: skip
    good = ModuleExpert(functools.partial(_Returns, shape=lambda y: (y, 0.0)), device="cpu")
    for shape, message in cases:
        spec = ModuleExpert(functools.partial(_Returns, shape=shape), device="cpu")
        config = mlcb.SimulationConfig(env="mlcb/Clustered-v0", experts=(spec, good), budget=1, horizon=5)
        with pytest.raises(ValueError, match=re.escape(message)):
            mlcb.engine.build(config)
    mlcb.engine.build(
        mlcb.SimulationConfig(env="mlcb/Clustered-v0", experts=(good, good), budget=1, horizon=5)
    )


def test_a_setting_file_names_moe_members_as_the_page_shows(tmp_path):
    """``family = "moe"`` in a TOML setting file (the page's example): the members it names, with
    their parameters, on the clustered stream; an unknown parameter is named."""
    from pathlib import Path

    from mlcb.config.toml import load_toml

    page = (Path(__file__).resolve().parent.parent / "docs" / "moe.md").read_text()
    (block,) = re.findall(r"```toml\n(.*?)```", page, flags=re.DOTALL)
    path = tmp_path / "members.toml"
    path.write_text(block)
    _, (config,) = load_toml(path)
    assert config.env == "mlcb/Clustered-v0"
    assert config.experts == (MoEExpert(n_experts=1, hidden=4, lr=0.05), MoEExpert(n_experts=8, hidden=32))
    path.write_text(block.replace("hidden = 32", "hiden = 32"))
    with pytest.raises(ValueError, match="hiden"):
        load_toml(path)
