"""Exceptions with messages that name the parameter and what is allowed."""

from __future__ import annotations


class ExpertLossError(ValueError):
    """An expert produced a loss that is NaN or outside [0, 1] (M-LCB's Assumption 1)."""

    def __init__(self, what: str, round_: int, expert: int, value: float) -> None:
        self.round = round_
        self.expert = expert
        self.value = value
        super().__init__(
            f"{what} loss of expert {expert} at round {round_} is {value!r}; losses must be numbers in [0, 1]"
        )
