"""From tests to verdicts: the rule for many comparisons, one verdict per claim, and the sentence
that sums a section up.

A section tests each of the paper's claims under several conditions (calibrations, budgets,
wrappers): each test is a row of its tables (:func:`mlcb.paper.rules.claim_row`), decided at
:data:`~mlcb.paper.rules.Z` standard errors. A section runs dozens of tests, and at two
standard errors a test whose quantity lies on its boundary comes out on either side by chance
with probability 2.3 %: dozens of tests give about one chance verdict in forty. :func:`finish`
therefore decides a section's tests together by **Holm's rule** at a family-wise error rate of
:data:`ALPHA` (the chance that any verdict of the section is due to chance alone is at most 5 %):
the tests are sorted by the tail beyond their margin, ``p = 1 - Phi(z)`` (Student's t with the
test's degrees of freedom, ``n - 1`` over ``n`` replications, :func:`tail`); the ``i``-th
smallest (from ``i = 0``) keeps its verdict while it and every one before it have
``p <= ALPHA / (m - i)``, ``m`` the section's tests; the others are **not shown**, with the
margin they would have needed. A published number that lies within two standard errors of the
mean holds without a margin (it is not a rejection) and is left as it is.

Then every claim gets one verdict over its tests (:data:`~mlcb.paper.section.CLAIM_VERDICTS`):
**holds** when every test holds, **holds in part** when some hold and others do not (or are not
shown), **does not hold** when none holds and some do not, **not shown** when none is decided;
with the conditions of each kind of test and the measured reasons of those that do not hold.

Examples
--------
>>> from mlcb.paper.measure import claim_row
>>> rows = (claim_row("a, M = 1", "below", -9.0, 1.0, high=0.0, claim="below", condition="M = 1"),
...         claim_row("a, M = 2", "below", 2.5, 1.0, high=0.0, claim="below", condition="M = 2",
...                   reason="it trains the wrong expert"))
>>> section = finish("k", "K", "Text.", (), (Table("t", rows),), (Spec("below", "A below B", "A below B"),))
>>> claim = section.claims[0]
>>> claim.verdict, claim.holds, claim.fails
('holds in part', 'M = 1', 'M = 2')
>>> section.tables[0].rows[1].reason
'it trains the wrong expert'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from mlcb.paper.rules import SAME_VALUE, critical
from mlcb.paper.section import FAILS, HOLDS, HOLDS_IN_PART, NOT_SHOWN, Claim, Row, Section, Table
from mlcb.validation import InputError

#: The family-wise error rate of a section's verdicts under Holm's rule.
ALPHA = 0.05
#: How the reason of a test within the noise begins.
NOISE = "within the noise"
#: The chance that one test at two standard errors comes out on the wrong side of its boundary
#: when its quantity lies on it (one-sided normal tail beyond 2).
CHANCE_AT_TWO = 1.0 - NormalDist().cdf(2.0)


@dataclass(frozen=True)
class Spec:
    """A claim a section tests: ``key`` (the rows' ``claim``), ``text`` (the claim in words),
    ``label`` (a short name for summaries), ``source`` (``"paper"``, or ``"slides"`` for the
    authors' slides) and ``kind`` (``"claim"``, or ``"number"`` for a published number)."""

    key: str
    text: str
    label: str
    source: str = "paper"
    kind: str = "claim"


def tail(z: float, df: float = math.inf) -> float:
    """The one-sided tail beyond ``z`` standard errors: the chance of a margin of ``z`` or more by
    chance alone, under the normal law (``df = inf``) or, for a standard error with ``df``
    degrees of freedom (``n - 1`` over ``n`` replications), Student's t.

    Examples
    --------
    >>> round(tail(2.0), 4), tail(math.inf), round(tail(2.0, df=4), 3)
    (0.0228, 0.0, 0.058)
    """
    if math.isinf(df) or math.isinf(z):
        return 0.5 * math.erfc(z / math.sqrt(2.0))
    if math.isnan(df) or df <= 0:
        return 1.0
    from scipy.stats import t

    return float(t.sf(z, df))


def margin_needed(p: float, df: float = math.inf) -> float:
    """The margin, in standard errors, whose one-sided tail (:func:`tail`) is ``p``.

    Examples
    --------
    >>> round(margin_needed(0.05 / 40), 2), round(margin_needed(0.05 / 40, df=4), 1)
    (3.02, 6.8)
    """
    if math.isinf(df):
        return NormalDist().inv_cdf(1.0 - p)
    if math.isnan(df) or df <= 0:
        return math.inf
    from scipy.stats import t

    return float(t.isf(p, df))


def holm(tables: Sequence[Table], alpha: float = ALPHA) -> tuple[tuple[Table, ...], float]:
    """``tables`` with their tests decided together by Holm's rule at ``alpha`` (see the module),
    and the largest margin a test with a normal standard error needed (``nan`` without tests). A
    test that loses its verdict is not shown, its ``reason`` says why (the margin it needed, under
    its own degrees of freedom)."""
    tests = [row for table in tables for row in table.rows if row.verdict]
    m = len(tests)
    if m == 0:
        return tuple(tables), math.nan
    decided = sorted(
        (tail(row.z, row.df), index)
        for index, row in enumerate(tests)
        if row.verdict in (HOLDS, FAILS) and not math.isnan(row.z)
    )
    kept: set[int] = set()
    level = alpha / m
    for rank, (p, index) in enumerate(decided):
        if p > alpha / (m - rank):
            level = alpha / (m - rank)
            break
        kept.add(index)
    changed: dict[int, Row] = {}
    for index, row in enumerate(tests):
        if row.verdict in (HOLDS, FAILS) and not math.isnan(row.z) and index not in kept:
            side = "inside its range" if row.verdict == HOLDS else "past the boundary"
            runs = f" with {row.df + 1:.0f} replications" if math.isfinite(row.df) else ""
            why = (
                f"{row.z:.1f} s.e. {side}, short of the {margin_needed(level, row.df):.1f} s.e. that "
                f"Holm's rule asks of it{runs} among this section's {m} tests"
            )
            changed[id(row)] = dataclasses.replace(
                row, verdict=NOT_SHOWN, reason=f"{why}; {row.reason}" if row.reason else why
            )
    out = tuple(
        dataclasses.replace(table, rows=tuple(changed.get(id(row), row) for row in table.rows))
        for table in tables
    )
    return out, margin_needed(alpha / m)


def _noise_reason(row: Row, needed: float) -> str:
    """Why a test within the noise is not shown: its margin, the margin its replications ask
    (few replications ask more, :func:`~mlcb.paper.rules.critical`) and how many replications
    would decide it if the mean and the spread stayed where they are (its margin grows as the
    square root of the replications; ``needed``: the margin Holm's rule asks of a section's first
    test under the normal law)."""
    if SAME_VALUE in row.note:
        return f"{NOISE}: {SAME_VALUE}; more replications would give one"
    if not math.isfinite(row.z):
        return f"{NOISE}: no standard error (too few replications)"
    if not math.isfinite(row.df):
        target = max(needed, critical())
        times = (target / row.z) ** 2 if row.z > 0.05 else math.inf
        more = (
            f"about {times:,.0f} times the replications"
            if times < 100
            else "more than 100 times the replications"
        )
        return f"{NOISE}: {row.z:.1f} s.e. from the boundary; {target:.1f} s.e. would take {more}"
    runs, level = int(row.df) + 1, tail(needed)

    def decides(n: int) -> bool:  # its margin grows with n, the one asked of it shrinks
        return row.z * math.sqrt(n / runs) >= max(critical(n - 1), margin_needed(level, n - 1))

    enough, low, high = None, runs + 1, 100 * runs
    if decides(high):
        while low < high:  # the fewest replications that decide it
            middle = (low + high) // 2
            low, high = (low, middle) if decides(middle) else (middle + 1, high)
        enough = low
    more = (
        f"about {enough:,} replications would decide it" if enough else "more than 100 times the replications"
    )
    student = " (Student's t)" if critical(row.df) > critical() + 0.05 else ""
    return (
        f"{NOISE}: {row.z:.1f} s.e. from the boundary, short of the {critical(row.df):.1f} s.e. that "
        f"{runs} replications ask{student}; {more}"
    )


def conditions(rows: Iterable[Row], drop: str = "") -> str:
    """The conditions of ``rows`` in a few words: the budgets of rows that share the rest of
    their condition gathered (``"authors, last iterate: M = 2, 3"``), the part ``drop`` left out.

    Examples
    --------
    >>> rows = [Row("q", "c", 1.0, condition=f"authors; M = {m}; last iterate") for m in (2, 3)]
    >>> conditions(rows), conditions(rows, drop="authors")
    ('authors, last iterate: M = 2, 3', 'last iterate: M = 2, 3')
    >>> rows = [Row("q", "c", 1.0, condition=f"{d}; M = 4; against {p}") for d in "ab" for p in "XY"]
    >>> conditions(rows)
    'a and b, against X and against Y: M = 4'

    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        parts = [part for part in row.condition.split("; ") if part and part != drop]
        rest = tuple(part for part in parts if not part.startswith("M = "))
        budgets = groups.setdefault(rest, [])
        for part in parts:
            if part.startswith("M = ") and part[4:] not in budgets:
                budgets.append(part[4:])
    merged: dict[tuple[str, ...], list[tuple[str, ...]]] = {}  # the same budgets: one clause
    for rest, listed in groups.items():
        merged.setdefault(tuple(listed), []).append(rest)
    texts = []
    for shared, rests in merged.items():
        where = _factored(rests)
        at = f"M = {', '.join(shared)}" if shared else ""
        texts.append(f"{where}: {at}" if where and at else where or at or "as run")
    return "; ".join(texts)


def _factored(rests: list[tuple[str, ...]]) -> str:
    """Conditions ``rests`` (tuples of parts) in few words: ``"a and b, c and d"`` where they are
    every combination of their parts' values, else each in turn (``" / "``)."""
    if len(rests) == 1 or len({len(rest) for rest in rests}) != 1:
        return " / ".join(", ".join(rest) for rest in rests)
    values = [list(dict.fromkeys(rest[i] for rest in rests)) for i in range(len(rests[0]))]
    if math.prod(len(v) for v in values) != len(set(rests)):
        return " / ".join(", ".join(rest) for rest in rests)
    return ", ".join(_listed(v) for v in values)


def claim_verdict(rows: Sequence[Row]) -> str:
    """One verdict over the tests ``rows`` of a claim (see the module).

    Examples
    --------
    >>> claim_verdict([Row("a", "c", 1.0, verdict="holds"), Row("b", "c", 1.0, verdict="not shown")])
    'holds in part'
    """
    found = {row.verdict for row in rows}
    if found == {HOLDS}:
        return HOLDS
    if HOLDS in found:
        return HOLDS_IN_PART
    return FAILS if FAILS in found else NOT_SHOWN


def _claim(spec: Spec, rows: Sequence[Row]) -> Claim:
    kinds = {v: [r for r in rows if r.verdict == v] for v in (HOLDS, FAILS, NOT_SHOWN)}
    reasons = []
    firsts: dict[str, Row] = {}  # the first miss of each group (calibration, data) speaks for it
    for row in kinds[FAILS]:
        firsts.setdefault(row.condition.split("; ")[0], row)
    for row in firsts.values():
        reasons.append(f"{row.reason} [at {conditions([row])}]")
    if len(kinds[FAILS]) > len(firsts):
        reasons.append("the rows give the numbers at the other conditions where it does not hold")
    if kinds[NOT_SHOWN]:
        reasons.append(f"not decided at {conditions(kinds[NOT_SHOWN])}: the rows give each margin and why")
    return Claim(
        spec.key,
        spec.text,
        spec.label,
        claim_verdict(rows),
        conditions(kinds[HOLDS]) if kinds[HOLDS] else "",
        conditions(kinds[FAILS]) if kinds[FAILS] else "",
        conditions(kinds[NOT_SHOWN]) if kinds[NOT_SHOWN] else "",
        " ".join(_sentence(r) for r in reasons if r),
        spec.source,
        spec.kind,
    )


def _holm_note(row: Row) -> bool:
    return "Holm's rule" in row.reason


def _sentence(text: str) -> str:
    text = text.strip()
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def finish(
    key: str,
    title: str,
    text: str,
    figures: Sequence[Any],
    tables: Sequence[Table],
    specs: Sequence[Spec],
    *,
    name: str = "",
    size: str = "",
    groups: dict[str, str] | None = None,
) -> Section:
    """The section of ``tables``: its tests decided together (:func:`holm`), a reason on every
    test within the noise, and one :class:`~mlcb.paper.section.Claim` per spec; its summary
    (:func:`summary`) names it ``name`` at ``size`` and reads the conditions' first parts as
    ``groups`` (e.g. ``{"authors": "the authors' constants"}``).

    A ``ValueError`` names a test whose claim is not among ``specs``, a claim without a test, or
    a test that does not hold without a reason: every section states why.
    """
    decided, needed = holm(tables)
    done = []
    for table in decided:
        rows = []
        for row in table.rows:
            if (
                row.verdict == NOT_SHOWN
                and not _holm_note(row)
                and not row.reason.startswith(NOISE)
                and (math.isfinite(row.z) or not row.reason or SAME_VALUE in row.note)
            ):
                noise = _noise_reason(row, needed)
                row = dataclasses.replace(row, reason=f"{noise}; {row.reason}" if row.reason else noise)
            rows.append(row)
        done.append(dataclasses.replace(table, rows=tuple(rows)))
    tests = [row for table in done for row in table.rows if row.verdict]
    keys = [spec.key for spec in specs]
    for row in tests:
        if row.claim not in keys:
            raise InputError(
                f"{key}: the test {row.quantity!r} names no claim of the section ({row.claim!r})"
            )
        if row.verdict == FAILS and not row.reason:
            raise InputError(f"{key}: the test {row.quantity!r} does not hold and gives no reason")
    claims = []
    for spec in specs:
        mine = [row for row in tests if row.claim == spec.key]
        if not mine:
            raise InputError(f"{key}: the claim {spec.key!r} has no test")
        claims.append(_claim(spec, mine))
    line = summary(name or title, size, specs, tests, groups or {})
    lead = headline(name or title, size, specs, tests, groups or {})
    return Section(key, title, text, tuple(figures), tuple(done), tuple(claims), line, lead)


_VERBS = {
    "claim": {
        HOLDS: ("holds", "hold"),
        FAILS: ("does not hold", "do not hold"),
        NOT_SHOWN: ("is not shown", "are not shown"),
    },
    "number": {
        HOLDS: ("is reproduced", "are reproduced"),
        FAILS: ("is not reproduced", "are not reproduced"),
        NOT_SHOWN: ("is not decided", "are not decided"),
    },
}


def _listed(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def _group_sentence(specs: Sequence[Spec], tests: Sequence[Row], group: str) -> str:
    """The verdicts of ``specs`` on the ``tests`` of one group, in a clause."""
    parts = []
    for kind in ("number", "claim"):
        claims = []
        for spec in specs:
            mine = [r for r in tests if r.claim == spec.key]
            if mine and spec.kind == kind:
                claims.append((spec, mine, claim_verdict(mine)))
        for verdict in (HOLDS, FAILS, NOT_SHOWN):
            labels = [spec.label for spec, _, v in claims if v == verdict]
            if labels:
                verb = _VERBS[kind][verdict][0 if len(labels) == 1 else 1]
                parts.append(f"{_listed(labels)} {verb}")
        for spec, mine, verdict in claims:
            if verdict != HOLDS_IN_PART:
                continue
            held, failed, unshown = ([r for r in mine if r.verdict == v] for v in (HOLDS, FAILS, NOT_SHOWN))
            text = f"{spec.label} {_VERBS[kind][HOLDS][0]} at {_at(held, mine, group)}"
            if failed:
                text += f" but not at {_at(failed, mine, group)}"
            if unshown:
                verb = _VERBS[kind][NOT_SHOWN][0]
                text += f"{',' if failed else ''} and {verb} at {_at(unshown, mine, group)}"
            parts.append(text)
    return "; ".join(parts)


def _budget(row: Row) -> str | None:
    found = [part[4:] for part in row.condition.split("; ") if part.startswith("M = ")]
    return found[0] if len(found) == 1 else None


def _at(rows: Sequence[Row], every: Sequence[Row], group: str) -> str:
    """Where ``rows`` (some of a claim's tests ``every``) lie, for a summary: their budgets alone
    where no budget of theirs is among the other tests', else their conditions in full."""
    mine, chosen = [_budget(row) for row in rows], {id(row) for row in rows}
    others = {_budget(row) for row in every if id(row) not in chosen}
    if None not in mine and None not in others and not others & set(mine):
        return "M = " + ", ".join(dict.fromkeys(b for b in mine if b is not None))
    return conditions(rows, group)


def _by_group(
    name: str,
    size: str,
    tests: Sequence[Row],
    groups: dict[str, str],
    clause: Callable[[Sequence[Row], str], str],
) -> str:
    """``"NAME (SIZE): ..."``: ``clause(tests, "")`` without groups, else a sentence ``"with
    LABEL, clause(its tests, group)"`` for every group (the first part of the tests' conditions,
    as ``groups`` names it) that has tests."""
    where = f"{name} ({size})" if size else name
    if not groups:
        return f"{where}: {clause(tests, '')}."
    clauses = []
    for group, label in groups.items():
        mine = [r for r in tests if r.condition.split("; ")[0] == group]
        if mine:
            clauses.append(f"with {label}, {clause(mine, group)}")
    first, *rest = clauses or [""]
    return f"{where}: {first}." + "".join(f" {c[0].upper()}{c[1:]}." for c in rest)


def summary(name: str, size: str, specs: Sequence[Spec], tests: Sequence[Row], groups: dict[str, str]) -> str:
    """The verdicts of a section in a sentence or two: for every group (the first part of the
    tests' conditions, as ``groups`` names it; all tests at once without groups), which claims
    hold, which hold in part and where, which do not and which are not shown.

    Examples
    --------
    >>> rows = [Row("a", "c", 1.0, verdict="holds", claim="k", condition=f"theory; M = {m}") for m in (1, 2)]
    >>> summary("The trap", "T = 10", [Spec("k", "A below B", "A below B")], rows, {"theory": "valid rates"})
    'The trap (T = 10): with valid rates, A below B holds.'
    """
    return _by_group(name, size, tests, groups, lambda rows, group: _group_sentence(specs, rows, group))


def _numbers(held: int, total: int) -> str:
    if held == total:
        return "every published number is reproduced" if total > 1 else "the published number is reproduced"
    if held == 0:
        return "no published number is reproduced" if total > 1 else "the published number is not reproduced"
    return f"{held} of {total} published numbers are reproduced"


def _claims(verdicts: dict[str, str]) -> str:
    """``verdicts`` (label -> verdict) counted, those that do not hold everywhere named."""
    total, held = len(verdicts), list(verdicts.values()).count(HOLDS)
    if held == total:
        return "every claim holds" if total > 1 else "the claim holds"
    others = [
        f"{_listed(labels)} {words}"
        for verdict, words in ((HOLDS_IN_PART, "in part"), (FAILS, "not at all"), (NOT_SHOWN, "not shown"))
        if (labels := [label for label, v in verdicts.items() if v == verdict])
    ]
    return f"{held} of {total} claims hold everywhere tested ({'; '.join(others)})"


def _headline_clause(specs: Sequence[Spec], tests: Sequence[Row], by_budget: bool) -> str:
    """One group's verdicts in a clause: published numbers reproduced, and the paper's claims:
    all, or (``by_budget``) the budgets at which every test holds where some budgets hold and
    others do not, or how many hold and which do not."""
    parts = []
    mine = {spec.key: [r for r in tests if r.claim == spec.key] for spec in specs}
    paper = [s for s in specs if s.source == "paper" and mine[s.key]]
    numbers = [s for s in paper if s.kind == "number"]
    if numbers:
        parts.append(_numbers(sum(claim_verdict(mine[s.key]) == HOLDS for s in numbers), len(numbers)))
    claims = [s for s in paper if s.kind == "claim"]
    if claims:
        verdicts = {s.label: claim_verdict(mine[s.key]) for s in claims}
        budgeted = [r for s in claims for r in mine[s.key] if (_budget(r) or "").isdigit()]
        budgets = sorted({int(str(_budget(r))) for r in budgeted})
        good = [b for b in budgets if all(r.verdict == HOLDS for r in budgeted if _budget(r) == str(b))]
        bad = [b for b in budgets if b not in good]
        if by_budget and list(verdicts.values()).count(HOLDS) < len(claims) and good and bad:
            at, missed = ", ".join(map(str, good)), ", ".join(map(str, bad))
            parts.append(
                f"the claims hold at M = {at}, not all at M = {missed}"
                if len(claims) > 1
                else f"the claim holds at M = {at}, not at M = {missed}"
            )
        else:
            parts.append(_claims(verdicts))
    for spec in specs:
        if spec.source != "paper" and mine[spec.key]:
            verdict = claim_verdict(mine[spec.key])
            verb = _VERBS[spec.kind][verdict][0] if verdict in _VERBS[spec.kind] else "holds in part"
            parts.append(f"{spec.label} {verb}")
    return "; ".join(parts)


def headline(
    name: str, size: str, specs: Sequence[Spec], tests: Sequence[Row], groups: dict[str, str]
) -> str:
    """The verdicts of a section in one sentence to quote: for every group (as in
    :func:`summary`), how many published numbers are reproduced and whether the paper's claims
    hold, at every budget or at which.

    Examples
    --------
    >>> rows = [Row("a", "c", 1.0, verdict=v, claim="k", condition=f"authors; M = {m}")
    ...         for m, v in ((1, "not shown"), (2, "holds"))]
    >>> specs = [Spec("k", "A below B", "A below B")]
    >>> headline("The trap", "T = 10", specs, rows, {"authors": "its constants"})
    'The trap (T = 10): with its constants, the claim holds at M = 2, not at M = 1.'
    """
    return _by_group(
        name, size, tests, groups, lambda rows, group: _headline_clause(specs, rows, bool(group))
    )
