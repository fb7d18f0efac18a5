"""A setting can be named: ``label`` from Python, a TOML key, a sweep's ``[[settings]]`` and the
command line's ``--setting-label``; two pools at the same budget then fit in one result."""

from __future__ import annotations

import json

import pytest

import agents
import mlcb
from mlcb.config.toml import load_toml

FIELDS = dict(preset="trap", budget=2, horizon=300, replications=2, seed=0)


def test_two_pools_at_the_same_budget_concatenate_when_named():
    ucb = mlcb.simulate(experts=[agents.make("ucb1")] * 10, label="UCB1 pool", **FIELDS)
    kl = mlcb.simulate(experts=[agents.make("kl-ucb")] * 10, label="KL-UCB pool", **FIELDS)
    both = mlcb.Result.concat([ucb, kl])
    assert both.settings == ["UCB1 pool", "KL-UCB pool"]
    assert set(both.summary()["setting"]) == {"UCB1 pool", "KL-UCB pool"}
    assert both.metadata["settings"]["KL-UCB pool"]["config"]["label"] == "KL-UCB pool"
    with pytest.raises(ValueError, match="distinct labels"):
        mlcb.Result.concat([mlcb.simulate(**FIELDS), mlcb.simulate(**{**FIELDS, "seed": 1})])


def test_a_label_names_the_setting_and_changes_none_of_its_numbers():
    plain = mlcb.simulate(**FIELDS)
    named = mlcb.simulate(label="mine", **FIELDS)
    assert plain.settings == ["mlcb M=2"] and named.settings == ["mine"]
    assert (plain.curves["regret"].to_numpy() == named.curves["regret"].to_numpy()).all()
    config = mlcb.presets.get("trap").config(2)
    assert config.key() == config.replace(label="mine").key()


def test_the_default_label_follows_a_copys_policy_and_budget_a_given_one_stays():
    config = mlcb.presets.get("trap").config(2)
    assert config.replace(budget=4).label == "mlcb M=4"
    assert config.replace(policy="round-robin").label == "round-robin M=2"
    import dataclasses

    assert dataclasses.replace(config, budget=1).label == "mlcb M=1"
    assert config.replace(label="mine").replace(budget=4).label == "mine"


@pytest.mark.parametrize(
    "bad", ["", "   ", "a\nb", "tab\there", "esc\x1b[31m", "x" * 121, 3, ["a"], b"bytes"]
)
def test_a_bad_label_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="label must be 1 to 120 printable characters"):
        mlcb.simulate(label=bad, **FIELDS)


def test_a_toml_label_names_each_budget(tmp_path):
    path = tmp_path / "pool.toml"
    path.write_text(
        'label = "wide UCB"\nbudget = [1, 2]\nhorizon = 100\n[[experts]]\nfamily = "ucb1"\ncount = 10\n'
    )
    _, configs = load_toml(path)
    assert [c.label for c in configs] == ["wide UCB M=1", "wide UCB M=2"]
    path.write_text(
        'label = "wide UCB"\nbudget = 2\nhorizon = 100\n[[experts]]\nfamily = "ucb1"\ncount = 10\n'
    )
    assert load_toml(path).configs[0].label == "wide UCB"


def test_the_command_line_names_settings(tmp_path):
    code = mlcb.cli.main(
        ["run", "trap", "--budget", "1", "2", "-T", "200", "-R", "2", "--setting-label", "mine", "--out",
         str(tmp_path), "--no-plot", "-q"]
    )  # fmt: skip
    assert code == 0
    assert mlcb.load(tmp_path / "trap").settings == ["mine M=1", "mine M=2"]
    code = mlcb.cli.main(
        ["compare", "trap", "--budget", "1", "-T", "200", "-R", "2", "--setting-label", "mine", "--out",
         str(tmp_path), "--no-plot", "-q"]
    )  # fmt: skip
    assert code == 0
    settings = mlcb.load(tmp_path / "trap-comparison").settings
    assert settings and all(s.startswith("mine: ") for s in settings)


def test_compare_prefixes_every_setting_with_the_label():
    result = mlcb.compare("trap", [("mlcb", (1,)), ("round-robin", (1,))], horizon=200, replications=2,
                          label="pool A")  # fmt: skip
    assert result.settings == ["pool A: mlcb M=1", "pool A: round-robin M=1"]


def test_a_sweep_setting_names_itself(tmp_path):
    from mlcb.sweeps.grid import make_grid

    grid = make_grid(
        {"preset": "trap", "horizon": 200, "replications": 2,
         "settings": [{"budget": 1, "label": "one"}, {"budget": 2}]}
    )  # fmt: skip
    assert [s.label for s in grid.settings] == ["one", "mlcb M=2"]
    with pytest.raises(ValueError, match="label must be"):
        make_grid({"preset": "trap", "settings": [{"budget": 1, "label": "a\nb"}]})
    path = tmp_path / "grid.toml"
    path.write_text(
        'preset = "trap"\nhorizon = 200\nreplications = 2\n[[settings]]\nbudget = 1\nlabel = "one"\n'
        '[[settings]]\nbudget = 2\nlabel = "two"\n'
    )
    assert mlcb.cli.main(["sweep", str(path), "--out", str(tmp_path / "out"), "-q"]) == 0
    swept = mlcb.sweeps.load(tmp_path / "out" / "grid")
    assert sorted(swept.settings) == ["one", "two"]
    assert json.loads((tmp_path / "out" / "grid" / "sweep.json").read_text())
