"""Every reference to the project's documentation points at something that exists.

Docstrings cite the mathematics as ``docs/NAME.md §N``; README and the pages link each other with
Markdown links. A reference to a missing page or section, or to a document that is not part of the
repository, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    path
    for folder in ("mlcb", "envs", "agents", "tests", "benchmarks")
    for path in (ROOT / folder).rglob("*.py")
    if path != Path(__file__).resolve()  # this file's own examples are not references
) + [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: ``docs/theory.md``, ``docs/rates.md §1b``, ``docs/theory.md §4, §5``.
DOC_REFERENCE = re.compile(r"docs/([A-Za-z0-9_-]+\.md)((?:,? §[0-9]+[a-z]?)*)")
SECTION = re.compile(r"§([0-9]+[a-z]?)")
#: Markdown links to local files: ``[text](path)`` or ``[text](path#anchor)``.
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")
#: Documents that exist only outside the repository (team notes): never cited by name.
FOREIGN = re.compile(r"\b(?:SPEC|RATES|BASELINES|PAPER-NOTES|MOE\.md|DESIGN\.md|STYLE\.md)\b")


def _sections(page: Path) -> set[str]:
    """Section numbers of a page: headings ``## 3. ...`` or ``### 1a. ...``."""
    found = re.findall(r"^#{2,4} ([0-9]+[a-z]?)\.", page.read_text(encoding="utf-8"), flags=re.M)
    return set(found)


def _references() -> list[tuple[str, int, str, str]]:
    out = []
    for path in SOURCES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in DOC_REFERENCE.finditer(line):
                where = f"{path.relative_to(ROOT)}:{number}"
                out.append((where, number, match.group(1), match.group(2)))
    return out


REFERENCES = _references()


def test_the_docstrings_cite_the_docs():
    # The scan is not vacuous: the package points into its mathematics from many places.
    cited = {page for _, _, page, _ in REFERENCES}
    assert {"theory.md", "rates.md", "baselines.md"} <= cited
    assert len(REFERENCES) > 50


@pytest.mark.parametrize("where, line, page, sections", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_every_reference_names_an_existing_page_and_section(where, line, page, sections):
    target = ROOT / "docs" / page
    assert target.is_file(), f"{where} cites docs/{page}, which does not exist"
    missing = set(SECTION.findall(sections)) - _sections(target)
    assert not missing, f"{where} cites docs/{page} §{', §'.join(sorted(missing))}, which has no such section"


@pytest.mark.parametrize("path", [p for p in SOURCES if p.suffix == ".md"], ids=lambda p: p.name)
def test_markdown_links_resolve(path):
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        assert (path.parent / target).exists(), (
            f"{path.relative_to(ROOT)} links to {target}, which does not exist"
        )


def test_no_reference_to_documents_outside_the_repository():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in SOURCES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if FOREIGN.search(line)
    ]
    assert not offenders, "references to documents that are not in the repository:\n" + "\n".join(offenders)


def test_the_checks_can_fail(tmp_path):
    # A made-up reference is caught by the same patterns the tests above use.
    match = DOC_REFERENCE.search("see docs/rates.md §9z and docs/nowhere.md")
    assert match and SECTION.findall(match.group(2)) == ["9z"]
    assert "9z" not in _sections(ROOT / "docs" / "rates.md")
    assert not (ROOT / "docs" / "nowhere.md").exists()
    assert FOREIGN.search("as RATES.md says") and FOREIGN.search("SPEC section 2")
    assert not FOREIGN.search("specification, rates and baselines")


def test_the_presets_page_lists_every_preset_as_it_is():
    """docs/presets.md has a row for every preset, with its environment, budgets, horizon,
    replications and calibrations, and no row for a preset that does not exist."""
    from mlcb import presets

    text = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")
    rows = {
        cells[0].strip("` "): [c.strip() for c in cells[1:]]
        for line in text.splitlines()
        if line.startswith("| `") and len(cells := line.strip("|").split("|")) == 6
    }
    assert sorted(rows) == presets.names()
    for name, (env, budgets, horizon, replications, calibrations) in rows.items():
        preset = presets.get(name)
        assert env == f"`{preset.env}`", name
        assert budgets == ", ".join(map(str, preset.budgets)), name
        assert horizon == f"{preset.horizon:,}" and replications == str(preset.replications), name
        assert calibrations == ", ".join(f"`{c}`" for c in preset.calibrations), name
