"""river and scikit-learn models as Python experts: moved to :mod:`mlcb.river.experts`, so that
river lives in one room (the adapters, the selectors and their comparison).

This path keeps importing, with or without river installed (building an adapter without its
package raises one ``ImportError`` line saying what to install).

>>> import agents.river_experts, mlcb.river.experts
>>> agents.river_experts.RiverExpert is mlcb.river.experts.RiverExpert
True
"""

from __future__ import annotations

from mlcb.river.experts import (
    LOG_LOSS_FLOOR,
    RiverExpert,
    SklearnExpert,
    log_loss,
    river_pool,
    squared_loss,
)

__all__ = ["LOG_LOSS_FLOOR", "RiverExpert", "SklearnExpert", "log_loss", "river_pool", "squared_loss"]
