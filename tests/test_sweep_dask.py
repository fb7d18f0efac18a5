"""Sweeps on Dask: a LocalCluster of two workers gives the local executor's results, a worker
killed in the middle of a sweep changes nothing, an unreachable scheduler is named quickly, and
without dask the executor says what to install."""

from __future__ import annotations

import builtins
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import mlcb
from mlcb import sweeps
from tests.test_sweep import GRID as SWEEP_GRID
from tests.test_sweep import assert_same

distributed = pytest.importorskip("distributed")

GRID = {**SWEEP_GRID, "name": "dasky", "replications": 4, "checkpoints": 20}


def test_local_cluster_of_two_workers_equals_the_local_executor(tmp_path):
    local = mlcb.sweep(GRID, out=tmp_path / "local", workers=2)
    lines = []
    on_dask = mlcb.sweep(GRID, out=tmp_path / "dask", executor="dask", workers=2, block=3, echo=lines.append)
    assert on_dask.computed == 8 and not on_dask.failed
    assert_same(local.result, on_dask.result)
    assert len(lines) == 1 and lines[0].startswith("dask: scheduler tcp://127.0.0.1:")
    assert "dashboard http://127.0.0.1:" in lines[0]


def test_a_cluster_or_a_client_is_taken_for_its_scheduler(tmp_path):
    """A notebook holds a cluster or a ``Client``, not an address: either, given as
    ``scheduler``, sends the tasks to its scheduler (both were refused as "scheduler must be an
    address"), and the client given stays open for its owner."""
    grid = {**GRID, "name": "held", "replications": 2, "grid": {"budget": [1, 2]}}
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        lines: list[str] = []
        by_cluster = mlcb.sweep(
            grid, out=tmp_path / "cluster", executor="dask", scheduler=cluster, echo=lines.append
        )
        by_client = mlcb.sweep(grid, out=tmp_path / "client", executor="dask", scheduler=client)
        assert client.status == "running" and client.submit(sum, [1, 2]).result() == 3
    assert len(lines) == 1 and lines[0].startswith(f"dask: scheduler {cluster.scheduler_address}; ")
    assert by_cluster.computed == by_client.computed == 2 and not by_client.failed
    assert_same(by_cluster.result, by_client.result)


def test_a_killed_worker_changes_nothing(tmp_path):
    """SIGKILL one of two worker processes after the first part arrives: the scheduler runs its
    tasks again elsewhere and every part equals the undisturbed sweep's."""
    grid = {**GRID, "name": "killed", "horizon": 60_000, "replications": 8, "grid": {"budget": [1, 2]}}
    undisturbed = mlcb.sweep(grid, out=tmp_path / "undisturbed", workers=2)
    killed = []
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        # The worker processes' ids from their nannies (no second client in this process).
        pids = sorted(nanny.process.pid for nanny in cluster.workers.values())
        assert len(pids) == 2 and all(pids)

        def kill_one(task):
            if not killed:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(task)

        outcome = mlcb.sweep(
            grid,
            out=tmp_path / "disturbed",
            executor="dask",
            scheduler=cluster.scheduler_address,
            on_part=kill_one,
        )
    assert killed, "no worker was killed"
    assert outcome.failed == [] and outcome.computed == 8
    assert_same(undisturbed.result, outcome.result)


def test_unreachable_scheduler_is_named_within_the_timeout(tmp_path):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(
        ValueError, match=rf"cannot reach a Dask scheduler at 'tcp://127.0.0.1:{port}' within 2 s"
    ):
        mlcb.sweep(GRID, out=tmp_path, executor="dask", scheduler=f"tcp://127.0.0.1:{port}", timeout=2)
    assert time.monotonic() - started < 120  # not a timing check: the sweep gave up rather than hang
    assert not any((tmp_path / "dasky" / "data").glob("*/*/*.parquet"))


def test_cli_unreachable_scheduler_is_one_line(tmp_path, capsys):
    from mlcb.cli import main

    grid_file = tmp_path / "g.toml"
    grid_file.write_text('preset = "trap"\nhorizon = 100\nreplications = 1\n')
    status = main(
        [
            "sweep",
            str(grid_file),
            "-o",
            str(tmp_path),
            "-e",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:9",
            "--timeout",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert err.startswith(
        "mlcb: error: scheduler: cannot reach a Dask scheduler at 'tcp://127.0.0.1:9' within 1 s"
    )


class _Refuses(http.server.BaseHTTPRequestHandler):
    """Answers every connection at once with ``400 Bad Request``, as a web server answers bytes it
    cannot parse (Dask would read the status line as a message length)."""

    def handle(self) -> None:
        self.wfile.write(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture
def web_server():
    """The address of an HTTP server on a free port of 127.0.0.1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _grid_file(tmp_path):
    grid_file = tmp_path / "g.toml"
    grid_file.write_text('preset = "trap"\nhorizon = 100\nreplications = 1\n')
    return grid_file


def test_cli_something_else_than_a_scheduler_answering_is_one_line(tmp_path, capsys, web_server):
    from mlcb.cli import main

    argv = ["sweep", str(_grid_file(tmp_path)), "-o", str(tmp_path / "out"), "-e", "dask"]
    status = main([*argv, "--scheduler", web_server, "--timeout", "2"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith(f"mlcb: error: scheduler: {web_server!r} answers, but not as a Dask scheduler")
    assert not any((tmp_path / "out").glob("*/data"))


def test_cli_a_silent_listener_is_one_line_within_the_timeout(tmp_path):
    """A port that accepts connections and never answers (a listening socket nobody serves): the
    handshake is bounded by --timeout too."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        argv = ["sweep", str(_grid_file(tmp_path)), "-o", str(tmp_path / "out"), "-e", "dask"]
        done = subprocess.run(
            [sys.executable, "-m", "mlcb.cli", *argv, "--scheduler", address, "--timeout", "2"],
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"mlcb: error: scheduler: cannot reach a Dask scheduler at {address!r} within 2 s"
    )


def test_without_dask_the_executor_says_what_to_install(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith(("distributed.", "dask")):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(
        ValueError, match=r"^the dask executor needs dask.distributed: pip install 'mlcb\[dask\]'$"
    ):
        mlcb.sweep(GRID, out=tmp_path, executor="dask")
    assert list(tmp_path.iterdir()) == []
    # the local executor does not need it
    assert sweeps.make_grid(GRID).name == "dasky"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_scheduler_that_goes_away_is_one_line_and_the_rerun_recovers(tmp_path, capfd, monkeypatch):
    """Issue 36, item 6: the scheduler killed after two parts. `mlcb sweep` says so in one line
    (no Dask tracebacks), status 1, the finished parts kept; the same command on a live cluster
    runs only the rest, to the undisturbed result."""
    from mlcb.cli import main

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1", "--nthreads", "1"]
        + ["--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        grid = tmp_path / "gone.toml"
        grid.write_text(
            'preset = "trap"\nname = "gone"\nhorizon = 20000\nreplications = 6\nblock = 1\n[grid]\nbudget = [1, 2]\n'
        )
        real = sweeps.write_part
        written = []

        def write_then_stop(*args, **kwargs):
            real(*args, **kwargs)
            written.append(args[1])
            if len(written) == 2:
                scheduler.kill()

        monkeypatch.setattr(sweeps, "write_part", write_then_stop)
        for _ in range(100):  # the worker has joined
            with distributed.Client(address, timeout=10) as probe:
                if probe.scheduler_info()["workers"]:
                    break
            time.sleep(0.2)
        capfd.readouterr()
        command = ["sweep", str(grid), "--executor", "dask", "--scheduler", address, "--timeout", "5"]
        assert main([*command, "--out", str(tmp_path / "out"), "--quiet", "--no-plot"]) == 1
        err = capfd.readouterr().err
        (line,) = err.strip().splitlines()
        assert line.startswith(f"mlcb: error: the Dask cluster at {address} went away while the sweep ran (")
        assert line.endswith("); the finished tasks are saved, run the same command again to run the rest")
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    monkeypatch.undo()
    rerun = mlcb.sweep(grid, out=tmp_path / "out", workers=1)
    assert rerun.skipped >= 2 and rerun.computed + rerun.skipped == 12
    assert_same(mlcb.sweep(grid, out=tmp_path / "undisturbed", workers=1).result, rerun.result)


# --- issue 46, item 4: Dask workers register what the submitting process registered ----------------
DASK_PLUGIN = '''
import agents
import envs
from envs.bandit import TrapEnv
from mlcb import plot, policies
from mlcb.storage import outputs

policies.register("dask-mlcb", "mlcb.policies.m_lcb:MLCB", summary="M-LCB under a plugin's name")
agents.register("dask-ucb", "agents.bandits:UCB1", summary="UCB1 with c = 4", c=4.0)
envs.register("dask/Trap-v0", "envs.bandit:TrapEnv", summary="a plugin's trap", n_experts=6)
plot.register("dask-figure", "mlcb.plot:regret", summary="the regret figure, a plugin's")
outputs.register_writer("dask-notes", "NAME:write", files=("dask-notes.txt",), summary="a note")
# A plugin may replace a built-in name when it asks to: the workers must build its trap too.
envs.register("mlcb/Trap-v0", "NAME:WideTrap", summary="a trap of wider arms", override=True)


class WideTrap(TrapEnv):
    """The paper's trap with other reward gaps: another setting (another key) than the built-in one."""

    def __init__(self, n_experts=10, n_arms=2, gap=0.3, **kwargs):
        super().__init__(n_experts=n_experts, n_arms=n_arms, **kwargs)
        self.gap = gap


def write(result, directory):
    (directory / "dask-notes.txt").write_text("notes")
'''


@pytest.fixture
def plugin_registries(monkeypatch, tmp_path):
    """A plugin module in ``tmp_path`` (on ``sys.path``, which spawned workers inherit), loaded as
    ``--plugin`` loads it, with every registry restored afterwards."""
    import gymnasium as gym

    import agents
    import envs
    from mlcb import policies, registry
    from mlcb.storage import outputs

    name = "dask_plugin_" + str(os.getpid())
    (tmp_path / f"{name}.py").write_text(DASK_PLUGIN.replace("NAME", name))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_PLUGINS", {})
    for table in (policies.registry, agents.registry, envs.registry, outputs.FIGURES, outputs.WRITERS):
        monkeypatch.setattr(table, "_entries", dict(table._entries))
    monkeypatch.setattr(outputs, "_WRITER_FILES", dict(outputs._WRITER_FILES))
    trap = gym.registry["mlcb/Trap-v0"]
    with pytest.warns(UserWarning, match="environment 'mlcb/Trap-v0' is now"):
        registry.load_plugin(name)
    yield name
    gym.registry["mlcb/Trap-v0"] = trap
    gym.registry.pop("dask/Trap-v0", None)
    sys.modules.pop(name, None)


def _registered() -> dict:
    """A worker's registered names and entry points, by kind."""
    from mlcb.sweeps import worker

    return {
        kind: {e.name: e.entry_point for e in table.entries()}
        for kind, (table, _) in worker._registries().items()
    }


def test_dask_workers_register_the_plugins_names(plugin_registries, tmp_path):
    """With ``--executor dask`` every task failed with 'unknown policy': the workers loaded no
    plugin. Every worker of a LocalCluster of processes now registers the plugin's policy, expert
    family, environment, figure and writer, and builds the plugin's override of a built-in name."""
    grid = {**GRID, "name": "plugged", "horizon": 300, "replications": 2, "checkpoints": 5,
            "grid": {"policy": ["mlcb", "dask-mlcb"]}}  # fmt: skip
    from mlcb import registry

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        outcome = mlcb.sweep(
            grid, out=tmp_path / "dask", executor="dask", scheduler=cluster.scheduler_address
        )
        assert outcome.failed == [] and outcome.computed == 2, outcome.failed
        workers = client.run(_registered)
        # A plugin the workers cannot import (its folder joined this process's path after they
        # started): one line before any task, naming it.
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "dask_only_here.py").write_text("from mlcb import policies\n")
        sys.path.insert(0, str(elsewhere))
        try:
            registry.load_plugin("dask_only_here")
            with pytest.raises(ValueError) as caught:
                mlcb.sweep({**grid, "name": "unplugged"}, out=tmp_path / "dask", executor="dask",
                           scheduler=cluster.scheduler_address)  # fmt: skip
        finally:
            sys.path.remove(str(elsewhere))
            sys.modules.pop("dask_only_here", None)
    assert str(caught.value) == (
        "the Dask workers cannot register what this process registered: plugin 'dask_only_here': no "
        "such module (is its directory on PYTHONPATH?) (install the plugins on the workers too)"
    )
    assert len(workers) == 2
    mine = _registered()
    for names in workers.values():
        assert names == mine
        assert names["policy"]["dask-mlcb"] == "mlcb.policies.m_lcb:MLCB"
        assert names["expert"]["dask-ucb"] == "agents.bandits:UCB1"
        assert names["environment"]["dask/Trap-v0"] == "envs.bandit:TrapEnv"
        assert names["environment"]["mlcb/Trap-v0"] == f"{plugin_registries}:WideTrap"
        assert names["figure"]["dask-figure"] == "mlcb.plot:regret"
        assert names["writer"]["dask-notes"] == f"{plugin_registries}:write"
    curves = outcome.result.curves.set_index(["setting", "replication", "round"])["regret"]
    assert (curves.loc["mlcb M=1"].to_numpy() == curves.loc["dask-mlcb M=1"].to_numpy()).all()
