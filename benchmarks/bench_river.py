"""Streaming model selection with river: M-LCB against river's own selectors, and the engine's share.

Prints, for the real-data presets ``phishing`` and ``bananas`` (river's bundled data sets, rows
drawn with replacement, the presets' pool of 8 river classifiers):

1. the comparison (:func:`mlcb.river.compare`): progressive-validation accuracy (mean and standard
   deviation over ``--shuffles`` shuffles) and model updates per sample of M-LCB at M = 1, 2, 3
   (:class:`mlcb.river.BudgetedClassifier`), river's ``BanditClassifier`` with epsilon-greedy and
   UCB, river's successive halving and training every model; every selector meets the same rows;
   and writes the figure ``docs/figures/river-selectors.png`` (accuracy against updates);
2. the speed of the preset run through the simulator (``mlcb.simulate``, the Python engine, M = 1):
   rounds/s, and the share of the time spent in the engine against inside the river models. The
   baseline is measured in the same run: every ``learn`` / ``deploy`` / ``spawn`` call of the river
   experts (the adapter and the river model behind it) is timed, and the engine's share is what
   the run took beyond them (the round loop, the policy, the round data, building the
   replications and the result). The target: under 10 %.

    python benchmarks/bench_river.py [--horizon T] [--shuffles N] [--replications R] [--no-figure]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mlcb  # noqa: E402
from mlcb.presets import RIVER_RATE  # noqa: E402
from mlcb.river import compare  # noqa: E402
from mlcb.river.experts import RiverExpert, river_pool  # noqa: E402

DATASETS = ("phishing", "bananas")
ENGINE_SHARE_TARGET = 0.10
FIGURE = Path(__file__).resolve().parent.parent / "docs" / "figures" / "river-selectors.png"
ORDER = [
    "mlcb M=1",
    "mlcb M=2",
    "mlcb M=3",
    "epsilon-greedy",
    "ucb",
    "successive-halving",
    "train-everything",
]


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


def table(frame) -> str:
    """The comparison as a Markdown table: one row per selector, one column pair per data set."""
    header = "| selector | " + " | ".join(f"{d}: accuracy % | {d}: updates/sample" for d in DATASETS) + " |"
    lines = [header, "|---" * (1 + 2 * len(DATASETS)) + "|"]
    for name in ORDER:
        cells = [name]
        for dataset in DATASETS:
            part = frame[(frame["dataset"] == dataset) & (frame["selector"] == name)]
            if part.empty:
                cells += ["", ""]
                continue
            accuracy = 100 * part["accuracy"]
            cells.append(f"{accuracy.mean():.1f} ± {accuracy.std(ddof=1):.1f}")
            cells.append(f"{part['updates_per_sample'].mean():.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(frame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, len(DATASETS), figsize=(11, 4.2))
    colours = dict(zip(ORDER, ["#1b5e20", "#43a047", "#a5d6a7", "#e65100", "#ffb300", "#5e35b1", "#616161"]))
    for ax, dataset in zip(axes, DATASETS):
        parts = {name: frame[(frame["dataset"] == dataset) & (frame["selector"] == name)] for name in ORDER}
        spent = {name: part["updates_per_sample"].mean() for name, part in parts.items()}
        for name, part in parts.items():
            # Selectors that spend the same updates (M-LCB at M = 1 and river's bandits) are drawn
            # side by side, 3 % apart, so that their error bars do not hide each other.
            same = [other for other in ORDER if abs(np.log(spent[other] / spent[name])) < 0.02]
            x = spent[name] * 1.03 ** (same.index(name) - (len(same) - 1) / 2)
            y = 100 * part["accuracy"]
            ax.errorbar(
                x, y.mean(), yerr=y.std(ddof=1), fmt="o", capsize=4, color=colours[name], label=name, ms=7
            )
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks([1, 1.5, 2, 3, 8])
        ax.set_xticklabels(["1", "1.5", "2", "3", "8"])
        ax.set_xlabel("model updates per sample (log scale)")
        ax.set_ylabel("progressive-validation accuracy, %")
        ax.set_title(f"{dataset}: mean ± sd over {frame['shuffle'].nunique()} shuffles")
        ax.grid(alpha=0.3)
    axes[-1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def speed(dataset: str, horizon: int, replications: int) -> dict:
    """Rounds/s of the preset through the simulator, and the engine's share of the time."""
    experts = [TimedExpert(m, rate=RIVER_RATE) for m in river_pool()]
    fields = dict(
        env="mlcb/RealData-v0",
        env_params={"dataset": dataset, "horizon": horizon},
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--horizon", type=int, default=2_000)
    parser.add_argument("--shuffles", type=int, default=10)
    parser.add_argument("--replications", type=int, default=16)
    parser.add_argument("--no-figure", action="store_true")
    args = parser.parse_args()

    import pandas as pd

    started = time.perf_counter()
    frame = pd.concat(
        [compare(dataset, horizon=args.horizon, shuffles=args.shuffles) for dataset in DATASETS],
        ignore_index=True,
    )
    print(
        f"comparison: {args.shuffles} shuffles x {args.horizon} rows, {time.perf_counter() - started:.0f} s"
    )
    print(table(frame))
    for dataset in DATASETS:
        part = frame[frame["dataset"] == dataset].groupby("selector")["accuracy"]
        mean, sd = part.mean(), part.std(ddof=1)
        gap = 100 * (mean["mlcb M=1"] - mean["train-everything"])
        print(
            f"{dataset}: M-LCB M=1 minus train-everything {gap:+.1f}"
            f" points; spread M=1 {100 * sd['mlcb M=1']:.1f} vs successive halving "
            f"{100 * sd['successive-halving']:.1f}; M=1 minus epsilon-greedy "
            f"{100 * (mean['mlcb M=1'] - mean['epsilon-greedy']):+.1f}, minus UCB "
            f"{100 * (mean['mlcb M=1'] - mean['ucb']):+.1f}"
        )
    if not args.no_figure:
        figure(frame, FIGURE)
        print(f"figure: {FIGURE}")

    print("\nspeed (mlcb.simulate, Python engine, M = 1, K = 8):")
    shares = []
    for dataset in DATASETS:
        s = speed(dataset, args.horizon, args.replications)
        shares.append(s["engine_share"])
        print(
            f"  {dataset}: {s['rounds_per_s']:,.0f} rounds/s; {s['total_s']:.2f} s in all, "
            f"{s['models_s']:.2f} s inside the river models: engine share {100 * s['engine_share']:.1f} % "
            f"(target < {100 * ENGINE_SHARE_TARGET:.0f} %)"
        )
    return 0 if max(shares) < ENGINE_SHARE_TARGET and np.isfinite(shares).all() else 1


if __name__ == "__main__":
    raise SystemExit(main())
