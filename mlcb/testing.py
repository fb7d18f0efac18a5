"""Conformance checks for one's own environments, policies and experts.

In the spirit of Gymnasium's ``check_env`` and scikit-learn's ``check_estimator``, each check
drives an object through the contract of :mod:`mlcb.contracts` (and of :mod:`mlcb.kernels` for
compiled code) and raises a :class:`ConformanceError` (an ``AssertionError``) that names the
object, the method and what to fix at the first violation; it returns ``None`` when all is well.

:func:`check_env`
    an :class:`~mlcb.contracts.Environment`: ``n_experts``, ``build``, ``optimal_loss`` and
    ``round_data`` as the engines use them, then Gymnasium's own checker.
:func:`check_policy`
    a :class:`~mlcb.contracts.Policy`: its ``build``, its compiled ``select`` / ``observe`` /
    ``end_round`` kernels driven by a compiled probe on synthetic losses (sizes, indices, widths,
    determinism), then short simulations on both engines.
:func:`check_expert`
    a :class:`~mlcb.contracts.PythonExpert` (``learn`` / ``deploy`` / ``spawn`` / ``rate`` /
    ``heuristic``, driven directly on an environment's round data), or an expert specification
    of a compiled :class:`~mlcb.contracts.ExpertFamily` (every member of the family, then a short
    simulation of a pool of it).

Examples
--------
>>> from mlcb.testing import ConformanceError
>>> issubclass(ConformanceError, AssertionError)
True
"""

from __future__ import annotations

import copy
import dataclasses
import io
import math
import numbers
import pickle
import random
from typing import Any

import numpy as np

from mlcb._jit import JIT_DISABLED, KERNEL_OPTIONS, kernel, uncached
from mlcb.contracts import FAMILY_ATTRIBUTE
from mlcb.engine import compiled_loop
from mlcb.kernels import begin_round, end_round, observe, select

__all__ = ["ConformanceError", "check_env", "check_expert", "check_policy"]

#: The confidence level the checks evaluate rate functions at (``delta' = DELTA / (2 K)``).
DELTA = 0.1


class ConformanceError(AssertionError):
    """An object breaks its contract (:mod:`mlcb.contracts`); the message says where and how to fix it."""


# --- shared helpers ----------------------------------------------------------------------------
def _fail(who: str, message: str) -> None:
    raise ConformanceError(f"{who}: {message}")


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _describe(value: Any) -> str:
    """``value`` and its type, briefly, for messages."""
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    kind = type(value).__name__
    if isinstance(value, (tuple, list)):
        kind = f"a {kind} of {len(value)}"
    return f"{text} ({kind})"


def _leaves(value: Any, path: str):
    """``(path, leaf)`` of every array or scalar of nested NamedTuples."""
    if _is_namedtuple(value):
        for name, item in zip(type(value)._fields, value):
            yield from _leaves(item, f"{path}.{name}")
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _same(a: Any, b: Any) -> bool:
    """Bitwise equality of two leaves (NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if _is_real(a) and _is_real(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (an exotic leaf: compare what pickling gives)
        return pickle.dumps(a) == pickle.dumps(b)


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    """The path of the first leaf where two nested NamedTuples differ, or ``None``."""
    left, right = list(_leaves(a, path)), list(_leaves(b, path))
    if [p for p, _ in left] != [p for p, _ in right]:
        return path
    for (where, x), (_, y) in zip(left, right):
        if not _same(x, y):
            return where
    return None


_LEAF_TYPES = (np.ndarray, np.generic, int, float, bool, complex, str)


def _build_difference(first: tuple, second: tuple) -> str | None:
    """Where two ``(params, state)`` pairs differ first, or ``None``."""
    for what, a, b in zip(("params", "state"), first, second):
        where = _first_difference(a, b, what)
        if where is not None:
            return where
    return None


def _check_kernel_tuple(who: str, value: Any, what: str, fix: str) -> None:
    """``value`` must be a NamedTuple of arrays and scalars (what Numba compiles)."""
    if not _is_namedtuple(value):
        _fail(who, f"{what} is {_describe(value)}, not a NamedTuple; {fix}")
    for path, leaf in _leaves(value, what):
        if not isinstance(leaf, _LEAF_TYPES):
            _fail(
                who,
                f"{path} is {_describe(leaf)}; the compiled kernels read NamedTuples of NumPy arrays "
                f"and scalars only: {fix}",
            )


def _check_fresh_state(who: str, first: Any, second: Any, what: str) -> None:
    """Two builds must not share a mutable array (replications run in parallel threads)."""
    for (path, a), (_, b) in zip(_leaves(first, what), _leaves(second, what)):
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size and np.shares_memory(a, b):
            _fail(
                who,
                f"two calls return the same array {path}; the engine mutates the state and runs "
                "replications in parallel threads: allocate fresh state arrays in every call",
            )


def _two(who: str, value: Any, what: str) -> tuple[Any, Any]:
    if not (isinstance(value, tuple) and len(value) == 2):
        _fail(who, f"{what} returned {_describe(value)}; it must return a pair (params, state)")
    return value


_UNCACHED = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
_PACKAGES = ("mlcb", "envs", "agents")


def _compiled(cached: Any, uncached: Any, *arguments: Any) -> Any:
    """The cached probe when every argument type comes from this project, its uncached twin
    otherwise (a user's types must never enter the on-disk cache's index)."""
    own = all(type(a).__module__.partition(".")[0] in _PACKAGES for a in arguments)
    return cached if own else uncached


# --- environments ------------------------------------------------------------------------------
@kernel
def _begin_round_probe(params, state, t):
    begin_round(params, state, t)
    return 0


_begin_round_probe_uncached = uncached(_begin_round_probe, **_UNCACHED)


def _begin(who: str, params: Any, state: Any, t: int) -> None:
    """Draw ``xi_t`` into ``state`` through the environment's compiled ``begin_round``."""
    probe = _compiled(_begin_round_probe, _begin_round_probe_uncached, params, state)
    try:
        probe(params, state, t)
    except Exception as error:  # noqa: BLE001 (Numba typing errors have many classes)
        _fail(
            who,
            f"the compiled begin_round(params, state, t) fails on what build returns: "
            f"{type(error).__name__}: {_first_line(error)}; register a kernel with "
            "mlcb.kernels.implements('begin_round', ParamsType) that Numba can compile, or none",
        )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _resolve_env(env: Any, env_params: dict | None) -> tuple[Any, str]:
    if isinstance(env, str):
        import envs

        try:
            return envs.make(env, **(env_params or {})), repr(env)
        except (ValueError, TypeError) as error:
            raise ConformanceError(f"environment {env!r}: cannot be made: {error}") from error
    if env_params:
        raise TypeError("env_params is for a registered environment name; pass env as a name")
    return env, type(env).__name__


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
        if isinstance(n_arms, (bool, np.bool_)) or not isinstance(n_arms, numbers.Integral) or n_arms < 1:
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


def _check_unit(who: str, value: Any, where: str, what: str, allow_nan: bool = False) -> float:
    if not _is_real(value):
        _fail(who, f"{where} returned {_describe(value)}; {what} must be a float in [0, 1]")
    value = float(value)
    if math.isnan(value):
        if allow_nan:
            return value
        _fail(who, f"{where} returned nan; {what} must be a number in [0, 1], not nan")
    if not 0.0 <= value <= 1.0:
        _fail(
            who,
            f"{where} returned {value!r}, outside [0, 1]; {what} must lie in [0, 1] "
            "(M-LCB's Assumption 1): normalise or clip it",
        )
    return value


def check_env(
    env: Any,
    *,
    env_params: dict | None = None,
    seed: int = 0,
    rounds: int = 3,
    gymnasium: bool = True,
) -> None:
    """Check that an environment follows :class:`mlcb.contracts.Environment`.

    Checks, in order:

    - ``n_experts`` is present: an integer ``>= 1`` or ``None``;
    - ``build(seed, replication)`` returns a pair of ``NamedTuple``\\ s of arrays and scalars,
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

    Examples
    --------
    >>> from mlcb.testing import check_env
    >>> check_env("mlcb/Trap-v0", env_params={"n_experts": 3})
    """
    env, name = _resolve_env(env, env_params)
    who = f"environment {name}"

    # n_experts
    if not hasattr(env, "n_experts"):
        _fail(who, "has no attribute n_experts; set it to the number of experts it fixes, or None")
    n_experts = env.n_experts
    if n_experts is not None and (
        isinstance(n_experts, (bool, np.bool_))
        or not isinstance(n_experts, numbers.Integral)
        or n_experts < 1
    ):
        _fail(who, f"n_experts is {_describe(n_experts)}; it must be an integer >= 1 or None")
    for method in ("build", "optimal_loss", "round_data"):
        if not callable(getattr(env, method, None)):
            _fail(who, f"has no method {method}; see mlcb.contracts.Environment")

    # build
    fix = "return (params, state) NamedTuples of NumPy arrays and scalars"
    first = _two(f"{who}.build", env.build(seed, 0), f"build({seed}, 0)")
    for what, part in zip(("params", "state"), first):
        _check_kernel_tuple(f"{who}.build({seed}, 0)", part, what, fix)
    second = _two(f"{who}.build", env.build(seed, 0), f"build({seed}, 0)")
    where = _build_difference(first, second)
    if where is not None:
        _fail(
            f"{who}.build({seed}, 0)",
            f"is not deterministic: {where} differs between two calls with the same (seed, replication); "
            "draw everything from the streams of mlcb.seeding (instance_rng, stream_keys) keyed by "
            "(seed, replication), never from global or unseeded generators",
        )
    _check_fresh_state(f"{who}.build({seed}, 0)", first[1], second[1], "state")
    if _build_difference(first, env.build(seed, 1)) is None:
        if _build_difference(first, env.build(seed + 1, 0)) is not None:
            _fail(
                f"{who}.build",
                f"build({seed}, 0) and build({seed}, 1) are equal although build depends on the seed: "
                "every replication would face the same draw; key the instance and the streams by "
                "(seed, replication)",
            )

    # optimal_loss
    params, state = first
    for k in _expert_indices(n_experts):
        _check_unit(f"{who}", env.optimal_loss(params, k), f"optimal_loss(params, {k})", "an optimal loss")

    # round_data after begin_round, deterministic
    experts = _expert_indices(n_experts)[:3]
    prints = []
    for params, state in (first, second):
        seen = []
        for t in range(rounds + 1):
            _begin(f"{who}", params, state, t)
            for k in experts:
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
    _check_round_data_block(who, env, seed, rounds)

    if gymnasium:
        _gymnasium_check(who, env)


def _check_round_data_block(who: str, env: Any, seed: int, rounds: int) -> None:
    """An optional ``round_data_block`` gives, for replications 0 and 1 together, what
    ``round_data`` gives for each."""
    block = getattr(env, "round_data_block", None)
    if block is None:
        return
    if not callable(block) or not getattr(env, "round_data_shared", False):
        _fail(
            f"{who}.round_data_block",
            "is offered but the environment does not declare round_data_shared = True (or it is not a "
            "method); the Python engine uses it only for round data shared by every expert",
        )
    pairs = [env.build(seed, 0), env.build(seed, 1)]
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


def _gymnasium_check(who: str, env: Any) -> None:
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env as gymnasium_check_env

    if not isinstance(env, gym.Env):
        _fail(
            who,
            f"is a {type(env).__name__}, not a gymnasium.Env; subclass gymnasium.Env (or pass "
            "gymnasium=False to skip Gymnasium's checker)",
        )
    try:
        gymnasium_check_env(env.unwrapped, skip_render_check=True)
    except Exception as error:  # noqa: BLE001 (Gymnasium raises assertions and others)
        raise ConformanceError(
            f"{who}: Gymnasium's checker (gymnasium.utils.env_checker.check_env) fails: "
            f"{type(error).__name__}: {error}; fix the Gymnasium interface (spaces, reset, step)"
        ) from error


# --- policies ----------------------------------------------------------------------------------
_UNSET = -2  # what the probe writes into selected before each select
_UNSET_WIDTH = -7.25  # and into widths


@kernel
def _policy_probe(
    params,
    state,
    stats,
    key,
    losses,
    rates,
    warm,
    size,
    visible,
    buffer,
    width_buffer,
    out_selected,
    out_widths,
    out_n,
    out_deployed,
):
    """The engine's round loop on synthetic losses; stops at the first invalid choice.

    ``select`` sees views of length ``visible`` (``size``, as in the engine, when compiled); what
    it writes past ``size`` entries lands in the rest of ``buffer`` / ``width_buffer``, where the
    caller finds it.
    """
    n_experts = stats.shape[0]
    selected = buffer[:visible]
    widths = width_buffer[:visible]
    if warm:
        for k in range(n_experts):
            loss = losses[0, k]
            expert = stats[k]
            expert.n += 1
            expert.loss_sum += loss
            expert.rate = rates[expert.n]
            observe(params, state, stats, k, loss, 0)
    for t in range(1, out_n.shape[0] + 1):
        for j in range(buffer.shape[0]):
            buffer[j] = -2
            width_buffer[j] = -7.25
        n_selected, chosen = select(params, state, stats, t, key, selected, widths)
        for j in range(buffer.shape[0]):
            out_selected[t - 1, j] = buffer[j]
            out_widths[t - 1, j] = width_buffer[j]
        out_n[t - 1] = n_selected
        out_deployed[t - 1] = chosen
        if n_selected < 1 or n_selected > size or chosen < -1 or chosen >= n_experts:
            return t
        for j in range(buffer.shape[0]):
            if j >= size and buffer[j] != -2:
                return t
        for j in range(n_selected):
            if selected[j] < 0 or selected[j] >= n_experts:
                return t
        if chosen >= 0:
            loss = losses[t, chosen]
            stats[chosen].deployed += 1
        else:
            loss = 0.0
            for j in range(n_selected):
                loss += losses[t, selected[j]]
                stats[selected[j]].deployed += 1
            loss /= n_selected
        for j in range(n_selected):
            k = selected[j]
            one = losses[t, k]
            expert = stats[k]
            expert.n += 1
            expert.loss_sum += one
            expert.rate = rates[expert.n]
            observe(params, state, stats, k, one, t)
        end_round(params, state, stats, selected, n_selected, chosen, loss, t)
    return 0


_policy_probe_uncached = uncached(_policy_probe, **_UNCACHED)


def _resolve_policy(policy: Any, policy_params: dict | None) -> tuple[Any, str | None, str]:
    from mlcb import policies

    if isinstance(policy, str):
        try:
            return policies.make(policy, **(policy_params or {})), policy, f"policy {policy!r}"
        except (ValueError, TypeError) as error:
            raise ConformanceError(f"policy {policy!r}: cannot be made: {error}") from error
    if policy_params:
        raise TypeError("policy_params is for a registered policy name; pass policy as a name")
    return policy, None, f"policy {type(policy).__name__}"


def _flag(who: str, policy: Any, name: str, default: bool) -> bool:
    value = getattr(policy, name, default)
    if not _is_bool(value):
        _fail(who, f"{name} is {_describe(value)}; it must be a bool (True or False)")
    return bool(value)


def check_policy(
    policy: Any,
    *,
    policy_params: dict | None = None,
    n_experts: int = 6,
    budget: int = 2,
    horizon: int = 200,
    seed: int = 0,
    simulate: bool = True,
) -> None:
    """Check that a meta-policy follows :class:`mlcb.contracts.Policy` and :mod:`mlcb.kernels`.

    Checks, in order:

    - the policy is a frozen dataclass; ``warm_start``, ``has_certificate`` and
      ``certificate_valid`` are bools (a valid certificate needs one); ``selection_size`` (the
      budget by default) is an integer in ``[1, n_experts]``;
    - ``build(n_experts, budget, delta, horizon, optimal)`` returns a pair of ``NamedTuple``\\ s of
      arrays and scalars, with fresh state arrays on every call;
    - a compiled probe runs the engine's round loop on synthetic Bernoulli losses for ``horizon``
      rounds, calling the policy's ``select``, ``observe`` and ``end_round`` kernels: every round
      ``select`` returns ``1 <= n_selected <= selection_size`` distinct expert indices in
      ``[0, n_experts)``, writes nothing past ``selection_size`` entries, writes a width for
      every selected expert (finite and ``>= 0`` with a certificate, ``nan`` or ``>= 0``
      otherwise), and deploys an expert index or ``-1`` (Top-M); a second run with the same
      stream key gives the same rounds;
    - with ``simulate``, a short simulation of the policy object on a trap of ``n_experts`` UCB1
      experts (two replications of ``horizon`` rounds) runs twice on the compiled engine and once
      on the Python engine (:mod:`mlcb.engine.python_loop`), and all three agree round by round
      (training sets, deployed experts, regret, training counts).

    Parameters
    ----------
    policy : str or Policy
        A registered policy name (``mlcb.policies.names()``) or a policy object.
    policy_params : dict, optional
        Keyword arguments of a registered policy.
    n_experts, budget : int
        ``K`` and ``M`` of the checks (a budget the policy accepts).
    horizon : int
        Rounds of the probe and of the simulation.
    seed : int
        Seed of the synthetic losses, of the policy's stream key and of the simulation.
    simulate : bool
        Also run the short simulations.

    Raises
    ------
    ConformanceError
        Naming the policy, the method and what to fix.

    Examples
    --------
    >>> from mlcb.testing import check_policy
    >>> check_policy("greedy", n_experts=4, budget=2, horizon=50, simulate=False)
    """
    policy, name, who = _resolve_policy(policy, policy_params)
    n_experts, budget = int(n_experts), int(budget)
    if not 1 <= budget <= n_experts:
        raise ValueError(f"budget must be an integer in [1, n_experts={n_experts}], got {budget!r}")

    # the dataclass and its attributes
    if not (dataclasses.is_dataclass(policy) and not isinstance(policy, type)):
        _fail(
            who, "is not a dataclass instance; make the policy a frozen dataclass (@dataclass(frozen=True))"
        )
    if not type(policy).__dataclass_params__.frozen:
        _fail(who, "is a dataclass but not frozen; declare it with @dataclass(frozen=True)")
    if not callable(getattr(policy, "build", None)):
        _fail(who, "has no method build(n_experts, budget, delta, horizon, optimal)")
    warm = _flag(who, policy, "warm_start", True)
    has_certificate = _flag(who, policy, "has_certificate", False)
    valid = _flag(who, policy, "certificate_valid", False)
    if valid and not has_certificate:
        _fail(who, "certificate_valid is True but has_certificate is False; a valid certificate needs one")
    size = budget
    if getattr(policy, "selection_size", None) is not None:
        size = policy.selection_size(n_experts, budget)
        if (
            isinstance(size, (bool, np.bool_))
            or not isinstance(size, numbers.Integral)
            or not 1 <= size <= n_experts
        ):
            _fail(
                f"{who}.selection_size({n_experts}, {budget})",
                f"returned {_describe(size)}; it must be an integer in [1, n_experts={n_experts}]",
            )
        size = int(size)

    # build
    rng = np.random.default_rng(seed)
    means = np.linspace(0.2, 0.8, n_experts)
    optimal = means.copy()
    fix = "return (params, state) NamedTuples of NumPy arrays and scalars for the compiled kernels"
    where = f"{who}.build({n_experts}, {budget}, {DELTA}, {horizon}, optimal)"
    first = _two(where, policy.build(n_experts, budget, DELTA, horizon, optimal.copy()), "build")
    for what, part in zip(("params", "state"), first):
        _check_kernel_tuple(where, part, what, fix)
    second = _two(where, policy.build(n_experts, budget, DELTA, horizon, optimal.copy()), "build")
    _check_fresh_state(where, first[1], second[1], "state")

    # the compiled probe, twice
    losses = (rng.random((horizon + 1, n_experts)) < means).astype(np.float64)
    counts = np.arange(horizon + 2, dtype=float)
    rates = np.minimum(counts, 2.0 * np.sqrt(counts * np.log(np.maximum(counts, 2.0))))
    key = np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]
    runs = [_probe_policy(who, policy, n_experts, budget, size, horizon, losses, rates, key, warm)]
    runs.append(_probe_policy(who, policy, n_experts, budget, size, horizon, losses, rates, key, warm))
    for label, a, b in zip(("selected", "widths", "n_selected", "deployed"), runs[0], runs[1]):
        if not _same(a, b):
            round_ = next(t for t in range(horizon) if not _same(a[t], b[t])) + 1
            _fail(
                f"{who}.select",
                f"is not deterministic: {label} differs at round {round_} between two runs with the same "
                "stream key and the same losses; draw randomness from the key argument "
                "(mlcb.random.uniform(key, t, slot)), never from a global generator",
            )

    if simulate:
        _simulate_policy(who, policy, name, policy_params, n_experts, budget, horizon, seed)


def _probe_policy(who, policy, n_experts, budget, size, horizon, losses, rates, key, warm):
    params, state = policy.build(n_experts, budget, DELTA, horizon, np.linspace(0.2, 0.8, n_experts))
    stats = compiled_loop.new_stats(n_experts)
    guard = n_experts + size + 8
    buffer = np.full(guard, _UNSET, dtype=np.int64)
    width_buffer = np.full(guard, _UNSET_WIDTH)
    out_selected = np.full((horizon, guard), _UNSET, dtype=np.int64)
    out_widths = np.full((horizon, guard), _UNSET_WIDTH)
    out_n = np.zeros(horizon, dtype=np.int64)
    out_deployed = np.zeros(horizon, dtype=np.int64)
    probe = _compiled(_policy_probe, _policy_probe_uncached, params, state)
    try:
        stop = probe(
            params,
            state,
            stats,
            key,
            losses,
            rates,
            warm,
            size,
            guard if JIT_DISABLED else size,  # a Python slice would raise before the guard shows it
            buffer,
            width_buffer,
            out_selected,
            out_widths,
            out_n,
            out_deployed,
        )
    except Exception as error:  # noqa: BLE001 (Numba typing errors have many classes)
        raise ConformanceError(
            f"{who}: its compiled kernels cannot run on what build returns: {type(error).__name__}: "
            f"{_first_line(error)}; register select (and optionally observe, end_round) for its params "
            "type with mlcb.kernels.implements, with no array allocation"
        ) from error
    rounds = int(stop) if stop else horizon
    certificate = bool(getattr(policy, "has_certificate", False))
    for t in range(1, rounds + 1):
        row = t - 1
        _check_round(
            who,
            t,
            out_selected[row],
            out_widths[row],
            int(out_n[row]),
            int(out_deployed[row]),
            n_experts,
            budget,
            size,
            certificate,
        )
    return out_selected, out_widths, out_n, out_deployed


def _check_round(who, t, selected, widths, n_selected, deployed, n_experts, budget, size, certificate):
    where = f"{who}.select at round {t}"
    if n_selected < 1:
        _fail(where, f"returned n_selected = {n_selected}; train at least one expert per round")
    if n_selected > size:
        _fail(
            where,
            f"returned n_selected = {n_selected} experts, more than selection_size = {size} "
            f"(budget M = {budget}, K = {n_experts}); train at most selection_size experts per round "
            "(or declare selection_size(n_experts, budget))",
        )
    beyond = np.flatnonzero(selected[size:] != _UNSET)
    if beyond.size:
        _fail(
            where,
            f"wrote selected[{size + int(beyond[0])}], past its {size} entries (selection_size); the "
            "engine's buffer has exactly selection_size entries: write only selected[:n_selected]",
        )
    chosen = selected[:n_selected]
    if np.any(chosen == _UNSET):
        j = int(np.flatnonzero(chosen == _UNSET)[0])
        _fail(where, f"returned n_selected = {n_selected} but did not write selected[{j}]")
    bad = chosen[(chosen < 0) | (chosen >= n_experts)]
    if bad.size:
        _fail(where, f"selected expert {int(bad[0])}, not an index in [0, {n_experts})")
    if len(np.unique(chosen)) != len(chosen):
        _fail(where, f"selected {chosen.tolist()}: an expert twice; the training set holds distinct experts")
    if not (deployed == -1 or 0 <= deployed < n_experts):
        _fail(
            where,
            f"deployed {deployed}; deploy an expert index in [0, {n_experts}) or -1 (Top-M: every "
            "selected expert)",
        )
    values = widths[:n_selected]
    if np.any(values == _UNSET_WIDTH):
        j = int(np.flatnonzero(values == _UNSET_WIDTH)[0])
        _fail(
            where,
            f"did not write widths[{j}]; write each selected expert's UCB - LCB (nan for a policy "
            "without confidence bounds)",
        )
    if certificate and not np.all(np.isfinite(values) & (values >= 0)):
        _fail(
            where,
            f"wrote widths {values.tolist()}; a policy with has_certificate reports finite widths "
            "UCB - LCB >= 0",
        )
    if np.any(values < 0):
        _fail(where, f"wrote widths {values.tolist()}; widths UCB - LCB are >= 0 (or nan)")


def _simulate_policy(who, policy, name, policy_params, n_experts, budget, horizon, seed) -> None:
    """Two runs of the compiled engine and one of the Python engine on a small trap of UCB1
    experts, with the policy object itself (a registered name's config is built, then its policy
    replaced): they must run, and agree round by round."""
    import agents
    from mlcb import engine
    from mlcb.config import SimulationConfig
    from mlcb.engine import python_loop
    from mlcb.simulation import Problem

    config = SimulationConfig(
        env="mlcb/Trap-v0",
        env_params={"n_experts": n_experts},
        experts=tuple([agents.make("ucb1")] * n_experts),
        policy=name if name is not None else "round-robin",
        policy_params=dict(policy_params or {}) if name is not None else {},
        budget=budget,
        horizon=horizon,
        replications=2,
        seed=seed,
    )
    problem = dataclasses.replace(Problem.from_config(config), policy=policy)
    grid = engine.checkpoint_grid(horizon, 20)
    runs = {}
    for label, run in (
        ("the compiled engine", engine.run_replications),
        ("the compiled engine again", engine.run_replications),
        ("the Python engine", python_loop.run_replications),
    ):
        try:
            runs[label] = run(problem, seed, range(2), horizon, grid, trace_rounds=horizon)
        except Exception as error:  # noqa: BLE001 (the engines report every failure)
            raise ConformanceError(
                f"{who}: a short simulation on {label} ({n_experts}-expert trap, budget {budget}) fails: "
                f"{type(error).__name__}: {error}"
            ) from error
    first = runs["the compiled engine"]
    for label in ("the compiled engine again", "the Python engine"):
        for a, b in zip(first, runs[label]):
            for field in ("trace_selected", "trace_deployed", "regret", "pseudo_regret", "trained"):
                if not _same(np.asarray(getattr(a, field)), np.asarray(getattr(b, field))):
                    _fail(
                        who,
                        f"replication {a.index} of a short simulation gives a different {field} on {label} "
                        "than on the compiled engine (same seed); every random draw must come from the "
                        "key arguments, and the kernels may keep no state outside the policy's state",
                    )
    for replication in first:
        if not np.all(np.isfinite(replication.regret)):
            _fail(who, "a short simulation gives a non-finite realized regret")


# --- experts -----------------------------------------------------------------------------------
def _counts() -> np.ndarray:
    dense = np.arange(1, 65)
    sparse = np.round(np.geomspace(64, 1e6, 60)).astype(np.int64)
    return np.unique(np.concatenate([dense, sparse])).astype(np.int64)


def _check_rate_values(who: str, values: Any, n: np.ndarray, valid: bool, where: str) -> None:
    """A rate function's values at counts ``n``: finite, >= 0 (> 0 from n = 2), non-decreasing,
    and at most ``n`` when declared valid."""
    values = np.asarray(values, dtype=float)
    if values.shape != n.shape:
        _fail(
            who,
            f"{where} has shape {values.shape} for {n.shape[0]} counts; a rate function is vectorised "
            "over an array of counts n",
        )
    bad = ~np.isfinite(values) | (values < 0) | ((values <= 0) & (n >= 2))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        _fail(
            who, f"{where} at n = {int(n[i])} is {float(values[i])!r}; a rate U(n, delta') is finite and > 0"
        )
    drops = np.flatnonzero(np.diff(values) < -1e-9 * np.maximum(1.0, np.abs(values[:-1])))
    if drops.size:
        i = int(drops[0])
        _fail(
            who,
            f"{where} decreases: U({int(n[i])}) = {float(values[i])!r} > U({int(n[i + 1])}) = "
            f"{float(values[i + 1])!r}; "
            "a regret bound U(n, delta') must be non-decreasing in n",
        )
    if valid:
        over = np.flatnonzero(values > n * (1 + 1e-12))
        if over.size:
            i = int(over[0])
            _fail(
                who,
                f"{where} at n = {int(n[i])} is {float(values[i])!r} > n while declared valid "
                "(heuristic False); cap it with min(n, ...)",
            )


def _parse(who: str, out: Any, method: str, t: int, second: str) -> tuple[float, Any]:
    where = f"{method}(data) at round {t}"
    if type(out) is tuple:
        if len(out) != 2:
            _fail(
                who,
                f"{where} returned {_describe(out)}; it must return the loss (a float) or a pair "
                f"(loss, {second})",
            )
        loss, extra = out
    elif _is_real(out):
        loss, extra = out, None
    else:
        _fail(
            who,
            f"{where} returned {_describe(out)}; it must return the loss (a float) or a tuple "
            f"(loss, {second})",
        )
    return _check_unit(who, loss, where, "a loss"), extra


class _Stream:
    """Round data ``xi_0, xi_1, ...`` of one replication as expert ``k`` sees it."""

    def __init__(self, who: str, env: Any, seed: int, k: int = 0) -> None:
        self.who, self.env, self.k = who, env, k
        self.params, self.state = env.build(seed, 0)
        self.t = -1

    def next(self) -> Any:
        self.t += 1
        _begin(self.who, self.params, self.state, self.t)
        return self.env.round_data(self.params, self.state, self.t, self.k)


def _rng_free_pickle(obj: Any) -> bytes | None:
    """``obj`` pickled with its random generators left out (their draws are judged by behaviour),
    or ``None`` when it does not pickle."""

    class _Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
                return "rng"
            if isinstance(value, random.Random):
                return "rng"
            return None

    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except Exception:  # noqa: BLE001 (anything unpicklable: no snapshot)
        return None
    return buffer.getvalue()


def _attributes(obj: Any) -> dict[str, Any] | None:
    """An object's attributes (``__dict__`` and ``__slots__``), or ``None`` when it has neither."""
    found: dict[str, Any] = {}
    has = False
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            has = True
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                found[name] = getattr(obj, name)
    if hasattr(obj, "__dict__"):
        has = True
        found.update(vars(obj))
    return found if has else None


_MISSING = object()


def _snapshot(learner: Any) -> tuple[bytes | None, dict | None]:
    """The learner pickled whole and attribute by attribute (random generators left out)."""
    attributes = _attributes(learner)
    if attributes is not None:
        attributes = {
            name: (None if value is None else _rng_free_pickle(value)) for name, value in attributes.items()
        }
    return _rng_free_pickle(learner), attributes


def _state_changes(before: tuple[bytes | None, dict | None], learner: Any) -> list[str] | None:
    """Attributes whose value changed since the snapshot ``before``, except lazily initialised
    ones (absent or ``None`` before); ``None`` when there is no way to tell."""
    pickled, attributes = before
    if attributes is None:
        if pickled is None:
            return None
        return [] if _rng_free_pickle(learner) == pickled else ["(its pickled state)"]
    after = _snapshot(learner)[1] or {}
    changed = []
    for name, old in attributes.items():
        if old is None:
            continue  # lazily initialised on first use
        new = after.get(name, _MISSING)
        if new is _MISSING or old != new:
            changed.append(name)
    return changed


def _outputs_equal(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    return all(
        _same(x, y) if not isinstance(x, tuple) else (len(x) == len(y) and all(map(_same, x, y)))
        for x, y in zip(a, b)
    )


def _call(learner: Any, method: str, data: Any) -> Any:
    out = getattr(learner, method)(data)
    if type(out) is tuple:
        return tuple(float(v) if _is_real(v) else v for v in out)
    return float(out) if _is_real(out) else out


def _replay(who: str, learner: Any, env: Any, seed: int, rounds: int) -> list:
    """Outputs of deploy then learn, round after round, as the engine calls them."""
    stream = _Stream(who, env, seed)
    outputs = []
    for _ in range(rounds):
        data = stream.next()
        outputs.append(_call(learner, "deploy", data))
        outputs.append(_call(learner, "learn", data))
    return outputs


def _check_python_expert(who, expert, env, seed, rounds, n_experts) -> None:
    delta_prime = DELTA / (2.0 * n_experts)
    heuristic = getattr(expert, "heuristic", True)
    if not _is_bool(heuristic):
        _fail(who, f"heuristic is {_describe(heuristic)}; it must be a bool (True unless its rate is valid)")

    # rate
    rate = getattr(expert, "rate", None)
    if rate is None:
        rate = (1.0, 0.5)
    n = _counts()
    if callable(rate):
        try:
            values = rate(n, delta_prime)
        except Exception as error:  # noqa: BLE001 (a user's function)
            raise ConformanceError(
                f"{who}.rate(n, delta_prime) fails on an array of counts: {type(error).__name__}: "
                f"{error}; rate functions are vectorised over n"
            ) from error
        _check_rate_values(who, values, n, not heuristic, "rate(n, delta')")
    elif isinstance(rate, (tuple, list)) and len(rate) == 2 and all(map(_is_real, rate)):
        beta, alpha = map(float, rate)
        if not (math.isfinite(beta) and beta > 0 and 0 < alpha <= 1):
            _fail(who, f"rate is {rate!r}; a pair (beta, alpha) needs beta > 0 and 0 < alpha <= 1")
        values = np.minimum(n, beta * n**alpha * np.sqrt(np.log(2.0 * n * n / delta_prime)))
        _check_rate_values(who, values, n, not heuristic, f"rate {rate!r}")
    else:
        _fail(
            who,
            f"rate is {_describe(rate)}; it must be a callable rate(n, delta_prime) or a pair (beta, alpha)",
        )

    # spawn
    spawn = getattr(expert, "spawn", None)
    if spawn is not None and not callable(spawn):
        _fail(who, f"spawn is {_describe(spawn)}; it must be a method spawn(seed) or absent")

    def fresh(s: int) -> Any:
        if spawn is None:
            return copy.deepcopy(expert)
        before = _rng_free_pickle(expert)
        child = expert.spawn(s)
        if child is expert:
            _fail(who, f"spawn({s}) returned the expert itself; return a fresh, untrained copy")
        if not (callable(getattr(child, "learn", None)) and callable(getattr(child, "deploy", None))):
            _fail(who, f"spawn({s}) returned {_describe(child)}, not a learner with learn and deploy")
        if before is not None and _rng_free_pickle(expert) != before:
            _fail(who, f"spawn({s}) changed the expert it was called on; spawn must only make a copy")
        return child

    # learn and deploy, round after round, with every check
    learner = fresh(seed)
    stream = _Stream(who, env, seed)
    reference = []
    for t in range(rounds):
        data = stream.next()
        before = _snapshot(learner)
        try:
            twin = copy.deepcopy(learner) if t in (1, rounds // 2) else None
        except Exception:  # noqa: BLE001 (a learner that cannot be copied: judged by its snapshot)
            twin = None
        out = _call(learner, "deploy", data)
        _, expected = _parse(who, out, "deploy", t, "expected_loss")
        if expected is not None:
            _check_unit(who, expected, f"deploy(data) at round {t}", "an expected loss", allow_nan=True)
        changed = _state_changes(before, learner)
        if changed:
            _fail(
                who,
                f"deploy(data) at round {t} changed the learner's state (attributes "
                f"{', '.join(map(repr, changed))}); deploy must not learn: compute the smoothed "
                "decision's loss without updating the learner",
            )
        reference.append(out)
        if twin is not None:
            _check_deploy_leaves_learning(who, twin, copy.deepcopy(learner), env, seed, t)
        learned = _call(learner, "learn", data)
        _, rate_now = _parse(who, learned, "learn", t, "rate")
        if rate_now is not None:
            if not (_is_real(rate_now) and math.isfinite(rate_now) and rate_now >= 0):
                _fail(
                    who,
                    f"learn(data) at round {t} returned the rate {_describe(rate_now)}; a rate U(n, delta') "
                    "is a finite number >= 0",
                )
            if not heuristic and rate_now > t + 1:
                _fail(
                    who,
                    f"learn(data) at round {t} returned the rate {rate_now!r} > n = {t + 1} while declared "
                    "valid (heuristic False); cap it with min(n, ...)",
                )
        reference.append(learned)

    # deterministic for a seed, and a fresh copy from a trained one
    if spawn is not None:
        again = _replay(who, fresh(seed), env, seed, rounds)
        if not _outputs_equal(reference, again):
            _fail(
                who,
                f"spawn({seed}) is not deterministic: two copies spawned with the same seed give different "
                "losses on the same data; seed every random stream of the copy from the seed",
            )
        trained = expert.spawn(seed)
        _replay(who, trained, env, seed, rounds)
        child = trained.spawn(seed)
        if not _outputs_equal(reference, _replay(who, child, env, seed, rounds)):
            _fail(
                who,
                f"spawn({seed}) of a trained learner does not give a fresh, untrained copy (its losses "
                f"differ from spawn({seed}) of an untrained one); build the copy from the hyper-parameters "
                "only",
            )

    # optimal_loss (optional)
    optimal = getattr(expert, "optimal_loss", None)
    if callable(optimal):
        params, _ = env.build(seed, 0)
        _check_unit(who, optimal(env, params), "optimal_loss(env, env_params)", "an optimal loss")


def _check_deploy_leaves_learning(who, before, after, env, seed, t, horizon=10) -> None:
    """Copies of the learner taken before and after ``deploy`` at round ``t`` must learn alike on
    the rounds ``t, t + 1, ...`` (a deploy that draws from the stream ``learn`` uses fails)."""
    streams = [_Stream(who, env, seed), _Stream(who, env, seed)]
    for stream in streams:
        for _ in range(t):
            stream.next()
    for step in range(horizon):
        one = _call(before, "learn", streams[0].next())
        two = _call(after, "learn", streams[1].next())
        if not _outputs_equal([one], [two]) or (
            step == horizon - 1 and _rng_free_pickle(before) != _rng_free_pickle(after)
        ):
            _fail(
                who,
                f"deploy(data) at round {t} changed what learn does next (round {t + step}: learn returned "
                f"{two!r} after deploy, {one!r} without); deploy must not learn, nor draw from the "
                "random stream learn uses (give deploy a generator of its own)",
            )


def _family_of(who: str, expert: Any) -> Any:
    family = getattr(type(expert), FAMILY_ATTRIBUTE, None)
    if family is None or isinstance(family, (int, str)):
        return None
    return family


def _check_family(who, expert, family, env, seed, n_experts) -> list:
    fname = f"family {getattr(family, 'name', type(family).__name__)!r} of {who}"
    for member in ("check", "optimal_losses", "rates", "heuristic"):
        if not callable(getattr(family, member, None)):
            _fail(fname, f"has no method {member}; see mlcb.contracts.ExpertFamily")
    name = getattr(family, "name", None)
    if not (isinstance(name, str) and name):
        _fail(fname, f"name is {_describe(name)}; it must be a non-empty string")
    smoothing = getattr(family, "smoothing", None)
    if not (isinstance(smoothing, tuple) and smoothing and all(isinstance(s, str) for s in smoothing)):
        _fail(fname, f"smoothing is {_describe(smoothing)}; it must be a non-empty tuple of wrapper names")
    if getattr(family, "build_pool", None) is None and getattr(family, "batched_pool", None) is None:
        _fail(fname, "has neither build_pool nor batched_pool; the engine cannot run a pool of it")

    pool = [expert] * n_experts
    try:
        family.check(pool, env)
    except ValueError as error:
        raise ConformanceError(
            f"{fname}.check refuses a pool of {who} on {type(env).__name__}: {error}; check it on a "
            "suitable environment (env=...)"
        ) from error
    params, _ = env.build(seed, 0)
    optimal = np.asarray(family.optimal_losses(pool, env, params), dtype=float)
    if optimal.shape != (n_experts,):
        _fail(fname, f"optimal_losses returned shape {optimal.shape}; it must be ({n_experts},)")
    for k, value in enumerate(optimal):
        _check_unit(fname, float(value), f"optimal_losses(...)[{k}]", "an optimal loss L_k*")
    flags = family.heuristic(pool, env)
    if not (isinstance(flags, (list, tuple, np.ndarray)) and len(flags) == n_experts):
        _fail(fname, f"heuristic returned {_describe(flags)}; it must be a list of {n_experts} bools")
    for k, flag in enumerate(flags):
        if not _is_bool(flag):
            _fail(fname, f"heuristic(...)[{k}] is {_describe(flag)}; it must be a bool")
    n = _counts()
    rates = family.rates(pool, env, n, DELTA / (2.0 * n_experts))
    if rates is not None:
        rates = np.asarray(rates, dtype=float)
        if rates.shape != (n_experts, n.shape[0]):
            _fail(
                fname,
                f"rates returned shape {rates.shape}; it must be (K, len(n)) = ({n_experts}, {n.shape[0]})",
            )
        for k in range(n_experts):
            _check_rate_values(fname, rates[k], n, not flags[k], f"rates(...)[{k}]")
    return pool


def _simulate_experts(who, pool, env, env_name, env_params, seed, rounds) -> None:
    import mlcb

    if env_name is None:
        spec = getattr(env, "spec", None)
        if spec is not None and getattr(spec, "id", None):
            env_name, env_params = spec.id, dict(spec.kwargs or {})
    fields = {
        "env": env_name if env_name is not None else env,
        "env_params": dict(env_params or {}),
        "experts": pool,
        "policy": "round-robin",
        "budget": min(2, len(pool)),
        "horizon": rounds,
        "replications": 2,
        "seed": seed,
    }
    try:
        result = mlcb.simulate(**fields)
    except Exception as error:  # noqa: BLE001 (the engine reports bad losses and failures)
        raise ConformanceError(
            f"{who}: a short simulation of a pool of {len(pool)} on {fields['env']!r} (round-robin, "
            f"budget {fields['budget']}) fails: {type(error).__name__}: {error}"
        ) from error
    regret = result.curves["regret"].to_numpy(float)
    if not np.all(np.isfinite(regret)):
        _fail(who, "a short simulation of a pool of it gives a non-finite realized regret")


def check_expert(
    expert: Any,
    env: Any = "mlcb/Trap-v0",
    *,
    env_params: dict | None = None,
    n_experts: int | None = None,
    rounds: int = 30,
    seed: int = 0,
    simulate: bool = True,
) -> None:
    """Check an expert: a Python learner, or a specification of a compiled expert family.

    A *Python expert* (:class:`mlcb.contracts.PythonExpert`: methods ``learn`` and ``deploy``)
    is driven directly, deploy then learn as the engine does, on ``rounds`` rounds of the
    environment's round data (:meth:`~mlcb.contracts.Environment.round_data` of expert 0):

    - ``learn(data)`` returns a float loss in ``[0, 1]`` (``nan`` and values out of range fail,
      named) or a pair ``(loss, rate)`` with a finite rate ``>= 0``, at most the update count
      when the rate is declared valid; anything else (a tuple of three, a list) fails;
    - ``deploy(data)`` returns a float loss in ``[0, 1]`` or a pair ``(loss, expected)`` with
      ``expected`` in ``[0, 1]`` or ``nan``, and does not change the learner's state: its pickled
      state (random generators left out) must be unchanged, and a copy taken before ``deploy``
      must then learn exactly as the learner does (a deploy drawing from the stream ``learn``
      uses fails);
    - ``spawn(seed)``, if present, returns a new learner, leaves the expert unchanged, is
      deterministic for the seed, and gives an untrained copy even of a trained learner;
    - ``rate`` (a callable ``rate(n, delta')`` vectorised over counts, or ``(beta, alpha)``;
      default ``(1.0, 0.5)``) is finite, ``>= 0`` (``> 0`` from ``n = 2``) and non-decreasing in
      ``n``, and at most ``n`` when declared valid (``heuristic`` False); ``heuristic`` is a bool;
      ``optimal_loss(env, env_params)``, if present, lies in ``[0, 1]``.

    An *expert specification* (its class names an :class:`mlcb.contracts.ExpertFamily` in
    ``family``): the family has every protocol member (``name``, ``smoothing``, ``check``,
    ``optimal_losses``, ``rates``, ``heuristic``, and ``build_pool`` or ``batched_pool``);
    ``check`` accepts a pool of the expert on ``env``; ``optimal_losses`` lie in ``[0, 1]``;
    ``rates`` is ``None`` or non-decreasing as above; ``heuristic`` gives bools.

    With ``simulate``, a short :func:`mlcb.simulate` of a pool of ``n_experts`` copies of the
    expert (round-robin, budget 2, two replications) must run: the engine itself reports a loss
    out of ``[0, 1]`` as an error.

    Parameters
    ----------
    expert : PythonExpert or expert specification
        The expert to check.
    env : str or Environment
        A registered environment id or an environment object the expert runs on.
    env_params : dict, optional
        Keyword arguments of a registered environment.
    n_experts : int, optional
        ``K`` of the pool (default: the environment's ``n_experts``, or 4).
    rounds : int
        Rounds of the direct checks and of the simulation.
    seed : int
        Seed of the environment's stream, of ``spawn`` and of the simulation.
    simulate : bool
        Also run the short simulation.

    Raises
    ------
    ConformanceError
        Naming the expert, the method and what to fix.

    Examples
    --------
    >>> import agents
    >>> from mlcb.testing import check_expert
    >>> check_expert(agents.make("ucb1"), "mlcb/Trap-v0", env_params={"n_experts": 3}, simulate=False)
    """
    env_name = env if isinstance(env, str) else None
    env, _ = _resolve_env(env, env_params)
    if n_experts is None:
        n_experts = env.n_experts if getattr(env, "n_experts", None) is not None else 4
    who = f"expert {type(expert).__name__}"
    family = _family_of(who, expert)
    if family is not None:
        pool = _check_family(who, expert, family, env, seed, n_experts)
    elif callable(getattr(expert, "learn", None)) and callable(getattr(expert, "deploy", None)):
        _check_python_expert(who, expert, env, seed, rounds, n_experts)
        pool = [expert] * n_experts
    else:
        _fail(
            who,
            "is neither an expert specification (its class names an ExpertFamily in 'family') nor a "
            "Python expert (methods learn(data) and deploy(data)); see mlcb.contracts",
        )
    if simulate:
        _simulate_experts(who, pool, env, env_name, env_params, seed, rounds)
