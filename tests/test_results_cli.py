"""Result frames, storage, resume after an interruption, and the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import mlcb
from mlcb import engine
from mlcb.cli import main
from mlcb.results import SETTING_COLUMNS, Result


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
    assert meta["certificate_valid"] is True
    assert mlcb.SimulationConfig.from_dict(meta["config"]).experts[0].family == 1
    assert set(result.metadata["versions"]) >= {"mlcb", "numpy", "numba", "python"}


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

    monkeypatch.setattr(engine, "run_replication", counting)
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
    config = mlcb.SimulationConfig.from_dict(result.metadata["settings"]["mlcb M=2"]["config"])
    assert config.experts[2].c == 1.5


def test_cli_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("trap", "glm", "mlcb-topm", "epsilon-greedy", "ogd", "mlcb/Trap-v0", "mlcb/GLM-v0"):
        assert name in out
