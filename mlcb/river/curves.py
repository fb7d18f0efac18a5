"""Every model's learning curve as the pool's scores show it, and M-LCB's lower bounds read off the
curve of the model that predicts (``rate="curve"`` of :mod:`mlcb.river`'s selectors, with
``"pool"`` statistics; not the default: docs/river.md measures both).

Every model of the pool is scored on every sample before any learns it, so each model's scores
are known at each of its counts of updates: its *learning curve*, the loss it had after ``n``
updates, for every ``n`` it has reached. The budget caps the updates, not what is seen: how much
an update is worth to a model that has learnt little can be read off the curve of a model that
has learnt more.

The reference ``r`` is the model that predicts (the smallest mean loss over its window; of
models with that same mean, the one with the most updates), with ``n_r`` updates and mean loss
``L_r``. A challenger ``k`` with fewer updates, ``n_k``, and mean loss ``L_k`` over its window is
compared with the reference *at equal updates*: ``P_r(n_k)`` is the reference's mean loss over
the samples it was scored on when it had between ``n_k / 2`` and ``n_k`` updates (the counts
that ``L_k``'s window spans). Had the challenger gained, from there on, what the reference gained,
its loss with ``n_r`` updates would be ``L_r - (P_r(n_k) - L_k)``; its lower bound is that, less
``z`` (:data:`CURVE_Z`) standard errors of the difference,

``LCB_k = L_r - (P_r(n_k) - L_k) - z sqrt(v_k / N_k + v_P / N_P)``

(``N`` and ``v`` the numbers of scores and their variances). A challenger whose bound is below
``L_r`` (it may be better than the reference was with as many updates) is trained while it has
learnt less than ``sqrt(W n_r)`` samples (``W`` the warm start: the exploration, whose share of
the updates shrinks as ``1 / sqrt(n_r)``), and after that only when it is better beyond
:data:`EVIDENCE` times the noise (``L_r - (P_r(n_k) - L_k) + 2 z sd < L_r``). Otherwise the
reference is trained. No rate is assumed for any kind of model: each bound is measured on the
pool's own scores.

M-LCB then trains the ``M`` models first in :meth:`LearningCurves.priorities` (ties in canonical
order): the challengers that may be trained, by lower bound, then the reference, then the others
by their mean loss; as it trains the ``M`` models of smallest lower bound with a fixed rate ``U(n)``
(``LCB = L - U(n) / n``).
"""

from __future__ import annotations

import math
from collections import deque

#: How many standard errors of the difference of two mean losses the lower bound subtracts.
CURVE_Z = 1.0
#: A challenger that may beat the reference is trained while its updates are under ``W^(1 - p)
#: n_r^p`` (``W`` the warm start, ``n_r`` the reference's updates, ``p`` this power).
EXPLORE_POWER = 0.5
#: Past that, a challenger is trained when its projected loss is below the reference's by this
#: many times the noise term (``z`` standard errors).
EVIDENCE = 2.0
#: Pseudo-scores of a variance estimate: a variance from few scores is shrunk toward the largest
#: variance a loss in [0, 1] with that mean can have, ``mean (1 - mean)``.
PRIOR_SCORES = 2.0


def shrunk_variance(squares: float, total: float, n: int) -> float:
    """The variance of ``n`` scores in ``[0, 1]`` (``squares``: the sum of their squared deviations
    from their mean, ``total`` their sum), shrunk toward ``mu (1 - mu)`` by :data:`PRIOR_SCORES`
    pseudo-scores (``mu`` the mean with half of them at 0 and half at 1): positive for every
    ``n``, so that two scores that agree by chance do not claim a variance of 0.

    >>> round(shrunk_variance(0.0, 3.0, 3), 3)  # three losses of 1: not certain yet
    0.08
    >>> round(shrunk_variance(0.0, 0.0, 0), 3)
    0.25
    """
    mu = (total + 0.5 * PRIOR_SCORES) / (n + PRIOR_SCORES)
    return (max(0.0, squares) + PRIOR_SCORES * mu * (1.0 - mu)) / (max(0, n - 1) + PRIOR_SCORES)


class LearningCurves:
    """Every model's scores by its count of updates (module docstring).

    ``score(losses)`` records one sample's scores, every model at its current count;
    ``learnt(k)`` counts one update of model ``k``; ``level(k)`` is the mean over its window (the
    last ``window`` samples, of those the ones scored with at least half its updates now, the
    latest always kept: the ``"pool"`` statistics' mean loss), with its variance and number of
    scores; ``band(k, lo, hi)`` the same over every score it made with ``lo`` to ``hi``
    updates; ``priorities(best, warm)`` the order in which M-LCB trains them.

    Examples
    --------
    >>> curves = LearningCurves(2, window=10)
    >>> for losses in ([1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [0.0, 1.0]):
    ...     curves.score(losses)
    ...     curves.learnt(0)
    >>> curves.counts, curves.level(0)[0], curves.level(1)[0]  # model 1 never learnt
    ([4, 0], 0.0, 1.0)
    >>> curves.band(0, 0, 1)[0]  # model 0 erred with 0 and 1 updates, as model 1 does now
    1.0
    """

    def __init__(self, n_models: int, window: int) -> None:
        self.window = int(window)
        self.counts = [0] * n_models
        # The window: (loss, count) of the latest scores, their sum and sum of squares.
        self._recent: list[deque[tuple[float, int]]] = [deque() for _ in range(n_models)]
        self._sums = [[0.0, 0.0] for _ in range(n_models)]
        # Totals (sum, sum of squares, scores) over the counts a model has left behind: entry c
        # holds those of counts 0 .. c - 1; and those of its current count.
        self._prefix: list[list[tuple[float, float, int]]] = [[(0.0, 0.0, 0)] for _ in range(n_models)]
        self._current = [[0.0, 0.0, 0] for _ in range(n_models)]

    def score(self, losses: list[float]) -> None:
        """One sample's losses, model ``k`` scored ``losses[k]`` at its current count."""
        for k, loss in enumerate(losses):
            loss = float(loss)
            recent, sums = self._recent[k], self._sums[k]
            if len(recent) == self.window:
                old = recent.popleft()[0]
                sums[0] -= old
                sums[1] -= old * old
            recent.append((loss, self.counts[k]))
            sums[0] += loss
            sums[1] += loss * loss
            current = self._current[k]
            current[0] += loss
            current[1] += loss * loss
            current[2] += 1

    def learnt(self, k: int) -> None:
        """Model ``k`` made one update."""
        total, squares, n = self._current[k]
        last = self._prefix[k][-1]
        self._prefix[k].append((last[0] + total, last[1] + squares, last[2] + int(n)))
        self._current[k] = [0.0, 0.0, 0]
        self.counts[k] += 1

    def level(self, k: int) -> tuple[float, float, int]:
        """``(mean, variance, scores)`` of model ``k``'s window (``nan`` mean before any score)."""
        recent, sums, count = self._recent[k], self._sums[k], self.counts[k]
        while len(recent) > 1 and 2 * recent[0][1] < count:  # scored with under half its updates
            old = recent.popleft()[0]
            sums[0] -= old
            sums[1] -= old * old
        n = len(recent)
        if not n:
            return math.nan, 0.25, 0
        mean = sums[0] / n
        return mean, shrunk_variance(sums[1] - n * mean * mean, sums[0], n), n

    def band(self, k: int, lo: int, hi: int) -> tuple[float, float, int]:
        """``(mean, variance, scores)`` of every score model ``k`` made with ``lo`` to ``hi``
        updates (``hi`` below its count now); ``nan`` mean where it made none."""
        prefix = self._prefix[k]
        hi = min(hi, len(prefix) - 2)
        if hi < lo:
            return math.nan, 0.25, 0
        total = prefix[hi + 1][0] - prefix[lo][0]
        squares = prefix[hi + 1][1] - prefix[lo][1]
        n = prefix[hi + 1][2] - prefix[lo][2]
        if not n:
            return math.nan, 0.25, 0
        mean = total / n
        return mean, shrunk_variance(squares - n * mean * mean, total, n), n

    def reference(self, best: int, levels: list | None = None) -> int:
        """The model whose curve the bounds read: ``best`` (the model that predicts), or, of the
        models with the same mean loss, the one with the most updates."""
        levels = levels if levels is not None else [self.level(k) for k in range(len(self.counts))]
        chosen = best
        for k, (mean, _, n) in enumerate(levels):
            if n and self.counts[k] > self.counts[chosen] and mean <= levels[best][0]:
                chosen = k
        return chosen

    def priorities(self, best: int | None, warm: int = 1, z: float | None = None) -> list[float]:
        """The order in which M-LCB trains the models, smallest first (module docstring): the
        challengers that may be trained now, by their lower bound (below the reference's mean
        loss), then the reference (:meth:`reference` of ``best``, the model that predicts) at its
        mean loss, then every other model, by its mean loss plus 1 (after the reference).
        ``warm``: the warm start's samples; with no ``best``, every model's mean loss."""
        z = CURVE_Z if z is None else z
        levels = [self.level(k) for k in range(len(self.counts))]
        if best is None:
            return [mean for mean, _, _ in levels]
        reference = self.reference(best, levels)
        lead_mean, lead_count = levels[reference][0], self.counts[reference]
        explored = max(1, warm) ** (1.0 - EXPLORE_POWER) * lead_count**EXPLORE_POWER
        order = []
        for k, (mean, variance, n) in enumerate(levels):
            count = self.counts[k]
            later = lead_mean + 1.0 + mean  # after the reference, by mean loss
            if k == reference:
                order.append(lead_mean)
                continue
            if count >= lead_count or not n:
                order.append(later)
                continue
            before, before_variance, m = self.band(reference, (count + 1) // 2, count)
            if not m:  # the reference was never scored at these counts: nothing to read
                order.append(later)
                continue
            # its loss with the reference's updates, had it gained what the reference gained
            projected = lead_mean - (before - mean)
            noise = z * math.sqrt(variance / n + before_variance / m)
            lower = projected - noise
            if lower < lead_mean and (count < explored or projected + EVIDENCE * noise < lead_mean):
                order.append(lower)
            else:
                order.append(later)
        return order
