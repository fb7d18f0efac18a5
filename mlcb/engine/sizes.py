"""Size before work: what a setting will hold in memory, estimated from its description and its
built parts, and refused in one line when it cannot fit in this machine's memory.

:func:`mlcb.engine.problem.build` runs these checks before anything is allocated; a grid of
settings adds up its settings' frames (:func:`frame_bytes`) the same way.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.validation import InputError

if TYPE_CHECKING:
    from mlcb.config import SimulationConfig

#: About how many bytes a row of each frame takes in memory while a result is collected: the
#: frame's columns (the setting's four, then its own) and the recorded arrays it comes from.
ROW_BYTES = {"experts": 88, "curves": 112, "replications": 96}


def machine_memory() -> int:
    """This machine's memory in bytes (the physical memory, or a smaller container limit)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not on POSIX
        return 2**62
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return int(total)


def process_room() -> tuple[int, str] | None:
    """``(bytes, what)``: how much more this process may allocate under its own limits (``ulimit
    -v`` and ``ulimit -d``: the limit less what it holds already), or ``None`` without a limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    room = None
    for name, field, flag in (("RLIMIT_AS", "VmSize", "-v"), ("RLIMIT_DATA", "VmData", "-d")):
        kind = getattr(resource, name, None)
        if kind is None:
            continue
        soft, _ = resource.getrlimit(kind)
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        left = max(0, int(soft) - _status_bytes(field))
        if room is None or left < room[0]:
            room = (
                left,
                f"the {_bytes(left)} this process may still allocate (ulimit {flag} {_bytes(soft)})",
            )
    return room


def _status_bytes(field: str) -> int:
    """A size this process holds (``VmSize``, ``VmData`` of ``/proc/self/status``), 0 where unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _bytes(count: float) -> str:
    """A number of bytes in words: ``'1.5 GB'``."""
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if count < 1000 or unit == "PB":
            return f"{count:,.0f} {unit}" if unit == "bytes" else f"{count:,.1f} {unit}"
        count /= 1000
    return f"{count:,.1f} PB"  # pragma: no cover


def check_size(label: str, needed: int, why: str, what: str = "setting") -> None:
    """An :class:`~mlcb.validation.InputError` with the estimate unless ``needed`` bytes fit in
    this machine's memory (:func:`machine_memory`) and in what this process may still allocate
    under its limits (:func:`process_room`); ``what`` the setting is (``"grid"``)."""
    memory, limit = machine_memory(), f"this machine's {_bytes(machine_memory())}"
    room = process_room()
    if room is not None and room[0] < memory:
        memory, limit = room
    if needed > memory:
        raise InputError(
            f"{label}: this {what} needs about {_bytes(needed)} of memory ({why}), more than {limit}; "
            "lower replications, checkpoints, experts or the environment's size"
        )


#: How many times an environment's numbers are held at once, its temporaries included.
COPIES = 8
#: Parameters of an environment that size its arrays (each holds one number per combination).
SIZE_PARAMETERS = ("n_experts", "n_arms", "n_features", "n_classes", "n_clusters", "dim")


def check_environment_size(env: str, params: dict[str, Any]) -> None:
    """Refuse, before the environment is built, parameters whose arrays cannot fit in memory: the
    product of its size parameters (:data:`SIZE_PARAMETERS`, given or default), each number 8
    bytes held :data:`COPIES` times (the temporaries that build it, the arrays, and the pool's
    state beside them)."""
    import envs

    try:
        target = envs.registry.entry(env).load()
        signature = inspect.signature(target)
    except (InputError, TypeError, ValueError, ImportError, AttributeError):
        return  # an unknown id is named when the environment is made
    cells = 1
    named = []
    for name in SIZE_PARAMETERS:
        if name not in signature.parameters:  # not this environment's: named when it is made
            continue
        size = validation.whole_number(params.get(name, signature.parameters[name].default))
        if size is not None and size > 1:  # (1e9 as 10**9: whole numbers however written)
            cells *= size
            named.append(f"{name} = {size:,}")
    own = getattr(target, "held_numbers", None)  # an environment that counts its own arrays
    if callable(own):
        merged = {
            name: params.get(name, parameter.default)
            for name, parameter in signature.parameters.items()
            if parameter.default is not inspect.Parameter.empty or name in params
        }
        counted = own(merged)
        if counted is None:  # parameters it cannot count: its constructor names them
            return
        sizes = [f"{k} = {v:,}" for k, v in merged.items() if type(v) is int and v > 1]
        cells, named = int(counted), [f"{int(counted):,} ({', '.join(sizes)})"]
    if len(named) and cells > 1:
        check_size(
            f"env_params of {env}",
            8 * COPIES * cells,
            f"{' x '.join(named)} numbers of 8 bytes, held about {COPIES} times while built and run",
        )


def held_bytes(obj: Any) -> int:
    """The bytes of the NumPy arrays an object holds as attributes (its own, one level down)."""
    total = 0
    for value in getattr(obj, "__dict__", {}).values():
        if isinstance(value, np.ndarray):
            total += value.nbytes
    return total


def frame_bytes(config: SimulationConfig) -> int:
    """About how much memory the setting's recorded replications and their frames take at once
    when collected (:data:`ROW_BYTES` a row of each frame)."""
    runs, points, k = config.replications, len(config.grid()), config.n_experts
    per_run = points * (k * ROW_BYTES["experts"] + ROW_BYTES["curves"]) + ROW_BYTES["replications"]
    return runs * per_run


def rows_text(config: SimulationConfig) -> str:
    """The rows of the setting's largest frame, in words, for :func:`check_size`."""
    runs, points, k = config.replications, len(config.grid()), config.n_experts
    return (
        f"{runs:,} replications x {points:,} checkpoints x {k:,} experts = {runs * points * k:,} rows of "
        "the experts frame"
    )


# --- the engine's arrays of one replication ------------------------------------------------------
#: Pool sizes measured to extrapolate the pool's and the policy's arrays to ``K`` experts.
PROBES = (4, 8)
#: From this many experts on, the pool's and the policy's arrays are measured (on pools of
#: :data:`PROBES` experts, built for the run's horizon: a second or more of tables at long
#: horizons); below it they are small beside the frames, and left out.
PROBE_FROM = 1_000


def nbytes(value: Any, depth: int = 0) -> int:
    """The bytes of the NumPy arrays in ``value`` (a tuple, ``NamedTuple``, list or dict of them,
    nested), each array counted once."""
    seen: set[int] = set()

    def count(item: Any, level: int) -> int:
        if isinstance(item, np.ndarray):
            if id(item) in seen:
                return 0
            seen.add(id(item))
            return int(item.nbytes)
        if level > 6:
            return 0
        if isinstance(item, (tuple, list)):
            return sum(count(v, level + 1) for v in item)
        if isinstance(item, dict):
            return sum(count(v, level + 1) for v in item.values())
        return 0

    return count(value, depth)


def _measured(build: Any, n_experts: int) -> int:
    """The bytes of ``build(k)`` at ``k = n_experts``, extrapolated linearly from pools of
    :data:`PROBES` experts (0 where they cannot be built: nothing is claimed then)."""
    sizes = []
    for k in PROBES:
        if k > n_experts:
            break
        try:
            sizes.append(nbytes(build(k)))
        except Exception:  # noqa: BLE001 - a pool or a policy that cannot be cut: no estimate
            return 0
    if not sizes:
        return nbytes(build(n_experts))
    if len(sizes) == 1:
        return int(sizes[0] * n_experts / PROBES[0])
    slope = max(0.0, (sizes[1] - sizes[0]) / (PROBES[1] - PROBES[0]))
    return int(sizes[0] + slope * (n_experts - PROBES[0]))


def replication_bytes(problem: Any) -> int:
    """About how many bytes the engine holds for one replication in flight: its record (each
    expert's training and deployment counts at every checkpoint), statistics, accounting and
    stream keys (a few numbers per expert), and, for a pool of :data:`PROBE_FROM` experts or more,
    the policy's state and the pool's, both measured on pools of :data:`PROBES` experts and
    extrapolated to ``K`` (Python experts, copied per replication, are not counted: their size
    is theirs)."""
    from mlcb.contracts import BuildContext, build_env, selection_size

    k, points = problem.n_experts, len(problem.checkpoints)
    budget, horizon, delta = problem.budget, problem.horizon, problem.delta
    fixed = 16 * points * k + 13 * 8 * k  # the record's counts; warm start, order, stats, keys, optimum
    width = selection_size(problem.policy, k, budget)
    fixed += 4 * 8 * width + 4 * 8 * points

    if k < PROBE_FROM:
        return fixed

    def policy(n: int) -> Any:
        return problem.policy.build(n, min(budget, n), delta, horizon, np.zeros(n))

    total = fixed + _measured(policy, k)
    build_pool = getattr(problem.family, "build_pool", None)
    if callable(build_pool):
        env_params, _ = build_env(problem.env, problem.seed, 0, horizon)
        experts = tuple(problem.experts)

        def pool(n: int) -> Any:
            keys = np.zeros(n, dtype=np.uint64)
            context = BuildContext(
                experts[:n], problem.env, env_params, delta, keys, problem.smoothing, horizon
            )
            return build_pool(context)

        total += _measured(pool, k)
    return total


# --- a setting's size, before work --------------------------------------------------------------
#: Rough costs of the work that grows with the pool, measured on a shared 2-core machine (an order
#: of magnitude: they drift with the machine and its load): collecting, summarising and saving one
#: row of the experts frame; building one replication's arrays, per expert.
SECONDS_PER_ROW = 2e-6
SECONDS_PER_EXPERT = 5e-6
#: From these sizes on, the command line says what a setting will take before it starts.
SAY_FROM_BYTES, SAY_FROM_SECONDS = 10**9, 60.0


class Estimate(NamedTuple):
    """What a setting will take besides its rounds: ``bytes`` of memory at most (its frames and
    the replications in flight), ``seconds`` of the work that grows with the pool (each
    replication's arrays, the frames), and the same in words."""

    bytes: int
    seconds: float
    text: str

    @property
    def worth_saying(self) -> bool:
        """Whether the command line says it before the work starts."""
        return self.bytes >= SAY_FROM_BYTES or self.seconds >= SAY_FROM_SECONDS


def estimate(problem: Any, threads: int | None = None) -> Estimate:
    """The :class:`Estimate` of a built setting: its frames (:func:`frame_bytes`), and
    :func:`replication_bytes` for each replication run at once (``threads``, default one per
    core)."""
    from mlcb.engine.progress import duration

    config = problem.config
    in_flight = max(1, min(config.replications, threads or os.cpu_count() or 1))
    per_replication = replication_bytes(problem)
    frames = frame_bytes(config)
    total = frames + in_flight * per_replication
    rows = config.replications * len(problem.checkpoints) * problem.n_experts
    seconds = (
        rows * SECONDS_PER_ROW + config.replications * problem.n_experts * SECONDS_PER_EXPERT / in_flight
    )
    text = (
        f"{problem.n_experts:,} experts: about {_bytes(per_replication)} per replication "
        f"({in_flight} at once) and {_bytes(frames)} of results ({rows:,} rows of the experts frame), "
        f"and about {duration(seconds)} of work besides the rounds"
    )
    return Estimate(int(total), float(seconds), text)
