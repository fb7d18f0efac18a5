"""What a setting's run shows while it runs (``mlcb.simulate(progress=True)``, ``mlcb run``).

Progress is counted in rounds, summed over the replications, so that it moves within a long
replication too (the compiled engine plays a replication's rounds in slices and reports each,
:func:`mlcb.engine.replications.run_replication`). When Numba compiles (a first run on a machine,
or a pool of one's own classes), a line says so while it happens, and then how long it took.

Two ways to show it, chosen by where standard error goes:

- a terminal (or a notebook): a progress bar over the rounds, with the replications finished;
- anything else (a log file, a pipe, a batch system's output): plain lines, no carriage
  returns: the compiling notice, a line every :data:`LINE_EVERY` seconds while a setting runs
  longer than that, and one line when it ends, with its replications, rounds and seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from mlcb.kernels.jit import CompileWatch

#: Seconds between two lines of a long setting when standard error is not a terminal.
LINE_EVERY = 60.0


def interactive(stream: Any) -> bool:
    """Whether ``stream`` is shown live: a terminal, or a Jupyter kernel's output (where the
    progress bar is a widget)."""
    isatty = getattr(stream, "isatty", None)
    try:
        if isatty is not None and isatty():
            return True
    except ValueError:  # a closed stream
        return False
    return "ipykernel" in sys.modules


def duration(seconds: float) -> str:
    """``seconds`` for a person: ``4.2 s``, ``3 min 5 s``, ``2 h 01 min``.

    Examples
    --------
    >>> duration(4.24), duration(185.0), duration(7_290.0)
    ('4.2 s', '3 min 5 s', '2 h 01 min')
    """
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """The progress of one setting: ``replications`` runs of ``horizon`` rounds, named ``label``.

    A context manager: inside it, Numba's compilations are watched (:class:`CompileWatch`).
    :meth:`rounds` and :meth:`done` may be called from any thread.

    Examples
    --------
    >>> import io
    >>> log = io.StringIO()
    >>> with Progress("trap M=2", replications=2, horizon=1_000, stream=log) as progress:
    ...     for replication in range(2):
    ...         progress.rounds(replication, 1_000)
    ...         progress.done(replication)
    >>> log.getvalue().startswith("trap M=2: 2 replications of 1,000 rounds in ")
    True
    """

    def __init__(
        self,
        label: str,
        replications: int,
        horizon: int,
        stream: TextIO | None = None,
        line_every: float = LINE_EVERY,
    ) -> None:
        self.label = label
        self.replications = int(replications)
        self.horizon = int(horizon)
        self.stream = sys.stderr if stream is None else stream
        self.live = interactive(self.stream)
        self.line_every = float(line_every)
        self._lock = threading.Lock()
        self._counted: dict[int, int] = {}
        self._finished = 0
        self._rounds = 0
        self._bar: Any = None
        self._watch = CompileWatch(self._compiling)
        self._compiling_since: float | None = None
        self._counting = False
        self._started = time.perf_counter()
        self._last_line = self._started

    # -- the compiler -------------------------------------------------------------------------
    def _compiling(self, cached: bool) -> None:
        when = "once: later runs load it from the cache"
        if not cached:
            when = "a pool of one's own classes: once per process"
        self._say(f"{self.label}: compiling the engine for this setting ({when})...")
        self._compiling_since = time.perf_counter()

    def _compiled(self) -> None:
        """Called with every count: after a compilation, say how long it took; the first count
        (re)starts the bar's clock, so that neither compiling nor building the tables counts in
        its rate and its estimate of the time left."""
        if self._compiling_since is not None:
            self._compiling_since = None
            self._say(f"{self.label}: compiled in {duration(self._watch.seconds)}")
        if not self._counting:
            self._counting = True
            if self._bar is not None:
                self._bar.unpause()

    # -- the counts ---------------------------------------------------------------------------
    def rounds(self, replication: int, count: int) -> None:
        """``count`` more rounds of ``replication`` played."""
        with self._lock:
            self._compiled()
            self._counted[replication] = self._counted.get(replication, 0) + int(count)
            self._advance(int(count))

    def done(self, replication: Any) -> None:
        """``replication`` (its index, or anything with an ``index``) finished or loaded: its
        rounds not reported yet count now."""
        index = int(getattr(replication, "index", replication))
        with self._lock:
            self._compiled()
            self._finished += 1
            self._advance(max(0, self.horizon - self._counted.pop(index, 0)))

    def _advance(self, count: int) -> None:
        self._rounds += count
        if self.live:
            bar = self._open_bar()
            bar.set_postfix_str(f"{self._finished}/{self.replications} replications", refresh=False)
            bar.update(count)
            return
        now = time.perf_counter()
        if now - self._last_line >= self.line_every and self._finished < self.replications:
            self._last_line = now
            share = self._rounds / max(1, self.replications * self.horizon)
            self._say(
                f"{self.label}: {share:.0%} of the rounds, {self._finished} of {self.replications} "
                f"replications finished, {duration(now - self._started)}"
            )

    def _open_bar(self) -> Any:
        if self._bar is None:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=self.replications * self.horizon,
                desc=self.label,
                unit="round",
                unit_scale=True,
                leave=False,
                file=self.stream,
            )
        return self._bar

    def _say(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    # -- the context --------------------------------------------------------------------------
    def __enter__(self) -> Progress:
        self._started = self._last_line = time.perf_counter()
        if self.live:
            self._open_bar()
        self._watch.__enter__()
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self._watch.__exit__(kind, error, trace)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if kind is None and not self.live:
            compiling = f", {duration(self._watch.seconds)} of it compiling" if self._watch.count else ""
            self._say(
                f"{self.label}: {self.replications:,} replication{'s' if self.replications != 1 else ''} "
                f"of {self.horizon:,} rounds in {duration(time.perf_counter() - self._started)}{compiling}"
            )
