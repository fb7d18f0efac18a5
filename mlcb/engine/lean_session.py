"""M-LCB's round, one sample at a time, in plain Python: :class:`LeanSession`.

:class:`mlcb.engine.session.Session` plays any policy's round through the engine's compiled
accounting: a few tens of microseconds a round, spent on checks and on crossing into compiled
code. An adapter that river feeds one sample at a time (:mod:`mlcb.river`) pays that on every
sample, beside models whose prediction and update may take ten microseconds. M-LCB needs far
less: after a round only the trained experts' statistics change, and with them their bounds, so a
round is ``M`` updates and a search for the ``M`` smallest of ``K`` numbers. This session does
exactly that, for M-LCB's theory bounds (``mlcb.policies.m_lcb``)::

    LCB_k = L_k - s U_k(n_k) / n_k        UCB_k = L_k + s sqrt(2 log(4 K n_k^2 / delta) / n_k)
    S_t   = the M smallest LCB_k          i_t   = the smallest UCB_k in S_t    (ties: identity)

with ``s`` the policy's ``bonus_scale`` and ``U_k(n)`` expert ``k``'s rate, capped at ``n``. Fed
the same losses it makes the same decisions as :class:`~mlcb.engine.session.Session` running
``mlcb`` with ``"trained"`` statistics, bit for bit (the tests hold it); it keeps no regret
certificate and no trace, which the adapters do not report.

Statistics (what ``L_k`` is), from the trained experts' losses only, as the paper's rule has it:

``"trained"``
    The mean of every loss expert ``k`` suffered when trained (each scored before the update it
    fed): the paper's ``L_k``.
``"recent"``
    The mean of its latest training losses, at most ``window`` of them, of those only the ones
    scored when it had at least ``keep`` times the updates it has now (the latest always kept):
    its loss as it is now, where the full mean still carries the losses of its first updates.
    If a model's loss only falls as it learns, this mean is at most its full mean, which the
    rate bounds, so ``LCB_k`` still bounds the loss it would reach.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlcb.errors import ExpertLossError
from mlcb.validation import InputError

#: What a lean session's statistics are (module docstring).
STATISTICS = ("trained", "recent")


def rate_table(rate: Callable[[np.ndarray], np.ndarray], n: int, name: str) -> array:
    """``min(n, U(n))`` at ``n = 0, 1, ...`` (0 read as 1), long enough to hold ``U(n)``: twice
    that, so that a table extended as counts grow is built ``log n`` times. An array of doubles,
    8 bytes a count (a list of floats took 32; the table grows with an expert's updates), whose
    items read as Python floats. ``rate`` must give one rate per count (an
    :class:`~mlcb.validation.InputError` naming ``name`` otherwise)."""
    counts = np.maximum(np.arange(max(1024, 2 * n), dtype=np.float64), 1.0)
    rates = np.minimum(counts, np.asarray(rate(counts), dtype=np.float64))
    if rates.shape != counts.shape:
        raise InputError(
            f"{name}: its rate function returned shape {rates.shape} for counts of shape {counts.shape}; "
            "it must give one rate per count"
        )
    return array("d", rates.tobytes())


class LeanSession:
    """M-LCB's rounds over ``n_experts`` experts, played from Python (module docstring).

    ``rates[k](n)`` is expert ``k``'s rate ``U_k(n, delta / 2K)`` at counts ``n`` (an array);
    ``identities`` order the experts for ties (the smaller first). The interface is that of
    :class:`mlcb.engine.session.Session` that the river adapters use: a warm start of several
    samples (:meth:`warm_sample`, :meth:`end_warm`), then rounds of :meth:`select`,
    :meth:`deployed`, :meth:`trained` and :meth:`end`; :meth:`best` is the expert to deploy.

    Examples
    --------
    >>> import numpy as np
    >>> session = LeanSession(3, budget=1, delta=0.1, rates=[np.sqrt] * 3)
    >>> for losses in ([0.5, 0.2, 0.9], [0.5, 0.2, 0.9]):
    ...     session.warm_sample(losses)
    >>> session.end_warm()
    >>> session.select(1)
    ([1], 1)
    >>> session.deployed(0.0)
    >>> session.trained(1, 0.0)
    >>> session.end()
    0.0
    >>> session.counts.tolist(), [round(v, 3) for v in session.mean_losses.tolist()]
    ([2, 3, 2], [0.5, 0.133, 0.9])
    """

    def __init__(
        self,
        n_experts: int,
        *,
        budget: int,
        delta: float,
        rates: Sequence[Callable[[np.ndarray], np.ndarray]],
        identities: Sequence[int] | None = None,
        bonus_scale: float = 1.0,
        top_m: bool = False,
        statistics: str = "trained",
        window: int = 200,
        keep: float = 0.5,
        names: Sequence[str] | None = None,
    ) -> None:
        if statistics not in STATISTICS:
            raise InputError(f"statistics must be one of {STATISTICS}, got {statistics!r}")
        n = self.n_experts = int(n_experts)
        if len(rates) != n:
            raise InputError(f"one rate per expert ({n}), got {len(rates)}")
        self.budget, self.delta = int(budget), float(delta)
        self.scale, self.top_m = float(bonus_scale), bool(top_m)
        self.statistics, self.window, self.keep = statistics, int(window), float(keep)
        self._identity = list(identities) if identities is not None else list(range(n))
        self._names = list(names) if names is not None else [f"expert {k}" for k in range(n)]
        self._rates = list(rates)
        # Functions of a count, as arrays of doubles (8 bytes a count; a list of floats took 32).
        self._tables = [array("d") for _ in range(n)]
        self._hoeffding = array("d", [math.inf])
        self._log_k = math.log(4.0 * n / self.delta)
        self.n = [0] * n  # updates
        self.loss_sum = [0.0] * n  # every training loss ("trained": L_k = loss_sum / n)
        self._windows = [deque[tuple[float, int]]() for _ in range(n)] if statistics == "recent" else None
        self._window_sums = [0.0] * n
        self.means = [math.nan] * n  # L_k
        self.lcb = [math.inf] * n
        self.ucb = [math.inf] * n
        # (bound, identity, index): the smallest first, ties to the smaller identity
        self._lower = [(math.inf, self._identity[k], k) for k in range(n)]
        self._upper = [(math.inf, self._identity[k], k) for k in range(n)]
        self._unchecked = n  # experts with fewer than 2 updates
        self.t = 0
        self._warm_seen = 0
        self._warm_done = False
        self._train: list[int] = []
        self._chosen = -1
        self._pending: list[int] = []  # this round's training set, not trained yet
        self._deployed_set = False
        self.regret = 0.0  # the summed deployed loss (regret against 0)

    # --- functions of a count ---------------------------------------------------------------------
    def _rate(self, k: int, n: int) -> float:
        table = self._tables[k]
        if n >= len(table):
            table = self._tables[k] = rate_table(self._rates[k], n, self._names[k])
        return table[n]

    def _width(self, n: int) -> float:
        """``sqrt(2 log(4 K n^2 / delta) / n)``, tabulated as counts grow."""
        table = self._hoeffding
        while n >= len(table):
            m = len(table)
            table.append(math.sqrt(2.0 * math.log(4.0 * self.n_experts * m * m / self.delta) / m))
        return table[n]

    # --- statistics -------------------------------------------------------------------------------
    def _record(self, k: int, loss: float, count: int) -> None:
        """Expert ``k`` suffered ``loss`` with ``count`` updates behind it."""
        self.loss_sum[k] += loss
        windows = self._windows
        if windows is not None:
            scores = windows[k]
            if len(scores) == self.window:
                self._window_sums[k] -= scores.popleft()[0]
            scores.append((loss, count))
            self._window_sums[k] += loss

    def _refresh(self, k: int) -> None:
        """Expert ``k``'s mean and bounds at its current count."""
        n = self.n[k]
        windows = self._windows
        if windows is None:
            mean = self.loss_sum[k] / n
        else:
            scores = windows[k]
            while len(scores) > 1 and scores[0][1] < self.keep * n:
                self._window_sums[k] -= scores.popleft()[0]
            mean = min(1.0, max(0.0, self._window_sums[k] / len(scores)))  # (rounding drift)
        self.means[k] = mean
        lcb = self.lcb[k] = mean - self.scale * self._rate(k, n) / n
        ucb = self.ucb[k] = mean + self.scale * self._width(n)
        identity = self._identity[k]
        self._lower[k] = (lcb, identity, k)
        self._upper[k] = (ucb, identity, k)

    def _check(self, k: int, loss: Any, what: str = "training loss") -> float:
        """``loss`` as a float, or an :class:`~mlcb.errors.ExpertLossError` naming the expert and
        the round unless it is a number in ``[0, 1]``."""
        number = isinstance(loss, float | int | np.floating | np.integer) and not isinstance(loss, bool)
        if not (number and 0.0 <= loss <= 1.0):
            raise ExpertLossError(what, self.t, k, loss, self._names[k], None)
        return float(loss)

    # --- the warm start ---------------------------------------------------------------------------
    def warm_sample(self, losses: Sequence[float]) -> None:
        """One sample of the warm start: every expert scored ``losses[k]`` on it, then learnt it."""
        if self._warm_done:
            raise RuntimeError("the warm start was already recorded")
        if len(losses) != self.n_experts:
            raise InputError(f"one loss per expert ({self.n_experts}), got {len(losses)}")
        count = self._warm_seen
        for k, loss in enumerate(losses):
            self._record(k, self._check(k, loss, "loss"), count)
        self._warm_seen += 1

    def end_warm(self) -> None:
        """End the warm start: each expert counts its samples as updates, with its mean loss over
        them (``"recent"``: over its window)."""
        c = self._warm_seen
        if c < 1:
            raise RuntimeError("end_warm: no warm-start sample was recorded")
        for k in range(self.n_experts):
            # The engine's arithmetic (Session.end_warm): c - 1 updates of the mean, then one more.
            mean = self.loss_sum[k] / c
            self.loss_sum[k] = (c - 1) * mean + mean
            self.n[k] = c
            self._refresh(k)
        self._unchecked = sum(1 for n in self.n if n < 2)
        self._warm_done = True

    # --- a round ----------------------------------------------------------------------------------
    def select(self, t: int) -> tuple[list[int], int]:
        """Begin round ``t``: the training set (the ``M`` smallest LCBs, in that order; ties: the
        smaller identity) and the deployed expert (the smallest UCB in it; ``-1`` for Top-M)."""
        if not self._warm_done:
            raise RuntimeError("record the warm start before round 1")
        if t != self.t + 1:
            raise RuntimeError(f"round {t} after round {self.t}: rounds are played in order")
        self.t = t
        if self.budget == 1:
            train = [min(self._lower)[2]]
        else:
            train = [key[2] for key in sorted(self._lower)[: self.budget]]
        chosen = -1
        if not self.top_m:
            upper = self._upper
            chosen = train[0] if len(train) == 1 else min(upper[k] for k in train)[2]
        self._train, self._chosen, self._pending = train, chosen, list(train)
        self._deployed_set = False
        return list(train), chosen

    @property
    def training_set(self) -> list[int]:
        """This round's training set."""
        return list(self._train)

    def deployed(self, loss: float | Sequence[float]) -> None:
        """The deployed expert's loss (Top-M: one per member of the training set, in order)."""
        if self._chosen < 0:
            losses = [self._check(k, v, "deployed loss") for k, v in zip(self._train, loss)]  # type: ignore[arg-type]
            self.regret += sum(losses) / len(losses)
        else:
            self.regret += self._check(self._chosen, loss, "deployed loss")
        self._deployed_set = True

    def trained(self, k: int, loss: float) -> None:
        """Expert ``k`` of this round's training set learnt the round's sample with training ``loss``."""
        if k not in self._pending:
            raise InputError(f"expert {k} is not in this round's training set {self._train}")
        loss = self._check(k, loss)
        self._pending.remove(k)
        self._record(k, loss, self.n[k])
        self.n[k] += 1
        if self.n[k] == 2:
            self._unchecked -= 1
        self._refresh(k)

    def end(self) -> float:
        """End the round; returns nothing new (the deployed loss was recorded)."""
        if not self._deployed_set:
            raise RuntimeError(f"round {self.t}: no deployed loss was recorded")
        if self._pending:
            raise RuntimeError(
                f"round {self.t}: experts {self._pending} of the training set were not trained"
            )
        return 0.0

    # --- what adapters read -----------------------------------------------------------------------
    @property
    def counts(self) -> np.ndarray:
        """Each expert's updates (during the warm start, the samples learnt so far)."""
        if not self._warm_done:
            return np.full(self.n_experts, self._warm_seen, dtype=np.int64)
        return np.array(self.n, dtype=np.int64)

    @property
    def mean_losses(self) -> np.ndarray:
        """Each expert's ``L_k`` (``nan`` before any loss; during the warm start its mean so far)."""
        if not self._warm_done:
            if not self._warm_seen:
                return np.full(self.n_experts, math.nan)
            return np.array(self.loss_sum) / self._warm_seen
        return np.array(self.means)

    def upper_bounds(self) -> np.ndarray:
        """Each expert's ``UCB_k`` (during the warm start its mean loss so far; ``inf`` before any)."""
        if not self._warm_done:
            return np.where(np.isnan(self.mean_losses), np.inf, self.mean_losses)
        return np.array(self.ucb)

    def checked(self) -> np.ndarray:
        """Whether each expert's statistics hold a loss scored after it learnt: its second update on."""
        return self.counts >= 2

    def best(self) -> int | None:
        """The checked expert with the smallest upper bound (ties: the smaller identity), or
        ``None`` while none is checked."""
        if not self._warm_done:
            if self._warm_seen < 2:
                return None
            sums, identity = self.loss_sum, self._identity
            return min(range(self.n_experts), key=lambda k: (sums[k], identity[k]))
        if not self._unchecked:
            return min(self._upper)[2]
        checked = [self._upper[k] for k in range(self.n_experts) if self.n[k] >= 2]
        return min(checked)[2] if checked else None


__all__ = ["STATISTICS", "LeanSession"]
