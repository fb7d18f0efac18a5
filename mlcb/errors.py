"""Exceptions with messages that name the parameter and what is allowed, or the faulty expert;
and the warnings about a user's files, shown in one line."""

from __future__ import annotations

import warnings
from typing import Any


class ExpertError(RuntimeError):
    """An expert failed during a simulation: it raised, returned something that is not a loss,
    or produced a loss that is NaN or outside [0, 1].

    The message names the expert (index and class), the replication and the round, so that the
    fault can be reproduced alone. Replications that finished before the failure are kept where
    the run saves parts (``mlcb.simulate(parts=...)``, ``mlcb run``), and a re-run resumes from
    them.

    Attributes
    ----------
    expert : int
        Index of the expert in the pool.
    expert_class : str
        Its class name.
    replication : int or None
        The replication (``None`` when not known, e.g. outside a simulation).
    round : int
        The round (0 is the warm start).
    value : float or None
        The offending loss, when the fault was a bad loss.
    """

    def __init__(
        self,
        problem: str,
        *,
        expert: int,
        expert_class: str,
        replication: int | None,
        round_: int,
        value: float | None = None,
    ) -> None:
        self.expert = expert
        self.expert_class = expert_class
        self.replication = replication
        self.round = round_
        self.value = value
        where = f"round {round_}" if replication is None else f"replication {replication}, round {round_}"
        super().__init__(f"expert {expert} ({expert_class}), {where}: {problem}")


class PolicyStateFull(RuntimeError):
    """A policy's state has no room left for what it must record: a policy whose memory grows
    with its training steps (R-ed-UCB keeps every reward) is built with room for the horizon's.
    Such a policy offers ``grow(params, state, updates)``, and the Python engine and the river
    selectors (:mod:`mlcb.river`) use it to make room and go on; the state is unchanged when this
    is raised."""


class ExpertLossError(ExpertError, ValueError):
    """An expert's training or deployed loss (or expected loss) is NaN or outside [0, 1]."""

    def __init__(
        self,
        what: str,
        round_: int,
        expert: int,
        value: float,
        expert_class: str = "?",
        replication: int | None = None,
    ) -> None:
        super().__init__(
            f"{what} is {value!r}; losses must be numbers in [0, 1]",
            expert=expert,
            expert_class=expert_class,
            replication=replication,
            round_=round_,
            value=value,
        )


def raised(
    error: BaseException, method: str, expert: int, expert_class: str, replication: int | None, round_: int
) -> ExpertError:
    """An :class:`ExpertError` for an exception raised inside ``expert``'s ``method``."""
    return ExpertError(
        f"{method} raised {type(error).__name__}: {error}",
        expert=expert,
        expert_class=expert_class,
        replication=replication,
        round_=round_,
    )


class FileWarning(UserWarning):
    """Something in a user's files was found wrong and dealt with (the message names the file and
    what was done). Shown as one line, ``mlcb: CATEGORY: MESSAGE``, without the line of mlcb's
    source that issued it; otherwise an ordinary warning, which ``warnings.filterwarnings``,
    ``python -W`` and ``pytest.warns`` select by its category.

    Examples
    --------
    >>> print(warnings.formatwarning("run/x.npz: damaged; recomputed", FileWarning, "mlcb/x.py", 3), end="")
    mlcb: FileWarning: run/x.npz: damaged; recomputed
    """


class CorruptPartWarning(FileWarning):
    """A kept part could not be used and is recomputed (shown in one line naming the file)."""


_format_others = warnings.formatwarning


def _format_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    """:class:`FileWarning` in one line; every other warning as before."""
    if issubclass(category, FileWarning):
        return f"mlcb: {category.__name__}: {message}\n"
    return _format_others(message, category, filename, lineno, line)


warnings.formatwarning = _format_warning


def class_name(obj: Any) -> str:
    """The class name of ``obj`` as messages show it."""
    return type(obj).__qualname__
