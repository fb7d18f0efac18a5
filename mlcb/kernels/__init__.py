"""The compiled-kernel contract: how environments, expert pools and policies plug into the engine.

The engine's round loop (:mod:`mlcb.engine.compiled_loop`) is written once. It calls the generic operations
below, and Numba resolves each call at compile time from the *type* of its first argument, a
``NamedTuple`` of parameters. A new environment, expert pool or policy joins the fast path by
defining its parameter and state ``NamedTuple`` classes and registering one function per
operation for its parameter class, with the operation's parameter names::

    from typing import NamedTuple

    import numpy as np

    from envs.bandit import arm_loss
    from mlcb.kernels import implements, kernel

    class MyPoolParams(NamedTuple):
        n_arms: np.ndarray  # (K,) int64
        delta_prime: float

    class MyPoolState(NamedTuple):
        pulls: np.ndarray  # (K, m_max) int64
        steps: np.ndarray  # (K,) int64

    @implements("train", MyPoolParams)
    @kernel
    def _train(params, state, env_params, env_state, k, t):
        arm = state.steps[k] % params.n_arms[k]  # round robin: the simplest learner
        loss = arm_loss(env_params, t, k, arm)
        state.pulls[k, arm] += 1
        state.steps[k] += 1
        return loss, float(state.steps[k])  # the loss, and the rate U(n, delta') (here: n)

The function is compiled in place of the generic call with :data:`mlcb.kernels.jit.KERNEL_OPTIONS`: no
reference counting, so it must not allocate arrays. No function is ever passed as an argument to
a cached kernel (that defeats Numba's on-disk cache): the choice happens during typing, QuantEcon's
``solve(method=...)`` way but at compile time. After changing a registered function of your own,
clear the cache (``NUMBA_CACHE_DIR``): Numba does not see edits outside the cached kernel's file.
The complete guide to writing a compiled expert family is ``docs/compiled-families.md``.

Operations (``t`` is the round, 0 for the warm start; ``k`` an expert index); ``begin_round``,
``observe`` and ``end_round`` are optional: left unregistered, they compile to nothing.

Environment (``params``, ``state`` are the environment's)
    ``begin_round(params, state, t)``: draw what the round needs (the GLM stream draws
    ``x_t, y_t``; bandit environments draw lazily inside ``train``/``deploy``).
Expert pool (``params``, ``state`` are the pool's)
    ``train(params, state, env_params, env_state, k, t) -> (loss, rate)``: expert ``k`` suffers
    the loss of its *current* decision on ``xi_t``, makes one learning step and returns that
    loss and its rate ``U_k(n_k, delta / (2K))`` at its new count.
    ``deploy(params, state, env_params, env_state, k, t, key, slot) -> (loss, expected)``: the
    loss on ``xi_t`` of expert ``k``'s smoothed decision and that decision's expected loss
    ``L(u)``; randomness from stream ``key`` at counters ``(t, slot * DEPLOY_SLOTS + j)``,
    ``0 <= j < DEPLOY_SLOTS`` (:data:`DEPLOY_SLOTS`, draws of :mod:`mlcb.kernels.random`).
Policy (``params``, ``state`` are the policy's)
    ``select(params, state, stats, t, key, selected, widths) -> (n_selected, deployed)``: write
    the training set into ``selected[:n_selected]`` and each one's ``UCB - LCB`` into ``widths``
    (for the certificate; ``nan`` for policies without confidence bounds); ``deployed`` is an
    expert index, or ``-1`` to deploy every selected expert and pay their mean loss (Top-M).
    ``observe(params, state, stats, k, loss, t)``: after expert ``k`` trained.
    ``end_round(params, state, stats, selected, n_selected, deployed, loss, t)``: after the
    round, with the deployed loss.

Called from Python, an operation calls the implementation registered for the type of its first
argument (a test can drive a kernel directly: ``mlcb.kernels.train(params, state, ...)``). With
``NUMBA_DISABLE_JIT=1`` that is also how the engine calls them, and every kernel runs as Python
(:func:`mlcb.kernels.jit.interpreted`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from mlcb.kernels import dispatch
from mlcb.kernels.jit import JIT_DISABLED, KERNEL_OPTIONS, jit, kernel, njit
from mlcb.validation import InputError, InputTypeError

__all__ = [
    "DEPLOY_SLOTS",
    "OPTIONAL",
    "begin_round",
    "deploy",
    "end_round",
    "implementation",
    "implements",
    "kernel",
    "njit",
    "observe",
    "select",
    "train",
]

#: Counters one ``deploy`` call may use: the call with ``slot`` draws its random numbers from
#: stream ``key`` at counters ``(t, slot * DEPLOY_SLOTS + j)`` for ``0 <= j < DEPLOY_SLOTS``, so
#: that the experts deployed together in one round (Top-M deploys several, ``slot = 0, 1, ...``)
#: never share a random number.
DEPLOY_SLOTS = 4096


def begin_round(params, state, t):
    """The environment draws what round ``t`` needs into ``state``; optional."""
    return _call("begin_round", params, state, t)


def train(params, state, env_params, env_state, k, t):
    """Expert ``k`` trains on ``xi_t``; returns ``(loss, rate)``."""
    return _call("train", params, state, env_params, env_state, k, t)


def deploy(params, state, env_params, env_state, k, t, key, slot):
    """Expert ``k``'s smoothed decision on ``xi_t``; returns ``(loss, expected)``."""
    return _call("deploy", params, state, env_params, env_state, k, t, key, slot)


def select(params, state, stats, t, key, selected, widths):
    """The policy's choice of round ``t``; returns ``(n_selected, deployed)``."""
    return _call("select", params, state, stats, t, key, selected, widths)


def observe(params, state, stats, k, loss, t):
    """The policy sees expert ``k``'s training loss; optional."""
    return _call("observe", params, state, stats, k, loss, t)


def end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    """The policy sees the round's outcome; optional."""
    return _call("end_round", params, state, stats, selected, n_selected, deployed, loss, t)


# No ``cache`` here: an overload's implementation is compiled into its caller's library and cached
# with it. Caching it on its own would write an entry without a CPython wrapper under the module,
# name and signature of the registered function, which a later direct call from Python (a
# Gymnasium ``step``, say) would then load and crash on.
_OVERLOAD_OPTIONS = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
_GENERICS = {f.__name__: f for f in (begin_round, train, deploy, select, observe, end_round)}
#: What Numba compiles in place of a generic call (the Python source of each implementation).
_REGISTRY: dict[str, dict[type, Callable]] = {name: {} for name in _GENERICS}
#: What a call from Python runs: the compiled dispatcher, or the source run as Python.
_CALLABLE: dict[str, dict[type, Callable]] = {name: {} for name in _GENERICS}


def _call(operation: str, params, *arguments):
    try:
        function = _CALLABLE[operation][type(params)]
    except KeyError:
        if operation in OPTIONAL:
            return None
        raise InputTypeError(_missing(operation, type(params).__qualname__)) from None
    return dispatch.call(function, params, *arguments)  # (Numba's dispatch: 0.1 to 0.5 ms a call)


def _missing(operation: str, what: object) -> str:
    known = sorted(cls.__name__ for cls in _REGISTRY[operation])
    return f"no compiled {operation!r} for {what}; registered for: {known}"


def implementation(operation: str, params_type: type) -> Callable | None:
    """The function registered as ``operation`` for ``params_type``, or ``None``."""
    if operation not in _GENERICS:
        raise InputError(f"operation must be one of {sorted(_GENERICS)}, got {operation!r}")
    return _CALLABLE[operation].get(params_type)


def implements(operation: str, params_type: type) -> Callable[[Callable], Callable]:
    """Register ``function`` as ``operation`` for calls whose first argument is a ``params_type``.

    ``function`` (plain or already jitted) must take the operation's parameters, by name.
    """
    if operation not in _GENERICS:
        raise InputError(f"operation must be one of {sorted(_GENERICS)}, got {operation!r}")
    expected = list(inspect.signature(_GENERICS[operation]).parameters)

    def decorator(function: Callable) -> Callable:
        python_function = getattr(function, "py_func", function)
        names = list(inspect.signature(python_function).parameters)
        if names != expected:
            raise InputTypeError(
                f"{python_function.__qualname__} implements {operation!r}: its parameters must be "
                f"named {expected}, got {names}"
            )
        _REGISTRY[operation][params_type] = python_function
        # From Python: the dispatcher as given, else the source compiled (or interpreted) on demand.
        compiled = hasattr(function, "py_func") and not getattr(function, "interpreted", False)
        runs = function if compiled and not JIT_DISABLED else jit(python_function, **_OVERLOAD_OPTIONS)
        _CALLABLE[operation][params_type] = runs
        return function

    return decorator


#: Operations a type may leave unregistered: they then compile to nothing.
OPTIONAL = ("begin_round", "observe", "end_round")


def _typer(operation: str) -> Callable:
    def typer(*types):
        owner = getattr(types[0], "instance_class", None)
        try:
            return _REGISTRY[operation][owner]
        except KeyError:
            if operation in OPTIONAL:
                return _no_op(operation)
            raise InputTypeError(_missing(operation, types[0])) from None

    typer.__signature__ = inspect.signature(_GENERICS[operation])  # type: ignore[attr-defined]
    return typer


def _no_op(operation: str) -> Callable:
    """A do-nothing implementation with the generic's parameter names, as Numba requires."""
    names = ", ".join(inspect.signature(_GENERICS[operation]).parameters)
    namespace: dict = {}
    exec(f"def no_op({names}):\n    return None", namespace)  # noqa: S102 (fixed, internal text)
    return namespace["no_op"]


# With the JIT disabled there is nothing to compile: calls dispatch in Python (``_call``).
if not JIT_DISABLED:
    from numba.extending import overload

    for _name, _generic in _GENERICS.items():
        overload(_generic, jit_options=_OVERLOAD_OPTIONS)(_typer(_name))
