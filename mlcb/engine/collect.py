"""A setting's finished replications collected into a tidy :class:`~mlcb.storage.results.Result`.

:func:`collect_result` lays the recorded arrays out as the three long frames (one row per
replication and checkpoint, per expert, per replication) and describes the setting in plain JSON,
computed once from the configuration in memory: its record and key, the experts' family, which
experts' rates are heuristic on the environment run, whether the certificate is valid, the
worst-case certificate curve (:mod:`mlcb.theory.worst_case`) and what produced it
(:mod:`mlcb.storage.provenance`), from the problem the replications ran (nothing is built again).
Reading a result back never rebuilds any of this.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pandas as pd

from mlcb.engine.problem import Problem
from mlcb.errors import CertificateWarning
from mlcb.storage import provenance
from mlcb.storage.replications import Replication
from mlcb.storage.results import Result
from mlcb.theory import loglog_slope
from mlcb.theory.worst_case import worst_case_of


def _unrecorded(replication: Replication) -> bool:
    """Whether ``replication``'s final pseudo-regret is nan (not recorded)."""
    values = replication.pseudo_regret
    return bool(len(values)) and bool(np.isnan(values[-1]))


def _broken_certificates(replications: list, checkpoints: np.ndarray) -> dict[int, tuple[int, float]]:
    """``{replication: (round, value)}``: where each replication's certificate is first not a
    finite number >= 0 (only those where it is)."""
    broken = {}
    for r in replications:
        values = np.asarray(r.certificate, dtype=float)
        bad = ~(np.isfinite(values) & (values >= 0))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            broken[int(r.index)] = (int(checkpoints[first]), float(values[first]))
    return broken


def _certificate_problem(label: str, broken: dict[int, tuple[int, float]], total: int) -> str | None:
    """One line about a setting's broken certificates, also given as a :class:`CertificateWarning`."""
    if not broken:
        return None
    replication, (round_, value) = min(broken.items())
    text = (
        f"{label}: the certificate is {value!r} at round {round_} of replication {replication} "
        f"({len(broken)} of {total} replications): an expert's rate is not a finite number >= 0; the "
        "certificate is marked not valid, and those replications are not checked against it"
    )
    warnings.warn(text, CertificateWarning, stacklevel=3)
    return text


def rate_exponent(experts: list, env: Any, family: Any, delta: float, horizon: int) -> float | None:
    """The largest rate exponent ``alpha`` of the pool: an expert's declared ``rate_exponent`` where
    it has one in (0, 1], else the log-log slope of its rate function ``U_k(n)`` over the last
    decade of counts up to ``horizon`` (at least 1,000). ``None`` when the rates are not tabulated.

    (An expert's ``alpha`` is not read: epsilon-greedy's is its exploration schedule's exponent,
    below its rate's for ``alpha < 2/3``, and another family's ``alpha`` may mean anything.)"""
    declared = [getattr(e, "rate_exponent", None) for e in experts]
    known = [isinstance(a, (int, float)) and not isinstance(a, bool) and 0 < a <= 1 for a in declared]
    top = max(1_000, int(horizon))
    counts = np.unique(np.geomspace(top / 10, top, 12).astype(np.int64))
    rates = None
    if not all(known):
        # Only the rates of the experts that declare no exponent, where the family can limit its
        # work so: a rate can cost time and memory in the horizon (epsilon-greedy's U# runs through
        # every count up to it: 5 s and 1 GB at 10^7, for an exponent it declares).
        limited = "rows" in inspect.signature(family.rates).parameters
        wanted = {"rows": [k for k, seen in enumerate(known) if not seen]} if limited else {}
        try:
            rates = family.rates(experts, env, counts, delta / (2 * len(experts)), **wanted)
        except Exception:  # a rate the family cannot tabulate: no exponent rather than no result
            rates = None
    values = []
    for k, alpha in enumerate(declared):
        if known[k] and alpha is not None:
            values.append(float(alpha))
        elif rates is not None:
            slope = loglog_slope(counts.astype(float), np.asarray(rates[k], dtype=float), tail=1.0)
            if np.isfinite(slope):
                values.append(float(slope))
    return max(values) if values else None


def collect_result(
    problem: Problem,
    replications: list[Replication],
    extra: dict[str, Any] | None = None,
) -> Result:
    """The :class:`~mlcb.storage.results.Result` of the finished ``replications`` of one setting.

    Parameters
    ----------
    problem : Problem
        The setting the replications ran (:func:`mlcb.engine.problem.build`); they were
        recorded on its checkpoint grid.
    replications : list of Replication
        Their recorded arrays (:class:`mlcb.engine.Replication`), in the order of the rows.
    extra : dict, optional
        Further plain-JSON entries of the setting's description (``engine``, ``seconds``, ...).
        The description always holds the pool's ``rate_exponent`` (:func:`rate_exponent`, which
        the theory figures read), computed here unless ``extra`` gives it.

    Examples
    --------
    >>> from mlcb import presets
    >>> from mlcb.engine import build, run
    >>> problem = build(presets.get("trap").config(2, horizon=500, replications=2))
    >>> done = run(problem)
    >>> result = collect_result(problem, done.replications, {"engine": done.engine})
    >>> result.settings, result.metadata["settings"]["mlcb M=2"]["engine"]
    (['mlcb M=2'], 'compiled')
    """
    config, checkpoints = problem.config, problem.checkpoints
    setting = {
        "setting": problem.label,
        "policy": config.policy,
        "budget": config.budget,
        "calibration": config.calibration,
    }
    n_reps, n_points, n_experts = len(replications), len(checkpoints), config.n_experts
    index = np.array([r.index for r in replications])
    curves = pd.DataFrame(
        {
            **setting,
            "replication": np.repeat(index, n_points),
            "round": np.tile(checkpoints, n_reps),
            **{
                name: np.concatenate([getattr(r, name) for r in replications])
                for name in ("regret", "pseudo_regret", "top_m_regret", "certificate")
            },
        }
    )
    experts = pd.DataFrame(
        {
            **setting,
            "replication": np.repeat(index, n_points * n_experts),
            "round": np.tile(np.repeat(checkpoints, n_experts), n_reps),
            "expert": np.tile(np.arange(n_experts), n_reps * n_points),
            "trained": np.concatenate([r.trained.ravel() for r in replications]),
            "deployed": np.concatenate([r.deployed.ravel() for r in replications]),
        }
    )
    policy = problem.policy
    has_certificate = bool(getattr(policy, "has_certificate", False))
    # A pseudo-regret that is not recorded (nan: a stream without expected losses, such as
    # real data) cannot be checked against the certificate; an exceedance seen before it
    # became nan still counts.
    # A certificate holds only if every term is a finite number: one that is not (an expert's
    # rate nan or infinite) is not checked against the pseudo-regret, and the setting's
    # certificate is marked not valid, with a word (never a nan summary without one).
    broken = _broken_certificates(replications, checkpoints) if has_certificate else {}
    violated = [
        float(r.exceeded)
        if has_certificate and r.index not in broken and (r.exceeded or not _unrecorded(r))
        else np.nan
        for r in replications
    ]
    broken_note = _certificate_problem(problem.label, broken, len(replications))
    reps = pd.DataFrame(
        {
            **setting,
            "replication": index,
            "best_expert": [r.best_expert for r in replications],
            "best_loss": [r.best_loss for r in replications],
            "certificate_violated": violated,
        }
    )
    # The setting's columns come first, one value broadcast over the rows, built into the
    # frames (inserting them afterwards would copy every frame again).
    frames = [curves, experts, reps]
    env, family, pool = problem.env, problem.family, list(config.experts)
    heuristic = [k for k, flag in enumerate(family.heuristic(pool, env)) if flag]
    best = np.bincount([r.best_expert for r in replications], minlength=n_experts)
    theory = worst_case_of(config, family, pool, env, int(np.argmax(best)))
    # What regret is measured against, where it is not the experts' L_k*: the family's
    # statement (e.g. the Bayes loss), else the environment's (e.g. a real-data stream's).
    reference = getattr(family, "reference", None)
    reference = reference(pool, env) if callable(reference) else reference
    reference = reference or getattr(env, "reference", None)
    reference = reference if isinstance(reference, str) else None
    extra = dict(extra or {})
    if "rate_exponent" not in extra:  # (a sweep's worker gives the one it keeps per setting)
        extra["rate_exponent"] = rate_exponent(pool, env, family, config.delta, config.horizon)
    metadata = {
        "settings": {
            problem.label: {
                "config": config.to_dict(),
                "key": config.key(),
                "family": str(getattr(family, "name", type(family).__name__)),
                "certificate_valid": bool(getattr(policy, "certificate_valid", False))
                and not heuristic
                and not broken,
                **({"certificate_problem": broken_note} if broken_note else {}),
                "heuristic_experts": heuristic,
                "theory": theory,
                **({"reference": str(reference)} if reference else {}),
                **extra,
            }
        },
        "versions": provenance.versions(),
        "git_revision": provenance.git_revision(),
        "created": pd.Timestamp.now(tz="UTC").isoformat(),
    }
    return Result(frames[0], frames[1], frames[2], metadata=metadata)
