"""The pages a reader opens, in a real headless browser (tests/browser.py): the `mlcb report` page
here, the paper's page in tests/test_paper.py. Each fails on a console error, an image that does
not load or a table wider than the page, and saves a screenshot (MLCB_SCREENSHOTS=DIR keeps them).
Without a browser they skip with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import browser


def test_the_checks_catch_what_a_reader_would_notice(tmp_path):
    """A page with an error in its console, an image that does not load and a table wider than the
    window: each is reported (the checks can fail)."""
    browser.require()
    wide = "<td>" + "x" * 400 + "</td>"
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>'
        "<script>console.error('planted error')</script>"
        '<img alt="planted image" src="data:image/png;base64,bm90IGEgcG5n">'
        f"<h3>planted table</h3><table><tr>{wide}</tr></table></body></html>"
    )
    seen = browser.inspect(page, tmp_path / "broken.png")
    problems = seen.problems()
    assert any("planted error" in line for line in problems), problems
    assert "image not loaded: planted image" in problems
    assert any(line.startswith("table wider than the page") and "planted table" in line for line in problems)
    assert (tmp_path / "broken.png").read_bytes().startswith(b"\x89PNG")


def test_the_report_page_reads_cleanly(tmp_path):
    import mlcb
    from mlcb.report import report

    browser.require()
    result = mlcb.compare(
        "trap", [("mlcb", (1, 2)), ("limited-advice", (1,))], horizon=1_000, replications=2, checkpoints=20
    )
    saved = result.save(tmp_path / "comparison")
    page = report(saved)
    seen = browser.inspect(page, browser.screenshots(tmp_path) / "report.png")
    assert seen.problems() == []
    assert seen.images >= 3 and seen.tables >= 2 and seen.title.startswith("mlcb report")


def test_without_a_browser_the_tests_skip_in_one_line(monkeypatch):
    monkeypatch.setenv("MLCB_BROWSER", "no-such-browser-mlcb")
    with pytest.raises(
        pytest.skip.Exception, match=r"^no headless browser installed \(apt-get install chromium"
    ):
        browser.require()
    assert browser.executable() is None and Path(browser.__file__).is_file()
