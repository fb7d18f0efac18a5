"""Pools of torch MoE networks: batching measured against per-member loops of the same run.

Setting: K = 16 MoE members (the moe preset's eight, twice), M-LCB with M = 4, R = 8 replications
on the clustered stream, float32, one CPU thread for torch. Prints rounds/s (one round advances
every replication) of:

1. the batched pool (grouped batched matrix products, the default backend);
2. the same with ``backend="vmap"`` (``torch.func.vmap`` of the one-member function);
3. a per-member Python loop over the same pool code: every trained or deployed member of every
   replication stepped on its own (batches of one) -- the price of not batching;
4. the generic per-member adapter (:class:`agents.moe.TorchLearner`: one ``torch.nn.Module`` and
   one ``torch.optim`` optimizer per member, driven by :mod:`mlcb.learners`);

the ratios of (1) to (3) and (4) (target: at least 5x on CPU), the share of the batched run's
time spent outside torch's operators (Python, the engine, NumPy; from ``torch.profiler``), and,
when CUDA is available, the batched pool on the GPU at R = 64 against the CPU at R = 64 (target:
at least 20x).

    python benchmarks/bench_moe.py [--horizon T] [--repeats N]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from agents.moe import MoEExpert, MoEFamily, MoEPool, TorchLearner, require_torch  # noqa: E402
from mlcb import presets  # noqa: E402

K, M, R = 16, 4, 8
TARGET_BATCHED = 5.0
TARGET_CUDA = 20.0


class _OneByOne:
    """A pool whose train and deploy step each (replication, member) pair on its own."""

    def __init__(self, pool: MoEPool) -> None:
        self.pool = pool

    def describe(self, r: int, k: int) -> str:
        return self.pool.describe(r, k)

    def _each(self, method: Any, selected: np.ndarray, counts: np.ndarray, a: np.ndarray, b: np.ndarray):
        one = np.full_like(selected, -1)
        none = np.zeros_like(counts)
        out_a, out_b = np.zeros_like(a), np.zeros_like(b)
        for r in range(selected.shape[0]):
            for j in range(int(counts[r])):
                one[r, 0] = selected[r, j]
                none[r] = 1
                method(0, one, none, out_a, out_b)
                a[r, j], b[r, j] = out_a[r, 0], out_b[r, 0]
                one[r, 0], none[r] = -1, 0

    def train(self, t, selected, counts, losses, rates) -> None:
        self._each(self.pool.train, selected, counts, losses, rates)

    def deploy(self, t, selected, counts, losses, expected) -> None:
        self._each(self.pool.deploy, selected, counts, losses, expected)


class _LoopFamily(MoEFamily):
    def batched_pool(self, experts, env, batch, delta, smoothing, horizon):
        return _OneByOne(MoEPool(experts, env, batch, delta, smoothing))


@dataclasses.dataclass(frozen=True)
class LoopExpert(MoEExpert):
    """An MoE member whose pool is stepped one member at a time (for this benchmark)."""

    family: ClassVar[Any] = _LoopFamily()


def members(cls: type = MoEExpert, **changes: Any) -> list:
    base = presets.get("moe").config(M).experts
    return [cls(**{**dataclasses.asdict(e), **changes}) for e in list(base) * (K // len(base))]


def run(experts: list, horizon: int, replications: int = R, seed: int = 0) -> float:
    started = time.perf_counter()
    mlcb.simulate(
        env="mlcb/Clustered-v0",
        env_params={"holdout": 128},
        experts=experts,
        budget=M,
        horizon=horizon,
        replications=replications,
        seed=seed,
    )
    return time.perf_counter() - started


def rounds_per_second(experts: list, horizon: int, repeats: int, replications: int = R) -> float:
    run(experts, 5, replications)  # compile the engine, warm torch up
    return horizon / min(run(experts, horizon, replications) for _ in range(repeats))


def share_outside_torch(experts: list, horizon: int) -> float:
    """Share of the batched run's wall time spent outside torch's operators (Python, the engine,
    NumPy): one minus the operators' self time recorded by ``torch.profiler``, over the wall time
    of the same profiled run (the profiler's own cost makes this an upper bound)."""
    torch = require_torch()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        started = time.perf_counter()
        run(experts, horizon)
        wall = time.perf_counter() - started
    inside = sum(event.self_cpu_time_total for event in profile.key_averages()) / 1e6
    return max(0.0, 1.0 - inside / wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    torch = require_torch()
    cpu = {"device": "cpu"}
    print(f"MoE pool: K = {K}, M = {M}, R = {R}, horizon {args.horizon}, torch {torch.__version__}, CPU")
    batched = rounds_per_second(members(**cpu), args.horizon, args.repeats)
    vmapped = rounds_per_second(members(backend="vmap", **cpu), args.horizon, args.repeats)
    short = max(20, args.horizon // 5)
    looped = rounds_per_second(members(LoopExpert, **cpu), short, 1)
    adapters = rounds_per_second([TorchLearner(e, "ema") for e in members(**cpu)], short, 1)
    print(f"  batched (bmm)            {batched:9.1f} rounds/s")
    print(f"  batched (vmap)           {vmapped:9.1f} rounds/s   bmm / vmap = {batched / vmapped:.2f}")
    print(f"  per-member loop          {looped:9.1f} rounds/s   batched / loop = {batched / looped:.1f}x")
    ratio = batched / adapters
    print(f"  per-member nn.Module     {adapters:9.1f} rounds/s   batched / adapter = {ratio:.1f}x")
    verdict = "met" if batched / looped >= TARGET_BATCHED else "NOT met"
    print(f"  target batched >= {TARGET_BATCHED:.0f}x the per-member loop: {verdict}")
    outside = share_outside_torch(members(**cpu), max(50, args.horizon // 3))
    print(f"  share of the batched run's time outside torch operators: {outside:.0%} (torch.profiler)")
    if torch.cuda.is_available():
        wide = 64
        cpu_wide = rounds_per_second(members(**cpu), args.horizon, args.repeats, wide)
        gpu_wide = rounds_per_second(members(device="cuda"), args.horizon, args.repeats, wide)
        print(f"CUDA ({torch.cuda.get_device_name()}), R = {wide}:")
        print(f"  CPU batched              {cpu_wide:9.1f} rounds/s")
        print(f"  GPU batched              {gpu_wide:9.1f} rounds/s   GPU / CPU = {gpu_wide / cpu_wide:.1f}x")
        verdict = "met" if gpu_wide / cpu_wide >= TARGET_CUDA else "NOT met"
        print(f"  target GPU >= {TARGET_CUDA:.0f}x CPU batched at R = {wide}: {verdict}")
    else:
        print("CUDA: no device here; the GPU section (R = 64, target >= 20x CPU batched) runs where one is")


if __name__ == "__main__":
    main()
