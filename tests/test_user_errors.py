"""Every user error is one line, before any work: bad TOML files, command lines and API calls.

Through the command line: exit status 2, exactly one line on standard error starting
``mlcb: error:`` and naming the key, nothing written under ``--out``. Through the Python API: a
``ValueError`` or ``TypeError`` naming the parameter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import agents
import mlcb
from mlcb.cli import main
from mlcb.compare import comparison_configs
from mlcb.config import MAX_CHECKPOINTS, MAX_HORIZON, MAX_REPLICATIONS, SimulationConfig
from mlcb.engine import python_loop, replications

ROOT = Path(__file__).resolve().parents[1]

SETTING = """env = "mlcb/BanditExperts-v0"
horizon = 100
replications = 1
[env_params]
reward_means = [[0.5, 0.6], [0.5, 0.3]]
"""
EXPERTS = """[[experts]]
family = "ucb1"
count = 2
"""


def _expert(**keys: str) -> str:
    lines = "".join(f"{key} = {value}\n" for key, value in keys.items())
    return f"[[experts]]\n{lines}"


# (id, TOML text, extra command-line arguments, what the one line must contain)
TOML_CASES = [
    ("no-family", SETTING + _expert(count="2"), [], "experts[0]: each [[experts]] table needs a family"),
    *[
        (f"count-{name}", SETTING + _expert(family='"ucb1"', count=count), [], message)
        for name, count, message in [
            ("float", "2.7", "experts[0].count must be an integer >= 1, got 2.7"),
            ("negative", "-1", "experts[0].count must be an integer >= 1, got -1"),
            ("bool", "true", "experts[0].count must be an integer >= 1, got True"),
            ("huge", "10_000_000_000", "experts[0].count must be an integer in [1, 1_000_000]"),
        ]
    ],
    (
        "experts-strings",
        'experts = ["ucb1"]\n' + SETTING,
        [],
        "experts: the TOML file needs one or more [[experts]] tables",
    ),
    ("experts-missing", SETTING, [], "experts: the TOML file needs one or more [[experts]] tables"),
    (
        "experts-empty",
        "experts = []\n" + SETTING,
        [],
        "experts: the TOML file needs one or more [[experts]] tables",
    ),
    (
        "expert-unknown-param",
        SETTING + _expert(family='"ucb1"', count="2", bogus="1"),
        [],
        "experts[0]: UCB1 has no parameter 'bogus'; its parameters: c, rate, rate_coef, rate_scale",
    ),
    (
        "policy-unknown-param",
        'policy = "mlcb"\npolicy_params = {nope = 1}\n' + SETTING + EXPERTS,
        [],
        "policy_params: MLCB has no parameter 'nope'; its parameters: bonus_scale",
    ),
    (
        "policy-bad-param",
        'policy = "mlcb"\npolicy_params = {bonus_scale = -1}\n' + SETTING + EXPERTS,
        [],
        "policy_params: bonus_scale must be a finite number > 0, got -1",
    ),
    (
        "env-unknown-param",
        SETTING + "reward_mean = 1\n" + EXPERTS,
        [],
        "env_params: BanditExpertsEnv has no parameter 'reward_mean'; its parameters: reward_means, shuffle",
    ),
    *[
        (f"budget-{name}", f"budget = {budget}\n" + SETTING + EXPERTS, [], message)
        for name, budget, message in [
            (
                "empty",
                "[]",
                "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got []",
            ),
            (
                "repeated",
                "[1, 1]",
                "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got [1, 1] (repeated: 1)",
            ),
            (
                "string",
                '"2"',
                "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got '2'",
            ),
        ]
    ],
    (
        "budget-option-repeated",
        SETTING + EXPERTS,
        ["--budget", "2", "2"],
        "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got [2, 2]",
    ),
    (
        "name-int",
        "name = 5\n" + SETTING + EXPERTS,
        [],
        "name must be a plain file name (1 to 128 letters, digits, '-', '_', '.', not starting with '.'), got 5",
    ),
    ("name-traversal", 'name = "../../x"\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    ("name-absolute", 'name = "/tmp/x"\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    ("name-separator", 'name = "a/b"\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    ("name-backslash", 'name = "a\\\\b"\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    ("name-dotdot", 'name = ".."\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    ("name-hidden", 'name = ".x"\n' + SETTING + EXPERTS, [], "name must be a plain file name"),
    *[
        (name, SETTING.replace(old, new) + EXPERTS, [], message)
        for name, old, new, message in [
            (
                "ragged-reward-means",
                "[0.5, 0.3]]",
                "[0.5]]",
                "reward_means must be a rectangular (K, m) array",
            ),
            (
                "reward-means-text",
                "[0.5, 0.3]]",
                '["a", 0.3]]',
                "reward_means must be a rectangular (K, m) array",
            ),
            (
                "reward-means-infinite",
                "[0.5, 0.3]]",
                "[0.5, inf]]",
                "reward_means must lie in [0, 1] (Bernoulli reward probabilities), got inf at expert 1, arm 1",
            ),
            (
                "horizon-huge",
                "horizon = 100",
                "horizon = 9223372036854775807",
                "horizon must be an integer in [1, 10_000_000_000], got 9223372036854775807",
            ),
            (
                "horizon-float",  # (a whole number written 1e4 is taken: tests/test_errors.py)
                "horizon = 100",
                "horizon = 100.5",
                "horizon must be an integer >= 1, got 100.5",
            ),
            (
                "replications-huge",
                "replications = 1",
                "replications = 10_000_000",
                "replications must be an integer in [1, 1_000_000]",
            ),
        ]
    ],
    (
        "env-params-not-table",
        'env_params = 5\nenv = "mlcb/Trap-v0"\n' + _expert(family='"ucb1"', count="10"),
        [],
        "env_params must be a dict (a TOML table)",
    ),
    (
        "unknown-key",
        "bogus = 1\n" + SETTING + EXPERTS,
        [],
        "unknown key(s) 'bogus'; allowed keys: budget, calibration, checkpoints, delta, env, env_params, experts, horizon, label, name, policy",
    ),
    ("misspelt-table", SETTING + EXPERTS + "[env_param]\nx = 1\n", [], "unknown key(s) 'env_param'"),
    (
        "a-grid-given-to-run",  # a sweep grid's preset and [grid]: the message names both doors
        'preset = "trap"\nhorizon = 100\n[grid]\nbudget = [1, 2]\n',
        [],
        "unknown key(s) 'grid', 'preset'; allowed keys: budget, calibration, checkpoints, delta, env, "
        "env_params, experts, horizon, label, name, policy, policy_params, replications, seed, smoothing. "
        "A setting file names its environment and pool itself (env, env_params, [[experts]]); "
        "to start from a preset, run 'mlcb run PRESET' with options (--budget, --horizon, ...), "
        "or write a sweep grid (preset = ..., [grid]) and run 'mlcb sweep FILE'",
    ),
    (
        "checkpoints-huge",
        "checkpoints = 1_000_000_000\n" + SETTING + EXPERTS,
        [],
        "checkpoints must be an integer in [1, 100_000]",
    ),
    ("calibration-int", "calibration = 3\n" + SETTING + EXPERTS, [], "calibration must be a string"),
    (
        "calibration-control-codes",  # recorded and shown as a label is: checked as one
        'calibration = "a\\u001b[31mb"\n' + SETTING + EXPERTS,
        [],
        "calibration must be 1 to 120 printable characters (no line breaks, tabs or control codes), "
        "not blank, got 'a\\x1b[31mb'",
    ),
    (
        "calibration-option-on-a-file",  # was dropped without a word: the result said "custom"
        SETTING + EXPERTS,
        ["--calibration", "practical"],
        "calibration: --calibration picks a preset's constants; setting.toml is a setting file, which "
        "sets its own: write them in the file (policy_params, the experts' parameters) and name them "
        "with its calibration key",
    ),
    (
        "delta-below-a-normal-delta-prime",  # delta / 2K was 0: a ZeroDivisionError, a bug's traceback
        "delta = 5e-324\n" + SETTING + EXPERTS,
        [],
        "delta must be a number in (0, 1) whose delta / 2K is a normal float64 (the experts' rates are "
        "read there): at least 8.9e-308 for K = 2 experts, got 5e-324",
    ),
    (
        "seed-beyond-64-bits",  # was run and saved, and the result could not be read back
        "seed = 99999999999999999999999\n" + SETTING + EXPERTS,
        [],
        "seed must be a whole number within 64 bits (at most 2**63 - 1 = 9_223_372_036_854_775_807: a "
        "saved result holds no larger one), got 99999999999999999999999",
    ),
    (
        "expert-parameter-beyond-64-bits",
        SETTING + _expert(family='"epsilon-greedy"', count="2", c="99999999999999999999999"),
        [],
        "experts[0].c must be a whole number within 64 bits",
    ),
    (
        "smoothing-empty",  # was taken for the family's default
        'smoothing = ""\n' + SETTING + EXPERTS,
        [],
        "smoothing must be one of ('counts', 'average', 'uniform', 'last') for bandit experts, got ''",
    ),
    *[  # several budgets: the labels were " M=1", " M=2"
        (f"label-{name}-several-budgets", text + SETTING + EXPERTS, extra, message)
        for name, text, extra, message in [
            (
                "empty",
                'label = ""\nbudget = [1, 2]\n',
                [],
                "label must be 1 to 120 printable characters (no line breaks, tabs or control codes), "
                "not blank, got ''",
            ),
            ("option-blank", "", ["--setting-label", " ", "--budget", "1", "2"], "not blank, got ' '"),
            ("option-tab", "", ["--setting-label", "a\tb", "--budget", "1", "2"], "not blank, got 'a\\tb'"),
        ]
    ],
    ("not-toml", "horizon = = 1\n", [], "setting.toml: not valid TOML: Invalid value (at line 1, column 11)"),
]

# (id, command line after `mlcb`, what the one line must contain)
COMMAND_CASES = [
    (
        "run-budget-repeated",
        ["run", "trap", "--budget", "1", "1"],
        "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got [1, 1] (repeated: 1)",
    ),
    (
        "compare-budget-repeated",
        ["compare", "trap", "--budget", "2", "1", "2"],
        "budget must be an integer >= 1 or a non-empty list of distinct integers >= 1, got [2, 1, 2] (repeated: 2)",
    ),
    (
        "compare-budget-absent",
        ["compare", "trap", "--budget", "7"],
        "budget: 7 not among the comparison's budgets (1, 2, 3, 4)",
    ),
    (
        "run-horizon-huge",
        ["run", "trap", "--horizon", "9223372036854775807"],
        "horizon must be an integer in [1, 10_000_000_000], got 9223372036854775807",
    ),
    (
        "compare-horizon-huge",
        ["compare", "trap", "--horizon", str(MAX_HORIZON + 1)],
        "horizon must be an integer in [1, 10_000_000_000], got 10000000001",
    ),
    (
        "run-replications-huge",
        ["run", "trap", "--replications", str(MAX_REPLICATIONS + 1)],
        "replications must be an integer in [1, 1_000_000]",
    ),
    (
        "run-calibration-empty",  # was taken for the preset's default
        ["run", "trap", "--calibration", ""],
        "calibration must be one of ['authors', 'authors-rates', 'practical', 'theory'] for preset 'trap', got ''",
    ),
    (
        "run-setting-label-empty",  # the trap's three budgets: was " M=1", " M=2", " M=4"
        ["run", "trap", "--setting-label", ""],
        "label must be 1 to 120 printable characters (no line breaks, tabs or control codes), not blank, got ''",
    ),
    (
        "compare-policy-unknown",
        ["compare", "trap", "--policies", "nope"],
        "policies: ['nope'] not in the comparison",
    ),
]

# A representative handful also runs in a fresh interpreter, as a user runs it.
SUBPROCESS_CASES = {
    "ragged-reward-means",
    "name-traversal",
    "unknown-key",
    "compare-budget-repeated",
    "run-horizon-huge",
}


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a simulation starts on either engine."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the input was validated")

    monkeypatch.setattr(replications, "run_replications", refuse)
    monkeypatch.setattr(python_loop, "run_replications", refuse)


def _argv(case_id: str, tmp_path: Path) -> tuple[list[str], str]:
    """The command line of a case (its TOML file written under ``tmp_path/in``) and the
    expected text."""
    for name, text, extra, expected in TOML_CASES:
        if name == case_id:
            folder = tmp_path / "in"
            folder.mkdir(exist_ok=True)
            setting = folder / "setting.toml"
            setting.write_text(text)
            return ["run", str(setting), *extra], expected
    for name, argv, expected in COMMAND_CASES:
        if name == case_id:
            return list(argv), expected
    raise KeyError(case_id)


ALL_IDS = [case[0] for case in TOML_CASES] + [case[0] for case in COMMAND_CASES]


def _assert_refused(status: int, out: str, err: str, expected: str, results: Path) -> None:
    assert status == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mlcb: error: "), err
    assert expected in lines[0], err
    assert "Traceback" not in out + err
    assert not results.exists() or not any(results.iterdir())


@pytest.mark.parametrize("case_id", ALL_IDS)
def test_cli_refuses_in_one_line_before_work(case_id, tmp_path, capsys, no_work):
    argv, expected = _argv(case_id, tmp_path)
    results = tmp_path / "out"
    status = main([*argv, "--out", str(results), "--no-plot", "--quiet"])
    captured = capsys.readouterr()
    _assert_refused(status, captured.out, captured.err, expected, results)


@pytest.mark.parametrize("case_id", sorted(SUBPROCESS_CASES))
def test_cli_refuses_in_a_fresh_process(case_id, tmp_path):
    argv, expected = _argv(case_id, tmp_path)
    results = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "mlcb.cli", *argv, "--out", str(results), "--no-plot", "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    _assert_refused(done.returncode, done.stdout, done.stderr, expected, results)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--timeout", "nan"], "timeout must be a number of seconds in (0, 3600], got nan"),
        (
            ["--scheduler", "tcp://127.0.0.1:9"],
            "scheduler: an address is only used with executor 'dask' (--executor dask)",
        ),
        (["--workers", "0"], "workers must be an integer >= 1, got 0"),
        (["--block", "1e7"], "block must be an integer in [1, 1_000_000], got 10000000"),
        (["--executor", "slurm"], "executor must be one of ('local', 'dask'), got 'slurm'"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else "",
)
def test_sweep_options_are_refused_before_its_first_line(option, message, tmp_path, capsys):
    """A sweep printed its first line (its settings and replications, as when it starts) and then
    refused its options; now the options are checked with the grid, before anything is said."""
    grid = tmp_path / "grid.toml"
    grid.write_text('preset = "trap"\nhorizon = 100\nreplications = 1\n')
    status = main(["sweep", str(grid), "--out", str(tmp_path / "out"), "--quiet", *option])
    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == f"mlcb: error: {message}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "trap", "--budget", "1", "-M", "2", "4"],
            "argument --budget/-M: given twice; give it once with every value: -M 1 2 4",
        ),
        (
            ["run", "trap", "-T", "100", "--horizon", "1e6"],
            "argument --horizon/-T: given twice (100 and 1000000); give it once",
        ),
        (
            ["compare", "trap", "--out", "a", "-o", "b"],
            "argument --out/-o: given twice ('a' and 'b'); give it once",
        ),
        (
            ["sweep", "grid.toml", "-w", "1", "--workers", "2"],
            "argument --workers/-w: given twice (1 and 2); give it once",
        ),
        (
            ["paper", "--only", "trap", "--only", "glm"],
            "argument --only: given twice; give it once with every value: --only trap glm",
        ),
    ],
    ids=lambda value: "-".join(value[:2]) if isinstance(value, list) else "",
)
def test_an_option_given_twice_is_refused(argv, message, capsys, no_work):
    """argparse kept the last of an option given twice: ``--budget 1 --budget 2`` ran budget 2
    alone, the first value dropped without a word. Flags and ``--plugin`` may repeat."""
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    assert capsys.readouterr().err == f"mlcb: error: {message}\n"


@pytest.mark.parametrize(
    ("command", "target", "message"),
    [
        (
            "run",
            "Setting.TOML",
            "target: 'Setting.TOML' is no preset; mlcb run takes a preset (see `mlcb list`) or a TOML "
            "setting file, whose name ends in .toml",
        ),
        ("run", "folder", "target: 'folder' is no preset; mlcb run takes a preset"),
        (
            "compare",
            "setting.toml",
            "target: 'setting.toml' is no preset; mlcb compare takes a preset (see `mlcb list`); a "
            "setting file runs with 'mlcb run FILE', a grid with 'mlcb sweep FILE'",
        ),
        ("compare", "folder", "target: 'folder' is no preset; mlcb compare takes a preset"),
    ],
)
def test_a_path_given_for_a_preset_says_what_the_command_takes(
    command, target, message, tmp_path, monkeypatch, capsys, no_work
):
    """A setting file whose name does not end in .toml, a folder or a file given to `mlcb
    compare` was an "unknown preset", as if misspelt."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    if target != "folder":
        (tmp_path / target).write_text(SETTING + EXPERTS)
    status = main([command, target, "--out", str(tmp_path / "out"), "--quiet"])
    captured = capsys.readouterr()
    _assert_refused(status, captured.out, captured.err, message, tmp_path / "out")


def test_a_preset_name_too_long_for_a_path_is_an_unknown_preset(capsys, no_work):
    """Looking whether the target is a path raised on a name longer than a file name may be
    (Errno 36), which the command line reported as a bug of mlcb."""
    long = "a" * 300
    assert main(["run", long, "--quiet"]) == 2
    assert capsys.readouterr().err.startswith(f"mlcb: error: unknown preset '{long}'")


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "trap", "-T", "100", "-R", "1", "--no-plot", "--out", "{long}"],
        ["run", "trap", "-T", "100", "-R", "1", "--no-plot", "--out", "{tmp}/x/{long}/y"],
        ["compare", "trap", "-T", "100", "-R", "1", "--out", "{long}"],
        ["compare", "trap", "-T", "100", "-R", "1", "--out", "{tmp}/x/{long}/y"],
        ["paper", "--out", "{long}"],
        ["paper", "--out", "{tmp}/x/{long}/y"],
        ["sweep", "{tmp}/grid.toml", "--out", "{tmp}/x/{long}/y"],
        ["show", "{long}"],
        ["plot", "{long}/x"],
        ["report", "{long}"],
    ],
)
def test_a_path_no_file_system_takes_is_an_input_error_through_every_command(
    argv, tmp_path, monkeypatch, capsys, no_work
):
    """A name in a path longer than a file name may be (Errno 36) was reported as a bug of mlcb,
    from whichever command met it first (making the result's folder, looking for a sweep). The
    folders above such a name are not made either (`x` was left behind)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grid.toml").write_text(
        'preset = "trap"\nhorizon = 100\nreplications = 1\n[grid]\nbudget = [1]\n'
    )
    long = str(tmp_path / ("a" * 300))
    status = main([arg.format(long=long, tmp=tmp_path) for arg in argv])
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.toml"]
    assert status == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"mlcb: error: {tmp_path}"), err
    assert err.rstrip().endswith(
        ": File name too long (a name in the path is longer than the file system allows: shorten it)"
    ), err


def test_flags_and_plugins_may_repeat():
    from mlcb.cli import _parser

    args = _parser().parse_args(["run", "trap", "-q", "--quiet", "--plugin", "a", "--plugin", "b", "-T", "5"])
    assert (args.quiet, args.plugins, args.horizon) == (True, ["a", "b"], 5)


def test_default_name_from_the_file_must_be_plain(tmp_path, capsys, no_work):
    setting = tmp_path / "my setting.toml"
    setting.write_text(SETTING + EXPERTS)
    status = main(["run", str(setting), "--out", str(tmp_path / "out"), "--no-plot", "--quiet"])
    err = capsys.readouterr().err
    _assert_refused(
        status, "", err, "name (from the file name 'my setting.toml'; set name = ...)", tmp_path / "out"
    )


# --- the same through the Python API ------------------------------------------------------------
def _config(**changes):
    fields = {
        "env": "mlcb/BanditExperts-v0",
        "env_params": {"reward_means": [[0.5, 0.6], [0.5, 0.3]]},
        "experts": (agents.make("ucb1"),) * 2,
        "horizon": 100,
        "replications": 1,
    }
    return SimulationConfig(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (
            {"horizon": 2**63},
            ValueError,
            r"horizon must be an integer in \[1, 10_000_000_000\], got 9223372036854775808",
        ),
        ({"horizon": MAX_HORIZON + 1}, ValueError, r"horizon must be an integer in \[1, 10_000_000_000\]"),
        (
            {"replications": MAX_REPLICATIONS + 1},
            ValueError,
            r"replications must be an integer in \[1, 1_000_000\]",
        ),
        (
            {"checkpoints": MAX_CHECKPOINTS + 1},
            ValueError,
            r"checkpoints must be an integer in \[1, 100_000\]",
        ),
        (
            {"env_params": {"reward_means": [[0.5, 0.6], [0.5]]}},
            ValueError,
            r"reward_means must be a rectangular \(K, m\) array",
        ),
        ({"env_params": [("reward_means", [[0.5]])]}, ValueError, r"env_params must be a dict"),
        ({"policy_params": "fast"}, ValueError, r"policy_params must be a dict"),
        ({"calibration": None}, ValueError, r"calibration must be a string"),
        (
            {"delta": 1e-310},
            ValueError,
            r"whose delta / 2K is a normal float64 .*: at least 8.9e-308 for K = 2",
        ),
    ],
)
def test_config_refuses_with_the_parameter_named(changes, error, message):
    """Refused when the setting is described (its own fields) or, at the latest, when it is built
    (what needs the environment or the policy), before any work."""
    with pytest.raises(error, match=message):
        mlcb.engine.build(_config(**changes))


def test_only_none_means_a_default_through_every_door(no_work):
    """An empty calibration or smoothing was taken for the default (a grid could list "" and
    "theory" as two settings), and a calibration that is no string was Python's "unhashable
    type"; each is now refused by name, the same way from Python, a grid and the command line
    (the cases above)."""
    from mlcb import presets
    from mlcb.sweeps.grid import make_grid

    names = "calibration must be one of ['authors', 'authors-rates', 'practical', 'theory'] for preset 'trap', got "
    grid = {"preset": "trap", "horizon": 100, "replications": 1}
    for given, shown in (("", "''"), (["theory"], "['theory']"), ({"a": 1}, "{'a': 1}")):
        for call in (
            lambda given=given: presets.get("trap").config(1, given),
            lambda given=given: mlcb.simulate(preset="trap", calibration=given, horizon=100, replications=1),
            lambda given=given: comparison_configs("trap", calibration=given, horizon=100),
        ):
            with pytest.raises(ValueError) as caught:
                call()
            assert str(caught.value) == names + shown
        with pytest.raises(ValueError) as caught:
            make_grid({**grid, "grid": {"calibration": [given]}})
        assert str(caught.value).endswith(" is invalid: " + names + shown)
    with pytest.raises(ValueError) as caught:
        make_grid({**grid, "smoothing": ""})
    assert str(caught.value) == (
        "grid: the shared setting is invalid: smoothing must be one of ('counts', 'average', "
        "'uniform', 'last') for bandit experts, got ''"
    )
    with pytest.raises(ValueError, match=r"^calibration must be 1 to 120 printable characters .*, got ' '$"):
        _config(calibration=" ")
    assert _config(smoothing=None).smoothing == "counts"
    assert presets.get("trap").config(1, None).calibration == "theory"


def test_a_whole_number_beyond_64_bits_is_refused_through_every_door(no_work):
    """A saved result holds whole numbers within 64 bits and refuses larger ones when read: a
    setting that held one (a seed of 2**64, a parameter from TOML or Python) ran, was saved and
    could not be read back. Every door refuses it by its place, before any work."""
    from mlcb import presets
    from mlcb.sweeps.grid import make_grid

    tail = " must be a whole number within 64 bits (at most 2**63 - 1 = 9_223_372_036_854_775_807: a saved result holds no larger one), got "
    with pytest.raises(ValueError) as caught:
        mlcb.simulate(preset="trap", seed=2**63, horizon=100, replications=1)
    assert str(caught.value) == "seed" + tail + str(2**63)
    with pytest.raises(ValueError) as caught:
        _config(experts=[agents.make("ucb1"), agents.make("epsilon-greedy", c=2**70)])
    assert str(caught.value) == "experts[1].c" + tail + str(2**70)
    with pytest.raises(ValueError) as caught:
        presets.get("trap").config(1, policy_params={"bonus_scale": [1, -(2**64)]})
    assert str(caught.value) == "policy_params.bonus_scale[1]" + tail + str(-(2**64))
    grid = {"preset": "trap", "horizon": 100, "replications": 1}
    with pytest.raises(ValueError) as caught:
        make_grid({**grid, "grid": {"policy_params.bonus_scale": [2, 2**64]}})
    assert str(caught.value) == (
        "grid setting policy_params.bonus_scale=18446744073709551616 is invalid: policy_params.bonus_scale"
        + tail
        + str(2**64)
    )
    assert _config(seed=2**63 - 1).seed == 2**63 - 1


def test_mlcb_paper_refuses_a_seed_beyond_64_bits_before_making_its_folder(tmp_path, capsys, no_work):
    out = tmp_path / "paper"
    assert main(["paper", "--seed", str(2**64), "--out", str(out), "--only", "trap", "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("mlcb: error: seed must be a whole number within 64 bits")
    assert not out.exists()
    from mlcb.paper import reproduce  # and from Python
    from mlcb.validation import InputError

    with pytest.raises(InputError, match="seed must be a whole number within 64 bits"):
        reproduce("quick", out, seed=2**64, only="trap")
    assert not out.exists()


def test_config_bounds_are_inclusive(monkeypatch):
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 2**80)  # the size check aside
    config = _config(horizon=MAX_HORIZON, replications=MAX_REPLICATIONS, checkpoints=MAX_CHECKPOINTS)
    assert (config.horizon, config.replications, config.checkpoints) == (10**10, 10**6, 10**5)


def test_flags_are_true_or_false_and_a_preset_sizes_its_pool_only_within_memory(no_work):
    """A flag given -1, None or "x" was taken for its truth value (Thompson sampling's clipped, the
    bandit environments' shuffle); the trap preset built its pool of n_experts experts before the
    setting's memory check, so 10^12 experts was a bare MemoryError."""
    import agents
    import envs

    with pytest.raises(ValueError, match=r"clipped must be True or False, got -1"):
        agents.make("thompson", clipped=-1)
    with pytest.raises(ValueError, match=r"shuffle must be True or False, got 'x'"):
        envs.make("mlcb/Trap-v0", shuffle="x")
    assert agents.make("clipped-thompson").clipped is True
    with pytest.raises(ValueError, match=r"env_params of mlcb/Trap-v0: this setting needs about 128.0 TB"):
        mlcb.simulate(preset="trap", env_params={"n_experts": 10**12})
    with pytest.raises(TypeError, match=r"env_params must be a dict, got int"):
        mlcb.simulate(preset="trap", env_params=5)


def test_environments_count_their_own_arrays_and_check_their_pairs(no_work):
    """The clustered stream's arrays grow with clusters x dim x hidden, sizes the generic check did
    not know; the GLM's quadrature (10^9, 10^9) was taken, and the process killed for memory."""
    import envs

    with pytest.raises(ValueError, match=r"env_params of mlcb/Clustered-v0: this setting needs about 3.4 TB"):
        mlcb.simulate(preset="moe", env_params={"clusters": 10**9})
    for quadrature in ((10**9, 10**9), [24], (1.5, 3), "ab"):
        with pytest.raises(
            ValueError, match=re.escape("quadrature must be a pair (n_radial, n_angular) of integers")
        ):
            envs.make("mlcb/GLM-v0", quadrature=quadrature)
    with pytest.raises(ValueError, match=r"target_norm must be a pair \(low, high\) of finite numbers"):
        envs.make("mlcb/GLM-v0", target_norm=(0.9, 0.5))
    assert envs.make("mlcb/GLM-v0", quadrature=[24, 48]).quadrature == (24, 48)


def test_simulate_refuses_config_with_preset(no_work):
    with pytest.raises(TypeError, match=r"simulate takes config or preset, not both"):
        mlcb.simulate(_config(), preset="trap")
    with pytest.raises(TypeError, match=r"config must be a SimulationConfig, got dict"):
        mlcb.simulate({"horizon": 10})
    with pytest.raises(TypeError, match=r"preset must be a preset name \(str\), got 5"):
        mlcb.simulate(preset=5)
    with pytest.raises(TypeError, match=r"parts must be None or a directory path, got 3"):
        mlcb.simulate(_config(), parts=3)
    message = "SimulationConfig has no parameter 'horizn'; its fields: env, experts, policy, budget, horizon, replications, seed, delta, smoothing, env_params, policy_params, checkpoints, calibration, label"
    for call in (lambda: _config(horizn=10), lambda: _config().replace(horizn=10)):  # was Python's own error
        with pytest.raises(TypeError) as caught:
            call()
        assert str(caught.value) == message
    for given in (dict(preset="trap"), dict(config=_config()), {}):  # a misspelt field, everywhere
        with pytest.raises(TypeError, match=r"simulate has no parameter 'horizn'; it takes config, "):
            mlcb.simulate(**given, horizn=10)
    with pytest.raises(ValueError, match=r"horizon must be an integer in \[1, 10_000_000_000\]"):
        mlcb.simulate(preset="trap", horizon=2**63)


def test_simulate_says_what_a_careless_call_meant(no_work):
    """A preset's name in config's place, one expert or a dict where a pool goes, a progress flag
    that is not one: each was a bare TypeError ('UCB1' object is not iterable, the truth value of
    an array) or went through; now one line naming the parameter and what it takes."""
    import numpy as np

    message = "config must be a SimulationConfig, got the str 'trap'; a preset is named by keyword: simulate(preset='trap', ...)"
    with pytest.raises(TypeError) as caught:
        mlcb.simulate("trap", horizon=100)
    assert str(caught.value) == message
    pool = "experts must be a non-empty list of expert specifications, got "
    expected = {
        "one expert (UCB1); ": agents.make("ucb1"),
        "dict {'a': ": {"a": agents.make("ucb1")},
        "str 'ucb1'; a pool is a list": "ucb1",
        "int 3; ": 3,
    }
    for text, experts in expected.items():
        with pytest.raises(ValueError) as caught:
            mlcb.simulate(preset="trap", experts=experts, horizon=100)
        assert str(caught.value).startswith(pool + text), caught.value
    one = "experts must be a non-empty list of expert specifications, got one expert (UCB1); a pool is a list: [agents.make('ucb1')] * 10, or experts of one's own"
    with pytest.raises(ValueError) as caught:
        mlcb.simulate(experts=agents.make("ucb1"))
    assert str(caught.value) == one
    with pytest.raises(ValueError, match=r"^experts must be a non-empty list of expert specifications$"):
        _config(experts=[])
    assert (
        _config(experts=np.array([agents.make("ucb1")] * 2, dtype=object)).experts
        == (agents.make("ucb1"),) * 2
    )
    with pytest.raises(ValueError, match=r"^progress must be True or False, got 'yes'$"):
        mlcb.simulate(preset="trap", horizon=100, progress="yes")


@pytest.mark.parametrize(
    "call",
    [
        lambda budget: mlcb.simulate(preset="trap", budget=budget, horizon=100, replications=1),
        lambda budget: mlcb.simulate(budget=budget, experts=(agents.make("ucb1"),) * 12, horizon=100),
        lambda budget: mlcb.simulate(_config(), budget=budget),
    ],
    ids=["preset", "fields", "config"],
)
def test_simulate_takes_one_budget_and_says_where_lists_go(no_work, call):
    message = "budget: simulate runs one setting and takes one integer budget, got [1, 11]; for several budgets use mlcb.compare(preset, budget=[...]), mlcb.sweep (a grid) or the command line's --budget M1 M2 ..."
    with pytest.raises(ValueError) as caught:
        call([1, 11])
    assert str(caught.value) == message


def test_compare_takes_one_budget_as_an_int():
    configs = comparison_configs("trap", budget=2)
    assert [(c.policy, c.budget) for c in configs] == [("mlcb", 2), ("limited-advice", 2)]
    assert [c.policy for c in comparison_configs("trap", policies="mlcb", budget=1)] == ["mlcb"]
    import numpy as np

    for several in (np.array([1, 2]), range(1, 3), (np.int64(1), np.int64(2))):  # an array was refused
        configs = comparison_configs("trap", policies="mlcb", budget=several)
        assert [c.budget for c in configs] == [1, 2]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"budget": [1, 1]},
            ValueError,
            r"budget must be .* distinct integers >= 1, got \[1, 1\] \(repeated: 1\)",
        ),
        ({"budget": "2"}, ValueError, r"budget must be an integer >= 1 or a non-empty list"),
        ({"budget": []}, ValueError, r"budget must be an integer >= 1 or a non-empty list"),
        ({"budget": 7}, ValueError, r"budget: 7 not among the comparison's budgets \(1, 2, 3, 4\)"),
        ({"policies": []}, ValueError, r"policies must be a policy name or a non-empty list of them"),
        ({"policies": [1]}, ValueError, r"policies must be a policy name or a non-empty list of them"),
        (
            {"bogus": 1},
            ValueError,
            r"unknown field\(s\) bogus; a comparison takes budget, checkpoints, delta",
        ),
        ({"policy": "mlcb"}, ValueError, r"unknown field\(s\) policy; .*policies="),
        (
            {"set": "practitioners"},
            ValueError,
            r"unknown field\(s\) set; .*entry_set=, the command line's --set\)",
        ),
        ({"policy_params": 3}, ValueError, r"policy_params must be a dict"),
        ({"horizon": 2**63}, ValueError, r"horizon must be an integer in \[1, 10_000_000_000\]"),
        ({"entries": "mlcb"}, ValueError, r"entries must be a list of Entry or \(policy, budgets"),
        ({"entries": [("mlcb", 2)]}, None, None),
        ({"entries": [("mlcb", (1, 1))]}, ValueError, r"entries: budgets of 'mlcb' must be .*repeated: 1"),
        ({"entries": [("mlcb",)]}, ValueError, r"entries: each must be an Entry or \(policy, budgets"),
        (
            {"entries": [("mlcb", (1, 2)), ("mlcb", (2,))]},
            ValueError,
            r"entries: policy 'mlcb' at budget 2 is named twice \(setting 'mlcb M=2'\); give each policy",
        ),
        ({"entries": [(5, (1,))]}, ValueError, r"entries: a policy must be a name \(str\), got 5"),
        ({"entries": [("mlcb", (1,), "x")]}, ValueError, r"entries: policy_params of 'mlcb' must be a dict"),
        (
            {"entries": [("mlcb", (1,), {}, 3)]},
            ValueError,
            r"entries: smoothing of 'mlcb' must be None or a name",
        ),
        ({"threads": 0}, ValueError, r"threads must be None or an integer >= 1, got 0"),
        ({"progress": "yes"}, ValueError, r"progress must be True or False, got 'yes'"),
        ({"calibration": "magic"}, ValueError, r"calibration must be one of"),
        ({"preset": 5}, ValueError, r"preset must be a preset name \(str\), got 5"),
    ],
)
def test_compare_refuses_with_the_parameter_named(no_work, kwargs, error, message):
    kwargs = {"preset": "trap", "horizon": 100, "replications": 1, **kwargs}
    preset = kwargs.pop("preset")
    if error is None:  # accepted: an int budget is a list of one
        assert [c.budget for c in comparison_configs(preset, kwargs.pop("entries"), **kwargs)] == [2]
        return
    with pytest.raises(error, match=message):
        mlcb.compare(preset, **kwargs)


# --- empty paths --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small saved result, outside the directory the empty-path tests run in."""
    return mlcb.simulate(preset="trap", budget=1, horizon=100, replications=1).save(
        tmp_path_factory.mktemp("saved") / "run"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "trap", "--horizon", "100", "--replications", "1", "--out", ""],
        ["compare", "trap", "--horizon", "100", "--replications", "1", "--budget", "1", "--out", ""],
        ["sweep", "GRID", "--out", ""],
        ["plot", "RESULT", "--out", ""],
        ["report", "RESULT", "--out", ""],
        ["plot", ""],
        ["report", ""],
        ["show", ""],
    ],
    ids=lambda argv: "-".join(a or "EMPTY" for a in argv if not a.isdigit()),
)
def test_cli_refuses_an_empty_path(argv, saved, tmp_path, monkeypatch, capsys, no_work):
    """An empty path would mean the current directory: refused in one line, nothing written."""
    grid = tmp_path / "grid.toml"
    grid.write_text('preset = "trap"\nhorizon = 100\nreplications = 1\n')
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    argv = [{"GRID": str(grid), "RESULT": str(saved)}.get(a, a) for a in argv]
    try:
        status = main([*argv, "--quiet"] if argv[0] in ("run", "compare", "sweep") else argv)
    except SystemExit as exit:  # argparse refuses the argument itself
        status = exit.code
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith("mlcb: error: argument ") and err.endswith(
        ": an empty path; give a directory or file name\n"
    )
    assert list(here.iterdir()) == []


def test_api_refuses_an_empty_path(saved, tmp_path, monkeypatch, no_work):
    from mlcb.report import report

    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    result = mlcb.load(saved)
    path = "path must be a non-empty path (a directory or file name), got ''"
    out = "out must be a non-empty path (a directory or file name), got ''"
    parts = "parts must be a non-empty path (a directory or file name), got ''"
    for message, call in [
        (path, lambda: result.save("")),
        (path, lambda: mlcb.load("")),
        (out, lambda: mlcb.sweep({"preset": "trap", "horizon": 100, "replications": 1}, out="")),
        (out, lambda: report(saved, out="")),
        (path, lambda: report("")),
        (parts, lambda: mlcb.simulate(preset="trap", horizon=100, replications=1, parts="")),
        (parts, lambda: mlcb.compare("trap", horizon=100, replications=1, budget=1, parts="")),
    ]:
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == message
    assert list(here.iterdir()) == []


# --- the page that lists them -------------------------------------------------------------------
#: The tests whose checks docs/bad-inputs.md quotes.
CHECKING_TESTS = (
    "test_user_errors.py",
    "test_errors.py",
    "test_envs.py",
    "test_store.py",
    "test_sweep.py",
    "test_sweep_dask.py",
    "test_results_cli.py",
    "test_report.py",
    "test_tabular.py",
    "test_paper.py",
    "test_warfarin.py",
    "test_faults.py",
    "test_identity.py",
    "test_plugins.py",
    "test_conformance.py",
    "test_river.py",
    "test_river_cost.py",
    "test_selection_env.py",
    "test_python_engine.py",
    "test_mixed_pools.py",
    "test_outputs.py",
    "test_moe.py",
    "test_decisions.py",
    "test_doors.py",
    "test_labels.py",
    "test_figures.py",
)


def test_the_bad_inputs_page_quotes_what_the_tests_check():
    """Every message in the tables of docs/bad-inputs.md appears word for word in a test that
    checks it: a message that changes fails its test, and then this one until the page follows."""
    page = (ROOT / "docs" / "bad-inputs.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| where")]
    checked = "".join((ROOT / "tests" / name).read_text(encoding="utf-8") for name in CHECKING_TESTS)
    messages = [row.rstrip().removesuffix("|").rsplit("|", 1)[-1].strip() for row in rows]
    assert len(rows) >= 90 and all(m.startswith("`") and m.endswith("`") for m in messages), messages
    missing = [m for m in messages if m.strip("`") not in checked]
    assert not missing, f"messages on the page that no test quotes: {missing}"
