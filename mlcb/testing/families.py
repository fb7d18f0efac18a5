"""Conformance of compiled expert families (:class:`mlcb.contracts.ExpertFamily`).

An expert specification names its family in its class's ``family`` attribute
(:func:`_family_of`); :func:`_check_family` checks the family's protocol members and what they
give for a pool of the expert: ``check`` accepts it, optimal losses in ``[0, 1]``, bool
``heuristic`` flags and rates as :mod:`mlcb.testing.rates` requires.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcb.contracts import FAMILY_ATTRIBUTE
from mlcb.testing._common import DELTA, ConformanceError, _check_unit, _describe, _fail, _is_bool
from mlcb.testing.environments import PROBE_HORIZON
from mlcb.testing.rates import _check_rate_values, _counts


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
    params, _ = env.build(seed, 0, PROBE_HORIZON)
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
