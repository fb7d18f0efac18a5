"""Conformance of environments (:class:`mlcb.contracts.Environment`): :func:`check_env`.

An environment is checked as the engines use it: ``n_experts``, ``build(seed, replication, horizon)``,
``optimal_loss`` and ``round_data`` after the compiled ``begin_round`` (run through a small
compiled probe, :func:`_begin`), an optional ``round_data_block``, then Gymnasium's own checker.
:class:`_Stream` plays one replication's round data to the expert checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcb.kernels import begin_round
from mlcb.kernels.jit import kernel, uncached
from mlcb.testing._common import (
    _UNCACHED,
    CheckReport,
    _build_difference,
    _check_build,
    _check_unit,
    _describe,
    _fail,
    _is_integer,
    _raising,
    _resolve,
    _run_probe,
)


@kernel
def _begin_round_probe(params, state, t):
    begin_round(params, state, t)
    return 0


_begin_round_probe_uncached = uncached(_begin_round_probe, **_UNCACHED)


def _begin(who: str, params: Any, state: Any, t: int) -> None:
    """Draw ``xi_t`` into ``state`` through the environment's compiled ``begin_round``."""
    _run_probe(
        _begin_round_probe,
        _begin_round_probe_uncached,
        (params, state, t),
        f"{who}: the compiled begin_round(params, state, t) fails on what build returns",
        "register a kernel with mlcb.kernels.implements('begin_round', ParamsType) that Numba can "
        "compile, or none",
    )


#: The horizon of the runs the expert checks stand for (what ``build`` is given).
PROBE_HORIZON = 100


class _Stream:
    """Round data ``xi_0, xi_1, ...`` of one replication of a run of :data:`PROBE_HORIZON` rounds as
    expert ``k`` sees it."""

    def __init__(self, who: str, env: Any, seed: int, k: int = 0) -> None:
        self.who, self.env, self.k = who, env, k
        with _raising(f"{who}: the environment's build({seed}, 0, {PROBE_HORIZON}) fails"):
            self.params, self.state = env.build(seed, 0, PROBE_HORIZON)
        self.t = -1

    def next(self) -> Any:
        self.t += 1
        _begin(self.who, self.params, self.state, self.t)
        with _raising(f"{self.who}: the environment's round_data(params, state, {self.t}, {self.k}) fails"):
            return self.env.round_data(self.params, self.state, self.t, self.k)


def _resolve_env(env: Any, env_params: dict | None) -> tuple[Any, str]:
    """The environment a check drives (a registered id is made) and its name for messages."""
    import envs

    made = _resolve("environment", "env", env, env_params, envs.make)
    return made, repr(env) if isinstance(env, str) else type(env).__name__


def _expert_indices(n_experts: int | None) -> list[int]:
    return list(range(n_experts)) if n_experts is not None else [0, 1, 2]


def _round_fingerprint(data: Any) -> tuple:
    """What the documented round-data shapes expose, as comparable values."""
    if hasattr(data, "n_arms") and callable(getattr(data, "loss", None)):
        n_arms = int(data.n_arms)
        return ("bandit", tuple(float(data.loss(a)) for a in range(n_arms)))
    if hasattr(data, "x") and hasattr(data, "y"):
        return ("xy", np.asarray(data.x, dtype=float).tobytes(), float(np.asarray(data.y).reshape(-1)[0]))
    return ()


def _check_round_data(who: str, data: Any, t: int, k: int) -> None:
    """The documented round-data shapes (bandit: ``n_arms``, ``loss``, ``mean``; GLM: ``x``,
    ``y``, ``loss``, ``expected_loss``): values in range."""
    where = f"round_data(params, state, {t}, {k})"
    if data is None:
        _fail(who, f"{where} returned None; return the round's xi_t as expert {k} sees it")
    if hasattr(data, "n_arms") and callable(getattr(data, "loss", None)):
        n_arms = data.n_arms
        if not _is_integer(n_arms, 1):
            _fail(who, f"{where}.n_arms is {_describe(n_arms)}; it must be an integer >= 1")
        for a in range(int(n_arms)):
            _check_unit(who, data.loss(a), f"{where}.loss({a})", "the loss of an arm")
            if callable(getattr(data, "mean", None)):
                _check_unit(who, data.mean(a), f"{where}.mean({a})", "the expected loss of an arm")
    elif hasattr(data, "x") and hasattr(data, "y"):
        x = np.asarray(data.x, dtype=float)
        y = np.asarray(data.y, dtype=float)
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
            _fail(who, f"{where}: x or y is not finite after begin_round; draw xi_t in begin_round")
        if callable(getattr(data, "loss", None)):
            prediction = float(y.reshape(-1)[0])
            _check_unit(who, data.loss(prediction), f"{where}.loss({prediction!r})", "a loss")
        if callable(getattr(data, "expected_loss", None)):
            value = data.expected_loss(0, np.zeros_like(x))
            _check_unit(who, value, f"{where}.expected_loss(0, zeros)", "an expected loss")


def check_env(
    env: Any,
    *,
    env_params: dict | None = None,
    seed: int = 0,
    rounds: int = 3,
    gymnasium: bool = True,
) -> CheckReport:
    """Check that an environment follows :class:`mlcb.contracts.Environment`; returns a
    :class:`~mlcb.testing.CheckReport` of what ran (``print`` it).

    Checks, in order:

    - ``n_experts`` is present: an integer ``>= 1`` or ``None``;
    - ``build(seed, replication, rounds)`` returns a pair of ``NamedTuple``\\ s of arrays and scalars,
      the same for the same ``(seed, replication)``, with fresh state arrays on every call, and
      not the same for two replications when it depends on the seed (each replication must
      face its own draw);
    - ``optimal_loss(params, k)`` is a float in ``[0, 1]`` for every expert index ``k``;
    - ``round_data(params, state, t, k)`` after the compiled ``begin_round`` (called through a
      small compiled probe, as the engine does) for rounds ``0 .. rounds``: not ``None``, the
      same after a second build, and for the documented shapes (bandit environments:
      ``n_arms``, ``loss(arm)``, ``mean(arm)``; GLM: ``x``, ``y``, ``loss(prediction)``,
      ``expected_loss(link, weights)``) values in range;
    - where the environment offers ``round_data_block(params, states, t)`` (with
      ``round_data_shared = True``): for replications 0 and 1 together, what ``round_data``
      gives for each;
    - with ``gymnasium``, Gymnasium's own checker :func:`gymnasium.utils.env_checker.check_env`
      (spaces, ``reset`` / ``step`` determinism under a seed, returned data not reused).

    Parameters
    ----------
    env : str or Environment
        A registered environment id (``envs.names()``) or an environment object.
    env_params : dict, optional
        Keyword arguments of a registered environment.
    seed : int
        The simulation seed the builds use.
    rounds : int
        Rounds of round data to check (after the warm start's round 0).
    gymnasium : bool
        Also run Gymnasium's own checker (the environment must then be a ``gymnasium.Env``).

    Raises
    ------
    ConformanceError
        Naming the environment, the method and what to fix.
    TypeError
        ``env_params`` given with an environment object (they are for a registered id).

    Examples
    --------
    >>> from mlcb.testing import check_env
    >>> check_env("mlcb/Trap-v0", env_params={"n_experts": 3})
    <CheckReport: environment 'mlcb/Trap-v0': 5 checks passed>
    """
    env, name = _resolve_env(env, env_params)
    who = f"environment {name}"

    # n_experts
    if not hasattr(env, "n_experts"):
        _fail(who, "has no attribute n_experts; set it to the number of experts it fixes, or None")
    n_experts = env.n_experts
    if n_experts is not None and not _is_integer(n_experts, 1):
        _fail(who, f"n_experts is {_describe(n_experts)}; it must be an integer >= 1 or None")
    for method in ("build", "optimal_loss", "round_data"):
        if not callable(getattr(env, method, None)):
            _fail(who, f"has no method {method}; see mlcb.contracts.Environment")

    # build (what the environment's own code raises, a sys.exit() too, is a failure naming the call)
    with _raising(f"{who}: build({seed}, 0, {rounds}) fails"):
        first, second = _check_build(
            lambda: env.build(seed, 0, rounds),
            f"{who}.build",
            f"build({seed}, 0, {rounds})",
            f"{who}.build({seed}, 0, {rounds})",
            "return (params, state) NamedTuples of NumPy arrays and scalars",
            repeatable="between two calls with the same (seed, replication); draw everything from the "
            "streams of mlcb.kernels.seeding (instance_rng, stream_keys) keyed by (seed, replication), "
            "never from global or unseeded generators",
        )
    with _raising(f"{who}: build({seed}, 1, {rounds}) fails"):
        other_replication = env.build(seed, 1, rounds)
    if _build_difference(first, other_replication) is None:
        with _raising(f"{who}: build({seed + 1}, 0, {rounds}) fails"):
            other_seed = env.build(seed + 1, 0, rounds)
        if _build_difference(first, other_seed) is not None:
            _fail(
                f"{who}.build",
                f"build({seed}, 0, {rounds}) and build({seed}, 1, {rounds}) are equal although build "
                "depends on the seed: every replication would face the same draw; key the instance and "
                "the streams by (seed, replication)",
            )

    # optimal_loss
    params, state = first
    for k in _expert_indices(n_experts):
        with _raising(f"{who}: optimal_loss(params, {k}) fails"):
            value = env.optimal_loss(params, k)
        _check_unit(f"{who}", value, f"optimal_loss(params, {k})", "an optimal loss")

    # round_data after begin_round, deterministic
    experts = _expert_indices(n_experts)[:3]
    prints = []
    for params, state in (first, second):
        seen = []
        for t in range(rounds + 1):
            _begin(f"{who}", params, state, t)
            for k in experts:
                with _raising(f"{who}: round_data(params, state, {t}, {k}) fails"):
                    data = env.round_data(params, state, t, k)
                _check_round_data(who, data, t, k)
                seen.append(_round_fingerprint(data))
        prints.append(seen)
    if prints[0] != prints[1]:
        _fail(
            f"{who}.round_data",
            "gives different data for the same (seed, replication, round, expert) after two builds; "
            "draw xi_t from the counter-based streams keyed in build",
        )
    blocks = _check_round_data_block(who, env, seed, rounds)

    checks = [
        f"n_experts: {n_experts}",
        "build(seed, replication): NamedTuples of arrays and scalars, the same for the same seed and "
        "replication, fresh state arrays on every call, a draw of its own per replication",
        f"optimal_loss(params, k) in [0, 1] for {len(_expert_indices(n_experts))} experts",
        f"round_data for rounds 0 to {rounds} after the compiled begin_round: in range, the same after "
        "a second build",
    ]
    if blocks:
        checks.append("round_data_block: for replications 0 and 1 together, what round_data gives")
    if gymnasium:
        _gymnasium_check(who, env)
        checks.append("Gymnasium's own checker (spaces, reset and step under a seed)")
    return CheckReport(who, None, tuple(checks))


def _check_round_data_block(who: str, env: Any, seed: int, rounds: int) -> bool:
    """An optional ``round_data_block`` gives, for replications 0 and 1 together, what
    ``round_data`` gives for each; whether there is one."""
    block = getattr(env, "round_data_block", None)
    if block is None:
        return False
    if not callable(block) or not getattr(env, "round_data_shared", False):
        _fail(
            f"{who}.round_data_block",
            "is offered but the environment does not declare round_data_shared = True (or it is not a "
            "method); the Python engine uses it only for round data shared by every expert",
        )
    pairs = [env.build(seed, 0, rounds), env.build(seed, 1, rounds)]
    for t in range(rounds + 1):
        for params, state in pairs:
            _begin(who, params, state, t)
        data = block([p for p, _ in pairs], [s for _, s in pairs], t)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            _fail(
                f"{who}.round_data_block",
                f"returned {_describe(data)} for a block of 2 replications at round {t}; return a list "
                "with one round data per replication",
            )
        for r, ((params, state), got) in enumerate(zip(pairs, data)):
            if _round_fingerprint(got) != _round_fingerprint(env.round_data(params, state, t, 0)):
                _fail(
                    f"{who}.round_data_block",
                    f"differs from round_data for replication {r} at round {t}; it must give, for each "
                    "replication of the block, what round_data gives",
                )
    return True


def _gymnasium_check(who: str, env: Any) -> None:
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env

    if not isinstance(env, gym.Env):
        _fail(
            who,
            f"is a {type(env).__name__}, not a gymnasium.Env; subclass gymnasium.Env (or pass "
            "gymnasium=False to skip Gymnasium's checker)",
        )
    with _raising(
        f"{who}: Gymnasium's checker (gymnasium.utils.env_checker.check_env) fails",
        "fix the Gymnasium interface (spaces, reset, step)",
    ):
        gymnasium_check_env(env.unwrapped, skip_render_check=True)
