"""mlcb.paper: the reproduced paper's page, its sections' tables, resuming, and bad input."""

from __future__ import annotations

import base64
import contextlib
import html
import importlib
import importlib.util
import json
import math
import os
import re
import socket

import pytest

from mlcb import paper
from mlcb.paper import Row, Section, Table
from mlcb.validation import InputError

#: Every section at a size that runs in seconds (the claims are not expected to hold here).
TINY = {
    "mlcb.paper.trap": {"horizon": 2_000, "replications": 3},
    "mlcb.paper.glm": {"horizon": 300, "replications": 3},
    "mlcb.paper.real_data": {
        "ctg_replications": 2,
        "ctg_horizon": 60,
        "warfarin_replications": 2,
        "warfarin_horizon": 80,
        "scaling_replications": 2,
    },
    "mlcb.paper.lower_bound": {
        "horizons": (200, 1_000),
        "replications": 3,
        "alphas": (0.5,),
        "budgets": (1, 2),
        "n_experts": 4,
    },
}


def _runnable(key: str) -> bool:
    """Whether the optional packages the section ``key`` needs are installed (``make test`` installs
    them all; without them the section is skipped, test_a_section_without_its_packages_is_skipped)."""
    module = importlib.import_module(paper.EXPERIMENTS[key])
    return all(importlib.util.find_spec(name) is not None for name in getattr(module, "REQUIRES", ()))


#: The sections this installation can run.
RUNNABLE = [key for key in paper.EXPERIMENTS if _runnable(key)]


@pytest.fixture
def tiny(monkeypatch):
    for module_name, size in TINY.items():
        module = importlib.import_module(module_name)
        monkeypatch.setitem(module.SIZES, "quick", size)
    return TINY


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The quick page at the tiny size, written once for the tests that read it."""
    saved = {}
    for module_name, size in TINY.items():
        module = importlib.import_module(module_name)
        saved[module_name] = module.SIZES["quick"]
        module.SIZES["quick"] = size
    try:
        out = tmp_path_factory.mktemp("paper")
        return paper.reproduce("quick", out), out
    finally:
        for module_name, size in saved.items():
            importlib.import_module(module_name).SIZES["quick"] = size


def test_every_section_of_the_paper_is_on_the_page(page):
    index, out = page
    text = index.read_text()
    for key in RUNNABLE:
        assert f'<section id="{key}">' in text
        assert (out / "sections" / f"{key}.json").is_file()
    assert text.count("<img ") >= len(paper.EXPERIMENTS)
    assert text.count("data:image/png;base64,") == text.count("<img ")


def test_every_table_row_has_the_papers_and_the_packages_number(page):
    """Each row sets the paper's number (or claim) beside the package's estimate; the saved JSON
    and the rendered page agree."""
    index, out = page
    text = html.unescape(index.read_text())
    rows = 0
    for key in RUNNABLE:
        data = json.loads((out / "sections" / f"{key}.json").read_text())
        for table in data["tables"]:
            assert table["rows"], table["title"]
            for row in table["rows"]:
                rows += 1
                assert row["paper"].strip(), row
                assert row["package"] is not None and math.isfinite(row["package"]), row
                assert f"<td>{row['quantity']}</td><td>{row['paper']}</td>" in text
    cells = re.findall(r'<td class="number">([^<]*)</td>', text)
    assert len(cells) == rows and all(cell.strip() and cell != "n/a" for cell in cells)


def _section_html(index, key: str) -> str:
    return html.unescape(index.read_text()).split(f'<section id="{key}">')[1].split("</section>")[0]


@pytest.mark.parametrize("key", RUNNABLE)
def test_every_row_tests_a_claim_of_its_section_or_is_context(page, key):
    """A row with a verdict tests one of its section's claims, under a stated condition; a row
    without one is shown for context (the paper publishes nothing about it, or it is a published
    number judged on another row). The page prints each row's verdict in its own cell, after the
    claims' table."""
    index, out = page
    data = json.loads((out / "sections" / f"{key}.json").read_text())
    rows = [row for table in data["tables"] for row in table["rows"]]
    claims = {claim["key"] for claim in data["claims"]}
    assert rows and claims
    for row in rows:
        if row["verdict"]:
            assert row["verdict"] in paper.VERDICTS and row["claim"] in claims and row["condition"], row
        else:
            assert row["claim"] == "" and (row["paper"] == paper.NOT_PUBLISHED or "judged" in row["paper"]), (
                row
            )
    section = _section_html(index, key)
    tables = section.split("The claims and their verdicts")[1].split("</table>", 1)[1]
    cells = re.findall(r'<td class="verdict[^"]*">([^<]*)</td>', tables)
    assert cells == [row["verdict"] or "no claim" for row in rows]


@pytest.mark.parametrize("key", RUNNABLE)
def test_every_row_that_does_not_hold_or_is_not_shown_says_why(page, key):
    """The reason is in the row's JSON and on the page, beside its verdict."""
    index, out = page
    data = json.loads((out / "sections" / f"{key}.json").read_text())
    section = _section_html(index, key)
    for table in data["tables"]:
        for row in table["rows"]:
            if row["verdict"] in ("does not hold", "not shown"):
                assert row["reason"].strip(), row
                assert f'<td class="reason">{row["reason"]}</td>' in section
            elif row["verdict"] == "holds":
                assert row["reason"] == "", row
    for claim in data["claims"]:
        if claim["verdict"] != "holds":
            assert claim["reason"].strip(), claim


@pytest.mark.parametrize("key", RUNNABLE)
def test_each_claim_has_one_verdict_that_follows_its_tests(page, key):
    """One verdict per claim, with the conditions of its tests: holds when every test holds, holds
    in part when some do, does not hold when none does and some do not, not shown otherwise."""
    from mlcb.paper.verdicts import claim_verdict, conditions

    _, out = page
    section = Section.from_json(json.loads((out / "sections" / f"{key}.json").read_text()), out)
    tests = [row for table in section.tables for row in table.rows if row.verdict]
    for claim in section.claims:
        mine = [row for row in tests if row.claim == claim.key]
        assert mine and claim.verdict == claim_verdict(mine)
        for verdict, listed in (
            ("holds", claim.holds),
            ("does not hold", claim.fails),
            ("not shown", claim.unshown),
        ):
            chosen = [row for row in mine if row.verdict == verdict]
            assert listed == (conditions(chosen) if chosen else "")
    assert section.summary.endswith(".") and all(claim.label in section.summary for claim in section.claims)


def test_the_page_counts_the_verdicts_one_per_claim_and_says_what_many_tests_do(page):
    from mlcb.paper.page import summary
    from mlcb.paper.verdicts import CHANCE_AT_TWO

    index, out = page
    text = html.unescape(index.read_text())
    sections = [
        Section.from_json(json.loads((out / "sections" / f"{key}.json").read_text()), out) for key in RUNNABLE
    ]
    claims = [claim for s in sections for claim in s.claims]
    rows = [row for s in sections for t in s.tables for row in t.rows]
    line = summary(sections)
    assert f"<strong>Verdicts:</strong> {line}</p>" in text
    assert line.startswith(f"claims: {len(claims):,} (holds {sum(c.verdict == 'holds' for c in claims):,}, ")
    tests = sum(row.verdict in paper.VERDICTS for row in rows)
    assert f"; tests: {tests:,} (holds {sum(r.verdict == 'holds' for r in rows):,}, " in line
    assert f"the page's {tests:,} tests could give about {tests * CHANCE_AT_TWO:.1f} chance verdicts" in text
    assert "probability 2.3 %" in text and "Holm's rule at a family-wise error rate of 5 %" in text
    for section in sections:  # per section, in the list of contents, and its sentence at the top
        assert f"{section.title}</a>: {summary([section])}</li>" in text
        assert f"<li>{section.headline}</li>" in text.split("<strong>Verdicts:</strong>")[0]
        assert f"<strong>In short:</strong> {section.headline}</p>" in text
        assert f"Claim by claim: {section.summary}</p>" in text
    assert "How a verdict is decided" in text


def test_the_trap_states_the_wrappers_and_shows_limited_advice_both_ways(page):
    """LimitedAdvice's wrapper decides the verdict at M = 1: the trap's tables say which wrapper
    each policy deploys with and check the claim against LimitedAdvice under both of its."""
    from mlcb.paper import trap

    _, out = page
    data = json.loads((out / "sections" / "trap.json").read_text())
    for calibration in trap.CALIBRATIONS:
        table = next(
            t for t in data["tables"] if t["title"] == f"Regret at the horizon ({calibration} calibration)"
        )
        quantities = [row["quantity"] for row in table["rows"]]
        for budget in trap.BUDGETS:
            for wrapper in ("last iterate", "play counts"):
                assert (
                    f"pseudo-regret at T: M-LCB minus LimitedAdvice ({wrapper}), M = {budget}" in quantities
                )
        assert "LimitedAdvice deploys its current decision (last iterate) ('last')" in table["note"]
        assert (
            "M-LCB deploys play counts" in table["note"]
            and "Smooth CORRAL deploys play counts" in table["note"]
        )


def test_every_figure_is_captioned_by_its_title(page, tmp_path):
    """The page's figures had only their file's name as text ('trap-authors.png'): each is now
    captioned and described by the title it draws, escaped, whatever its characters."""
    import matplotlib.pyplot as plt

    from mlcb.paper.page import _figure
    from mlcb.paper.section import save_figure

    index, _ = page
    figures = re.findall(
        r'<figure><img alt="([^"]*)" src="data:image/png;base64,[^"]+"><figcaption>([^<]*)</figcaption></figure>',
        index.read_text(),
    )
    assert len(figures) == index.read_text().count("<figure>") > 0
    assert all(
        alt == caption and caption.strip() and not caption.endswith(".png") for alt, caption in figures
    )
    figure, axes = plt.subplots()
    axes.set_title('<script>alert("Δ ≤ √T")</script>\n(band)')
    text = _figure(save_figure(figure, tmp_path / "f.png"))
    assert (
        "<script" not in text
        and "<figcaption>&lt;script&gt;alert(&quot;Δ ≤ √T&quot;)&lt;/script&gt; (band)</figcaption>" in text
    )


def test_the_page_cites_the_authors_code_as_a_link(page):
    index, _ = page
    text = index.read_text()
    link = '<a href="https://github.com/intsystems/Latypov-MS-Thesis">'
    for key in ("trap", "glm"):
        section = text.split(f'<section id="{key}">')[1].split("</section>")[0]
        assert link in section


def test_the_glm_section_shows_where_the_training_goes_link_by_link(page):
    _, out = page
    data = json.loads((out / "sections" / "glm.json").read_text())
    tables = [t for t in data["tables"] if t["title"].startswith("Where M-LCB's training goes")]
    assert len(tables) == 2
    for table in tables:
        rows = table["rows"]
        assert [row["quantity"].split(" ")[1] for row in rows] == [str(k) for k in range(10)]
        assert sum(row["package"] for row in rows) == pytest.approx(1.0)
        assert all("U_k(n)/n at n = 30" in row["note"] for row in rows)  # T = 300 over K = 10


def test_a_finished_section_is_kept_and_the_page_rewritten(page, monkeypatch):
    index, out = page

    def refuse(*args, **kwargs):
        raise AssertionError("a finished section was run again")

    for module_name in paper.EXPERIMENTS.values():
        monkeypatch.setattr(f"{module_name}.run", refuse)
    before = {p.name: p.read_bytes() for p in (out / "sections").iterdir()}
    index.unlink()
    assert paper.reproduce("quick", out) == index and index.is_file()
    assert {p.name: p.read_bytes() for p in (out / "sections").iterdir()} == before


def test_a_damaged_or_foreign_section_is_computed_again(tiny, tmp_path):
    out = tmp_path / "paper"
    paper.reproduce("quick", out, only="glm")
    saved = out / "sections" / "glm.json"
    first = json.loads(saved.read_text())
    saved.write_text("{ not json")
    paper.reproduce("quick", out, only="glm")
    assert json.loads(saved.read_text())["tables"] == first["tables"]  # same seed, same numbers
    paper.reproduce("quick", out, only="glm", seed=1, overwrite=True)  # another seed, told to replace
    assert json.loads(saved.read_text())["seed"] == 1
    assert 'id="trap"' not in (out / "index.html").read_text()  # never run: not on the page


def test_a_run_of_another_size_seed_or_data_does_not_replace_finished_sections_unless_told(tiny, tmp_path):
    """A quick run into the folder of a paper-size one replaced its sections without a word (minutes
    of work), as did one at another seed or without the Warfarin file the sections were computed
    on. It is refused before any work, naming what the folder holds; --overwrite replaces them."""
    out = tmp_path / "paper"
    paper.reproduce("quick", out, only="glm")
    saved = out / "sections" / "glm.json"
    kept = saved.read_bytes()
    record = json.loads(kept)
    for change, holds in [
        ({"seed": 1}, "glm: size 'quick', seed 0)"),
        ({"size": "paper"}, "glm: size 'quick', seed 0)"),
    ]:
        with pytest.raises(ValueError) as refused:
            paper.reproduce(change.get("size", "quick"), out, only="glm", seed=change.get("seed", 0))
        assert str(refused.value) == (
            f"out: {out} holds finished sections of another run ({holds}; name another out for this "
            "one, or pass --overwrite (overwrite=True) to replace them"
        )
        assert saved.read_bytes() == kept
    saved.write_text(
        json.dumps({**record, "options": {"data": "cardiotocography shipped; warfarin stand-in"}})
    )
    with pytest.raises(ValueError, match=r"\(glm: size 'quick', seed 0, the Warfarin stand-in\); name"):
        paper.reproduce("quick", out, only="glm")
    saved.write_text(json.dumps({**record, "format": record["format"] - 1}))  # an older format
    paper.reproduce("quick", out, only="glm")  # computed again: this version cannot show it
    assert json.loads(saved.read_text())["format"] == record["format"]


def test_a_section_kept_from_other_code_says_so_on_the_page_and_in_one_line(tiny, tmp_path, capsys):
    """The page's head named the code that wrote it, while a kept section's numbers may have come
    from another version. Each section records the code that computed it; one kept from other code
    (or from before sections recorded it) is kept, said in one line, and marked on the page."""
    out = tmp_path / "paper"
    paper.reproduce("quick", out, only="glm")
    saved = out / "sections" / "glm.json"
    record = json.loads(saved.read_text())
    assert record["code"] == paper.code()
    capsys.readouterr()
    paper.reproduce("quick", out, only="glm")
    assert capsys.readouterr().out == ""  # this code's section: kept without a word
    page = (out / "index.html").read_text()
    assert f"computed by {paper.code()}</p>" in page and "not this page's code" not in page
    for theirs, said in [
        ("mlcb 0.0.9, revision 0123abc", "mlcb 0.0.9, revision 0123abc"),
        (None, paper.UNRECORDED),
    ]:
        saved.write_text(json.dumps({**record, "code": theirs} if theirs else
                                    {k: v for k, v in record.items() if k != "code"}))  # fmt: skip
        paper.reproduce("quick", out, only="glm")
        assert capsys.readouterr().out == (
            f"glm: kept from an earlier run ({saved}), computed by {said}; this is {paper.code()}: "
            "--overwrite (overwrite=True) computes it again\n"
        )
        page = (out / "index.html").read_text()
        assert f"computed by {said} <strong>(not this page's code)</strong>" in page
        assert "1 section(s) kept from a run of other code, each marked" in page
    paper.reproduce("quick", out, only="glm", overwrite=True)
    assert json.loads(saved.read_text())["code"] == paper.code()


def test_a_second_run_into_a_folder_being_written_is_refused_naming_the_first(tmp_path, monkeypatch):
    """Two runs into one folder computed the same sections twice and wrote the page in turn; the
    second is now refused at once, naming the first, and leaves nothing behind."""
    from mlcb.storage import store

    def refuse(*args, **kwargs):
        raise AssertionError("a section ran while another run held the folder")

    for module_name in paper.EXPERIMENTS.values():
        monkeypatch.setattr(f"{module_name}.run", refuse)
    out = tmp_path / "paper"
    with store.lock(out), pytest.raises(ValueError) as refused:
        paper.reproduce("quick", out, only="glm")
    assert str(refused.value) == (
        f"{out} is being written by pid {os.getpid()} on {socket.gethostname()} (lock "
        f"{tmp_path / '.paper.lock'}); wait for it to finish"
    )
    assert not out.exists() and not (tmp_path / ".paper.lock").exists()


def test_a_section_whose_figure_another_run_drew_over_is_computed_again(tiny, tmp_path):
    """A run at another seed or size draws its figures before it saves its section: interrupted in
    between, it left the kept section of the first run beside the other run's figure, and the
    page showed the two together. A saved section records its figures' SHA-256: a figure that is
    not the one it drew makes it computed again."""
    out = tmp_path / "paper"
    paper.reproduce("quick", out, only="glm")
    saved = json.loads((out / "sections" / "glm.json").read_text())
    assert set(saved["figure_sha256"]) == set(saved["figures"]) and saved["figures"]
    figure = out / saved["figures"][0]
    drawn = figure.read_bytes()
    figure.write_bytes(drawn[:-10] + b"other run")  # what --seed 1, interrupted, leaves
    paper.reproduce("quick", out, only="glm")
    assert (
        figure.read_bytes() == drawn
        and json.loads((out / "sections" / "glm.json").read_text())["tables"] == (saved["tables"])
    )
    text = (out / "index.html").read_text()
    assert base64.b64encode(drawn).decode("ascii") in text


def _at_tiny_size(out) -> str:
    """A script that runs the program `mlcb paper --out OUT -q` at the tiny size, in a process of
    its own."""
    return (
        "import importlib, sys\n"
        f"for name, size in {TINY!r}.items():\n"
        "    importlib.import_module(name).SIZES['quick'] = size\n"
        "from mlcb.cli import program\n"
        f"sys.argv = ['mlcb', 'paper', '--out', {str(out)!r}, '-q']\n"
        "sys.exit(program())\n"
    )


def test_an_interrupted_page_resumes_to_the_uninterrupted_ones(page, tmp_path):
    """SIGINT to `mlcb paper` once a section is saved: it says that finished sections are kept (it
    said 'finished replications are kept', which `mlcb paper` does not keep), and the same command
    finishes the page with every section's numbers and verdicts those of a run never stopped."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    out = tmp_path / "paper"
    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, "-c", _at_tiny_size(out)]

    def interruptible() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    process = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    deadline = time.monotonic() + 300
    while (
        time.monotonic() < deadline and process.poll() is None and not any((out / "sections").glob("*.json"))
    ):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    finished = sorted(p.name for p in (out / "sections").glob("*.json"))
    assert process.returncode == 130, (process.returncode, err)
    # (a section that finishes while the others stop is saved too: all of them may be)
    assert 0 < len(finished) <= len(RUNNABLE), finished
    assert err == (
        f"mlcb: interrupted; finished sections are kept in {out / 'sections'}, the same command resumes "
        "from them (a section in progress starts over)\n"
    )
    assert subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600).returncode == 0
    _, whole = page
    for key in RUNNABLE:
        resumed, uninterrupted = (
            json.loads((o / "sections" / f"{key}.json").read_text()) for o in (out, whole)
        )
        for field in ("tables", "claims", "headline", "summary", "figure_sha256"):
            assert resumed[field] == uninterrupted[field], (key, field)
    strip = re.compile(r"written [0-9: -]+|\([0-9,]+ s\)")
    texts = (strip.sub("", (o / "index.html").read_text()) for o in (out, whole))
    assert next(texts) == next(texts)


def test_an_interrupted_reproduce_stops_its_sections_before_it_raises(tmp_path):
    """From Python, an interrupt of `mlcb.paper.reproduce` reached its own thread only: the
    sections in progress went on in threads of their own after the interrupt was raised (and
    Python's shutdown beside them could abort). They stop now, and the interrupt is raised once
    none runs. The trap section here is long (200 replications of 10^6 rounds): it is in progress
    when the process interrupts itself, half a second after both sections started."""
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "paper"
    script = (
        "import importlib, os, signal, threading, time\n"
        f"for name, size in {TINY!r}.items():\n"
        "    importlib.import_module(name).SIZES['quick'] = size\n"
        "importlib.import_module('mlcb.paper.trap').SIZES['quick'] = {'horizon': 999_999, 'replications': 200}\n"
        "import mlcb.paper\n"
        "def interrupt():\n"
        "    while sum(t.name.startswith(mlcb.paper.SECTION_THREAD) for t in threading.enumerate()) < 2:\n"
        "        time.sleep(0.01)\n"
        "    time.sleep(0.5)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "threading.Thread(target=interrupt, daemon=True).start()\n"
        "try:\n"
        f"    mlcb.paper.reproduce('quick', {str(out)!r}, only=('trap', 'lower-bound'))\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', mlcb.paper.sections_running())\n"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert (done.returncode, done.stdout) == (0, "interrupted False\n"), done.stderr
    assert not (out / "sections" / "trap.json").exists()


@pytest.mark.parametrize("running", [True, False])
def test_the_program_ends_at_once_while_interrupted_sections_run(running):
    """A second interrupt of `mlcb paper` leaves sections running in threads (compiled code cannot
    be stopped inside); Python's shutdown beside them could abort the process (an exit status of
    -6 after the message, on a loaded machine), so the program ends without it, its output
    flushed. Without such a thread the program ends as any other."""
    import subprocess
    import sys

    code = (
        "import atexit, sys, threading, time\n"
        "import mlcb.paper\n"
        "from mlcb.cli import startup\n"
        "atexit.register(print, 'shut down')\n"
        f"if {running}:\n"
        "    name = mlcb.paper.SECTION_THREAD + 'trap'\n"
        "    threading.Thread(target=time.sleep, args=(60,), name=name, daemon=True).start()\n"
        "print('interrupted', end='')\n"
        "sys.exit(startup.end(130))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (130, "interrupted" if running else "interruptedshut down\n")


def test_sections_run_at_once_give_the_numbers_of_one_run_alone(page, tiny, tmp_path):
    """The page's sections ran at once (threads); the glm section alone, in this thread, gives
    the same tables to the last digit."""
    _, out = page
    alone = tmp_path / "alone"
    paper.reproduce("quick", alone, only="glm")
    ran_alone = json.loads((alone / "sections" / "glm.json").read_text())
    at_once = json.loads((out / "sections" / "glm.json").read_text())
    assert ran_alone["tables"] == at_once["tables"]


def test_a_failing_section_leaves_the_others_saved(tmp_path, monkeypatch):
    """Sections run at once: one that fails does not stop the others, which are saved, and its
    error is raised once they are done."""
    from mlcb.paper import glm, trap

    def finished(size, out, seed=0, threads=None):
        return Section("trap", "The trap", "Text.", (), (Table("T", (Row("x", "1", 1.0),)),))

    def failing(*args, **kwargs):
        raise InputError("glm: something the section refuses")

    monkeypatch.setattr(trap, "run", finished)
    monkeypatch.setattr(glm, "run", failing)
    with pytest.raises(InputError, match="something the section refuses"):
        paper.reproduce("quick", tmp_path / "page", only=["glm", "trap"])
    assert sorted(p.name for p in (tmp_path / "page" / "sections").iterdir()) == ["trap.json"]


def test_section_json_round_trip_and_what_it_refuses(tmp_path):
    figure = tmp_path / "figures" / "a.png"
    figure.parent.mkdir()
    figure.write_bytes(b"\x89PNG")
    rows = (Row("x", "1.0", 1.5, 0.1, "%", "n", "holds"), Row("y", "claim", 2.0, verdict="not shown"))
    section = Section("k", "Title", "Text.", (figure,), (Table("T", rows, "note"),))
    data = json.loads(json.dumps(section.to_json(tmp_path)))
    assert data["figures"] == ["figures/a.png"] and data["tables"][0]["rows"][1]["stderr"] is None
    back = Section.from_json(data, tmp_path)
    assert back.tables == section.tables and back.figures == (figure,)
    link = tmp_path / "figures" / "b.png"
    link.symlink_to(figure)
    for name in ("figures/b.png", "../a.png", "figures/missing.png"):
        with pytest.raises(ValueError, match="is not a regular file"):
            Section.from_json({**data, "figures": [name]}, tmp_path)
    with pytest.raises(ValueError, match="not a saved section"):
        Section.from_json({"key": "k"}, tmp_path)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"size": "huge"}, r"size must be one of \('quick', 'paper'\), got 'huge'"),
        ({"only": ["trap", "nope"]}, "only must name sections among trap, glm, real-data, lower-bound"),
        ({"only": []}, "only must name sections among"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"out": ""}, "out must name a directory, got an empty path"),
        ({"overwrite": "yes"}, "overwrite must be"),
    ],
)
def test_bad_input_is_refused_before_any_work(arguments, message, tmp_path, monkeypatch):
    for module_name in paper.EXPERIMENTS.values():
        monkeypatch.setattr(f"{module_name}.run", lambda *a, **k: pytest.fail("work started"))
    arguments = {"out": tmp_path / "paper", **arguments}
    with pytest.raises(ValueError, match=message):
        paper.reproduce(**arguments)
    assert not (tmp_path / "paper").exists() or arguments["out"] == ""


def test_out_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "file"
    target.write_text("")
    with pytest.raises(ValueError, match="exists and is not a directory"):
        paper.reproduce(out=target)


def test_the_command_line_writes_the_page_and_resumes(tiny, tmp_path, capsys):
    from mlcb.cli import main

    out = tmp_path / "page"
    assert main(["paper", "--quick", "--out", str(out), "--only", "glm", "--threads", "1"]) == 0
    printed = capsys.readouterr().out
    assert "glm: running (quick)" in printed and f"page: {out / 'index.html'}" in printed
    assert 'id="glm"' in (out / "index.html").read_text()
    assert main(["paper", "--out", str(out), "--only", "glm", "-q"]) == 0
    assert "kept" not in capsys.readouterr().out  # --quiet: the page line only


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["paper", "--threads", "0"], "threads must be an integer >= 1, got 0"),
        (["paper", "--only", "nope"], "argument --only: invalid choice: 'nope'"),
        (["paper", "--quick", "--full"], "argument --full: not allowed with argument --quick"),
        (["paper", "--out", ""], "argument --out/-o: an empty path"),
        (["paper", "--seed", "-3"], "seed must be a non-negative integer"),
    ],
)
def test_the_command_line_refuses_bad_input_in_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for module_name in paper.EXPERIMENTS.values():
        monkeypatch.setattr(f"{module_name}.run", lambda *a, **k: pytest.fail("work started"))
    from mlcb.cli import main

    with pytest.raises(SystemExit) if "argument" in message else contextlib.nullcontext():
        assert main(argv) == 2  # argparse's errors exit with status 2 themselves
    error = capsys.readouterr().err
    assert error.startswith("mlcb: error: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_a_section_without_its_packages_is_skipped_with_one_line(tiny, tmp_path, capsys, monkeypatch):
    from mlcb.paper import real_data

    monkeypatch.setattr(real_data, "REQUIRES", ("river", "no_such_package_mlcb"))
    monkeypatch.setattr(real_data, "run", lambda *a, **k: pytest.fail("a section without its packages ran"))
    index = paper.reproduce("quick", tmp_path / "page", only="real-data", progress=True)
    assert "real-data: skipped, it needs no_such_package_mlcb (pip install no_such_package_mlcb)" in (
        capsys.readouterr().out
    )
    assert 'id="real-data"' not in index.read_text()


def test_the_rules_decide_a_verdict_by_two_standard_errors():
    from mlcb.paper.measure import judge, judge_value

    assert [judge(m, 1.0, high=0.0) for m in (-2.0, -1.9, 0.0, 1.9, 2.0, 2.1)] == [
        "holds", "not shown", "not shown", "not shown", "not shown", "does not hold"
    ]  # fmt: skip
    assert judge(0.5, 0.1, low=0.2, high=0.7) == "holds" and judge(0.5, 0.2, low=0.2, high=0.7) == "not shown"
    assert judge(0.05, 0.01, low=0.2, high=0.7) == "does not hold"
    assert judge(0.3, 0.0, high=0.3) == "holds" and judge(0.31, 0.0, high=0.3) == "does not hold"  # exact
    assert judge(float("nan"), 1.0) == judge(1.0, float("nan")) == "not shown"
    with pytest.raises(ValueError, match=r"low and high must be a range low <= high, got \[1.0, 0.0\]"):
        judge(0.5, 0.1, low=1.0, high=0.0)
    assert judge_value(105.6, 100.0, 2.0, 0.1) == "does not hold"  # 5.6 > 4 + 0.05
    assert (
        judge_value(104.0, 100.0, 2.0, 0.1) == "holds" and judge_value(1.0, 1.0, float("nan")) == "not shown"
    )


def test_a_standard_error_of_few_replications_asks_a_wider_margin():
    """A standard error over n replications has n - 1 degrees of freedom: at two runs a mean
    30 standard errors from its boundary can be chance (Student's t), so the margin is t's quantile
    at the normal law's level (14 s.e. at 2 runs, 2.1 at 20); replications that all give one value
    give no standard error, not an exact number. Before, both were decided at 2 s.e. (the page's
    "family-wise 5 %" was false at the quick size's 5 Warfarin runs)."""
    from mlcb.paper.measure import (
        RULES,
        SAME_VALUE,
        claim_row,
        critical,
        estimate,
        judge,
        judge_value,
        published_row,
    )
    from mlcb.paper.verdicts import Spec, finish, holm, tail

    assert critical() == 2.0 and critical(1) == pytest.approx(13.97, abs=0.01)
    assert [round(critical(n - 1), 1) for n in (3, 5, 20)] == [4.5, 2.9, 2.1]  # as RULES says
    assert "14 standard errors with 2 replications, 4.5 with 3, 2.9 with 5, 2.1 with 20" in RULES[0]
    assert [judge(-3.0, 1.0, high=0.0, df=df) for df in (math.inf, 19, 4, 1)] == [
        "holds", "holds", "holds", "not shown"
    ]  # fmt: skip
    assert (
        judge(-2.5, 1.0, high=0.0, df=4) == "not shown" and judge(40.0, 10.0, high=0.0, df=1) == "not shown"
    )
    assert (
        judge_value(102.2, 100.0, 1.0) == "does not hold" and judge_value(102.2, 100.0, 1.0, df=9) == "holds"
    )
    # a published number within a wide margin is not reproduced: 2 runs at 81.3 +- 1.8 against 95.0
    # lie within 14 s.e. (25 points), which tells 95.0 from nothing 10 % away
    assert judge_value(95.0, 81.3, 1.8, 0.1, df=1) == "not shown"
    wide = published_row("accuracy", "95.0 %", 95.0, 81.3, 1.8, digit=0.1, claim="n", df=1, reason="why")
    assert (
        wide.verdict == "not shown"
        and wide.reason.startswith(
            "within the noise: the margin of 2 replications, 25.1 either way, is wider than 9.5 (10% of the "
            "paper's 95)"
        )
        and wide.reason.endswith("; why")
    )
    assert estimate([1.0, 2.0, 3.0]) == (2.0, pytest.approx(0.57735, abs=1e-5), 2.0)
    # the same value in every replication: no standard error, whatever the distance
    same = claim_row("share", "above 1/2", 0.03, 0.0, low=0.5, claim="c", condition="M = 1", reason="r", df=1)
    assert same.verdict == "not shown" and SAME_VALUE in same.note and math.isnan(same.z)
    assert judge(0.3, 0.0, high=0.3) == "holds"  # an error of 0 that is no estimate: exact
    section = finish("k", "K", "", (), [Table("t", (same,))], (Spec("c", "above", "above"),))
    assert section.tables[0].rows[0].reason.startswith(f"within the noise: {SAME_VALUE}")
    # a difference of 2 runs 3 s.e. from its boundary is within the noise, and says why
    few = claim_row("d", "below", -3.0, 1.0, high=0.0, claim="c", condition="M = 1", df=1)
    reason = (
        finish("k", "K", "", (), [Table("t", (few,))], (Spec("c", "below", "below"),))
        .tables[0]
        .rows[0]
        .reason
    )
    assert (
        few.verdict == "not shown"
        and "short of the 14.0 s.e. that 2 replications ask (Student's t)" in reason
    )
    assert reason.endswith("; about 4 replications would decide it")  # its margin grows as sqrt(n)
    # Holm's rule reads each test's tail under its own degrees of freedom
    assert tail(4.0, df=4) > 100 * tail(4.0)
    for df, kept in ((math.inf, "holds"), (4.0, "not shown")):  # ten tests 4 s.e. from their boundary
        tests = tuple(
            claim_row(f"q{i}", "below", -4.0, 1.0, high=0.0, claim="c", condition=f"M = {i}", df=df)
            for i in range(10)
        )
        decided, _ = holm([Table("t", tests)])
        assert [row.verdict for row in decided[0].rows] == [kept] * 10
    assert (
        "4.0 s.e. inside its range, short of the 4.6 s.e. that Holm's rule asks of it with 5 replications"
        in (decided[0].rows[0].reason)
    )


def test_no_verdict_on_the_page_rests_on_a_margin_its_replications_do_not_give(page):
    """Every decided test of the tiny page (2 or 3 replications) clears the margin of its own
    degrees of freedom, and none is decided without a standard error."""
    from mlcb.paper.measure import critical

    _, out = page
    decided = 0
    for key in RUNNABLE:
        section = Section.from_json(json.loads((out / "sections" / f"{key}.json").read_text()), out)
        for row in (row for table in section.tables for row in table.rows):
            if row.verdict in ("holds", "does not hold") and math.isfinite(row.z):
                decided += 1
                assert math.isfinite(row.df) and row.df <= 3, row  # the replications were counted
                assert row.stderr > 0 and row.z >= critical(row.df), row
    assert decided > 0


def test_slopes_carry_a_jackknife_standard_error_paired_across_settings():
    import mlcb
    from mlcb.paper import measure

    result = mlcb.compare(
        "trap", [("mlcb", (1,)), ("limited-advice", (1,))], horizon=3_000, replications=4, seed=2
    )
    value, error = measure.slope_and_error(result, "mlcb M=1", "pseudo_regret")
    assert value == measure.slope(result, "mlcb M=1", "pseudo_regret") and 0 < error < 1
    same, none = measure.slope_difference(result, "mlcb M=1", "mlcb M=1", "pseudo_regret")
    assert same == 0.0 and none == 0.0
    difference, spread = measure.slope_difference(result, "mlcb M=1", "limited-advice M=1", "pseudo_regret")
    other = measure.slope(result, "limited-advice M=1", "pseudo_regret")
    assert difference == pytest.approx(value - other) and spread > 0
    row = measure.growth_rows(result, (1,), "limited-advice", "pseudo_regret", "slower")[0]
    assert row.verdict in paper.VERDICTS and row.package == pytest.approx(difference)


def test_the_page_reads_cleanly_in_a_browser(page, tmp_path):
    """The page as a reader opens it (tests/browser.py): no console error, every figure loaded,
    no table wider than the window; the screenshot is kept with MLCB_SCREENSHOTS=DIR."""
    from tests import browser

    browser.require()
    index, _ = page
    seen = browser.inspect(index, browser.screenshots(tmp_path) / "paper.png")
    assert seen.problems() == []
    text = index.read_text()
    assert seen.images == text.count("<img ") and seen.tables == text.count("<table>") > 0


def test_holms_rule_decides_a_sections_tests_together():
    """Many tests at two standard errors give chance verdicts: a section keeps a verdict only where
    Holm's rule (family-wise 5 %) allows it, and says what margin a test it drops needed."""
    from mlcb.paper.measure import claim_row, published_row
    from mlcb.paper.verdicts import Spec, finish, holm, margin_needed

    def rows(margins):
        return tuple(
            claim_row(f"q{i}", "below", -z, 1.0, high=0.0, claim="c", condition=f"M = {i}")
            for i, z in enumerate(margins)
        )

    strong = Table("t", rows([10.0] * 18 + [3.5, 2.5]))
    decided, needed = holm([strong])
    assert [r.verdict for r in decided[0].rows] == ["holds"] * 20  # the strong ones make room
    assert needed == pytest.approx(margin_needed(0.05 / 20))
    weak = Table("t", rows([2.5] * 20) + (published_row("n", "1.0", 1.0, 1.05, 0.04, claim="n"),))
    decided, _ = holm([weak])
    assert [r.verdict for r in decided[0].rows] == ["not shown"] * 20 + ["holds"]  # a number's holds stays
    assert (
        decided[0]
        .rows[0]
        .reason.startswith(
            f"2.5 s.e. inside its range, short of the {margin_needed(0.05 / 21):.1f} s.e. that Holm's rule"
        )
    )
    assert holm(decided)[0] == decided  # deciding again changes nothing
    specs = (Spec("c", "A below B", "A below B"), Spec("n", "the number 1.0", "1.0", kind="number"))
    section = finish("k", "K", "", (), [weak], specs)
    assert [c.verdict for c in section.claims] == ["not shown", "holds"] and section.claims[0].reason
    assert section.summary == "K: 1.0 is reproduced; A below B is not shown."
    with pytest.raises(ValueError, match="names no claim of the section"):
        finish("k", "K", "", (), [weak], specs[:1])
    failing = Table("t", (claim_row("q", "below", 9.0, 1.0, high=0.0, claim="c"),))
    with pytest.raises(ValueError, match="does not hold and gives no reason"):
        finish("k", "K", "", (), [failing], (Spec("c", "A below B", "A below B"),))


def test_the_page_text_follows_its_numbers(page):
    """What the prose says about a verdict is built from the rows, so it cannot go stale: the
    trap's sentence on LimitedAdvice's wrapper at M = 1, the GLM's deployment of link 9."""
    from mlcb.paper import glm, trap

    _, out = page
    data = json.loads((out / "sections" / "trap.json").read_text())
    rows = {row["condition"]: row for table in data["tables"] for row in table["rows"]}
    last, counts = (rows[f"authors; M = 1; {trap.WRAPPER_NAMES[w]}"] for w in ("last", trap.OTHER_WRAPPER))
    same = last["verdict"] == counts["verdict"]
    undecided = same and last["verdict"] == "not shown"
    assert ("the verdict is the same under both" in data["text"]) == (same and not undecided)
    assert ("neither wrapper's comparison is decided" in data["text"]) == undecided
    assert ("the verdict depends on LimitedAdvice's wrapper" in data["text"]) == (not same)
    for row in (last, counts):
        assert f"{row['package']:+,.0f} ± {row['stderr']:,.0f} ({row['verdict']})" in data["text"]
    data = json.loads((out / "sections" / "glm.json").read_text())
    for calibration, words in (("authors", "with the common rate"), ("theory", "with valid rates")):
        table = next(
            t
            for t in data["tables"]
            if t["title"].startswith(f"Where M-LCB's training goes, link by link ({calibration}")
        )
        deployed = float(table["rows"][glm.TARGET]["note"].split("M-LCB deploys it ")[1])
        shown = re.search(rf"([0-9.]+)% of the rounds {words}|([0-9.]+)% {words}", data["text"])
        assert shown and float(shown.group(1) or shown.group(2)) == pytest.approx(100 * deployed, abs=0.51)


def test_the_figures_say_what_their_band_is(tmp_path):
    """Panel (a)'s legend names its band, and the band drawn is that one: the mean of the
    replications at each round, plus and minus two standard errors; the paper's own band is noted
    beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    import mlcb
    from mlcb.paper.section import panels

    result = mlcb.compare("trap", [("mlcb", (1,))], horizon=400, replications=5, seed=1)
    figure = panels(result, "regret", "a title", band="the paper shaded something else")
    ax = figure.axes[0]
    legend = " ".join(text.get_text() for legend in figure.legends for text in legend.get_texts())
    assert "band: mean ± 2 standard errors" in legend
    assert "the paper shaded something else" in ax.get_title(loc="left")
    vertices = np.concatenate([path.vertices for c in ax.collections for path in c.get_paths()])
    curves = result.curves[result.curves["setting"] == "mlcb M=1"].groupby("round")["regret"]
    for x, mean, error in zip(curves.mean().index, curves.mean().to_numpy(), curves.sem().to_numpy()):
        at = np.isclose(vertices[:, 0], x)
        assert np.isclose(vertices[at, 1], mean - 2 * error).any()
        assert np.isclose(vertices[at, 1], mean + 2 * error).any()


def _claim_rows(block: str) -> list[list[str]]:
    """The claim rows of a verdicts block (mlcb.paper.page.markdown): their cells."""
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in block.splitlines()
        if line.startswith("| ") and not line.startswith("| section |")
    ]


def test_the_docs_quote_the_verdicts_of_the_paper_size_page(page):
    """docs/paper.md quotes the block that `mlcb paper --full` writes to OUT/verdicts.md: the same
    claims, in the page's order, each with a claim verdict, and a headline per section; it states
    the page's rules and times as the code does."""
    from pathlib import Path

    from mlcb.paper.page import MARKDOWN_BEGIN, MARKDOWN_END
    from mlcb.paper.section import CLAIM_VERDICTS

    docs = (Path(__file__).resolve().parents[1] / "docs" / "paper.md").read_text(encoding="utf-8")
    assert docs.count(MARKDOWN_BEGIN) == docs.count(MARKDOWN_END) == 1
    block = docs.split(MARKDOWN_BEGIN)[1].split(MARKDOWN_END)[0]
    assert block.splitlines()[1] == "Size paper, seed 0."
    quoted = _claim_rows(block)
    _, out = page
    written = (out / "verdicts.md").read_text(encoding="utf-8")
    assert written.startswith(MARKDOWN_BEGIN) and written.rstrip().endswith(MARKDOWN_END)
    mine = _claim_rows(written)
    expected = [row[:2] for row in quoted if row[0] in RUNNABLE]
    if importlib.util.find_spec("sklearn") is None:  # no stand-in: (b) and (c) are left out
        from mlcb.paper import real_data

        left_out = {spec.text for spec in real_data.CLAIMS if spec.key in real_data.STAND_IN_CLAIMS}
        expected = [row for row in expected if row[1] not in left_out]
    assert expected == [row[:2] for row in mine]
    assert {row[0] for row in quoted} == set(paper.EXPERIMENTS)
    assert all(len(row) == 6 and row[2] in CLAIM_VERDICTS for row in quoted)
    for name in (
        "The trap (T = 250,000, 100 runs)",
        "The GLM stream (T = 2,500, 30 runs)",
        "The lower bound",
    ):
        assert f"* {name}" in block
    assert paper.DURATIONS["quick"] in docs and paper.DURATIONS["paper"] in docs
    assert "Holm's rule" in docs and "family-wise error rate of 5 %" in docs
