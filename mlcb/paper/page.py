"""The reproduced paper as one self-contained HTML page: a summary of the verdicts at the top, then
every section's claims with their verdicts, prose, figures and tables.

Figures are embedded as base64 PNGs, so ``index.html`` is the only file a reader needs. Each table
sets the paper's number (or claim) beside the package's mean and standard error.
"""

from __future__ import annotations

import base64
import html
import math
import re
import time
from collections import Counter
from pathlib import Path

from mlcb.paper.section import (
    CLAIM_VERDICTS,
    FAILS,
    HOLDS,
    HOLDS_IN_PART,
    NOT_SHOWN,
    VERDICTS,
    Claim,
    Row,
    Section,
    Table,
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; max-width: 100%; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top;
         overflow-wrap: anywhere; }
th { background: #f0f0f0; }
td.number { text-align: right; white-space: nowrap; }
td.verdict { white-space: nowrap; font-weight: 600; }
.holds { color: #1a7f37; }
.fails { color: #c0392b; }
.unshown { color: #8a6d00; }
.context { color: #777; font-weight: normal; }
.partly { color: #1f5fa8; }
td.reason { font-size: 0.95em; }
p.summary, ul.summary { font-size: 1.05em; }
figure { margin: 1em 0 2em; }
figcaption { font-size: 0.9em; color: #555; }
img { max-width: 100%; height: auto; }
p.meta { color: #555; font-size: 0.9em; }
"""


def number(row: Row) -> str:
    """The package's estimate as the page prints it: ``mean ± standard error``, the error to two
    significant digits and the mean to the same decimal place (without an error, three digits).

    Examples
    --------
    >>> number(Row("regret", "lower", 1234.56, 12.3))
    '1,235 ± 12'
    >>> number(Row("share", "grows", 0.4567, 0.0123))
    '0.457 ± 0.012'
    >>> number(Row("slope", "< 1", 0.73))
    '0.730'
    """

    if not math.isfinite(row.package):
        text = "n/a"
    elif math.isfinite(row.stderr) and row.stderr > 0:
        # two significant digits of the error, the mean to the same decimal place
        decimals = min(6, max(0, 1 - math.floor(math.log10(row.stderr))))
        text = f"{row.package:,.{decimals}f} ± {row.stderr:,.{decimals}f}"
    else:
        size = abs(row.package)
        text = (
            f"{row.package:,.0f}"
            if size >= 100
            else f"{row.package:,.1f}"
            if size >= 10
            else f"{row.package:.3f}"
        )
    return f"{text} {row.unit}".rstrip()


#: The CSS class of each verdict's cell.
_VERDICT_CLASS = {HOLDS: "holds", FAILS: "fails", NOT_SHOWN: "unshown", HOLDS_IN_PART: "partly"}


def _verdict_cell(row: Row) -> str:
    if not row.verdict:
        return '<td class="verdict context">no claim</td>'
    return f'<td class="verdict {_VERDICT_CLASS[row.verdict]}">{html.escape(row.verdict)}</td>'


def _table(table: Table) -> str:
    head = (
        "<tr><th>quantity</th><th>paper</th><th>package (mean ± s.e.)</th><th>verdict</th>"
        "<th>reason (where it does not hold)</th><th>note</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{html.escape(r.quantity)}</td><td>{html.escape(r.paper)}</td>"
        f'<td class="number">{html.escape(number(r))}</td>{_verdict_cell(r)}'
        f'<td class="reason">{html.escape(r.reason)}</td><td>{html.escape(r.note)}</td></tr>'
        for r in table.rows
    )
    note = f"<p>{_text(table.note)}</p>" if table.note else ""
    return (
        f"<h3>{html.escape(table.title)}</h3>{note}<table><thead>{head}</thead><tbody>{rows}</tbody></table>"
    )


_URL = re.compile(r"https://[A-Za-z0-9./_-]*[A-Za-z0-9/_-]")


def _text(text: str) -> str:
    """``text`` escaped for HTML, its https addresses as links."""
    out, last = [], 0
    for match in _URL.finditer(text):
        url = match.group(0)
        out.append(html.escape(text[last : match.start()]))
        out.append(f'<a href="{html.escape(url)}">{html.escape(url)}</a>')
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def counts(sections: list[Section]) -> Counter:
    """How many tests (rows) of ``sections`` carry each verdict (``""``: rows that test no claim).

    Examples
    --------
    >>> rows = (Row("a", "x", 1.0, verdict="holds"), Row("b", "not published", 2.0))
    >>> dict(counts([Section("k", "K", "", (), (Table("t", rows),))]))
    {'holds': 1, '': 1}
    """
    return Counter(row.verdict for section in sections for table in section.tables for row in table.rows)


def claim_counts(sections: list[Section]) -> Counter:
    """How many claims of ``sections`` carry each verdict (one verdict per claim)."""
    return Counter(claim.verdict for section in sections for claim in section.claims)


def summary(sections: list[Section]) -> str:
    """The verdicts of ``sections`` counted, in one line: one verdict per claim, then the tests
    behind them and the numbers shown for context.

    Examples
    --------
    >>> from mlcb.paper.section import Claim
    >>> rows = (Row("a", "x", 1.0, verdict="holds", claim="c"), Row("b", "not published", 2.0))
    >>> claims = (Claim("c", "x", "x", "holds"),)
    >>> for part in summary([Section("k", "K", "", (), (Table("t", rows),), claims)]).split("; "):
    ...     print(part)
    claims: 1 (holds 1, holds in part 0, does not hold 0, not shown 0)
    tests: 1 (holds 1, does not hold 0, not shown 0)
    numbers for context: 1
    """
    found, tests = claim_counts(sections), counts(sections)
    claims = sum(found[v] for v in CLAIM_VERDICTS)
    verdicts = ", ".join(f"{v} {found[v]:,}" for v in CLAIM_VERDICTS)
    tested = sum(tests[v] for v in VERDICTS)
    outcomes = ", ".join(f"{v} {tests[v]:,}" for v in VERDICTS)
    return (
        f"claims: {claims:,} ({verdicts}); tests: {tested:,} ({outcomes}); numbers for context: {tests['']:,}"
    )


def chance(sections: list[Section]) -> str:
    """What many tests do at two standard errors, and the rule the page applies, in words."""
    from mlcb.paper.verdicts import ALPHA, CHANCE_AT_TWO

    tested = sum(counts(sections)[v] for v in VERDICTS)
    odds, family = f"{100 * CHANCE_AT_TWO:.1f} %", f"{100 * ALPHA:.0f} %"
    return (
        f"At two standard errors alone, each test whose quantity lies on its boundary comes out on "
        f"one side by chance with probability {odds}: the page's {tested:,} tests could give about "
        f"{tested * CHANCE_AT_TWO:.1f} chance verdicts. So each section decides its tests together by "
        f"Holm's rule at a family-wise error rate of {family}: the chance that any verdict of a "
        f"section is due to chance alone is at most {family}; a test past two standard errors but "
        "short of its Holm margin is not shown, and its reason gives the margin it needed."
    )


def _claims(claims: tuple[Claim, ...]) -> str:
    if not claims:
        return ""
    head = (
        "<tr><th>claim</th><th>verdict</th><th>holds at</th><th>does not hold at</th><th>not shown at</th>"
        "<th>reason</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{html.escape(c.text)}{' (the authors&#x27; slides)' if c.source == 'slides' else ''}"
        f"{' (published number)' if c.kind == 'number' else ''}</td>"
        f'<td class="verdict {_VERDICT_CLASS[c.verdict]}">{html.escape(c.verdict)}</td>'
        f"<td>{html.escape(c.holds)}</td><td>{html.escape(c.fails)}</td><td>{html.escape(c.unshown)}</td>"
        f'<td class="reason">{html.escape(c.reason)}</td></tr>'
        for c in claims
    )
    return f"<h3>The claims and their verdicts</h3><table><thead>{head}</thead><tbody>{rows}</tbody></table>"


def _figure(path: Path) -> str:
    """A figure of the page: the PNG embedded, captioned and described by its title (the ``Title``
    entry :func:`~mlcb.paper.section.save_figure` writes; the file's name without one)."""
    from mlcb.report import png_text

    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    title = png_text(path).get("Title", "").strip()
    caption = f"<figcaption>{html.escape(title)}</figcaption>" if title else ""
    alt = html.escape(title or path.name)
    return f'<figure><img alt="{alt}" src="data:image/png;base64,{encoded}">{caption}</figure>'


def render(sections: dict[str, tuple[Section, float, str | None]], size: str, seed: int) -> str:
    """The page of ``sections`` (key -> (section, seconds it took, the code that computed it or
    ``None`` where unrecorded)), as a string. A section computed by other code than this (a kept
    section of an earlier version) says so beside its numbers, and the page's head counts them."""
    from mlcb.paper.measure import RULES
    from mlcb.paper.section import UNRECORDED, code

    toc = "".join(
        f'<li><a href="#{html.escape(key)}">{html.escape(section.title)}</a>: '
        f"{html.escape(summary([section]))}</li>"
        for key, (section, _, _) in sections.items()
    )
    body = []
    ours = code()
    for key, (section, seconds, computed_by) in sections.items():
        took = f" ({seconds:,.0f} s)" if math.isfinite(seconds) else ""
        by = f", computed by {html.escape(computed_by or UNRECORDED)}"
        if computed_by != ours:
            by += " <strong>(not this page's code)</strong>"
        body.append(
            f'<section id="{html.escape(key)}"><h2>{html.escape(section.title)}</h2>'
            f'<p class="meta">section {html.escape(key)}{took}{by}</p>'
            + (
                f'<p class="summary"><strong>In short:</strong> {_text(section.headline)}</p>'
                if section.headline
                else ""
            )
            + (f'<p class="claims">Claim by claim: {_text(section.summary)}</p>' if section.summary else "")
            + _claims(section.claims)
            + f"<p>{_text(section.text)}</p>"
            + "".join(_figure(f) for f in section.figures)
            + "".join(_table(t) for t in section.tables)
            + "</section>"
        )
    everything = [section for section, _, _ in sections.values()]
    rules = "".join(f"<li>{html.escape(rule)}</li>" for rule in RULES)
    overall = summary(everything)
    quotable = "".join(f"<li>{_text(s.headline)}</li>" for s in everything if s.headline)
    others = sum(computed_by != ours for _, _, computed_by in sections.values())
    meta = (
        f"{html.escape(ours)}, size {html.escape(size)}, seed {seed}, "
        f"written {time.strftime('%Y-%m-%d %H:%M')}"
        + (f"; {others} section(s) kept from a run of other code, each marked" if others else "")
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>M-LCB's paper, reproduced</title><style>{_STYLE}</style></head><body>"
        "<h1>UCB-type Algorithm for Budget-Constrained Expert Learning, reproduced</h1>"
        f'<p class="meta">{meta}</p><p>Latypov, Suvorikova, Kroshnin, Gasnikov, Dorn, arXiv 2510.22654. '
        "Each claim of the paper gets one verdict, with the conditions (calibration, budget, size) "
        "under which it holds and a measured reason where it does not; the tables behind it set the "
        "paper's published number, or its claim where it publishes none, beside the package's mean "
        "and standard error over replications.</p>"
        f'<ul class="summary">{quotable}</ul>'
        f'<p class="summary"><strong>Verdicts:</strong> {html.escape(overall)}</p>'
        f"<p>{html.escape(chance(everything))}</p>"
        f"<details><summary>How a verdict is decided</summary><ul>{rules}</ul></details>"
        f"<ul>{toc}</ul>{''.join(body)}</body></html>"
    )


#: The markers between which docs/paper.md holds :func:`markdown`'s text of the paper-size page.
MARKDOWN_BEGIN, MARKDOWN_END = "<!-- verdicts: begin -->", "<!-- verdicts: end -->"


def markdown(sections: list[Section], size: str, seed: int) -> str:
    """The verdicts of ``sections`` as Markdown: the headlines, then one row per claim with its
    verdict and conditions (docs/paper.md quotes it for the paper's size; tests hold the two
    together).

    Examples
    --------
    >>> from mlcb.paper.section import Claim
    >>> claims = (Claim("c", "A below B", "A below B", "holds", holds="M = 1"),)
    >>> print(markdown([Section("k", "K", "", (), (), claims, "", "K: the claim holds.")], "quick", 0))
    <!-- verdicts: begin -->
    Size quick, seed 0.
    <BLANKLINE>
    * K: the claim holds.
    <BLANKLINE>
    | section | claim | verdict | holds at | does not hold at | not shown at |
    |---|---|---|---|---|---|
    | k | A below B | holds | M = 1 |  |  |
    <!-- verdicts: end -->
    """

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [MARKDOWN_BEGIN, f"Size {size}, seed {seed}.", ""]
    lines += [f"* {section.headline}" for section in sections if section.headline]
    lines += [
        "",
        "| section | claim | verdict | holds at | does not hold at | not shown at |",
        "|---|---|---|---|---|---|",
    ]
    for section in sections:
        for c in section.claims:
            text = c.text + (" (the authors' slides)" if c.source == "slides" else "")  # as on the page
            fields = (section.key, text, c.verdict, c.holds, c.fails, c.unshown)
            lines.append("| " + " | ".join(cell(f) for f in fields) + " |")
    return "\n".join([*lines, MARKDOWN_END])


def write(root: Path, sections: dict[str, tuple[Section, float, str | None]], size: str, seed: int) -> Path:
    """Write ``root/index.html`` and ``root/verdicts.md`` (:func:`markdown`), atomically; return
    the page's path."""
    from mlcb.storage.store import write_file

    path = root / "index.html"
    text = render(sections, size, seed).encode()
    write_file(path, lambda handle: handle.write(text))
    verdicts = (markdown([section for section, _, _ in sections.values()], size, seed) + "\n").encode()
    write_file(root / "verdicts.md", lambda handle: handle.write(verdicts))
    return path
