"""Conformance of experts: :func:`check_expert`, for a Python learner or a compiled family's member.

It tells the two kinds apart, checks the one it finds (:mod:`mlcb.testing.families`,
:mod:`mlcb.testing.python_experts`), then runs a short simulation of a pool of the expert.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcb.testing._common import CheckReport, _fail, _raising
from mlcb.testing.environments import _resolve_env
from mlcb.testing.families import _check_family, _family_of
from mlcb.testing.python_experts import _check_python_expert


def _simulate_experts(who, pool, env, env_name, env_params, seed, rounds) -> str:
    from mlcb.simulation import simulate

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
    with _raising(
        f"{who}: a short simulation of a pool of {len(pool)} on {fields['env']!r} (round-robin, "
        f"budget {fields['budget']}) fails"
    ):
        result = simulate(**fields)
    regret = result.curves["regret"].to_numpy(float)
    if not np.all(np.isfinite(regret)):
        _fail(who, "a short simulation of a pool of it gives a non-finite realized regret")
    final = float(result.final()["regret"].mean())
    return (
        f"a short simulation ran: a pool of {len(pool)} on {fields['env']!r}, round-robin, budget "
        f"{fields['budget']}, 2 replications of {rounds} rounds (final regret {final:.3g}, finite)"
    )


def _python_checks(expert: Any, rounds: int) -> tuple[list[str], list[str]]:
    """What :func:`check_expert` checked of a Python expert, and what to know of it."""
    rate = getattr(expert, "rate", None)
    heuristic = getattr(expert, "heuristic", True)
    said = "a callable rate(n, delta')" if callable(rate) else repr(rate if rate is not None else (1.0, 0.5))
    checks = [
        f"learn(data) and deploy(data), deploy then learn, for {rounds} rounds: losses in [0, 1]",
        "deploy leaves the learner as it was (its state, and the stream learn draws from)",
        f"rate {said}{' (the default)' if rate is None else ''}: finite, >= 0, non-decreasing"
        + ("" if heuristic else ", at most n (declared valid)"),
        f"heuristic = {heuristic!r}: a bool",
    ]
    if callable(getattr(expert, "spawn", None)):
        checks.insert(2, "spawn(seed): a new, untrained learner, the same for the same seed")
    if callable(getattr(expert, "optimal_loss", None)):
        checks.append("optimal_loss(env, env_params): in [0, 1]")
    notes = []
    if heuristic:
        notes.append(
            "heuristic: nobody has proved its rate, so a pool of it has a certificate marked not valid "
            "(certificate_valid False in results)"
        )
    if not callable(getattr(expert, "optimal_loss", None)):
        notes.append(
            "no optimal_loss: regret is measured against the best expert in hindsight where the "
            "environment does not give the expert's limit"
        )
    return checks, notes


def check_expert(
    expert: Any,
    env: Any = "mlcb/Trap-v0",
    *,
    env_params: dict | None = None,
    n_experts: int | None = None,
    rounds: int = 30,
    seed: int = 0,
    simulate: bool = True,
) -> CheckReport:
    """Check an expert: a Python learner, or a specification of a compiled expert family; returns
    a :class:`~mlcb.testing.CheckReport` of what ran (``print`` it).

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

    Returns
    -------
    CheckReport
        The expert, the environment and every check that passed, with what to know of it
        (a heuristic rate, say).

    Raises
    ------
    ConformanceError
        Naming the expert, the method and what to fix; also when a registered ``env`` cannot be
        made with ``env_params``.
    TypeError
        ``env_params`` given with an environment object (they are for a registered id).

    Examples
    --------
    >>> import agents
    >>> from mlcb.testing import check_expert
    >>> report = check_expert(agents.make("ucb1"), env_params={"n_experts": 3}, simulate=False)
    >>> print(report.checks[0])
    family 'bandit': every member of mlcb.contracts.ExpertFamily (name, smoothing, check, ...)
    """
    env_name = env if isinstance(env, str) else None
    env, _ = _resolve_env(env, env_params)
    if n_experts is None:
        n_experts = env.n_experts if getattr(env, "n_experts", None) is not None else 4
    if isinstance(expert, type):
        _fail(f"expert {expert.__name__}", f"is a class; give an instance ({expert.__name__}(...))")
    who = f"expert {type(expert).__name__}"
    family = _family_of(who, expert)
    notes: list[str] = []
    if family is not None:
        pool = _check_family(who, expert, family, env, seed, n_experts)
        name = getattr(family, "name", type(family).__name__)
        checks = [
            f"family {name!r}: every member of mlcb.contracts.ExpertFamily (name, smoothing, check, ...)",
            f"the family's check accepts a pool of {n_experts} on this environment",
            "optimal losses of the pool in [0, 1]; rates None or finite and non-decreasing",
            "heuristic: one bool per expert",
        ]
        subject = f"{who} (of the compiled family {name!r})"
    elif callable(getattr(expert, "learn", None)) and callable(getattr(expert, "deploy", None)):
        _check_python_expert(who, expert, env, seed, rounds, n_experts)
        pool = [expert] * n_experts
        checks, notes = _python_checks(expert, rounds)
        subject = f"{who} (a Python expert)"
    else:
        _fail(
            who,
            "is neither an expert specification (its class names an ExpertFamily in 'family') nor a "
            "Python expert (methods learn(data) and deploy(data)); see mlcb.contracts",
        )
    if simulate:
        checks.append(_simulate_experts(who, pool, env, env_name, env_params, seed, rounds))
    return CheckReport(subject, env_name or type(env).__name__, tuple(checks), tuple(notes))
