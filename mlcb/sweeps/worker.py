"""One task of a sweep as plain data, and what a worker does with it.

A task travels as a dict of plain values (the preset's name, the setting's values, the replication
range and the setting key the client validated), so any executor can ship it. The worker builds
the setting again, checks that its key is the client's, simulates the block with one thread and
sends back the three tidy frames and the setting's description (plain JSON). Replication ``r``
draws from streams keyed by ``(seed, r)``: the block's results do not depend on where it runs.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from mlcb.sweeps.grid import Grid, Task, build_config
from mlcb.sweeps.parts import FRAMES
from mlcb.validation import InputError


def payload(grid: Grid, task: Task) -> dict:
    """``task`` of ``grid`` as the plain data :func:`run_task` takes."""
    setting = next(s for s in grid.settings if s.key == task.key)
    return {
        "preset": grid.preset,
        "values": setting.values,
        "replications": grid.replications,
        "key": task.key,
        "label": task.label,
        "first": task.first,
        "stop": task.stop,
        "threads": 1,
    }


def rate_exponent(experts: list, env: Any, family: Any, delta: float, horizon: int) -> float | None:
    """The largest rate exponent ``alpha`` of the pool: an expert's declared ``alpha`` where it has
    one in (0, 1), else the log-log slope of its rate function ``U_k(n)`` over the last decade of
    counts up to ``horizon`` (at least 1,000). ``None`` when the rates are not tabulated."""
    from mlcb import theory

    declared = [getattr(e, "alpha", None) for e in experts]
    top = max(1_000, int(horizon))
    counts = np.unique(np.geomspace(top / 10, top, 12).astype(np.int64))
    try:
        rates = family.rates(experts, env, counts, delta / (2 * len(experts)))
    except Exception:  # a rate the family cannot tabulate: no exponent rather than no result
        rates = None
    values = []
    for k, alpha in enumerate(declared):
        if isinstance(alpha, (int, float)) and 0 < alpha < 1:
            values.append(float(alpha))
        elif rates is not None:
            slope = theory.loglog_slope(counts.astype(float), np.asarray(rates[k], dtype=float), tail=1.0)
            if np.isfinite(slope):
                values.append(float(slope))
    return max(values) if values else None


#: Rate exponents of recent settings, by key.
_EXPONENTS: dict[str, float | None] = {}


def run_task(task: dict) -> dict:
    """Run one task given as plain data (``preset``, ``values``, ``replications``, ``key``,
    ``label``, ``first``, ``stop``); returns the three tidy frames and the setting's description
    (plain JSON). Raises when the worker builds a different setting than the client validated."""
    from mlcb.engine.collect import collect_result
    from mlcb.engine.problem import build
    from mlcb.engine.runner import run

    started = time.perf_counter()
    config = build_config(task["preset"], task["values"], task["replications"], task["label"])
    if config.key() != task["key"]:
        raise InputError(
            f"{task['label']}: this worker builds a different setting (key {config.key()} instead of "
            f"{task['key']}); run the same mlcb version on the workers as on the client"
        )
    problem = build(config)
    done = run(problem, wanted=range(task["first"], task["stop"]), threads=task.get("threads", 1))
    engine, replications = done.engine, done.replications
    if task["key"] not in _EXPONENTS:  # once per setting and process
        while len(_EXPONENTS) >= 64:
            _EXPONENTS.pop(next(iter(_EXPONENTS)))
        _EXPONENTS[task["key"]] = rate_exponent(
            list(config.experts), problem.env, problem.family, config.delta, config.horizon
        )
    alpha = _EXPONENTS[task["key"]]
    extra = {
        "engine": engine,
        "rate_exponent": alpha,
        "n_experts": config.n_experts,
        "horizon": config.horizon,
        "grid": task["values"],
    }
    result = collect_result(problem, replications, extra)
    frames = {name: getattr(result, name) for name in FRAMES}
    (meta,) = result.metadata["settings"].values()
    meta["seconds"] = time.perf_counter() - started
    meta = json.loads(json.dumps(meta, default=str))
    return {**frames, "setting": meta, "versions": result.metadata.get("versions")}
