"""Which errors are the user's and which are mlcb's (issue 36, item 13), and faults of the machine
(item 6): the command line shows input errors (:class:`mlcb.validation.InputError`) as one line with
exit status 2, a fault of the machine (a full disk, a file-size limit, permissions, too little
memory) as one line with exit status 1, and anything else as a bug, with its traceback and a line
asking to report it; ``MLCB_TRACEBACK=1`` shows the traceback of input errors too.
"""

from __future__ import annotations

import ast
import errno
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
import envs
import mlcb
import mlcb.config.toml
from mlcb import cli, policies, validation
from mlcb.config import SimulationConfig
from mlcb.errors import CertificateWarning, ExpertError
from mlcb.validation import InputError, InputNotFound, InputTypeError

ROOT = Path(__file__).resolve().parents[1]


# --- input errors have their own type ------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: SimulationConfig(experts=(agents.make("ucb1"),) * 10, budget=0), InputError),
        (lambda: policies.make("mlcb", bonus_scale=-1), InputError),
        (lambda: policies.make("mlcb", bogus=1), InputTypeError),
        (lambda: envs.make("mlcb/BanditExperts-v0", reward_means=[[2.0]]), InputError),
        (lambda: agents.make("ucb1", c=-1.0), InputError),
        (lambda: mlcb.simulate({"horizon": 10}), InputTypeError),
        (lambda: mlcb.load("/nonexistent/mlcb-result"), InputNotFound),
        (lambda: validation.budget(4, 3), InputError),
    ],
)
def test_input_errors_are_input_errors_and_still_value_errors(call, kind):
    with pytest.raises(kind) as caught:
        call()
    assert isinstance(caught.value, InputError) and isinstance(caught.value, ValueError)
    if kind is InputTypeError:
        assert isinstance(caught.value, TypeError)
    if kind is InputNotFound:
        assert isinstance(caught.value, FileNotFoundError)


#: Modules of the application and the store that take input from users: every error they raise
#: for it is an InputError (or a fault of an expert, or a file warning), never a bare ValueError.
CHECKED_MODULES = [
    "mlcb/cli/__init__.py",
    "mlcb/config/__init__.py",
    "mlcb/config/toml.py",
    "mlcb/engine/problem.py",
    "mlcb/engine/sizes.py",
    "mlcb/registry.py",
    "mlcb/simulation.py",
    "mlcb/compare.py",
    "mlcb/presets.py",
    "mlcb/validation.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "mlcb" / "storage").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "mlcb" / "sweeps").glob("*.py")),
]


@pytest.mark.parametrize("module", CHECKED_MODULES)
def test_the_input_modules_raise_no_bare_value_error(module):
    tree = ast.parse((ROOT / module).read_text())
    bare = [
        f"{module}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and isinstance(node.exc.func, ast.Name)
        and node.exc.func.id in ("ValueError", "TypeError", "FileNotFoundError")
    ]
    assert bare == []


# --- the command line: input errors, bugs, tracebacks ---------------------------------------------
def test_an_input_error_is_one_line_and_status_2(capsys):
    assert cli.main(["run", "trap", "--budget", "11", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "mlcb: error: budget must be an integer in [1, n_experts=10], got 11\n"


@pytest.mark.parametrize(
    "error", [RuntimeError("boom"), ValueError("boom"), TypeError("boom"), KeyError("boom")]
)
def test_a_bug_shows_its_traceback_and_asks_to_report_it(monkeypatch, capsys, error):
    """Any exception that is not an InputError (a ValueError raised by a bug included) is a bug:
    its traceback, then one line saying so and where to report it; status 1."""

    def broken(args):
        raise error

    monkeypatch.setattr(cli, "_list", broken)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert f"{type(error).__name__}: " in err
    last = err.strip().splitlines()[-1]
    assert last == (
        f"mlcb: this is a bug in mlcb ({type(error).__name__}), not a problem with your input: please "
        "report it to the mlcb maintainers with the command you ran and the traceback above"
    )


def test_mlcb_traceback_shows_the_traceback_of_input_errors(monkeypatch, capsys):
    monkeypatch.setenv("MLCB_TRACEBACK", "1")
    assert cli.main(["run", "trap", "--budget", "11", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "InputError" in err
    assert (
        err.strip().splitlines()[-1] == "mlcb: error: budget must be an integer in [1, n_experts=10], got 11"
    )


def test_a_bug_in_a_fresh_process_says_so(tmp_path):
    """The console script itself: a ValueError raised by a fault of mlcb (here a plugin's broken
    command, reached the way a bug would be) is not dressed up as bad input."""
    plugin = tmp_path / "breaks_listing.py"
    plugin.write_text(
        "import mlcb.presets\n\ndef broken():\n    raise ValueError('an internal invariant failed')\n\n"
        "mlcb.presets.names = broken\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mlcb.cli", "list", "--plugin", "breaks_listing"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
        timeout=300,
    )
    assert done.returncode == 1
    assert "ValueError: an internal invariant failed" in done.stderr
    assert "please report it to the mlcb maintainers" in done.stderr


# --- faults of the machine (item 6) ---------------------------------------------------------------
def _run_limited(arguments: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess:
    """``mlcb ARGUMENTS`` in a fresh process whose files may not grow beyond ``limit`` bytes."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "mlcb.cli", *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=limited,
        timeout=600,
    )


def test_a_file_size_limit_is_one_line_and_the_rerun_recovers(tmp_path):
    """``ulimit -f``: the write that passes the limit fails with EFBIG (Python ignores SIGXFSZ);
    mlcb says so in one line, keeps what finished, and the same command without the limit
    resumes and finishes."""
    arguments = ["run", "trap", "--budget", "2", "--horizon", "2000", "--replications", "4"]
    arguments += ["--out", str(tmp_path / "out"), "--quiet", "--no-plot", "--threads", "1"]
    limited = _run_limited(arguments, tmp_path, 6_000)
    assert limited.returncode == 1, limited.stderr
    lines = limited.stderr.strip().splitlines()
    assert len(lines) == 1, limited.stderr
    assert lines[0].startswith("mlcb: error: ") and "File too large" in lines[0]
    assert "a file-size limit is set (see `ulimit -f`): raise it" in lines[0]
    assert "finished replications are kept, the same command resumes from them" in lines[0]
    rerun = _run_limited(arguments, tmp_path, resource.RLIM_INFINITY)
    assert rerun.returncode == 0, rerun.stderr
    assert (tmp_path / "out" / "trap" / "curves.parquet").is_file()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.ENOSPC, "No space left on device (the disk is full: free some space)"),
        (errno.EACCES, "Permission denied (permission denied: check the folder's permissions)"),
        (errno.EROFS, "Read-only file system (the file system is read-only: write elsewhere)"),
    ],
)
def test_a_full_disk_or_a_refused_write_is_one_line(monkeypatch, tmp_path, capsys, code, expected):
    """ENOSPC (a full disk), EACCES (permission denied on OUT/NAME) and EROFS, raised by the
    write of a result, each in one line naming the file, status 1; the rerun recovers."""
    from mlcb.storage import result_files

    real = result_files.write

    def refuse(directory, frames, metadata):
        raise OSError(code, os.strerror(code), str(directory / "curves.parquet"))

    monkeypatch.setattr(result_files, "write", refuse)
    arguments = ["run", "trap", "--budget", "1", "--horizon", "200", "--replications", "2"]
    arguments += ["--out", str(tmp_path / "out"), "--quiet", "--no-plot"]
    assert cli.main(arguments) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mlcb: error: ") and expected in err
    assert "curves.parquet" in err
    monkeypatch.setattr(result_files, "write", real)
    assert cli.main(arguments) == 0
    assert (tmp_path / "out" / "trap" / "curves.parquet").is_file()


def test_too_little_memory_is_one_line(monkeypatch, capsys, tmp_path):
    from mlcb.engine import replications

    def allocate(*args, **kwargs):
        raise MemoryError("Unable to allocate 74.5 GiB for an array with shape (100000, 100000)")

    monkeypatch.setattr(replications, "run_replications", allocate)
    arguments = ["run", "trap", "--budget", "1", "--horizon", "200", "--replications", "2"]
    assert cli.main([*arguments, "--out", str(tmp_path / "out"), "--quiet", "--no-plot"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        "mlcb: error: not enough memory (Unable to allocate 74.5 GiB for an array with shape (100000, 100000)); "
        "lower --replications, --threads or the setting's size"
    )


def test_a_missing_optional_package_is_one_line_saying_what_to_install(monkeypatch, capsys):
    def needs_river(args):
        raise ImportError("mlcb.river needs river: pip install 'mlcb[river]'")

    monkeypatch.setattr(cli, "_list", needs_river)
    assert cli.main(["list"]) == 2
    assert capsys.readouterr().err == "mlcb: error: mlcb.river needs river: pip install 'mlcb[river]'\n"


# --- issue 36, item 4: rates finite and >= 0; a certificate valid only if every term is finite -------
class _Fixed:
    """A Python expert that pulls one arm; its rate (from learn or a callable) is ``bad`` from
    its ``after``-th update on."""

    heuristic = False

    def __init__(self, arm: int, bad: float, after: int = 5, callable_rate: bool = False) -> None:
        self.arm, self.bad, self.after, self.n = arm, bad, after, 0
        if callable_rate:
            self.rate = lambda n, d: np.where(np.asarray(n) >= after, bad, np.sqrt(np.asarray(n, float)))

    def learn(self, data):
        self.n += 1
        loss = data.loss(self.arm)
        if callable(getattr(self, "rate", None)):
            return loss
        return loss, (self.bad if self.n > self.after else 1.0)

    def deploy(self, data):
        return data.loss(self.arm), data.mean(self.arm)


def _pool_simulate(*experts, **fields):
    values = {"env": "mlcb/BanditExperts-v0", "env_params": {"reward_means": [[0.2, 0.8], [0.5, 0.5]]}}
    values = {"horizon": 100, "replications": 2, "checkpoints": 5, **values, **fields}
    return mlcb.simulate(experts=list(experts), **values)


@pytest.mark.parametrize("bad", [float("nan"), -1.0, float("inf")], ids=["nan", "negative", "inf"])
def test_a_rate_callable_that_is_not_finite_and_nonnegative_names_the_expert(bad):
    with pytest.raises(InputError) as caught:
        _pool_simulate(_Fixed(0, bad, after=1, callable_rate=True), _Fixed(1, 0.5))
    assert str(caught.value) == (
        f"experts[0]: rate of _Fixed must be a finite number >= 0 at every count, got {bad!r} at n = 1"
    )


def test_a_rate_callable_that_goes_bad_late_is_named_with_its_count():
    with pytest.raises(InputError, match=r"experts\[1\]: rate of _Fixed .* got nan at n = 50"):
        _pool_simulate(_Fixed(0, 0.5), _Fixed(1, float("nan"), after=50, callable_rate=True), horizon=200)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_rate_from_learn_that_is_not_finite_names_the_expert_and_the_round(bad):
    """The issue's case: a heuristic=False expert whose learn returns a NaN rate gave a NaN
    certificate marked valid with 0 violations; now the run stops, naming the expert and round."""
    with pytest.raises(ExpertError, match=rf"^expert 0 \(_Fixed\), replication \d+, round \d+: learn returned the "
                       rf"rate {bad!r}; rates must be finite numbers >= 0"):  # fmt: skip
        _pool_simulate(_Fixed(0, bad), _Fixed(1, 0.5))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_a_certificate_with_a_term_that_is_not_finite_is_not_valid_and_says_so(
    bad, tmp_path, capsys, monkeypatch
):
    """Where nothing checks the rates (a pool of one's own that does not, here the Python pool with
    its check switched off), a certificate with a term that is not finite is not valid and says
    so, never a NaN certificate marked valid with 0 violations."""
    from mlcb.engine.learners import LearnerPool

    monkeypatch.setattr(LearnerPool, "_bad_rate", lambda self, *args: None)
    with pytest.warns(CertificateWarning) as caught:
        result = _pool_simulate(_Fixed(0, bad), _Fixed(1, bad))
    meta = result.metadata["settings"]["mlcb M=1"]
    assert meta["certificate_valid"] is False
    assert meta["certificate_problem"].startswith(f"mlcb M=1: the certificate is {bad!r} at round ")
    assert (
        "(2 of 2 replications): an expert's rate is not a finite number >= 0" in meta["certificate_problem"]
    )
    assert str(caught[0].message) == meta["certificate_problem"]
    assert result.replications["certificate_violated"].isna().all()
    result.save(tmp_path / "run")
    assert cli.main(["show", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert f"note: {meta['certificate_problem']}" in out and "certificate valid False" in out


def test_a_certificate_warning_is_one_line():
    import warnings as stdlib_warnings

    from mlcb.errors import CertificateWarning as Warning_

    line = stdlib_warnings.formatwarning("mlcb M=1: the certificate is nan", Warning_, "mlcb/x.py", 3)
    assert line == "mlcb: CertificateWarning: mlcb M=1: the certificate is nan\n"


# --- issue 36, item 7: size before work -----------------------------------------------------------
@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"env_params": {"n_experts": 2_000_000}},
            "100 replications x 90 checkpoints x 2,000,000 experts = 18,000,000,000 rows of the experts frame",
        ),
        (
            {"replications": 1_000_000, "checkpoints": 100_000},
            "1,000,000 replications x 35,693 checkpoints x 10 experts = 356,930,000,000 rows",
        ),
    ],
    ids=["two-million-experts", "million-replications-of-1e5-checkpoints"],
)
def test_a_setting_too_large_for_any_machine_is_refused_at_once_with_the_estimate(
    fields, expected, monkeypatch
):
    import envs.bandit

    def never(*args, **kwargs):
        raise AssertionError("the environment was built before the setting's size was checked")

    monkeypatch.setattr(envs.bandit, "trap_reward_means", never)
    with pytest.raises(InputError) as caught:
        mlcb.engine.build(mlcb.presets.get("trap").config(1, **fields))
    text = str(caught.value)
    assert text.startswith("mlcb M=1: this setting needs about ") and " TB of memory (" in text
    assert expected in text and "more than this machine's " in text


@pytest.mark.parametrize("n_arms", [10**8, 1e8], ids=["int", "whole-float"])
def test_environment_parameters_too_large_are_refused_before_the_environment_is_built(
    monkeypatch, capsys, n_arms
):
    """``n_arms = 10**8``: the trap's reward means alone are 8 GB, built before anything checked;
    written ``1e8`` (as TOML and the command line may write it), it was not counted at all."""
    import envs.bandit
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 10**9)

    def never(*args, **kwargs):
        raise AssertionError("the environment was built before its size was checked")

    monkeypatch.setattr(envs.bandit, "trap_reward_means", never)
    with pytest.raises(InputError) as caught:
        mlcb.engine.build(
            SimulationConfig(experts=(agents.make("ucb1"),) * 10, env_params={"n_arms": n_arms})
        )
    assert str(caught.value) == (
        "env_params of mlcb/Trap-v0: this setting needs about 64.0 GB of memory (n_experts = 10 x n_arms = "
        "100,000,000 numbers of 8 bytes, held about 8 times while built and run), more than this machine's "
        "1.0 GB; lower replications, checkpoints, experts or the environment's size"
    )


def test_a_grid_of_a_million_settings_is_refused_before_any_is_built(tmp_path, capsys, monkeypatch):
    grid = tmp_path / "huge.toml"
    grid.write_text(
        'preset = "trap"\nhorizon = 100\nreplications = 1\n[grid]\n'
        f"seed = {list(range(1000))}\nbudget = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
        f"delta = {[round(0.01 * i, 2) for i in range(1, 100)] + [0.995]}\n"
    )
    from mlcb.sweeps import grid as grids

    def never(*args, **kwargs):
        raise AssertionError("a setting was built before the grid's size was checked")

    monkeypatch.setattr(grids, "build_config", never)
    assert cli.main(["sweep", str(grid), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        "mlcb: error: grid: 1,000,000 settings (seed: 1,000 x budget: 10 x delta: 100), more than 100,000; "
        "split it into several sweeps\n"
    )


def test_a_grid_whose_results_do_not_fit_is_refused_with_the_estimate(monkeypatch):
    from mlcb.engine import sizes

    monkeypatch.setattr(sizes, "machine_memory", lambda: 3 * 10**6)
    grid = {"preset": "trap", "horizon": 1000, "replications": 20, "grid": {"seed": [0, 1, 2, 3, 4, 5, 6, 7]}}
    with pytest.raises(
        InputError,
        match=r"^grid trap-sweep: this grid needs about \d+\.\d MB of memory \(8 settings of 20 replications",
    ):
        mlcb.sweeps.make_grid(grid)


def test_a_large_grid_shows_its_validation(monkeypatch, tmp_path, capsys):
    from mlcb.sweeps import grid as grid_module

    monkeypatch.setattr(grid_module, "PROGRESS_FROM", 3)
    grid = tmp_path / "seeds.toml"
    grid.write_text('preset = "trap"\nhorizon = 50\nreplications = 1\n[grid]\nseed = [0, 1, 2, 3]\n')
    assert cli.main(["sweep", str(grid), "--out", str(tmp_path / "out"), "--workers", "1", "--no-plot"]) == 0
    assert "validating seeds" in capsys.readouterr().err


def test_toml_tables_that_add_up_to_too_many_experts_are_refused(tmp_path):
    path = tmp_path / "many.toml"
    path.write_text(
        '[[experts]]\nfamily = "ucb1"\ncount = 1_000_000\n[[experts]]\nfamily = "ucb1"\ncount = 1\n'
    )
    with pytest.raises(InputError) as caught:
        mlcb.config.toml.load_toml(path)
    assert str(caught.value) == "experts: the [[experts]] tables add up to more than 1_000_000 experts"


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "latin.toml",
            'name = "caf\xe9"\n'.encode("latin-1"),
            r"latin.toml: not UTF-8 text, which a TOML file must be (byte 11 is b'\xe9')",
        ),
        (
            "twice.toml",
            b"horizon = 1\nhorizon = 2\n",
            "twice.toml: not valid TOML: Cannot overwrite a value (at line 2",
        ),
        ("folder.toml", None, "is a folder, not a TOML file (name the file inside it)"),
    ],
)
def test_a_setting_or_grid_file_that_cannot_be_read_is_named_with_why(
    tmp_path, capsys, command, name, content, message
):
    """Text in another encoding, a key given twice (both were 'not a valid UTF-8 TOML file'), and a
    folder where the file was expected: one line each, for a setting and a grid alike."""
    path = tmp_path / name
    if content is None:
        path.mkdir()
        message = f"{path} {message}"
    else:
        path.write_bytes(content)
    assert cli.main([command, str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_truncated_compiled_code_cache_is_compiled_again(tmp_path):
    """A cache file of a kernel (one compiled by mlcb.kernels.jit) truncated by a full disk or a
    killed process: Numba stopped at the first call with an UnpicklingError; the function is now
    compiled again, with one line naming the file."""
    (tmp_path / "kernel_module.py").write_text(
        "from mlcb.kernels.jit import njit\n\n@njit\ndef inc(x):\n    return x + 1\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("NUMBA_DISABLE_JIT", None)
    script = ["-c", "import kernel_module; print(kernel_module.inc(41))"]

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *script], capture_output=True, text=True, env=env, timeout=300)

    assert run().stdout == "42\n"
    for pattern in ("*.nbi", "*.nbc"):
        (cached,) = (tmp_path / "cache").rglob(pattern)
        cached.write_bytes(cached.read_bytes()[:10])
        damaged = run()
        assert damaged.returncode == 0 and damaged.stdout == "42\n", damaged.stderr
        (line,) = damaged.stderr.splitlines()
        assert line == (
            f"mlcb: FileWarning: {cached}: a damaged file of the compiled-code cache (UnpicklingError); compiled again"
        )
        again = run()
        assert again.stdout == "42\n" and again.stderr == ""  # rewritten
