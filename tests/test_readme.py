"""The README is a front page, and the examples of the documentation run as written.

The README keeps what a first visit needs (what the package is, the two commands, a picture, an
example, links into the documentation); the manual lives in ``docs/``. Examples marked
``<!-- example: NAME -->`` in the README or a page of ``docs/`` are found by :func:`_example`
wherever they are, so a test that runs one does not depend on the page it lives on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: Where marked examples may live: the README and every page of the documentation.
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = re.compile(r"<!-- example: ([A-Za-z0-9_-]+) -->\n```python\n(.*?)```", re.S)


def _examples() -> dict[str, tuple[Path, str]]:
    found: dict[str, tuple[Path, str]] = {}
    for page in PAGES:
        for name, code in MARKER.findall(page.read_text(encoding="utf-8")):
            assert name not in found, f"example {name!r} is marked in {found[name][0]} and in {page}"
            found[name] = (page, code)
    return found


def _example(name: str) -> str:
    """The code of the example marked ``name`` in the README or a page of ``docs/``."""
    examples = _examples()
    assert name in examples, f"no page of README.md or docs/ has an example marked {name!r}"
    return examples[name][1]


def test_own_learner_example_runs(capsys):
    code = _example("own-learner")
    assert 20 <= len(code.strip().splitlines()) <= 50
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "docs/python-experts.md", "exec"), namespace)  # noqa: S102 (the project's own docs)
    result = namespace["result"]
    final = result.summary()
    assert final["regret"].notna().all() and final["pseudo_regret"].notna().all()
    assert result.metadata["settings"]["mlcb M=2"]["engine"] == "python"
    assert "best_deployed_share" in capsys.readouterr().out


def test_front_page_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example saves its figure in the working directory
    code = _example("front-page")
    assert len(code.strip().splitlines()) <= 20
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 (the project's own README)
    summary = namespace["result"].summary()
    assert list(summary["setting"]) == ["mlcb M=1", "mlcb M=2"]
    assert summary["pseudo_regret"].notna().all()
    assert "pseudo_regret" in capsys.readouterr().out
    assert (tmp_path / "regret.png").stat().st_size > 0


def test_getting_started_example_runs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example saves its figure in the working directory
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(_example("getting-started"), "docs/getting-started.md", "exec"), namespace)  # noqa: S102
    assert list(namespace["result"].summary()["setting"]) == ["mlcb M=2"]
    assert "pseudo_regret" in capsys.readouterr().out
    assert (tmp_path / "regret.png").stat().st_size > 0


def test_python_api_example_runs_and_its_comments_say_what_it_gives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example saves a result and a figure in the working directory
    code = _example("python-api")
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "docs/python-api.md", "exec"), namespace)  # noqa: S102 (the project's own docs)
    first = namespace["mlcb"].load(tmp_path / "results" / "my-run")
    assert {"regret", "pseudo_regret", "certificate"} <= set(first.summary().columns)
    listed = re.search(r"result\.curves +# tidy: ([a-z_, ]+), \.\.\.", code)
    assert listed and list(first.curves.columns[:6]) == listed.group(1).split(", ")
    assert list(namespace["result"].summary()["setting"]) == ["mlcb M=2"]  # the pool of one's own
    assert (tmp_path / "regret.png").stat().st_size > 0


def test_the_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "README.md should stay a front page; the manual lives in docs/"
    # The two commands, as the Makefile runs them.
    assert re.search(r"^make run\s+#", text, re.M) and re.search(r"^make test\s+#", text, re.M)
    assert re.search(r"!\[[^]]*\]\(docs/figures/[a-z-]+\.png\)", text), "one picture"
    # Links into the documentation, by relative paths that also work on GitHub.
    linked = set(re.findall(r"\]\((docs/[^)#\s]+)", text))
    for page in (
        "docs/getting-started.md",
        "docs/tutorials/index.md",
        "docs/theory.md",
        "docs/benchmarks.md",
    ):
        assert page in linked, f"README.md should link {page}"


def test_no_timings_in_the_readme():
    # Timings rot: the benchmark scripts print them (docs/benchmarks.md).
    text = README.read_text(encoding="utf-8")
    timings = re.findall(r"[0-9][0-9,.]*\s*(?:s|ms|µs|us|seconds|minutes|rounds/s)\b(?! *=)", text)
    assert not timings, f"README.md quotes timings: {timings}"


@pytest.mark.parametrize("name", sorted(_examples()))
def test_every_marked_example_is_run_by_a_test(name):
    # A marked example is there to be run: some test names it.
    tests = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "tests").glob("test_*.py"))
    assert f'_example("{name}")' in tests, f"example {name!r} is marked but no test runs it"


def test_examples_are_found_wherever_they_live(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- example: demo -->\n```python\nx = 1\n```\n")
    assert MARKER.findall(page.read_text()) == [("demo", "x = 1\n")]
    with pytest.raises(AssertionError, match="no page"):
        _example("no-such-example")


def test_the_getting_started_commands_run_right_after_make_run(tmp_path, monkeypatch, capsys):
    """The command-line block of the getting-started page runs as written in a checkout where
    ``make run`` has already written ``results/trap`` (stood for here by a small run of other
    settings into that folder)."""
    import shlex

    from mlcb.cli import main

    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    block = page.split("## A first simulation on the command line", 1)[1].split("```", 2)[1]
    commands = [shlex.split(line.split("#", 1)[0]) for line in block.strip().splitlines()]
    assert [command[:2] for command in commands] == [["mlcb", "run"], ["mlcb", "show"], ["mlcb", "list"]]
    monkeypatch.chdir(tmp_path)
    assert main(["run", "trap", "-T", "300", "-R", "2", "-q", "--no-plot"]) == 0  # make run's results/trap
    for command in commands:
        assert main(command[1:]) == 0, command
    assert (tmp_path / "results" / "trap").is_dir() and capsys.readouterr().out
