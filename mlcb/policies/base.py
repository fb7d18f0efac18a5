"""What the built-in policy classes share in Python: the policy contract's class attributes with
their defaults, and the checks of their arguments (the budget's is :func:`mlcb.validation.budget`,
which every built-in ``build`` calls first).

Every built-in policy is a frozen dataclass that derives from :class:`BasePolicy` and states only
where it departs from the defaults (no warm start; confidence bounds with a certificate).
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlcb import validation

#: The largest count of rounds or updates a policy parameter may give (a horizon, burn-in updates
#: per expert): the longest horizon of a simulation. Beyond it a count no longer fits the
#: compiled kernels' 64-bit integers once multiplied by the pool's size (was Numba's "non-precise
#: type pyobject" or Python's "int too large to convert to C long" while the run started).
MAX_ROUNDS = 10**10
#: The largest budget of training steps a policy parameter may give: the steps of the longest
#: horizon with 100,000 experts trained every round, far below the 64-bit limit even doubled.
MAX_STEPS = 10**15


class BasePolicy:
    """The class attributes of the policy contract (:class:`mlcb.contracts.Policy`), at their
    defaults: every expert trained once before round 1, no certificate.

    Examples
    --------
    >>> from mlcb.policies import make
    >>> policy = make("bandit-ucb1")
    >>> isinstance(policy, BasePolicy), policy.warm_start, policy.has_certificate
    (True, True, False)
    """

    #: Train every expert once before round 1.
    warm_start: ClassVar[bool] = True
    #: Whether the policy reports confidence widths ``UCB - LCB`` for the certificate.
    has_certificate: ClassVar[bool] = False
    #: Whether the pseudo-regret is then bounded by the certificate with probability 1 - delta.
    certificate_valid: ClassVar[bool] = False


def check_unit(name: str, value: Any) -> None:
    """A ``ValueError`` naming ``name`` unless ``value`` is a number in ``[0, 1]``.

    Examples
    --------
    >>> check_unit("epsilon", 0.1)
    >>> check_unit("epsilon", 2)
    Traceback (most recent call last):
    ...
    mlcb.validation.InputError: epsilon must be a number in [0, 1], got 2
    """
    if not (validation.is_real(value) and 0.0 <= value <= 1.0):
        raise validation.InputError(f"{name} must be a number in [0, 1], got {value!r}")
