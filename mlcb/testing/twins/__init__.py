"""Reference twins: slow, obvious pure-Python loops of the engine, every policy and the built-in
expert families, written from the definitions, which the compiled engines must match bit for bit.

:mod:`mlcb.testing.twins.core` holds the engine's loop (:func:`~mlcb.testing.twins.core.run`), the
counter-based random stream, the trap and GLM worlds, the bandit and GLM experts and M-LCB; each
other module adds the twins of one group of policies or experts and registers them
(:func:`~mlcb.testing.twins.core.register`) when it is imported, which this package does for all
of them. The test suite checks every compiled kernel against its twin; the benchmarks measure the
engine against the same loop; a policy or family of your own can be checked the same way by
registering its twin.

>>> from mlcb.testing.twins import core
>>> from mlcb import presets
>>> config = presets.get("trap").config(2, horizon=200, replications=1)
>>> compiled = core.assert_matches_engine(config)  # decisions and regret equal, bit for bit
>>> int(compiled.trained[-1].sum())  # the warm start's 10 updates and 2 a round
410
"""

from __future__ import annotations

from mlcb.testing.twins import (  # noqa: F401  (each registers its twins on import)
    balancing,
    bco,
    classifiers,
    core,
    limited_corral,
    practitioners,
    references,
    robust_hedge,
)
