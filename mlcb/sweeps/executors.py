"""Where a sweep's tasks run: worker processes of this machine, or a Dask cluster.

Both executors take the tasks as plain data (:mod:`mlcb.sweeps.worker`) and call back
``on_result(index, output)`` or ``on_error(index, error)`` as each task finishes, in any order.

``local``
    Worker processes of this machine, each with a pipe of its own; the task of a worker that dies
    is started again in a new one (up to four times), the other workers going on.
``dask``
    A ``distributed.Client``, connected to a scheduler address or to a ``LocalCluster`` started
    on 127.0.0.1 for the sweep. The scheduler runs the tasks of a worker that dies again
    elsewhere; a task that raises is not retried (the cause is in its setting).

Every executor's workers register what the submitting process registered
(:func:`mlcb.sweeps.worker.register_as`): its plugins (``--plugin`` modules and installed entry
points) and every registered policy, expert family, environment, figure and writer, so that a
name resolves on a worker as it does where the sweep was validated.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

from mlcb.errors import first_line
from mlcb.sweeps.worker import register_as, registrations, run_registered, run_task
from mlcb.validation import InputError

EXECUTORS = ("local", "dask")
#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_TIMEOUT = 10.0
DASK_HINT = "the dask executor needs dask.distributed: pip install 'mlcb[dask]'"


def _start_method() -> str:
    """``fork`` where it is safe (POSIX, and this process runs no other thread): workers start at
    once with everything imported and need no ``if __name__ == "__main__"`` guard in a script;
    ``spawn`` otherwise."""
    import threading

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "spawn"


#: Seconds between a worker's looks at whether the process that started it is still there.
PARENT_POLL = 0.2


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when ``parent`` is gone.

    A worker outlives a sweep that is killed (SIGTERM, SIGKILL, a job scheduler's time limit):
    the pool's worker processes wait for tasks from a parent that no longer exists. A forked one
    also holds the sweep's lock (a copy of the parent's locked descriptor), so the command that
    would resume the sweep waits for a process nobody sees. A daemon thread looks at the parent
    process id every :data:`PARENT_POLL` seconds (the kernels release the GIL) and leaves at once
    when the worker has been handed to another parent; the parts the parent wrote stay."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="mlcb-exit-with-parent", daemon=True).start()


#: Times a task is started before a worker that dies while running it fails it.
STARTS = 4


def run_local(
    payloads: list[dict], workers: int, on_result: Callable, on_error: Callable, task: Callable = run_task
) -> None:
    """Run ``payloads`` in ``workers`` processes of this machine, ``task(payload)`` in each.

    Each worker has a pipe of its own to this process, and the pipes and the workers' process
    sentinels are waited on together: a worker that dies (killed, out of memory, a crash in
    compiled code), even while it writes its result, is seen at once, its task is started again
    in a new worker (up to :data:`STARTS` times in all, then the task fails naming how its workers
    ended) and the other workers go on. (A ``concurrent.futures.ProcessPoolExecutor`` shares one
    result pipe among its workers: a worker killed while writing a large result left half a
    message in it, and the pool waited for the rest forever.) The workers end with this process,
    however it ends (:func:`_exit_with_parent`)."""
    context: Any = multiprocessing.get_context(_start_method())
    given = registrations()
    todo = collections.deque(range(len(payloads)))
    starts: collections.Counter[int] = collections.Counter()
    running: dict[Any, tuple[Any, int | None]] = {}  # connection -> (process, task index)

    def start_worker() -> Any:
        """A new worker, idle; returns this process's end of its pipe."""
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_worker, args=(theirs, os.getpid(), given, task), name="mlcb-sweep-worker"
        )
        process.start()
        theirs.close()  # the worker holds the only other end: its death is an end of file here
        running[ours] = (process, None)
        return ours

    def hand_out(connection: Any) -> None:
        process, _ = running[connection]
        index = todo.popleft()
        starts[index] += 1
        running[connection] = (process, index)
        try:
            connection.send((index, payloads[index]))
        except OSError:  # it died before this task reached it: seen below, as any death
            starts[index] -= 1

    def ended(connection: Any) -> None:
        """The worker of ``connection`` is gone: its task is started again, or fails."""
        process, index = running.pop(connection)
        connection.close()
        process.join(5)
        if process.exitcode is None:  # alive without its pipe
            process.kill()
            process.join()
        if index is None:
            return
        if starts[index] < STARTS:
            todo.appendleft(index)
        else:
            on_error(index, RuntimeError(f"its worker process died {STARTS} times (last: {_how(process)})"))

    try:
        for _ in range(min(workers, len(todo))):
            start_worker()
        for connection in list(running):
            hand_out(connection)
        while running:
            sentinels = {process.sentinel: connection for connection, (process, _) in running.items()}
            for ready in multiprocessing.connection.wait([*running, *sentinels]):
                connection = sentinels.get(ready, ready)
                if connection not in running:  # its pipe and its sentinel were both ready
                    continue
                try:
                    outcome, index, value = connection.recv()
                except (EOFError, OSError):  # dead, or died while writing its result
                    ended(connection)
                    if todo:
                        hand_out(start_worker())
                    continue
                except Exception as error:  # a result this process cannot read back
                    outcome, index, value = "error", running[connection][1], error
                running[connection] = (running[connection][0], None)
                (on_result if outcome == "result" else on_error)(index, value)
                if todo:
                    hand_out(connection)
                else:
                    with contextlib.suppress(OSError):
                        connection.send(None)  # done: the worker leaves
    finally:
        for connection, (process, _) in running.items():
            process.kill()
            process.join()
            connection.close()


def _how(process: Any) -> str:
    """How the worker ``process`` ended, in words: ``killed by SIGKILL``, ``exit code 1``."""
    import signal

    code = process.exitcode
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _worker(connection: Any, parent: int, given: dict, task: Callable) -> None:
    """A worker process of :func:`run_local`: ends with ``parent`` (:func:`_exit_with_parent`),
    registers what the parent registered (:func:`mlcb.sweeps.worker.register_as`: the installed
    ``mlcb.plugins`` entry points, the ``--plugin`` modules and every registered name; a forked
    worker has them already, a spawned one, where the parent runs other threads or on a platform
    without fork, imports the plugins again from the parent's ``sys.path``), then runs the tasks
    it is sent, one at a time, and sends back ``("result", index, output)`` or ``("error",
    index, exception)``, until it is sent ``None``."""
    import pickle
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interruption is the parent's to handle
    _exit_with_parent(parent)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, payload = message
        try:
            register_as(given)
            reply = ("result", index, task(payload))
        except BaseException as error:  # SystemExit included: the task's failure, not the worker's
            try:  # what the parent can read back, or the error in one line
                pickle.loads(pickle.dumps(error))
            except Exception:
                error = RuntimeError(first_line(error))
            reply = ("error", index, error)
        try:
            connection.send(reply)
        except OSError:
            return
        except Exception as error:  # an output that cannot be sent (pickled)
            connection.send(
                ("error", index, RuntimeError(f"its output cannot be sent back: {first_line(error)}"))
            )


def _unreachable(scheduler: str, timeout: float, error: BaseException) -> str:
    return (
        f"scheduler: cannot reach a Dask scheduler at {scheduler!r} within {timeout:g} s "
        f"({first_line(error)})"
    )


def _check_scheduler(scheduler: str, timeout: float) -> None:
    """Raise a one-line ``ValueError`` naming ``scheduler`` unless a Dask scheduler answers there
    within ``timeout`` seconds, the handshake included.

    ``distributed.Client`` bounds only the opening of the connection: a peer that accepts it and
    then stays silent keeps it waiting for the handshake, and a peer speaking another protocol (a
    web server's ``400 Bad Request``) has its reply read as a message length, which fails with a
    memory error. So the client's first exchange (handshake, then ``identity``) is made here first,
    in a thread of its own (the caller may be running an event loop), with the whole of it bounded.
    """
    import asyncio

    from distributed.comm import connect

    async def identity() -> Any:
        comm = await connect(scheduler, timeout=timeout)
        try:
            await comm.write({"op": "identity"})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:
        return await asyncio.wait_for(identity(), timeout)

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mlcb-scheduler-check") as pool:
        try:
            reply = pool.submit(asyncio.run, bounded()).result()
        except (OSError, TimeoutError, ValueError) as error:  # refused, silent, or a bad address
            if isinstance(error, TimeoutError) and not str(error):
                error = TimeoutError("no answer to Dask's handshake")
            raise InputError(_unreachable(scheduler, timeout, error)) from None
        except Exception:  # a reply that is not Dask's protocol
            raise InputError(
                f"scheduler: {scheduler!r} answers, but not as a Dask scheduler (its reply is not "
                "Dask's protocol); check the address and port"
            ) from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind}" if isinstance(kind, str) else "something that speaks Dask's protocol"
        raise InputError(
            f"scheduler: {scheduler!r} is {what}, not a Dask scheduler; give the scheduler's address"
        )


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int, timeout: float = CONNECT_TIMEOUT):
    """A ``distributed.Client``: connected to ``scheduler`` (a one-line ``ValueError`` naming it
    when no Dask scheduler answers there within ``timeout`` seconds, whatever the reason), or to a
    LocalCluster of ``workers`` processes on 127.0.0.1, closed on exit."""
    try:
        import distributed
    except ImportError:
        raise InputError(DASK_HINT) from None
    if scheduler is None:
        with (
            warnings.catch_warnings(),
            distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
                silence_logs=40,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            warnings.simplefilter("ignore")
            yield client
        return
    _check_scheduler(scheduler, timeout)
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except Exception as error:  # whatever a failed connection raises, one line naming the address
        raise InputError(_unreachable(scheduler, timeout, error)) from None
    try:
        with _quiet_dask():
            yield client
    finally:
        with _quiet_dask(), contextlib.suppress(Exception):
            client.close(timeout=timeout)


@contextlib.contextmanager
def _quiet_dask():
    """Dask's own loggers held to critical messages: a scheduler that goes away is said in one
    line by :func:`run_dask`, not in Dask's tracebacks of its reconnection attempts."""
    import logging

    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client", "distributed.comm")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _register_on_workers(client: Any, given: dict) -> None:
    """Register on every worker of ``client``'s cluster what this process registered
    (:func:`mlcb.sweeps.worker.register_as`), before any task: a plugin that a worker cannot
    import is one line naming it. A worker that joins later registers with its first task."""
    try:
        client.run(register_as, given)
    except InputError as error:
        raise InputError(
            f"the Dask workers cannot register what this process registered: {error} (install the "
            "plugins on the workers too)"
        ) from None


def run_dask(client: Any, payloads: list[dict], on_result: Callable, on_error: Callable) -> None:
    """Run ``payloads`` on the cluster of ``client``, each task once (a lost worker's tasks are
    run again by the scheduler); an interruption cancels what is left. A cluster that goes away
    (its scheduler stops, the connection drops) is a :class:`~mlcb.errors.ClusterLost` in one
    line, after the tasks that finished were handed on (the sweep has saved them)."""
    import asyncio

    import distributed

    from mlcb.errors import ClusterLost

    given = registrations()
    _register_on_workers(client, given)
    futures = {}
    for index, payload in enumerate(payloads):
        block = f"{payload['first']:06d}-{payload['stop']:06d}"
        key = f"mlcb-{payload['key']}-{block}-{os.getpid()}-{time.time_ns()}"
        futures[client.submit(run_registered, given, payload, key=key, pure=False, retries=0)] = index
    lost = (OSError, TimeoutError, asyncio.CancelledError, concurrent.futures.CancelledError)
    try:
        finished = iter(distributed.as_completed(list(futures)))
        while True:
            try:
                future = next(finished)
                index = futures[future]
                failed = future.status == "error"
                outcome = future.exception() if failed else future.result()
            except StopIteration:
                break
            except lost as error:
                address = getattr(getattr(client, "scheduler", None), "address", "?")
                raise ClusterLost(
                    f"the Dask cluster at {address} went away while the sweep ran ({first_line(error)}); the "
                    "finished tasks are saved, run the same command again to run the rest"
                ) from None
            (on_error if failed else on_result)(index, outcome)
            future.release()
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        raise
