"""river and scikit-learn models as Python experts: moved to :mod:`mlcb.river.experts`, so that
river lives in one room (the adapters, the selectors and their comparison).

This old path keeps working, with or without river installed (building an adapter without its
package raises one ``ImportError`` line saying what to install): its names resolve to
:mod:`mlcb.river.experts` on first use (``agents`` sits below ``mlcb.river``, so it does not
import it up front).

>>> import agents.river_experts, mlcb.river.experts
>>> agents.river_experts.RiverExpert is mlcb.river.experts.RiverExpert
True
"""

from __future__ import annotations

import importlib
from typing import Any

#: The names that resolve to :mod:`mlcb.river.experts`.
MOVED = ("LOG_LOSS_FLOOR", "RiverExpert", "SklearnExpert", "log_loss", "river_pool", "squared_loss")


def __getattr__(name: str) -> Any:
    if name in MOVED:
        return getattr(importlib.import_module("mlcb.river.experts"), name)
    raise AttributeError(f"module 'agents.river_experts' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(MOVED))
