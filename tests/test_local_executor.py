"""The local executor's workers: a worker that dies, even while it writes its result, costs its
task a new start and nothing else; a sweep never waits for a dead worker.

Each case runs in a child Python with a time limit, so that a regression (a pool waiting forever
for the rest of a half-written result, as ``ProcessPoolExecutor`` did) fails the test instead of
hanging the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: The child: tasks are (index, what); a task's worker dies as ``what`` says, once per marker file
#: or always; the child prints each outcome as a JSON line.
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from multiprocessing import connection
    from pathlib import Path

    from mlcb.sweeps import executors

    executors._start_method = lambda: sys.argv[2]
    folder = Path(sys.argv[1])

    def die_writing():
        # the worker writes half of its result into its pipe and is killed
        original = connection.Connection._send

        def half(self, buffer, write=os.write):
            if len(buffer) > 100_000:
                os.write(self._handle, bytes(buffer[: len(buffer) // 2]))
                os.kill(os.getpid(), signal.SIGKILL)
            return original(self, buffer)

        connection.Connection._send = half

    def task(payload):
        index, what = payload["index"], payload["what"]
        first = not (folder / str(index)).exists()
        with open(folder / str(index), "a") as mark:  # one line per start
            mark.write("started\\n")
        if what == "die-writing-once" and first:
            die_writing()
        elif what == "killed-always":
            os.kill(os.getpid(), signal.SIGKILL)
        elif what == "exit-always":
            os._exit(3)
        elif what == "raises":
            raise ValueError(f"task {index} is wrong")
        elif what == "exits":
            sys.exit(2)
        return {"index": index, "data": b"x" * 1_000_000}

    if __name__ == "__main__":
        kinds = json.loads(sys.argv[3])
        payloads = [{"index": i, "what": what} for i, what in enumerate(kinds)]

        def on_result(index, output):
            assert output["index"] == index and len(output["data"]) == 1_000_000
            print(json.dumps([index, "result"]), flush=True)

        def on_error(index, error):
            print(json.dumps([index, f"{type(error).__name__}: {error}"]), flush=True)

        executors.run_local(payloads, int(sys.argv[4]), on_result, on_error, task=task)
        starts = {int(p.name): len(p.read_text().splitlines()) for p in folder.iterdir()}
        print(json.dumps(["starts", [starts[i] for i in range(len(kinds))]]), flush=True)
    """
)


def _run(tmp_path, method, kinds, workers):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    marks = tmp_path / "marks"
    marks.mkdir()
    done = subprocess.run(
        [sys.executable, str(script), str(marks), method, json.dumps(kinds), str(workers)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {index: outcome for index, outcome in lines[:-1]}, lines[-1], done.stderr


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_worker_killed_while_writing_its_result_costs_its_task_a_new_start(tmp_path, method):
    kinds = ["fine", "die-writing-once", "fine", "fine", "fine"]
    outcomes, starts, stderr = _run(tmp_path, method, kinds, workers=2)
    assert outcomes == {i: "result" for i in range(5)}
    assert starts == ["starts", [1, 2, 1, 1, 1]]
    assert "Traceback" not in stderr


def test_a_task_whose_workers_keep_dying_fails_alone_naming_how(tmp_path):
    kinds = ["killed-always", "fine", "exit-always", "raises", "exits", "fine"]
    outcomes, starts, _ = _run(tmp_path, "fork", kinds, workers=2)
    assert outcomes == {
        0: "RuntimeError: its worker process died 4 times (last: killed by SIGKILL)",
        1: "result",
        2: "RuntimeError: its worker process died 4 times (last: exit code 3)",
        3: "ValueError: task 3 is wrong",
        4: "SystemExit: 2",
        5: "result",
    }
    assert starts == ["starts", [4, 1, 4, 1, 1, 1]]


def test_one_worker_runs_every_task_in_turn(tmp_path):
    outcomes, starts, _ = _run(tmp_path, "fork", ["fine"] * 4, workers=1)
    assert outcomes == {i: "result" for i in range(4)}
    assert starts == ["starts", [1, 1, 1, 1]]
