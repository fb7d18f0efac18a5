"""Figures of every kind from a small saved sweep, `mlcb plot --kind`, and `mlcb report`: one
valid, self-contained HTML page holding every figure."""

from __future__ import annotations

import base64
import html.parser
import re
import xml.etree.ElementTree as ElementTree

import matplotlib
import numpy as np
import pytest

import mlcb
from mlcb import plot, sweeps
from mlcb.cli import main
from mlcb.report import report, settings_table

matplotlib.use("Agg")

GRID = {
    "preset": "trap",
    "name": "figs",
    "replications": 3,
    "block": 3,
    "checkpoints": 25,
    "grid": {"budget": [1, 2, 5], "n_experts": [6, 10], "horizon": [400, 4_000]},
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    outcome = mlcb.sweep(GRID, out=tmp_path_factory.mktemp("figs"), workers=2)
    return outcome.path


def legend_texts(drawn) -> list[str]:
    """Every legend entry of a figure (its own legend below the panels and the panels' legends),
    whitespace normalised (long entries are wrapped)."""
    figure = plot.figure_of(drawn)
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]


def test_every_kind_renders_from_the_saved_sweep(saved):
    import seaborn as sns

    result = sweeps.load(saved)  # figures from saved results only
    assert len(result.settings) == 12
    for kind in plot.KINDS:
        grid = plot.draw(result, kind)
        assert isinstance(grid, sns.FacetGrid), kind  # seaborn's object, to restyle
        figure = plot.figure_of(grid)
        axes = [ax for ax in figure.axes if ax.get_visible() and ax.axison]
        assert axes, kind
        for ax in axes:
            assert ax.get_xlabel() and ax.get_ylabel(), kind
            assert "_" not in ax.get_xlabel() + ax.get_ylabel(), kind  # words, not column names
        matplotlib.pyplot.close(figure)
    with pytest.raises(ValueError, match="kind must be one of"):
        plot.draw(result, "pie")


def test_a_log_axis_has_minor_ticks_only_while_it_spans_under_two_decades(saved):
    """Wide log axes are read by their decades (their minor ticks cost a run's figures a third of
    their time); a narrow one keeps its minor ticks, so that it still shows labelled values."""
    import matplotlib.pyplot as plt

    figure = plot.draw(sweeps.load(saved), "regret").figure
    figure.canvas.draw()
    ax = figure.axes[0]
    low, high = ax.get_xlim()
    assert high / low >= 100 and not ax.xaxis.get_minorticklocs().size
    plt.close(figure)

    figure, ax = plt.subplots()
    ax.plot([1, 2, 3], [30.0, 80.0, 200.0])
    plot._look.log_scale(ax, "y")
    figure.canvas.draw()
    assert ax.yaxis.get_minorticklocs().size >= 5
    low, high = ax.get_ylim()
    ticks = [(t.get_position()[1], t.get_text()) for t in ax.yaxis.get_ticklabels(minor=True)]
    ticks += [(t.get_position()[1], t.get_text()) for t in ax.yaxis.get_ticklabels()]
    shown = [text for value, text in ticks if text and low <= value <= high]
    assert len(shown) >= 2, ticks
    plt.close(figure)


def test_theory_figure_fits_the_last_decade_and_states_the_exponent(saved):
    result = sweeps.load(saved)
    grid = plot.theory(result, settings=["mlcb M=2 K=10 T=4000"])
    (ax,) = grid.axes.ravel()
    said = " ".join(text.get_text() for text in ax.texts)
    rows = result.curves[result.curves["setting"] == "mlcb M=2 K=10 T=4000"]
    mean = rows.groupby("round")["pseudo_regret"].mean()
    last = mean[mean.index >= 400]
    expected = np.polyfit(np.log(last.index.to_numpy(float)), np.log(last.to_numpy()), 1)[0]
    assert f"fitted slope {expected:.2f}" in said
    assert "exponent max(1/2, α) = 0.67 (α = 0.67)" in said
    assert "theorem's curve 0." in said
    texts = legend_texts(grid)
    assert {"certificate Δ(t)", "theorem's curve, unit constants", "fit over the last decade"} <= set(texts)
    assert "pseudo-regret: mean of the runs; thin lines: each of the 3 runs" in texts  # 3 runs: each drawn
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "mlcb M=2 K=10 T=4000" in ax.get_title()


def test_budget_figure_has_m_k_and_t_panels_with_the_theory_shape(saved):
    grid = plot.budget(sweeps.load(saved))
    axes = list(grid.axes.ravel())
    assert [ax.get_xlabel() for ax in axes] == [
        "budget M (experts trained per round)",
        "experts K",
        "horizon T",
    ]
    texts = [legend_texts(ax) for ax in axes]
    assert "theorem's shape √(K/M) + (K/M)^(1−α), scaled to each line" in texts[0]
    assert "theorem's curve in K, scaled to each line" in texts[1]
    assert "theorem's curve in T, scaled to each line" in texts[2]
    assert all("error bars: ± 2 standard errors of the mean" in t for t in texts)
    # Only the budgets a setting allows: M = 5 runs with K = 6 and K = 10.
    assert sorted(axes[0].get_xticks()) == [1, 2, 5]
    assert [label.get_text() for label in axes[2].get_xticklabels()] == ["400", "4,000"]  # the horizons run


def test_regret_legend_states_the_last_decade(saved):
    grid = plot.regret(sweeps.load(saved))
    texts = legend_texts(grid)
    assert sum("(slope " in t for t in texts) == 12
    assert "certificate Δ(t)" in texts
    assert "mean of the runs; no bands with over 4 settings" in texts


def test_plot_command_draws_the_kinds_asked(saved, tmp_path, capsys):
    assert main(["plot", str(saved), "--kind", "theory", "budget", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["budget.png", "theory.png"]
    for path in tmp_path.iterdir():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["plot", str(saved), "--kind", "regret", "pie", "--out", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("mlcb: error: unknown figure 'pie'; registered figure names:")
    assert not (tmp_path / "none").exists()  # refused before any figure is drawn


class _Checker(html.parser.HTMLParser):
    """Tags balance (void elements aside); collects images."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.images, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def check_page(text: str) -> list[dict]:
    assert text.startswith('<!DOCTYPE html>\n<html lang="en">')
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    # Well-formed as XML too (the doctype aside): nothing left open, every attribute quoted.
    ElementTree.fromstring(text.split("\n", 1)[1])
    assert not re.search(r"""(src|href)=["'](?!data:)""", text)  # nothing outside the page
    for image in checker.images:
        assert image["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(image["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    return checker.images


def test_report_of_a_sweep_is_valid_html_with_every_figure(saved, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["report", str(saved), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"report: {out}\n"
    text = out.read_text(encoding="utf-8")
    images = check_page(text)
    assert sorted(i["alt"] for i in images) == sorted(f"{kind} figure" for kind in plot.KINDS)
    assert text.count("<table>") == 2 and "mlcb M=5 K=10 T=4000" in text
    assert "<h2>Sweep</h2>" in text and "&quot;n_experts&quot;" in text


def test_report_of_a_run(tmp_path):
    result = mlcb.simulate(preset="trap", budget=2, horizon=800, replications=2, checkpoints=20)
    result.save(tmp_path / "run")
    path = report(tmp_path / "run")
    assert path == tmp_path / "run" / "report.html"
    images = check_page(path.read_text(encoding="utf-8"))
    assert len(images) == len(plot.KINDS)
    assert mlcb.load(tmp_path / "run").settings == ["mlcb M=2"]  # the report is part of the result


def test_report_errors_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("mlcb: error: ")


def test_a_report_never_replaces_a_file_mlcb_did_not_write(tmp_path, capsys):
    """Issue 36, item 3's neighbour: ``--out`` naming a file of one's own (or a link to one) is
    refused in one line and left as it was; a report mlcb wrote is replaced."""
    mlcb.simulate(preset="trap", budget=1, horizon=200, replications=1, checkpoints=5).save(tmp_path / "run")
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>")
    (tmp_path / "linked.html").symlink_to(mine)
    for target in (mine, tmp_path / "linked.html"):
        assert main(["report", str(tmp_path / "run"), "--out", str(target)]) == 2
        assert capsys.readouterr().err == (
            f"mlcb: error: --out {target} holds a file that is not an mlcb report; mlcb never replaces what it "
            "did not write: choose another name, or move it away\n"
        )
    assert mine.read_text() == "<p>my notes</p>"
    ours = report(tmp_path / "run", tmp_path / "ours.html")
    assert report(tmp_path / "run", ours) == ours  # its own report: replaced


def test_the_report_names_the_data_each_setting_streams_escaped(tmp_path):
    """A report of `mlcb compare ctg --data FILE --label COLUMN` was titled after the ctg preset and
    named no data: a reader could not tell the user's file from cardiotocography. Each setting
    names its environment and data; a hostile column name is text, never markup."""
    import pandas as pd

    from agents.classifiers import mixed_pool

    label = "<script>alert(1)</script>"
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["a", "b", "c"]).assign(
        **{label: np.arange(60) % 2}
    )
    frame.to_csv(tmp_path / "mine.csv", index=False)
    result = mlcb.simulate(
        env="mlcb/RealData-v0", env_params={"dataset": str(tmp_path / "mine.csv"), "label": label},
        experts=mixed_pool(4, 3), horizon=40, replications=2, checkpoints=5,
    )  # fmt: skip
    result.save(tmp_path / "run")
    text = report(tmp_path / "run").read_text(encoding="utf-8")
    check_page(text)
    cell = f"mlcb/RealData-v0: {tmp_path / 'mine.csv'}, label '{label}'"
    assert f"<td>{html.escape(cell)}</td>" in text and "<script" not in text
    trap = mlcb.simulate(preset="trap", budget=1, horizon=200, replications=1, checkpoints=5)
    assert list(settings_table(trap)["environment"]) == ["mlcb/Trap-v0"]
