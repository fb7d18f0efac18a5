"""Streaming model selection with river: M-LCB against river's own selectors on data nobody tuned it on.

Prints, for every stream of :mod:`mlcb.river.streams` (every classification and regression data
set river ships, scikit-learn's toy sets as bootstrapped streams, river's synthetic streams with
concept drift; pools of 8 river models):

1. the comparison (:func:`mlcb.river.compare`): progressive-validation accuracy or MAE (mean ±
   standard deviation over ``--seeds`` shuffles) of M-LCB at M = 1 and M = 2
   (:class:`mlcb.river.BudgetedClassifier`, :class:`mlcb.river.BudgetedRegressor`), river's
   bandit selectors with epsilon-greedy and UCB, river's successive halving (its budget: as many
   updates as samples), successive halving given M-LCB's update spend at each M (the yardstick at
   equal updates: "equal-halving M=1", "equal-halving M=2"), training every model, and
   "best-in-hindsight", no selector: the pool's best model learning every sample alone;
2. per stream and selector, the model updates per sample and the CPU time per sample in
   microseconds (predicting and learning; this process's CPU time, measured in the same run, on
   the same rows, after a warm-up);
3. the targets, stream by stream: M-LCB at M = 1 takes at most 1.5 times the time per sample of
   river's epsilon-greedy bandit selector and less than successive halving's; M-LCB at M = 1 and
   at M = 2 is behind successive halving at equal updates by at most 1 accuracy point (1 % of
   training everything's MAE) on every stream and by at most 0.25 on the mean over the streams;
   and the pool's order does not matter (the pool reversed gives the same predictions); beside
   each stream's gap to halving, its standard error over the shuffles (paired: both meet the
   same rows on a shuffle), which is not part of the target;
4. the speed of the presets through the simulator (``mlcb.simulate``, the Python engine, M = 1):
   rounds/s, and the share of the time spent in the engine against inside the river models
   (every ``learn`` / ``deploy`` / ``spawn`` of the river experts timed in the same run), reported
   without a target.

The default size takes minutes (1,000 samples, 3 seeds); ``--full`` is the size of docs/river.md
(2,000 samples, 10 seeds).

    python benchmarks/bench_river.py [--full] [--samples N] [--seeds S] [--streams a,b,...] [--json FILE]
                                     [--reuse FILE] [--no-speed]
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

ORDER = [
    "mlcb M=1",
    "mlcb M=2",
    "equal-halving M=1",
    "equal-halving M=2",
    "successive-halving",
    "epsilon-greedy",
    "ucb",
    "train-everything",
    "best-in-hindsight",
]
#: The rows that do not depend on M-LCB (--reuse takes them from an earlier run).
UNBUDGETED = ("epsilon-greedy", "ucb", "successive-halving", "train-everything", "best-in-hindsight")
#: Item targets: M-LCB M=1's time per sample at most this times epsilon-greedy's.
TIME_RATIO = 1.5
#: How far M-LCB may be behind equal-update halving on a stream (accuracy points, or % of
#: training everything's MAE), and on the mean over the streams.
PARITY, PARITY_MEAN = 1.0, 0.25
#: M-LCB's budgets in the comparison.
BUDGETS = (1, 2)


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


def _values(part, name: str) -> np.ndarray:
    return part.loc[part["selector"] == name, "value"].to_numpy()


def table(frame) -> str:
    """The comparison as Markdown tables: accuracy % or MAE (mean ± sd over the shuffles) per
    stream and selector; then per selector its updates per sample and CPU microseconds per
    sample."""
    names = [name for name in ORDER if name in set(frame["selector"])]
    header = "| stream | metric | " + " | ".join(names) + " |"
    lines = [header, "|---" * (len(names) + 2) + "|"]
    for dataset in dict.fromkeys(frame["dataset"]):
        part = frame[frame["dataset"] == dataset]
        regression = part["task"].iloc[0] == "regression"
        cells = [dataset, "MAE" if regression else "accuracy %"]
        for name in names:
            values = _values(part, name)
            cells.append(_cell(values, regression) if len(values) else "")
        lines.append("| " + " | ".join(cells) + " |")
    run = [name for name in names if name != "best-in-hindsight"]
    lines += ["", "updates per sample / CPU µs per sample:", ""]
    lines.append("| stream | " + " | ".join(run) + " |")
    lines.append("|---" * (len(run) + 1) + "|")
    for dataset in dict.fromkeys(frame["dataset"]):
        part = frame[frame["dataset"] == dataset]
        cells = [dataset]
        for name in run:
            rows = part[part["selector"] == name]
            if not len(rows):
                cells.append("")
                continue
            cells.append(f"{rows['updates_per_sample'].mean():.2f} / {rows['us_per_sample'].mean():,.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ahead(frame, dataset: str, budget: int) -> float:
    """How far M-LCB at M = ``budget`` is ahead of successive halving at equal updates on
    ``dataset`` (mean over the shuffles): accuracy points, or % of training everything's MAE
    (positive: M-LCB better)."""
    part = frame[frame["dataset"] == dataset]
    return _gap(
        part,
        _values(part, f"mlcb M={budget}").mean(),
        _values(part, f"equal-halving M={budget}").mean(),
    )


def _gap(part, ours, halving):
    """M-LCB's lead over halving given their scores (numbers, or per-shuffle series): accuracy
    points, or % of training everything's MAE on ``part``'s regression stream."""
    if part["task"].iloc[0] == "regression":
        return 100 * (halving - ours) / _values(part, "train-everything").mean()
    return 100 * (ours - halving)


def ahead_error(frame, dataset: str, budget: int) -> float:
    """The standard error of :func:`ahead` over the shuffles, from each shuffle's own difference
    (M-LCB and halving meet the same rows on a shuffle); ``nan`` with fewer than two shuffles.
    Not part of a target: it says how much of a stream's gap the shuffles' draw could make."""
    part = frame[frame["dataset"] == dataset]

    def by_shuffle(name):
        return part[part["selector"] == name].set_index("shuffle")["value"]

    gaps = _gap(part, by_shuffle(f"mlcb M={budget}"), by_shuffle(f"equal-halving M={budget}")).dropna()
    if len(gaps) < 2:
        return float("nan")
    return float(gaps.std(ddof=1) / np.sqrt(len(gaps)))


def verdicts(frame, order: dict) -> tuple[str, int]:
    """One line per stream: each target met or not (numbers); then the parity on the mean over
    the streams; and how many targets were missed."""
    lines, missed = [], 0
    names = set(frame["selector"])
    budgets = [m for m in (1, 2) if f"mlcb M={m}" in names and f"equal-halving M={m}" in names]
    gaps: dict[int, list[float]] = {m: [] for m in budgets}
    for dataset in dict.fromkeys(frame["dataset"]):
        part = frame[frame["dataset"] == dataset]
        regression = part["task"].iloc[0] == "regression"
        unit = "% of training everything's MAE" if regression else "points"
        time = part.groupby("selector")["us_per_sample"].mean()
        checks = {}
        if "mlcb M=1" in time and "epsilon-greedy" in time:
            ratio = time["mlcb M=1"] / time["epsilon-greedy"]
            checks[f"time x{ratio:.2f} epsilon-greedy's (<= {TIME_RATIO})"] = ratio <= TIME_RATIO
        if "mlcb M=1" in time and "successive-halving" in time:
            ratio = time["mlcb M=1"] / time["successive-halving"]
            checks[f"time x{ratio:.2f} successive halving's (< 1)"] = ratio < 1.0
        for m in budgets:
            gap = ahead(frame, dataset, m)
            gaps[m].append(gap)
            error = ahead_error(frame, dataset, m)
            spread = f" ± {error:.2f} s.e." if error == error else ""
            checks[f"M={m} {gap:+.2f}{spread} {unit} vs halving at equal updates (>= -{PARITY:g})"] = (
                gap >= -PARITY
            )
        checks["order-invariant" if order.get(dataset, True) else "order matters"] = order.get(dataset, True)
        missed += sum(not ok for ok in checks.values())
        said = [f"{'ok' if ok else 'MISSED'} {text}" for text, ok in checks.items()]
        means = part.groupby("selector")["value"].mean()
        if "best-in-hindsight" in means and "mlcb M=1" in means:  # not a target: what finding the model cost
            known, ours = means["best-in-hindsight"], means["mlcb M=1"]
            cost = 100 * (ours / known - 1) if regression else 100 * (known - ours)
            said.append(
                f"finding the best model cost M=1 {cost:+.2f}{' % of its MAE' if regression else ' points'}"
            )
        lines.append(f"{dataset}: " + "; ".join(said))
    for m in budgets:
        mean = float(np.mean(gaps[m]))
        ok = mean >= -PARITY_MEAN
        missed += not ok
        lines.append(
            f"mean over {len(gaps[m])} streams, M={m} vs halving at equal updates: {mean:+.2f} "
            f"(>= -{PARITY_MEAN:g}): {'ok' if ok else 'MISSED'}"
        )
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
    frame = frame[frame["selector"].isin(UNBUDGETED) & frame["dataset"].isin(names)]
    frame = frame[frame["shuffle"] < seeds]
    for name in names:
        part = frame[frame["dataset"] == name]
        lengths = {len(stream(name, r, samples)) for r in range(seeds)}
        counts = part.groupby("selector")["shuffle"].nunique()
        if (
            sorted(counts.index) != sorted(UNBUDGETED)
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
        "training everything are reused (they do not depend on mlcb), and only M-LCB and halving at "
        "its spend run again (their times are then compared with the earlier run's)",
    )
    args = parser.parse_args()
    samples = args.samples or (2_000 if args.full else 1_000)
    seeds = args.seeds or (10 if args.full else 3)
    names = [s for s in args.streams.split(",") if s]

    import pandas as pd

    started = time.perf_counter()
    frames = []
    reused = _reused(args.reuse, names, samples, seeds) if args.reuse else None
    compare(names[0], horizon=60, shuffles=1, budgets=BUDGETS)  # imports and first calls, untimed
    for name in names:
        if reused is None:
            frames.append(compare(name, horizon=samples, shuffles=seeds, budgets=BUDGETS))
        else:
            ours = ("mlcb", "equal-halving")
            frames.append(compare(name, horizon=samples, shuffles=seeds, budgets=BUDGETS, selectors=ours))
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
    print("\ntargets:")
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
