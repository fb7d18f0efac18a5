"""Figures and writers are registered like policies and experts (mlcb.storage.outputs): what a
registration refuses, what the store counts as mlcb's own, and what a writer must do."""

from __future__ import annotations

import re

import pytest

import mlcb
from mlcb import plot, report
from mlcb.storage import outputs, store
from mlcb.validation import InputError

SMALL = {"budget": 2, "horizon": 300, "replications": 2}


@pytest.fixture
def registries():
    """The registries as they are, restored after the test."""
    saved = (dict(outputs.FIGURES._entries), dict(outputs.WRITERS._entries), dict(outputs._WRITER_FILES))
    yield
    outputs.FIGURES._entries.clear()
    outputs.FIGURES._entries.update(saved[0])
    outputs.WRITERS._entries.clear()
    outputs.WRITERS._entries.update(saved[1])
    outputs._WRITER_FILES.clear()
    outputs._WRITER_FILES.update(saved[2])


@pytest.fixture(scope="module")
def result():
    return mlcb.simulate(preset="trap", **SMALL)


def write_notes(result, directory):
    (directory / "notes.txt").write_text(f"{len(result.settings)} setting(s)\n")


def forget(result, directory):
    """A writer that writes nothing of what it declares."""


@pytest.mark.parametrize(
    ("name", "files", "message"),
    [
        ("Notes", ("notes.txt",), "writer name must be lower-case letters"),
        ("notes", ("../notes.txt",), "files must be plain file names, got '../notes.txt'"),
        ("notes", (".hidden",), "files must be plain file names, got '.hidden'"),
        ("notes", ("curves.parquet",), "'curves.parquet' is a file mlcb already writes"),
        ("notes", ("regret.png",), "'regret.png' is a file mlcb already writes"),
        ("notes", ("report.html",), "'report.html' is a file mlcb already writes"),
        ("notes", (), "files must name at least one file"),
    ],
)
def test_a_writer_registration_is_refused_in_one_line(registries, name, files, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        outputs.register_writer(name, "tests.test_outputs:write_notes", files=files)
    assert name not in outputs.WRITERS


def test_a_figure_name_must_name_a_file(registries):
    with pytest.raises(InputError, match="figure name must be lower-case letters"):
        plot.register("my figure/1", "mlcb.plot:regret")
    with pytest.raises(InputError, match="entry_point must look like 'module:attr'"):
        plot.register("mine", "mlcb.plot.regret")


def test_registered_files_are_mlcbs_own_and_nothing_else(registries, tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "mine.png").write_bytes(b"png")
    assert store.foreign_entries(tmp_path) == ["mine.png", "notes.txt"]
    outputs.register_writer("notes", "tests.test_outputs:write_notes", files=("notes.txt",))
    plot.register("mine", "mlcb.plot:regret")
    assert store.foreign_entries(tmp_path) == []
    assert {"notes.txt", "mine.png", "curves.csv", "regret.png", "report.html"} <= outputs.own_files()


def test_a_writer_writes_what_it_declares(registries, result, tmp_path):
    outputs.register_writer("notes", "tests.test_outputs:write_notes", files=("notes.txt",))
    written = outputs.write(result, tmp_path, ["notes", "csv"])
    assert [path.name for path in written] == ["notes.txt", "curves.csv", "experts.csv", "replications.csv"]
    assert (tmp_path / "notes.txt").read_text() == "1 setting(s)\n"
    outputs.register_writer("forgetful", "tests.test_outputs:forget", files=("forgotten.txt",))
    with pytest.raises(RuntimeError, match="writer 'forgetful' did not write forgotten.txt"):
        outputs.write(result, tmp_path, ["forgetful"])
    with pytest.raises(InputError, match="unknown writer 'xml'; registered writer names: csv"):
        outputs.write(result, tmp_path, ["xml"])


def test_the_csv_writer_writes_the_frames_as_they_are(result, tmp_path):
    import pandas as pd

    outputs.write(result, tmp_path, ["csv"])
    for frame in ("curves", "experts", "replications"):
        read = pd.read_csv(tmp_path / f"{frame}.csv")
        assert list(read.columns) == list(getattr(result, frame).columns)
        assert len(read) == len(getattr(result, frame))


def test_a_registered_figure_is_drawn_saved_and_embedded_with_its_summary(registries, result, tmp_path):
    plot.register("again", "mlcb.plot:regret", summary="the regret figure, registered again")
    assert "again" in plot.names() and "again" not in plot.KINDS
    assert plot.draw(result, "again").axes
    (path,) = report.save_figures(result, tmp_path, ["again"])
    assert path.name == "again.png" and path.read_bytes()[:4] == b"\x89PNG"
    page = report.render(result, "title", ("again",))
    assert 'id="figure-again"' in page and "the regret figure, registered again" in page
    with pytest.raises(InputError, match="kind must be one of"):
        plot.draw(result, "pie")


def test_a_figure_takes_a_result_or_its_folder_and_names_anything_else(result, tmp_path):
    """``plot.draw(3, "regret")`` was an AttributeError ('int' object has no attribute 'curves')."""
    folder = result.save(tmp_path / "run")
    for given in (folder, str(folder)):
        assert plot.draw(given, "regret").axes and plot.regret(given).axes
    for wrong in (3, None, [result]):
        message = "result must be a Result (mlcb.simulate, mlcb.load) or the folder of a saved one, got "
        with pytest.raises(TypeError, match=re.escape(message)):
            plot.draw(wrong, "regret")
    with pytest.raises(FileNotFoundError, match="no such folder"):
        plot.panels(tmp_path / "absent")


def test_figures_write_the_characters_their_font_lacks_as_escapes():
    """Two labels in a script the figures' font lacks were drawn as the same row of empty boxes:
    the figures' copy writes each such character as its escape, so the labels stay apart; what
    the font draws (accents, Greek, a check mark) and the page's copy are left as they are."""
    runs = [
        mlcb.simulate(preset="trap", budget=m, horizon=50, replications=1, label=label)
        for m, label in ((1, "日本 é α ✓"), (2, "中国 é α ✓"))
    ]
    result = mlcb.Result.concat(runs)
    from mlcb.plot._look import font_characters

    shown = outputs.displayable(result, figure=True, characters=font_characters())
    assert shown.settings == ["\\u65e5\\u672c é α ✓", "\\u4e2d\\u56fd é α ✓"]
    assert set(shown.curves["setting"]) == set(shown.settings)
    assert outputs.displayable(result) is result


@pytest.mark.parametrize(
    "family", [["sans-serif"], ["serif", "monospace"], ["DejaVu Serif", "sans"], ["NoSuch", "cursive"]]
)
def test_the_figures_font_files_are_the_ones_matplotlib_draws_with(family):
    """The fonts whose characters the figures keep are found with matplotlib's public calls
    (``findfont`` family by family): the same files as matplotlib's own fallback list, where
    this matplotlib has the private method that makes it."""
    import matplotlib as mpl
    from matplotlib import font_manager, rcParams

    from mlcb.plot._look import _font_files

    own = getattr(font_manager.fontManager, "_find_fonts_by_props", None)
    if own is None:
        pytest.skip("this matplotlib keeps no fallback list to compare with")
    with mpl.rc_context({"font.family": family}):
        expected = [str(path) for path in own(font_manager.FontProperties())]
        assert [str(path) for path in _font_files(font_manager, rcParams)] == expected
