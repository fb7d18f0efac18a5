"""Families and policies of one's own on the command line: ``--plugin MODULE``, the ``mlcb.plugins``
entry points, and TOML's names, which resolve only to what is registered (a name, or the
``"module:Class"`` entry point of one): never to an attribute of a module.

The complete example of ``docs/compiled-families.md`` is the plugin of the end-to-end test, so the
guide's code is checked to run as written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import agents
from mlcb import cli, policies, registry
from mlcb.config.toml import load_toml
from mlcb.storage.results import load as mlcb_load
from mlcb.validation import InputTypeError

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "compiled-families.md"


def guide_example() -> str:
    """The code block of the guide that starts with ``# my_families.py``."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    examples = [block for block in blocks if block.startswith("# my_families.py")]
    assert len(examples) == 1, "the guide has one complete example, starting with '# my_families.py'"
    return examples[0]


def _environment(*paths: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    environment["PYTHONPATH"] = os.pathsep.join([*map(str, paths), str(ROOT)])
    return environment


def _cli(arguments: list[str], cwd: Path, *paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mlcb.cli", *arguments],
        cwd=cwd,
        env=_environment(*paths),
        capture_output=True,
        text=True,
        timeout=900,
    )


SETTING = """
env = "mlcb/Trap-v0"
budget = 2
horizon = 400
replications = 2
seed = 1
name = "mine"

[[experts]]
family = "fixed-greedy"
epsilon = 0.05
count = 5

[[experts]]
family = "my_families:FixedGreedy"
epsilon = 0.2
count = 5
"""


def test_the_guide_example_runs_from_toml_with_plugin(tmp_path):
    (tmp_path / "my_families.py").write_text(guide_example())
    (tmp_path / "setting.toml").write_text(SETTING)
    listing = _cli(["list", "--plugin", "my_families"], tmp_path, tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert re.search(r"^\s+fixed-greedy\s+epsilon-greedy, fixed epsilon$", listing.stdout, flags=re.MULTILINE)

    out = tmp_path / "out"
    arguments = ["run", "setting.toml", "--plugin", "my_families", "--out", str(out), "--no-plot", "--quiet"]
    run = _cli(arguments, tmp_path, tmp_path)
    assert run.returncode == 0, run.stderr
    metadata = json.loads((out / "mine" / "metadata.json").read_text())
    (setting,) = metadata["settings"].values()
    assert setting["family"] == "fixed-greedy"
    assert setting["certificate_valid"] is False  # the example's rate is heuristic

    # Without --plugin, neither the registered name nor its entry point is known: one line, no work.
    (tmp_path / "only-class.toml").write_text(
        SETTING.split("[[experts]]")[0] + "[[experts]]" + SETTING.split("[[experts]]")[2]
    )
    for setting_file, message in [
        ("setting.toml", "unknown expert 'fixed-greedy'"),
        (
            "only-class.toml",
            "experts[0].family = 'my_families:FixedGreedy' is not a registered expert",
        ),
    ]:
        refused = _cli(["run", setting_file, "--out", str(out), "--no-plot", "--quiet"], tmp_path, tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1
        assert message in refused.stderr


def test_the_guide_snippets_run(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    (driving,) = [block for block in blocks if block.startswith("import envs")]
    (tmp_path / "my_families.py").write_text(guide_example())
    script = (
        driving
        + "\nassert state.steps[0] == 100 and state.pulls.sum() == 100\n"
        + "from mlcb.testing import check_expert\n"
        + "check_expert(FixedGreedy(), 'mlcb/Trap-v0')\n"
        + "print('conformant')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().endswith("conformant")


# --- in-process: plugin loading and refusal, with the registries restored afterwards ---------------
@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """A fresh plugin list, copies of the registries, and ``tmp_path`` on ``sys.path``."""
    monkeypatch.setattr(registry, "_PLUGINS", {})
    monkeypatch.setattr(agents.registry, "_entries", dict(agents.registry._entries))
    monkeypatch.setattr(policies.registry, "_entries", dict(policies.registry._entries))
    monkeypatch.syspath_prepend(str(tmp_path))
    created: list[str] = []

    def module(source: str) -> str:
        name = f"plugin_{uuid.uuid4().hex[:12]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source).replace("MODULE", name))
        created.append(name)
        return name

    yield module
    for name in created:
        sys.modules.pop(name, None)


PLUGIN = """
import pathlib

import agents
from agents.bandits import UCB1
from mlcb import policies

pathlib.Path(__file__).with_suffix(".imported").write_text("imported")
agents.register("wide-ucb", "agents.bandits:UCB1", summary="UCB1 with c = 4", c=4.0)
policies.register("plugin-mlcb", "mlcb.policies.m_lcb:MLCB", summary="M-LCB, registered by a plugin")


class WideUCB(UCB1):
    pass
"""


def _toml(tmp_path: Path, family: str, policy: str = "mlcb") -> Path:
    path = tmp_path / f"setting-{uuid.uuid4().hex[:6]}.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            env = "mlcb/Trap-v0"
            env_params = {{ n_experts = 3 }}
            policy = "{policy}"
            horizon = 50
            replications = 1

            [[experts]]
            family = "{family}"
            c = 3.0
            count = 3
            """
        )
    )
    return path


def test_toml_module_class_is_refused_without_plugin_and_nothing_is_imported(isolated, tmp_path, capsys):
    name = isolated(PLUGIN)
    path = _toml(tmp_path, f"{name}:WideUCB")
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plot", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"mlcb: error: experts[0].family = '{name}:WideUCB' is not a registered expert")
    assert error.count("\n") == 1
    assert name not in sys.modules
    assert not (tmp_path / f"{name}.imported").exists()


def test_plugin_module_registers_families_and_policies(isolated, tmp_path, capsys):
    name = isolated(PLUGIN)
    assert cli.main(["list", "--plugin", name]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"^\s+wide-ucb\s+UCB1 with c = 4$", listed, flags=re.MULTILINE)
    assert re.search(r"^\s+plugin-mlcb\s+M-LCB, registered by a plugin$", listed, flags=re.MULTILINE)
    assert registry.plugins() == [name]
    assert agents.make("wide-ucb").c == 4.0

    # Once named with --plugin, its names are accepted in TOML, and the entry point of a registered
    # name stands for its class (without the name's defaults); a class it defines but does not
    # register is not reachable from a file.
    config_name, configs = load_toml(_toml(tmp_path, "wide-ucb", "plugin-mlcb"))
    (config,) = configs
    assert type(config.experts[0]).__name__ == "UCB1" and config.experts[0].c == 3.0
    assert config.policy == "plugin-mlcb"
    _, (config,) = load_toml(_toml(tmp_path, "agents.bandits:UCB1"))
    assert type(config.experts[0]).__name__ == "UCB1" and config.experts[0].c == 3.0
    with pytest.raises(ValueError, match=rf"family = '{name}:WideUCB' is not a registered expert"):
        load_toml(_toml(tmp_path, f"{name}:WideUCB"))


EXPLOIT = """
from subprocess import Popen  # imported, never registered

import agents

agents.register("plugx-ucb", "agents.bandits:UCB1", summary="a registered name")
"""


@pytest.mark.parametrize(
    "family",
    ["MODULE:Popen", "subprocess:Popen", "os:system", "MODULE:agents", "builtins:exec"],
)
def test_a_file_reaches_nothing_a_plugin_did_not_register(isolated, tmp_path, capsys, monkeypatch, family):
    """Issue 36, 1: a TOML family naming a class a plugin merely imported (``Popen``), or any
    module's attribute, is refused in one line and nothing is called: no file is created."""
    name = isolated(EXPLOIT)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "exploit.toml"
    path.write_text(
        'env = "mlcb/Trap-v0"\nhorizon = 50\nreplications = 1\n[[experts]]\n'
        f'family = "{family.replace("MODULE", name)}"\nargs = ["touch", "marker"]\ncount = 10\n'
    )
    status = cli.main(["run", str(path), "--plugin", name, "--out", str(tmp_path / "out"), "--quiet"])
    error = capsys.readouterr().err
    assert status == 2 and error.count("\n") == 1, error
    assert "is not a registered expert" in error
    assert not (tmp_path / "marker").exists()
    assert not (tmp_path / "out" / "exploit").exists()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("policy", "subprocess:Popen", "unknown policy 'subprocess:Popen'"),
        ("env", "subprocess:Popen", "unknown environment 'subprocess:Popen'"),
    ],
)
def test_policy_and_env_names_in_a_file_resolve_only_to_registered_names(
    tmp_path, capsys, key, value, message
):
    path = tmp_path / "setting.toml"
    path.write_text(f'{key} = "{value}"\n[[experts]]\nfamily = "ucb1"\ncount = 10\n')
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert message in error and "--plugin MODULE" in error


def test_a_grid_names_only_registered_policies(tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'preset = "trap"\nhorizon = 50\nreplications = 1\n[grid]\npolicy = ["mlcb", "os:system"]\n'
    )
    assert cli.main(["sweep", str(grid), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "unknown policy 'os:system'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("family", "message"),
    [
        ("nope:Thing", "experts[0].family = 'nope:Thing' is not a registered expert"),
        ("{name}:Missing", "experts[0].family = '{name}:Missing' is not a registered expert"),
        ("{name}:pathlib", "is not a registered expert"),
        ("a:b:c", "is not a registered expert"),
        ("no-such-family", "unknown expert 'no-such-family'"),
    ],
)
def test_toml_family_errors_are_one_line(isolated, tmp_path, capsys, family, message):
    name = isolated(PLUGIN)
    registry.load_plugin(name)
    path = _toml(tmp_path, family.format(name=name))
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plot", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert message.format(name=name) in error


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (
            "no_such_plugin_module_xyz",
            "plugin 'no_such_plugin_module_xyz': no such module (is its directory on PYTHONPATH?)",
        ),
        ("my/plugin.py", "is not a module name such as my_families"),
        ("broken", "failed to import: ZeroDivisionError: division by zero"),
        ("needs", "failed to import: No module named 'missing_dependency_xyz'"),
        # A module that exits on import (a script's sys.exit at its top level) ended the command
        # with its own exit status and no word.
        ("exits", "plugin 'plugin_"),
    ],
)
def test_plugin_errors_are_one_line(isolated, capsys, plugin, message):
    if plugin == "exits":
        plugin = isolated("import sys\n\nsys.exit(3)\n")
        message = f"plugin {plugin!r} failed to import: SystemExit: 3"
    if plugin == "broken":
        plugin = isolated("x = 1 / 0\n")
    elif plugin == "needs":
        plugin = isolated("import missing_dependency_xyz\n")
    assert cli.main(["list", "--plugin", plugin]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert message in error


def test_installed_entry_points_are_loaded_at_start(isolated, tmp_path, capsys):
    name = isolated(
        """
        import agents

        agents.register("entry-ucb", "agents.bandits:UCB1", summary="registered when imported")


        def register_more():
            agents.register("called-ucb", "agents.bandits:UCB1", summary="registered when called")
        """
    )
    dist = tmp_path / f"{name}_dist-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-dist\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[{registry.PLUGIN_GROUP}]\nmodule-plugin = {name}\ncallable-plugin = {name}:register_more\n"
    )
    assert cli.main(["list"]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"^\s+entry-ucb\s+registered when imported$", listed, flags=re.MULTILINE)
    assert re.search(r"^\s+called-ucb\s+registered when called$", listed, flags=re.MULTILINE)
    assert registry.plugins() == []  # entry points are not --plugin modules

    (dist / "entry_points.txt").write_text(f"[{registry.PLUGIN_GROUP}]\nbad = {name}:nothing_here\n")
    with pytest.raises(ValueError, match=r"plugin entry point 'bad' .* failed: AttributeError"):
        registry.load_entry_points()


# --- issue 38, item 4: one's own policy on the command line, and each command's help ---------------
OWN_POLICY = """
from mlcb import policies

# M-LCB under another name: on common random numbers its curves are M-LCB's to the bit.
policies.register("my-mlcb", "mlcb.policies.m_lcb:MLCB", summary="M-LCB, registered by a plugin")
"""


def test_compare_runs_a_plugin_policy_beside_mlcb_on_common_random_numbers(isolated, tmp_path, capsys):
    name = isolated(OWN_POLICY)
    out = tmp_path / "out"
    arguments = ["compare", "trap", "--policies", "mlcb", "my-mlcb", "--plugin", name, "--budget", "2"]
    status = cli.main([*arguments, "--horizon", "300", "--replications", "2", "--out", str(out), "--quiet"])
    assert status == 0, capsys.readouterr().err
    result = mlcb_load(out / "trap-comparison")
    assert result.settings == ["mlcb M=2", "my-mlcb M=2"]
    curves = result.curves.set_index(["setting", "replication", "round"])["regret"]
    assert (curves.loc["mlcb M=2"].to_numpy() == curves.loc["my-mlcb M=2"].to_numpy()).all()


@pytest.mark.parametrize(
    ("entry_point", "message"),
    [
        ("no_such_module:Thing", "but there is no module 'no_such_module' (is its directory on PYTHONPATH?)"),
        (
            "mlcb.policies.references:Greedyy",
            "but module 'mlcb.policies.references' has no attribute 'Greedyy'",
        ),
    ],
)
@pytest.mark.parametrize("command", ["run", "compare"])
def test_a_plugin_entry_point_that_cannot_load_is_one_line(isolated, capsys, entry_point, message, command):
    """A typo in a plugin's entry point was reported as a bug in mlcb (ModuleNotFoundError)."""
    name = isolated(f'from mlcb import policies\npolicies.register("typo", "{entry_point}")\n')
    policy = ["--policy", "typo"] if command == "run" else ["--policies", "mlcb", "typo"]
    assert cli.main([command, "trap", *policy, "--plugin", name, "-T", "50", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mlcb: error: 'typo' is registered as '{entry_point}', ") and message in err
    assert err.count("\n") == 1


def test_compare_refuses_an_unknown_policy_and_says_how_to_register_one(capsys):
    assert cli.main(["compare", "trap", "--policies", "mlcb", "nope", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlcb: error: policies: ['nope'] not in the comparison")
    assert err.rstrip().endswith("a module of one's own registers more: --plugin MODULE")


def test_run_names_the_plugin_option_for_an_unknown_policy(capsys):
    assert cli.main(["run", "trap", "--policy", "my-policy", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'my-policy'; registered policy names: " in err
    assert "(a module of one's own registers more: --plugin MODULE)" in err


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_sweep_takes_plugin(isolated, tmp_path, capsys, monkeypatch, start):
    """The sweep's worker processes know the plugin's names whether they are forked or spawned
    (spawned where the parent runs other threads: they import the plugin again)."""
    from mlcb.sweeps import executors

    monkeypatch.setattr(executors, "_start_method", lambda: start)
    name = isolated(OWN_POLICY)
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'preset = "trap"\nname = "own"\nhorizon = 200\nreplications = 1\n[grid]\npolicy = ["mlcb", "my-mlcb"]\n'
    )
    arguments = ["sweep", str(grid), "--plugin", name, "--workers", "1", "--out", str(tmp_path / "out")]
    assert cli.main([*arguments, "--quiet", "--no-plot"]) == 0, capsys.readouterr().err
    assert "2 task(s) run" in capsys.readouterr().out


def _help(command: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-m", "mlcb.cli", command, "--help"],
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


COMMANDS = ("run", "compare", "sweep", "plot", "report", "show", "list", "paper")


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_shows_its_own_examples_and_a_description(command):
    text = _help(command)
    examples = text[text.index("\nexamples:\n") :]
    lines = [line.strip() for line in examples.splitlines()[1:] if line.strip().startswith("mlcb ")]
    assert lines and all(line.startswith(f"mlcb {command}") for line in lines), examples
    description = text.split("\n\n")[1]  # after the usage
    assert not description.startswith(("positional arguments", "options")), text


@pytest.mark.parametrize("command", COMMANDS)
def test_device_only_where_it_acts_and_plugin_registers_environments(command):
    text = " ".join(_help(command).split())
    assert ("--device DEVICE" in text) == (command in ("run", "compare"))
    if "--plugin MODULE" in text:
        assert "registers expert families, policies, environments, figures or writers" in text
    assert ("--plugin MODULE" in text) == (command in ("run", "compare", "sweep", "list", "plot", "report"))


def test_run_help_points_to_the_toml_format():
    text = " ".join(_help("run").split())
    assert "docs/command-line.md, section 'A setting of your own'" in text
    assert (ROOT / "docs" / "command-line.md").read_text().count("## A setting of your own") == 1


# --- issue 46, item 3: a taken name is refused unless the plugin asks to override it ----------------
TAKEN = """
from mlcb import policies

policies.register("mlcb", "mlcb.policies.references:RoundRobin", summary="not M-LCB"OVERRIDE)
"""
#: What a plugin that registers ``mlcb`` without asking to override it is told.
REFUSED = (
    "policy name 'mlcb' is taken (by 'mlcb.policies.m_lcb:MLCB'); register "
    "'mlcb.policies.references:RoundRobin' under another name, or pass override=True to replace it"
)
#: The line that says which registration won, when the plugin asks to override.
OVERRIDDEN = (
    "policy 'mlcb' is now 'mlcb.policies.references:RoundRobin' (override=True), in place of "
    "'mlcb.policies.m_lcb:MLCB'; results name it 'mlcb' still"
)


def _entry_point(tmp_path: Path, name: str) -> None:
    """An installed package (a dist-info folder on ``sys.path``) whose ``mlcb.plugins`` entry point
    is the module ``name``."""
    dist = tmp_path / "taken_dist-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: taken-dist\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{registry.PLUGIN_GROUP}]\ntaken = {name}\n")


@pytest.mark.parametrize("how", ["--plugin", "entry point"])
def test_a_plugin_that_registers_a_taken_name_is_refused_unless_it_overrides(isolated, tmp_path, capsys, how):
    """A plugin that registered ``mlcb`` silently replaced M-LCB (its results labelled ``mlcb
    M=2``). A taken name is now refused in one line naming what holds it; ``override=True`` replaces
    it, with one line saying which registration won."""
    from mlcb.errors import NameTaken

    out = tmp_path / "out"
    argv = ["run", "trap", "--budget", "2", "-T", "100", "-R", "1", "-o", str(out), "-q", "--no-plot"]
    for override in (False, True):
        name = isolated(TAKEN.replace("OVERRIDE", ", override=True" if override else ""))
        extra = ["--plugin", name] if how == "--plugin" else []
        if how == "entry point":
            _entry_point(tmp_path, name)
        if not override:
            assert cli.main([*argv, *extra]) == 2
            err = capsys.readouterr().err
            assert err.startswith("mlcb: error: ") and REFUSED in err and err.count("\n") == 1, err
            assert "mlcb.policies.m_lcb:MLCB" == policies.registry.entry("mlcb").entry_point
            assert not out.exists()
            continue
        with pytest.warns(NameTaken, match=re.escape(OVERRIDDEN)):
            assert cli.main([*argv, *extra]) == 0
        assert policies.registry.entry("mlcb").entry_point == "mlcb.policies.references:RoundRobin"
        assert mlcb_load(out / "trap").settings == ["mlcb M=2"]
    # The notice is one line on the command line's standard error.
    listing = _cli(["list", *(["--plugin", name] if how == "--plugin" else [])], tmp_path, tmp_path)
    assert listing.returncode == 0, listing.stderr
    assert listing.stderr == f"mlcb: NameTaken: {OVERRIDDEN}\n"


def test_registering_a_taken_name_from_python_is_refused_and_the_same_registration_is_no_change():
    from mlcb.errors import NameTaken

    for register, name, taken in (
        (policies.register, "mlcb", "mlcb.policies.m_lcb:MLCB"),
        (agents.register, "ucb1", "agents.bandits:UCB1"),
    ):
        entry = (policies.registry if register is policies.register else agents.registry).entry(name)
        extra = {"environments": entry.environments} if register is agents.register else {}
        register(name, entry.entry_point, entry.summary, **extra, **entry.defaults)  # the same: no change
        with pytest.raises(ValueError, match=re.escape(f"name '{name}' is taken (by '{taken}')")):
            register(name, "mlcb.policies.references:RoundRobin")
    with pytest.raises(ValueError, match=re.escape("environment name 'mlcb/Trap-v0' is taken")):
        import envs

        envs.register("mlcb/Trap-v0", "envs.bandit:BanditExpertsEnv")
    from mlcb import plot
    from mlcb.storage import outputs

    with pytest.raises(ValueError, match=re.escape("figure name 'regret' is taken (by 'mlcb.plot:regret')")):
        plot.register("regret", "mlcb.plot:panels")
    with pytest.raises(ValueError, match=re.escape("writer name 'csv' is taken")):
        outputs.register_writer("csv", "mlcb.storage.outputs:write_csv", files=("mine.csv",))
    assert NameTaken.__mro__[1] is UserWarning


def test_a_name_with_control_characters_is_refused_and_summaries_are_listed_escaped(isolated, capsys):
    """A name is shown in labels, figures and listings: one with a terminal escape is refused; a
    plugin's summary is listed with its control characters escaped."""
    with pytest.raises(
        ValueError,
        match=re.escape(
            r"policy name must be a non-empty string without control characters, got '\x1b[31mred'"
        ),
    ):
        policies.register("\x1b[31mred", "mlcb.policies.m_lcb:MLCB")
    name = isolated(
        'from mlcb import policies\npolicies.register("calm", "mlcb.policies.m_lcb:MLCB", summary="a\\x1b[2Jb")\n'
    )
    assert cli.main(["list", "--plugin", name]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "calm             a\\x1b[2Jb" in out


def test_a_registered_default_the_class_does_not_take_names_the_registration(isolated, tmp_path, capsys):
    """A plugin's register call with a misspelt default: the error blamed the caller
    ("policy_params: MLCB has no parameter 'bonus_scal'" for a run that gave no policy_params)."""
    agents.register("wide-typo", "agents.bandits:UCB1", cc=4.0)
    with pytest.raises(InputTypeError) as caught:
        agents.make("wide-typo")
    assert str(caught.value) == (
        "expert 'wide-typo' is registered as 'agents.bandits:UCB1' with a default it does not take: UCB1 has no "
        "parameter 'cc'; its parameters: c, rate, rate_coef, rate_scale (fix the plugin's register call)"
    )
    with pytest.raises(
        InputTypeError, match=r"^UCB1 has no parameters 'cc', 'd'; "
    ):  # the caller's own key: theirs
        agents.make("wide-typo", d=1.0, cc=1.0)
    name = isolated(
        'from mlcb import policies\n\npolicies.register("typo-mlcb", "mlcb.policies.m_lcb:MLCB", bonus_scal=2)\n'
    )
    assert (
        cli.main(
            [
                "run",
                "trap",
                "--policy",
                "typo-mlcb",
                "--budget",
                "2",
                "--plugin",
                name,
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert (
        "policy 'typo-mlcb' is registered as 'mlcb.policies.m_lcb:MLCB' with a default it does not take"
        in (capsys.readouterr().err)
    )
