"""The networks' mathematics, as functions of (stacked) parameters: the mixture-of-experts forward
pass, its plain per-sample reference, the losses and the functional optimizer steps.

Every function works on tensors with any leading axes (a member axis for a batch of members), so
that the batched pool (:mod:`agents.moe.pool`) and the one-member reference
(:class:`agents.moe.TorchLearner`) compute the same formulas. torch is imported when a function
runs, never with the module.

Examples
--------
>>> moe_shapes(3, 2, 4, 1)["w1"]
(2, 3, 4)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.moe.torch_support import require_torch

#: Adam's constants (torch's defaults).
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


def moe_shapes(input_dim: int, n_experts: int, hidden: int, output_dim: int) -> dict:
    """Names and shapes of a mixture of experts' parameters, in the order they are drawn: the
    router ``gate_w (d, E)``, ``gate_b (E,)`` and each sub-expert's ``w1 (E, d, H)``,
    ``b1 (E, H)``, ``w2 (E, H, O)``, ``b2 (E, O)``."""
    d, e, h, o = input_dim, n_experts, hidden, output_dim
    return {"gate_w": (d, e), "gate_b": (e,), "w1": (e, d, h), "b1": (e, h), "w2": (e, h, o), "b2": (e, o)}


# --- the network ------------------------------------------------------------------------------
def moe_forward(p: dict, x: Any, emask: Any, hmask: Any, k: Any, kmax: int, n_sub: Any) -> tuple[Any, Any]:
    """Outputs and load-balancing terms of (padded) MoE members on samples ``x``.

    Works with or without a leading member axis ``N``: ``p`` holds ``gate_w (..., d, E)``,
    ``gate_b (..., E)``, ``w1 (..., E, d, H)``, ``b1 (..., E, H)``, ``w2 (..., E, H, O)``,
    ``b2 (..., E, O)``; ``x`` is ``(..., B, d)``; ``emask (..., E)`` marks present sub-experts,
    ``hmask (..., H)`` present hidden units (0/1), ``k (...)`` each member's ``top_k``, ``kmax``
    the largest, ``n_sub (...)`` each member's ``E``. Returns ``(out (..., B, O), aux (...))``.
    """
    torch = require_torch()
    logits = torch.einsum("...bd,...de->...be", x, p["gate_w"]) + p["gate_b"].unsqueeze(-2)
    logits = logits.masked_fill(~emask.unsqueeze(-2), -math.inf)
    probs = torch.softmax(logits, dim=-1)
    _, index = torch.topk(logits, kmax, dim=-1)
    keep = torch.arange(kmax, device=x.device) < k.unsqueeze(-1).unsqueeze(-1)
    chosen = torch.gather(probs, -1, index) * keep.to(probs.dtype)
    gates = torch.zeros_like(logits).scatter(-1, index, chosen)
    hidden = torch.tanh(torch.einsum("...bd,...edh->...beh", x, p["w1"]) + p["b1"].unsqueeze(-3))
    hidden = hidden * hmask.unsqueeze(-2).unsqueeze(-2)
    outs = torch.einsum("...beh,...eho->...beo", hidden, p["w2"]) + p["b2"].unsqueeze(-3)
    out = torch.einsum("...be,...beo->...bo", gates, outs)
    slots = keep.to(logits.dtype).expand_as(index)
    routed = torch.zeros_like(logits).scatter(-1, index, slots) / k.unsqueeze(-1).unsqueeze(-1)
    aux = n_sub * (routed.mean(dim=-2) * probs.mean(dim=-2)).sum(dim=-1)
    return out, aux


def moe_network(spec: Any, input_dim: int, output_dim: int, parameters: dict | None = None) -> Any:
    """One unpadded MoE member ``spec`` as a ``torch.nn.Module`` with the given (or zero) float64
    parameters: a plain per-sample implementation (each sample evaluates only its ``top_k``
    sub-experts), the reference the batched pool is tested against and what
    :class:`agents.moe.TorchLearner` trains. ``forward(x (B, d)) -> (out (B, O), aux)``."""
    torch = require_torch()
    nn = torch.nn

    class MoENetwork(nn.Module):  # type: ignore[name-defined]  # torch, imported when called
        def __init__(self) -> None:
            super().__init__()
            shapes = moe_shapes(input_dim, spec.n_experts, spec.hidden, output_dim)
            for name, shape in shapes.items():
                value = (
                    torch.zeros(shape, dtype=torch.float64)
                    if parameters is None
                    else parameters[name].clone()
                )
                self.register_parameter(name, nn.Parameter(value))

        def forward(self, x: Any) -> tuple[Any, Any]:
            logits = x @ self.gate_w + self.gate_b
            probs = torch.softmax(logits, dim=-1)
            _, index = torch.topk(logits, spec.top_k, dim=-1)
            gates = torch.gather(probs, -1, index)
            rows = []
            counts = torch.zeros(spec.n_experts, dtype=x.dtype, device=x.device)
            for b in range(x.shape[0]):
                total = 0.0
                for j in range(spec.top_k):
                    e = int(index[b, j])
                    counts[e] += 1.0
                    hidden = torch.tanh(x[b] @ self.w1[e] + self.b1[e])
                    total = total + gates[b, j] * (hidden @ self.w2[e] + self.b2[e])
                rows.append(total)
            fraction = counts / (spec.top_k * x.shape[0])
            aux = spec.n_experts * (fraction * probs.mean(dim=0)).sum()
            return torch.stack(rows), aux

    return MoENetwork()


# --- losses and optimizer steps -------------------------------------------------------------
def training_losses(out: Any, y: Any, task: int, scale: float) -> tuple[Any, Any]:
    """``(loss to differentiate, stream loss)`` per sample of outputs ``out (..., O)`` against
    targets ``y (...)``: squared error over ``scale^2`` and its clipping at 1 (regression), or the
    half Brier score of ``softmax(out)`` (classification, both the same)."""
    torch = require_torch()
    if task == 0:
        smooth = ((out[..., 0] - y) / scale) ** 2
        return smooth, torch.clamp(smooth, max=1.0)
    q = torch.softmax(out, dim=-1)
    onehot = torch.nn.functional.one_hot(y.long(), out.shape[-1]).to(q.dtype)
    brier = 0.5 * ((q - onehot) ** 2).sum(dim=-1)
    return brier, brier


def predictions(out: Any, task: int) -> Any:
    """What a member predicts from its outputs: the value (regression) or probabilities."""
    torch = require_torch()
    return out[..., 0] if task == 0 else torch.softmax(out, dim=-1)


def expected_losses(
    pred: np.ndarray, target: np.ndarray, task: int, noise: float, scale: float
) -> np.ndarray:
    """Expected loss over the label noise at held-out points (see :mod:`envs.clustered`),
    vectorised over any leading axes: ``pred (..., N)`` or ``(..., N, O)`` against the held-out
    targets ``target (..., N, O)``; returns ``(..., N)``."""
    from envs.clustered import regression_expected_loss

    if task == 0:
        return regression_expected_loss(pred - target[..., 0], noise, scale)
    return 0.5 * ((pred * pred).sum(-1) - 2.0 * (pred * target).sum(-1) + 1.0)


def adam_step(p: Any, g: Any, m: Any, v: Any, step: Any, lr: Any, weight_decay: Any) -> tuple[Any, Any, Any]:
    """One Adam step (torch.optim.Adam's formula, L2 weight decay) for a batch of members:
    tensors with a leading member axis, ``step`` (N,) the new step counts, ``lr`` and
    ``weight_decay`` (N,). Returns ``(p, m, v)``."""
    shape = (-1,) + (1,) * (p.dim() - 1)
    b1, b2 = ADAM_BETAS
    g = g + weight_decay.view(shape) * p
    m = m * b1 + g * (1.0 - b1)
    v = v * b2 + g * g * (1.0 - b2)
    step = step.to(p.dtype)
    bias1 = 1.0 - b1**step
    bias2 = 1.0 - b2**step
    denom = v.sqrt() / bias2.sqrt().view(shape) + ADAM_EPS
    p = p - (lr / bias1).view(shape) * (m / denom)
    return p, m, v


def sgd_step(p: Any, g: Any, lr: Any, weight_decay: Any) -> Any:
    """One plain gradient step (L2 weight decay) for a batch of members."""
    shape = (-1,) + (1,) * (p.dim() - 1)
    return p - lr.view(shape) * (g + weight_decay.view(shape) * p)


def ema_decay(n: Any, ema: Any) -> Any:
    """The average's decay at a member's ``n``-th step: ``min(ema, (1 + n) / (10 + n))``."""
    torch = require_torch()
    n = n.to(ema.dtype)
    return torch.minimum(ema, (1.0 + n) / (10.0 + n))


def split_output(result: Any, x: Any) -> tuple[Any, Any]:
    """``(out, aux)`` from what a module returns (``out`` or ``(out, aux)``)."""
    if isinstance(result, tuple):
        out, aux = result
        return out, aux + x.new_zeros(())
    return result, x.new_zeros(())
