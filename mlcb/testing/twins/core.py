"""A slow, obvious pure-Python twin of the engine, M-LCB and the built-in experts.

It re-implements, from the definitions, what the compiled path computes: the counter-based random
stream, the trap and GLM draws, UCB1 / epsilon-greedy / Thompson sampling / OGD, their rate
functions, M-LCB's bounds (selection by a full sort, not the kernels' heap or scan), the smoothing
wrappers and the regret accounting. Only the instance data (arm means, the GLM target, the
quadrature nodes and the link functions) is taken from the package. For the same seed it must
reproduce the compiled engine's decisions and regret exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

MASK = (1 << 64) - 1
GOLDEN_1 = 0x9E3779B97F4A7C15
GOLDEN_2 = 0xD1B54A32D192ED03
GAMMA_ATTEMPTS = 32
GAMMA_SLOTS = 3 * GAMMA_ATTEMPTS + 1
DEPLOY_SLOTS = 4096


# --- random numbers ----------------------------------------------------------------------------
def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def uniform(key: int, a: int, b: int) -> float:
    bits = mix((mix((key + a * GOLDEN_1) & MASK) + b * GOLDEN_2) & MASK)
    return (bits >> 11) * (1.0 / 9007199254740992.0)


def normal(key: int, a: int, b: int) -> float:
    u1, u2 = uniform(key, a, 2 * b), uniform(key, a, 2 * b + 1)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def bits(key: int, a: int, b: int) -> int:
    return mix((mix((key + a * GOLDEN_1) & MASK) + b * GOLDEN_2) & MASK)


def _ziggurat(r: float = 3.654152885361009, layers: int = 256) -> tuple[list[float], list[float]]:
    """Layer edges and heights of a ziggurat of equal areas ``v`` under ``exp(-x^2 / 2)``."""
    v = r * math.exp(-0.5 * r * r) + math.sqrt(0.5 * math.pi) * math.erfc(r / math.sqrt(2.0))
    x = [v / math.exp(-0.5 * r * r), r]
    while len(x) < layers:
        x.append(math.sqrt(-2.0 * math.log(v / x[-1] + math.exp(-0.5 * x[-1] * x[-1]))))
    x.append(0.0)
    return x, [math.exp(-0.5 * e * e) for e in x[:-1]] + [1.0]


ZIGGURAT_X, ZIGGURAT_F = _ziggurat()


def ziggurat_normal(key: int, a: int, b: int) -> float:
    """The ziggurat normal: the words at slots b, b + 2^32, ... consumed in turn."""
    r = ZIGGURAT_X[1]
    words = (bits(key, a, b + (s << 32)) for s in range(1 << 30))
    while True:
        word = next(words)
        layer, sign = word & 255, -1.0 if (word >> 8) & 1 else 1.0
        x = (word >> 11) * (1.0 / 9007199254740992.0) * ZIGGURAT_X[layer]
        if x < ZIGGURAT_X[layer + 1]:
            return sign * x
        if layer == 0:
            while True:
                tail = -math.log(1.0 - (next(words) >> 11) * (1.0 / 9007199254740992.0)) / r
                y = -math.log(1.0 - (next(words) >> 11) * (1.0 / 9007199254740992.0))
                if y + y > tail * tail:
                    return sign * (r + tail)
        u = (next(words) >> 11) * (1.0 / 9007199254740992.0)
        if ZIGGURAT_F[layer] + (ZIGGURAT_F[layer + 1] - ZIGGURAT_F[layer]) * u < math.exp(-0.5 * x * x):
            return sign * x


def gamma(key: int, a: int, slot: int, shape: float) -> float:
    boost = shape < 1.0
    s = shape + 1.0 if boost else shape
    d = s - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    value = d
    for attempt in range(GAMMA_ATTEMPTS):
        base = slot + 3 * attempt
        u1, u2 = uniform(key, a, base), uniform(key, a, base + 1)
        x = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(key, a, base + 2)
        if u < 1.0 - 0.0331 * (x * x) * (x * x) or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            value = d * v
            break
    if boost:
        value *= uniform(key, a, slot + 3 * GAMMA_ATTEMPTS) ** (1.0 / shape)
    return value


def beta(key: int, a: int, slot: int, alpha: float, beta_: float) -> float:
    x = gamma(key, a, slot, alpha)
    y = gamma(key, a, slot + GAMMA_SLOTS, beta_)
    return x / (x + y)


# --- bandit experts ----------------------------------------------------------------------------
def epsilon(c: float, alpha: float, m: int, j: int) -> float:
    return min(1.0, c * (m * max(1.0, math.log(j)) / j) ** (1.0 - alpha))


@dataclass
class BanditExpert:
    family: str  # "ucb1", "epsilon-greedy", "thompson", "clipped-thompson"
    m: int
    key: int
    c: float = 2.0
    alpha: float = 2.0 / 3.0
    rate: str = "theory"
    rate_coef: float = 0.5
    rate_scale: float = 1.0
    delta_prime: float = 0.005
    pulls: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    steps: int = 0
    epsilon_sum: float = 0.0
    rate_sum: float = 0.0

    def __post_init__(self) -> None:
        self.pulls = [0] * self.m
        self.losses = [0.0] * self.m
        self.weights = [0.0] * self.m

    def greedy(self) -> int:
        for a in range(self.m):
            if self.pulls[a] == 0:
                return a
        means = [self.losses[a] / self.pulls[a] for a in range(self.m)]
        return min(range(self.m), key=lambda a: (means[a], a))

    def choose(self, j: int, key: int, counter: int, slot: int):
        """(arm, eps, greedy) of the decision at own round j; eps = -1 unless epsilon-greedy."""
        if self.family == "epsilon-greedy":
            eps = epsilon(self.c, self.alpha, self.m, j)
            g = self.greedy()
            arm = g
            if uniform(key, counter, slot) < eps:
                arm = min(int(uniform(key, counter, slot + 1) * self.m), self.m - 1)
            return arm, eps, g
        if self.family == "ucb1":
            for a in range(self.m):
                if self.pulls[a] == 0:
                    return a, -1.0, a
            log_j = math.log(j)
            index = [
                self.losses[a] / self.pulls[a] - math.sqrt(self.c * log_j / self.pulls[a])
                for a in range(self.m)
            ]
            arm = min(range(self.m), key=lambda a: (index[a], a))
            return arm, -1.0, arm
        clipped = self.family == "clipped-thompson"
        values = []
        for a in range(self.m):
            if clipped and self.pulls[a] == 0:
                return a, -1.0, a
            value = beta(
                key,
                counter,
                slot + 2 * GAMMA_SLOTS * a,
                1.0 + self.losses[a],
                1.0 + self.pulls[a] - self.losses[a],
            )
            if clipped:
                mean = self.losses[a] / self.pulls[a]
                s = self.pulls[a]
                radius = math.sqrt(math.log(4.0 * self.m * s * s / (self.delta_prime / 2.0)) / (2.0 * s))
                value = min(max(value, mean - 2.0 * radius), mean - radius)
            values.append(value)
        arm = min(range(len(values)), key=lambda a: (values[a], a))
        return arm, -1.0, arm

    def train(self, loss_of) -> tuple[float, float]:
        j = self.steps + 1
        arm, eps, g = self.choose(j, self.key, j, 0)
        if eps >= 0.0:
            for a in range(self.m):
                self.weights[a] += eps / self.m
            self.weights[g] += 1.0 - eps
            if self.rate == "theory":
                mu = self.epsilon_sum / self.m
                s = math.ceil(mu - math.sqrt(2.0 * mu * math.log(6.0 * self.m * j * j / self.delta_prime)))
                b = 1.0
                if s >= 1:
                    b = min(1.0, math.sqrt(2.0 * math.log(12.0 * self.m * s * s / self.delta_prime) / s))
                self.rate_sum = self.rate_sum + (eps + (1.0 - eps) * b)
                self.epsilon_sum = self.epsilon_sum + eps
        else:
            self.weights[arm] += 1.0
        loss = loss_of(arm)
        self.pulls[arm] += 1
        self.losses[arm] += loss
        self.steps = j
        return loss, self.rate_value(j)

    def rate_value(self, n: int) -> float:
        m, dp = self.m, self.delta_prime
        if self.rate == "authors" and n == 1:
            value = 1.0
        elif self.rate == "authors" and self.family == "ucb1":
            value = self.rate_coef * math.sqrt(math.log(n)) * sum(math.sqrt(p) for p in self.pulls)
        elif self.rate == "authors" and self.family == "epsilon-greedy":
            value = self.rate_coef * n**self.alpha * (m * math.log(n)) ** (1.0 - self.alpha)
        elif self.family == "ucb1":
            t0 = math.ceil((8.0 * m / dp) ** (1.0 / (2.0 * self.c - 2.0)))
            value = (
                2.0 * math.sqrt(self.c * (m - 1) * n * math.log(n))
                + ((m - 1) + t0)
                + math.sqrt(0.5 * n * math.log(4.0 * n * n / dp))
            )
        elif self.family == "epsilon-greedy":
            value = self.rate_sum + math.sqrt(0.5 * n * math.log(6.0 * n * n / dp))
        else:
            factor = 1.5 if self.family == "clipped-thompson" else 1.0
            value = (
                factor * math.sqrt(2.0 * (m - 1) * n * math.log(8.0 * m * n * n / dp))
                + math.sqrt(0.5 * n * math.log(4.0 * n * n / dp))
                + (m - 1)
            )
        return min(float(n), self.rate_scale * value)

    def deploy(self, smoothing: str, means, key: int, t: int, slot: int, loss_of):
        base = slot * DEPLOY_SLOTS
        if smoothing == "last" or self.steps == 0:
            arm, eps, g = self.choose(self.steps + 1, key, t, base)
            if eps < 0.0:
                return loss_of(arm), means[arm]
            expected = (1.0 - eps) * means[g]
            for a in range(self.m):
                expected += eps / self.m * means[a]
            return loss_of(arm), expected
        weights = [float(p) for p in self.pulls] if smoothing == "counts" else list(self.weights)
        total = 0.0
        weighted = 0.0
        for a in range(self.m):
            total += weights[a]
            weighted += weights[a] * means[a]
        target = uniform(key, t, base) * total
        cumulative = 0.0
        arm = self.m - 1
        for a in range(self.m):
            cumulative += weights[a]
            if target < cumulative:
                arm = a
                break
        return loss_of(arm), weighted / total


# --- GLM experts -------------------------------------------------------------------------------
@dataclass
class GLMExpert:
    link: int
    step: float
    radius: float
    rate_coef: float
    rate_scale: float
    delta_prime: float
    w: list
    history: list = field(default_factory=list)
    sums: list = field(default_factory=list)
    steps: int = 0

    def __post_init__(self) -> None:
        self.sums = [0.0] * len(self.w)


# --- policies ----------------------------------------------------------------------------------
@dataclass
class Stats:
    """The per-expert statistics a policy reads: counts, loss sums, current rates, and each
    expert's identity (its stream identity; the index for a default pool), by which every
    deterministic tie is broken: relabelling the pool must only permute the results."""

    n: list
    loss_sum: list
    rate: list
    identity: list = field(default_factory=list)  # default: 0 .. K-1

    def __post_init__(self) -> None:
        if not self.identity:
            self.identity = list(range(len(self.n)))

    def by_identity(self) -> list:
        """The experts sorted by identity."""
        return sorted(range(len(self.n)), key=lambda k: self.identity[k])


#: Twin policy factories by policy class: ``factory(spec, n_experts, budget, delta, horizon,
#: optimal, key) -> policy`` with ``warm_start``, ``ties``, ``select(t, stats) -> (chosen,
#: deployed or -1, widths)``, ``observe(k, loss, t, stats)`` and ``end_round(chosen, deployed,
#: loss, t, stats)``.
POLICIES: dict = {}


def register(policy_class, factory) -> None:
    """Make ``factory`` the twin of ``policy_class``."""
    POLICIES[policy_class] = factory


@dataclass
class TwinMLCB:
    n_experts: int
    budget: int
    delta: float
    bonus_scale: float = 1.0
    authors: bool = False
    authors_c: float = 0.5
    top_m: bool = False
    warm_start: bool = True
    ties: bool = False

    def __post_init__(self) -> None:
        self.lcb = [0.0] * self.n_experts
        self.ucb = [0.0] * self.n_experts

    def observe(self, k: int, loss: float, t: int, stats: Stats) -> None:
        if self.authors:
            return
        n = stats.n[k]
        mean = stats.loss_sum[k] / n
        self.lcb[k] = mean - self.bonus_scale * stats.rate[k] / n
        hoeffding = math.sqrt(2.0 * math.log(4.0 * self.n_experts * n * n / self.delta) / n)
        self.ucb[k] = mean + self.bonus_scale * hoeffding

    def select(self, t: int, stats: Stats):
        if self.authors:
            for k in range(self.n_experts):
                n = stats.n[k]
                mean = stats.loss_sum[k] / n
                g = math.log(t / self.delta + 1.0) / n
                bonus = self.authors_c * math.sqrt(g) + 0.66 * g
                self.lcb[k] = mean - stats.rate[k] / n - bonus
                self.ucb[k] = mean + bonus
        order = sorted(range(self.n_experts), key=lambda k: (self.lcb[k], stats.identity[k]))
        chosen = order[: self.budget]
        deployed = min(chosen, key=lambda k: (self.ucb[k], stats.identity[k]))
        widths = [self.ucb[k] - self.lcb[k] for k in chosen]
        inside = sorted(self.lcb[k] for k in chosen)
        tie = self.budget < self.n_experts and self.lcb[order[self.budget]] == inside[-1]
        tie = tie or len(set(inside)) < len(inside)
        if not self.top_m:
            tie = tie or sum(self.ucb[k] == self.ucb[deployed] for k in chosen) > 1
        self.ties = self.ties or tie
        return chosen, (-1 if self.top_m else deployed), widths

    def end_round(self, chosen, deployed, loss, t, stats) -> None:
        pass


def _mlcb_twin(spec, n_experts, budget, delta, horizon, optimal, key):
    return TwinMLCB(
        n_experts, budget, delta, spec.bonus_scale, spec.bounds == "authors", spec.authors_c, spec.top_m
    )


def _register_mlcb() -> None:
    from mlcb.policies.m_lcb import MLCB

    register(MLCB, _mlcb_twin)


_register_mlcb()


# --- the engine --------------------------------------------------------------------------------
@dataclass
class TwinRun:
    selected: list
    deployed: list
    deployed_loss: list
    regret: list  # cumulative realized regret after each round
    pseudo_regret: list
    top_m_regret: list
    certificate: list
    trained: list  # n_k after the last round
    deployed_counts: list
    ties: bool = False  # an exact tie decided a selection (ties go to the smaller identity)


def run(config, replication: int, rounds: int) -> TwinRun:
    """Simulate ``rounds`` rounds of replication ``replication`` of ``config`` in pure Python."""
    from mlcb.engine.problem import build
    from mlcb.kernels.seeding import stream_keys

    problem = build(config)
    env, family, policy_spec = problem.env, problem.family, problem.policy
    keys = stream_keys(config.seed, replication, config.n_experts, getattr(env, "streams", None))
    env_params, _ = env.build(config.seed, replication, rounds)
    optimal = [float(v) for v in family.optimal_losses(list(config.experts), env, env_params)]
    streams = getattr(env, "streams", None)
    identity = list(range(config.n_experts)) if streams is None else [int(s) for s in streams]
    best = min(range(config.n_experts), key=lambda k: (optimal[k], identity[k]))
    best_loss = optimal[best]
    top_m_best = sum(sorted(optimal)[: config.budget]) / config.budget
    policy = POLICIES[type(policy_spec)](
        policy_spec, config.n_experts, config.budget, config.delta, config.horizon, optimal, int(keys.policy)
    )
    if family.name in WORLDS:
        world = WORLDS[family.name](config, env, env_params, keys, replication)
    elif family.name == "bandit" or family.name in BANDIT_WORLDS:
        world = _BanditWorld(config, env, env_params, keys, BANDIT_WORLDS.get(family.name))
    else:
        world = _GLMWorld(config, env, env_params, keys, replication)
    stats = Stats([0] * config.n_experts, [0.0] * config.n_experts, [0.0] * config.n_experts, identity)
    deployed_counts = [0] * config.n_experts
    if policy.warm_start:
        world.begin(0)
        for k in stats.by_identity():
            loss, stats.rate[k] = world.train(k, 0)
            stats.n[k] += 1
            stats.loss_sum[k] += loss
            policy.observe(k, loss, 0, stats)
    out = TwinRun([], [], [], [], [], [], [], [], [])
    totals = [0.0] * 5
    for t in range(1, rounds + 1):
        world.begin(t)
        chosen, deployed, widths = policy.select(t, stats)
        if deployed >= 0:
            loss, expected = world.deploy(deployed, t, 0)
            deployed_counts[deployed] += 1
        else:
            loss = expected = 0.0
            for j, k in enumerate(chosen):
                one, one_expected = world.deploy(k, t, j)
                loss += one
                expected += one_expected
                deployed_counts[k] += 1
            loss /= len(chosen)
            expected /= len(chosen)
        totals[0] += loss - best_loss
        totals[1] += expected - best_loss
        top_m = 0.0
        for j, k in enumerate(chosen):
            totals[4] += widths[j]
            if k == best:
                totals[3] += widths[j]
            one, stats.rate[k] = world.train(k, t)
            stats.n[k] += 1
            stats.loss_sum[k] += one
            policy.observe(k, one, t, stats)
            top_m += optimal[k]
        totals[2] += top_m / len(chosen) - top_m_best
        policy.end_round(chosen, deployed, loss, t, stats)
        out.selected.append(list(chosen))
        out.deployed.append(deployed)
        out.deployed_loss.append(loss)
        out.regret.append(totals[0])
        out.pseudo_regret.append(totals[1])
        out.top_m_regret.append(totals[2])
        out.certificate.append(totals[3] + totals[4] / config.budget)
    out.trained = stats.n
    out.deployed_counts = deployed_counts
    out.ties = policy.ties
    return out


#: Twins of other compiled families on the bandit experts environments, by family name:
#: ``make_experts(config, env, keys, delta_prime) -> list`` of twin experts, each with
#: ``train(loss_of) -> (loss, rate)`` and ``deploy(smoothing, means, key, t, slot, loss_of) ->
#: (loss, expected)``, ``loss_of(arm)`` being the arm's loss under the round's ``xi_t``
#: (``mlcb/testing/twins/robust_hedge.py`` registers robust UCB and Hedge).
BANDIT_WORLDS: dict = {}

#: Twins of families on environments of their own, by family name: ``make_world(config, env,
#: env_params, keys, replication)`` with ``begin(t)``, ``train(k, t) -> (loss, rate)`` and
#: ``deploy(k, t, slot) -> (loss, expected)`` (``mlcb/testing/twins/bco.py`` registers BCO).
WORLDS: dict = {}


class _BanditWorld:
    def __init__(self, config, env, env_params, keys, make_experts=None) -> None:
        self.means = env_params.loss_means
        self.streams = [int(s) for s in env_params.streams]
        self.env_key = int(env_params.key)
        self.deploy_key = int(keys.deploy)
        self.smoothing = config.smoothing
        dp = config.delta / (2.0 * config.n_experts)
        if make_experts is not None:
            self.experts = make_experts(config, env, keys, dp)
            return
        families = {0: "ucb1", 1: "epsilon-greedy", 2: "thompson", 3: "clipped-thompson"}
        self.experts = [
            BanditExpert(
                families[e.code],
                int(env.n_arms[k]),
                int(keys.experts[k]),
                c=getattr(e, "c", 0.0),
                alpha=getattr(e, "alpha", 0.5),
                rate=e.rate,
                rate_coef=getattr(e, "rate_coef", 0.0),
                rate_scale=e.rate_scale,
                delta_prime=dp,
            )
            for k, e in enumerate(config.experts)
        ]

    def begin(self, t: int) -> None:
        self.t = t

    def _loss_of(self, k: int):
        m_max = self.means.shape[1]
        row = self.streams[k] * m_max
        return lambda a: 1.0 if uniform(self.env_key, self.t, row + a) < self.means[k, a] else 0.0

    def train(self, k: int, t: int):
        return self.experts[k].train(self._loss_of(k))

    def deploy(self, k: int, t: int, slot: int):
        return self.experts[k].deploy(
            self.smoothing, [float(v) for v in self.means[k]], self.deploy_key, t, slot, self._loss_of(k)
        )


class _GLMWorld:
    def __init__(self, config, env, env_params, keys, replication: int) -> None:
        from envs.links import link_index

        self.p = env_params
        self.dim = env.dim
        self.deploy_key = int(keys.deploy)
        self.smoothing = config.smoothing
        dp = config.delta / (2.0 * config.n_experts)
        self.experts = []
        for expert in config.experts:
            g = env.lipschitz(expert.link, expert.radius)
            diameter = 2.0 * expert.radius
            start = env.initial_weights(config.seed, replication, expert.init_norm)
            self.experts.append(
                GLMExpert(
                    link_index(expert.link),
                    expert.step_scale * diameter / g,
                    expert.radius,
                    1.5 * g * diameter,
                    expert.rate_scale,
                    dp,
                    [float(v) for v in start],
                )
            )

    @staticmethod
    def _link(link: int, z: float) -> float:
        from envs.links import link_value

        return float(link_value(link, z))

    def _loss(self, prediction: float, y: float) -> float:
        residual = (prediction - y) / self.p.scale
        return min(1.0, residual * residual)

    def begin(self, t: int) -> None:
        key = int(self.p.key)
        g = [normal(key, t, i) for i in range(self.dim)]
        squared = 0.0
        for v in g:
            squared += v * v
        scale = self.p.radius / math.sqrt(squared)
        self.x = [v * scale for v in g]
        inner = 0.0
        for i in range(self.dim):
            inner += self.x[i] * float(self.p.direction[i])
        self.y = self._link(self.p.target_link, self.p.target_norm * inner) + self.p.noise * normal(
            key, t, self.dim
        )

    def train(self, k: int, t: int):
        from envs.links import link_derivative

        e = self.experts[k]
        j = e.steps + 1
        z = 0.0
        for i in range(self.dim):
            z += e.w[i] * self.x[i]
        prediction = self._link(e.link, z)
        loss = self._loss(prediction, self.y)
        coefficient = 2.0 * (prediction - self.y) * float(link_derivative(e.link, z))
        coefficient /= self.p.scale * self.p.scale
        eta = e.step / math.sqrt(j)
        e.history.append(list(e.w))
        squared = 0.0
        for i in range(self.dim):
            e.sums[i] += e.w[i]
            e.w[i] = e.w[i] - eta * coefficient * self.x[i]
            squared += e.w[i] * e.w[i]
        norm = math.sqrt(squared)
        if norm > e.radius:
            shrink = e.radius / norm
            e.w = [v * shrink for v in e.w]
        e.steps = j
        value = e.rate_coef * math.sqrt(j) + math.sqrt(0.5 * j * math.log(2.0 * j * j / e.delta_prime))
        return loss, min(float(j), e.rate_scale * value)

    def deploy(self, k: int, t: int, slot: int):
        e = self.experts[k]
        if e.steps == 0:
            vector, divisor = e.w, 1.0
        elif self.smoothing == "average":
            vector, divisor = e.sums, float(e.steps)
        elif self.smoothing == "uniform":
            drawn = min(int(uniform(self.deploy_key, t, slot * DEPLOY_SLOTS) * e.steps), e.steps - 1)
            vector, divisor = e.history[drawn], 1.0
        else:
            vector, divisor = e.w, 1.0
        z = along = squared = 0.0
        for i in range(self.dim):
            z += vector[i] * self.x[i]
            along += vector[i] * float(self.p.direction[i])
            squared += vector[i] * vector[i]
        across = math.sqrt(max(squared - along * along, 0.0))
        z, along, across = z / divisor, along / divisor, across / divisor
        loss = self._loss(self._link(e.link, z), self.y)
        total = 0.0
        for q in range(self.p.nodes.shape[0]):
            x1, x2, weight = (float(v) for v in self.p.nodes[q])
            residual = self._link(e.link, along * x1 + across * x2) - float(self.p.target_values[q])
            total += weight * residual * residual
        scale2 = self.p.scale * self.p.scale
        return loss, min(1.0, total / scale2 + self.p.noise * self.p.noise / scale2)


def assert_matches_engine(config, replication: int = 0, rounds: int | None = None):
    """Run ``rounds`` rounds (default: the horizon) on the compiled engine and on this twin and
    assert identical selections, deployments, deployed losses, regrets, certificate and counts;
    returns the compiled replication."""
    from mlcb import engine

    rounds = config.horizon if rounds is None else rounds
    grid = np.arange(1, rounds + 1)
    compiled = engine.run_replication(
        engine.build(config), config.seed, replication, rounds, grid, trace_rounds=rounds
    )
    slow = run(config, replication, rounds)
    width = compiled.trace_selected.shape[1]
    expected = np.array([s + [-1] * (width - len(s)) for s in slow.selected])
    np.testing.assert_array_equal(compiled.trace_selected, expected)
    np.testing.assert_array_equal(compiled.trace_deployed, slow.deployed)
    np.testing.assert_array_equal(compiled.trace_loss, slow.deployed_loss)
    np.testing.assert_array_equal(compiled.regret, slow.regret)
    np.testing.assert_array_equal(compiled.pseudo_regret, slow.pseudo_regret)
    np.testing.assert_array_equal(compiled.top_m_regret, slow.top_m_regret)
    np.testing.assert_array_equal(compiled.certificate, slow.certificate)  # nan without a certificate
    np.testing.assert_array_equal(compiled.trained[-1], slow.trained)
    np.testing.assert_array_equal(compiled.deployed[-1], slow.deployed_counts)
    return compiled
