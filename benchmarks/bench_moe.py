"""Pools of torch MoE networks: batching measured against per-member loops, on the CPU and a GPU.

Setting: K = 16 MoE members (the moe preset's eight, twice), M-LCB with M = 4, on the clustered
stream (held-out sample of 128 points), float32, one CPU thread for torch. A round advances every
replication.

Section ``pool`` (CPU, R = 8) prints rounds/s (of whole simulations, setup included) of

1. the batched pool (grouped batched matrix products, the default backend);
2. the same with ``backend="vmap"`` (``torch.func.vmap`` of the one-member function);
3. a per-member Python loop over the same pool code: every trained or deployed member of every
   replication stepped on its own (batches of one) -- the price of not batching;
4. the generic per-member adapter (:class:`agents.moe.TorchLearner`: one ``torch.nn.Module`` and
   one ``torch.optim`` optimizer per member, driven by :mod:`mlcb.learners`);

the ratios of (1) to (3) and (4) (target: at least 5x), and the share of the batched run's time
spent outside torch's operators (Python, the engine, NumPy; from ``torch.profiler``).

Section ``device`` (one device, at each R of ``--replications``, default 64) prints rounds/s (of
the rounds alone: the pools' construction and the warm start are timed apart) of the batched pool
and of the per-member loop on the device and, when the device is a GPU, of both on the CPU; for R
past one block of the Python engine (16 replications, each block its own pool, run in turn), also
of the batched pool holding all replications in one pool. Then the ratios, against the targets at
R = 64: the batched pool on the GPU at least 20x the per-member loop on the CPU, and at least 5x
the per-member loop on the same GPU; and how closely the device's batched pool agrees with the
CPU's on the same seeds over ``--agree-horizon`` rounds: in float64 (the check: the same training
decisions, curves equal to a relative 1e-6) and in float32 (the dtype timed; rounding can change
a decision there, so its largest difference is reported, not judged). Each timed run is sized so
that its rounds last about ``--seconds``: from 2 rounds, the horizon is set from the last run's
rate until one run's rounds take at least half of that. With ``--device auto`` and no CUDA device
the section says so and stops; ``--device cpu`` runs it on the CPU (a rehearsal of the GPU run).
``--markdown`` and ``--json`` write its table and numbers, updated after each R.

    python benchmarks/bench_moe.py [--section all|pool|device] [--horizon T] [--repeats N]
        [--device auto|cpu|cuda] [--replications R [R ...]] [--seconds S]
        [--agree-horizon T] [--markdown FILE] [--json FILE]

``benchmarks/gpu_check.sh`` runs the device section on a GPU at R in {8, 64, 256} (docs/moe.md).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from agents.moe import MoEExpert, MoEFamily, MoEPool, TorchLearner, require_torch, resolve_device  # noqa: E402
from mlcb import presets  # noqa: E402
from mlcb.engine import python_loop  # noqa: E402

K, M, R = 16, 4, 8
#: Targets: the batched pool against the per-member loop on the same device, and the batched
#: pool on a GPU against the per-member loop on the CPU, both at ``TARGET_R`` replications.
TARGET_BATCHED = 5.0
TARGET_DEVICE = 20.0
TARGET_R = 64
#: float64 curves of the device's batched pool against the CPU's: largest relative difference.
AGREE_RTOL = 1e-6
#: The agreement's dtypes: the check, then the dtype timed.
DTYPES = ("float64", "float32")
#: The device section's ratios: ``(numerator, denominator)`` as ``(pool, device)``, ``device``
#: standing for the device measured.
RATIOS = {
    "batched_device_over_loop_cpu": (("batched", "device"), ("loop", "cpu")),
    "batched_over_loop_same_device": (("batched", "device"), ("loop", "device")),
    "batched_device_over_batched_cpu": (("batched", "device"), ("batched", "cpu")),
    "one_pool_device_over_loop_cpu": (("batched, one pool", "device"), ("loop", "cpu")),
    "one_pool_over_loop_same_device": (("batched, one pool", "device"), ("loop", "device")),
}
#: The longest horizon a sized run may take.
MAX_HORIZON = 100_000


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


class _Clock:
    """A pool that notes how long its rounds take: from the start of its first deploy call (round
    1) to the end of its last train call, so that the pool's construction and the warm start
    (round 0: every member trained once) are left out. Every clock built is kept in ``CLOCKS``."""

    def __init__(self, pool: Any) -> None:
        self.pool, self.start, self.seconds = pool, 0.0, 0.0
        CLOCKS.append(self)

    def describe(self, r: int, k: int) -> str:
        return self.pool.describe(r, k)

    def deploy(self, t, selected, counts, losses, expected) -> None:
        if t == 1:
            self.start = time.perf_counter()
        self.pool.deploy(t, selected, counts, losses, expected)

    def train(self, t, selected, counts, losses, rates) -> None:
        self.pool.train(t, selected, counts, losses, rates)
        if t >= 1:
            self.seconds = time.perf_counter() - self.start


#: The clocks of the pools built since the list was last emptied (one pool per block of
#: replications).
CLOCKS: list[_Clock] = []


class _ClockedFamily(MoEFamily):
    """MoE pools whose rounds are timed, stepped as one batch or one member at a time."""

    def __init__(self, one_by_one: bool) -> None:
        self.one_by_one = one_by_one

    def batched_pool(self, experts, env, batch, delta, smoothing, horizon):
        pool = MoEPool(experts, env, batch, delta, smoothing)
        return _Clock(_OneByOne(pool) if self.one_by_one else pool)


@dataclasses.dataclass(frozen=True)
class BatchedExpert(MoEExpert):
    """An MoE member whose (batched) pool's rounds are timed (for this benchmark)."""

    family: ClassVar[Any] = _ClockedFamily(one_by_one=False)


@dataclasses.dataclass(frozen=True)
class LoopExpert(MoEExpert):
    """An MoE member whose pool is stepped one member at a time, its rounds timed (for this
    benchmark)."""

    family: ClassVar[Any] = _ClockedFamily(one_by_one=True)


#: The pools the device section times: ``(name, member class, one pool of all replications)``.
POOLS = (
    ("batched", BatchedExpert, False),
    ("batched, one pool", BatchedExpert, True),
    ("loop", LoopExpert, False),
)


def members(cls: type = MoEExpert, **changes: Any) -> list:
    base = presets.get("moe").config(M).experts
    return [cls(**{**dataclasses.asdict(e), **changes}) for e in list(base) * (K // len(base))]


def simulate(experts: list, horizon: int, replications: int = R, seed: int = 0) -> Any:
    return mlcb.simulate(
        env="mlcb/Clustered-v0",
        env_params={"holdout": 128},
        experts=experts,
        budget=M,
        horizon=horizon,
        replications=replications,
        seed=seed,
    )


def run(experts: list, horizon: int, replications: int = R, seed: int = 0) -> float:
    started = time.perf_counter()
    simulate(experts, horizon, replications, seed)
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


def pool_section(horizon: int, repeats: int) -> None:
    """Batched pools (both backends) against per-member loops, on the CPU at R = 8."""
    torch = require_torch()
    cpu = {"device": "cpu"}
    print(f"MoE pool: K = {K}, M = {M}, R = {R}, horizon {horizon}, torch {torch.__version__}, CPU")
    batched = rounds_per_second(members(**cpu), horizon, repeats)
    vmapped = rounds_per_second(members(backend="vmap", **cpu), horizon, repeats)
    short = max(20, horizon // 5)
    looped = rounds_per_second(members(LoopExpert, **cpu), short, 1)
    adapters = rounds_per_second([TorchLearner(e, "ema") for e in members(**cpu)], short, 1)
    print(f"  batched (bmm)            {batched:9.1f} rounds/s")
    print(f"  batched (vmap)           {vmapped:9.1f} rounds/s   bmm / vmap = {batched / vmapped:.2f}")
    print(f"  per-member loop          {looped:9.1f} rounds/s   batched / loop = {batched / looped:.1f}x")
    ratio = batched / adapters
    print(f"  per-member nn.Module     {adapters:9.1f} rounds/s   batched / adapter = {ratio:.1f}x")
    verdict = "met" if batched / looped >= TARGET_BATCHED else "NOT met"
    print(f"  target batched >= {TARGET_BATCHED:.0f}x the per-member loop: {verdict}")
    outside = share_outside_torch(members(**cpu), max(50, horizon // 3))
    print(f"  share of the batched run's time outside torch operators: {outside:.0%} (torch.profiler)")


# --- the device section ---------------------------------------------------------------------------
@contextlib.contextmanager
def replications_per_pool(size: int) -> Iterator[None]:
    """The Python engine builds one pool per block of ``python_loop.DEFAULT_BLOCK`` replications
    and runs the blocks one after another; within the context a block holds ``size``."""
    before = python_loop.DEFAULT_BLOCK
    python_loop.DEFAULT_BLOCK = size
    try:
        yield
    finally:
        python_loop.DEFAULT_BLOCK = before


def timed_run(experts: list, horizon: int, replications: int, one_pool: bool = False) -> tuple[float, float]:
    """``(seconds of the rounds, seconds of the whole run)`` of a run of clocked members, its
    replications in blocks of ``python_loop.DEFAULT_BLOCK`` (what ``mlcb.simulate`` does) or, with
    ``one_pool``, all in one pool."""
    CLOCKS.clear()
    with replications_per_pool(replications if one_pool else python_loop.DEFAULT_BLOCK):
        wall = run(experts, horizon, replications)
    return sum(clock.seconds for clock in CLOCKS), wall


def sized_run(experts: list, replications: int, seconds: float, one_pool: bool = False) -> dict:
    """A timed run whose rounds last at least ``seconds / 2``: the horizon starts at 2 and is set
    from the rate of the last run to last about ``seconds`` (at least doubled, at most a hundred
    times longer, never past ``MAX_HORIZON``) until one run is long enough."""
    horizon = 2
    while True:
        rounds, wall = timed_run(experts, horizon, replications, one_pool)
        if rounds >= seconds / 2 or horizon >= MAX_HORIZON:
            rate = horizon / rounds
            return {
                "horizon": horizon,
                "seconds": rounds,
                "setup_seconds": wall - rounds,
                "rounds_per_second": rate,
            }
        wanted = math.ceil(seconds * horizon / max(rounds, 1e-9))
        horizon = min(MAX_HORIZON, 100 * horizon, max(2 * horizon, wanted))


def difference(result: Any, reference: Any) -> dict:
    """Largest relative difference of the regret curves (``|a - b| / (1 + |b|)``) and the share of
    equal training counts (per replication, checkpoint and member) of two results."""
    curves = max(
        float(
            np.max(
                np.abs(result.curves[c].to_numpy() - reference.curves[c].to_numpy())
                / (1.0 + np.abs(reference.curves[c].to_numpy()))
            )
        )
        for c in ("regret", "pseudo_regret")
    )
    same = float(np.mean(result.experts["trained"].to_numpy() == reference.experts["trained"].to_numpy()))
    return {"curves": curves, "same_training": same}


def agreement(device: str, replications: int, horizon: int) -> dict:
    """The device's batched pool against the CPU's on the same seeds, in float64 and float32."""
    out: dict[str, Any] = {}
    for dtype in DTYPES:
        on_device = simulate(members(device=device, dtype=dtype), horizon, replications)
        on_cpu = simulate(members(device="cpu", dtype=dtype), horizon, replications)
        out[dtype] = difference(on_device, on_cpu)
    exact = out["float64"]
    out["agrees"] = exact["curves"] <= AGREE_RTOL and exact["same_training"] == 1.0
    return out


def machine(device: Any) -> dict:
    """What the numbers were measured on."""
    torch = require_torch()
    gpu = device.type == "cuda"
    return {
        "device": device.type,
        "device_name": torch.cuda.get_device_name(device) if gpu else f"CPU ({platform.machine()})",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
    }


def device_section(args: argparse.Namespace, device: Any) -> dict:
    """Rounds/s of the batched pool and the per-member loop on ``device`` (and on the CPU when
    ``device`` is a GPU) at each R of ``args.replications``; ratios, targets and agreement."""
    name = str(device)
    devices = [name] if device.type == "cpu" else [name, "cpu"]
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python", Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "machine": machine(device),
        "setting": {
            "K": K,
            "M": M,
            "dtype": "float32",
            "threads": 1,
            "block": python_loop.DEFAULT_BLOCK,
            "seconds_per_run": args.seconds,
            "agree_horizon": args.agree_horizon,
            "env": "mlcb/Clustered-v0",
            "holdout": 128,
        },
        "targets": {
            "replications": TARGET_R,
            "batched_device_over_loop_cpu": TARGET_DEVICE,
            "batched_over_loop_same_device": TARGET_BATCHED,
            "float64_rtol": AGREE_RTOL,
        },
        "timings": [],
        "ratios": [],
    }
    info = report["machine"]
    print(f"MoE pools on {info['device_name']} ({name}), torch {info['torch']}, CUDA {info['cuda']}")
    print(f"  K = {K}, M = {M}, float32, the rounds of each timed run sized to about {args.seconds:g} s")
    for where in devices:  # compile the engine, start CUDA, warm torch up
        for cls in (BatchedExpert, LoopExpert):
            run(members(cls, device=where), 2, 2)
    for replications in args.replications:
        rates = {}
        for where in devices:
            for pool, cls, one_pool in POOLS:
                if one_pool and (replications <= python_loop.DEFAULT_BLOCK or where != name):
                    continue  # the same as blocks, or the CPU's reference (its cost grows with R anyway)
                timing = sized_run(members(cls, device=where), replications, args.seconds, one_pool)
                rates[pool, where] = timing["rounds_per_second"]
                report["timings"].append(
                    {"replications": replications, "device": where, "pool": pool, **timing}
                )
                print(
                    f"  R = {replications:4d}  {pool:<17} {where:<7} {timing['horizon']:7d} rounds "
                    f"{timing['seconds']:7.2f} s (+ {timing['setup_seconds']:5.2f} s setup) "
                    f"{timing['rounds_per_second']:9.2f} rounds/s"
                )
        rates.update({(pool, "device"): rate for (pool, where), rate in rates.items() if where == name})
        ratio: dict[str, Any] = {"replications": replications}
        for key, (top, bottom) in RATIOS.items():
            ratio[key] = rates[top] / rates[bottom] if top in rates else None
        ratio["agreement"] = agreement(name, replications, args.agree_horizon)
        report["ratios"].append(ratio)
        report["verdicts"] = verdicts(report)
        write(report, args)
    print(markdown(report))
    return report


def verdicts(report: dict) -> dict:
    """Each target: ``"met"``, ``"NOT met"`` or why it was not measured."""
    at = {r["replications"]: r for r in report["ratios"]}
    out = {}
    gpu = report["machine"]["device"] == "cuda"
    for key, target in (
        ("batched_device_over_loop_cpu", TARGET_DEVICE),
        ("batched_over_loop_same_device", TARGET_BATCHED),
    ):
        if TARGET_R not in at:
            out[key] = f"not measured (targets are at R = {TARGET_R})"
        elif key == "batched_device_over_loop_cpu" and not gpu:
            out[key] = "not measured (the device is the CPU)"
        else:
            out[key] = "met" if at[TARGET_R][key] >= target else "NOT met"
    if not gpu:
        out["agreement"] = "not measured (the device is the CPU)"
    else:
        out["agreement"] = "met" if all(r["agreement"]["agrees"] for r in report["ratios"]) else "NOT met"
    return out


def markdown(report: dict) -> str:
    """The device section's numbers as Markdown: timings, ratios, agreement and verdicts."""
    info, setting, name = report["machine"], report["setting"], report["machine"]["device"]
    lines = [
        f"## MoE pools on {info['device_name']}",
        "",
        f"{report['date']}; torch {info['torch']}, CUDA {info['cuda']}, Python {info['python']}, "
        f"{info['cpu_count']} CPUs; `{report['command']}`",
        "",
        f"K = {setting['K']}, M = {setting['M']}, {setting['dtype']}, {setting['threads']} CPU thread for "
        f"torch; rounds/s over the rounds alone (setup and warm start apart), each run's rounds sized to "
        f"about {setting['seconds_per_run']:g} s; `batched`: blocks of {setting['block']} replications, "
        "one pool each, as `mlcb.simulate` runs them; `batched, one pool`: all replications in one.",
        "",
        "| R | pool | device | rounds | seconds | setup and warm start, s | rounds/s |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for t in report["timings"]:
        lines.append(
            f"| {t['replications']} | {t['pool']} | {t['device']} | {t['horizon']} | {t['seconds']:.2f} | "
            f"{t['setup_seconds']:.2f} | {t['rounds_per_second']:.2f} |"
        )
    lines += [
        "",
        f"| R | batched {name} / loop cpu | batched / loop, {name} | batched {name} / batched cpu | "
        f"one pool {name} / loop cpu | one pool / loop, {name} | "
        "float64 vs cpu: curves, same training | float32 vs cpu: curves, same training |",
        "|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in report["ratios"]:
        cells = ["-" if r[key] is None else f"{r[key]:.1f}x" for key in RATIOS]
        cells += [f"{a['curves']:.1e}, {a['same_training']:.1%}" for a in map(r["agreement"].get, DTYPES)]
        lines.append(f"| {r['replications']} | " + " | ".join(cells) + " |")
    v = report.get("verdicts", {})
    lines += [
        "",
        f"- batched on the GPU >= {TARGET_DEVICE:g}x the per-member loop on the CPU at R = {TARGET_R}: "
        f"{v.get('batched_device_over_loop_cpu', 'not measured')}",
        f"- batched >= {TARGET_BATCHED:g}x the per-member loop on the same device at R = {TARGET_R}: "
        f"{v.get('batched_over_loop_same_device', 'not measured')}",
        f"- float64 results equal to the CPU's (same training, curves within {AGREE_RTOL:g}) over "
        f"{setting['agree_horizon']} rounds: {v.get('agreement', 'not measured')}",
    ]
    return "\n".join(lines) + "\n"


def write(report: dict, args: argparse.Namespace) -> None:
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(markdown(report))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", choices=("all", "pool", "device"), default="all")
    parser.add_argument("--horizon", type=int, default=300, help="rounds of the pool section's runs")
    parser.add_argument("--repeats", type=int, default=2, help="pool section: best of N timed runs")
    parser.add_argument("--device", default="auto", help="device section: auto (CUDA if any), cpu, cuda")
    parser.add_argument("--replications", type=int, nargs="+", default=[TARGET_R], help="device section: R")
    parser.add_argument("--seconds", type=float, default=10.0, help="device section: length of a timed run")
    parser.add_argument(
        "--agree-horizon", type=int, default=50, help="device section: rounds of the agreement"
    )
    parser.add_argument("--markdown", type=Path, help="device section: write its table to this file")
    parser.add_argument("--json", type=Path, help="device section: write its numbers to this file")
    args = parser.parse_args(argv)
    for option, value in (
        ("--horizon", args.horizon),
        ("--repeats", args.repeats),
        ("--agree-horizon", args.agree_horizon),
        *(("--replications", r) for r in args.replications),
    ):
        if value < 1:
            parser.error(f"{option} must be an integer >= 1, got {value}")
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        parser.error(f"--seconds must be a number > 0, got {args.seconds}")
    try:
        args.resolved = resolve_device(args.device) if args.section != "pool" else None
    except ValueError as error:
        parser.error(f"--device: {error}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.section in ("all", "pool"):
        pool_section(args.horizon, args.repeats)
    if args.section in ("all", "device"):
        if args.device == "auto" and args.resolved.type == "cpu":
            print(
                f"CUDA: no device here; the device section (R = {TARGET_R}, targets: batched >= "
                f"{TARGET_DEVICE:g}x the CPU's per-member loop, >= {TARGET_BATCHED:g}x the GPU's) runs where "
                "one is (benchmarks/gpu_check.sh)"
            )
        else:
            device_section(args, args.resolved)


if __name__ == "__main__":
    main()
