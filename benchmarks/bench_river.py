"""Streaming model selection with river: M-LCB against river's own selectors on data nobody tuned it on.

Prints, for every stream of :mod:`mlcb.river.streams` (every classification and regression data
set river ships, scikit-learn's toy sets as bootstrapped streams, river's synthetic streams with
concept drift; pools of 8 river models):

1. the comparison (:func:`mlcb.river.compare`): progressive-validation accuracy or MAE (mean ±
   standard deviation over ``--seeds`` shuffles), model updates per sample and samples per second
   of M-LCB at M = 1 (:class:`mlcb.river.BudgetedClassifier`, :class:`mlcb.river.BudgetedRegressor`),
   river's bandit selectors with epsilon-greedy and UCB, river's successive halving and training
   every model; every selector meets the same rows. The last column, "best-in-hindsight", is no
   selector: the pool's best model learning every sample alone, as a selector that knew it before
   the first sample would score at one update per sample;
2. the targets, stream by stream: at M = 1, on streams of at least 2,000 samples, at most 1.05
   model updates per sample; within 1 accuracy point of training every model (within 5 % of its
   MAE); a seed-to-seed spread no wider than successive halving's; at most 0.5 points below
   river's best selector (0.5 % of its MAE); and the pool's order does not matter (the pool
   reversed gives the same predictions);
3. the speed of the presets through the simulator (``mlcb.simulate``, the Python engine, M = 1):
   rounds/s, and the share of the time spent in the engine against inside the river models
   (every ``learn`` / ``deploy`` / ``spawn`` of the river experts timed in the same run), reported
   without a target: the engine's few microseconds a round are a larger share beside fast models
   (Phishing's linear models) than beside slow ones (Bananas' k-NN).

The default size takes minutes (1,000 samples, 3 seeds); ``--full`` is the size of docs/river.md
(2,000 samples, 10 seeds).

    python benchmarks/bench_river.py [--full] [--samples N] [--seeds S] [--streams a,b,...] [--json FILE]
                                     [--reuse FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from mlcb.presets import RIVER_RATE  # noqa: E402
from mlcb.river import BudgetedClassifier, BudgetedRegressor, compare  # noqa: E402
from mlcb.river.experts import RiverExpert, river_pool  # noqa: E402
from mlcb.river.streams import STREAMS, pool_for, stream  # noqa: E402

ORDER = ["mlcb M=1", "epsilon-greedy", "ucb", "successive-halving", "train-everything", "best-in-hindsight"]
RIVER_SELECTORS = ("epsilon-greedy", "ucb", "successive-halving")


class TimedExpert(RiverExpert):
    """A river expert that adds the time of its ``learn`` and ``deploy`` calls to a shared clock."""

    clock = [0.0]

    def learn(self, data):
        started = time.perf_counter()
        try:
            return super().learn(data)
        finally:
            TimedExpert.clock[0] += time.perf_counter() - started

    def deploy(self, data):
        started = time.perf_counter()
        try:
            return super().deploy(data)
        finally:
            TimedExpert.clock[0] += time.perf_counter() - started

    def spawn(self, seed):  # river's clone of the model: time inside river too
        started = time.perf_counter()
        try:
            fresh = super().spawn(seed)
            return TimedExpert(fresh.model, fresh.loss, fresh.scale, fresh.rate)
        finally:
            TimedExpert.clock[0] += time.perf_counter() - started


def _cell(values: np.ndarray, regression: bool) -> str:
    scaled = values if regression else 100 * values
    sd = scaled.std(ddof=1) if len(scaled) > 1 else 0.0
    digits = 3 if regression and abs(scaled.mean()) < 10 else (1 if not regression else 2)
    return f"{scaled.mean():.{digits}f} ± {sd:.{digits}f}"


def table(frame) -> str:
    """The comparison as a Markdown table: one row per stream, per selector its accuracy % or MAE
    (mean ± sd), then M-LCB's updates per sample and samples per second, and the updates per
    sample of successive halving (river's schedule: every model of a rung learns every sample of
    it, and the survivor every sample after)."""
    ours = " | mlcb M=1: updates/sample | mlcb M=1: samples/s | successive-halving: updates/sample |"
    header = "| stream | metric | " + " | ".join(ORDER) + ours
    lines = [header, "|---" * (len(ORDER) + 5) + "|"]
    for dataset in dict.fromkeys(frame["dataset"]):
        part = frame[frame["dataset"] == dataset]
        regression = part["task"].iloc[0] == "regression"
        cells = [dataset, "MAE" if regression else "accuracy %"]
        for name in ORDER:
            values = part.loc[part["selector"] == name, "value"].to_numpy()
            cells.append(_cell(values, regression) if len(values) else "")
        ours = part[part["selector"] == "mlcb M=1"]
        cells.append(f"{ours['updates_per_sample'].mean():.3f}")
        cells.append(f"{ours['samples_per_s'].mean():,.0f}")
        halving = part.loc[part["selector"] == "successive-halving", "updates_per_sample"]
        cells.append(f"{halving.mean():.3f}" if len(halving) else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdicts(frame, order: dict) -> tuple[str, int]:
    """One line per stream: each target met or not (numbers), and how many targets were missed."""
    lines, missed = [], 0
    for dataset in dict.fromkeys(frame["dataset"]):
        part = frame[frame["dataset"] == dataset]
        regression = part["task"].iloc[0] == "regression"
        by = part.groupby("selector")["value"]
        mean, sd = by.mean(), by.std(ddof=1)
        ours, everything = mean["mlcb M=1"], mean["train-everything"]
        updates = part.loc[part["selector"] == "mlcb M=1", "updates_per_sample"].mean()
        samples = int(part["samples"].iloc[0])
        river = [s for s in RIVER_SELECTORS if s in mean]
        if regression:
            best = min(mean[s] for s in river)
            gap = 100 * (ours / everything - 1)
            checks = {
                f"MAE {gap:+.1f} % of training everything (<= +5)": gap <= 5.0,
                f"{100 * (ours / best - 1):+.1f} % of river's best (<= +0.5)": ours <= 1.005 * best,
            }
        else:
            best = max(mean[s] for s in river)
            gap = 100 * (ours - everything)
            checks = {
                f"{gap:+.2f} points from training everything (>= -1)": gap >= -1.0,
                f"{100 * (ours - best):+.2f} points from river's best (>= -0.5)": ours >= best - 0.005,
            }
        checks[f"spread {sd['mlcb M=1']:.3g} vs halving's {sd['successive-halving']:.3g}"] = (
            sd["mlcb M=1"] <= sd["successive-halving"] + 1e-12
        )
        if samples >= 2_000:
            checks[f"{updates:.3f} updates/sample (<= 1.05)"] = updates <= 1.05
        checks["order-invariant" if order.get(dataset, True) else "order matters"] = order.get(dataset, True)
        missed += sum(not ok for ok in checks.values())
        said = [f"{'ok' if ok else 'MISSED'} {text}" for text, ok in checks.items()]
        if "best-in-hindsight" in mean:  # not a target: what finding the best model costs
            known = mean["best-in-hindsight"]
            cost = 100 * (ours / known - 1) if regression else 100 * (known - ours)
            unit = " % of its MAE" if regression else " points"
            said.append(f"finding the best model cost {cost:+.2f}{unit}")
        lines.append(f"{dataset}: " + "; ".join(said))
    return "\n".join(lines), missed


def order_invariant(dataset: str, samples: int) -> bool:
    """M-LCB at M = 1 predicts the same with the pool reversed (seed 0, the first samples)."""
    rows = stream(dataset, 0, samples)
    predictions = []
    for pool in (pool_for(dataset), pool_for(dataset)[::-1]):
        kind = BudgetedRegressor if STREAMS[dataset].task == "regression" else BudgetedClassifier
        model, seen = kind(pool, budget=1), []
        for x, y in rows:
            seen.append(model.predict_one(x))
            model.learn_one(x, y)
        predictions.append(seen)
    return predictions[0] == predictions[1]


def speed(dataset: str, horizon: int, replications: int) -> dict:
    """Rounds/s of the preset through the simulator, and the engine's share of the time."""
    experts = [TimedExpert(m, rate=RIVER_RATE) for m in river_pool()]
    fields = dict(
        env="mlcb/RealData-v0",
        env_params={"dataset": dataset},
        experts=experts,
        budget=1,
        horizon=horizon,
        replications=replications,
        seed=0,
    )
    mlcb.simulate(**{**fields, "horizon": 20, "replications": 1})  # compile outside the timed region
    mlcb.simulate(**fields)  # computes and caches the regret references (rows of every expert)
    TimedExpert.clock[0] = 0.0
    started = time.perf_counter()
    mlcb.simulate(**fields)
    total = time.perf_counter() - started
    inside = TimedExpert.clock[0]
    return {
        "dataset": dataset,
        "rounds_per_s": horizon * replications / total,
        "total_s": total,
        "models_s": inside,
        "engine_share": (total - inside) / total,
    }


def _reused(path: Path, names: list, samples: int, seeds: int):
    """The rows of every selector but M-LCB from an earlier ``--json`` run, checked to cover every
    stream and shuffle of this run at the same size (the rows of the streams are the same)."""
    import pandas as pd

    frame = pd.DataFrame(json.loads(path.read_text()))
    frame = frame[~frame["selector"].str.startswith("mlcb") & frame["dataset"].isin(names)]
    frame = frame[frame["shuffle"] < seeds]
    for name in names:
        part = frame[frame["dataset"] == name]
        lengths = {len(stream(name, r, samples)) for r in range(seeds)}
        counts = part.groupby("selector")["shuffle"].nunique()
        if (
            sorted(counts.index) != sorted(ORDER[1:])
            or (counts != seeds).any()
            or not (set(part["samples"]) <= lengths)
        ):
            raise SystemExit(f"--reuse {path}: no rows of {name} with {seeds} shuffles of {samples} samples")
    return frame


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="docs/river.md's size: 2,000 samples, 10 seeds")
    parser.add_argument("--samples", type=int, default=None, help="samples per stream (default 1,000)")
    parser.add_argument("--seeds", type=int, default=None, help="shuffles per stream (default 3)")
    parser.add_argument("--streams", default=",".join(STREAMS), help="comma-separated names (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    parser.add_argument("--no-speed", action="store_true", help="leave out the simulator's speed")
    parser.add_argument(
        "--reuse",
        type=Path,
        default=None,
        help="a --json file of an earlier run of the same size: its rows of river's selectors and of "
        "training everything are reused (they do not depend on mlcb), and only M-LCB runs again",
    )
    args = parser.parse_args()
    samples = args.samples or (2_000 if args.full else 1_000)
    seeds = args.seeds or (10 if args.full else 3)
    names = [s for s in args.streams.split(",") if s]

    import pandas as pd

    started = time.perf_counter()
    frames = []
    reused = _reused(args.reuse, names, samples, seeds) if args.reuse else None
    for name in names:
        if reused is None:
            frames.append(compare(name, horizon=samples, shuffles=seeds))
        else:
            frames.append(compare(name, horizon=samples, shuffles=seeds, selectors=("mlcb",)))
            frames.append(reused[reused["dataset"] == name])
        print(f"  {name}: {time.perf_counter() - started:.0f} s", flush=True)
    frame = pd.concat(frames, ignore_index=True)
    if args.json:
        args.json.write_text(json.dumps(frame.to_dict(orient="records"), indent=1))
    order = {name: order_invariant(name, min(samples, 300)) for name in names}
    took = time.perf_counter() - started
    print(f"\ncomparison: {seeds} seeds x {samples} samples per stream, {took:.0f} s")
    print(table(frame))
    text, missed = verdicts(frame, order)
    print("\ntargets (M = 1):")
    print(text)
    print(f"targets missed: {missed}")
    if not args.no_speed:
        print("\nspeed (mlcb.simulate, Python engine, M = 1, K = 8):")
        for dataset in ("phishing", "bananas"):
            s = speed(dataset, 2_000, 16)
            print(
                f"  {dataset}: {s['rounds_per_s']:,.0f} rounds/s; {s['total_s']:.2f} s in all, "
                f"{s['models_s']:.2f} s inside the river models: "
                f"engine share {100 * s['engine_share']:.1f} %"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
