"""Every tutorial runs as a script, at a tiny size, prints what it computes and saves its figures.

The tutorials are Python scripts in ``docs/tutorials/`` (cells marked ``# %%``) that the site
renders as notebooks, executed when it is built. Each reads its size from the environment
variable ``MLCB_TUTORIAL_SIZE``: the pages show meaningful sizes, and this test sets it to
``tiny`` and runs each script as ``__main__`` (``runpy``) under matplotlib's file-only backend,
as ``python docs/tutorials/NAME.py`` would run: what a cell shows in a notebook it must also
print (no bare expression, whose value a script drops), and every figure is saved under
``results/tutorials/NAME/`` (no ``plt.show()``, which shows nothing without a screen).
"""

from __future__ import annotations

import ast
import re
import runpy
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TUTORIALS = sorted((Path(__file__).resolve().parent.parent / "docs" / "tutorials").glob("*.py"))
#: The optional packages a tutorial needs (``make test`` installs them all).
NEEDS = {"river-pool": "river", "moe-pool": "torch"}


def test_there_are_tutorials():
    names = {path.stem for path in TUTORIALS}
    assert {
        "first-simulation",
        "own-learner",
        "river-pool",
        "moe-pool",
        "sweep-report",
        "certificate",
    } <= names


def _dropped(source: str) -> list[str]:
    """The statements of ``source`` whose value a script drops and a notebook would show: bare
    expressions other than calls (``result.settings``, ``summary[...]``)."""
    return [
        f"line {node.lineno}: {ast.unparse(node)[:60]}"
        for node in ast.parse(source).body
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call)
    ]


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.stem)
def test_tutorial_runs_as_a_script_prints_and_saves_its_figures(path, tmp_path, monkeypatch, capsys):
    source = path.read_text(encoding="utf-8")
    assert 'os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"' in source, "the tutorial must read its size"
    assert source.startswith("# %% [markdown]\n# # "), "a tutorial opens with a Markdown cell and its title"
    assert not _dropped(source), f"{path.name}: values a script would not print: {_dropped(source)}"
    assert "plt.show(" not in source, f"{path.name}: plt.show() shows nothing in a script; save the figure"
    if path.stem in NEEDS:
        pytest.importorskip(NEEDS[path.stem], reason=f"the tutorial needs {NEEDS[path.stem]}")
    monkeypatch.setenv("MLCB_TUTORIAL_SIZE", "tiny")
    monkeypatch.chdir(tmp_path)  # whatever a tutorial writes lands here
    plt.close("all")
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
    printed = capsys.readouterr().out
    figures = sorted((tmp_path / "results" / "tutorials" / path.stem).glob("*.png"))
    assert figures, f"{path.name} saves no figure"
    assert all(png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for png in figures)
    for png in figures:  # each figure it saved, it says where
        assert f"saved results/tutorials/{path.stem}/{png.name}" in printed, printed
    assert len(printed.splitlines()) >= 3 + len(figures), f"{path.name} prints little:\n{printed}"
    # A frame is printed whole: pandas cuts the columns of a wide one to fit 80 characters
    # wherever standard output is not a terminal, and says so with "[N rows x M columns]".
    cut = re.findall(r"^\[\d+ rows x \d+ columns\]$", printed, flags=re.M)
    assert not cut, f"{path.name} prints frames cut short ({cut}):\n{printed}"
