"""The Gymnasium ``reset`` / ``step`` shared by the feature streams (GLM and clustered).

Both streams keep the round's ``x`` and ``y`` in their compiled state and advance it with a
``begin_round(params, state, t)`` kernel; they differ only in how an action is scored. A subclass
sets :attr:`FeatureStreamEnv._begin_round` to its kernel and implements :meth:`action_loss`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym

from mlcb import validation
from mlcb.kernels import seeding
from mlcb.validation import InputError

#: The options a Gymnasium ``reset`` of the package's environments reads (:func:`reset_request`).
RESET_OPTIONS = ("replication", "horizon")


def reset_request(seed: Any, options: Any) -> tuple[int, int, int]:
    """The ``(seed, replication, horizon)`` that ``reset(seed=..., options=...)`` asks for (the
    arguments of the environment's ``build``), checked: ``options`` is ``None`` or a dict of
    ``"replication"`` (an integer >= 0, default 0) and ``"horizon"`` (an integer >= 1, default 1).
    A misspelt key or a fractional replication would otherwise replay another replication
    than the one asked for, silently."""
    if options is not None and (not isinstance(options, dict) or set(options) - set(RESET_OPTIONS)):
        raise InputError(
            "options may hold only 'replication' (the replication to replay, an integer >= 0) and "
            f"'horizon' (the run's rounds, an integer >= 1), got {validation.shown(options)}"
        )
    options = options or {}
    replication = validation.integer("options['replication']", options.get("replication", 0), minimum=0)
    horizon = validation.integer("options['horizon']", options.get("horizon", 1))
    seed, _, _ = seeding.reset_request(seed, None)
    return seed, replication, horizon


class FeatureRound:
    """A round ``xi_t = (x_t, y_t)`` of a feature stream as a Python expert sees it: ``t``, ``x``
    (the features, a copy), ``y`` (the target, a float) and ``params`` (the replication's
    parameters). Each stream's subclass adds its losses."""

    __slots__ = ("params", "t", "x", "y")

    def __init__(self, params: Any, state: Any, t: int) -> None:
        self.params = params
        self.t = int(t)
        self.x = state.x.copy()
        self.y = float(state.y[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(t={self.t}, y={self.y!r})"


class FeatureStreamEnv(gym.Env):
    """A stream whose observation is ``x_t`` and whose reward is minus the action's loss.

    ``reset(seed=..., options={"replication": r})`` builds replication ``r`` of the instance and
    shows ``x_1``; ``step(action)`` scores the action on ``y_t`` (given in ``info``), then shows
    ``x_{t+1}``. The stream never ends.
    """

    #: ``begin_round(params, state, t)``: draws round ``t``'s ``x`` and ``y`` into ``state``.
    _begin_round: ClassVar[Any]

    def action_loss(self, action: Any, y: float) -> float:
        """The loss in ``[0, 1]`` of ``action`` when the target is ``y``."""
        raise NotImplementedError

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._params, self._state = self.build(*reset_request(seed, options))
        self._round = 1
        type(self)._begin_round(self._params, self._state, 1)
        return self._state.x.copy(), {"round": 1}

    def step(self, action):
        if self._params is None:
            raise RuntimeError("call reset() before step()")
        y = float(self._state.y[0])
        validation.point("action (a prediction)", action, int(self.action_space.shape[0]))
        loss = self.action_loss(action, y)
        info = {"round": self._round, "y": y}
        self._round += 1
        type(self)._begin_round(self._params, self._state, self._round)
        return self._state.x.copy(), -loss, False, False, info
