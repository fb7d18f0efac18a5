"""Counter-based random numbers for compiled kernels: the draws a compiled family uses.

Every random number of a simulation is a pure function of ``(key, a, b)``: a 64-bit stream
``key`` and two 64-bit counters ``a`` and ``b``. Nothing is stored between draws, so a kernel needs
no generator state, results do not depend on threads or on the order in which replications and
experts are processed, and every policy of a comparison meets the same random numbers (common
random numbers). The functions are compiled kernels (callable from Python too) that allocate
nothing, so they are allowed in the round loop.

Keys
    A family receives one key per expert in ``build_pool(..., keys, ...)`` (``keys[k]``, uint64,
    derived from the seed, the replication and the expert's identity), and the deploy stream's
    key as the ``key`` argument of ``deploy``. Store the expert keys in the pool's parameters.
Counters
    ``a`` is usually a round: the round ``t`` in ``deploy``, or the expert's own update count
    ``j`` in ``train`` (so that an expert's training draws do not depend on which rounds it was
    selected in). ``b`` is a *slot* within that round: distinct draws of one round must use
    distinct slots, and a draw may use several consecutive slots (below).
Deploy slots
    ``deploy(..., t, key, slot)`` draws at counters ``(t, slot * DEPLOY_SLOTS + j)`` with
    ``0 <= j < DEPLOY_SLOTS`` (:data:`DEPLOY_SLOTS`): the experts deployed in one round (several
    under Top-M) then never share a number.

Slots each draw uses, from its base slot ``b``:

* :func:`uniform` ``(key, a, b)``: slot ``b``; a uniform on ``[0, 1)`` with 53 random bits.
* :func:`random_bits` ``(key, a, b)``: slot ``b``; the raw 64 bits (``uint64``).
* :func:`normal` ``(key, a, b)``: the *uniform* slots ``2b`` and ``2b + 1`` (Box-Muller); space
  ``normal`` and ``uniform`` slots of one round apart (e.g. normals at ``b < 100``, uniforms from
  slot ``200``).
* :func:`standard_gamma` ``(key, a, b, shape)``: slots ``b .. b + GAMMA_SLOTS - 1``.
* :func:`beta` ``(key, a, b, alpha, beta_)``: slots ``b .. b + BETA_SLOTS - 1``.

:func:`draw` ``(weights, total, u)`` turns one uniform into an index drawn with probabilities
proportional to ``weights`` (inverse CDF).

Examples
--------
A uniform and a Bernoulli(0.3) draw, from Python (the same numbers as in compiled code):

>>> import numpy as np
>>> from mlcb.random import uniform
>>> key = np.uint64(12345)
>>> u = uniform(key, 7, 0)
>>> 0.0 <= u < 1.0
True
>>> u == uniform(key, 7, 0)  # a pure function of (key, a, b)
True
>>> loss = 1.0 if uniform(key, 7, 1) < 0.3 else 0.0
"""

from __future__ import annotations

from mlcb._random import (
    BETA_SLOTS,
    GAMMA_ATTEMPTS,
    GAMMA_SLOTS,
    beta,
    draw,
    normal,
    random_bits,
    standard_gamma,
    uniform,
)
from mlcb.kernels import DEPLOY_SLOTS

__all__ = [
    "BETA_SLOTS",
    "DEPLOY_SLOTS",
    "GAMMA_ATTEMPTS",
    "GAMMA_SLOTS",
    "beta",
    "draw",
    "normal",
    "random_bits",
    "standard_gamma",
    "uniform",
]
