"""Result frames, storage, resume after an interruption, and the command line."""

from __future__ import annotations

import builtins
import importlib
import json
import os
import sys

import numpy as np
import pandas as pd
import pytest

import mlcb
from mlcb import engine, plot, presets
from mlcb.cli import main
from mlcb.storage.results import SETTING_COLUMNS, Result
from mlcb.theory.worst_case import worst_case_curve


@pytest.fixture(scope="module")
def result():
    return Result.concat(
        [mlcb.simulate(preset="trap", budget=m, horizon=3_000, replications=3, seed=5) for m in (1, 2)]
    )


def test_frames_are_tidy(result):
    curves, experts, reps = result.curves, result.experts, result.replications
    assert list(curves.columns[:4]) == SETTING_COLUMNS
    assert set(curves.columns) >= {
        "replication",
        "round",
        "regret",
        "pseudo_regret",
        "top_m_regret",
        "certificate",
    }
    n_points = curves.groupby(["setting", "replication"]).size()
    assert n_points.nunique() == 1
    assert len(experts) == len(curves) * 10
    assert len(reps) == 6 and set(reps["best_expert"]) == {0}
    final = experts[experts["round"] == 3_000]
    totals = final.groupby(["budget", "replication"])["trained"].sum().reset_index()
    assert np.all(totals["trained"] == 10 + totals["budget"] * 3_000)
    assert result.settings == ["mlcb M=1", "mlcb M=2"]


def test_summary(result):
    table = result.summary()
    assert table["setting"].tolist() == ["mlcb M=1", "mlcb M=2"]
    assert np.all(table["rounds"] == 3_000) and np.all(table["replications"] == 3)
    assert np.all((table["best_deployed_share"] >= 0) & (table["best_deployed_share"] <= 1))
    final = result.final()
    expected = final[final["setting"] == "mlcb M=2"]["pseudo_regret"].mean()
    assert table.loc[1, "pseudo_regret"] == pytest.approx(expected)


def test_metadata_records_the_setting(result):
    meta = result.metadata["settings"]["mlcb M=2"]
    assert meta["config"]["budget"] == 2 and meta["config"]["calibration"] == "theory"
    assert meta["certificate_valid"] is True and meta["heuristic_experts"] == []
    assert meta["family"] == "bandit"
    assert meta["config"]["experts"][0] == {
        "class": "agents.bandits:EpsilonGreedy",
        "c": 1.0,
        "alpha": 2 / 3,
        "rate": "theory",
        "rate_coef": 0.5,
        "rate_scale": 1.0,
    }
    assert set(result.metadata["versions"]) >= {"mlcb", "numpy", "numba", "python"}


def test_metadata_records_the_worst_case_curve(result):
    from mlcb import theory
    from mlcb.contracts import family_of

    meta = result.metadata["settings"]["mlcb M=2"]
    curve = meta["theory"]
    assert curve["rounds"][0] == 10 and curve["rounds"][-1] == 3_000
    assert all(isinstance(t, int) for t in curve["rounds"]) and len(curve["worst_case"]) == len(
        curve["rounds"]
    )
    # The same numbers as the direct O(K T) computation over all experts.
    config = mlcb.SimulationConfig(**{**meta["config"], "experts": presets.get("trap").config(2).experts})
    env, experts = engine.build(config).env, list(config.experts)
    n = np.arange(1, 3_001)
    widths = theory.confidence_width(
        n, 10, config.delta, family_of(experts).rates(experts, env, n, config.delta / 20)
    )
    direct = [theory.numeric_worst_case(widths[:, :t], 0, 2) for t in curve["rounds"]]
    np.testing.assert_allclose(curve["worst_case"], direct, rtol=1e-12)
    final = result.final()
    assert final[final["setting"] == "mlcb M=2"]["certificate"].max() <= curve["worst_case"][-1]


def test_no_worst_case_curve_for_data_dependent_rates():
    from agents.bandits import BANDITS, UCB1

    env = engine.build(mlcb.SimulationConfig(experts=(UCB1(),) * 10)).env
    assert worst_case_curve(BANDITS, [UCB1(c=0.25, rate="authors")] * 10, env, 0.1, 2, 1_000, 0) is None
    assert worst_case_curve(BANDITS, [UCB1()] * 10, env, 0.1, 2, 3_000_000, 0) is None
    authors = mlcb.simulate(preset="trap", calibration="authors", budget=2, horizon=500, replications=1)
    meta = authors.metadata["settings"]["mlcb M=2"]
    assert meta["theory"] is None and meta["certificate_valid"] is False
    assert meta["heuristic_experts"] == list(range(10))
    plot.regret(authors)  # no curve to draw, nothing to say


def test_a_result_is_read_and_drawn_without_importing_or_calling_what_it_names(result, tmp_path, monkeypatch):
    """Metadata is data: a class that does not exist and an ``os:system`` entry are never touched."""
    import matplotlib

    matplotlib.use("Agg")
    path = result.save(tmp_path / "run")
    marker = tmp_path / "called"
    meta = json.loads((path / "metadata.json").read_text())
    for setting in meta["settings"].values():
        setting["config"]["experts"][0]["class"] = "no_such_module_mlcb:NoSuchExpert"
        setting["config"]["experts"][1] = {"class": "os:system", "command": f"touch {marker}"}
        setting["config"]["env"] = "os:system"
        setting["family"] = "no_such_module_mlcb:Family"
    (path / "metadata.json").write_text(json.dumps(meta))

    asked = []
    real_import, real_import_module = builtins.__import__, importlib.import_module

    def watch_import(name, *args, **kwargs):
        asked.append(name)
        return real_import(name, *args, **kwargs)

    def watch_import_module(name, *args, **kwargs):
        asked.append(name)
        return real_import_module(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", watch_import)
    monkeypatch.setattr(importlib, "import_module", watch_import_module)
    monkeypatch.setattr(os, "system", lambda command: asked.append(("os.system", command)))
    loaded = mlcb.load(path)
    loaded.summary()
    plot.regret(loaded)
    plot.panels(loaded)
    assert main(["plot", str(path), "--out", str(tmp_path / "figures")]) == 0
    monkeypatch.undo()
    assert (tmp_path / "figures" / "regret.png").is_file()
    assert not marker.exists()
    assert not any(isinstance(name, tuple) for name in asked)  # os.system never called
    assert not [name for name in asked if str(name).startswith("no_such_module_mlcb")]
    assert "no_such_module_mlcb" not in sys.modules


def test_the_printed_summary_reads_the_same_in_every_row(capsys):
    """Each column in one form (the seconds with one decimal in every row, never ``35`` above
    ``5.050``), and a dash, not NaN, under PR > Delta for a policy without a certificate."""

    from mlcb.cli.output import NO_NUMBER, print_summary

    mixed = mlcb.Result.concat(
        [
            mlcb.simulate(preset="trap", budget=2, horizon=300, replications=2),
            mlcb.simulate(preset="trap", policy="round-robin", budget=2, horizon=300, replications=2),
        ]
    )
    mixed.metadata["settings"]["mlcb M=2"]["seconds"] = 35.0
    mixed.metadata["settings"]["round-robin M=2"]["seconds"] = 5.05
    print_summary(mixed, 40.05)
    lines = capsys.readouterr().out.splitlines()
    header, certified, uncertified = lines[1], lines[2], lines[3]
    assert header.split()[-1] == "seconds" and "NaN" not in "".join(lines)
    assert certified.split()[-1] == "35.0" and uncertified.split()[-1] == "5.0"  # (5.05 rounds to even)
    assert uncertified.split()[-2] == NO_NUMBER and certified.split()[-2] == "0.000"
    assert len({len(line) for line in lines[1:4]}) == 1  # aligned


def test_figures_default_to_pseudo_regret_where_recorded(result):
    assert plot.default_metric(result) == "pseudo_regret"
    ax = plot.regret(result).ax
    assert ax.get_ylabel() == "pseudo-regret" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="metric must be one of"):
        plot.regret(result, metric="loss")


def test_save_and_load_round_trip(result, tmp_path):
    path = result.save(tmp_path / "run")
    again = mlcb.load(path)
    for name in ("curves", "experts", "replications"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(again, name))
    assert again.metadata == json.loads(json.dumps(result.metadata, default=str))
    with pytest.raises(FileNotFoundError, match="not a saved mlcb result"):
        mlcb.load(tmp_path)


def test_concat_refuses_duplicate_settings(result):
    with pytest.raises(ValueError, match="setting 'mlcb M=1' appears twice"):
        Result.concat([result, result])


def test_concat_takes_a_list_of_results_only(result):
    """``Result.concat(result)`` was "'Result' object is not iterable", and a non-result in the list
    an AttributeError on .metadata."""
    with pytest.raises(ValueError, match="results must be a non-empty list of Result objects"):
        Result.concat(result)
    with pytest.raises(ValueError, match=r"results\[1\] must be a Result, got int"):
        Result.concat([result, 3])
    assert Result.concat((result,)).settings == result.settings


def test_interrupted_run_resumes_from_parts(tmp_path, monkeypatch):
    full = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=4, parts=tmp_path)
    parts = sorted(tmp_path.rglob("replication-*.npz"))
    assert len(parts) == 4
    parts[2].unlink()  # as if the run had stopped before finishing replication 2
    ran = []
    original = engine.run_replication

    def counting(problem, seed, replication, horizon, *args, **kwargs):
        if horizon == 2_000:  # not the one-round compile warm-up
            ran.append(replication)
        return original(problem, seed, replication, horizon, *args, **kwargs)

    monkeypatch.setattr(engine.replications, "run_replication", counting)
    resumed = mlcb.simulate(preset="trap", budget=2, horizon=2_000, replications=4, parts=tmp_path)
    assert ran == [2]
    pd.testing.assert_frame_equal(full.curves, resumed.curves)


def test_cli_run_writes_results_and_figures(tmp_path, capsys):
    code = main(
        [
            "run",
            "trap",
            "--budget",
            "1",
            "4",
            "--horizon",
            "3000",
            "--replications",
            "2",
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "mlcb M=1" in out and "mlcb M=4" in out and "pseudo-regret" in out
    folder = tmp_path / "trap"
    for name in (
        "curves.parquet",
        "experts.parquet",
        "replications.parquet",
        "metadata.json",
        "regret.png",
        "panels.png",
    ):
        assert (folder / name).is_file()
    assert not (folder / ".parts").exists()
    loaded = mlcb.load(folder)
    assert sorted(loaded.curves["budget"].unique()) == [1, 4]
    assert main(["plot", str(folder), "--out", str(tmp_path / "figures")]) == 0
    assert (tmp_path / "figures" / "regret.png").is_file()


def test_cli_runs_a_toml_setting(tmp_path, capsys):
    path = tmp_path / "small.toml"
    path.write_text(
        'env = "mlcb/BanditExperts-v0"\n'
        "budget = [1, 2]\nhorizon = 1500\nreplications = 2\nseed = 3\n"
        "[env_params]\nreward_means = [[0.2, 0.4], [0.3, 0.5], [0.6, 0.1]]\n"
        '[[experts]]\nfamily = "ucb1"\ncount = 2\n'
        '[[experts]]\nfamily = "epsilon-greedy"\nc = 1.5\n'
    )
    assert main(["run", str(path), "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    result = mlcb.load(tmp_path / "small")
    assert result.settings == ["mlcb M=1", "mlcb M=2"]
    experts = result.metadata["settings"]["mlcb M=2"]["config"]["experts"]
    assert experts[2]["class"] == "agents.bandits:EpsilonGreedy" and experts[2]["c"] == 1.5


def test_cli_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("trap", "glm", "mlcb-topm", "epsilon-greedy", "ogd", "mlcb/Trap-v0", "mlcb/GLM-v0"):
        assert name in out


def _sections(text):
    """``mlcb list``'s output as {section: its lines}: a section starts at a line not indented."""
    sections: dict[str, list[str]] = {}
    for line in text.splitlines():
        if not line.startswith(" "):
            name = line.partition(" ")[0].rstrip(":")
        sections.setdefault(name, []).append(line)
    return sections


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["policies"], ["policies"]),
        (["Policy"], ["policies"]),
        (["writers", "preset"], ["presets", "writers"]),
    ],
)
def test_cli_list_prints_the_sections_named(capsys, words, expected):
    """``mlcb list SECTION ...`` prints those sections of the whole listing, in its order."""
    assert main(["list"]) == 0
    whole = _sections(capsys.readouterr().out)
    assert list(whole) == ["presets", "policies", "experts", "environments", "figures", "writers"]
    assert main(["list", *words]) == 0
    assert _sections(capsys.readouterr().out) == {name: whole[name] for name in expected}


def test_cli_list_refuses_an_unknown_section(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["list", "polcies"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert (
        "unknown section 'polcies'; sections: presets, policies, experts, environments, figures, writers"
        in err
    )


def test_certificate_violation_is_nan_where_the_pseudo_regret_is_not_recorded():
    pytest.importorskip("river")
    real = mlcb.simulate(preset="phishing", budget=1, horizon=40, replications=2, seed=0)
    assert real.final()["pseudo_regret"].isna().all()  # real data: no expected losses
    assert real.replications["certificate_violated"].isna().all()
    assert real.summary()["certificate_violations"].isna().all()
    bandit = mlcb.simulate(preset="trap", budget=1, horizon=200, replications=2, seed=0)
    assert bandit.replications["certificate_violated"].isin([0.0, 1.0]).all()


def test_largest_sums_of_sorted_rows_match_the_plain_selection():
    """The bisection on float bits (rows non-increasing, >= 0) gives the same sums as the plain
    weighted selection, at every scale (bit patterns past 2.0 overflow a naive midpoint), with
    ties and multiplicities."""
    from mlcb.theory.worst_case import _largest_sum, _largest_sums_of_sorted

    rng = np.random.default_rng(7)
    for trial in range(60):
        n_rows, length = int(rng.integers(1, 8)), int(rng.integers(1, 200))
        rows = rng.random((n_rows, length)) * 10.0 ** rng.integers(-3, 6)
        if trial % 3 == 0:
            rows = np.round(rows, 1)  # ties within and across rows
        rows = -np.sort(-rows, axis=1)
        multiplicity = rng.integers(1, 4, n_rows)
        rounds = np.unique(rng.integers(1, length + 1, 5))
        budget = int(rng.integers(1, 4))
        sizes = [min(budget * int(t), int(multiplicity.sum()) * int(t)) for t in rounds]
        fast = _largest_sums_of_sorted(rows, multiplicity, rounds, sizes)
        plain = [_largest_sum(rows[:, :t], multiplicity, size) for t, size in zip(rounds, sizes)]
        np.testing.assert_allclose(fast, plain, rtol=1e-12)


def test_every_figure_returns_a_seaborn_grid_and_draws_into_axes_given(result):
    """Each figure function returns seaborn's FacetGrid (to restyle); given Axes of one's own (a
    panel of a larger figure) with the one keyword ``ax``, it draws there, leaves the figure's
    layout to its owner and returns the axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    for draw in (plot.regret, plot.panels, plot.theory, plot.budget):
        alone = draw(result)
        assert isinstance(alone, sns.FacetGrid)
        count = sum(ax.axison for ax in alone.figure.axes)  # the panels it draws
        assert count >= 1
        plt.close(alone.figure)
        figure, axes = plt.subplots(1, count + 1, figsize=(4 * (count + 1), 3))
        given = axes[0] if draw is plot.regret else axes[:count]
        drawn = draw(result, ax=given)
        assert (drawn is given) if draw is plot.regret else list(drawn) == list(given)
        assert all(ax.has_data() for ax in axes[:count]) and not axes[count].has_data()
        plt.close(figure)
    with pytest.raises(ValueError, match="ax must be a sequence of at least 3 matplotlib Axes"):
        plot.panels(result, ax=[None])


def test_a_result_shows_itself_compactly(result):
    """One line as ``repr``; in a notebook an HTML summary with a row per setting, well formed."""
    from html.parser import HTMLParser

    text = repr(result)
    assert "\n" not in text and text.startswith("Result(") and len(text) < 300
    page = result._repr_html_()
    opened: list[str] = []

    class Checker(HTMLParser):
        def handle_starttag(self, tag, attrs):
            opened.append(tag)

        def handle_endtag(self, tag):
            assert opened.pop() == tag

    Checker().feed(page)
    assert not opened
    for setting in result.settings:
        assert f"<td>{setting}</td>" in page
    assert page.count("<tr") == len(result.settings) + 1  # the header and a row per setting


# --- issue 36, item 12: results read from files are validated ---------------------------------------
def _edit_frame(path, name: str, edit) -> None:
    file = path / f"{name}.parquet"
    frame = pd.read_parquet(file)
    frame = edit(frame)
    frame.to_parquet(file, index=False)


def _deep_metadata(path) -> None:
    meta = json.loads((path / "metadata.json").read_text())
    text = json.dumps(meta)
    (path / "metadata.json").write_text(text[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda p: _edit_frame(
                p, "curves", lambda f: f.assign(regret=f["regret"].where(f.index != 3, np.nan))
            ),
            "curves.parquet: column 'regret' must hold values finite, got nan in row 3 (setting 'mlcb M=1')",
        ),
        (
            lambda p: _edit_frame(
                p, "curves", lambda f: f.assign(regret=f["regret"].where(f.index != 0, np.inf))
            ),
            "curves.parquet: column 'regret' must hold values finite, got inf in row 0",
        ),
        (
            lambda p: _edit_frame(
                p, "curves", lambda f: f.assign(certificate=f["certificate"].where(f.index != 5, -np.inf))
            ),
            "curves.parquet: column 'certificate' must hold values >= 0 or nan, got -inf in row 5",
        ),
        (
            lambda p: _edit_frame(p, "curves", lambda f: f.assign(round=f["round"].where(f.index != 2, -7))),
            "curves.parquet: column 'round' must hold values >= 1, got -7 in row 2",
        ),
        (
            lambda p: _edit_frame(
                p, "experts", lambda f: f.assign(trained=f["trained"].where(f.index != 1, -1))
            ),
            "experts.parquet: column 'trained' must hold values >= 0, got -1 in row 1",
        ),
        (
            lambda p: _edit_frame(p, "replications", lambda f: f.assign(certificate_violated=0.5)),
            "replications.parquet: column 'certificate_violated' must hold values 0, 1 or nan, got 0.5 in row 0",
        ),
        (
            lambda p: _edit_frame(p, "curves", lambda f: f.iloc[:0]),
            "curves.parquet: no rows; a saved frame holds at least one",
        ),
        (
            lambda p: _edit_frame(p, "curves", lambda f: f.iloc[:-1]),
            "curves.parquet: setting 'mlcb M=2' has 239 rows, expected 3 replication(s) x 80 checkpoint(s) = 240",
        ),
        (
            lambda p: _edit_frame(p, "experts", lambda f: f.iloc[:-10]),
            "experts.parquet: setting 'mlcb M=2' has 2390 rows, expected 2400",
        ),
        (
            lambda p: _edit_frame(p, "replications", lambda f: f.iloc[1:]),
            "replications.parquet: setting 'mlcb M=1' has 2 rows, expected one per replication",
        ),
        (
            lambda p: _edit_frame(
                p, "curves", lambda f: f[~((f["setting"] == "mlcb M=1") & (f["replication"] == 2))]
            ),
            "curves.parquet: setting 'mlcb M=1' holds 2 replication(s), its metadata says 3",
        ),
        (_deep_metadata, "metadata.json: not readable JSON (nested too deep)"),
    ],
    ids=[
        "nan-regret",
        "inf-regret",
        "inf-certificate",
        "negative-round",
        "negative-count",
        "violation-not-0-or-1",
        "zero-rows",
        "curves-row-missing",
        "experts-rows-missing",
        "replication-row-missing",
        "replications-disagree-with-metadata",
        "deep-metadata",
    ],
)
def test_a_hand_edited_result_is_refused_in_one_line_naming_file_and_column(
    result, tmp_path, capsys, damage, message
):
    path = result.save(tmp_path / "run")
    damage(path)
    with pytest.raises(ValueError) as caught:
        mlcb.load(path)
    assert message in str(caught.value)
    for command in (["show", str(path)], ["plot", str(path), "--out", str(tmp_path / "figures")]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_show_escapes_control_characters_from_the_files(result, tmp_path, capsys):
    """What a result's files hold is shown, never acted on by the terminal: an escape sequence in a
    setting's label, its key or the metadata comes out escaped."""
    path = result.save(tmp_path / "run")
    evil = "mlcb M=1\x1b[2J\x1b]0;owned\x07\r\u202e"
    for name in ("curves", "experts", "replications"):
        _edit_frame(path, name, lambda f: f.assign(setting=f["setting"].replace("mlcb M=1", evil)))
    meta = json.loads((path / "metadata.json").read_text())
    meta["settings"][evil] = meta["settings"].pop("mlcb M=1")
    meta["settings"][evil]["key"] = "\x1b[31mred"
    meta["git_revision"] = "abc\x1b[0m\nforged line"
    (path / "metadata.json").write_text(json.dumps(meta))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\r\u202e")
    assert "mlcb M=1\\x1b[2J\\x1b]0;owned\\x07\\r\\u202e" in out
    assert "git revision: abc\\x1b[0m\\nforged line" in out


def test_plot_out_onto_a_file_is_one_line(result, tmp_path, capsys):
    path = result.save(tmp_path / "run")
    (tmp_path / "afile").write_text("mine")
    assert main(["plot", str(path), "--out", str(tmp_path / "afile")]) == 2
    assert capsys.readouterr().err == (
        f"mlcb: error: --out {tmp_path / 'afile'} is a file, not a directory; give a folder for the figures\n"
    )
    assert (tmp_path / "afile").read_text() == "mine"


def test_plot_replaces_a_figure_only_where_mlcb_wrote_it(result, tmp_path, capsys):
    """A user's own ``regret.png`` in the ``--out`` folder is refused by name and left as it was,
    before any figure is drawn; mlcb's own figures there (marked in their PNG text) and the
    figures of a result's folder are drawn again."""
    from mlcb.report import FIGURE_MARK, png_text

    path = result.save(tmp_path / "run")
    figures = tmp_path / "figures"
    assert main(["plot", str(path), "--out", str(figures)]) == 0
    assert png_text(figures / "regret.png")[FIGURE_MARK[0]] == FIGURE_MARK[1]
    assert main(["plot", str(path), "--out", str(figures)]) == 0  # mlcb's own: replaced

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "panels.png").write_bytes(b"\x89PNG\r\n\x1a\n my own figure")
    capsys.readouterr()
    assert main(["plot", str(path), "--out", str(mine)]) == 2
    assert capsys.readouterr().err == (
        f"mlcb: error: {mine / 'panels.png'}: a file mlcb did not write (no mlcb mark in it), where the "
        "panels figure goes; move it away or give another --out\n"
    )
    assert sorted(p.name for p in mine.iterdir()) == ["panels.png"]  # nothing drawn, nothing lost
    assert (mine / "panels.png").read_bytes() == b"\x89PNG\r\n\x1a\n my own figure"

    (path / "regret.png").write_bytes(b"drawn by an mlcb without the mark")
    assert main(["plot", str(path)]) == 0  # a result's folder: its figures are mlcb's
    assert png_text(path / "regret.png")[FIGURE_MARK[0]] == FIGURE_MARK[1]


# --- issue 46, item 7: hostile text in figures and reports ------------------------------------------
def _relabelled(result, tmp_path, label: str):
    """``result`` saved with its first setting's label replaced by ``label`` (a hand-edited file)."""
    path = result.save(tmp_path / "run")
    for name in ("curves", "experts", "replications"):
        _edit_frame(path, name, lambda f: f.assign(setting=f["setting"].replace("mlcb M=1", label)))
    meta = json.loads((path / "metadata.json").read_text())
    meta["settings"][label] = meta["settings"].pop("mlcb M=1")
    (path / "metadata.json").write_text(json.dumps(meta))
    return path


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("mlcb M=1\x1b[2J\x1b]0;owned\x07\r\u202e", r"mlcb M=1\x1b[2J\x1b]0;owned\x07\r\u202e"),
        ("cost $x^$ and $$", "cost $x^$ and $$"),  # matplotlib read it as mathematics, and failed
        ("\u0007bell\x9b31m\ufeff", r"\x07bell\x9b31m\ufeff"),
        # Characters the figures' font lacks: once an empty box each and a warning per character
        # and figure; the page shows them as they are, the figures as their escapes.
        ("M=1 \u65e5\u672c\u8a9e \u2713 \U0001f600", "M=1 \u65e5\u672c\u8a9e \u2713 \U0001f600"),
    ],
)
def test_report_and_plot_show_a_hostile_label_escaped_without_a_warning(
    result, tmp_path, capsys, label, shown
):
    """``mlcb report`` printed matplotlib's glyph warnings carrying the label's raw escape bytes
    (a ``$`` pair in a label stopped the figure). Figures and the page show such a label with its
    control characters escaped, and nothing reaches the terminal raw."""
    import warnings

    path = _relabelled(result, tmp_path, label)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["report", str(path), "--out", str(tmp_path / "report.html")]) == 0
        assert main(["plot", str(path), "--out", str(tmp_path / "figures")]) == 0
    err = capsys.readouterr().err
    assert not [str(w.message) for w in caught if "Glyph" in str(w.message) or "mathtext" in str(w.message)]
    assert not any(ord(c) < 32 and c != "\n" for c in err) and "\u202e" not in err
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert shown in page and (label == shown or label not in page)
    assert (tmp_path / "figures" / "regret.png").stat().st_size > 0


def test_any_warning_is_shown_with_its_control_characters_escaped():
    """A library's warning quoting text from a user's file (matplotlib's 'Glyph 27 (\\x1b) missing
    from font(s)') never acts on the terminal: the warning's text is shown escaped, its line
    breaks kept."""
    import warnings

    import mlcb.errors  # noqa: F401  (installs the formatter)

    text = warnings.formatwarning("Glyph 27 (\x1b) missing\nfrom font(s)", UserWarning, "plot.py", 3)
    assert "\x1b" not in text and r"Glyph 27 (\x1b) missing" in text and "\nfrom font(s)" in text
