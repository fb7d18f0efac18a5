"""Where a sweep's tasks run: worker processes of this machine, or a Dask cluster.

Both executors take the tasks as plain data (:mod:`mlcb.sweeps.worker`) and call back
``on_result(index, output)`` or ``on_error(index, error)`` as each task finishes, in any order.

``local``
    A process pool of this machine; a pool broken by a dying worker is started again for the
    tasks that had not finished.
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

import concurrent.futures
import contextlib
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

from mlcb.sweeps.worker import register_as, registrations, run_registered, run_task
from mlcb.validation import InputError

EXECUTORS = ("local", "dask")
#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_TIMEOUT = 10.0
DASK_HINT = "the dask executor needs dask.distributed: pip install 'mlcb[dask]'"


def first_line(error: BaseException) -> str:
    """``error`` in one line: its type and the first line of its message."""
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


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


def _start_worker(parent: int, given: dict) -> None:
    """Worker initializer: end with the parent (:func:`_exit_with_parent`), and register what the
    parent registered (:func:`mlcb.sweeps.worker.register_as`): the installed ``mlcb.plugins``
    entry points, the modules named with ``--plugin`` and every registered name (a forked worker
    has them already; a spawned one, where the parent runs other threads or on a platform without
    fork, imports the plugins again, from the parent's ``sys.path``)."""
    _exit_with_parent(parent)
    register_as(given)


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


def run_local(payloads: list[dict], workers: int, on_result: Callable, on_error: Callable) -> None:
    """Run ``payloads`` in ``workers`` processes; a pool broken by a dying worker is started again
    (up to three times) for the tasks that had not finished. The workers end with this process,
    however it ends (:func:`_exit_with_parent`)."""
    from concurrent.futures.process import BrokenProcessPool

    pending = list(range(len(payloads)))
    context = multiprocessing.get_context(_start_method())
    for _attempt in range(4):
        broken = []
        with concurrent.futures.ProcessPoolExecutor(
            min(workers, len(pending)),
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), registrations()),
        ) as pool:
            futures = {pool.submit(run_task, payloads[i]): i for i in pending}
            try:
                for future in concurrent.futures.as_completed(futures):
                    index = futures[future]
                    error = future.exception()
                    if isinstance(error, BrokenProcessPool):
                        broken.append(index)
                    elif error is not None:
                        on_error(index, error)
                    else:
                        on_result(index, future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        if not broken:
            return
        pending = sorted(broken)
    for index in pending:
        on_error(index, RuntimeError("worker processes kept dying"))


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
