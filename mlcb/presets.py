"""Reference instances of docs/presets.md, with their calibrations.

A preset fixes the environment, the pool of experts and the policy's constants; a *calibration*
names the constants, and every saved result records it:

``theory``
    docs/rates.md rate functions, ``bonus_scale = 1``: the algorithm the paper analyses, with a valid
    certificate.
``practical``
    the theory rates with ``bonus_scale = 0.5``: both confidence widths halved, no certificate.
    It is *not* the authors' tuning: half of a theory rate is still 3 to 4 times the authors'
    heuristic rate at the counts that matter (trap, ``delta' = 0.005``, ``U/n`` at
    ``n = 10^4``: epsilon-greedy 0.27 against 0.061, UCB1 0.064 against at most 0.021), so it
    explores more than the authors' code.
``authors`` (trap only)
    the authors' reference code (docs/presets.md, calibrations): bonus ``c sqrt(g) + 0.66 g`` with
    ``g = log(t / delta + 1) / n_k`` (``t`` the global round) added to both bounds, their
    heuristic rates, ``c = 0.5``, ``delta = 0.1``.
``authors-rates`` (trap only)
    the authors' heuristic rates (:func:`agents.rates.authors_epsilon_greedy_rate`, their UCB1
    rate ``0.5 sqrt(ln n) sum_a sqrt(N_a)`` with radius constant ``c = 0.25``) under the paper's
    count-only bounds at ``bonus_scale = 1``: the algorithm as analysed, fed the authors' rates
    (heuristic, so no certificate). Trap, T = 250,000, 30 replications, mean pseudo-regret at
    M = 1 / 2 / 4: 3,126 / 1,294 / 1,209, against 4,544 / 1,456 / 1,227 for ``authors`` and
    6,490 / 2,955 / 1,216 for ``practical``.

A calibration's policy parameters are M-LCB's; other policies keep their own defaults (the
experts and their rates, which the balancing baselines read, follow the calibration).

Each preset also names the paper's *comparison* (:func:`mlcb.compare`): which policies at which
budgets, each with its smoothing wrapper.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlcb import validation
from mlcb.config import SimulationConfig, check_field_names
from mlcb.engine.sizes import check_environment_size
from mlcb.validation import InputError, InputTypeError, did_you_mean


@dataclass(frozen=True)
class Calibration:
    """The constants of one calibration: experts, policy parameters and confidence."""

    experts: Callable[[dict[str, Any]], list]
    policy_params: dict[str, Any] = field(default_factory=dict)
    delta: float = 0.1


#: Policies that take a calibration's parameters (M-LCB and its Top-M variant).
CALIBRATED_POLICIES = ("mlcb", "mlcb-topm")


@dataclass(frozen=True)
class Entry:
    """One policy of a comparison: its budgets, parameters and smoothing wrapper."""

    policy: str
    budgets: tuple[int, ...]
    policy_params: dict[str, Any] = field(default_factory=dict)
    smoothing: str | None = None


@dataclass(frozen=True)
class Preset:
    """A named instance: environment, default size and calibrations."""

    name: str
    description: str
    env: str
    env_params: dict[str, Any]
    budgets: tuple[int, ...]
    horizon: int
    replications: int
    calibrations: dict[str, Calibration]
    default_calibration: str = "theory"
    policy: str = "mlcb"
    comparison: tuple[Entry, ...] = ()
    #: Further named comparisons (``mlcb compare trap --set practitioners``).
    entry_sets: dict[str, tuple[Entry, ...]] = field(default_factory=dict)

    def smoothing_for(self, policy: str) -> str | None:
        """The smoothing wrapper this preset gives ``policy``: that of its first entry naming the
        policy with a wrapper, in the paper's comparison and then in its further comparison sets;
        ``None`` where none does (the experts' family default then applies).

        Examples
        --------
        >>> trap = get("trap")
        >>> trap.smoothing_for("limited-advice"), trap.smoothing_for("mlcb"), trap.smoothing_for("oracle")
        ('last', 'counts', None)
        """
        for entry in (*self.comparison, *(e for entries in self.entry_sets.values() for e in entries)):
            if entry.policy == policy and entry.smoothing:
                return str(entry.smoothing)
        return None

    def params_for(self, policy: str) -> dict[str, Any]:
        """The parameters this preset gives ``policy``: those of its first entry naming the policy
        with parameters, in the paper's comparison and then in its further comparison sets (as
        :meth:`smoothing_for` finds the wrapper); ``{}`` where none does. ``mlcb run`` and
        ``mlcb compare`` thus run the same policy under the same label.

        Examples
        --------
        >>> get("glm").params_for("ed2rb"), get("glm").params_for("mlcb")
        ({'c': 0.1}, {})
        """
        for entry in (*self.comparison, *(e for entries in self.entry_sets.values() for e in entries)):
            if entry.policy == policy and entry.policy_params:
                return dict(entry.policy_params)
        return {}

    def config(
        self, budget: int | None = None, calibration: str | None = None, **fields: Any
    ) -> SimulationConfig:
        """The :class:`SimulationConfig` of this preset at ``budget``, fields overridden."""
        check_field_names(fields, f"preset {self.name!r}", "budget, calibration and ")
        # Only None means the default: an empty name was taken for it, and a name that is no
        # string (a list, a table) was Python's own "unhashable type" error.
        name = self.default_calibration if calibration is None else calibration
        if not isinstance(name, str) or name not in self.calibrations:
            raise InputError(
                f"calibration must be one of {sorted(self.calibrations)} for preset {self.name!r}, "
                f"got {validation.shown(name)}{did_you_mean(name, self.calibrations)}"
            )
        chosen = self.calibrations[name]
        for table in ("env_params", "policy_params"):
            if not isinstance(fields.get(table, {}), dict):
                raise InputTypeError(f"{table} must be a dict, got {type(fields[table]).__name__}")
        own_env = {} if "env" in fields else self.env_params  # another environment: its own params
        env_params = {**own_env, **fields.pop("env_params", {})}
        if "n_experts" in env_params:  # the pool is sized by it: a whole number, however written (1e1)
            env_params["n_experts"] = validation.integer("n_experts", env_params["n_experts"])
        # The pool is sized by the environment's parameters: refuse sizes beyond memory first.
        check_environment_size(fields.get("env", self.env), env_params)
        policy = fields.pop("policy", self.policy)
        calibrated = chosen.policy_params if policy in CALIBRATED_POLICIES else {}
        policy_params = {**calibrated, **self.params_for(policy), **fields.pop("policy_params", {})}
        values = {
            "env": self.env,
            "env_params": env_params,
            "experts": fields["experts"] if "experts" in fields else tuple(chosen.experts(env_params)),
            "policy": policy,
            "policy_params": policy_params,
            "budget": self.budgets[0] if budget is None else budget,
            "horizon": self.horizon,
            "replications": self.replications,
            "delta": chosen.delta,
            "calibration": name,
        }
        # The wrapper the preset's comparisons give the policy, as mlcb.compare deploys it, unless
        # the pool or the environment is another one (then the experts' family default).
        wrapper = self.smoothing_for(policy)
        if wrapper is not None and not {"smoothing", "experts", "env"} & set(fields):
            values["smoothing"] = wrapper
        values.update(fields)
        return SimulationConfig(**values)


def _trap_experts(rate: str, ucb_c: float) -> Callable[[dict[str, Any]], list]:
    def build(env_params: dict[str, Any]) -> list:
        from agents.bandits import UCB1, EpsilonGreedy

        n = env_params.get("n_experts", 10)
        first = n // 2
        return [EpsilonGreedy(c=1.0, alpha=2.0 / 3.0, rate=rate)] * first + [UCB1(c=ucb_c, rate=rate)] * (
            n - first
        )

    return build


def _glm_experts(rate: str) -> Callable[[dict[str, Any]], list]:
    """The glm preset's pool: one OGD expert per link, each with ``rate`` ("theory": its valid
    rate; "authors": the authors' code's common rate 3 D G sqrt(n), D = G = 0.1)."""

    def build(env_params: dict[str, Any]) -> list:
        from agents.glm import OnlineGradientDescent
        from envs.links import LINK_NAMES

        return [OnlineGradientDescent(link=name, rate=rate) for name in LINK_NAMES]

    return build


def _moe_experts(beta: float) -> Callable[[dict[str, Any]], list]:
    """The moe preset's pool: eight mixture-of-experts networks, from one small sub-expert with
    large steps (fast but limited) to eight sub-experts with small steps (slow but capable)."""

    def build(env_params: dict[str, Any]) -> list:
        from agents.moe import MoEExpert

        shapes = [(1, 1, 4, 0.03), (1, 1, 8, 0.01), (2, 1, 8, 0.03), (2, 1, 16, 0.01),
                  (4, 2, 16, 0.01), (4, 2, 16, 0.003), (8, 2, 16, 0.01), (8, 2, 32, 0.003)]  # fmt: skip
        return [MoEExpert(n_experts=e, top_k=k, hidden=h, lr=lr, beta=beta) for e, k, h, lr in shapes]

    return build


def _practitioners(budgets: tuple[int, ...], smoothing: str) -> tuple[Entry, ...]:
    """M-LCB against the policies practitioners run (docs/policies.md), every one at the same
    budgets and with the same smoothing wrapper: equal training budget."""
    from mlcb.policies import PRACTITIONERS

    return tuple(Entry(name, budgets, smoothing=smoothing) for name in ("mlcb", *PRACTITIONERS))


def _late_risers(n_fast: int, n_slow: int, slow_arms: int) -> dict[str, Any]:
    """Reward means of the late-riser instance: ``n_fast`` experts on two arms (0.5 and 0.3; the
    other arms of the row unused) and ``n_slow`` on ``slow_arms`` arms (0.7 and the rest 0.2)."""
    fast = [0.5, 0.3] + [math.nan] * (slow_arms - 2)
    slow = [0.7] + [0.2] * (slow_arms - 1)
    return {"reward_means": [fast] * n_fast + [slow] * n_slow, "shuffle": True}


def _late_riser_experts(n_fast: int, n_slow: int) -> Callable[[dict[str, Any]], list]:
    def experts(env_params: dict[str, Any]) -> list:
        import agents

        return [agents.make("ucb1")] * n_fast + [agents.make("epsilon-greedy")] * n_slow

    return experts


PRESETS: dict[str, Preset] = {
    "trap": Preset(
        name="trap",
        description="the paper's bandit 'suboptimal trap': 10 two-armed Bernoulli experts, "
        "epsilon-greedy (0-4) and UCB1 (5-9)",
        env="mlcb/Trap-v0",
        env_params={"n_experts": 10, "n_arms": 2},
        budgets=(1, 2, 4),
        horizon=250_000,
        replications=100,
        comparison=(
            Entry("mlcb", (1, 2, 3, 4), smoothing="counts"),
            Entry("limited-advice", (1, 2, 3, 4), smoothing="last"),
            Entry("smooth-corral", (1,), smoothing="counts"),
        ),
        entry_sets={"practitioners": _practitioners((1, 2, 4), "counts")},
        calibrations={
            "theory": Calibration(_trap_experts("theory", 2.0)),
            "practical": Calibration(_trap_experts("theory", 2.0), {"bonus_scale": 0.5}),
            "authors": Calibration(_trap_experts("authors", 0.25), {"bounds": "authors", "authors_c": 0.5}),
            "authors-rates": Calibration(_trap_experts("authors", 0.25)),
        },
    ),
    "glm": Preset(
        name="glm",
        description="the paper's parametric experiment: 10 online GLMs (projected OGD) with "
        "different links on x uniform on a sphere, target link 9",
        env="mlcb/GLM-v0",
        env_params={"dim": 5},
        budgets=(1, 2, 3),
        horizon=2_500,
        replications=30,
        comparison=(
            Entry("mlcb", (1, 2, 3), smoothing="average"),
            Entry("limited-advice", (1, 2, 3), smoothing="last"),
            Entry("ed2rb", (1, 2, 3), {"c": 0.1}, smoothing="last"),
        ),
        entry_sets={"practitioners": _practitioners((1, 2, 3), "average")},
        calibrations={
            "theory": Calibration(_glm_experts("theory")),
            "practical": Calibration(_glm_experts("theory"), {"bonus_scale": 0.5}),
            "authors": Calibration(_glm_experts("authors")),
        },
    ),
    "late-risers": Preset(
        name="late-risers",
        description="the practitioners' late risers: 4 UCB1 experts on two arms (best mean 0.5) that "
        "learn fast and 2 epsilon-greedy experts on ten arms (best 0.7) that learn late",
        env="mlcb/BanditExperts-v0",
        env_params=_late_risers(n_fast=4, n_slow=2, slow_arms=10),
        budgets=(1, 2, 4),
        horizon=50_000,
        replications=8,
        comparison=_practitioners((1, 2, 4), "counts"),
        calibrations={"theory": Calibration(_late_riser_experts(n_fast=4, n_slow=2))},
    ),
    "moe": Preset(
        name="moe",
        description="8 mixture-of-experts networks (torch) on a clustered regression stream, from "
        "one small sub-expert to eight; regret against the Bayes loss, heuristic rates",
        env="mlcb/Clustered-v0",
        env_params={"holdout": 128},
        budgets=(1, 2, 4),
        horizon=3_000,
        replications=8,
        comparison=(
            Entry("mlcb", (1, 2, 4), smoothing="ema"),
            Entry("limited-advice", (1, 2, 4), smoothing="last"),
            Entry("round-robin", (2,), smoothing="ema"),
            Entry("greedy", (2,), smoothing="ema"),
            Entry("full-budget", (1,), smoothing="ema"),
        ),
        calibrations={
            "theory": Calibration(_moe_experts(0.5)),
            "practical": Calibration(_moe_experts(0.5), {"bonus_scale": 0.5}),
        },
    ),
}


# --- real data: river models on a bootstrapped stream of a data set shipped with river -------------
#: The river experts' heuristic rate in the presets: ``mlcb.river.RATE``, the river selectors'
#: default with ``"trained"`` statistics, the ones the simulator's M-LCB reads (chosen on shuffles
#: other than the benchmark's, docs/river.md).
RIVER_RATE = (1 / math.sqrt(2), 0.5)


def _river_experts(env_params: dict[str, Any]) -> list:
    from mlcb.river.experts import RiverExpert, river_pool

    return [RiverExpert(model, rate=RIVER_RATE) for model in river_pool()]


for _dataset, _rows in (("phishing", "1 250"), ("bananas", "5 300")):
    PRESETS[_dataset] = Preset(
        name=_dataset,
        description=f"river's {_dataset.capitalize()} data set ({_rows} rows, bootstrapped): 8 river "
        "classifiers (3 SGD logistic regressions, perceptron, PA-I, naive Bayes, Hoeffding tree, "
        "k-NN), 0-1 loss, a warm start of 20 rows; regret against the best one trained every "
        "round (needs river)",
        env="mlcb/RealData-v0",
        env_params={"dataset": _dataset, "warm_start": 20},
        budgets=(1, 2, 3),
        horizon=2_000,
        replications=10,
        comparison=(
            Entry("mlcb", (1, 2, 3)),
            Entry("greedy", (1,)),
            Entry("round-robin", (1,)),
            Entry("full-budget", (1,)),
        ),
        calibrations={
            "theory": Calibration(_river_experts),
            "practical": Calibration(_river_experts, {"bonus_scale": 0.5}),
        },
    )


# --- the paper's real-data runs: compiled online classifiers (agents/classifiers.py) ----------------
#: Stand-ins for the paper's data sets, which cannot be downloaded here (docs/real-data.md §2):
#: river's ImageSegments for cardiotocography, scikit-learn's digits for Warfarin dosing.
CTG_LIKE: dict[str, Any] = {"dataset": "segments", "order": "shuffle"}
WARFARIN_LIKE: dict[str, Any] = {"dataset": "digits"}


def _classifier_experts(
    size: int, rate_scale: float = 1.0, rate: str = "zero-one"
) -> Callable[[dict[str, Any]], list]:
    """The first ``size`` experts of :func:`agents.classifiers.mixed_pool` on the data set."""

    def build(env_params: dict[str, Any]) -> list:
        from agents.classifiers import MIN_FEATURES, mixed_pool
        from envs.real_data import table_of

        table = table_of(env_params)
        if table.n_features < MIN_FEATURES:
            raise InputError(
                f"data: the pool of the real-data presets reads features in halves, thirds and pairs, "
                f"so it needs at least {MIN_FEATURES} feature columns; {table.name} has "
                f"{table.n_features} ({', '.join(table.feature_names)}); in Python, give a pool of "
                "your own (docs/real-data.md)"
            )
        return mixed_pool(table.n_features, size, rate_scale, rate)

    return build


def _paper_entries(budgets: tuple[int, ...]) -> tuple[Entry, ...]:
    """The paper's real-data comparison: M-LCB, LimitedAdvice, RoundRobin, Smooth CORRAL (M = 1),
    every one deploying the experts' current iterate."""
    return (
        Entry("mlcb", budgets, smoothing="last"),
        Entry("limited-advice", budgets, smoothing="last"),
        Entry("round-robin", budgets, smoothing="last"),
        Entry("smooth-corral", (1,), smoothing="last"),
    )


def _paper_preset(
    name: str,
    stand_in: str,
    env_params: dict[str, Any],
    horizon: int,
    budgets: tuple[int, ...],
    size: int,
) -> Preset:
    """A preset of the paper's real-data comparison (M-LCB, LimitedAdvice, RoundRobin, Smooth
    CORRAL) with ``size`` classifiers on the stream ``env_params``, ``horizon`` rounds."""
    return Preset(
        name=name,
        description=f"{stand_in}; {size} online softmax and perceptron classifiers; 0-1 loss against the "
        "best fixed expert",
        env="mlcb/RealData-v0",
        env_params=env_params,
        budgets=budgets,
        horizon=horizon,
        replications=20,
        comparison=_paper_entries(budgets),
        calibrations={
            "theory": Calibration(_classifier_experts(size)),
            "practical": Calibration(_classifier_experts(size), {"bonus_scale": 0.5}),
            # The classifiers' former rates (agents/classifiers.py: rate="log-loss"), to show what they do.
            "theory-log-loss": Calibration(_classifier_experts(size, rate="log-loss")),
            "practical-log-loss": Calibration(
                _classifier_experts(size, rate="log-loss"), {"bonus_scale": 0.5}
            ),
        },
    )


PRESETS["ctg-like"] = _paper_preset(
    "ctg-like",
    "the paper's cardiotocography run on a stand-in: river's ImageSegments (2,310 rows, 18 features, "
    "7 classes) read once in a random order, 2,125 rounds (needs river)",
    CTG_LIKE,
    2_125,
    (1, 2, 4, 8),
    15,
)
PRESETS["warfarin-like"] = _paper_preset(
    "warfarin-like",
    "the paper's Warfarin run on a stand-in: scikit-learn's digits (1,797 rows, 64 features, 10 "
    "classes) bootstrapped to 20,000 rounds (needs scikit-learn)",
    WARFARIN_LIKE,
    20_000,
    (1, 2, 4),
    7,
)
# --- the paper's real data: cardiotocography (shipped) and warfarin (the user's copy) ---------------
#: The paper's cardiotocography stream: the shipped table read once (2,125 rounds after the warm start).
CTG: dict[str, Any] = {"dataset": "ctg", "order": "shuffle"}
#: The 35-feature reading (the 21 features, LBE, DR, b, e and the 10 pattern indicators: they leak NSP).
CTG_35: dict[str, Any] = {"dataset": "ctg-35", "order": "shuffle"}
#: The paper's warfarin stream: the user's IWPC subject file (``dataset``: its path), bootstrapped.
WARFARIN: dict[str, Any] = {"dataset": None, "reader": "iwpc"}

PRESETS["ctg"] = _paper_preset(
    "ctg",
    "the paper's cardiotocography run: the UCI data set shipped with the package (2,126 records, the 21 "
    "features, 3 classes NSP) read once in a random order, 2,125 rounds",
    CTG,
    2_125,
    (1, 2, 4, 8),
    15,
)
PRESETS["ctg-35"] = _paper_preset(
    "ctg-35",
    "the cardiotocography run on 35 columns: the 21 features, LBE, DR, b, e and the 10 pattern indicators "
    "(these leak the label NSP)",
    CTG_35,
    2_125,
    (1, 2, 4, 8),
    15,
)
PRESETS["warfarin"] = dataclasses.replace(
    _paper_preset(
        "warfarin",
        "the paper's warfarin run on your copy of the IWPC subject file (--data PATH): 5,528 patients, 93 "
        "covariates, 3 dose classes, bootstrapped to 20,000 rounds (calibrations k10, k15: the scaling run)",
        WARFARIN,
        20_000,
        (1, 2, 4),
        7,
    ),
    calibrations={
        **PRESETS["warfarin-like"].calibrations,
        **{f"k{size}": Calibration(_classifier_experts(size)) for size in (7, 10, 15)},
    },
)
PRESETS["warfarin-scaling"] = Preset(
    name="warfarin-scaling",
    description="the paper's scaling run on the warfarin-like stream: M-LCB at M = 2 with the first "
    "7, 10 or 15 classifiers (calibrations k7, k10, k15: the pool size, theory constants)",
    env="mlcb/RealData-v0",
    env_params=WARFARIN_LIKE,
    budgets=(2,),
    horizon=20_000,
    replications=20,
    comparison=(Entry("mlcb", (2,), smoothing="last"),),
    calibrations={f"k{size}": Calibration(_classifier_experts(size)) for size in (7, 10, 15)},
    default_calibration="k15",
)


def get(name: str) -> Preset:
    """The preset called ``name``; a ``ValueError`` listing the presets otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise InputError(
            f"unknown preset {name!r}{did_you_mean(name, PRESETS)}; presets: {', '.join(sorted(PRESETS))}"
        ) from None


def names() -> list[str]:
    """Preset names."""
    return sorted(PRESETS)
