"""Base classes of the expert families: everything a family shares, so that one writes only what is
its own.

An expert family (:class:`mlcb.contracts.ExpertFamily`) answers for a pool of its
specifications: can it run on this environment, what is each expert's ``L_k*``, its rate
``U_k(n, delta')`` and whether that rate is valid here, and (a *compiled* family) the kernel
parameters and state of one replication. Most answers come from the specifications themselves:

* every specification carries its rate, ``rate_function(n, rate_input, delta_prime)``, vectorised
  over an array of counts ``n`` and capped at ``n``; ``rate_input`` is what the environment tells
  it (:meth:`Family.rate_input`: the number of arms on a bandit environment, the gradient bound
  on the GLM stream);
* every specification says whether its rate is a heuristic in ``heuristic`` (a bool), and
  ``count_only = False`` where its rate depends on more than the count (then the family's
  ``rates`` is ``None``);
* its class names the family in ``family``, which the pool check compares.

:class:`Family` turns these into ``check``, ``optimal_losses``, ``rates``, ``heuristic`` and a
readable ``repr``; :class:`CompiledFamily` adds the one method a compiled family must write,
``build_pool(context)``, reading an :class:`mlcb.contracts.BuildContext`;
:class:`BanditEnvironmentFamily` is the base of the families on the bandit experts environments
(:mod:`envs.bandit`). A family overrides a hook only where it decides differently (the GLM family
decides ``heuristic`` on the stream being run).

:func:`rate_values` evaluates a family's scalar rate kernel (the one its ``train`` kernel calls)
at an array of counts, for a specification's ``rate_function``: the rates a family reports are
then exactly the numbers its kernels compute.

Examples
--------
>>> import envs
>>> from agents.hedge import HEDGE_FAMILY, Hedge
>>> env = envs.make("mlcb/Trap-v0", n_experts=2)
>>> HEDGE_FAMILY
agents.hedge.HEDGE_FAMILY
>>> HEDGE_FAMILY.heuristic([Hedge(), Hedge(rate_scale=2.0)], env)
[False, True]
>>> HEDGE_FAMILY.rates([Hedge(), Hedge()], env, [1, 100], 0.01).shape
(2, 2)
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.rates import Counts, Rate, check_counts
from mlcb.contracts import FAMILY_ATTRIBUTE, BuildContext
from mlcb.kernels.jit import cold_kernel, jit
from mlcb.validation import InputError

__all__ = [
    "UNIFORM_FULL",
    "BanditEnvironmentFamily",
    "CompiledFamily",
    "Family",
    "overflowed_norm",
    "rate_values",
]


class Family:
    """What every expert family shares (:class:`mlcb.contracts.ExpertFamily` without a pool).

    Subclasses set ``name`` and ``smoothing`` and override the hooks they decide differently:

    * :meth:`check_environment` -- refuse an environment the pool cannot run on (default: any);
    * :meth:`rate_input` -- what expert ``k``'s ``rate_function`` reads of the environment
      (default: nothing, ``None``);
    * :meth:`optimal_losses` -- ``L_k*`` (default: the environment's
      ``optimal_loss(env_params, k)``).

    A family without compiled kernels also writes ``batched_pool`` (:mod:`agents.moe`); a
    compiled one derives from :class:`CompiledFamily`.
    """

    #: A short name for messages and results.
    name: str = ""
    #: Smoothing wrappers (:mod:`mlcb.kernels.smoothing`), the default first.
    smoothing: tuple[str, ...] = ()
    #: How messages call one expert of the family (default: :attr:`name`).
    label: str = ""

    def check(self, experts: list, env: Any) -> None:
        """A ``ValueError`` naming the problem unless ``experts`` are specifications of this family
        that can run on ``env`` (:meth:`check_environment`)."""
        self.check_environment(experts, env)
        for k, expert in enumerate(experts):
            if getattr(type(expert), FAMILY_ATTRIBUTE, None) is not self:
                raise InputError(f"experts[{k}]: {expert!r} is not a {self.label or self.name} expert")

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` unless a pool of ``experts`` can run on ``env``; accepts any."""

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        """``L_k*`` of every expert: the environment's ``optimal_loss(env_params, k)`` (all at once
        where the environment offers ``optimal_losses(env_params)``, as the bandit environments do)."""
        every = getattr(env, "optimal_losses", None)
        if callable(every):
            values = np.asarray(every(env_params), dtype=float)
            if values.shape == (len(experts),):
                return values
        return np.array([env.optimal_loss(env_params, k) for k in range(len(experts))], dtype=float)

    def rate_input(self, expert: Any, env: Any, k: int) -> Any:
        """What expert ``k``'s ``rate_function`` reads of ``env`` (its second argument); ``None``."""
        return None

    def rates(
        self, experts: list, env: Any, n: Any, delta_prime: float, *, rows: Any = None
    ) -> np.ndarray | None:
        """``U_k(n, delta')`` of every expert at counts ``n``, shape (K, len(n)): each
        specification's ``rate_function(n, rate_input, delta_prime)``; ``None`` when some rate
        depends on more than the count (a specification with ``count_only = False``).

        Pools repeat the same specification objects: each rate is computed once per object and
        input. ``rows`` (indices of experts), where given, limits the work to those experts' rates;
        the other rows are ``nan`` (a rate can cost time and memory in the largest count)."""
        if not all(getattr(expert, "count_only", True) for expert in experts):
            return None
        counts = np.atleast_1d(np.asarray(n))
        wanted = range(len(experts)) if rows is None else {int(k) for k in rows}
        skipped = np.full(counts.shape, np.nan)
        computed: dict = {}
        out = []
        for k, expert in enumerate(experts):
            if k not in wanted:
                out.append(skipped)
                continue
            argument = self.rate_input(expert, env, k)
            key = (id(expert), argument)
            if key not in computed:
                computed[key] = np.asarray(expert.rate_function(counts, argument, delta_prime), dtype=float)
            out.append(computed[key])
        return np.stack(out)

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        """Whether each expert's rate is outside the theory: its specification's ``heuristic``."""
        return [bool(expert.heuristic) for expert in experts]

    def __repr__(self) -> str:
        """The module-level name of the family object (``agents.hedge.HEDGE_FAMILY``)."""
        return _public_name(self)


def _public_name(family: Family) -> str:
    module = sys.modules.get(type(family).__module__)
    for name, value in (vars(module) if module is not None else {}).items():
        if value is family and not name.startswith("_"):
            return f"{type(family).__module__}.{name}"
    return f"<{type(family).__qualname__} {family.name!r}>"


class CompiledFamily(Family):
    """A family whose experts run in compiled kernels: :class:`Family` plus ``build_pool``.

    A subclass writes ``name``, ``smoothing``, ``build_pool(context)`` (where
    :meth:`kernel_params` fills a params ``NamedTuple`` by field name) and the hooks it decides
    differently; its kernels are registered for its params class (:mod:`mlcb.kernels`), and its
    specifications carry ``rate_function`` and ``heuristic``. docs/compiled-families.md is the
    guide, :mod:`agents.klucb` the worked example.
    """

    def build_pool(self, context: BuildContext) -> tuple[Any, Any]:
        """Kernel parameters and fresh state ``(params, state)`` of the pool ``context.experts`` on
        one replication (:class:`mlcb.contracts.BuildContext`)."""
        raise NotImplementedError(f"{type(self).__qualname__} must define build_pool(self, context)")

    def kernel_params(self, params_type: Any, context: BuildContext, **given: Any) -> Any:
        """The ``NamedTuple`` ``params_type`` for ``context``, its fields filled by name.

        A field named in ``given`` takes that value; ``delta_prime`` is ``context.delta_prime``,
        ``smoothing`` the code of ``context.smoothing`` among the family's wrappers, ``keys`` a
        copy of the experts' stream keys (and, on the bandit environments, ``n_arms`` the
        experts' numbers of arms); any other field is the (K,) float64 column of the
        specifications' attribute of that name (:meth:`mlcb.contracts.BuildContext.column`).
        """
        unknown = sorted(set(given) - set(params_type._fields))
        if unknown:
            raise InputError(f"{params_type.__name__} has no field {unknown[0]!r}")
        values = {}
        for name in params_type._fields:
            if name in given:
                values[name] = given[name]
                continue
            try:
                values[name] = self.kernel_field(name, context)
            except AttributeError:
                raise InputError(
                    f"{params_type.__name__}.{name}: the {self.name} specifications have no attribute "
                    f"{name!r}; pass {name}=... to kernel_params"
                ) from None
        return params_type(**values)

    def kernel_field(self, name: str, context: BuildContext) -> Any:
        """The value of the params field ``name`` when :meth:`kernel_params` is not given it."""
        if name == "delta_prime":
            return context.delta_prime
        if name == "smoothing":
            return context.smoothing_code(self.smoothing)
        if name == "keys":
            return context.keys.copy()
        return context.column(name)


class BanditEnvironmentFamily(CompiledFamily):
    """What every family on the bandit experts environments (:mod:`envs.bandit`) shares: expert
    ``k`` plays the environment's ``n_arms[k]`` arms, so a pool holds exactly ``env.n_experts``
    experts; ``L_k*`` is the loss mean of expert ``k``'s best arm; a rate reads the number of
    arms (``rate_function(n, n_arms, delta_prime)``). :meth:`arms` and :meth:`arm_zeros` give the
    per-arm arrays of a pool.
    """

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` unless ``env`` is a bandit experts environment with ``len(experts)``
        experts."""
        n_experts = getattr(env, "n_experts", None)
        if (
            getattr(env, "n_arms", None) is None
            or not callable(getattr(env, "optimal_loss", None))
            or not isinstance(n_experts, (int, np.integer))
        ):
            raise InputError(
                f"experts: {self.name} experts need a bandit experts environment (one with n_arms, e.g. "
                f"mlcb/Trap-v0 or mlcb/BanditExperts-v0), got {type(env).__name__}"
            )
        if len(experts) != n_experts:
            raise InputError(f"experts: this environment has {n_experts} bandit experts, got {len(experts)}")

    def rate_input(self, expert: Any, env: Any, k: int) -> int:
        """Expert ``k``'s number of arms, ``env.n_arms[k]``."""
        return int(env.n_arms[k])

    def kernel_field(self, name: str, context: BuildContext) -> Any:
        """As :meth:`CompiledFamily.kernel_field`, and ``n_arms``: :meth:`arms`."""
        return self.arms(context) if name == "n_arms" else super().kernel_field(name, context)

    @staticmethod
    def arms(context: BuildContext) -> np.ndarray:
        """A fresh (K,) int64 array of the experts' numbers of arms."""
        return np.asarray(context.env.n_arms, dtype=np.int64).copy()

    @staticmethod
    def arm_zeros(context: BuildContext, dtype: Any = np.float64) -> np.ndarray:
        """Fresh per-arm state: zeros of shape (K, m_max), ``m_max`` the largest number of arms."""
        return context.zeros(int(np.max(context.env.n_arms)), dtype=dtype)


# --- a scalar rate kernel at an array of counts --------------------------------------------------
@functools.cache
def _over_counts(rate: Callable) -> Callable:
    """A compiled loop of ``rate(*coefficients, n, delta_prime)`` over an int64 array of counts.

    Compiled once per process and kernel (a loop over a kernel it closes over is not cached on
    disk: the cache would key it on this module alone)."""

    def loop(coefficients, counts, delta_prime):
        out = np.empty(counts.shape[0])
        for i in range(counts.shape[0]):
            out[i] = rate(*coefficients, counts[i], delta_prime)
        return out

    return jit(loop, nogil=True, error_model="numpy")


def rate_values(rate: Callable, n: Counts, coefficients: tuple, delta_prime: float) -> Rate:
    """``rate(*coefficients, n_i, delta_prime)`` at every count ``n_i >= 1`` of ``n``, of the
    shape of ``n``: a family's scalar rate kernel (:func:`mlcb.kernels.kernel`), the one its
    ``train`` kernel calls, evaluated for a specification's ``rate_function``.

    Parameters
    ----------
    rate : compiled kernel
        ``rate(*coefficients, n, delta_prime) -> float`` for one int64 count ``n``.
    n : int or array_like of int
        Update counts, ``n >= 1``.
    coefficients : tuple
        The kernel's leading arguments, typed as the ``train`` kernel passes them (``int`` for
        counts of arms, ``float`` for the rest), so that the numbers are the kernel's own.
    delta_prime : float
        The confidence level ``delta'``.

    Returns
    -------
    float or ndarray
        The kernel's values (float64).

    Examples
    --------
    >>> from agents.klucb import rate
    >>> float(rate_values(rate, 100, (2, 1.0), 0.01)) == rate(2, 1.0, 100, 0.01)
    True
    >>> rate_values(rate, [1, 10], (2, 1.0), 0.01).shape
    (2,)
    """
    counts = check_counts(n)
    flat = counts.reshape(-1).astype(np.int64)
    values = _over_counts(rate)(tuple(coefficients), flat, float(delta_prime)).reshape(counts.shape)
    return values[()] if values.ndim == 0 else values


#: The error of a pool whose ``"uniform"`` smoothing keeps every training iterate (or centre) of
#: its experts in an array sized for the horizon it was built for, when it is trained more often
#: (a session driven past its horizon): the iterate would be written past the array's end.
UNIFORM_FULL = (
    "smoothing 'uniform' keeps every past iterate of an expert, with room for the horizon its pool "
    "was built for and the warm start: this pool was trained more often; build it for a longer "
    "horizon, or use smoothing 'average'"
)


# --- the norm of a projection whose sum of squares overflowed --------------------------------------
@cold_kernel
def overflowed_norm(matrix):
    """The Frobenius norm of the 2-d array ``matrix``, for a kernel that projects an iterate onto a
    ball and found its sum of squares infinite: a step so large that the squares overflow while
    the entries are finite (or not). Without it the projection's factor ``radius / inf`` is 0,
    and the iterate that should land on the sphere falls to the centre (or to ``nan``, ``inf *
    0``).

    The norm is computed at the scale of the largest entry, ``largest * sqrt(sum (x / largest)^2)``.
    Where some entries are infinite, the direction is their limit: each infinite entry becomes
    ``+-1`` and every finite one 0, written into ``matrix``, and the norm is that of the result
    (the caller's ``radius / norm`` then puts it on the sphere); ``nan`` entries stay ``nan``.
    Called only where ``sqrt(sum of squares)`` is infinite, so that every finite projection is
    computed as before, bit for bit.
    """
    largest = 0.0
    for r in range(matrix.shape[0]):
        for i in range(matrix.shape[1]):
            largest = max(largest, abs(matrix[r, i]))
    squared = 0.0
    if largest == math.inf:
        for r in range(matrix.shape[0]):
            for i in range(matrix.shape[1]):
                value = matrix[r, i]
                if abs(value) == math.inf:
                    matrix[r, i] = math.copysign(1.0, value)
                    squared += 1.0
                elif value == value:
                    matrix[r, i] = 0.0
        return math.sqrt(squared)
    for r in range(matrix.shape[0]):
        for i in range(matrix.shape[1]):
            scaled = matrix[r, i] / largest
            squared += scaled * scaled
    return largest * math.sqrt(squared)
