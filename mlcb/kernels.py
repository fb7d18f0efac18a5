"""The compiled-kernel contract: how environments, expert pools and policies plug into the engine.

The engine's round loop (:mod:`mlcb._engine`) is written once. It calls the generic operations
below, and Numba resolves each call at compile time from the *type* of its first argument, a
``NamedTuple`` of parameters. A new environment, expert pool or policy joins the fast path by
defining its parameter and state ``NamedTuple`` classes and registering one function per
operation for its parameter class, with the operation's parameter names::

    from mlcb.kernels import implements

    class MyPoolParams(NamedTuple): ...

    @implements("train", MyPoolParams)
    def _train(params, state, env_params, env_state, k, t):
        ...
        return loss

The function is compiled in place of the generic call with :data:`mlcb._jit.KERNEL_OPTIONS`: no
reference counting, so it must not allocate arrays. No function is ever passed as an argument to
a cached kernel (that defeats Numba's on-disk cache): the choice happens during typing, QuantEcon's
``solve(method=...)`` way but at compile time. After changing a registered function of your own,
clear the cache (``NUMBA_CACHE_DIR``): Numba does not see edits outside the cached kernel's file.

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
    ``L(u)``; randomness from stream ``key`` at counters ``(t, slot * 4096 + j)``.
Policy (``params``, ``state`` are the policy's)
    ``select(params, state, stats, t, key, selected, widths) -> (n_selected, deployed)``: write
    the training set into ``selected[:n_selected]`` and each one's ``UCB - LCB`` into ``widths``
    (for the certificate; ``nan`` for policies without confidence bounds); ``deployed`` is an
    expert index, or ``-1`` to deploy every selected expert and pay their mean loss (Top-M).
    ``observe(params, state, stats, k, loss, t)``: after expert ``k`` trained.
    ``end_round(params, state, stats, selected, n_selected, deployed, loss, t)``: after the
    round, with the deployed loss.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from numba.extending import overload

from mlcb._jit import KERNEL_OPTIONS


def _only_compiled() -> None:
    raise TypeError("mlcb.kernels operations can only be called from compiled code")


def begin_round(params, state, t):
    _only_compiled()


def train(params, state, env_params, env_state, k, t):
    _only_compiled()


def deploy(params, state, env_params, env_state, k, t, key, slot):
    _only_compiled()


def select(params, state, stats, t, key, selected, widths):
    _only_compiled()


def observe(params, state, stats, k, loss, t):
    _only_compiled()


def end_round(params, state, stats, selected, n_selected, deployed, loss, t):
    _only_compiled()


_GENERICS = {f.__name__: f for f in (begin_round, train, deploy, select, observe, end_round)}
_REGISTRY: dict[str, dict[type, Callable]] = {name: {} for name in _GENERICS}


def implements(operation: str, params_type: type) -> Callable[[Callable], Callable]:
    """Register ``function`` as ``operation`` for calls whose first argument is a ``params_type``.

    ``function`` (plain or already jitted) must take the operation's parameters, by name.
    """
    if operation not in _GENERICS:
        raise ValueError(f"operation must be one of {sorted(_GENERICS)}, got {operation!r}")
    expected = list(inspect.signature(_GENERICS[operation]).parameters)

    def decorator(function: Callable) -> Callable:
        python_function = getattr(function, "py_func", function)
        names = list(inspect.signature(python_function).parameters)
        if names != expected:
            raise TypeError(
                f"{python_function.__qualname__} implements {operation!r}: its parameters must be "
                f"named {expected}, got {names}"
            )
        _REGISTRY[operation][params_type] = python_function
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
            known = sorted(cls.__name__ for cls in _REGISTRY[operation])
            raise TypeError(f"no compiled {operation!r} for {types[0]}; registered for: {known}") from None

    typer.__signature__ = inspect.signature(_GENERICS[operation])
    return typer


def _no_op(operation: str) -> Callable:
    """A do-nothing implementation with the generic's parameter names, as Numba requires."""
    names = ", ".join(inspect.signature(_GENERICS[operation]).parameters)
    namespace: dict = {}
    exec(f"def no_op({names}):\n    return None", namespace)  # noqa: S102 (fixed, internal text)
    return namespace["no_op"]


# No ``cache`` here: an overload's implementation is compiled into its caller's library and cached
# with it. Caching it on its own would write an entry without a CPython wrapper under the module,
# name and signature of the registered function, which a later direct call from Python (a
# Gymnasium ``step``, say) would then load and crash on.
_OVERLOAD_OPTIONS = {key: value for key, value in KERNEL_OPTIONS.items() if key != "cache"}
for _name, _generic in _GENERICS.items():
    overload(_generic, jit_options=_OVERLOAD_OPTIONS)(_typer(_name))
