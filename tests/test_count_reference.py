"""benchmarks/count_reference.py: its arithmetic, its errors and its children, without Valgrind.

The counts themselves need Valgrind, which the test machines do not have; what is checked here
is everything around it: a row is half the difference of the two children's counts per round,
a failed or unparsable Valgrind run is an error that says which row, bad options and a missing
Valgrind are refused before any work, and the children run the replication they are asked for.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from tests.scripts import benchmark


@pytest.fixture
def script():
    return benchmark("count_reference")


def test_a_row_is_half_the_difference_per_round(script, monkeypatch, capsys):
    warmed = []
    monkeypatch.setattr(script.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(script.subprocess, "run", lambda command, **kwargs: warmed.append(command))
    # engine: 100 instructions a round, reference: 80, over a set-up of 5,000 instructions
    per_round = {"engine": 100, "reference": 80}
    monkeypatch.setattr(
        script,
        "_count",
        lambda kernel, horizon, budget, runs, env, events: {
            "instructions": 5_000 + runs * horizon * per_round[kernel] * budget
        },
    )
    rows = script.main(["--horizons", "2000", "--budgets", "1", "3", "--cpu", "haswell"])
    assert [(row["horizon"], row["budget"]) for row in rows] == [(2000, 1), (2000, 3)]
    assert [row["engine"] for row in rows] == [100.0, 300.0]
    assert [row["reference"] for row in rows] == [80.0, 240.0]
    assert [row["ratio"] for row in rows] == [0.8, 0.8]
    assert [command[-4] for command in warmed] == ["engine", "reference"]  # compiled before counting
    out = capsys.readouterr().out
    assert "code for haswell" in out and out.count("0.80x") == 2
    assert "simulated" not in out and "events" not in rows[0]


def test_events_are_per_round_too(script, monkeypatch, capsys):
    """With ``--events``, every simulated event is half the difference per round, as the
    instructions are, and printed engine / reference."""
    monkeypatch.setattr(script.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(script.subprocess, "run", lambda command, **kwargs: None)
    scale = {"engine": 2, "reference": 1}

    def count(kernel, horizon, budget, runs, env, events):
        assert events
        names = ["instructions"] + [name for name, _, _ in script.EVENTS]
        # event i: (i + 1) per round, twice that for the engine, over a set-up of 7,000 of each
        return {name: 7_000 + runs * horizon * (i + 1) * scale[kernel] for i, name in enumerate(names)}

    monkeypatch.setattr(script, "_count", count)
    (row,) = script.main(["--horizons", "1000", "--budgets", "2", "--events"])
    assert row["engine"] == 2.0 and row["reference"] == 1.0
    for i, (name, _, _) in enumerate(script.EVENTS):
        assert row["events"][name] == {"engine": 2.0 * (i + 2), "reference": 1.0 * (i + 2)}
    out = capsys.readouterr().out
    assert "simulated per round" in out and "mispredicted" in out
    assert "12.00 / 6.00" in out  # the mispredicted branches, the last column


def test_the_children_compile_for_the_named_processor_into_a_cache_of_their_own(script, tmp_path):
    env = script._environment("x86-64-v3", tmp_path)
    assert env["NUMBA_CPU_NAME"] == "x86-64-v3" and env["NUMBA_CPU_FEATURES"] == ""
    assert env["XDG_CACHE_HOME"] == str(tmp_path) and env["NUMBA_CACHE_DIR"].startswith(str(tmp_path))
    assert env["PYTHONHASHSEED"] == "0"  # the same set-up, instruction for instruction


def test_a_count_is_read_from_valgrinds_summary(script, monkeypatch):
    def fake(command, **kwargs):
        assert command[:3] == ["valgrind", "--tool=cachegrind", "--cache-sim=no"]
        assert not any(part.startswith("--branch-sim") for part in command)
        assert command[-4:] == ["engine", "2000", "1", "3"]
        return SimpleNamespace(returncode=0, stderr="==1== \n==1== I   refs:      63,655,852,094\n")

    monkeypatch.setattr(script.subprocess, "run", fake)
    assert script._count("engine", 2000, 1, 3, {}) == {"instructions": 63_655_852_094}


#: The end of Valgrind 3.19's summary with both simulations on.
SIMULATED = """==7== I   refs:      4,595,605,312
==7== I1  misses:        1,234
==7== LLi misses:          987
==7==
==7== D   refs:      1,563,124,050  (1,000,000,000 rd   + 563,124,050 wr)
==7== D1  misses:       32,413,931  (   30,000,000 rd   +   2,413,931 wr)
==7== LLd misses:          106,137  (      100,000 rd   +       6,137 wr)
==7==
==7== Branches:        669,261,871  (563,124,050 cond + 106,137,821 ind)
==7== Mispredicts:      57,639,699  ( 32,413,931 cond +  25,225,768 ind)
"""


def test_simulated_events_are_read_from_valgrinds_summary(script, monkeypatch):
    def fake(command, **kwargs):
        assert command[:4] == ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"]
        return SimpleNamespace(returncode=0, stderr=SIMULATED)

    monkeypatch.setattr(script.subprocess, "run", fake)
    assert script._count("engine", 2000, 1, 3, {}, events=True) == {
        "instructions": 4_595_605_312,
        "data_refs": 1_563_124_050,
        "d1_misses": 32_413_931,
        "ll_misses": 106_137,
        "branches": 669_261_871,
        "mispredicts": 57_639_699,
    }


def test_a_summary_without_the_simulated_events_is_an_error(script, monkeypatch):
    """``--events`` on a Valgrind that printed no branch summary: an error naming the row."""
    summary = SIMULATED.split("==7== Branches")[0]
    monkeypatch.setattr(
        script.subprocess, "run", lambda command, **kwargs: SimpleNamespace(returncode=0, stderr=summary)
    )
    with pytest.raises(RuntimeError, match="engine T=2000 M=1"):
        script._count("engine", 2000, 1, 3, {}, events=True)


@pytest.mark.parametrize(
    "result",
    [
        SimpleNamespace(returncode=1, stderr="==1== I   refs: 5\nvex: unhandled instruction"),
        SimpleNamespace(returncode=0, stderr="no summary"),
    ],
)
def test_a_failed_count_names_its_row(script, monkeypatch, result):
    monkeypatch.setattr(script.subprocess, "run", lambda command, **kwargs: result)
    with pytest.raises(RuntimeError, match="reference T=5000 M=2"):
        script._count("reference", 5000, 2, 1, {})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--horizons", "10"], "horizons must be >= 1000"),
        (["--budgets", "0"], r"budgets in \[1, 10\]"),
        (["--budgets", "11"], r"budgets in \[1, 10\]"),
    ],
)
def test_bad_options_are_refused_before_any_work(script, monkeypatch, capsys, options, message):
    monkeypatch.setattr(script.subprocess, "run", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(SystemExit):
        script.main(options)
    assert re.search(message, capsys.readouterr().err)


def test_without_valgrind_it_says_what_to_install(script, monkeypatch, capsys):
    monkeypatch.setattr(script.shutil, "which", lambda name: None)
    monkeypatch.setattr(script.subprocess, "run", lambda *a, **k: pytest.fail("work started"))
    with pytest.raises(SystemExit):
        script.main([])
    assert "apt install valgrind" in capsys.readouterr().err


@pytest.mark.parametrize("kernel", ["engine", "reference"])
def test_a_child_runs_its_replication(script, kernel):
    command = script._command(kernel, 2_000, 2, 1)
    assert command[1].endswith("count_reference.py") and command[-4:] == [kernel, "2000", "2", "1"]
    script.child(kernel, 2_000, 2, 2)  # the set-up and two runs, as under Valgrind


def test_the_child_option_is_the_childs_command_line(script, monkeypatch):
    called = []
    monkeypatch.setattr(script, "child", lambda *args: called.append(args))
    assert script.main(["--child", "reference", "3000", "4", "3"]) == []
    assert called == [("reference", 3000, 4, 3)]
