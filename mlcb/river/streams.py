"""Streams and pools to measure river model selectors on data nobody tuned them on.

:data:`STREAMS` names every stream of the comparison (:func:`mlcb.river.compare`,
``benchmarks/bench_river.py``), each with its task:

* every classification and regression data set that river ships inside the package (no
  download): ``phishing``, ``bananas``, ``segments`` (ImageSegments), ``shuttle``,
  ``airline-passengers``, ``chick-weights``, ``sp500``, ``trump-approval``, ``water-flow``. Each
  seed reads a random permutation of the rows once (no repeats), at most ``n`` of them; river's
  multi-output sets (SolarFlare, Yeast) are left out. A date-time feature becomes four numbers
  (days since 1970, month, hour, weekday);
* scikit-learn's toy sets as bootstrapped streams (rows drawn with replacement): ``iris``,
  ``wine``, ``breast-cancer``, ``digits``, ``diabetes``;
* river's synthetic streams with concept drift: ``sea-drift`` (SEA, its threshold changing
  halfway over ``n / 20`` samples), ``agrawal-drift`` (Agrawal, function 0 then 4, likewise),
  ``hyperplane-drift`` (a rotating hyperplane), ``rbf-drift`` (moving radial-basis centroids),
  ``led-drift`` (LED digits whose segments swap), ``friedman-gsg`` and ``friedman-lea``
  (Friedman's regression with global, then local, drifts).

:func:`classifier_pool` and :func:`regressor_pool` are pools of eight river models as a river
user would assemble them: linear models at several learning rates (wrapped one-vs-rest for the
multi-class streams), a passive-aggressive model, naive Bayes or a second tree, a Hoeffding tree,
k-nearest neighbours and a constant baseline.

Examples
--------
>>> rows = stream("phishing", seed=0, n=5)
>>> len(rows), sorted(rows[0][0])[:2], type(rows[0][1]).__name__
(5, ['age_of_domain', 'anchor_from_other_domain'], 'bool')
>>> STREAMS["diabetes"].task
'regression'
"""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any, NamedTuple

import numpy as np

from mlcb import validation
from mlcb.validation import InputError


class Stream(NamedTuple):
    """A stream of the comparison: its task (``"classification"`` or ``"regression"``), where its
    rows come from and how they are read."""

    task: str
    source: str
    description: str


_RIVER = {
    "phishing": ("Phishing", "classification"),
    "bananas": ("Bananas", "classification"),
    "segments": ("ImageSegments", "classification"),
    "shuttle": ("Shuttle", "classification"),
    "airline-passengers": ("AirlinePassengers", "regression"),
    "chick-weights": ("ChickWeights", "regression"),
    "sp500": ("SP500Stocks", "regression"),
    "trump-approval": ("TrumpApproval", "regression"),
    "water-flow": ("WaterFlow", "regression"),
}
_SKLEARN = {
    "iris": ("load_iris", "classification"),
    "wine": ("load_wine", "classification"),
    "breast-cancer": ("load_breast_cancer", "classification"),
    "digits": ("load_digits", "classification"),
    "diabetes": ("load_diabetes", "regression"),
}
_SYNTHETIC = {
    "sea-drift": ("classification", "SEA, variant 0 then 2 from n/2 over n/20 samples"),
    "agrawal-drift": ("classification", "Agrawal, function 0 then 4 from n/2 over n/20 samples"),
    "hyperplane-drift": ("classification", "a hyperplane in 10 dimensions, 5 of them rotating"),
    "rbf-drift": ("classification", "3 classes of 20 radial-basis centroids, 10 of them moving"),
    "led-drift": ("classification", "LED digits with 10 % noise, 7 segments swapped"),
    "friedman-gsg": ("regression", "Friedman's function, global drifts at n/3 and 2n/3"),
    "friedman-lea": ("regression", "Friedman's function, local drifts at n/4, n/2 and 3n/4"),
}

#: Every stream of the comparison, by name.
STREAMS: dict[str, Stream] = {
    **{
        name: Stream(task, "river", f"river's {cls}, a shuffle read once")
        for name, (cls, task) in _RIVER.items()
    },
    **{
        name: Stream(task, "sklearn", f"scikit-learn's {loader[5:]}, bootstrapped")
        for name, (loader, task) in _SKLEARN.items()
    },
    **{name: Stream(task, "synthetic", text) for name, (task, text) in _SYNTHETIC.items()},
}


def _numbers(x: dict) -> dict:
    """A row's features as river's models read them: a date-time becomes four numbers."""
    out: dict = {}
    for name, value in x.items():
        if isinstance(value, dt.datetime):
            out[f"{name}_days"] = value.timestamp() / 86_400.0
            out[f"{name}_month"] = float(value.month)
            out[f"{name}_hour"] = float(value.hour)
            out[f"{name}_weekday"] = float(value.weekday())
        else:
            out[name] = value
    return out


@functools.lru_cache(maxsize=16)
def _table(name: str) -> tuple:
    """Every row of a shipped data set, as ``(features, target)`` pairs (cached)."""
    if name in _RIVER:
        from river import datasets

        return tuple((_numbers(x), y) for x, y in getattr(datasets, _RIVER[name][0])())
    from sklearn import datasets as toys

    bunch = getattr(toys, _SKLEARN[name][0])()
    names = [f"x{i}" for i in range(bunch.data.shape[1])]
    regression = _SKLEARN[name][1] == "regression"
    return tuple(
        ({n: float(v) for n, v in zip(names, row)}, float(y) if regression else int(y))
        for row, y in zip(bunch.data, bunch.target)
    )


def _synthetic(name: str, seed: int, n: int) -> list:
    from river.datasets import synth

    half, blend = n // 2, max(1, n // 20)
    source: Any
    if name == "sea-drift":
        source = synth.ConceptDriftStream(
            synth.SEA(variant=0, seed=seed),
            synth.SEA(variant=2, seed=seed + 1),
            seed=seed,
            position=half,
            width=blend,
        )
    elif name == "agrawal-drift":
        source = synth.ConceptDriftStream(
            synth.Agrawal(classification_function=0, seed=seed),
            synth.Agrawal(classification_function=4, seed=seed + 1),
            seed=seed,
            position=half,
            width=blend,
        )
    elif name == "hyperplane-drift":
        source = synth.Hyperplane(
            seed=seed, n_features=10, n_drift_features=5, mag_change=0.01, noise_percentage=0.05, sigma=0.1
        )
    elif name == "rbf-drift":
        source = synth.RandomRBFDrift(
            seed_model=seed,
            seed_sample=seed + 1,
            n_classes=3,
            n_features=8,
            n_centroids=20,
            change_speed=0.001,
            n_drift_centroids=10,
        )
    elif name == "led-drift":
        source = synth.LEDDrift(seed=seed, noise_percentage=0.1, irrelevant_features=True, n_drift_features=7)
    elif name == "friedman-gsg":
        source = synth.FriedmanDrift(
            drift_type="gsg", position=(n // 3, 2 * n // 3), transition_window=blend, seed=seed
        )
    else:
        source = synth.FriedmanDrift(drift_type="lea", position=(n // 4, n // 2, 3 * n // 4), seed=seed)
    return [(_numbers(x), y) for x, y in source.take(n)]


#: The fewest samples of the streams whose drifts are placed by their length: Friedman's drifts
#: at ``n/3`` and ``2n/3`` (at ``n/4``, ``n/2`` and ``3n/4``) must fall on distinct samples.
FEWEST = {"friedman-gsg": 2, "friedman-lea": 3}


def check_length(name: str, n: Any, parameter: str = "n") -> int:
    """``n`` as an int, or an :class:`~mlcb.validation.InputError` naming ``parameter``: a whole
    number >= 1, and >= :data:`FEWEST` for the streams whose drifts need that many samples."""
    fewest = FEWEST.get(name, 1)
    n = validation.integer(parameter, n)
    if n < fewest:
        raise InputError(
            f"{parameter} must be an integer >= {fewest} for stream {name!r} (its drifts fall at "
            f"fractions of the stream, on distinct samples), got {n}"
        )
    return n


def stream(name: str, seed: int = 0, n: int = 2_000) -> list:
    """The ``(features, target)`` rows of stream ``name`` (:data:`STREAMS`) for ``seed`` (an
    integer >= 0): at most ``n`` of them for river's data sets (a random permutation, read once),
    exactly ``n`` for the others (Friedman's drifting streams need 2 and 3 at least,
    :data:`FEWEST`). The same ``(name, seed, n)`` gives the same rows, for every selector, each
    call its own dicts."""
    from mlcb.kernels.seeding import check_seed

    if name not in STREAMS:
        raise InputError(f"stream must be one of {', '.join(STREAMS)}, got {name!r}")
    n = check_length(name, n)
    seed = check_seed(seed)
    if STREAMS[name].source == "synthetic":
        return _synthetic(name, seed, n)
    rows = _table(name)
    rng = np.random.default_rng([seed, 12_345])
    if STREAMS[name].source == "sklearn":
        index = rng.integers(0, len(rows), n)
    else:
        index = rng.permutation(len(rows))[:n]
    # Fresh feature dicts: the rows of the cached table are not handed out, so that a caller who
    # changes a row (adds a feature to it, say) changes no later stream of the same data.
    return [(dict(rows[i][0]), rows[i][1]) for i in index.tolist()]


def classifier_pool() -> list:
    """Eight untrained river classifiers, binary or multi-class: logistic regressions at three
    learning rates and a passive-aggressive classifier (each one-vs-rest, behind a running
    standard scaler), Gaussian naive Bayes, a Hoeffding tree, k-nearest neighbours (k = 5 over the
    last 500 scaled rows) and the constant prior (the most frequent class)."""
    from river import dummy, linear_model, multiclass, naive_bayes, neighbors, optim, preprocessing, tree

    def scaled_ovr(model: Any) -> Any:
        return preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(model)

    return [
        scaled_ovr(linear_model.LogisticRegression(optimizer=optim.SGD(0.005))),
        scaled_ovr(linear_model.LogisticRegression(optimizer=optim.SGD(0.05), l2=0.001)),
        scaled_ovr(linear_model.LogisticRegression(optimizer=optim.SGD(0.5), l2=0.01)),
        scaled_ovr(linear_model.PAClassifier(C=0.01, mode=1)),
        naive_bayes.GaussianNB(),
        tree.HoeffdingTreeClassifier(grace_period=50),
        preprocessing.StandardScaler()
        | neighbors.KNNClassifier(n_neighbors=5, engine=neighbors.LazySearch(window_size=500)),
        dummy.PriorClassifier(),
    ]


def regressor_pool() -> list:
    """Eight untrained river regressors: linear regressions at three learning rates and a
    passive-aggressive regressor (behind a running standard scaler), a Hoeffding tree regressor
    on the raw features (its leaf models are linear: on unscaled features they can go far
    astray), one on scaled features predicting leaf means, k-nearest neighbours (k = 5 over the
    last 500 scaled rows) and the running mean of the target."""
    from river import dummy, linear_model, neighbors, optim, preprocessing, stats, tree

    def scaled(model: Any) -> Any:
        return preprocessing.StandardScaler() | model

    return [
        scaled(linear_model.LinearRegression(optimizer=optim.SGD(0.001))),
        scaled(linear_model.LinearRegression(optimizer=optim.SGD(0.01))),
        scaled(linear_model.LinearRegression(optimizer=optim.SGD(0.05), intercept_lr=0.1)),
        scaled(linear_model.PARegressor(C=0.01, mode=1)),
        tree.HoeffdingTreeRegressor(grace_period=50),
        scaled(neighbors.KNNRegressor(n_neighbors=5, engine=neighbors.LazySearch(window_size=500))),
        scaled(tree.HoeffdingTreeRegressor(grace_period=50, leaf_prediction="mean")),
        dummy.StatisticRegressor(stats.Mean()),
    ]


def pool_for(name: str) -> list:
    """:func:`classifier_pool` or :func:`regressor_pool`, as stream ``name``'s task asks."""
    return regressor_pool() if STREAMS[name].task == "regression" else classifier_pool()
