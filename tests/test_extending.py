"""docs/extending.md runs as written: its three recipes make one plugin module, each recipe's own
check passes, and the command line reaches all three through ``--plugin``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "extending.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)


def _environment(directory: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    environment["PYTHONPATH"] = os.pathsep.join([str(directory), str(ROOT)])
    return environment


def _run(arguments: list[str], directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=directory,
        env=_environment(directory),
        capture_output=True,
        text=True,
        timeout=1200,
    )


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The page's four parts, in order, written as ``my_plugin.py``; the page's TOML files beside it."""
    directory = tmp_path_factory.mktemp("extending")
    parts = [block for block in _blocks("python") if block.startswith("# my_plugin.py, part ")]
    assert [block.split(":")[0] for block in parts] == [f"# my_plugin.py, part {i}" for i in (1, 2, 3, 4)]
    (directory / "my_plugin.py").write_text("\n\n".join(parts))
    for block in _blocks("toml"):
        name = block.split(":")[0].removeprefix("# ").strip()
        assert name.endswith(".toml"), block.splitlines()[0]
        (directory / name).write_text(block)
    return directory


def test_the_page_has_a_recipe_and_a_check_for_each_kind():
    text = PAGE.read_text()
    for register, check in (
        ("mlcb.policies.register(", "check_policy("),
        ("agents.register(", "check_expert("),
        ("envs.register(", "check_env("),
    ):
        assert register in text and check in text


def test_each_recipe_runs_and_passes_its_check(plugin):
    """Every Python block that uses the plugin runs as written, in a fresh namespace."""
    snippets = [block for block in _blocks("python") if "import my_plugin" in block]
    assert len(snippets) == 5
    script = "\n".join(
        f"exec(compile({snippet!r}, 'docs/extending.md, check {i}', 'exec'), {{}})\nprint('check {i} done')"
        for i, snippet in enumerate(snippets, 1)
    )
    done = _run(["-c", script], plugin)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if line.endswith("done")] == [
        "check 1 done",
        "check 2 done",
        "check 3 done",
        "check 4 done",
        "check 5 done",
    ]


def test_the_command_line_reaches_all_three_through_one_plugin(plugin):
    listed = _run(["-m", "mlcb.cli", "list", "--plugin", "my_plugin"], plugin)
    assert listed.returncode == 0, listed.stderr[-2000:]
    for name in ("explore-commit", "explore-first", "running-mean", "mine/Coin-v0"):
        assert re.search(rf"^\s+{re.escape(name)}\s+\S", listed.stdout, flags=re.MULTILINE), name
    for setting in ("bandits", "coin"):
        ran = _run(
            ["-m", "mlcb.cli", "run", f"{setting}.toml", "--plugin", "my_plugin", "--out", "results",
             "--no-plot", "--quiet"],
            plugin,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert (plugin / "results" / setting / "metadata.json").is_file()
    refused = _run(["-m", "mlcb.cli", "run", "coin.toml", "--out", "results", "--quiet"], plugin)
    assert refused.returncode == 2
    # without --plugin: one line naming what is missing, no traceback
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()]
    assert refused.stderr.startswith("mlcb: error: unknown expert 'running-mean'")
    assert "--plugin MODULE" in refused.stderr


def test_the_command_line_draws_and_writes_what_the_plugin_registers(plugin):
    """A plugin's figure and writer: listed, written beside the result (and counted as mlcb's
    own by the store, so the same run resumes over them), drawn by `mlcb plot`."""
    listed = _run(["-m", "mlcb.cli", "list", "--plugin", "my_plugin"], plugin)
    assert re.search(r"^\s+deployed-shares\s+share of rounds", listed.stdout, flags=re.MULTILINE)
    assert re.search(
        r"^\s+summary-txt\s+the summary as plain text \(summary.txt\)", listed.stdout, flags=re.M
    )
    run = ["-m", "mlcb.cli", "run", "trap", "--budget", "2", "--horizon", "500", "--replications", "2",
           "--plugin", "my_plugin", "--write", "summary-txt", "csv", "--out", "outputs", "--quiet"]  # fmt: skip
    for _ in range(2):  # the second run finds only mlcb's files, its own included
        ran = _run(run, plugin)
        assert ran.returncode == 0, ran.stderr[-2000:]
    saved = plugin / "outputs" / "trap"
    assert "mlcb M=2" in (saved / "summary.txt").read_text()
    assert (saved / "curves.csv").is_file()
    drawn = _run(
        ["-m", "mlcb.cli", "plot", str(saved), "--kind", "deployed-shares", "--plugin", "my_plugin"], plugin
    )
    assert drawn.returncode == 0, drawn.stderr[-2000:]
    assert (saved / "deployed-shares.png").stat().st_size > 1000
    unknown = _run(["-m", "mlcb.cli", "plot", str(saved), "--kind", "deployed-shares"], plugin)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("mlcb: error: unknown figure 'deployed-shares'")
