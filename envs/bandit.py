"""Pools of bandit experts: each expert owns a few Bernoulli arms; ``xi_t`` fixes every arm's loss.

Expert ``k`` runs a stochastic bandit algorithm over its own ``m_k`` arms with loss means
``mu[k, a]`` (losses in {0, 1}; loss = 1 - reward). Round ``t``'s draw ``xi_t`` gives every arm
of every expert a uniform ``U_{t,k,a}`` and the arm's loss is ``1{U_{t,k,a} < mu[k, a]}``; the
uniforms come from the counter-based stream (:mod:`mlcb.kernels.random`) at ``(t, k * m_max + a)``, so
only the components a round needs are ever computed, whatever K is, and every policy sees the same
``xi_t``. An expert's decision is a distribution over its arms; ``L_k* = min_a mu[k, a]``.

:class:`TrapEnv` is the paper's "suboptimal trap" (docs/presets.md).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from envs._stream import reset_request
from mlcb import validation
from mlcb.kernels.jit import kernel, njit, nonnegative
from mlcb.kernels.random import uniform
from mlcb.kernels.seeding import instance_key, stream_keys
from mlcb.validation import InputError


class BanditEnvParams(NamedTuple):
    loss_means: np.ndarray  # (K, m_max) float64; arms past an expert's own count are padding (1.0)
    streams: np.ndarray  # (K,) int64 each expert's stream identity (its row of xi_t)
    key: np.uint64  # the env stream of this replication


class BanditEnvState(NamedTuple):
    round: np.ndarray  # (1,) int64, unused: bandit draws are lazy (no begin_round)


@njit
def _shuffle_arms(loss_means, n_arms, streams, key):
    """Shuffle each expert's arms in place (Fisher-Yates on the instance stream at counters
    (expert identity, slot)): an expert's arm order follows its identity, not its position."""
    for k in range(loss_means.shape[0]):
        for a in range(n_arms[k] - 1, 0, -1):
            b = min(int(uniform(key, streams[k], a) * (a + 1)), a)
            loss_means[k, a], loss_means[k, b] = loss_means[k, b], loss_means[k, a]


@kernel
def arm_loss(env_params, t, k, a):
    """Loss of arm ``a`` of expert ``k`` under ``xi_t``: 1.0 with probability ``mu[k, a]``."""
    k = nonnegative(k)
    a = nonnegative(a)
    slot = env_params.streams[k] * env_params.loss_means.shape[1] + a
    return 1.0 if uniform(env_params.key, t, slot) < env_params.loss_means[k, a] else 0.0


@njit
def _loss_table_kernel(env_params, t):
    """Every arm's loss under ``xi_t``, shape (K, m_max); a padded arm's mean is 1, so its loss is 1."""
    n_experts, m_max = env_params.loss_means.shape
    table = np.empty((n_experts, m_max))
    for k in range(n_experts):
        for a in range(m_max):
            table[k, a] = arm_loss(env_params, t, k, a)
    return table


class BanditRound:
    """``xi_t`` as expert ``expert`` sees it at round ``t`` (:meth:`BanditExpertsEnv.round_data`).

    ``n_arms``
        The expert's own number of arms ``m_k``.
    ``loss(arm) -> float``
        The arm's loss under ``xi_t`` (0.0 or 1.0): exactly what the compiled engine draws
        (:func:`arm_loss`), so a Python expert and a compiled one face the same stream.
    ``mean(arm) -> float``
        The arm's loss mean ``mu[k, arm]`` on this replication (its expected loss).
    """

    __slots__ = ("_key", "_means", "_row", "expert", "n_arms", "t")

    def __init__(self, params: BanditEnvParams, t: int, expert: int, n_arms: int) -> None:
        self._key = params.key
        self._means = params.loss_means
        self._row = int(params.streams[expert]) * params.loss_means.shape[1]
        self.t = int(t)
        self.expert = int(expert)
        self.n_arms = int(n_arms)

    def _arm(self, arm: Any) -> int:
        integer = isinstance(arm, (int, np.integer)) and not isinstance(arm, (bool, np.bool_))
        if not (integer and 0 <= arm < self.n_arms):
            raise InputError(f"arm must be an integer in [0, {self.n_arms}), got {arm!r}")
        return int(arm)

    def loss(self, arm: int) -> float:
        # arm_loss's own arithmetic on scalars: a cheap call from Python, the same draw.
        a = self._arm(arm)
        return 1.0 if uniform(self._key, self.t, self._row + a) < self._means[self.expert, a] else 0.0

    def mean(self, arm: int) -> float:
        return float(self._means[self.expert, self._arm(arm)])

    def __repr__(self) -> str:
        return f"BanditRound(t={self.t}, expert={self.expert}, n_arms={self.n_arms})"


class BanditExpertsEnv(gym.Env):
    """K bandit experts over Bernoulli arms, as a Gymnasium environment.

    Parameters
    ----------
    reward_means : array_like, shape (K, m)
        Reward means of each expert's arms (loss mean = 1 - reward mean); ``nan`` pads experts
        with fewer arms.
    shuffle : bool
        Shuffle each expert's arm order per replication (the trap does, so that index order
        carries no information).
    streams : array_like of int, optional
        Each expert's stream identity (distinct, >= 0; default ``0 .. K-1``). An expert's arm
        order, arm draws and internal randomness follow its identity, so reordering the rows of
        ``reward_means`` together with ``streams`` relabels the experts and changes nothing else.

    Notes
    -----
    The engine reads (:class:`mlcb.contracts.Environment`):

    ``n_experts``
        ``K``: the environment fixes the number of experts (each owns its arms).
    ``n_arms``
        ``m_k`` of every expert, shape (K,).
    ``build(seed, replication) -> (params, state)``
        One replication's arm means (arms shuffled per replication when ``shuffle``).
    ``optimal_loss(params, expert) -> float``
        ``L_k* = min_a mu[k, a]``: the loss mean of expert ``expert``'s best arm.
    ``round_data(params, state, t, expert) -> BanditRound``
        ``xi_t`` for expert ``expert``: ``n_arms``, ``loss(arm)`` (the engine's draw) and
        ``mean(arm)`` (:class:`BanditRound`).

    The Gymnasium interface plays one arm per step: the action is ``(expert, arm)`` in
    ``MultiDiscrete([K, m_max])``, the reward is minus that arm's loss under ``xi_t``, and ``info``
    holds the whole loss table of the round (``"losses"``, shape (K, m_max), what a
    full-information learner would see), the action's expected loss and the round. Arms past an
    expert's own count (padding of ``reward_means``) are arms of reward mean 0: playing one is
    allowed and always loses (loss 1.0, expected loss 1.0, ``1.0`` in ``"losses"``).
    ``reset(seed=s, options={"replication": r})`` builds the same instance and the same
    ``xi_1, xi_2, ...`` as replication ``r`` of a simulation with seed ``s``; its ``info`` holds
    ``"optimal_loss"`` (``L* = min_k L_k*``) and ``"expert_optimal_losses"`` (every ``L_k*``).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, reward_means: Any, shuffle: bool = False, streams: Any = None) -> None:
        shape = "a rectangular (K, m) array of numbers in [0, 1], rows nan-padded to one length"
        stray = validation.not_a_number(reward_means)
        if stray:
            raise InputError(f"reward_means must be {shape}, got {validation.shown(stray[0])} among them")
        try:
            means = np.asarray(reward_means, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"reward_means must be {shape}, got {reward_means!r}") from None
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 1:
            raise InputError(f"reward_means must be {shape}, got shape {means.shape}")
        finite = ~np.isnan(means)  # nan is padding; an infinite mean is a value out of range
        outside = np.argwhere(finite & ~((means >= 0) & (means <= 1)))
        if len(outside):
            k, a = outside[0]
            raise InputError(
                f"reward_means must lie in [0, 1] (Bernoulli reward probabilities), got "
                f"{float(means[k, a])!r} at expert {k}, arm {a}"
            )
        n_arms = finite.sum(axis=1)
        if np.any(n_arms < 1) or np.any(finite & (np.cumsum(~finite, axis=1) > 0)):
            raise InputError("reward_means: each expert needs >= 1 arm; nan only as trailing padding")
        ids = np.arange(means.shape[0]) if streams is None else np.asarray(streams)
        # An arm's draw is at slot identity * m + arm, an int64: a larger identity would wrap
        # around (or, as a uint64 past 2**63, turn negative) and share another arm's draws.
        largest = (2**63 - 1) // means.shape[1] - 1
        if (
            ids.shape != (means.shape[0],)
            or ids.dtype.kind not in "iu"
            or np.any(ids < 0)
            or np.any(ids > largest)
            or len(np.unique(ids)) != len(ids)
        ):
            raise InputError(
                f"streams must be {means.shape[0]} distinct integers in [0, {largest}], got {streams!r}"
            )
        self.streams = ids.astype(np.int64)
        self.reward_means = means
        self.n_arms = n_arms.astype(np.int64)
        self.shuffle = validation.flag("shuffle", shuffle)
        self.n_experts = means.shape[0]
        self.observation_space = gym.spaces.Discrete(1)
        self.action_space = gym.spaces.MultiDiscrete([self.n_experts, means.shape[1]])
        self._params: BanditEnvParams | None = None
        self._round = 0

    # --- what the engine uses -------------------------------------------------------------
    def build(self, seed: int, replication: int, horizon: int) -> tuple[BanditEnvParams, BanditEnvState]:
        """Kernel parameters and state of replication ``replication`` (its own arm order; any
        ``horizon``: the stream does not depend on it)."""
        loss_means = 1.0 - self.reward_means
        loss_means = np.where(np.isfinite(loss_means), loss_means, 1.0)
        if self.shuffle:
            _shuffle_arms(loss_means, self.n_arms, self.streams, instance_key(seed, replication))
        key = stream_keys(seed, replication, 0).env
        params = BanditEnvParams(np.ascontiguousarray(loss_means), self.streams.copy(), key)
        return params, BanditEnvState(np.zeros(1, dtype=np.int64))

    def optimal_loss(self, params: BanditEnvParams, expert: int) -> float:
        """``L_k*`` of expert ``expert``: the loss mean of its best arm on this replication."""
        k = self._expert(expert)
        return float(params.loss_means[k, : self.n_arms[k]].min())

    def round_data(self, params: BanditEnvParams, state: Any, t: int, expert: int) -> BanditRound:
        """``xi_t`` as expert ``expert`` sees it at round ``t`` (a :class:`BanditRound`)."""
        k = self._expert(expert)
        return BanditRound(params, t, k, int(self.n_arms[k]))

    def _expert(self, expert: Any) -> int:
        if (
            isinstance(expert, (bool, np.bool_))
            or not isinstance(expert, (int, np.integer))
            or not 0 <= expert < self.n_experts
        ):
            raise InputError(f"expert must be an integer in [0, {self.n_experts}), got {expert!r}")
        return int(expert)

    def optimal_losses(self, params: BanditEnvParams) -> np.ndarray:
        """Every expert's ``L_k*`` at once (:meth:`optimal_loss` of each, vectorised)."""
        real = np.arange(params.loss_means.shape[1]) < self.n_arms[:, None]
        return np.where(real, params.loss_means, np.inf).min(axis=1)

    # --- Gymnasium interface -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._params, _ = self.build(*reset_request(seed, options))
        self._round = 0
        optimal = self.optimal_losses(self._params)
        return 0, {"optimal_loss": float(optimal.min()), "expert_optimal_losses": optimal}

    def step(self, action):
        if self._params is None:
            raise RuntimeError("call reset() before step()")
        pair = isinstance(action, (tuple, list)) or (isinstance(action, np.ndarray) and action.ndim == 1)
        if not pair or len(action) != 2:
            raise InputError(f"action must be a pair (expert, arm) in {self.action_space}, got {action!r}")
        expert = validation.index("action[0] (the expert)", action[0], self.n_experts)
        arm = validation.index("action[1] (the arm)", action[1], int(self.action_space.nvec[1]))
        self._round += 1
        losses = _loss_table_kernel(self._params, self._round)
        info = {
            "round": self._round,
            "losses": losses,
            "expected_loss": float(self._params.loss_means[expert, arm]),
        }
        return 0, -float(losses[expert, arm]), False, False, info

    def expected_loss(self, expert: int, decision: Any) -> float:
        """Expected loss ``L(u)`` of expert ``expert``'s decision: one of its ``m_k`` arms (an
        index), or weights over them (``m_k`` numbers >= 0, not all 0, normalised here).

        Both are checked: a negative or fractional index would otherwise name another arm (or,
        for ``expert``, another expert) as NumPy's indexing reads it."""
        if self._params is None:
            raise RuntimeError("call reset() first")
        k = self._expert(expert)
        n_arms = int(self.n_arms[k])
        means = self._params.loss_means[k, :n_arms]
        if np.ndim(decision) == 0:
            return float(means[validation.index("decision (an arm)", decision, n_arms)])
        try:
            weights = np.asarray(decision, dtype=float)
        except (TypeError, ValueError):
            weights = np.full(0, np.nan)
        if not (weights.shape == (n_arms,) and np.all(np.isfinite(weights)) and np.all(weights >= 0)
                and weights.sum() > 0):  # fmt: skip
            raise InputError(
                f"decision must be an arm index in [0, {n_arms}) or {n_arms} weights >= 0 over expert "
                f"{k}'s arms, not all 0, got {validation.shown(decision)}"
            )
        return float(weights @ means / weights.sum())


def trap_reward_means(n_experts: int = 10, n_arms: int = 2) -> np.ndarray:
    """Reward means of the trap: expert k's arms evenly spaced from 0.2(1-k/K) to 0.1(3-k/K)."""
    n_experts = validation.integer("n_experts", n_experts)
    n_arms = validation.integer("n_arms", n_arms, minimum=2)
    k = np.arange(n_experts)[:, None] / n_experts
    return np.linspace(0.2 * (1.0 - k), 0.1 * (3.0 - k), n_arms, axis=1)[..., 0]


class TrapEnv(BanditExpertsEnv):
    """The paper's "suboptimal trap" (docs/presets.md): K experts, each a Bernoulli bandit.

    Expert ``k``'s arms have reward means evenly spaced from ``0.2 (1 - k/K)`` to
    ``0.1 (3 - k/K)`` (the authors' code; the paper's printed formula gives expert 0 two equal
    arms), shuffled per replication. The best expert is 0 (best arm loss 0.7); the others have
    wider internal gaps, so they learn faster and look good early: the trap.
    """

    def __init__(self, n_experts: int = 10, n_arms: int = 2, shuffle: bool = True) -> None:
        super().__init__(trap_reward_means(n_experts, n_arms), shuffle=shuffle)
