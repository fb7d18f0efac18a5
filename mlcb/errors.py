"""Exceptions with messages that name the parameter and what is allowed, or the faulty expert;
and the warnings about a user's files, shown in one line."""

from __future__ import annotations

import errno
import warnings
from typing import Any


class ExpertError(RuntimeError):
    """An expert failed during a simulation: it raised, returned something that is not a loss,
    or produced a loss that is NaN or outside [0, 1].

    The message names the expert (index and class), the replication and the round, so that the
    fault can be reproduced alone. Replications that finished before the failure are kept where
    the run saves parts (``mlcb.simulate(parts=...)``, ``mlcb run``), and a re-run resumes from
    them.

    Attributes
    ----------
    expert : int
        Index of the expert in the pool.
    expert_class : str
        Its class name.
    replication : int or None
        The replication (``None`` when not known, e.g. outside a simulation).
    round : int
        The round (0 is the warm start).
    value : float or None
        The offending loss, when the fault was a bad loss.
    """

    def __init__(
        self,
        problem: str,
        *,
        expert: int,
        expert_class: str,
        replication: int | None,
        round_: int,
        value: float | None = None,
    ) -> None:
        self.expert = expert
        self.expert_class = expert_class
        self.replication = replication
        self.round = round_
        self.value = value
        where = f"round {round_}" if replication is None else f"replication {replication}, round {round_}"
        super().__init__(f"expert {expert} ({expert_class}), {where}: {problem}")


class PolicyError(RuntimeError):
    """A meta-policy's ``select`` gave what the engine cannot index with (a training set larger
    than its buffer, an expert index outside the pool, a deployed expert outside ``[-1, K)``):
    the run stops at that round, naming the policy, rather than read or write outside its arrays.
    What finished is kept, as for an :class:`ExpertError`."""


class Fault(RuntimeError):
    """A fault of the machine or of a cluster, neither of mlcb nor of its input (a Dask scheduler
    that went away): the command line says what happened in one line, with exit status 1, and
    what finished is kept for a rerun."""


class ClusterLost(Fault):
    """The Dask cluster of a sweep went away while tasks ran (its scheduler stopped, the network
    dropped): the finished tasks are saved, and running the same sweep again runs the rest."""


class PolicyStateFull(RuntimeError):
    """A policy's state has no room left for what it must record: a policy whose memory grows
    with its training steps (R-ed-UCB keeps every reward) is built with room for the horizon's.
    Such a policy offers ``grow(params, state, updates)``, and the Python engine and the river
    selectors (:mod:`mlcb.river`) use it to make room and go on; the state is unchanged when this
    is raised."""


class ExpertLossError(ExpertError, ValueError):
    """An expert's training or deployed loss (or expected loss) is NaN or outside [0, 1]."""

    def __init__(
        self,
        what: str,
        round_: int,
        expert: int,
        value: float,
        expert_class: str = "?",
        replication: int | None = None,
    ) -> None:
        super().__init__(
            f"{what} is {value!r}; losses must be numbers in [0, 1]",
            expert=expert,
            expert_class=expert_class,
            replication=replication,
            round_=round_,
            value=value,
        )


#: What a Python expert's own code may raise that the engine reports as an :class:`ExpertError`
#: naming the expert: any ``Exception``, and ``SystemExit`` (a learner that calls ``sys.exit()``
#: must not end the run, or the command, without a word). ``KeyboardInterrupt`` is left alone: an
#: interrupt stays an interrupt, and what finished is kept.
EXPERT_FAULTS: tuple[type[BaseException], ...] = (Exception, SystemExit)


def first_line(error: BaseException) -> str:
    """``error`` in one line: its type and the first line of its message, or its type alone when
    it says nothing (``sys.exit()``).

    >>> first_line(ZeroDivisionError("no optimum\\nat round 3")), first_line(SystemExit())
    ('ZeroDivisionError: no optimum', 'SystemExit')
    """
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def raised(
    error: BaseException, method: str, expert: int, expert_class: str, replication: int | None, round_: int
) -> ExpertError:
    """An :class:`ExpertError` for an exception raised inside ``expert``'s ``method`` (one of
    :data:`EXPERT_FAULTS`): ``learn raised ZeroDivisionError: division by zero``, ``learn raised
    SystemExit: 3``, or the type alone when the exception says nothing (``sys.exit()``)."""
    detail = str(error)
    problem = f"{method} raised {type(error).__name__}"
    return ExpertError(
        f"{problem}: {detail}" if detail else problem,
        expert=expert,
        expert_class=expert_class,
        replication=replication,
        round_=round_,
    )


class FileWarning(UserWarning):
    """Something in a user's files was found wrong and dealt with (the message names the file and
    what was done). Shown as one line, ``mlcb: CATEGORY: MESSAGE``, without the line of mlcb's
    source that issued it; otherwise an ordinary warning, which ``warnings.filterwarnings``,
    ``python -W`` and ``pytest.warns`` select by its category.

    Examples
    --------
    >>> print(warnings.formatwarning("run/x.npz: damaged; recomputed", FileWarning, "mlcb/x.py", 3), end="")
    mlcb: FileWarning: run/x.npz: damaged; recomputed
    """


class CorruptPartWarning(FileWarning):
    """A kept part could not be used and is recomputed (shown in one line naming the file)."""


class CertificateWarning(UserWarning):
    """A certificate that is not a finite number where it should be one (an expert's rate or
    width that is not a finite number >= 0): the setting's certificate is marked not valid and the
    replications concerned are not checked against it. Shown in one line, as :class:`FileWarning`."""


class NameTaken(UserWarning):
    """A name registered again with ``override=True`` (a plugin replacing a built-in policy, say):
    shown in one line that says which registration now holds the name
    (:meth:`mlcb.registry.Registry.register`)."""


_format_others = warnings.formatwarning


def _format_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    """:class:`FileWarning`, :class:`CertificateWarning` and :class:`NameTaken` in one line; every
    other warning as before. Any warning's text, mlcb's or a library's (matplotlib's glyph
    warning quoting a label's character), is shown with its control characters escaped
    (:func:`mlcb.validation.printable`; line breaks and tabs kept): text from a user's files
    never acts on the terminal."""
    from mlcb.validation import printable

    if issubclass(category, (FileWarning, CertificateWarning, NameTaken)):
        return f"mlcb: {category.__name__}: {printable(str(message))}\n"
    text = printable(str(message), keep="\n\t")
    return _format_others(text, category, filename, lineno, line)


warnings.formatwarning = _format_warning


def class_name(obj: Any) -> str:
    """The class name of ``obj`` as messages show it; for an adapter that wraps a model (its
    ``model`` attribute: a river or scikit-learn model in :class:`~mlcb.river.RiverExpert`, a
    network), the model's class too, the last step's of a pipeline: ``RiverExpert of
    LogisticRegression``, which a pool of eight adapters needs to tell its experts apart.

    Examples
    --------
    >>> class Adapter:
    ...     def __init__(self, model):
    ...         self.model = model
    >>> class Ridge: ...
    >>> class_name(Adapter(Ridge())), class_name(Adapter("ridge")), class_name(Ridge())
    ('Adapter of Ridge', 'Adapter', 'Ridge')
    """
    name = type(obj).__qualname__
    model = getattr(obj, "model", None)
    steps = getattr(model, "steps", None)
    if isinstance(steps, dict) and steps:  # a river pipeline: {name: step}
        model = list(steps.values())[-1]
    elif isinstance(steps, list) and steps and isinstance(steps[-1], tuple) and len(steps[-1]) == 2:
        model = steps[-1][1]  # a scikit-learn pipeline: [(name, step), ...]
    if model is None or type(model).__module__ == "builtins":
        return name
    return f"{name} of {type(model).__name__}"


#: What to do about an operating-system fault, by ``errno``: faults of the machine or of its
#: limits, not of mlcb nor of the input (:func:`os_fault`).
OS_FAULTS = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EDQUOT: "the disk quota is used up: free some space",
    errno.EFBIG: "a file-size limit is set (see `ulimit -f`): raise it",
    errno.EACCES: "permission denied: check the folder's permissions",
    errno.EPERM: "operation not permitted: check the folder's permissions",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.EMFILE: "too many open files (see `ulimit -n`): raise the limit",
    errno.ENFILE: "too many open files on this machine: close some",
    errno.ENOMEM: "not enough memory: use a smaller setting or fewer threads",
    errno.EIO: "an input/output error of the device",
}


def os_fault(error: BaseException) -> str | None:
    """One line that says what happened for an ``OSError`` that is a fault of the machine or its
    limits (a full disk, a file-size limit, permissions; :data:`OS_FAULTS`), or ``None`` for any
    other error.

    Examples
    --------
    >>> os_fault(OSError(errno.EFBIG, "File too large", "results/trap/curves.parquet"))
    'results/trap/curves.parquet: File too large (a file-size limit is set (see `ulimit -f`): raise it)'
    >>> os_fault(ValueError("x")) is None
    True
    """
    return _said(error, OS_FAULTS)


def _said(error: BaseException, advice: dict[int, str]) -> str | None:
    """``path: what happened (what to do)`` for an ``OSError`` whose ``errno`` ``advice`` holds."""
    if not isinstance(error, OSError) or error.errno not in advice:
        return None
    text = error.strerror or str(error)
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{text} ({advice[error.errno]})"


#: What to do about an operating-system error that the path given names: no file system takes
#: it as written (:func:`path_fault`). An input error, not a fault of mlcb nor of the machine.
PATH_FAULTS = {
    errno.ENAMETOOLONG: "a name in the path is longer than the file system allows: shorten it",
    errno.ELOOP: "the path runs round a loop of symbolic links: name another",
    errno.ENOTDIR: "a part of the path is a file, not a folder: name another",
}


def path_fault(error: BaseException) -> str | None:
    """One line for an ``OSError`` that the path itself causes, whatever mlcb does with it (a
    name longer than the file system allows, a loop of links, a file where a folder must be;
    :data:`PATH_FAULTS`), or ``None`` for any other error.

    Examples
    --------
    >>> path_fault(OSError(errno.ENOTDIR, "Not a directory", "notes.txt/trap"))
    'notes.txt/trap: Not a directory (a part of the path is a file, not a folder: name another)'
    >>> path_fault(OSError(errno.ENOSPC, "No space left on device")) is None
    True
    """
    return _said(error, PATH_FAULTS)


#: What a library that cannot be loaded for want of memory says (the dynamic loader's and
#: llvmlite's words).
_LOAD_FAILURES = (
    "failed to map segment from shared object",
    "cannot allocate memory",
    "Could not find/load shared object",
)


def load_fault(error: BaseException) -> str | None:
    """One line for an ``ImportError`` or ``OSError`` raised while a compiled library was loaded
    under a memory limit too small for it (``ulimit -v``: the loader cannot map it), or ``None``
    for any other error.

    Examples
    --------
    >>> load_fault(ValueError("x")) is None
    True
    """
    if not isinstance(error, (ImportError, OSError)):
        return None
    text = str(error)
    if not any(words.lower() in text.lower() for words in _LOAD_FAILURES):
        return None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not on POSIX
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None  # no memory limit: a broken installation, not a fault of the limits
    import re

    named = re.search(r"[\w./-]+\.so\b[\w.]*", text)
    library = getattr(error, "path", None) or (named[0] if named else "a compiled library")
    return (
        f"not enough memory to load {library}: this process may use {soft / 1e9:.2f} GB of address "
        "space (ulimit -v), and mlcb with NumPy, Numba and pandas needs about 1 GB; raise the limit"
    )
