"""Conformance of meta-policies (:class:`mlcb.contracts.Policy`): :func:`check_policy`.

A policy is checked as the engines use it: a frozen dataclass with bool flags and a
``selection_size``, whose ``build`` gives kernel NamedTuples with fresh state; then a compiled
probe (:func:`_policy_probe`) runs the engine's round loop on synthetic losses through the
policy's ``select`` / ``observe`` / ``end_round`` kernels and every round is checked
(:func:`_check_round`); last, short simulations on both engines must agree round by round.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlcb import validation
from mlcb.config import checkpoint_grid
from mlcb.kernels import end_round, observe, select
from mlcb.kernels.jit import JIT_DISABLED, kernel, uncached
from mlcb.kernels.stats import new_stats
from mlcb.testing._common import (
    _UNCACHED,
    DELTA,
    CheckReport,
    _check_build,
    _describe,
    _fail,
    _is_bool,
    _is_integer,
    _raising,
    _resolve,
    _run_probe,
    _same,
)

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
    """The policy a check drives (a registered name is made), its name or ``None``, and how
    messages name it."""
    from mlcb import policies

    made = _resolve("policy", "policy", policy, policy_params, policies.make)
    if isinstance(policy, str):
        return made, policy, f"policy {policy!r}"
    return made, None, f"policy {type(policy).__name__}"


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
) -> CheckReport:
    """Check that a meta-policy follows :class:`mlcb.contracts.Policy` and :mod:`mlcb.kernels`;
    returns a :class:`~mlcb.testing.CheckReport` of what ran (``print`` it).

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
    - with ``simulate``, a short simulation of the policy object on a trap of ``n_experts``
      experts, the ``trap`` preset's epsilon-greedy and UCB1 experts with the smoothing the preset
      gives the policy (two replications of ``horizon`` rounds), runs twice on the compiled engine
      and once on the Python engine (:mod:`mlcb.engine.python_loop`), and all three agree round by
      round (training sets, deployed experts, regret, training counts).

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
    ValueError
        ``budget`` outside ``[1, n_experts]``.
    TypeError
        ``policy_params`` given with a policy object (they are for a registered name).

    Examples
    --------
    >>> from mlcb.testing import check_policy
    >>> check_policy("greedy", n_experts=4, budget=2, horizon=50, simulate=False)
    <CheckReport: policy 'greedy': 3 checks passed>
    """
    policy, name, who = _resolve_policy(policy, policy_params)
    n_experts = validation.integer("n_experts", n_experts)
    budget = validation.budget(budget, n_experts)

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
        if not _is_integer(size, 1, n_experts):
            _fail(
                f"{who}.selection_size({n_experts}, {budget})",
                f"returned {_describe(size)}; it must be an integer in [1, n_experts={n_experts}]",
            )
        size = int(size)

    # build
    rng = np.random.default_rng(seed)
    means = np.linspace(0.2, 0.8, n_experts)
    optimal = means.copy()
    where = f"{who}.build({n_experts}, {budget}, {DELTA}, {horizon}, optimal)"
    _check_build(
        lambda: policy.build(n_experts, budget, DELTA, horizon, optimal.copy()),
        where,
        "build",
        where,
        "return (params, state) NamedTuples of NumPy arrays and scalars for the compiled kernels",
    )

    # the compiled probe, twice
    losses = (rng.random((horizon + 1, n_experts)) < means).astype(np.float64)
    counts = np.arange(horizon + 2, dtype=float)
    rates = np.minimum(counts, 2.0 * np.sqrt(counts * np.log(np.maximum(counts, 2.0))))
    key = np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]
    runs = [
        _probe_policy(who, policy, n_experts, budget, size, horizon, losses, rates, key, warm)
        for _ in range(2)
    ]
    for label, a, b in zip(("selected", "widths", "n_selected", "deployed"), runs[0], runs[1]):
        if not _same(a, b):
            round_ = next(t for t in range(horizon) if not _same(a[t], b[t])) + 1
            _fail(
                f"{who}.select",
                f"is not deterministic: {label} differs at round {round_} between two runs with the same "
                "stream key and the same losses; draw randomness from the key argument "
                "(mlcb.kernels.random.uniform(key, t, slot)), never from a global generator",
            )

    checks = [
        f"a frozen dataclass; warm_start {warm}, has_certificate {has_certificate}, certificate_valid "
        f"{valid}; selects up to {size} of {n_experts} experts at budget {budget}",
        "build(n_experts, budget, delta, horizon, optimal): NamedTuples of arrays and scalars, fresh "
        "state arrays on every call",
        f"select, observe and end_round in a compiled probe of {horizon} rounds: distinct indices in "
        "range, a width for every expert selected, the same rounds for the same stream key",
    ]
    if simulate:
        _simulate_policy(who, policy, name, policy_params, n_experts, budget, horizon, seed)
        checks.append(
            f"a short simulation ({n_experts}-expert trap, 2 replications of {horizon} rounds): the same "
            "rounds on the compiled engine twice and on the Python engine"
        )
    notes = (
        [] if valid or not has_certificate else ["its certificate is a heuristic (certificate_valid False)"]
    )
    return CheckReport(who, None, tuple(checks), tuple(notes))


def _probe_policy(who, policy, n_experts, budget, size, horizon, losses, rates, key, warm):
    params, state = policy.build(n_experts, budget, DELTA, horizon, np.linspace(0.2, 0.8, n_experts))
    stats = new_stats(n_experts)
    guard = n_experts + size + 8
    buffer = np.full(guard, _UNSET, dtype=np.int64)
    width_buffer = np.full(guard, _UNSET_WIDTH)
    outputs = (
        np.full((horizon, guard), _UNSET, dtype=np.int64),  # selected, row t - 1 for round t
        np.full((horizon, guard), _UNSET_WIDTH),  # widths
        np.zeros(horizon, dtype=np.int64),  # n_selected
        np.zeros(horizon, dtype=np.int64),  # deployed
    )
    visible = guard if JIT_DISABLED else size  # a Python slice would raise before the guard shows it
    stop = _run_probe(
        _policy_probe,
        _policy_probe_uncached,
        (params, state, stats, key, losses, rates, warm, size, visible, buffer, width_buffer, *outputs),
        f"{who}: its compiled kernels cannot run on what build returns",
        "register select (and optionally observe, end_round) for its params type with "
        "mlcb.kernels.implements, with no array allocation",
    )
    out_selected, out_widths, out_n, out_deployed = outputs
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
    return outputs


def _unwritten(values: np.ndarray, marker: float) -> int | None:
    """The first index of ``values`` that still holds the probe's ``marker``, or ``None``."""
    left = np.flatnonzero(values == marker)
    return int(left[0]) if left.size else None


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
    j = _unwritten(chosen, _UNSET)
    if j is not None:
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
    j = _unwritten(values, _UNSET_WIDTH)
    if j is not None:
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
    """Two runs of the compiled engine and one of the Python engine on a small trap (the ``trap``
    preset's pool of epsilon-greedy and UCB1 experts, ``n_experts`` of them), with the policy object
    itself (a registered name's config is built as the preset builds it, smoothing included, then
    its policy replaced): they must run, and agree round by round. The compiled round loop is the
    one a run of the preset with that policy uses, so that one compiled loop serves both."""
    from mlcb import engine, presets
    from mlcb.engine import python_loop

    # A policy object: the pool's default smoothing (the preset gives registered names theirs).
    fields: dict[str, Any] = {} if name is not None else {"smoothing": None}
    config = presets.get("trap").config(
        budget,
        env_params={"n_experts": n_experts},
        policy=name if name is not None else "round-robin",
        policy_params=dict(policy_params or {}) if name is not None else {},
        horizon=horizon,
        replications=2,
        seed=seed,
        **fields,
    )
    problem = dataclasses.replace(engine.build(config), policy=policy)
    grid = checkpoint_grid(horizon, 20)
    runs = {}
    for label, run in (
        ("the compiled engine", engine.run_replications),
        ("the compiled engine again", engine.run_replications),
        ("the Python engine", python_loop.run_replications),
    ):
        with _raising(
            f"{who}: a short simulation on {label} ({n_experts}-expert trap, budget {budget}) fails"
        ):
            runs[label] = run(problem, seed, range(2), horizon, grid, trace_rounds=horizon)
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
