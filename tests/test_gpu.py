"""Torch MoE pools on a GPU, and the script that checks them there (benchmarks/gpu_check.sh).

Tests marked ``gpu`` compare a pool on the device under test with the same pool on the CPU
(same seeds) and check that ``device="auto"`` picks CUDA. They run where torch sees a CUDA device
and are skipped elsewhere; ``MLCB_REQUIRE_CUDA=1`` turns that skip into a failure (the GPU check
sets it, so that a GPU run cannot pass by skipping), and ``MLCB_TEST_DEVICE=cpu`` runs them with
the CPU standing in for the GPU: a rehearsal of the test code itself, whose comparisons are then
trivially equal. The other tests run everywhere: the script parses, and what it calls exists and
accepts the arguments it is given.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

import mlcb
from tests.scripts import benchmark

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_check.sh"
HAS_TORCH = find_spec("torch") is not None
#: The device under test: CUDA, or the CPU for a rehearsal of these tests.
DEVICE = os.environ.get("MLCB_TEST_DEVICE", "cuda")


def _bench():
    """``benchmarks/bench_moe.py`` as a module."""
    return benchmark("bench_moe")


def _runs_here() -> bool:
    if not HAS_TORCH:
        return False
    import torch

    return DEVICE == "cpu" or torch.cuda.is_available() or bool(os.environ.get("MLCB_REQUIRE_CUDA"))


def on_device(test):
    """Mark ``test`` as a GPU test, skipped where it cannot run (see the module's docstring)."""
    reason = "torch sees no CUDA device (MLCB_TEST_DEVICE=cpu rehearses these tests on the CPU)"
    return pytest.mark.gpu(pytest.mark.skipif(not _runs_here(), reason=reason)(test))


def _mixed(**changes) -> list:
    from agents.moe import MoEExpert
    from tests.test_moe import MIXED

    return [MoEExpert(**{**e.__dict__, **changes}) for e in MIXED]


def _simulate(experts: list, **settings) -> mlcb.Result:
    base = dict(
        env="mlcb/Clustered-v0", env_params={"holdout": 16}, budget=2, horizon=80, replications=3, seed=7
    )
    return mlcb.simulate(experts=experts, **{**base, **settings})


def _assert_same(on_device_result, on_cpu, rtol: float) -> None:
    for column in ("regret", "pseudo_regret", "certificate"):
        np.testing.assert_allclose(
            on_device_result.curves[column], on_cpu.curves[column], rtol=rtol, atol=rtol
        )
    for column in ("trained", "deployed"):
        np.testing.assert_array_equal(on_device_result.experts[column], on_cpu.experts[column])


# --- on the device -----------------------------------------------------------------------------
@on_device
def test_auto_device_picks_cuda_when_torch_sees_one():
    import torch

    from agents.moe import MoEExpert, resolve_device
    from tests.test_moe import _pool

    if os.environ.get("MLCB_REQUIRE_CUDA"):
        assert torch.cuda.is_available(), "MLCB_REQUIRE_CUDA is set, and torch sees no CUDA device"
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert MoEExpert().device == "auto"
    _, _, pool = _pool(_mixed(device="auto"))
    assert pool.device.type == expected
    assert pool.groups[0].flat.device.type == expected
    assert pool.holdout.device.type == expected


@on_device
@pytest.mark.parametrize("smoothing", ["ema", "last"])
@pytest.mark.parametrize(("backend", "task"), [("bmm", "regression"), ("vmap", "classification")])
def test_pool_on_the_device_gives_the_cpu_results_in_float64(backend, task, smoothing):
    settings = dict(env_params={"holdout": 16, "task": task}, smoothing=smoothing)
    on_cpu = _simulate(_mixed(device="cpu", dtype="float64", backend=backend), **settings)
    on_gpu = _simulate(_mixed(device=DEVICE, dtype="float64", backend=backend), **settings)
    _assert_same(on_gpu, on_cpu, rtol=1e-9)


@on_device
def test_module_members_on_the_device_give_the_cpu_results_in_float64():
    from agents.moe import ModuleExpert
    from tests.test_moe import _small_module

    def pool(device: str) -> list:
        common = dict(factory=_small_module, device=device, dtype="float64")
        return [ModuleExpert(lr=0.01, **common), ModuleExpert(lr=0.05, optimizer="sgd", **common)]

    settings = dict(env_params={"holdout": 16, "task": "classification"}, budget=1)
    _assert_same(_simulate(pool(DEVICE), **settings), _simulate(pool("cpu"), **settings), rtol=1e-9)


@on_device
def test_float32_steps_on_the_device_match_the_cpu_within_float_tolerance():
    """Float32 rounding differs between devices, so whole runs may part at a close decision;
    the same steps on the same selections must agree to float32 precision."""
    import torch

    from tests.test_moe import _pool, _train

    runs = []
    for device in (DEVICE, "cpu"):
        _, built, pool = _pool(_mixed(device=device, dtype="float32"), replications=3)
        losses = [
            _train(pool, built, t, [[0, 1, 2, 3], [1, 3, -1, -1], [2, -1, -1, -1]]) for t in range(1, 21)
        ]
        group = pool.groups[0]
        runs.append(
            (np.array(losses), [x.cpu() for x in (group.flat, group.first, group.second, group.average)])
        )
    (losses, state), (cpu_losses, cpu_state) = runs
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-4, atol=1e-5)
    for mine, theirs in zip(state, cpu_state):
        torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-5)


@on_device
def test_per_member_adapter_on_the_device_gives_the_cpu_results():
    from agents.moe import TorchLearner

    experts = {
        device: [TorchLearner(e) for e in _mixed(device=device, dtype="float64")[:2]]
        for device in (DEVICE, "cpu")
    }
    settings = dict(budget=1, horizon=30, replications=2)
    _assert_same(_simulate(experts[DEVICE], **settings), _simulate(experts["cpu"], **settings), rtol=1e-9)


# --- the script --------------------------------------------------------------------------------
def _plan(device: str = "cpu") -> list[list[str]]:
    """The commands the script would run (its ``--plan``), each split into words."""
    env = {**os.environ, "DEVICE": device, "PYTHON": sys.executable}
    out = subprocess.run(["bash", str(SCRIPT), "--plan"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return [shlex.split(line[2:]) for line in out.stdout.splitlines() if line.startswith("+ ")]


def test_gpu_check_script_parses():
    assert SCRIPT.is_file()
    text = SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    out = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    if shutil.which("shellcheck"):
        out = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout


def test_gpu_check_script_rejects_an_unknown_device():
    env = {**os.environ, "DEVICE": "tpu"}
    out = subprocess.run(["bash", str(SCRIPT), "--plan"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 2
    assert "DEVICE must be cuda or cpu, got 'tpu'" in out.stderr


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_gpu_check_plan_calls_what_exists_with_arguments_it_accepts(device):
    pytest.importorskip("torch")
    bench_moe = _bench()
    plan = _plan(device)
    bench = [c for c in plan if any(word.endswith("benchmarks/bench_moe.py") for word in c)]
    tests = [c for c in plan if "pytest" in c]
    assert len(bench) == 1 and len(tests) == 1
    args = bench[0][bench[0].index(next(w for w in bench[0] if w.endswith("bench_moe.py"))) + 1 :]
    assert (ROOT / "benchmarks" / "bench_moe.py").is_file()
    if device == "cpu":  # the options the device section gets parse (--device cpu resolves here)
        parsed = bench_moe.parse(args)
        assert parsed.section == "device" and parsed.resolved.type == "cpu"
        assert parsed.markdown is not None and parsed.json is not None
    else:
        assert args[args.index("--device") + 1] == "cuda"
        assert args[args.index("--replications") + 1 : args.index("--replications") + 4] == ["8", "64", "256"]
    targets = [w for w in tests[0] if w.startswith("tests/")]
    assert targets and all((ROOT / t.split("::")[0]).is_file() for t in targets)
    options = tests[0][tests[0].index("pytest") + 1 :]
    assert options[options.index("-m") + 1] == "gpu"
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("gpu:") for m in markers)


def test_device_section_writes_its_table_and_numbers_on_the_cpu(tmp_path, capsys):
    pytest.importorskip("torch")
    bench_moe = _bench()
    table, numbers = tmp_path / "moe.md", tmp_path / "moe.json"
    argv = ["--section", "device", "--device", "cpu", "--replications", "1", "--seconds", "0.01"]
    bench_moe.main([*argv, "--agree-horizon", "3", "--markdown", str(table), "--json", str(numbers)])
    report = json.loads(numbers.read_text())
    assert report["machine"]["device"] == "cpu"
    assert {(t["pool"], t["device"]) for t in report["timings"]} == {("batched", "cpu"), ("loop", "cpu")}
    ratio = report["ratios"][0]
    assert ratio["agreement"]["float64"] == {"curves": 0.0, "same_training": 1.0}
    assert report["verdicts"]["agreement"] == "not measured (the device is the CPU)"
    assert "not measured (targets are at R = 64)" in table.read_text()
    assert "| 1 | batched | cpu |" in capsys.readouterr().out


def test_device_section_verdicts_against_the_targets():
    bench_moe = _bench()

    def report(device_over_loop_cpu: float, over_loop: float, curves: float, device: str = "cuda") -> dict:
        agreement = {"agrees": curves <= bench_moe.AGREE_RTOL}
        ratio = {"replications": 64, "batched_device_over_loop_cpu": device_over_loop_cpu,
                 "batched_over_loop_same_device": over_loop, "agreement": agreement}  # fmt: skip
        return {"machine": {"device": device}, "ratios": [ratio]}

    met = {"batched_device_over_loop_cpu": "met", "batched_over_loop_same_device": "met", "agreement": "met"}
    assert bench_moe.verdicts(report(20.0, 5.0, 1e-9)) == met
    missed = bench_moe.verdicts(report(19.9, 4.9, 1e-3))
    assert set(missed.values()) == {"NOT met"}
    on_cpu = bench_moe.verdicts(report(30.0, 6.0, 0.0, device="cpu"))
    assert (
        on_cpu["batched_device_over_loop_cpu"]
        == on_cpu["agreement"]
        == "not measured (the device is the CPU)"
    )
