"""Counter-based random numbers for compiled kernels: the draws a compiled family uses.

Every random number of a simulation is a pure function of ``(key, a, b)``: a 64-bit stream
``key`` (one per replication and purpose, see :mod:`mlcb.kernels.seeding`) and two 64-bit counters ``a``
and ``b``, usually the round ``t`` (or an expert's own update count) and a slot within that round.
Two SplitMix64 finalisers turn the triple into 64 random bits::

    bits(key, a, b) = mix(mix(key + a * G1) + b * G2)

Nothing is stored between draws, so a kernel needs no generator state, results do not depend on
threads or on the order in which replications and experts are processed, and every policy of a
comparison meets the same random numbers (common random numbers) while computing only the
components it needs; a pure-Python twin (:mod:`mlcb.testing.twins.core`) reproduces the generator bit for bit.
The functions are compiled kernels (callable from Python too) that allocate nothing, so they are
allowed in the round loop. All arithmetic is on ``uint64`` and wraps modulo 2**64; mixing in a
signed integer would make Numba promote to float, hence the explicit casts.

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
>>> from mlcb.kernels.random import uniform
>>> key = np.uint64(12345)
>>> u = uniform(key, 7, 0)
>>> 0.0 <= u < 1.0
True
>>> u == uniform(key, 7, 0)  # a pure function of (key, a, b)
True
>>> loss = 1.0 if uniform(key, 7, 1) < 0.3 else 0.0
"""

from __future__ import annotations

import math

import numpy as np

from mlcb.kernels import DEPLOY_SLOTS
from mlcb.kernels.jit import cold_kernel, kernel

GOLDEN_1 = np.uint64(0x9E3779B97F4A7C15)
GOLDEN_2 = np.uint64(0xD1B54A32D192ED03)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_TWO_POW_MINUS_53 = 1.0 / 9007199254740992.0

#: Attempts of the gamma sampler before it returns its mean (probability < 0.05**32).
GAMMA_ATTEMPTS = 32
#: Uniform slots one gamma draw may use, starting at its base slot.
GAMMA_SLOTS = 3 * GAMMA_ATTEMPTS + 1
#: Uniform slots one beta draw may use, starting at its base slot (two gamma draws).
BETA_SLOTS = 2 * GAMMA_SLOTS


@kernel
def mix(z):
    """SplitMix64 finaliser: a bijection of uint64 with full avalanche."""
    z = (z ^ (z >> _S30)) * _MIX_1
    z = (z ^ (z >> _S27)) * _MIX_2
    return z ^ (z >> _S31)


@kernel
def random_bits(key, a, b):
    """64 random bits for stream ``key`` at counters ``(a, b)``."""
    return mix(mix(key + np.uint64(a) * GOLDEN_1) + np.uint64(b) * GOLDEN_2)


@kernel
def uniform(key, a, b):
    """A uniform draw on [0, 1) with 53 random bits."""
    return np.float64(random_bits(key, a, b) >> _S11) * _TWO_POW_MINUS_53


@cold_kernel
def normal(key, a, b):
    """A standard normal draw (Box-Muller on the uniforms at slots ``2b`` and ``2b + 1``)."""
    u1 = uniform(key, a, 2 * b)
    u2 = uniform(key, a, 2 * b + 1)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


#: Layers of :func:`ziggurat_normal`'s ziggurat (drawn from the low 8 bits of a word).
ZIGGURAT_LAYERS = 256
#: Right edge of the ziggurat's base layer, where the tail starts (Marsaglia and Tsang 2000, for
#: 256 layers): the root, to double precision, of the equation that makes the top layer close.
ZIGGURAT_R = 3.654152885361009
#: Slot stride between the successive words one :func:`ziggurat_normal` draw reads.
ZIGGURAT_STRIDE = 1 << 32
_LAYER_MASK = np.uint64(ZIGGURAT_LAYERS - 1)
_S8 = np.uint64(8)
_ONE = np.uint64(1)


def ziggurat_tables(r: float = ZIGGURAT_R) -> tuple[np.ndarray, np.ndarray]:
    """The ziggurat's layer edges ``x`` and heights ``f`` (each ``ZIGGURAT_LAYERS + 1`` long).

    With ``f(x) = exp(-x^2 / 2)`` and ``v = r f(r) + integral_r^inf f``, the area every layer
    holds: ``x[0] = v / f(r)`` (the base layer's rectangle of width ``x[0]`` holds the
    rectangle ``[0, r]`` under ``f(r)`` and the tail), ``x[1] = r``, ``x[i + 1] =
    f^-1(f(x[i]) + v / x[i])`` (layer ``i`` is the rectangle ``[0, x[i]] x [f(x[i]),
    f(x[i + 1])]``) and ``x[256] = 0``; ``f[i] = f(x[i])``. Computed in double precision with
    :mod:`math`, deterministically.
    """
    v = r * math.exp(-0.5 * r * r) + math.sqrt(0.5 * math.pi) * math.erfc(r / math.sqrt(2.0))
    x = [0.0] * (ZIGGURAT_LAYERS + 1)
    x[0] = v / math.exp(-0.5 * r * r)
    x[1] = r
    for i in range(1, ZIGGURAT_LAYERS - 1):
        x[i + 1] = math.sqrt(-2.0 * math.log(v / x[i] + math.exp(-0.5 * x[i] * x[i])))
    f = [math.exp(-0.5 * value * value) for value in x]
    f[ZIGGURAT_LAYERS] = 1.0
    return np.array(x), np.array(f)


ZIGGURAT_X, ZIGGURAT_F = ziggurat_tables()


@cold_kernel
def ziggurat_normal(key, a, b):
    """A standard normal draw by the ziggurat method (Marsaglia and Tsang 2000, 256 layers).

    The draw reads the 64-bit words at slots ``b, b + 2^32, b + 2 * 2^32, ...`` in turn, as many
    as it needs (almost always one): a pure function of ``(key, a, b)`` that never meets the
    words of another base slot below ``2^32``. Each attempt takes one word: its low 8 bits pick
    the layer ``i``, bit 8 the sign and its top 53 bits a uniform ``u``; ``x = u x[i]`` is
    accepted at once when ``x < x[i + 1]`` (98.5 % of the attempts). Otherwise, in layer 0 the
    tail beyond ``r`` is drawn by Marsaglia's method (two more uniforms per try: ``s = -ln(1 -
    u1) / r``, ``y = -ln(1 - u2)``, accepted when ``2 y > s^2``, giving ``r + s``), and in the
    other layers ``x`` is accepted when a further uniform's height ``f[i] + (f[i + 1] - f[i])
    u'`` is below ``exp(-x^2 / 2)``, else a new attempt starts. Exact, up to rounding in double
    precision (the tables of :func:`ziggurat_tables`).
    """
    s = 0
    while True:
        bits = random_bits(key, a, b + s * ZIGGURAT_STRIDE)
        s += 1
        layer = np.int64(bits & _LAYER_MASK)
        negative = ((bits >> _S8) & _ONE) == _ONE
        x = np.float64(bits >> _S11) * _TWO_POW_MINUS_53 * ZIGGURAT_X[layer]
        if x < ZIGGURAT_X[layer + 1]:
            return -x if negative else x
        if layer == 0:
            while True:
                tail = -math.log(1.0 - uniform(key, a, b + s * ZIGGURAT_STRIDE)) / ZIGGURAT_R
                y = -math.log(1.0 - uniform(key, a, b + (s + 1) * ZIGGURAT_STRIDE))
                s += 2
                if y + y > tail * tail:
                    break
            x = ZIGGURAT_R + tail
            return -x if negative else x
        height = ZIGGURAT_F[layer] + (ZIGGURAT_F[layer + 1] - ZIGGURAT_F[layer]) * uniform(
            key, a, b + s * ZIGGURAT_STRIDE
        )
        s += 1
        if height < math.exp(-0.5 * x * x):
            return -x if negative else x


@cold_kernel
def standard_gamma(key, a, slot, shape):
    """A Gamma(shape, 1) draw (Marsaglia and Tsang 2000), using slots ``slot .. slot + 96``.

    Each attempt reads three uniforms (two for a Box-Muller normal, one for the acceptance test);
    a shape below one is boosted to ``shape + 1`` and scaled by ``U**(1/shape)`` (slot + 96).
    """
    boost = shape < 1.0
    s = shape + 1.0 if boost else shape
    d = s - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    value = d
    for attempt in range(GAMMA_ATTEMPTS):
        base = slot + 3 * attempt
        u1 = uniform(key, a, base)
        u2 = uniform(key, a, base + 1)
        x = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(key, a, base + 2)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            value = d * v
            break
        if math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            value = d * v
            break
    if boost:
        value *= uniform(key, a, slot + 3 * GAMMA_ATTEMPTS) ** (1.0 / shape)
    return value


@cold_kernel
def beta(key, a, slot, alpha, beta_):
    """A Beta(alpha, beta_) draw from two gammas (slots ``slot`` and ``slot + GAMMA_SLOTS``)."""
    x = standard_gamma(key, a, slot, alpha)
    y = standard_gamma(key, a, slot + GAMMA_SLOTS, beta_)
    return x / (x + y)


@kernel
def draw(weights, total, u):
    """Index drawn from non-negative ``weights`` (summing to ``total``) by inverting their
    cumulative sum at ``u * total``, ``u`` uniform on [0, 1); a target rounded up to the total
    falls on the last positive weight."""
    target = u * total
    cumulative = 0.0
    last = 0
    for k in range(weights.shape[0]):
        weight = weights[k]
        cumulative += weight
        if weight > 0.0:
            last = k
        if target < cumulative:
            return k
    return last


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
