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

from mlcb.sweeps.grid import Grid, Task, build_config
from mlcb.sweeps.parts import FRAMES
from mlcb.validation import InputError


def payload(grid: Grid, task: Task) -> dict:
    """``task`` of ``grid`` as the plain data :func:`run_task` takes."""
    setting = grid.setting(task.key)
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


#: Rate exponents of recent settings, by key.
_EXPONENTS: dict[str, float | None] = {}


# --- what a worker registers: the submitting process's names --------------------------------------
def _registries() -> dict[str, tuple[Any, Any]]:
    """Each kind of registered name: its registry, and the call that registers one."""
    import agents
    import envs
    from mlcb import policies
    from mlcb.storage import outputs

    return {
        "policy": (policies.registry, policies.register),
        "expert": (agents.registry, agents.register),
        "environment": (envs.registry, envs.register),
        "figure": (outputs.FIGURES, outputs.register_figure),
        "writer": (outputs.WRITERS, outputs.register_writer),
    }


def registrations() -> dict:
    """What this process has registered, as data a worker process registers again
    (:func:`register_as`): the modules named with ``--plugin`` (:func:`mlcb.registry.plugins`), and
    every registered policy, expert family, environment, figure and writer (name, entry point,
    summary, defaults; a writer's files), the built-in ones and those of plugins, entry points or
    the user's own ``register`` calls alike. An entry whose defaults cannot be sent (pickled) is
    left out: a worker could not build it either."""
    import hashlib
    import pickle

    from mlcb import registry
    from mlcb.storage import outputs

    entries = []
    for kind, (table, _) in _registries().items():
        for entry in table.entries():
            files = outputs.writer_files(entry.name) if kind == "writer" else None
            item = (kind, entry.name, entry.entry_point, entry.summary, dict(entry.defaults), files)
            try:
                pickle.dumps(item)
            except Exception:  # defaults that cannot travel
                continue
            entries.append(item)
    plugins = registry.plugins()
    token = hashlib.sha256(pickle.dumps((plugins, entries))).hexdigest()
    return {"plugins": plugins, "entries": entries, "token": token}


#: The :func:`registrations` this process has registered already (by their token).
_REGISTERED: set[str] = set()


def register_as(given: dict) -> None:
    """Register in this process (a worker) what the submitting process registered
    (:func:`registrations`): the installed ``mlcb.plugins`` entry points and the ``--plugin``
    modules are imported (from this process's ``sys.path``: on a cluster, the plugins must be
    installed on the workers too), then every name is registered as the submitting process has it,
    an override included, so that a task builds exactly the setting its client validated. Once
    per process and set of registrations; a plugin that cannot be imported here is one line."""
    import warnings

    from mlcb import registry
    from mlcb.errors import NameTaken
    from mlcb.registry import Entry

    token = given.get("token")
    if token in _REGISTERED:
        return
    kinds = _registries()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NameTaken)  # the submitting process has said so already
        registry.load_entry_points()
        for name in given.get("plugins", ()):
            registry.load_plugin(name)
        for kind, name, entry_point, summary, defaults, files in given.get("entries", ()):
            table, register = kinds[kind]
            if name in table and table.entry(name).same_as(Entry(name, entry_point, defaults, summary)):
                if kind != "writer" or _writer_files(name) == files:
                    continue
            if kind == "writer":
                register(name, entry_point, files=files, summary=summary, override=True)
            elif kind == "figure":
                register(name, entry_point, summary, override=True)
            else:
                register(name, entry_point, summary, override=True, **defaults)
    if isinstance(token, str):
        _REGISTERED.add(token)


def _writer_files(name: str) -> tuple[str, ...] | None:
    from mlcb.storage import outputs

    return outputs.writer_files(name) if name in outputs.WRITERS else None


def run_registered(given: dict, task: dict) -> dict:
    """:func:`run_task` in a worker that first registers what the submitting process registered
    (:func:`register_as`; once per process): a Dask worker, which no initializer prepares."""
    register_as(given)
    return run_task(task)


def run_task(task: dict) -> dict:
    """Run one task given as plain data (``preset``, ``values``, ``replications``, ``key``,
    ``label``, ``first``, ``stop``); returns the three tidy frames and the setting's description
    (plain JSON). Raises when the worker builds a different setting than the client validated."""
    from mlcb.engine.collect import collect_result, rate_exponent
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
