"""Every tutorial runs, at a tiny size, and draws its figures.

The tutorials are Python scripts in ``docs/tutorials/`` (cells marked ``# %%``) that the site
renders as notebooks, executed when it is built. Each reads its size from the environment
variable ``MLCB_TUTORIAL_SIZE``: the pages show meaningful sizes, and this test sets it to
``tiny`` and runs each script as ``__main__`` (``runpy``), with every ``plt.show()`` saving the
figures it would show, so that a tutorial that fails or shows no figure fails here.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda path: path.stem)
def test_tutorial_runs_at_a_tiny_size_and_shows_figures(path, tmp_path, monkeypatch):
    if path.stem in NEEDS:
        pytest.importorskip(NEEDS[path.stem], reason=f"the tutorial needs {NEEDS[path.stem]}")
    source = path.read_text(encoding="utf-8")
    assert 'os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"' in source, "the tutorial must read its size"
    assert source.startswith("# %% [markdown]\n# # "), "a tutorial opens with a Markdown cell and its title"
    shown: list[Path] = []

    def show(*args, **kwargs):
        for number in plt.get_fignums():
            figure = plt.figure(number)
            assert any(ax.has_data() for ax in figure.axes), f"{path.name}: an empty figure"
            shown.append(tmp_path / f"{path.stem}-{len(shown) + 1}.png")
            figure.savefig(shown[-1], dpi=60)
        plt.close("all")

    monkeypatch.setenv("MLCB_TUTORIAL_SIZE", "tiny")
    monkeypatch.setattr(plt, "show", show)
    monkeypatch.chdir(tmp_path)  # whatever a tutorial writes lands here
    plt.close("all")
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
    assert shown, f"{path.name} shows no figure"
    assert all(png.stat().st_size > 0 for png in shown)
