"""The rules that turn a number of the paper's sections into a verdict on the paper's claim
(:mod:`mlcb.paper.measure` reads the numbers; :mod:`mlcb.paper.verdicts` decides a section's
tests together).

The verdicts (:data:`~mlcb.paper.section.VERDICTS`) follow one rule, :func:`judge`: a claim that
a quantity lies in ``[low, high]`` **holds** when the package's mean lies inside by at least
:func:`critical` standard errors, **does not hold** when it lies outside by more than that, and
is **not shown** in between (or without a standard error). :func:`critical` is :data:`Z` for a
standard error of many replications and more for one of few: a standard error over ``n``
replications is itself an estimate, with ``n - 1`` degrees of freedom, so the margin is Student's
t quantile at the normal law's one-sided level of :data:`Z` (14 s.e. with 2 replications, 4.5
with 3, 2.9 with 5, 2.1 with 20); every test row carries its degrees of freedom (``Row.df``). A
claim that ``A`` is below ``B`` is the claim that their paired difference lies in ``(-inf, 0]``; a
published number is judged by :func:`judge_value`. :data:`RULES` states the rules in words, as the
page prints them.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np

from mlcb.paper.section import FAILS, HOLDS, NOT_SHOWN, Row
from mlcb.validation import InputError

#: Standard errors that decide a verdict (two: about 97.7 % one-sided under the normal law), for a
#: standard error of many replications; :func:`critical` for one of few.
Z = 2.0
#: The one-sided confidence of a verdict: the normal law's at :data:`Z`.
LEVEL = 0.5 * (1.0 + math.erf(Z / math.sqrt(2.0)))
#: How tightly the package must pin a published number down to reproduce it: its margin (the
#: half-width of its interval, :func:`critical` standard errors) at most this share of the number.
TOLERANCE = 0.10

#: The rules of the verdicts, in words (the page prints them).
RULES = (
    f"A claim that a quantity lies in a range holds when the package's mean is inside the range by "
    f"at least {Z:g} standard errors, does not hold when it is outside by more than {Z:g} standard "
    "errors, and is not shown in between or when there is no standard error. A standard error over "
    "few replications is itself uncertain: over n replications the margin is Student's t quantile "
    f"with n - 1 degrees of freedom at the same one-sided level ({100 * LEVEL:.1f} %): 14 standard "
    "errors with 2 replications, 4.5 with 3, 2.9 with 5, 2.1 with 20. Replications that all give "
    "the same value give no standard error: such a test is not shown.",
    "A claim that one policy is below another is checked on their difference, paired replication "
    "by replication (every policy meets the same streams): the range is everything below 0.",
    "A claim about a curve's growth is checked on the least-squares log-log slope of the mean curve "
    "over the last decade of rounds, with its jackknife standard error over replications.",
    f"A published number holds when it lies within {Z:g} standard errors of the package's mean "
    "(widened by half a unit of the paper's last printed digit; the margin of few replications as "
    f"above) and that margin is at most {TOLERANCE:.0%} of the number (narrower replications could "
    f"not tell it from a number {TOLERANCE:.0%} away: not shown), and does not hold when it lies "
    "outside the margin.",
    "Many comparisons: a section's tests are decided together by Holm's rule at a family-wise error "
    "rate of 5 %. Sort the tests by the tail beyond their margin, p = 1 - Phi(z) (Student's t with "
    "n - 1 degrees of freedom over n replications); the i-th "
    "smallest (from i = 0) keeps its verdict while it and every one before it have p <= 0.05 / "
    "(m - i), m the section's tests; the others are not shown, with the margin they needed. A "
    "published number within two standard errors holds without a margin and is left as it is.",
    "Each claim gets one verdict over its tests: holds when every test holds, holds in part when "
    "some hold and others do not (the conditions of each are listed), does not hold when none "
    "holds and some do not, not shown when none is decided. A row that does not hold or is not "
    "shown gives its reason, from measured numbers; a number shown for context tests no claim.",
)


class Test(TypedDict, total=False):
    """What makes a row a test (:func:`claim_row`, :func:`published_row`): the section's claim it
    tests, under which condition, and why it may not hold."""

    claim: str
    condition: str
    reason: str


def mean_and_error(values: np.ndarray) -> tuple[float, float]:
    """The mean of ``values`` and its standard error (``nan`` with fewer than two values).

    Examples
    --------
    >>> mean_and_error(np.array([1.0, 2.0, 3.0]))
    (2.0, 0.5773502691896258)
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    error = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
    return float(values.mean()), error


def estimate(values: np.ndarray) -> tuple[float, float, float]:
    """:func:`mean_and_error` of ``values`` and the degrees of freedom of the error, one fewer
    than the values (:func:`critical`).

    Examples
    --------
    >>> estimate(np.array([1.0, 2.0, 3.0]))
    (2.0, 0.5773502691896258, 2.0)
    """
    values = np.asarray(values, dtype=float)
    return (*mean_and_error(values), float(max(values.size - 1, 0)))


def critical(df: float = math.inf) -> float:
    """The standard errors by which a mean must clear a boundary for a verdict, when the standard
    error has ``df`` degrees of freedom (``n - 1`` over ``n`` replications): :data:`Z` under the
    normal law (``df = inf``), else Student's t quantile at the same one-sided level
    (:data:`LEVEL`); ``inf`` without a degree of freedom.

    Examples
    --------
    >>> critical(), round(critical(1), 1), round(critical(2), 1), round(critical(19), 2)
    (2.0, 14.0, 4.5, 2.14)
    """
    if math.isnan(df) or df <= 0:
        return math.inf
    if math.isinf(df):
        return Z
    from scipy.stats import t

    return float(t.ppf(LEVEL, df))


def _exact(error: float, df: float) -> bool:
    """An error of 0 that is no estimate (``df = inf``): the number is exact."""
    return error == 0 and math.isinf(df)


# --- the rules ------------------------------------------------------------------------------------
def judge(
    mean: float, error: float, low: float = -math.inf, high: float = math.inf, df: float = math.inf
) -> str:
    """The verdict on the claim that the quantity estimated by ``mean`` (standard error ``error``
    with ``df`` degrees of freedom, ``n - 1`` over ``n`` replications) lies in ``[low, high]``:
    :data:`~mlcb.paper.section.HOLDS` when ``mean`` lies inside by at least :func:`critical`
    ``(df)`` errors, ``FAILS`` when it lies outside by more, ``NOT_SHOWN`` otherwise. An error of
    0 with ``df = inf`` is an exact number (judged as it is); an error of 0 over replications (they
    all gave the same value) is no standard error, and a missing (``nan``) error or mean is
    ``NOT_SHOWN``.

    Examples
    --------
    >>> judge(-30.0, 10.0, high=0.0), judge(5.0, 10.0, high=0.0), judge(40.0, 10.0, high=0.0)
    ('holds', 'not shown', 'does not hold')
    >>> judge(0.62, 0.03, high=1.0), judge(5.0, 2.0, low=2.0, high=10.0)
    ('holds', 'not shown')
    >>> judge(-30.0, 10.0, high=0.0, df=1), judge(-30.0, 10.0, high=0.0, df=19)  # 2 and 20 runs
    ('not shown', 'holds')
    """
    if math.isnan(low) or math.isnan(high) or low > high:
        raise InputError(f"low and high must be a range low <= high, got [{low!r}, {high!r}]")
    if not (math.isfinite(mean) and math.isfinite(error)) or error < 0:
        return NOT_SHOWN
    if error == 0 and not _exact(error, df):
        return NOT_SHOWN
    margin = critical(df) * error
    if low <= mean - margin and mean + margin <= high:
        return HOLDS
    if mean + margin < low or mean - margin > high:
        return FAILS
    return NOT_SHOWN


def judge_value(
    published: float,
    mean: float,
    error: float,
    digit: float = 0.0,
    df: float = math.inf,
    tolerance: float | None = None,
) -> str:
    """The verdict on a published number: ``FAILS`` when ``published`` lies farther from ``mean``
    than its margin, :func:`critical` ``(df)`` standard errors plus half of ``digit`` (a unit of
    the paper's last printed digit, e.g. 0.1 for "95.0"); within it, ``HOLDS`` when the margin of
    the standard errors is at most ``tolerance`` (default :data:`TOLERANCE` of the number: an
    interval so wide would not tell the number from one that far away) and ``NOT_SHOWN``
    otherwise; ``NOT_SHOWN`` without a standard error (or with an error of 0 over replications,
    as :func:`judge`).

    Examples
    --------
    >>> judge_value(95.0, 87.3, 0.2, 0.1), judge_value(86.0, 86.2, 0.3, 0.1)
    ('does not hold', 'holds')
    >>> judge_value(95.0, 81.3, 1.8, 0.1, df=1)  # 2 runs: within 25 points, so no agreement either
    'not shown'
    """
    if not (math.isfinite(published) and math.isfinite(mean) and math.isfinite(error)) or error < 0:
        return NOT_SHOWN
    if error == 0 and not _exact(error, df):
        return NOT_SHOWN
    width = critical(df) * error
    if abs(published - mean) > width + digit / 2.0:
        return FAILS
    return HOLDS if width <= _tolerance(published, tolerance) else NOT_SHOWN


def _tolerance(published: float, tolerance: float | None) -> float:
    return TOLERANCE * abs(published) if tolerance is None else tolerance


def _bound(value: float) -> str:
    return f"{value:,.4g}"


#: What a row's note says of a standard error of 0 over replications.
SAME_VALUE = "every replication gave the same value: no standard error"


def describe(
    mean: float, error: float, low: float = -math.inf, high: float = math.inf, df: float = math.inf
) -> str:
    """Where ``mean`` lies against ``[low, high]``, in standard errors: the detail a verdict's row
    carries in its note (``df``: the error's degrees of freedom, as :func:`judge`).

    Examples
    --------
    >>> describe(-30.0, 10.0, high=0.0)
    '3.0 s.e. below 0'
    >>> describe(0.62, 0.03, high=1.0)
    '12.7 s.e. below 1'
    >>> describe(5.0, 1.0, low=2.0, high=10.0)
    '3.0 s.e. above 2 and 5.0 s.e. below 10'
    """
    if not (math.isfinite(mean) and math.isfinite(error)) or error <= 0:
        if not math.isfinite(error):
            return "no standard error"
        return "exact" if _exact(error, df) else SAME_VALUE
    parts = []
    for bound in (low, high):
        if math.isfinite(bound):
            z = (mean - bound) / error
            side = "above" if z > 0 else "below"
            parts.append(f"{abs(z):.1f} s.e. {side} {_bound(bound)}")
    return " and ".join(parts)


def distance(
    mean: float, error: float, low: float = -math.inf, high: float = math.inf, df: float = math.inf
) -> float:
    """How many standard errors ``mean`` lies from the edge of ``[low, high]`` that decides
    :func:`judge`: inside by at least :data:`Z` (holds), the distance to the nearer edge; outside
    (does not hold), the distance past the edge it crossed; in between, the distance to the
    nearer edge. ``inf`` for an exact number, ``nan`` without a standard error (or with an
    error of 0 over replications: ``df`` finite).

    Examples
    --------
    >>> distance(-30.0, 10.0, high=0.0), distance(0.62, 0.03, low=0.5, high=1.0)
    (3.0, 4.0)
    >>> round(distance(5.0, 2.0, low=2.0, high=10.0), 6)
    1.5
    """
    if not (math.isfinite(mean) and math.isfinite(error)) or error < 0:
        return math.nan
    if error == 0:
        return math.inf if _exact(error, df) else math.nan
    return (
        min(abs(mean - low), abs(high - mean)) / error
        if low <= mean <= high
        else ((low - mean if mean < low else mean - high) / error)
    )


def claim_row(
    quantity: str,
    paper: str,
    mean: float,
    error: float,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    unit: str = "",
    note: str = "",
    claim: str = "",
    condition: str = "",
    reason: str = "",
    df: float = math.inf,
) -> Row:
    """The row of the claim ``paper`` that ``quantity`` (estimated as ``mean`` with standard error
    ``error`` of ``df`` degrees of freedom: ``n - 1`` over ``n`` replications, :func:`estimate`)
    lies in ``[low, high]``: its :func:`judge` verdict, its :func:`distance` and
    :func:`describe` before ``note``. The row tests the section's claim ``claim`` under
    ``condition``; ``reason`` (why it may not hold, from measured numbers) is kept unless it holds.

    Examples
    --------
    >>> row = claim_row("M-LCB minus RoundRobin", "M-LCB below", -30.0, 10.0, high=0.0)
    >>> row.verdict, row.note, row.z
    ('holds', '3.0 s.e. below 0', 3.0)
    """
    detail = describe(mean, error, low, high, df)
    verdict = judge(mean, error, low, high, df)
    outside = math.isfinite(mean) and not low <= mean <= high
    return Row(
        quantity,
        paper,
        mean,
        error,
        unit,
        f"{detail}; {note}" if note else detail,
        verdict,
        reason if verdict == FAILS or (verdict == NOT_SHOWN and outside) else "",
        claim,
        condition,
        distance(mean, error, low, high, df),
        df,
    )


def published_row(
    quantity: str,
    paper: str,
    published: float,
    mean: float,
    error: float,
    *,
    digit: float = 0.0,
    unit: str = "",
    note: str = "",
    claim: str = "",
    condition: str = "",
    reason: str = "",
    df: float = math.inf,
    tolerance: float | None = None,
) -> Row:
    """The row of a published number: ``paper`` as the paper prints it, ``published`` its value
    (in the unit of ``mean``), ``digit`` a unit of its last printed digit, ``df`` the degrees of
    freedom of ``error``, ``tolerance`` the widest margin that reproduces it; :func:`judge_value`.
    Its ``z`` is the distance past ``Z`` standard errors plus half a digit where it does not hold
    (``nan`` where it holds: that verdict rests on no margin). Where the number lies within a
    margin wider than ``tolerance``, the row is not shown and its reason says so.

    Examples
    --------
    >>> row = published_row("accuracy, M = 4", "95.0 %", 95.0, 87.3, 0.2, digit=0.1, unit="%")
    >>> row.verdict, row.note, round(row.z, 2)
    ('does not hold', "the paper's 95 lies 38.5 s.e. above the mean", 38.25)
    """
    if math.isfinite(error) and error > 0:
        z = (published - mean) / error
        detail = (
            f"the paper's {_bound(published)} lies {abs(z):.1f} s.e. {'above' if z > 0 else 'below'} the mean"
        )
    else:
        detail = describe(mean, error, df=df)
    verdict = judge_value(published, mean, error, digit, df, tolerance)
    if verdict == NOT_SHOWN and math.isfinite(error) and error > 0:
        width, allowed = critical(df) * error, _tolerance(published, tolerance)
        runs = f" of {df + 1:.0f} replications" if math.isfinite(df) else ""
        wide = (
            f"within the noise: the margin{runs}, {width:,.3g} either way, is wider than "
            f"{allowed:,.3g}"
            + (f" ({TOLERANCE:.0%} of the paper's {_bound(published)})" if tolerance is None else "")
            + ", so it would not tell the paper's number from one that far away; more replications "
            "narrow it"
        )
        reason = f"{wide}; {reason}" if reason else wide
    margin = (
        (abs(published - mean) - digit / 2.0) / error
        if verdict == FAILS and error > 0
        else math.inf
        if verdict == FAILS
        else math.nan
    )
    return Row(
        quantity,
        paper,
        mean,
        error,
        unit,
        f"{detail}; {note}" if note else detail,
        verdict,
        "" if verdict == HOLDS else reason,
        claim,
        condition,
        margin,
        df,
    )


def verdict(mean: float, error: float, below: bool = True) -> str:
    """The note of a claim that a difference is below (``below=True``) or above zero: its
    :func:`judge` verdict and where it lies, in standard errors; ``""`` without a standard error.
    A row should carry the verdict itself: prefer :func:`claim_row`.

    Examples
    --------
    >>> verdict(-30.0, 10.0)
    'holds: 3.0 s.e. below 0'
    >>> verdict(5.0, 10.0)
    'not shown: 0.5 s.e. above 0'
    >>> verdict(40.0, 10.0)
    'does not hold: 4.0 s.e. above 0'
    """
    if not (math.isfinite(mean) and math.isfinite(error)) or error <= 0:
        return ""
    bounds = {"high": 0.0} if below else {"low": 0.0}
    return f"{judge(mean, error, **bounds)}: {describe(mean, error, **bounds)}"
