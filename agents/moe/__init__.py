"""Pools of mixture-of-experts networks (torch), trained under a budget, batched and masked.

Each pool member (an *expert* of the pool) is a small network trained online on the clustered
stream (:mod:`envs.clustered`). The built-in member, :class:`MoEExpert`, is a mixture of experts:
a linear router with a softmax over ``E`` *sub-experts* (one-hidden-layer tanh MLPs of width
``hidden``), of which the ``top_k`` with the largest router probabilities are evaluated and
mixed, each weighted by its router probability (not renormalised over the ``top_k``, as in the
Switch Transformer, so that the router learns even with ``top_k = 1``). Training adds a
load-balancing term, ``balance * E * sum_e f_e P_e`` with ``f_e`` the fraction of routing slots
that went to sub-expert ``e`` and ``P_e`` its mean router probability (the usual
switch-transformer form), computed on the round's sample. Members
differ in ``E``, ``top_k``, ``hidden`` and step size, so a pool holds fast-but-limited learners
(one small sub-expert, large steps) and slow-but-capable ones (many sub-experts, small steps).
A member of one's own architecture is a :class:`ModuleExpert`: any ``torch.nn.Module`` built by a
factory ``factory(input_dim, output_dim)``.

Training: when trained, a member predicts the round's ``x_t`` with its current parameters,
suffers the stream's loss (reported to the policy), and takes one optimizer step (Adam or plain
SGD) on that one sample: the training loss is the stream's loss before clipping (regression) or
the half Brier score (classification), plus the load-balancing term.

Batching. The parameters of every member of every replication live in stacked tensors with
leading axes ``(replication, member)``. Members of different sizes share one shape: sub-experts
are padded to the largest ``E`` and hidden units to the largest width, padded entries are zero,
the router's logits of absent sub-experts are ``-inf`` and padded hidden units are multiplied by
zero, so padded entries get exactly zero gradients. A round gathers the (at most ``M`` per
replication) trained members, runs one batched forward and backward over all of them (grouped
batched matrix products, or ``torch.func.vmap`` of the one-member function: ``backend``), and
writes the stepped parameters back. The optimizer is functional and masked: moments, step counts
and parameters of untrained members are not touched at all (a zero gradient would not be enough:
Adam's moments and weight decay move parameters even then).

Decision (smoothing): ``"ema"`` (default) deploys an exponential moving average of the member's
parameters, updated at each of its training steps with decay ``min(ema, (1 + n) / (10 + n))`` at
its ``n``-th step; ``"last"`` deploys the current parameters. Both are practical choices outside
the analysis (which wants a uniformly drawn past iterate), and results say the certificate is
heuristic.

Rate: networks are non-convex, so no valid rate is known. Members report the heuristic rate
``U(n, delta') = min(n, beta n^(1/2) sqrt(log(2 n^2 / delta')))`` (alpha = 1/2, ``beta`` per
member, default 0.5), and the family marks every member heuristic.

Randomness and devices: ``device="auto"`` uses CUDA when available, else the CPU. Each pool
holds one ``torch.Generator``, re-seeded for each member of each replication from that member's
stream key (derived from the simulation's seed, the replication and the member's identity) before
drawing its initial parameters; nothing else is random and torch's global seed is never touched.
On the CPU results are deterministic. The per-member Python expert :class:`TorchLearner` runs one
member on its own through :mod:`mlcb.learners` (the reference the batched pool is tested against).

Modules, one concept each, every public name re-exported here:

* :mod:`agents.moe.specs` -- the members, :class:`MoEExpert` and :class:`ModuleExpert`;
* :mod:`agents.moe.network` -- the networks' mathematics: forward pass, losses, optimizer steps;
* :mod:`agents.moe.pool` -- the batched pool, :class:`MoEPool`;
* :mod:`agents.moe.family` -- the family, :data:`MOES`;
* :mod:`agents.moe.learner` -- one member on its own, :class:`TorchLearner`;
* :mod:`agents.moe.torch_support` -- torch imported on demand (:func:`require_torch` says in one
  line what to install without it), devices and CPU threads.
"""

from __future__ import annotations

from agents.moe.family import MOES, MoEFamily
from agents.moe.learner import TorchLearner
from agents.moe.network import (
    ADAM_BETAS,
    ADAM_EPS,
    adam_step,
    ema_decay,
    expected_losses,
    moe_forward,
    moe_network,
    moe_shapes,
    predictions,
    sgd_step,
    training_losses,
)
from agents.moe.pool import MoEPool
from agents.moe.specs import BACKENDS, DTYPES, OPTIMIZERS, ModuleExpert, MoEExpert
from agents.moe.torch_support import TORCH_MESSAGE, MissingTorch, require_torch, resolve_device

__all__ = [
    "ADAM_BETAS",
    "ADAM_EPS",
    "BACKENDS",
    "DTYPES",
    "MOES",
    "OPTIMIZERS",
    "TORCH_MESSAGE",
    "MissingTorch",
    "ModuleExpert",
    "MoEExpert",
    "MoEFamily",
    "MoEPool",
    "TorchLearner",
    "adam_step",
    "ema_decay",
    "expected_losses",
    "moe_forward",
    "moe_network",
    "moe_shapes",
    "predictions",
    "require_torch",
    "resolve_device",
    "sgd_step",
    "training_losses",
]

# Results and configurations name an expert by its class's module and name: the members and the
# one-member learner keep ``agents.moe`` as theirs, so that earlier results and keys still match.
for _class in (MoEExpert, ModuleExpert, TorchLearner):
    _class.__module__ = __name__
del _class
