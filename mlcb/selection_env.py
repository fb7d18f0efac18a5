"""The budgeted selection problem itself as a Gymnasium environment: ``mlcb/BudgetedSelection-v0``.

An agent plays the meta-policy: each step it names a training set of at most ``M`` experts and
one deployed expert; the deployed expert's smoothed decision suffers the round's loss (the reward
is minus that loss), then every expert of the training set suffers its own loss and learns. The
observation is what a meta-policy may see: every expert's training count, mean training loss
and rate ``U_k(n_k, delta / 2K)``. Any environment and expert pool of the package can sit inside
(a preset, or any :class:`~mlcb.config.SimulationConfig`): the environment runs the same kernels
as the engines, in the same order, so for the same seed and the same decisions it reproduces
the engine's losses and regret exactly.

>>> import gymnasium as gym
>>> import mlcb.selection_env
>>> env = gym.make("mlcb/BudgetedSelection-v0", preset="trap", budget=2, horizon=100)
>>> observation, info = env.reset(seed=0)
>>> sorted(observation)
['counts', 'mean_loss', 'rates']
>>> observation, reward, terminated, truncated, info = env.step({"train": [0, 1], "deploy": 0})
>>> -1.0 <= reward <= 0.0
True
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mlcb.kernels import begin_round
from mlcb.validation import InputError

ENV_ID = "mlcb/BudgetedSelection-v0"


class BudgetedSelectionEnv(gym.Env):
    """Budgeted expert selection as a Gymnasium environment.

    Parameters
    ----------
    config : SimulationConfig, optional
        The setting to wrap: its environment, experts, budget ``M``, horizon ``T``, ``delta``,
        smoothing and seed (its policy plays no part: the agent decides).
    preset : str
        Used when ``config`` is not given: a preset name (``"trap"``, ``"glm"``) whose
        :meth:`~mlcb.presets.Preset.config` is built with ``budget``, ``calibration`` and
        ``**fields``.
    budget, calibration, **fields
        Passed to the preset (``horizon``, ``seed``, ``env_params``, ``experts``, ...).
    replication : int
        The replication of the simulation that ``reset(seed=...)`` plays (default 0); a
        ``reset()`` without a seed plays the next one, and ``reset(options={"replication": r})``
        replication ``r``.
    warm_start : bool
        Train every expert once before the first step, as M-LCB's warm start (default True).

    Spaces
    ------
    action : ``Dict(train=MultiDiscrete([K + 1] * M), deploy=Discrete(K))``
        ``train`` lists up to ``M`` experts to train (the value ``K`` means "none"; repeats count
        once; they are trained in increasing index order), ``deploy`` the deployed expert, which
        need not be trained this round. Lists shorter than ``M`` are accepted by ``step``.
    observation : ``Dict(counts, mean_loss, rates)``
        ``(K,)`` float64 arrays: ``n_k``, the mean training loss ``L_k`` (0 while ``n_k = 0``)
        and the rate ``U_k(n_k, delta / 2K)`` reported by expert ``k``'s last update (at most
        ``n_k``, so both lie in ``[0, T + 1]``).
    reward
        Minus the deployed loss, in ``[-1, 0]``.
    info
        ``round``, ``regret`` and ``pseudo_regret`` (cumulative, as the engine records them),
        ``deployed_loss``, ``expected_loss``, ``best_expert`` (``k*``) and ``optimal_loss``
        (``L*``; the simulator's knowledge: an agent that reads it cheats).

    The episode is truncated after ``T`` steps (``horizon``); it never terminates.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        config: Any = None,
        preset: str = "trap",
        budget: int | None = None,
        calibration: str | None = None,
        replication: int = 0,
        warm_start: bool = True,
        **fields: Any,
    ) -> None:
        from mlcb import presets, validation
        from mlcb.config import SimulationConfig, check_field_names
        from mlcb.engine.problem import build

        own = "config, preset, budget, calibration, replication, warm_start and "
        check_field_names(fields, type(self).__name__, own)
        if config is None:
            config = presets.get(preset).config(budget, calibration, **fields)
        elif fields or budget is not None or calibration is not None:
            raise InputError("config: give either a SimulationConfig or preset fields, not both")
        if not isinstance(config, SimulationConfig):
            raise InputError(f"config must be a SimulationConfig, got {type(config).__name__}")
        self.replication = validation.integer("replication", replication, minimum=0)
        self.warm_start = validation.flag("warm_start", warm_start)
        self._problem = build(config)
        k = self.n_experts
        self.action_space = spaces.Dict(
            {"train": spaces.MultiDiscrete([k + 1] * self.budget), "deploy": spaces.Discrete(k)}
        )
        self.observation_space = spaces.Dict(
            {
                "counts": spaces.Box(0.0, self.horizon + 1.0, (k,), np.float64),
                "mean_loss": spaces.Box(0.0, 1.0, (k,), np.float64),
                "rates": spaces.Box(0.0, self.horizon + 1.0, (k,), np.float64),
            }
        )
        self._seed = int(config.seed)
        self._episode: int | None = None
        self._t = 0

    # --- the setting (its one description, read) ---------------------------------------------
    @property
    def config(self) -> Any:
        """The setting wrapped (:class:`~mlcb.config.SimulationConfig`)."""
        return self._problem.config

    @property
    def n_experts(self) -> int:
        """``K``."""
        return self._problem.n_experts

    @property
    def budget(self) -> int:
        """``M``, the most experts trained in a step."""
        return self._problem.budget

    @property
    def horizon(self) -> int:
        """``T``, the steps of an episode."""
        return self._problem.horizon

    # --- episode ------------------------------------------------------------------------------
    def _build(self, seed: int, replication: int) -> None:
        from mlcb.engine import python_loop
        from mlcb.engine.session import AGENT, Session

        session = Session.for_problem(self._problem, replication, seed=seed, policy=AGENT)
        env_params, env_state = session.environment
        self._pool = session.pool()
        self._session = session
        self._t = 0
        if self.warm_start:  # the engine's warm start: every expert once on round 0's data
            begin_round(env_params, env_state, 0)
            everyone = np.array([session.identity_order], dtype=np.int64)
            losses, rates, updates = python_loop.warm_start_pool(self._pool, everyone)
            by_pool = np.empty((3, self.n_experts))
            by_pool[:, everyone[0]] = losses[0], rates[0], updates[0]
            session.warm_start(by_pool[0], by_pool[1], by_pool[2].astype(np.int64).tolist())
        else:
            session.skip_warm_start()

    def _observation(self) -> dict[str, np.ndarray]:
        session = self._session
        n = session.counts.astype(np.float64)
        mean = np.nan_to_num(session.mean_losses, nan=0.0)
        rates = np.clip(np.nan_to_num(session.rates, nan=0.0), 0.0, self.horizon + 1.0)
        return {"counts": n, "mean_loss": np.clip(mean, 0.0, 1.0), "rates": rates}

    def _info(self, **extra: Any) -> dict[str, Any]:
        session = self._session
        return {
            "round": self._t,
            "regret": session.regret,
            "pseudo_regret": session.pseudo_regret,
            "best_expert": session.best_expert,
            "optimal_loss": session.optimal_loss,
            **extra,
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: replication ``replication`` of the simulation seeded ``seed``, or,
        without a seed, the next replication of the current one; ``options={"replication": r}``
        plays replication ``r`` instead (as the package's environments read it). Any other option
        is refused by name: it would be ignored."""
        from mlcb import validation

        options = {} if options is None else options
        if not isinstance(options, dict) or set(options) - {"replication"}:
            raise InputError(
                f"options may hold only 'replication' (the replication to play, an integer >= 0), got "
                f"{validation.shown(options)}"
            )
        asked = options.get("replication")
        if asked is not None:
            asked = validation.integer("options['replication']", asked, minimum=0)
        super().reset(seed=seed)
        if seed is not None:
            self._seed, self._episode = int(seed), self.replication
        else:
            self._episode = self.replication if self._episode is None else self._episode + 1
        if asked is not None:
            self._episode = asked
        self._build(self._seed, int(self._episode))
        return self._observation(), self._info()

    def _action(self, action: Any) -> tuple[list[int], int]:
        """The training set (distinct experts, increasing) and the deployed expert of ``action``,
        checked against the action space (:func:`mlcb.validation.indices`, ``index``): an
        :class:`~mlcb.validation.InputError` naming the action otherwise. The value ``K`` in
        ``train`` means "none" and a repeat counts once, as the space allows both."""
        from mlcb import validation

        k = self.n_experts
        if not isinstance(action, dict) or set(action) != {"train", "deploy"}:
            raise InputError(
                f"action must be a dict with keys 'train' and 'deploy', got {validation.shown(action)}"
            )
        try:  # the shared checks (mlcb.validation), worded in the action space's terms
            train = validation.indices("train", action["train"], k + 1, most=self.budget)
        except InputError:
            raise InputError(
                f"action['train'] must list at most M={self.budget} expert indices, integers in [0, {k}) "
                f"(or {k}: none), got {validation.shown(action['train'])}"
            ) from None
        try:
            deploy = validation.index("deploy", action["deploy"], k)
        except InputError:
            raise InputError(
                f"action['deploy'] must be an expert index, an integer in [0, {k}), got "
                f"{validation.shown(action['deploy'])}"
            ) from None
        return sorted({v for v in train if v < k}), deploy

    def step(self, action: Any):
        """Play one round: deploy ``action['deploy']``, then train ``action['train']``."""
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.horizon:
            raise RuntimeError(f"the episode ended after horizon={self.horizon} rounds; call reset()")
        chosen, deployed = self._action(action)
        t = self._t + 1
        session = self._session
        session.choose(t, chosen, deployed)
        self._t = t
        env_params, env_state = session.environment
        begin_round(env_params, env_state, t)
        losses, expected = np.zeros((1, 1)), np.zeros((1, 1))
        one = np.ones(1, dtype=np.int64)
        self._pool.deploy(t, np.array([[deployed]], dtype=np.int64), one, losses, expected)
        session.deployed(losses[0, 0], expected[0, 0])
        if chosen:
            width = len(chosen)
            train_losses, rates = np.zeros((1, width)), np.zeros((1, width))
            selected = np.array([chosen], dtype=np.int64)
            self._pool.train(t, selected, np.array([width], dtype=np.int64), train_losses, rates)
            for j, k in enumerate(chosen):
                session.trained(k, train_losses[0, j], rates[0, j])
        session.end()
        info = self._info(deployed_loss=float(losses[0, 0]), expected_loss=float(expected[0, 0]))
        return self._observation(), -float(losses[0, 0]), False, t >= self.horizon, info


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="mlcb.selection_env:BudgetedSelectionEnv", disable_env_checker=True)
