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
        ``reset()`` without a seed plays the next one.
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
        from mlcb.config import SimulationConfig
        from mlcb.simulation import Problem

        if config is None:
            config = presets.get(preset).config(budget, calibration, **fields)
        elif fields or budget is not None or calibration is not None:
            raise ValueError("config: give either a SimulationConfig or preset fields, not both")
        if not isinstance(config, SimulationConfig):
            raise ValueError(f"config must be a SimulationConfig, got {type(config).__name__}")
        self.config = config
        self.replication = validation.integer("replication", replication, minimum=0)
        self.warm_start = validation.flag("warm_start", warm_start)
        self._problem = Problem.from_config(config)
        self.n_experts = len(self._problem.experts)
        self.budget = int(config.budget)
        self.horizon = int(config.horizon)
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

    # --- episode ------------------------------------------------------------------------------
    def _build(self, seed: int, replication: int) -> None:
        from mlcb import engine
        from mlcb.engine import python_loop

        problem, horizon = self._problem, self.horizon
        built = engine.build_common(problem, seed, replication, horizon, np.array([horizon]))
        batch = python_loop.Batch(
            env=problem.env,
            replications=[replication],
            env_params=[built.env_params],
            env_states=[built.env_state],
            expert_keys=[built.keys.experts],
            deploy_keys=np.array([built.keys.deploy], dtype=np.uint64),
            seed=seed,
            horizon=horizon,
        )
        self._pool = python_loop.build_pool(problem, batch, horizon)
        self._built = built
        self._n = np.zeros(self.n_experts, dtype=np.int64)
        self._loss_sum = np.zeros(self.n_experts)
        self._rate = np.zeros(self.n_experts)
        self._totals = [0.0, 0.0]
        self._t = 0
        if self.warm_start:
            begin_round(built.env_params, built.env_state, 0)
            everyone = np.arange(self.n_experts, dtype=np.int64)[None, :]
            self._train(0, everyone, self.n_experts)

    def _train(self, t: int, selected: np.ndarray, count: int) -> None:
        losses, rates = np.zeros((1, selected.shape[1])), np.zeros((1, selected.shape[1]))
        self._pool.train(t, selected, np.array([count], dtype=np.int64), losses, rates)
        for j in range(count):
            k, loss = int(selected[0, j]), float(losses[0, j])
            if not 0.0 <= loss <= 1.0:
                raise ValueError(f"expert {k} reported training loss {loss!r} at round {t}, outside [0, 1]")
            self._n[k] += 1
            self._loss_sum[k] += loss
            self._rate[k] = rates[0, j]

    def _observation(self) -> dict[str, np.ndarray]:
        n = self._n.astype(np.float64)
        mean = np.divide(self._loss_sum, n, out=np.zeros(self.n_experts), where=n > 0)
        rates = np.clip(np.nan_to_num(self._rate, nan=0.0), 0.0, self.horizon + 1.0)
        return {"counts": n, "mean_loss": np.clip(mean, 0.0, 1.0), "rates": rates}

    def _info(self, **extra: Any) -> dict[str, Any]:
        accounting = self._built.accounting
        return {
            "round": self._t,
            "regret": self._totals[0],
            "pseudo_regret": self._totals[1],
            "best_expert": int(accounting.best_expert),
            "optimal_loss": float(accounting.best_loss),
            **extra,
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode: replication ``replication`` of the simulation seeded ``seed``, or,
        without a seed, the next replication of the current one."""
        super().reset(seed=seed)
        if seed is not None:
            self._seed, self._episode = int(seed), self.replication
        else:
            self._episode = self.replication if self._episode is None else self._episode + 1
        self._build(self._seed, int(self._episode))
        return self._observation(), self._info()

    def _action(self, action: Any) -> tuple[np.ndarray, int, int]:
        if not isinstance(action, dict) or set(action) != {"train", "deploy"}:
            raise ValueError(f"action must be a dict with keys 'train' and 'deploy', got {action!r}")
        k = self.n_experts
        train = np.asarray(action["train"]).ravel()
        if train.size > self.budget or not np.all((train >= 0) & (train <= k) & (train == np.round(train))):
            raise ValueError(
                f"action['train'] must list at most M={self.budget} experts in [0, {k}) (or {k}: none), "
                f"got {action['train']!r}"
            )
        chosen = sorted({int(v) for v in train if v < k})
        deploy = action["deploy"]
        if isinstance(deploy, (bool, np.bool_)) or not float(np.asarray(deploy)).is_integer():
            raise ValueError(f"action['deploy'] must be an expert index in [0, {k}), got {deploy!r}")
        deploy = int(np.asarray(deploy))
        if not 0 <= deploy < k:
            raise ValueError(f"action['deploy'] must be an expert index in [0, {k}), got {deploy!r}")
        selected = np.full((1, max(1, len(chosen))), -1, dtype=np.int64)
        selected[0, : len(chosen)] = chosen
        return selected, len(chosen), deploy

    def step(self, action: Any):
        """Play one round: deploy ``action['deploy']``, then train ``action['train']``."""
        if self._episode is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.horizon:
            raise RuntimeError(f"the episode ended after horizon={self.horizon} rounds; call reset()")
        selected, count, deployed = self._action(action)
        self._t += 1
        t = self._t
        built = self._built
        begin_round(built.env_params, built.env_state, t)
        losses, expected = np.zeros((1, 1)), np.zeros((1, 1))
        one = np.ones(1, dtype=np.int64)
        self._pool.deploy(t, np.array([[deployed]], dtype=np.int64), one, losses, expected)
        loss, mean = float(losses[0, 0]), float(expected[0, 0])
        if not 0.0 <= loss <= 1.0:
            raise ValueError(f"expert {deployed} reported deployed loss {loss!r} at round {t}, not in [0, 1]")
        best = built.accounting.best_loss
        self._totals[0] += loss - best
        self._totals[1] += mean - best
        if count:
            self._train(t, selected, count)
        info = self._info(deployed_loss=loss, expected_loss=mean)
        return self._observation(), -loss, False, t >= self.horizon, info


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="mlcb.selection_env:BudgetedSelectionEnv", disable_env_checker=True)
