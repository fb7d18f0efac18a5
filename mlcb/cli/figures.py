"""The figures of ``mlcb run`` and ``mlcb compare`` drawn in a second process, started with the
command, so that importing matplotlib and the plotting code overlaps the simulation.

A small run spends about as long importing matplotlib and drawing its figures as on everything
else; on a machine with a second core the command line starts :class:`FigureProcess` before it
builds its settings. That process imports matplotlib, pandas and :mod:`mlcb.plot` while the run
imports the engine and simulates; it then receives the finished result, draws the figures with
:func:`mlcb.report.figure_png` (the same function, so the same PNG bytes as drawn in place) and
hands back their bytes, while the command writes the result's files. Whatever goes wrong over
there (the process cannot start, dies, or a figure fails), the command draws the figures itself,
as it would without it, so that every error and its message are the same.

It is used by the command line as a process (``main()`` reading ``sys.argv``) when the figures are
wanted, a core stands idle besides the command's own (on a busy machine the second process would
only wait for a core and repeat the imports) and matplotlib is not imported yet (a process that
has it draws in place at no import cost); ``MLCB_FIGURE_PROCESS=0`` turns it off. Nothing else
runs in the second process: it reads one request from its standard input (the result, pickled by
its parent) and writes the figures to its standard output (a JSON header line, then the PNG bytes).
"""

from __future__ import annotations

import builtins
import json
import os
import pickle
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The environment variable that turns the figure process off (``0``).
VARIABLE = "MLCB_FIGURE_PROCESS"
#: Seconds to wait for the figures before drawing them in place.
TIMEOUT = 600.0


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _idle_cores() -> float:
    """About how many cores are free for this process: the cores it may use less the other threads
    running or waiting for a core (Linux's ``/proc/loadavg``, a snapshot: a load average would
    count this command's own earlier runs), elsewhere less the load average of the last minute."""
    others: float
    try:
        others = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        try:
            others = os.getloadavg()[0]
        except (AttributeError, OSError):  # pragma: no cover - platforms without a load average
            others = 0
    return _cores() - max(0, others)


class FigureProcess:
    """A second Python process that draws a result's figures (see the module's docstring)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.request: bytes | None = None

    @classmethod
    def start(cls) -> FigureProcess | None:
        """A started figure process, or ``None`` where drawing in place is as quick: no second core
        stands idle (one core, or the others busy: the process would only wait for a core and
        repeat this one's imports), matplotlib is imported already, or it is turned off; ``None``
        too if it cannot start."""
        free = _idle_cores()  # one core for this process, one for the figures
        if os.environ.get(VARIABLE, "1") == "0" or "matplotlib" in sys.modules or free < 2:
            return None
        try:
            return cls()
        except OSError:
            return None

    def draw(self, result: Any, kinds: Sequence[str], dpi: int = 120) -> None:
        """Hand ``result`` over to be drawn (``kinds`` at ``dpi``); :meth:`figures` collects them.
        Only mlcb's own figures are drawn there (that process loads no plugin: a figure a plugin
        registers, or registers again under a built-in name, is drawn in place)."""
        from mlcb.storage.outputs import FIGURES

        own = [kind in FIGURES and FIGURES.entry(kind).entry_point.startswith("mlcb.plot:") for kind in kinds]
        if all(own):
            self.request = pickle.dumps((result, tuple(kinds), dpi), protocol=pickle.HIGHEST_PROTOCOL)

    def figures(self) -> dict[str, bytes] | None:
        """The PNG bytes of each kind asked for by :meth:`draw`, after re-issuing the warnings
        drawing them gave; ``None`` when the process could not draw them all."""
        process, request = self.process, self.request
        if process is None or request is None:
            return None
        self.process = None
        try:
            reply, _ = process.communicate(request, timeout=TIMEOUT)
        except (OSError, subprocess.SubprocessError):
            process.kill()
            process.wait()
            return None
        if process.returncode != 0:
            return None
        header, _, body = reply.partition(b"\n")
        try:
            answer = json.loads(header)
            sizes = [(str(kind), int(size)) for kind, size in answer["figures"]]
            caught = [(str(name), str(message)) for name, message in answer["warnings"]]
        except (ValueError, KeyError, TypeError):
            return None
        if sum(size for _, size in sizes) != len(body):
            return None
        figures, start = {}, 0
        for kind, size in sizes:
            figures[kind] = body[start : start + size]
            start += size
        for name, message in caught:  # a warning class of Python's own, else UserWarning
            category = getattr(builtins, name, None)
            if not (isinstance(category, type) and issubclass(category, Warning)):
                category = UserWarning
            warnings.warn(message, category, 2)
        return figures

    def close(self) -> None:
        """Stop the process if its figures were not collected (an error before the run ended)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def __enter__(self) -> FigureProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve() -> int:
    """The second process: import what drawing needs, then draw the one request read from
    standard input; 0 with the figures on standard output, 1 if any figure failed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (imported now, while the parent simulates)

    from mlcb import plot  # noqa: F401
    from mlcb.report import figure_png

    request = sys.stdin.buffer.read()
    if not request:
        return 0
    result, kinds, dpi = pickle.loads(request)  # from the parent process that started this one
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            figures = [(kind, figure_png(result, kind, dpi)) for kind in kinds]
        except Exception:  # noqa: BLE001 - the parent draws in place and reports it
            return 1
    header = {
        "figures": [[kind, len(data)] for kind, data in figures],
        "warnings": [[type(w.message).__name__, str(w.message)] for w in caught],
    }
    sys.stdout.buffer.write(json.dumps(header).encode() + b"\n" + b"".join(data for _, data in figures))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(serve())
    except KeyboardInterrupt:  # the command was interrupted: so is its helper, quietly
        sys.exit(130)
