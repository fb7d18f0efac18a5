"""The Python engine's pool of Python experts: :class:`LearnerPool`.

:mod:`mlcb.learners` says what a pool of Python experts is (their family, rates and regret
reference); this module holds one fresh copy of every expert per replication and drives them
through the batched interface of the Python engine (:mod:`mlcb.engine.python_loop`).
"""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np

from mlcb.engine.batch import Batch
from mlcb.errors import EXPERT_FAULTS, ExpertError, class_name, raised
from mlcb.learners import check_distinct, rate_values, seed_of, spawn
from mlcb.validation import shown


class _Cells:
    """Where the engine's (R, W) float64 outputs are written, one number at a time, by flat index
    ``r * W + j``: a flat memoryview of the array (the fastest way to write one Python number into
    it), or the array itself, indexed by row and column, when it offers none."""

    __slots__ = ("array", "width", "flat")
    flat: Any  # a memoryview of float64 cells, or this object

    def __init__(self, array: np.ndarray) -> None:
        self.array, self.width = array, array.shape[1]
        try:
            view = memoryview(array)  # type: ignore[arg-type]  # an ndarray is a buffer
            self.flat = view.cast("B").cast("d") if view.format == "d" and view.ndim == 2 else None
        except (TypeError, ValueError):  # pragma: no cover - the engine's arrays always offer one
            self.flat = None
        if self.flat is None:
            self.flat = self

    def __setitem__(self, i: int, value: Any) -> None:  # the fallback: by row and column
        self.array[divmod(i, self.width)] = value

    def store(self, i: int, value: Any) -> bool:
        """Write ``value`` at flat index ``i`` of the array; ``False`` when it is not a number.
        (A memoryview takes only Python and NumPy scalars; this is the way for anything else a
        float64 array accepts, a 0-d array say; not a string or ``None``, which NumPy would turn
        into a number or ``nan``.)"""
        if value is None or isinstance(value, (str, bytes, np.str_, np.bytes_)):
            return False
        if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            return False
        try:
            self[i] = value
        except (TypeError, ValueError):
            return False
        return True


class _RateTable:
    """``U(n, delta')`` of one expert at ``n = 0, 1, ...``, extended by doubling: an array of
    doubles (8 bytes a count, where a list of floats took 32: the table grows with the expert's
    updates, up to the horizon) whose items read as Python floats, as fast as a list's."""

    def __init__(self, expert: Any, delta_prime: float, index: int) -> None:
        self.expert, self.delta_prime, self.index = expert, delta_prime, index
        self.values = array("d")

    def extend(self, n: int) -> array:
        """The table, long enough to hold ``U(n)``."""
        if n >= len(self.values):
            counts = np.maximum(np.arange(max(1024, 2 * n), dtype=np.float64), 1.0)
            self.values = array("d", rate_values(self.expert, counts, self.delta_prime, self.index).tobytes())
        return self.values


def _defined_in(cls: type, name: str) -> type | None:
    return next((c for c in cls.__mro__ if name in vars(c)), None)


def _block_follows(env: Any) -> bool:
    """Whether ``env``'s ``round_data_block`` is as specific as its ``round_data``: a subclass
    that overrides ``round_data`` alone must not be bypassed by an inherited block method."""
    block, single = _defined_in(type(env), "round_data_block"), _defined_in(type(env), "round_data")
    return block is None or single is None or issubclass(block, single)


class LearnerPool:
    """One fresh copy of every Python expert per replication, as a batched pool.

    Replication ``r``'s copy of expert ``k`` is ``spawn(expert, seed)`` with a seed derived
    from the expert's stream key, which follows the expert's identity: results do not depend on
    threads or on the order of replications, and every policy of a comparison meets the same
    learners.
    """

    def __init__(self, experts: list, env: Any, batch: Batch, delta: float) -> None:
        n_experts = len(experts)
        delta_prime = delta / (2.0 * n_experts)
        self._classes = [class_name(e) for e in experts]
        # Each member's index in the whole pool (a pool that mixes families holds its Python
        # experts in a sub-pool): what faults name and what the environment's round data is asked for.
        self._index = list(range(n_experts)) if batch.indices is None else [int(i) for i in batch.indices]
        self._replications = list(batch.replications)
        self._params, self._states = list(batch.env_params), list(batch.env_states)
        self._round_data = env.round_data
        # An environment whose round data is the same for every expert: fetched once per round
        # for every replication (by the round's first call, play or deploy), reused by train.
        self._shared = bool(getattr(env, "round_data_shared", False))
        block = getattr(env, "round_data_block", None) if self._shared else None
        self._block = block if callable(block) and _block_follows(env) else None
        self._round: list[Any] = []  # the shared round data of every replication at _round_at
        self._round_at = -1
        self._written: dict[int, _Cells] = {}  # the engine's output arrays, by identity
        self.learners = [
            [spawn(expert, seed_of(keys[k]), self._index[k], replication) for k, expert in enumerate(experts)]
            for keys, replication in zip(batch.expert_keys, self._replications)
        ]
        check_distinct(self.learners, self._classes, self._replications, self._index)
        self._steps = [[0] * n_experts for _ in batch.replications]
        tables: dict[int, _RateTable] = {}
        self._tables = [
            tables.setdefault(id(expert), _RateTable(expert, delta_prime, self._index[k]))
            for k, expert in enumerate(experts)
        ]
        self._rates = [table.extend(1) for table in self._tables]

    def describe(self, r: int, k: int) -> str:
        return self._classes[k]

    def _fault(self, problem: str, k: int, r: int, t: int) -> ExpertError:
        return ExpertError(
            problem,
            expert=self._index[k],
            expert_class=self._classes[k],
            replication=self._replications[r],
            round_=t,
        )

    def warm_updates(self, r: int, k: int) -> int:
        """How many updates replication ``r``'s expert ``k`` made in the warm start (its
        ``warm_updates`` attribute after learning ``xi_0``; 1 without one)."""
        return self._steps[r][k]

    def _fetch(self, r: int, t: int, k: int, method: str) -> Any:
        """Replication ``r``'s round data at ``t`` (shared by its experts), asked as for ``k``."""
        params, state = self._params[r], self._states[r]
        try:
            return self._round_data(params, state, t, self._index[k])
        except EXPERT_FAULTS as error:
            raise self._round_data_fault(error, method, k, r, t) from error

    def _round_data_fault(self, error: BaseException, method: str, k: int, r: int, t: int) -> ExpertError:
        """The environment's ``round_data`` failed when asked for expert ``k``'s ``method``: the
        fault is the environment's, located by the expert, replication and round it was asked for."""
        where = f"the environment's round_data (for {method})"
        return raised(error, where, self._index[k], self._classes[k], self._replications[r], t)

    def _shared_round(self, t: int, rows: list, counts: list, method: str) -> list:
        """Every replication's round data at ``t`` (an environment whose round data is shared by
        its experts): one call for the block where the environment offers ``round_data_block``,
        else one per replication; kept for the rest of the round."""
        if self._round_at != t:
            data = None
            if self._block is not None:
                try:
                    data = self._block(self._params, self._states, t)
                except Exception:  # asked again replication by replication, to name the one
                    data = None
                if data is not None and len(data) != len(self._states):
                    data = None
            if data is None:
                data = [self._fetch(r, t, rows[r][0] if counts[r] else 0, method) for r in range(len(rows))]
            self._round, self._round_at = list(data), t
        return self._round

    # One round of the block runs through _play: every replication's round costs a few Python
    # operations besides the experts' own calls, so the loop is kept lean (one round data per
    # replication and round when it is shared, results written through flat memoryviews).
    def play(
        self,
        t: int,
        deployed: np.ndarray,
        n_deployed: np.ndarray,
        deploy_losses: np.ndarray,
        deploy_expected: np.ndarray,
        selected: np.ndarray,
        n_selected: np.ndarray,
        train_losses: np.ndarray,
        train_rates: np.ndarray,
    ) -> None:
        """Round ``t`` of every replication: :meth:`deploy`, then :meth:`train`, replication after
        replication (each replication's learners are its own, so this is the same as deploying
        every replication and then training every one)."""
        self._play(
            t,
            (deployed, n_deployed, deploy_losses, deploy_expected),
            (selected, n_selected, train_losses, train_rates),
        )

    def train(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, rates: np.ndarray
    ) -> None:
        self._play(t, None, (selected, counts, losses, rates))

    def deploy(
        self, t: int, selected: np.ndarray, counts: np.ndarray, losses: np.ndarray, expected: np.ndarray
    ) -> None:
        self._play(t, (selected, counts, losses, expected), None)

    def _cells(self, array: np.ndarray) -> _Cells:
        """Where to write into ``array``: made once for each of the engine's output arrays (it
        passes the same ones every round)."""
        cells = self._written.get(id(array))
        if cells is None or cells.array is not array:
            if len(self._written) >= 16:  # a caller that passes new arrays each time
                self._written.clear()
            cells = self._written[id(array)] = _Cells(array)
        return cells

    _RETURNS = {"deploy": "a pair (loss, expected loss)", "learn": "a pair (loss, rate)"}

    def _store_slowly(
        self,
        first: _Cells,
        second: _Cells,
        i: int,
        a: Any,
        b: Any,
        method: str,
        out: Any,
        k: int,
        r: int,
        t: int,
    ) -> None:
        """Where a flat memoryview refused a value: store through the arrays (a pair of a tuple
        class of one's own, a ``NamedTuple``, as the plain pair it is), or name the expert whose
        ``method`` returned something that is not a number."""
        if isinstance(out, tuple) and out.__class__ is not tuple and len(out) == 2:
            a, b = out
        if not (first.store(i, a) and second.store(i, b)):
            raise self._fault(
                f"{method} must return a loss (a number in [0, 1]) or {self._RETURNS[method]}, got {out!r}",
                k,
                r,
                t,
            ) from None

    def _bad_rate(self, out: Any, rate: float, n: int, k: int, r: int, t: int) -> None:
        """Name the expert whose rate (returned by ``learn``, or its ``rate`` at count ``n``) is
        not a finite number >= 0."""
        where = "learn returned the rate" if isinstance(out, tuple) else f"its rate at count {n} is"
        raise self._fault(f"{where} {rate!r}; rates must be finite numbers >= 0", k, r, t)

    def _warm_updates(self, learner: Any, k: int, r: int) -> int:
        """How many updates replication ``r``'s expert ``k`` says its warm-start ``learn`` made
        (``warm_updates``, default 1): an integer >= 1, else a fault naming the expert."""
        updates = getattr(learner, "warm_updates", 1)
        if isinstance(updates, (bool, np.bool_)) or not isinstance(updates, (int, np.integer)) or updates < 1:
            raise self._fault(
                f"warm_updates, the updates its warm-start learn made, must be an integer >= 1, got "
                f"{shown(updates)}",
                k,
                r,
                0,
            )
        return int(updates)

    def _play(self, t: int, deploying: tuple | None, training: tuple | None) -> None:
        """Deploy (``deploying``: the engine's selected, counts, losses, expected losses) and then
        train (``training``: selected, counts, losses, rates) every replication's experts."""
        idle = [0] * len(self.learners)
        d_rows = d_counts = t_rows = t_counts = idle
        if deploying is not None:
            d_rows, d_counts = deploying[0].tolist(), deploying[1].tolist()
            d_loss, d_value = self._cells(deploying[2]), self._cells(deploying[3])
            d_width, d_flat, v_flat = d_loss.width, d_loss.flat, d_value.flat
        if training is not None:
            t_rows, t_counts = training[0].tolist(), training[1].tolist()
            t_loss, t_rate = self._cells(training[2]), self._cells(training[3])
            t_width, t_flat, r_flat = t_loss.width, t_loss.flat, t_rate.flat
        if self._shared:
            first = (d_rows, d_counts) if deploying is not None else (t_rows, t_counts)
            shared = self._shared_round(t, *first, "deploy" if deploying is not None else "learn")
        else:
            shared = [None] * len(idle)  # the data is asked for expert by expert
        warm = t == 0
        tables = self._rates
        block = zip(self.learners, shared, d_rows, d_counts, t_rows, t_counts, self._steps)
        for r, (learners, data, row, count, t_row, t_count, steps) in enumerate(block):
            for j in range(count):
                k = row[j]
                item = self._fetch(r, t, k, "deploy") if data is None else data  # not shared: per call
                try:
                    out = learners[k].deploy(item)
                except ExpertError:
                    raise
                except EXPERT_FAULTS as error:
                    raise raised(
                        error, "deploy", self._index[k], self._classes[k], self._replications[r], t
                    ) from error
                if out.__class__ is tuple and len(out) == 2:
                    loss, value = out
                else:
                    loss, value = out, math.nan
                i = r * d_width + j
                try:
                    d_flat[i] = loss
                    v_flat[i] = value
                except (TypeError, ValueError):
                    self._store_slowly(d_loss, d_value, i, loss, value, "deploy", out, k, r, t)
            for j in range(t_count):
                k = t_row[j]
                item = self._fetch(r, t, k, "learn") if data is None else data
                try:
                    out = learners[k].learn(item)
                except ExpertError:
                    raise
                except EXPERT_FAULTS as error:
                    raise raised(
                        error, "learn", self._index[k], self._classes[k], self._replications[r], t
                    ) from error
                # A learner that made several updates in the warm start says how many.
                n = steps[k] = steps[k] + (self._warm_updates(learners[k], k, r) if warm else 1)
                if out.__class__ is tuple and len(out) == 2:
                    loss, rate = out
                else:
                    loss = out
                    table = tables[k]
                    if n >= len(table):
                        table = tables[k] = self._tables[k].extend(n)
                    rate = table[n]
                i = r * t_width + j
                try:
                    t_flat[i] = loss
                    r_flat[i] = rate
                except (TypeError, ValueError):
                    self._store_slowly(t_loss, t_rate, i, loss, rate, "learn", out, k, r, t)
                written = r_flat[i]
                if not (written >= 0.0 and written < math.inf):
                    self._bad_rate(out, written, n, k, r, t)
