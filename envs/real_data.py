"""A supervised stream of a real data set shipped inside an installed package.

Two orders (``RealDataEnv(order=...)``), both keyed by ``(seed, replication)`` only, so that every
policy of a comparison meets the same rows in the same order (common random numbers) and each
replication is its own draw:

``"bootstrap"`` (default)
    Each round ``t`` draws one row uniformly with replacement (a bootstrap of the data set, the
    way the paper streams its Warfarin data): row ``floor(u_t n)`` with ``u_t`` the uniform of
    the counter-based stream at ``(t, 0)``.
``"shuffle"``
    The data set read once, without repeats (the paper's cardiotocography stream): round ``t``
    meets row ``pi(t)`` of a uniformly random permutation ``pi`` of the rows drawn per
    replication (:func:`permutation`). Rounds ``0 .. T`` of a run of ``T`` rounds and the warm
    start's extra rows are distinct rows, so ``T + warm_start <= n_rows`` is required
    (:meth:`RealDataEnv.check_horizon`).

The data: ``dataset`` is a data set bundled with an installed package, a :class:`Table` of one's
own (:mod:`envs.tabular`: from a DataFrame, arrays or a CSV file), or the path of a CSV file with
``label`` naming its label column (what TOML and the command line give). Nothing is downloaded:

=================  =========  ======  ========  =========================================
name               package    rows    features  target
=================  =========  ======  ========  =========================================
``ctg``            mlcb       2 126   21        the fetal state NSP: 1, 2 or 3 (int)
``ctg-35``         mlcb       2 126   35        NSP, from 35 columns (they leak it)
``phishing``       river      1 250   9         is the web page a phishing page (bool)
``bananas``        river      5 300   2         which banana-shaped cluster (bool)
``breast-cancer``  sklearn    569     30        is the tumour benign (bool)
``digits``         sklearn    1 797   64        the hand-written digit, 0 to 9 (int)
``segments``       river      2 310   18        the region of an outdoor image, 0 to 6 (int)
=================  =========  ======  ========  =========================================

``ctg`` is the UCI cardiotocography data set, shipped with this package (CC BY 4.0;
envs/data/cardiotocography.md holds its attribution): the 21 features of the UCI page and the
fetal state ``NSP`` (1 normal, 2 suspect, 3 pathologic: 1,655 / 295 / 176 records). ``ctg-35``
adds the workbook's baseline as the experts read it (``LBE``), repetitive decelerations (``DR``,
0 in every record), the segment's start and end (``b``, ``e``) and the ten morphologic pattern
indicators (``A`` .. ``SUSP``): 35 columns, a reading of the paper's "35 features". The
indicators come from the same expert review as the label and nearly determine it: they leak it.

The regions of ``segments`` (river's ImageSegments) are numbered in alphabetical order: brickface,
cement, foliage, grass, path, sky, window.

The kernels of a compiled expert family read the table from the replication's parameters
(:class:`RealDataParams`: ``x``, ``labels``) and the round's row from its state.

What regret is measured against. The best loss ``L_k*`` of a model on a real data set is
unknown; the environment states 0, a lower bound of every loss. The engine measures regret
against *the best pool member trained on every round* instead: each expert's mean progressive
loss when a copy of it is trained on rounds ``0 .. T`` of the very stream of the replication
(:mod:`mlcb.engine.hindsight`), the run's horizon ``T`` given to :meth:`RealDataEnv.build`. At
round ``T`` the recorded regret is then exactly the deployed losses' sum minus the sum of the
best member's losses when trained every round, both on the same stream in the same run.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from envs._stream import reset_request
from envs.tabular import CONSTANT, MISSING, Table, is_path, read_csv
from mlcb import validation
from mlcb.kernels import implements
from mlcb.kernels.jit import kernel, njit
from mlcb.kernels.random import uniform
from mlcb.kernels.seeding import check_seed, stream_keys
from mlcb.validation import InputError

#: The bundled data sets: name -> the package they come with.
DATASETS = {
    "ctg": "mlcb",
    "ctg-35": "mlcb",
    "phishing": "river",
    "bananas": "river",
    "breast-cancer": "sklearn",
    "digits": "sklearn",
    "segments": "river",
}
#: ``RealDataEnv(order=...)``: rows drawn with replacement, or one pass over a permutation.
ORDERS = ("bootstrap", "shuffle")
#: The river data sets by name.
_RIVER_SETS = {"phishing": "Phishing", "bananas": "Bananas", "segments": "ImageSegments"}
_INSTALL = {"river": "pip install 'mlcb[river]'", "sklearn": "pip install 'mlcb[sklearn]'"}
#: The cardiotocography table shipped with the package, and its columns.
CTG_FILE = Path(__file__).resolve().parent / "data" / "cardiotocography.csv"
CTG_FEATURES = ("LB", "AC", "FM", "UC", "DL", "DS", "DP", "ASTV", "MSTV", "ALTV", "MLTV", "Width", "Min",
                "Max", "Nmax", "Nzeros", "Mode", "Mean", "Median", "Variance", "Tendency")  # fmt: skip
#: The pattern indicators of the workbook: one per morphologic class (CLASS); they leak NSP.
CTG_PATTERNS = ("A", "B", "C", "D", "E", "AD", "DE", "LD", "FS", "SUSP")
#: The 35-feature reading: the 21 features, the recording's LBE, DR, b, e, the 10 indicators.
CTG_35 = (*CTG_FEATURES, "LBE", "DR", "b", "e", *CTG_PATTERNS)
#: ``RealDataEnv(reader=...)``: how a ``dataset`` path is read.
READERS = ("csv", "iwpc")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class RealDataParams(NamedTuple):
    """One replication's stream: its key, the run's horizon, the table the compiled experts read,
    the row order."""

    key: np.uint64  # the rows' stream
    n_rows: int
    horizon: int  # T, the rounds of the run
    x: np.ndarray = _read_only(np.zeros((0, 0)))  # (n, d) float64 features, read-only
    labels: np.ndarray = _read_only(np.zeros(0, dtype=np.int64))  # (n,) int64 class index
    order: np.ndarray = _read_only(np.zeros(0, dtype=np.int64))  # (n,) permutation; (0,): bootstrap


class RealDataState(NamedTuple):
    row: np.ndarray  # (1,) int64: the round's row


@implements("begin_round", RealDataParams)
@kernel
def _begin_round(params, state, t):
    size = params.order.shape[0]
    if size > 0:  # "shuffle": the permutation, read once (round t past it: it starts over)
        state.row[0] = params.order[t % size]
        return
    row = np.int64(uniform(params.key, t, 0) * params.n_rows)
    state.row[0] = min(row, params.n_rows - 1)


@njit
def _rows_into(params, state, out):
    """``out[t]``: the row ``begin_round`` draws at round ``t``, for every ``t < len(out)``."""
    for t in range(out.shape[0]):
        _begin_round(params, state, t)
        out[t] = state.row[0]


@njit
def _shuffle(key, n):
    """Fisher-Yates over ``0 .. n - 1`` with the uniforms of stream ``key`` at ``(i, 1)``."""
    order = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = min(np.int64(uniform(key, i, 1) * (i + 1)), i)
        order[i], order[j] = order[j], order[i]
    return order


def permutation(key: int, n_rows: int) -> np.ndarray:
    """The row order of a ``"shuffle"`` stream with key ``key``: a permutation of ``0 .. n_rows-1``,
    uniform, drawn by Fisher-Yates from the counter-based stream ``key`` at counters ``(i, 1)``
    (slot 1: disjoint from the bootstrap's draws at ``(t, 0)``).

    >>> sorted(permutation(7, 5).tolist())
    [0, 1, 2, 3, 4]
    """
    return _shuffle(np.uint64(key), int(n_rows))


_TABLES: dict[str, Table] = {}


def load(name: str) -> Table:
    """The bundled data set ``name`` (:data:`DATASETS`), loaded once per process.

    A ``ValueError`` lists the names; a missing package raises one ``ImportError`` line saying
    what to install.

    >>> table = load("ctg")
    >>> len(table), table.n_features, table.counts()
    (2126, 21, {1: 1655, 2: 295, 3: 176})
    """
    if name not in DATASETS:
        raise InputError(
            f"dataset must be one of {', '.join(DATASETS)} or a path to a CSV file, got {name!r}"
        )
    if name in _TABLES:
        return _TABLES[name]
    package = DATASETS[name]
    if package == "mlcb":
        columns = CTG_FEATURES if name == "ctg" else CTG_35
        with warnings.catch_warnings():  # ctg-35's DR is 0 in every record (documented above)
            warnings.simplefilter("ignore", UserWarning)
            table = read_csv(CTG_FILE, "NSP", columns=list(columns), name=name)
        _TABLES[name] = table
        return table
    try:
        if package == "river":
            from river import datasets
        else:
            from sklearn import datasets
    except ImportError:
        raise ImportError(f"the {name} data set needs {package}: {_INSTALL[package]}") from None
    if package == "river":
        pairs = list(getattr(datasets, _RIVER_SETS[name])())
        names = tuple(pairs[0][0])
        x = np.array([[float(row[f]) for f in names] for row, _ in pairs], dtype=np.float64)
        if name == "segments":  # the region's name as its index among the sorted names
            names_of = sorted({y for _, y in pairs})
            labels: tuple = tuple(names_of.index(y) for _, y in pairs)
        else:
            labels = tuple(bool(y) for _, y in pairs)
    else:
        bunch = datasets.load_breast_cancer() if name == "breast-cancer" else datasets.load_digits()
        names = tuple(str(f) for f in bunch.feature_names)
        x = np.asarray(bunch.data, dtype=np.float64)
        labels = (
            tuple(bool(y == 1) for y in bunch.target)
            if name == "breast-cancer"
            else tuple(int(y) for y in bunch.target)
        )
    table = Table(name, names, x, labels, source=f"{package} ({name})")
    _TABLES[name] = table
    return table


#: The parameters of ``RealDataEnv`` that say which table it streams (:func:`table_of`).
TABLE_PARAMS = ("dataset", "label", "columns", "missing", "constant", "reader", "min_class_rows")


def table_of(env_params: dict) -> Table:
    """The table ``RealDataEnv(**env_params)`` streams, without building the environment (what a
    preset reads to size its pool).

    >>> table_of({"dataset": "ctg", "order": "shuffle"}).n_features
    21
    """
    return resolve(**{k: v for k, v in env_params.items() if k in TABLE_PARAMS})


def resolve(
    dataset: Any = "phishing",
    label: str | None = None,
    columns: Any = None,
    missing: str = "error",
    constant: str = "keep",
    reader: str = "csv",
    min_class_rows: int = 2,
) -> Table:
    """The table ``RealDataEnv`` streams for these parameters (its own, without building it): a
    bundled data set by name, a :class:`Table` as it is, or a file read with ``reader``.

    >>> resolve("ctg-35").n_features
    35
    """
    if reader not in READERS:
        raise InputError(f"reader must be one of {READERS}, got {reader!r}")
    if dataset is None:
        if reader == "iwpc":
            raise InputError(
                "dataset: give the path of your copy of the IWPC warfarin subject file (mlcb run warfarin "
                "--data PATH; from Python env_params={'dataset': PATH}): it may not be redistributed"
            )
        raise InputError(
            f"dataset: give a CSV file's path, a Table (envs.tabular) or one of {', '.join(DATASETS)}"
        )
    if isinstance(dataset, Table) or (isinstance(dataset, str) and dataset in DATASETS):
        # (reader says how a path is read: a preset's reader applies to the paths it is given only)
        given = [n for n, v in (("label", label), ("columns", columns)) if v is not None]
        given += [n for n, v, default in (("missing", missing, "error"), ("constant", constant, "keep"),
                                          ("min_class_rows", min_class_rows, 2))
                  if v != default]  # fmt: skip
        if given:
            what = given[0]
            where = "a Table" if isinstance(dataset, Table) else f"the bundled data set {dataset!r}"
            raise InputError(f"{what} applies to a file (dataset = a path), not to {where}")
        return dataset if isinstance(dataset, Table) else load(dataset)
    # A name with neither a separator nor a suffix is a path where one exists ('--data somefolder'
    # was refused as no bundled name, rather than named as the folder it is).
    if not is_path(dataset) and not (isinstance(dataset, str) and dataset and os.path.exists(dataset)):
        raise InputError(
            f"dataset must be one of {', '.join(DATASETS)}, a Table (envs.tabular) or the path of a CSV "
            f"file, got {dataset!r}"
        )
    if isinstance(dataset, str) and dataset.startswith("~"):
        dataset = str(Path(dataset).expanduser())  # as a setting file's path is read (and pandas reads one)
    validation.regular_file("dataset", dataset)  # no such file, or a folder, a pipe, a device: by name
    if missing not in MISSING:
        raise InputError(f"missing must be one of {MISSING}, got {missing!r}")
    if constant not in CONSTANT:
        raise InputError(f"constant must be one of {CONSTANT}, got {constant!r}")
    if reader == "iwpc":
        if label is not None or columns is not None or min_class_rows != 2:
            raise InputError(
                "label, columns and min_class_rows do not apply to reader='iwpc' (its label is the "
                "dose class)"
            )
        from envs import warfarin

        return warfarin.read(dataset)
    return read_csv(
        dataset,
        label,
        columns=columns,
        missing=missing,
        constant=constant,
        min_class_rows=min_class_rows,
        role="dataset",
    )


class _RoundFields(NamedTuple):
    t: int
    row: int
    features: dict
    y: Any
    warm: tuple | None
    table: Table


class SupervisedRound(_RoundFields):
    """``xi_t``, one labelled row, as a Python expert sees it (:meth:`RealDataEnv.round_data`).

    ``SupervisedRound(table, row, t)`` builds round ``t``'s data for row ``row`` of ``table``.

    ``t``
        The round.
    ``row``
        The row of the data set drawn.
    ``features``
        The row as a dict ``{feature name: value}`` (river's format); shared, do not modify it.
    ``x``
        The row as a read-only float array (scikit-learn's format), features in ``feature_names``
        order.
    ``y``
        The label (``bool`` for two classes, ``int`` for digits).
    ``classes``
        Every label of the data set, sorted (what ``partial_fit`` needs up front).
    ``loss(prediction) -> float``
        The 0-1 loss of a predicted label.
    ``warm``
        ``None``, except at round 0 of an environment with ``warm_start = W > 1``: the ``W``
        rows of the warm start (this round's row first), each a ``SupervisedRound``; an expert
        learns them all and says how many updates it made (``warm_updates``).
    ``table``
        The loaded data set (:class:`Table`).

    One round's data is built per replication and round, so its construction is part of the
    engine's overhead: it is an immutable tuple underneath (built without a Python call by
    :meth:`RealDataEnv.round_data_block`), and ``x``, ``classes`` and ``feature_names`` are read
    from the table on demand. Two round data are equal only when they are the same object, as
    for any other object, and they hash by identity.
    """

    __slots__ = ()

    def __new__(cls, table: Table, row: int, t: int, warm: tuple | None = None) -> SupervisedRound:
        return _new_round(cls, (int(t), row, table.rows[row], table.y[row], warm, table))

    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def __getnewargs__(self) -> tuple:  # copy and pickle rebuild through __new__'s signature
        return self.table, self.row, self.t, self.warm

    @property
    def x(self) -> np.ndarray:
        return self.table.x[self.row]

    @property
    def classes(self) -> tuple:
        return self.table.classes

    @property
    def feature_names(self) -> tuple:
        return self.table.feature_names

    def loss(self, prediction: Any) -> float:
        return 0.0 if prediction == self.y else 1.0

    def __repr__(self) -> str:
        return f"SupervisedRound(t={self.t}, y={self.y!r})"


_new_round = tuple.__new__


class RealDataEnv(gym.Env):
    """Rows of a real data set, one per round, drawn with replacement or read once in a random
    order; as a Gymnasium environment.

    Parameters
    ----------
    dataset : str, Table or path
        One of :data:`DATASETS` (``"phishing"`` by default, ``"ctg"``, ``"ctg-35"``, ...), a
        :class:`~envs.tabular.Table` (:func:`envs.tabular.from_frame`, ``from_arrays``,
        ``read_csv``, :func:`envs.warfarin.read`), or the path of a file (a string with a ``/`` or
        a suffix such as ``.csv``) read with ``reader``.
    warm_start : int
        ``>= 1`` (default 1): the rows of round 0, the engine's warm start. With ``W > 1`` the
        round-0 data carries ``W`` rows (``SupervisedRound.warm``: the round's own row, then
        ``W - 1`` rows no later round uses: for ``"bootstrap"`` those drawn from the
        replication's stream at the counters ``(0, j)``, ``j = 1 .. W - 1``; for ``"shuffle"``
        those at the last ``W - 1`` positions ``n - W + 1 .. n - 1`` of the permutation of the
        ``n`` rows, which rounds ``0 .. T`` never reach; neither depends on the run's horizon);
        experts that learn them all count ``W`` updates, as the river selectors' warm start does
        (:mod:`mlcb.river`). Later rounds are unchanged.
    order : {"bootstrap", "shuffle"}
        ``"bootstrap"`` (default): rows drawn with replacement. ``"shuffle"``: one pass over a
        random permutation of the rows, without repeats; a run of ``T`` rounds needs ``T +
        warm_start <= n_rows`` (:meth:`check_horizon`). Past the permutation's end (Gymnasium
        steps past it) it starts over.
    label : str, optional
        For a CSV path: the label column (required; a ``ValueError`` lists the columns).
    columns : list of str, optional
        For a CSV path: the feature columns (default: every column but the label).
    missing : {"error", "drop"}
        For a CSV path: refuse missing values (default) or drop their rows
        (:func:`envs.tabular.from_frame`).
    constant : {"keep", "drop"}
        For a CSV path: keep constant columns (default) or drop them.
    min_class_rows : int
        For a CSV path: the fewest rows a class may have (default 2; 1 keeps a class seen once).
    reader : {"csv", "iwpc"}
        How a path is read: a CSV file with a label column (default), or the IWPC warfarin subject
        file (:func:`envs.warfarin.read`: CSV or PharmGKB's ``.xls``); not read for a table or a
        bundled name.

    Notes
    -----
    The engine and the expert families read (:class:`mlcb.contracts.Environment`):

    ``n_experts``
        ``None``: any number of experts can face the stream.
    ``build(seed, replication, horizon) -> (params, state)``
        The replication's stream key, the run's horizon, the table (``x``, ``labels``) and, for
        ``"shuffle"``, the permutation; the ``begin_round`` kernel draws the round's row into
        ``state.row``.
    ``check_horizon(horizon)``
        Refuses a horizon that a data set read once cannot give (``"shuffle"``).
    ``optimal_loss(params, expert) -> float``
        0, a lower bound of every loss (the Bayes loss of a real data set is unknown); the
        engine measures regret against the best expert in hindsight instead (module docstring).
    ``round_data(params, state, t, expert) -> SupervisedRound``
        The round's labelled row, the same for every expert.
    ``stream(seed, replication, rounds)``
        The rows of rounds ``0 .. rounds - 1`` as ``(features, label)`` pairs: exactly what a
        simulation of that seed and replication meets, for river's own evaluation loops.

    The Gymnasium interface: the observation is the row's features, the action a class index
    (into ``classes``), the reward minus the 0-1 loss, ``info`` holds the label.
    ``reset(seed=s, options={"replication": r})`` reproduces replication ``r`` of seed ``s``.
    """

    metadata: dict[str, Any] = {"render_modes": []}
    n_experts = None
    round_data_shared = True  # one SupervisedRound per replication and round, for every expert
    #: What regret is measured against (recorded in results, printed on figures).
    reference = "the best pool member trained on every round"

    def __init__(
        self,
        dataset: Any = "phishing",
        warm_start: int = 1,
        order: str = "bootstrap",
        label: str | None = None,
        columns: Any = None,
        missing: str = "error",
        constant: str = "keep",
        reader: str = "csv",
        min_class_rows: int = 2,
    ) -> None:
        warm_start = validation.integer("warm_start", warm_start)
        if order not in ORDERS:
            raise InputError(f"order must be one of {ORDERS}, got {order!r}")
        self.table = resolve(dataset, label, columns, missing, constant, reader, min_class_rows)
        # The data set's identity (cache keys, messages): a bundled name, or a table's name and digest.
        bundled = isinstance(dataset, str) and dataset in DATASETS
        self.dataset = dataset if bundled else f"{self.table.name}@{self.table.digest[:12]}"
        self.warm_start = int(warm_start)
        self.order = order
        d = self.table.x.shape[1]
        # The data set's range; a constant column (digits' blank border pixels) gets the next float
        # above as its upper bound, as a space with low == high is degenerate (Gymnasium warns).
        low, high = self.table.x.min(axis=0), self.table.x.max(axis=0)
        high = np.where(high > low, high, np.nextafter(high, np.inf))
        self.observation_space = gym.spaces.Box(low, high, (d,), dtype=np.float64)
        self.action_space = gym.spaces.Discrete(len(self.table.classes))
        self._params: RealDataParams | None = None
        self._state: RealDataState | None = None
        self._round = 0
        # By id(state): the last round data given and the stream key it was made on (an id is
        # reused once its state is gone, and round 0's warm rows depend on the key)
        self._last: dict[int, tuple[int, SupervisedRound]] = {}

    # --- what the engine uses -------------------------------------------------------------
    def check_horizon(self, horizon: int) -> None:
        """An :class:`~mlcb.validation.InputError` unless a run of ``horizon`` rounds fits the
        data set: read once (``"shuffle"``), rounds ``0 .. horizon`` and the warm start's extra
        rows are distinct rows, so ``horizon + warm_start <= n_rows``."""
        n_rows = len(self.table)
        if self.order == "shuffle" and int(horizon) + self.warm_start > n_rows:
            raise InputError(
                f"horizon must be at most n_rows - warm_start = {n_rows - self.warm_start} for "
                f"order='shuffle' on {self.table.name!r} ({n_rows} rows, read once: rounds 0 .. horizon and "
                f"the warm start's {self.warm_start - 1} extra rows), got {int(horizon)}; give a shorter "
                "horizon (on the command line --horizon)"
            )

    def build(self, seed: int, replication: int, horizon: int) -> tuple[RealDataParams, RealDataState]:
        """The stream key (and the permutation) of replication ``replication`` of a run of
        ``horizon`` rounds, a fresh state."""
        horizon = validation.integer("horizon", horizon)
        key = stream_keys(seed, replication, 0).env
        n_rows = len(self.table)
        table = self.table
        if self.order == "shuffle":
            order = _read_only(permutation(int(key), n_rows))
            params = RealDataParams(key, n_rows, int(horizon), table.x, table.labels, order)
        else:
            params = RealDataParams(key, n_rows, int(horizon), table.x, table.labels)
        return params, RealDataState(np.zeros(1, dtype=np.int64))

    def optimal_loss(self, params: RealDataParams, expert: int) -> float:
        """0: a lower bound of every loss (the engine measures regret against the best expert in
        hindsight instead: the module's docstring)."""
        return 0.0

    def round_data(
        self, params: RealDataParams, state: RealDataState, t: int, expert: int
    ) -> SupervisedRound:
        """The labelled row of round ``t`` (after ``begin_round``); one object per replication and
        round, shared by the experts deployed and trained in it."""
        row = state.row.item(0)
        key = int(params.key)
        cached = self._last.get(id(state))
        if cached is not None:
            last_key, last = cached
            if last.t == t and last.row == row and last_key == key:
                return last  # the same stream, round and row: the same data
        data = self._data(params, row, t)
        if len(self._last) > 4096:
            self._last.clear()
        self._last[id(state)] = (key, data)
        return data

    def round_data_block(self, params: list, states: list, t: int) -> list[SupervisedRound]:
        """:meth:`round_data` of every replication of a block at round ``t``: one call per
        round for the Python engine."""
        if t == 0:
            return [self._data(p, s.row.item(0), t) for p, s in zip(params, states)]
        # Every later round: the tuples built inline (a Python call per replication would be a
        # good part of the engine's cost per round).
        table = self.table
        rows, labels, new, cls = table.rows, table.y, _new_round, SupervisedRound
        out = []
        for state in states:
            row = state.row.item(0)
            out.append(new(cls, (t, row, rows[row], labels[row], None, table)))
        return out

    def _data(self, params: RealDataParams, row: int, t: int) -> SupervisedRound:
        """Round ``t``'s data for ``row``, with the warm start's rows at round 0."""
        if t == 0 and self.warm_start > 1:
            n = params.n_rows
            if params.order.shape[0] > 0:
                size = params.order.shape[0]
                # the permutation's last W - 1 positions: no round 0 .. T meets them (T + W <= n),
                # and they do not move with the horizon, so neither does anything the run meets
                first = size - self.warm_start
                extra = [int(params.order[(first + j) % size]) for j in range(1, self.warm_start)]
            else:
                extra = [min(int(uniform(params.key, 0, j) * n), n - 1) for j in range(1, self.warm_start)]
            rows = [row] + extra
            warm = tuple(SupervisedRound(self.table, r, 0) for r in rows)
            return SupervisedRound(self.table, row, t, warm)
        return SupervisedRound(self.table, row, t)

    def rows(self, params: RealDataParams, rounds: int) -> np.ndarray:
        """The row indices of rounds ``0 .. rounds - 1`` (what ``begin_round`` draws), in one
        compiled loop (a call per round from Python took 5 s per million rounds)."""
        rounds = validation.integer("rounds", rounds, minimum=0)
        out = np.empty(rounds, dtype=np.int64)
        _rows_into(params, RealDataState(np.zeros(1, dtype=np.int64)), out)
        return out

    def stream(self, seed: int, replication: int, rounds: int) -> Iterator[tuple[dict, Any]]:
        """``(features, label)`` of rounds ``0 .. rounds - 1`` of replication ``replication``.

        Checked when called, not when first iterated: a data set read once (``"shuffle"``) has
        ``n_rows`` rounds at most (past them the permutation would start over and repeat rows)."""
        rounds = validation.integer("rounds", rounds, minimum=0)
        replication = validation.integer("replication", replication, minimum=0)
        n_rows = len(self.table)
        if self.order == "shuffle" and rounds > n_rows:
            raise InputError(
                f"rounds must be at most n_rows = {n_rows} for order='shuffle' on {self.table.name!r} "
                f"(read once, without repeats), got {rounds}"
            )
        params, _ = self.build(check_seed(seed), replication, max(rounds, 1))
        table = self.table
        return ((table.rows[row], table.y[row]) for row in self.rows(params, rounds).tolist())

    # --- Gymnasium interface -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._params, self._state = self.build(*reset_request(seed, options))
        self._round = 0
        _begin_round(self._params, self._state, 0)
        return self.table.x[int(self._state.row[0])].copy(), {"round": 0}

    def step(self, action):
        if self._params is None:
            raise RuntimeError("call reset() before step()")
        y = self.table.y[int(self._state.row[0])]
        predicted = self.table.classes[
            validation.index("action (a class index)", action, len(self.table.classes))
        ]
        loss = 0.0 if predicted == y else 1.0
        info = {"round": self._round, "y": y}
        self._round += 1
        _begin_round(self._params, self._state, self._round)
        return self.table.x[int(self._state.row[0])].copy(), -loss, False, False, info
