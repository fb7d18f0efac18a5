"""The ``mlcb`` program's start-up and end: Python's cycle collector paused while a command imports
what it needs and reads its input, then what start-up built frozen out of the collector's sight
(docs/design.md, "Start-up"); and an interrupted ``mlcb paper`` ended without Python's shutdown."""

from __future__ import annotations

import gc
import os
import sys

#: Set while :func:`mlcb.cli.program` has paused the cycle collector and not resumed it yet.
_PAUSED: list[bool] = []


def pause_collector() -> None:
    """Pause Python's cycle collector while the ``mlcb`` program starts (:func:`mlcb.cli.program` only).

    Importing pandas, Numba, matplotlib and the package, and loading compiled code, builds about a
    million objects that live until the process exits. The collector's passes over them while they
    are built cost a tiny ``mlcb run`` about a seventh of its time (0.3 s; docs/design.md, "Start-up").
    Nothing built at start-up is garbage, so the collector waits until :func:`resume_collector`."""
    if gc.isenabled():
        gc.disable()
        _PAUSED.append(True)


def resume_collector() -> None:
    """End :func:`pause_collector`: move what start-up built out of the collector's sight for good
    (:func:`gc.freeze`; it lives until the program exits) and switch the collector on again for the
    command's work. Each command calls this once its modules are imported and its input is read,
    and the program once the command ends. It does nothing when nothing was paused: :func:`mlcb.cli.main`
    called from Python leaves the caller's collector alone."""
    if _PAUSED:
        _PAUSED.clear()
        gc.freeze()
        gc.enable()


def import_figures() -> None:
    """matplotlib (with its file-only Agg backend), seaborn and mlcb's figures, imported now, while
    the collector is paused, rather than when the first figure is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401

    from mlcb.plot import _look

    _look.seaborn()


def end(code: int) -> int:
    """``code``, or, where an interrupted ``mlcb paper`` left sections running in threads of this
    process, the end of the process at once with ``code`` (:func:`mlcb.cli.program` only).

    An interrupt stops the sections (:func:`mlcb.paper.reproduce` waits for them); a second one
    leaves them running compiled code, which cannot be stopped inside, and the finished sections
    are already saved (a section in progress starts over on the next run). Python's own shutdown
    with such threads still running can abort the process (SIGABRT: the command's exit status
    then says "killed" after it printed that it was interrupted), so the program flushes its
    output and leaves without that shutdown."""
    paper = sys.modules.get("mlcb.paper")
    if paper is None or not paper.sections_running():
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone away, or a stream closed: nothing to flush
            pass
    os._exit(code)
