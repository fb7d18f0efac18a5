"""A cooperative stop for runs in threads other than Python's main one.

An interrupt (Ctrl-C) reaches only the main thread. A run started in another thread, as
:func:`mlcb.paper.reproduce` runs its sections, would otherwise go on to its end after the main
thread has given up on it, holding the cores, and Python's shutdown beside such a thread can
abort the process. A thread that runs under :func:`stop_when` is stopped when its event is set:
the engine looks at the event before each replication, between slices of a replication's
compiled rounds, and every few hundred rounds of the Python loop and of a best-in-hindsight pass,
and then raises :class:`Stopped`. What is kept is what an interrupt keeps: every finished
replication's part (where the run keeps parts); a replication in flight starts over on the next
run. Where no event is set, nothing is looked at and nothing changes: the rounds played in
slices are the rounds of one call, bit for bit.

>>> import threading
>>> from mlcb.engine import stopping
>>> event = threading.Event()
>>> with stopping.stop_when(event):
...     stopping.check()  # not set: nothing happens
...     event.set()
...     try:
...         stopping.check()
...     except KeyboardInterrupt as stop:  # a Stopped
...         print(stop)
the run was stopped (an interrupt in another thread)
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

#: Rounds of the Python loops between two looks at the event.
EVERY = 256


class Stopped(KeyboardInterrupt):
    """A run stopped because the event it runs under (:func:`stop_when`) was set. An interrupt,
    as far as every ``except`` is concerned: no expert's fault, no error of the setting."""

    def __init__(self) -> None:
        super().__init__("the run was stopped (an interrupt in another thread)")


_local = threading.local()


@contextlib.contextmanager
def stop_when(event: threading.Event) -> Iterator[threading.Event]:
    """Runs of this thread, inside the block, stop once ``event`` is set (:class:`Stopped`)."""
    previous = getattr(_local, "event", None)
    _local.event = event
    try:
        yield event
    finally:
        _local.event = previous


def current() -> threading.Event | None:
    """The event this thread's runs stop on, or ``None`` (:func:`stop_when`)."""
    return getattr(_local, "event", None)


def check(event: threading.Event | None = None) -> None:
    """Raise :class:`Stopped` if ``event`` (default: this thread's, :func:`current`) is set."""
    if event is None:
        event = current()
    if event is not None and event.is_set():
        raise Stopped
