"""The minimax lower bound's hard instances as an environment (docs/theory.md §5, "The hard
instances of the lower bound").

K experts, each a two-armed Bernoulli bandit, in one of K + 1 *games* that depend on the budget
M and the horizon T through two gaps, the cross-expert separation ``eps`` and the internal gap
``Delta``:

* the **null game**: every expert's arms have loss means ``1/2 + eps/2`` and
  ``1/2 + eps/2 + Delta``;
* **game h** (``0 <= h < K``): expert ``h``'s arms have loss means ``1/2 - eps/2`` and
  ``1/2 - eps/2 - Delta``, every other expert's those of the null game. Expert ``h`` is then the
  only best expert, by ``eps + Delta``.

The gaps follow the paper's proof: ``eps = Delta = gamma sqrt(K / (M T))`` when
``alpha <= 1/2``; ``eps = gamma / sqrt(T)`` and ``Delta = c0 (K / (M T))^(1 - alpha)`` when
``alpha > 1/2``. Every policy that learns from at most M experts' training losses per round
(and the warm start's one loss per expert) has, averaged over a uniformly drawn game h, expected
regret at least

``(eps + Delta) T [1 - 1/K - sqrt(kappa (M T + K) / (2 K))]``,

where ``kappa`` is the largest Kullback-Leibler divergence between an arm's loss law in the
null game and in game h (:func:`regret_lower_bound`). :func:`paper_constants` turns it into the
paper's form ``c1 sqrt(K T / M) + c2 T^alpha (K / M)^(1 - alpha)`` with explicit constants.

The losses are Bernoulli, in [0, 1], so ``L_k*`` and ``L*`` are exact and so is the
pseudo-regret. Each expert's two arms are shuffled per replication (the proof averages over which
arm is the better one), and with ``game="random"`` each replication plays a game ``h`` drawn
uniformly from its seed (the proof averages over h; every budget meets the same h).

Examples
--------
>>> import envs
>>> env = envs.make("mlcb/LowerBound-v0", n_experts=4, budget=1, horizon=10_000, alpha=0.5, game=2)
>>> [round(float(x), 4) for x in (env.epsilon, env.gap)]
[0.0025, 0.0025]
>>> env.loss_means(2)[2].round(6).tolist(), env.loss_means(None)[0].round(6).tolist()
([0.49875, 0.49625], [0.50125, 0.50375])
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from envs._stream import reset_request
from envs.bandit import BanditEnvParams, BanditEnvState, BanditExpertsEnv, _shuffle_arms
from mlcb import validation
from mlcb.kernels.seeding import check_seed, instance_key, instance_rng, stream_keys
from mlcb.validation import InputError

__all__ = [
    "DEFAULT_C0",
    "Construction",
    "LowerBoundEnv",
    "construction",
    "default_gamma",
    "divergence",
    "game_loss_means",
    "paper_constants",
    "regret_lower_bound",
]

#: The internal gap's constant for ``alpha > 1/2`` (docs/theory.md §5 says why).
DEFAULT_C0 = 0.02
#: Sub-stream of a replication's instance generator that draws the random game.
_GAME_PART = 0x4C42
_GAMES = ("null", "random")


class Construction(NamedTuple):
    """The gaps of one hard instance: ``epsilon`` separates the best expert from the others,
    ``gap`` (``Delta``) separates each expert's two arms; ``gamma`` and ``c0`` are the constants
    they were computed with."""

    epsilon: float
    gap: float
    gamma: float
    c0: float


def default_gamma(n_experts: int) -> float:
    """``gamma = (1 - 1/K) / 6``, the constant that maximises the lower bound's ``sqrt(K T / M)``
    term for large ``T`` (docs/theory.md §5).

    Examples
    --------
    >>> default_gamma(10)
    0.15
    """
    k = validation.integer("n_experts", n_experts, minimum=2)
    return (1.0 - 1.0 / k) / 6.0


def _alpha(alpha: Any) -> float:
    if not (validation.is_real(alpha) and 0 <= alpha < 1):
        raise InputError(f"alpha must be a number in [0, 1), got {alpha!r}")
    return float(alpha)


def _budget(budget: Any, n_experts: int) -> int:
    return validation.budget(budget, n_experts)


def _horizons(horizon: npt.ArrayLike) -> np.ndarray:
    t = np.asarray(horizon)
    if t.dtype == bool or not np.issubdtype(t.dtype, np.number) or np.iscomplexobj(t):
        raise InputError(f"horizon must hold finite numbers >= 1, got {horizon!r}")
    t = t.astype(np.float64)
    if t.size == 0 or not np.all(np.isfinite(t) & (t >= 1)):
        raise InputError(f"horizon must hold finite numbers >= 1, got {horizon!r}")
    return t


def _constants(n_experts: Any, gamma: Any, c0: Any) -> tuple[int, float, float]:
    k = validation.integer("n_experts", n_experts, minimum=2)
    g = default_gamma(k) if gamma is None else validation.positive("gamma", gamma)
    return k, g, validation.positive("c0", c0)


def _gaps(k: int, m: int, t: Any, alpha: float, gamma: float, c0: float) -> tuple[Any, Any]:
    """``(eps, Delta)`` at horizons ``t`` (the paper's two regimes)."""
    if alpha <= 0.5:
        eps = gamma * np.sqrt(k / (m * t))
        return eps, eps
    return gamma / np.sqrt(t), c0 * (k / (m * t)) ** (1.0 - alpha)


def _check_means(eps: Any, gap: Any) -> None:
    reach = eps / 2.0 + gap
    if np.any(reach >= 0.5):
        worst = float(np.max(reach))
        raise InputError(
            "the loss means 1/2 - eps/2 - Delta .. 1/2 + eps/2 + Delta must lie in (0, 1), but "
            f"eps/2 + Delta = {worst:.4g} >= 1/2: lower gamma or c0, or raise the horizon"
        )


def construction(
    n_experts: int,
    budget: int,
    horizon: int,
    alpha: float,
    gamma: float | None = None,
    c0: float = DEFAULT_C0,
) -> Construction:
    """The gaps ``(eps, Delta)`` of the hard instance for ``K``, ``M``, ``T`` and ``alpha``.

    ``alpha <= 1/2``: ``eps = Delta = gamma sqrt(K / (M T))`` (``c0`` unused);
    ``alpha > 1/2``: ``eps = gamma / sqrt(T)``, ``Delta = c0 (K / (M T))^(1 - alpha)``.

    Parameters
    ----------
    n_experts : int
        ``K >= 2``.
    budget : int
        ``M`` in ``[1, K]``.
    horizon : int
        ``T >= 1``.
    alpha : float
        The hardness exponent, in ``[0, 1)``.
    gamma : float, optional
        ``> 0``; default :func:`default_gamma`.
    c0 : float
        ``> 0``; default :data:`DEFAULT_C0`.

    Returns
    -------
    Construction
        A ``ValueError`` instead when a loss mean would leave ``(0, 1)`` (``eps/2 + Delta >= 1/2``).

    Examples
    --------
    >>> construction(10, 1, 1000, alpha=2 / 3, gamma=0.1, c0=0.02)
    Construction(epsilon=0.0031622776601683794, gap=0.004308869380063767, gamma=0.1, c0=0.02)
    """
    k, g, c = _constants(n_experts, gamma, c0)
    m = _budget(budget, k)
    t = validation.integer("horizon", horizon)
    eps, gap = _gaps(k, m, np.float64(t), _alpha(alpha), g, c)
    _check_means(eps, gap)
    return Construction(float(eps), float(gap), g, c)


def game_loss_means(n_experts: int, epsilon: float, gap: float, game: int | None) -> np.ndarray:
    """Loss means, shape (K, 2), of the null game (``game=None``) or of game ``h = game``.

    Examples
    --------
    >>> game_loss_means(3, 0.1, 0.05, 1).round(6).tolist()
    [[0.55, 0.6], [0.45, 0.4], [0.55, 0.6]]
    """
    k = validation.integer("n_experts", n_experts, minimum=2)
    eps = validation.non_negative("epsilon", epsilon)
    delta = validation.non_negative("gap", gap)
    _check_means(np.float64(eps), np.float64(delta))
    means = np.tile([0.5 + eps / 2.0, 0.5 + eps / 2.0 + delta], (k, 1))
    if game is not None:
        h = _game_index(game, k)
        means[h] = [0.5 - eps / 2.0, 0.5 - eps / 2.0 - delta]
    return means


def _game_index(game: Any, n_experts: int) -> int:
    if (
        isinstance(game, (bool, np.bool_))
        or not isinstance(game, (int, np.integer))
        or not 0 <= game < n_experts
    ):
        raise InputError(
            f"game must be 'null', 'random' or an expert index in [0, {n_experts - 1}], got {game!r}"
        )
    return int(game)


def divergence(epsilon: npt.ArrayLike, gap: npt.ArrayLike) -> np.ndarray | float:
    """``kappa``: the largest Kullback-Leibler divergence, over the two arms, from an arm's loss
    law in the null game to its law in game h.

    The arms' means are ``1/2 + x`` (null) and ``1/2 - x`` (game h) with ``x = eps/2`` and
    ``x = eps/2 + Delta``; ``KL(Ber(1/2 + x) || Ber(1/2 - x)) = 2x log((1 + 2x) / (1 - 2x))``
    grows with ``x``, so with ``d = eps + 2 Delta``

    ``kappa = d log((1 + d) / (1 - d)) <= 2 d^2 / (1 - d^2)``.

    Examples
    --------
    >>> round(float(divergence(0.1, 0.05)), 6)
    0.081093
    """
    d = np.asarray(epsilon, dtype=np.float64) + 2.0 * np.asarray(gap, dtype=np.float64)
    if np.any(~np.isfinite(d) | (d < 0) | (d >= 1)):
        raise InputError(f"eps + 2 Delta must lie in [0, 1), got {d!r}")
    value = d * np.log1p(2.0 * d / (1.0 - d))
    return float(value) if value.ndim == 0 else value


def regret_lower_bound(
    horizon: npt.ArrayLike,
    n_experts: int,
    budget: int,
    alpha: float,
    gamma: float | None = None,
    c0: float = DEFAULT_C0,
) -> np.ndarray | float:
    r"""A lower bound on the expected regret of *any* policy on the hard instance of horizon T.

    .. math::

        \frac1K \sum_h \mathbb E_h \mathrm{Reg}(T) \ge (\varepsilon + \Delta)\, T\,
        \Bigl[1 - \frac1K - \sqrt{\frac{\kappa\,(M T + K)}{2K}}\Bigr]_+,

    each ``T`` with its own gaps (:func:`construction`) and ``kappa`` (:func:`divergence`). It holds
    for every policy whose choices depend only on the training losses of at most ``M`` experts
    per round, plus one warm-start loss per expert, and on randomness of its own, whatever the
    experts' algorithms; the left side is the regret averaged over the K games, which is what a
    uniformly drawn game (``game="random"``) gives, and it is at most the worst game's. Proof in
    docs/theory.md §5 (Pinsker's inequality and the chain rule of the divergence, as in Seldin et
    al. 2014 and the paper's Theorem "Minimax lower bound").

    Parameters
    ----------
    horizon : int or array_like
        Horizons ``T >= 1``; each is its own instance.
    n_experts, budget, alpha, gamma, c0
        As in :func:`construction`.

    Returns
    -------
    float or ndarray
        The bound at each horizon (0 where the bracket is negative).

    Examples
    --------
    >>> round(float(regret_lower_bound(100_000, 10, 1, alpha=0.5)), 2)
    134.99
    """
    k, g, c = _constants(n_experts, gamma, c0)
    m = _budget(budget, k)
    t = _horizons(horizon)
    eps, gap = _gaps(k, m, t, _alpha(alpha), g, c)
    _check_means(eps, gap)
    kappa = divergence(eps, gap)
    bracket = 1.0 - 1.0 / k - np.sqrt(kappa * (m * t + k) / (2.0 * k))
    value = (eps + gap) * t * np.maximum(bracket, 0.0)
    return float(value) if value.ndim == 0 else value


def paper_constants(
    n_experts: int,
    budget: int,
    alpha: float,
    horizons: npt.ArrayLike,
    gamma: float | None = None,
    c0: float = DEFAULT_C0,
) -> tuple[float, float]:
    r"""Constants ``(c1, c2)`` of the paper's form of the lower bound, at every horizon given.

    .. math::

        c_1 \sqrt{K T / M} + c_2\, T^\alpha (K / M)^{1-\alpha}
        \le \text{regret\_lower\_bound}(T)

    at each ``T`` of ``horizons`` (all ``>= K / M``). With ``b`` the smallest bracket
    ``1 - 1/K - sqrt(kappa (M T + K) / (2K))`` over them: ``c1 = c2 = gamma b`` when
    ``alpha <= 1/2`` (``2 eps T = 2 gamma sqrt(K T / M)``, and ``T^alpha (K/M)^(1-alpha) <=
    sqrt(K T / M)``); ``c1 = gamma sqrt(M / K) b`` and ``c2 = c0 b`` when ``alpha > 1/2``
    (``eps T = gamma sqrt(T)``, ``Delta T = c0 T^alpha (K/M)^(1-alpha)``). Zero when some bracket
    is not positive: the bound then says nothing at that horizon (docs/theory.md §5).

    Examples
    --------
    >>> c1, c2 = paper_constants(10, 1, 0.5, [1_000, 100_000])
    >>> round(c1, 4), round(c2, 4)
    (0.0671, 0.0671)
    """
    k, g, c = _constants(n_experts, gamma, c0)
    m = _budget(budget, k)
    a = _alpha(alpha)
    t = _horizons(horizons).ravel()
    if np.any(t < k / m):
        raise InputError(f"horizons must be >= K / M = {k / m:g}, got {float(t.min())!r}")
    eps, gap = _gaps(k, m, t, a, g, c)
    _check_means(eps, gap)
    bracket = 1.0 - 1.0 / k - np.sqrt(divergence(eps, gap) * (m * t + k) / (2.0 * k))
    b = max(float(np.min(bracket)), 0.0)
    if a <= 0.5:
        return g * b, g * b
    return g * math.sqrt(m / k) * b, c * b


class LowerBoundEnv(BanditExpertsEnv):
    """The lower bound's hard instances: K two-armed Bernoulli experts in the null game or a game h.

    Parameters
    ----------
    n_experts : int
        ``K >= 2``.
    budget : int
        ``M`` in ``[1, K]``: the instance is built for this budget.
    horizon : int
        ``T >= 1``: the instance is built for this horizon (the gaps shrink with it).
    alpha : float
        The hardness exponent in ``[0, 1)``; it sets the regime of the gaps.
    gamma : float, optional
        ``> 0``: the separation's constant; default :func:`default_gamma`.
    c0 : float
        ``> 0``: the internal gap's constant when ``alpha > 1/2``.
    game : "random", "null" or int
        ``"random"`` (default): each replication plays game ``h`` drawn uniformly from
        ``(seed, replication)``; ``"null"``: the null game; an index ``h``: game ``h`` always.
    shuffle : bool
        Shuffle each expert's two arms per replication (default, as in the proof).

    Notes
    -----
    Beyond :class:`envs.bandit.BanditExpertsEnv`'s interface: ``epsilon`` and ``gap`` (the gaps),
    ``loss_means(game)``, ``game_of(seed, replication)`` (the game a replication plays: an index or
    ``None`` for the null game), :meth:`regret_lower_bound`, and ``"game"`` in ``reset``'s info
    (``-1`` for the null game). The gaps are tiny by design: no policy can tell the games apart
    well within ``T`` rounds.
    """

    def __init__(
        self,
        n_experts: int = 10,
        budget: int = 1,
        horizon: int = 100_000,
        alpha: float = 2.0 / 3.0,
        gamma: float | None = None,
        c0: float = DEFAULT_C0,
        game: Any = "random",
        shuffle: bool = True,
    ) -> None:
        built = construction(n_experts, budget, horizon, alpha, gamma, c0)
        k = int(n_experts)
        if not (isinstance(game, str) and game in _GAMES):
            _game_index(game, k)
        self.budget = int(budget)
        self.horizon = int(horizon)
        self.alpha = float(alpha)
        self.gamma = built.gamma
        self.c0 = built.c0
        self.epsilon = built.epsilon
        self.gap = built.gap
        self.game = game
        null = game_loss_means(k, self.epsilon, self.gap, None)
        super().__init__(1.0 - null, shuffle=validation.flag("shuffle", shuffle))

    def loss_means(self, game: int | None) -> np.ndarray:
        """Loss means, shape (K, 2), of game ``game`` (``None``: the null game), arms unshuffled."""
        return game_loss_means(self.n_experts, self.epsilon, self.gap, game)

    def game_of(self, seed: int, replication: int) -> int | None:
        """The game replication ``replication`` of a simulation with seed ``seed`` plays."""
        if self.game == "null":
            return None
        if self.game == "random":
            rng = instance_rng(check_seed(seed), replication, _GAME_PART)
            return int(rng.integers(self.n_experts))
        return int(self.game)

    def build(self, seed: int, replication: int, horizon: int) -> tuple[BanditEnvParams, BanditEnvState]:
        """Kernel parameters and state of replication ``replication``: its game's means, each
        expert's arms in its own order. The instance is built for its own ``horizon`` parameter
        (the gaps of the proof); the run's ``horizon`` does not change the stream."""
        loss_means = self.loss_means(self.game_of(seed, replication))
        if self.shuffle:
            _shuffle_arms(loss_means, self.n_arms, self.streams, instance_key(seed, replication))
        key = stream_keys(seed, replication, 0).env
        params = BanditEnvParams(np.ascontiguousarray(loss_means), self.streams.copy(), key)
        return params, BanditEnvState(np.zeros(1, dtype=np.int64))

    def regret_lower_bound(self) -> float:
        """:func:`regret_lower_bound` of this instance (its K, M, T, alpha, gamma, c0)."""
        return float(
            regret_lower_bound(self.horizon, self.n_experts, self.budget, self.alpha, self.gamma, self.c0)
        )

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observation, info = super().reset(seed=seed, options=options)
        game = self.game_of(*reset_request(seed, options)[:2])
        info["game"] = -1 if game is None else game
        return observation, info
