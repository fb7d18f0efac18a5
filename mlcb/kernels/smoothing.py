"""Smoothing wrappers: how a deployed expert turns its history into a decision (docs/theory.md §3).

The analysis bounds the average expected loss of an expert's *past* iterates, not of its last
one, so the deployed decision of ``i_t`` is a smoothed one built from the iterates of its training
rounds strictly before ``t``:

``"uniform"``
    one past training decision drawn uniformly at random (general; Pacchiano et al. 2020).
``"average"``
    the average of the past decisions (convex losses, e.g. OGD parameters). For bandit experts,
    whose loss is linear in the decision (a distribution over arms), it equals ``"uniform"`` in
    law and both are drawn from the running sum of past decision distributions.
``"counts"``
    bandit experts: draw the action from the empirical counts of the actions played in training
    (the practical form the paper's authors used; the default for bandit pools).
``"last"``
    the current decision, no smoothing: outside the theory, offered for comparison.

Each expert pool implements the wrappers that make sense for it and rejects the others. An expert
deployed before it was ever trained (policies without a warm start) has no past iterate and
deploys its current decision.
"""

from __future__ import annotations

from mlcb.validation import InputError

COUNTS, AVERAGE, UNIFORM, LAST = 0, 1, 2, 3
CODES = {"counts": COUNTS, "average": AVERAGE, "uniform": UNIFORM, "last": LAST}


def code(name: str, allowed: tuple[str, ...]) -> int:
    """Integer code of wrapper ``name``; a ``ValueError`` naming the allowed ones otherwise."""
    if name not in allowed:
        raise InputError(f"smoothing must be one of {allowed} for this expert pool, got {name!r}")
    return CODES[name]
