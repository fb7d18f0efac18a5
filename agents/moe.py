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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlcb.learners import power_rate

#: What to install when torch is missing (one line).
TORCH_MESSAGE = "mixture-of-experts pools need torch: pip install 'mlcb[torch]'"
#: Adam's constants (torch's defaults).
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
OPTIMIZERS = ("adam", "sgd")
BACKENDS = ("bmm", "vmap")
DTYPES = ("float32", "float64")


class MissingTorch(ImportError, ValueError):
    """torch is not installed (an ``ImportError``, and a ``ValueError`` so that the command line
    reports it in one line like any other bad setting)."""


def require_torch() -> Any:
    """The ``torch`` module, or :class:`MissingTorch` saying in one line what to install."""
    try:
        import torch
    except ImportError:
        raise MissingTorch(TORCH_MESSAGE) from None
    return torch


def resolve_device(device: str) -> Any:
    """``torch.device`` for ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``..."""
    torch = require_torch()
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}") from None
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} was asked for but torch sees no CUDA device; use 'auto' or 'cpu'"
        )
    return chosen


# --- expert specifications ------------------------------------------------------------------
def _check_common(spec: Any) -> None:
    checks = (
        ("lr", spec.lr, 0.0, math.inf),
        ("weight_decay", spec.weight_decay, 0.0, math.inf),
        ("ema", spec.ema, 0.0, 1.0),
        ("beta", spec.beta, 0.0, math.inf),
    )
    for name, value, low, high in checks:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not (ok and low <= value <= high and (name not in ("lr", "beta") or value > 0)):
            bound = f"(0, {high}]" if name in ("lr", "beta") else f"[{low}, {high}]"
            raise ValueError(f"{name} must be a number in {bound}, got {value!r}")
    if spec.optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {spec.optimizer!r}")
    if spec.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {spec.dtype!r}")
    _positive_int("threads", spec.threads)
    if not isinstance(spec.device, str):
        raise ValueError(f"device must be a string ('auto', 'cpu', 'cuda'), got {spec.device!r}")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class MoEExpert:
    """One mixture-of-experts member: router, top-k gating over ``n_experts`` MLP sub-experts.

    Parameters
    ----------
    n_experts : int
        ``E >= 1`` sub-experts.
    top_k : int
        Sub-experts evaluated per sample, ``1 <= top_k <= E``.
    hidden : int
        Hidden width of each sub-expert.
    lr : float
        Step size (> 0).
    optimizer : str
        ``"adam"`` (default) or ``"sgd"`` (plain gradient steps).
    balance : float
        Weight (>= 0) of the load-balancing term.
    weight_decay : float
        L2 penalty added to the gradient (>= 0), as ``torch.optim`` does.
    ema : float
        Decay in ``[0, 1]`` of the parameter average deployed by the ``"ema"`` smoothing.
    beta : float
        Constant of the heuristic rate ``beta n^(1/2) sqrt(log(2 n^2 / delta'))``.
    init_scale : float
        Multiplier of the default (``1/sqrt(fan_in)``) initial weights.
    backend : str
        ``"bmm"`` (grouped batched matrix products) or ``"vmap"`` (``torch.func.vmap`` of the
        one-member function); the same numbers, only the speed differs.
    device, dtype : str
        ``"auto"``/``"cpu"``/``"cuda"``; ``"float32"`` or ``"float64"`` (the same for a pool).
    threads : int
        torch's CPU threads while the pool works (restored after each call); the tensors of one
        round are small, and more threads mostly cost synchronisation (1, the default, is the
        fastest measured on two cores).
    """

    family: ClassVar[Any] = None  # set below: MOES
    n_experts: int = 4
    top_k: int = 1
    hidden: int = 16
    lr: float = 0.01
    optimizer: str = "adam"
    balance: float = 0.01
    weight_decay: float = 0.0
    ema: float = 0.99
    beta: float = 0.5
    init_scale: float = 1.0
    backend: str = "bmm"
    device: str = "auto"
    dtype: str = "float32"
    threads: int = 1

    def __post_init__(self) -> None:
        _positive_int("n_experts", self.n_experts)
        _positive_int("hidden", self.hidden)
        _positive_int("top_k", self.top_k)
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k must be in [1, n_experts={self.n_experts}], got {self.top_k!r}")
        if not (isinstance(self.balance, (int, float)) and math.isfinite(self.balance) and self.balance >= 0):
            raise ValueError(f"balance must be a finite number >= 0, got {self.balance!r}")
        if not (
            isinstance(self.init_scale, (int, float))
            and math.isfinite(self.init_scale)
            and self.init_scale > 0
        ):
            raise ValueError(f"init_scale must be a finite number > 0, got {self.init_scale!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        _check_common(self)

    @property
    def rate(self) -> tuple[float, float]:
        return (float(self.beta), 0.5)

    def initial_parameters(self, input_dim: int, output_dim: int, generator: Any) -> dict:
        """This member's initial parameters (float64, unpadded), drawn from ``generator``."""
        torch = require_torch()
        e, h, d, o = self.n_experts, self.hidden, input_dim, output_dim
        s = self.init_scale

        def draw(shape: tuple, fan_in: int) -> Any:
            bound = s / math.sqrt(fan_in)
            return (torch.rand(shape, generator=generator, dtype=torch.float64) * 2.0 - 1.0) * bound

        return {
            "gate_w": draw((d, e), d),
            "gate_b": torch.zeros(e, dtype=torch.float64),
            "w1": draw((e, d, h), d),
            "b1": draw((e, h), d),
            "w2": draw((e, h, o), h),
            "b2": torch.zeros((e, o), dtype=torch.float64),
        }


@dataclass(frozen=True)
class ModuleExpert:
    """A member of one's own architecture: ``factory(input_dim, output_dim) -> torch.nn.Module``.

    The module maps a batch ``x`` of shape ``(B, input_dim)`` to predictions ``(B, output_dim)``
    (regression: the value; classification: logits, turned into probabilities by a softmax), or to
    a pair ``(predictions, aux)`` whose scalar ``aux`` is added to the training loss (a
    load-balancing term, for example). It must have parameters and no buffers. Members whose
    modules have the same parameter names and shapes are stacked and run by one
    ``torch.func.vmap`` call per round; the module is initialised by its own constructor under
    the member's seed. ``architecture`` (default: the factory's module and name) labels it in
    results. Other parameters as in :class:`MoEExpert`.
    """

    family: ClassVar[Any] = None  # set below: MOES
    factory: Any = None
    lr: float = 0.01
    optimizer: str = "adam"
    weight_decay: float = 0.0
    ema: float = 0.99
    beta: float = 0.5
    device: str = "auto"
    dtype: str = "float32"
    threads: int = 1
    architecture: str = ""

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise ValueError(
                "factory must be a callable factory(input_dim, output_dim) -> torch.nn.Module, "
                f"got {self.factory!r}"
            )
        if not self.architecture:  # names the factory in results and in the setting's key
            label = f"{getattr(self.factory, '__module__', '?')}:{getattr(self.factory, '__qualname__', '?')}"
            object.__setattr__(self, "architecture", label)
        _check_common(self)

    @property
    def rate(self) -> tuple[float, float]:
        return (float(self.beta), 0.5)

    def build_module(self, input_dim: int, output_dim: int, seed: int) -> Any:
        """The module, its parameters initialised under ``seed`` (torch's global generator is
        saved and restored around the constructor, so nothing outside changes)."""
        torch = require_torch()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self.factory(input_dim, output_dim)
        if not isinstance(module, torch.nn.Module):
            raise ValueError(f"factory must return a torch.nn.Module, got {type(module).__name__}")
        if not list(module.parameters()):
            raise ValueError(f"factory's module {type(module).__name__} has no parameters")
        if list(module.buffers()):
            raise ValueError(
                f"factory's module {type(module).__name__} has buffers; members must hold parameters only"
            )
        return module.to(torch.float64)

    def initial_parameters(self, input_dim: int, output_dim: int, seed: int) -> dict:
        module = self.build_module(input_dim, output_dim, seed)
        return {name: p.detach().clone() for name, p in module.named_parameters()}


# --- the network, as functions of stacked parameters -----------------------------------------
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


def moe_network(spec: MoEExpert, input_dim: int, output_dim: int, parameters: dict | None = None) -> Any:
    """One unpadded MoE member ``spec`` as a ``torch.nn.Module`` with the given (or zero) float64
    parameters: a plain per-sample implementation (each sample evaluates only its ``top_k``
    sub-experts), the reference the batched pool is tested against and what
    :class:`TorchLearner` trains. ``forward(x (B, d)) -> (out (B, O), aux)``."""
    torch = require_torch()
    nn = torch.nn

    class MoENetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            e, h, d, o = spec.n_experts, spec.hidden, input_dim, output_dim
            shapes = {
                "gate_w": (d, e),
                "gate_b": (e,),
                "w1": (e, d, h),
                "b1": (e, h),
                "w2": (e, h, o),
                "b2": (e, o),
            }
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
            counts = torch.zeros(spec.n_experts, dtype=x.dtype)
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


# --- losses --------------------------------------------------------------------------------
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


# --- stacked members -----------------------------------------------------------------------
def _member_seed(key: Any) -> int:
    """A member's seed from its 64-bit stream key (what :mod:`mlcb.learners` gives a Python
    expert's ``spawn``)."""
    return int(key) & 0xFFFFFFFF


class _Layout:
    """Names, shapes and offsets of a group's parameters in one flat vector per member."""

    def __init__(self, shapes: dict) -> None:
        self.names = list(shapes)
        self.shapes = [tuple(shapes[n]) for n in self.names]
        self.sizes = [int(np.prod(s)) if s else 1 for s in self.shapes]
        self.size = int(sum(self.sizes))

    def unflatten(self, flat: Any) -> dict:
        """Views (copies where needed) of ``flat (..., P)`` as the named tensors ``(..., *shape)``."""
        lead = flat.shape[:-1]
        parts = flat.split(self.sizes, dim=-1)
        return {n: part.reshape(*lead, *shape) for n, part, shape in zip(self.names, parts, self.shapes)}

    def flatten(self, named: dict, torch: Any) -> Any:
        return torch.cat([named[n].reshape(-1) for n in self.names])


class _Group:
    """Members of a pool that share one stacked layout, with their optimizer state.

    ``flat``, ``first``, ``second``, ``average`` are ``(R, K_g, P)``: the parameters, Adam's two
    moments and the parameter average deployed by ``"ema"``.
    """

    def __init__(
        self, torch: Any, members: list, specs: list, layout: _Layout, initial: list, device: Any, dtype: Any
    ):
        self.torch = torch
        self.members = members  # global indices
        self.layout = layout
        self.flat = torch.stack([torch.stack(row) for row in initial]).to(device=device, dtype=dtype)
        self.first = torch.zeros_like(self.flat)
        self.second = torch.zeros_like(self.flat)
        self.average = self.flat.clone()

        def column(values: list) -> Any:
            return torch.tensor(values, dtype=dtype, device=device)

        self.lr = column([s.lr for s in specs])
        self.weight_decay = column([s.weight_decay for s in specs])
        self.ema = column([s.ema for s in specs])
        self.adam = torch.tensor([s.optimizer == "adam" for s in specs], device=device)
        self.balance = column([getattr(s, "balance", 0.0) for s in specs])

    def forward(self, params: Any, x: Any, local: Any) -> tuple[Any, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def step(self, rows: Any, local: Any, x: Any, y: Any, counts: Any, task: int, scale: float) -> Any:
        """Train members ``local`` of replications ``rows`` on ``x (N, 1, d)``, ``y (N,)``: one
        forward and backward for all of them, then the masked optimizer step. Returns the
        stream losses (N,)."""
        torch = self.torch
        flat = self.flat[rows, local].detach().requires_grad_(True)
        out, aux = self.forward(flat, x, local)
        smooth, stream = training_losses(out[:, 0], y, task, scale)
        total = (smooth + self.balance[local] * aux).sum()
        (grad,) = torch.autograd.grad(total, [flat])
        with torch.no_grad():
            p = flat.detach()
            lr, decay = self.lr[local], self.weight_decay[local]
            adam_p, m, v = adam_step(
                p, grad, self.first[rows, local], self.second[rows, local], counts, lr, decay
            )
            adam = self.adam[local].unsqueeze(-1)
            new = torch.where(adam, adam_p, sgd_step(p, grad, lr, decay))
            self.first[rows, local] = torch.where(adam, m, self.first[rows, local])
            self.second[rows, local] = torch.where(adam, v, self.second[rows, local])
            self.flat[rows, local] = new
            keep = ema_decay(counts, self.ema[local]).unsqueeze(-1)
            self.average[rows, local] = keep * self.average[rows, local] + (1.0 - keep) * new
        return stream.detach()

    def predict(self, rows: Any, local: Any, x: Any, smoothed: bool) -> Any:
        """Outputs ``(N, B, O)`` of the decisions (average or current) on ``x (N, B, d)``."""
        with self.torch.no_grad():
            source = self.average if smoothed else self.flat
            out, _ = self.forward(source[rows, local], x, local)
        return out


class _MoEGroup(_Group):
    """Built-in MoE members, padded to the largest ``E`` and width."""

    def __init__(self, torch, members, specs, d, o, generator, seeds, device, dtype):
        e_max = max(s.n_experts for s in specs)
        h_max = max(s.hidden for s in specs)
        layout = _Layout(
            {
                "gate_w": (d, e_max),
                "gate_b": (e_max,),
                "w1": (e_max, d, h_max),
                "b1": (e_max, h_max),
                "w2": (e_max, h_max, o),
                "b2": (e_max, o),
            }
        )
        initial = []
        for row in seeds:
            stacked = []
            for spec, seed in zip(specs, row):
                generator.manual_seed(seed)
                own = spec.initial_parameters(d, o, generator)
                stacked.append(layout.flatten(_pad(own, layout, torch), torch))
            initial.append(stacked)
        super().__init__(torch, members, specs, layout, initial, device, dtype)
        self.emask = torch.tensor([[e < s.n_experts for e in range(e_max)] for s in specs], device=device)
        self.hmask = torch.tensor(
            [[float(h < s.hidden) for h in range(h_max)] for s in specs], device=device, dtype=dtype
        )
        self.k = torch.tensor([s.top_k for s in specs], device=device)
        self.kmax = max(s.top_k for s in specs)
        self.n_sub = torch.tensor([float(s.n_experts) for s in specs], device=device, dtype=dtype)
        self.vmap = specs[0].backend == "vmap"

    def forward(self, flat, x, local):
        masks = (self.emask[local], self.hmask[local], self.k[local])
        if self.vmap:
            torch = self.torch
            layout, kmax = self.layout, self.kmax

            def one(f, xx, emask, hmask, k, n_sub):
                return moe_forward(layout.unflatten(f), xx, emask, hmask, k, kmax, n_sub)

            return torch.func.vmap(one)(flat, x, *masks, self.n_sub[local])
        return moe_forward(self.layout.unflatten(flat), x, *masks, self.kmax, self.n_sub[local])


def _pad(own: dict, layout: _Layout, torch: Any) -> dict:
    """A member's parameters zero-padded to the group's shapes."""
    out = {}
    for name, shape in zip(layout.names, layout.shapes):
        value = own[name]
        padded = torch.zeros(shape, dtype=value.dtype)
        padded[tuple(slice(0, n) for n in value.shape)] = value
        out[name] = padded
    return out


class _ModuleGroup(_Group):
    """Members built by one factory with one parameter layout, run by ``torch.func.vmap``."""

    def __init__(self, torch, members, specs, d, o, seeds, device, dtype):
        module = specs[0].build_module(d, o, 0)
        shapes = {name: tuple(p.shape) for name, p in module.named_parameters()}
        layout = _Layout(shapes)
        initial = [
            [layout.flatten(spec.initial_parameters(d, o, seed), torch) for spec, seed in zip(specs, row)]
            for row in seeds
        ]
        super().__init__(torch, members, specs, layout, initial, device, dtype)
        self.module = module.to(device=device, dtype=dtype)

    def forward(self, flat, x, local):
        torch = self.torch
        layout, module = self.layout, self.module

        def one(f, xx):
            return _split_output(torch.func.functional_call(module, layout.unflatten(f), (xx,)), xx)

        return torch.func.vmap(one)(flat, x)


def _split_output(result: Any, x: Any) -> tuple[Any, Any]:
    """``(out, aux)`` from what a module returns (``out`` or ``(out, aux)``)."""
    if isinstance(result, tuple):
        out, aux = result
        return out, aux + x.new_zeros(())
    return result, x.new_zeros(())


def _signature(spec: Any, d: int, o: int) -> tuple:
    """Members sharing this key are stacked in one group."""
    if isinstance(spec, MoEExpert):
        return ("moe", spec.backend)
    module = spec.build_module(d, o, 0)
    return ("module", id(spec.factory), tuple((n, tuple(p.shape)) for n, p in module.named_parameters()))


class _Threads:
    """Context: torch's CPU thread count set to ``threads`` (0: unchanged), then restored."""

    def __init__(self, torch: Any, threads: int) -> None:
        self.torch, self.threads, self.before = torch, threads, 0

    def __enter__(self) -> None:
        if self.threads:
            self.before = self.torch.get_num_threads()
            self.torch.set_num_threads(self.threads)

    def __exit__(self, *exc: Any) -> None:
        if self.threads:
            self.torch.set_num_threads(self.before)


class MoEPool:
    """Every replication's members of a pool of torch networks, as a batched pool
    (:class:`mlcb.contracts.BatchedPool`): stacked parameters, one batched forward and backward
    per group of same-layout members per round, masked functional optimizer steps."""

    def __init__(self, experts: list, env: Any, batch: Any, delta: float, smoothing: str) -> None:
        torch = require_torch()
        self.torch = torch
        self.device = resolve_device(experts[0].device)
        self.dtype = getattr(torch, experts[0].dtype)
        self.generator = torch.Generator()  # re-seeded per member from its stream key
        self.threads = experts[0].threads if self.device.type == "cpu" else 0
        self.smoothed = smoothing == "ema"
        n_reps, n_experts = len(batch.replications), len(experts)
        d, o = env.input_dim, env.output_dim
        self.task, self.scale, self.noise = env.task, env.scale, env.noise
        self.env_states = list(batch.env_states)
        seeds = [[_member_seed(keys[k]) for k in range(n_experts)] for keys in batch.expert_keys]
        by_key: dict = {}
        for k, spec in enumerate(experts):
            by_key.setdefault(_signature(spec, d, o), []).append(k)
        self.groups: list[_Group] = []
        self.group_of = np.zeros(n_experts, dtype=np.int64)
        self.local_of = np.zeros(n_experts, dtype=np.int64)
        for g, (key, members) in enumerate(by_key.items()):
            specs = [experts[k] for k in members]
            member_seeds = [[row[k] for k in members] for row in seeds]
            if key[0] == "moe":
                group = _MoEGroup(
                    torch, members, specs, d, o, self.generator, member_seeds, self.device, self.dtype
                )
            else:
                group = _ModuleGroup(torch, members, specs, d, o, member_seeds, self.device, self.dtype)
            self.groups.append(group)
            self.group_of[members] = g
            self.local_of[members] = np.arange(len(members))
        self.steps = np.zeros((n_reps, n_experts), dtype=np.int64)
        self.delta_prime = delta / (2.0 * n_experts)
        self.betas = np.array([e.beta for e in experts], dtype=np.float64)
        self._rates = self._rate_table(1024)
        holdout = np.stack([p.holdout_x for p in batch.env_params])
        self.holdout = torch.as_tensor(holdout, device=self.device, dtype=self.dtype)
        self.targets = np.stack([p.holdout_target for p in batch.env_params])
        self._classes = [f"{type(e).__name__}" for e in experts]

    def _rate_table(self, length: int) -> np.ndarray:
        n = np.arange(length, dtype=np.float64)
        return np.stack([power_rate(n, b, 0.5, self.delta_prime) for b in self.betas])

    def describe(self, r: int, k: int) -> str:
        return self._classes[k]

    def _round(self) -> tuple[Any, Any]:
        torch = self.torch
        x = np.stack([s.x for s in self.env_states])
        y = np.array([s.y[0] for s in self.env_states])
        return (
            torch.as_tensor(x, device=self.device, dtype=self.dtype),
            torch.as_tensor(y, device=self.device, dtype=self.dtype),
        )

    def _pairs(self, selected: np.ndarray, counts: np.ndarray):
        width = selected.shape[1]
        rows, cols = np.nonzero(np.arange(width) < np.asarray(counts)[:, None])
        return rows, cols, selected[rows, cols]

    def train(self, t, selected, counts, losses, rates) -> None:
        with _Threads(self.torch, self.threads):
            self._train(selected, counts, losses, rates)

    def deploy(self, t, selected, counts, losses, expected) -> None:
        with _Threads(self.torch, self.threads):
            self._deploy(selected, counts, losses, expected)

    def _train(self, selected, counts, losses, rates) -> None:
        torch = self.torch
        rows, cols, ks = self._pairs(selected, counts)
        if rows.size == 0:
            return
        x, y = self._round()
        steps = self.steps[rows, ks] + 1
        self.steps[rows, ks] = steps
        if steps.max() >= self._rates.shape[1]:
            self._rates = self._rate_table(2 * int(steps.max()))
        for g, group in enumerate(self.groups):
            mine = self.group_of[ks] == g
            if not mine.any():
                continue
            r = torch.as_tensor(rows[mine], device=self.device)
            local = torch.as_tensor(self.local_of[ks[mine]], device=self.device)
            n = torch.as_tensor(steps[mine], device=self.device)
            stream = group.step(r, local, x[r].unsqueeze(1), y[r], n, self.task, self.scale)
            losses[rows[mine], cols[mine]] = stream.cpu().numpy()
        rates[rows, cols] = self._rates[ks, steps]

    def _deploy(self, selected, counts, losses, expected) -> None:
        torch = self.torch
        rows, cols, ks = self._pairs(selected, counts)
        if rows.size == 0:
            return
        x, y = self._round()
        for g, group in enumerate(self.groups):
            mine = self.group_of[ks] == g
            if not mine.any():
                continue
            r = torch.as_tensor(rows[mine], device=self.device)
            local = torch.as_tensor(self.local_of[ks[mine]], device=self.device)
            inputs = torch.cat([x[r].unsqueeze(1), self.holdout[r]], dim=1)
            out = group.predict(r, local, inputs, self.smoothed)
            _, stream = training_losses(out[:, 0], y[r], self.task, self.scale)
            pred = predictions(out[:, 1:], self.task).double().cpu().numpy()
            held = expected_losses(pred, self.targets[rows[mine]], self.task, self.noise, self.scale)
            losses[rows[mine], cols[mine]] = stream.double().cpu().numpy()
            expected[rows[mine], cols[mine]] = held.mean(axis=-1)


# --- the family ------------------------------------------------------------------------------
class MoEFamily:
    """Pools of torch networks on the clustered stream (:class:`mlcb.contracts.ExpertFamily`).

    Smoothing ``"ema"`` (default) or ``"last"``; ``L_k*`` is replaced by the stream's Bayes loss
    (a lower bound: regret against it bounds the regret against the best member from above);
    rates are heuristic (alpha = 1/2, ``beta`` per member).
    """

    name = "moe"
    smoothing = ("ema", "last")
    #: What regret is measured against (recorded in every result's metadata).
    reference = "the Bayes loss of the stream"

    def check(self, experts: list, env: Any) -> None:
        require_torch()
        for attribute in ("input_dim", "output_dim", "task", "scale", "noise", "targets"):
            if not hasattr(env, attribute):
                raise ValueError(
                    f"experts: torch network pools run on the clustered stream (mlcb/Clustered-v0); "
                    f"{type(env).__name__} has no {attribute!r}"
                )
        for name in ("device", "dtype", "threads"):
            values = {getattr(e, name) for e in experts}
            if len(values) > 1:
                raise ValueError(
                    f"experts: every member of a pool must have one {name}, got {sorted(values)}"
                )
        backends = {e.backend for e in experts if isinstance(e, MoEExpert)}
        if len(backends) > 1:
            raise ValueError(
                f"experts: the MoE members of a pool must share one backend, got {sorted(backends)}"
            )
        resolve_device(experts[0].device)
        for k, spec in enumerate(experts):
            if isinstance(spec, ModuleExpert):
                try:
                    module = spec.build_module(env.input_dim, env.output_dim, 0)
                    out = module(require_torch().zeros((2, env.input_dim), dtype=require_torch().float64))
                except ValueError as error:
                    raise ValueError(f"experts[{k}]: {error}") from None
                out = out[0] if isinstance(out, tuple) else out
                if tuple(out.shape) != (2, env.output_dim):
                    raise ValueError(
                        f"experts[{k}]: the module must map (B, {env.input_dim}) to (B, {env.output_dim}), "
                        f"got output shape {tuple(out.shape)}"
                    )

    def optimal_losses(self, experts: list, env: Any, env_params: Any) -> np.ndarray:
        return np.array([env.optimal_loss(env_params, k) for k in range(len(experts))])

    def rates(self, experts: list, env: Any, n: np.ndarray, delta_prime: float) -> np.ndarray:
        counts = np.asarray(n, dtype=np.float64)
        return np.stack([power_rate(counts, e.beta, 0.5, delta_prime) for e in experts])

    def heuristic(self, experts: list, env: Any) -> list[bool]:
        return [True] * len(experts)

    def batched_pool(self, experts: list, env: Any, batch: Any, delta: float, smoothing: str, horizon: int):
        return MoEPool(experts, env, batch, delta, smoothing)


#: The family of :class:`MoEExpert` and :class:`ModuleExpert` members.
MOES = MoEFamily()
MoEExpert.family = MOES
ModuleExpert.family = MOES


# --- one member on its own -------------------------------------------------------------------
class TorchLearner:
    """One member run on its own as a Python expert (:mod:`mlcb.learners`): an unbatched
    ``torch.nn.Module`` trained by ``torch.optim``. Slow; the reference for the batched pool
    (same seeds give the same results) and a template for learners of one's own.

    Parameters
    ----------
    spec : MoEExpert or ModuleExpert
    smoothing : str
        ``"ema"`` or ``"last"``, as the pool's smoothing.
    seed : int
        Seed of the initial parameters (:meth:`spawn` sets it per replication).
    """

    heuristic = True

    def __init__(self, spec: Any, smoothing: str = "ema", seed: int = 0) -> None:
        if smoothing not in MOES.smoothing:
            raise ValueError(f"smoothing must be one of {MOES.smoothing}, got {smoothing!r}")
        self.spec, self.smoothing, self.seed = spec, smoothing, int(seed)
        self.net = None

    @property
    def rate(self) -> tuple[float, float]:
        return self.spec.rate

    def spawn(self, seed: int) -> TorchLearner:
        return TorchLearner(self.spec, self.smoothing, seed)

    def _build(self, data: Any) -> None:
        torch = require_torch()
        self.torch = torch
        params = data.params
        d, o = data.x.shape[0], params.holdout_target.shape[1]
        self.task, self.scale, self.noise = int(params.task), float(params.scale), float(params.noise)
        self.dtype = getattr(torch, self.spec.dtype)
        self.device = resolve_device(self.spec.device)
        if isinstance(self.spec, MoEExpert):
            generator = torch.Generator()
            generator.manual_seed(self.seed)
            net = moe_network(self.spec, d, o, self.spec.initial_parameters(d, o, generator))
        else:
            net = self.spec.build_module(d, o, self.seed)
        self.net = net.to(device=self.device, dtype=self.dtype)
        if self.spec.optimizer == "adam":
            self.optimizer = torch.optim.Adam(
                self.net.parameters(),
                lr=self.spec.lr,
                betas=ADAM_BETAS,
                eps=ADAM_EPS,
                weight_decay=self.spec.weight_decay,
                foreach=False,
            )
        else:
            self.optimizer = torch.optim.SGD(
                self.net.parameters(), lr=self.spec.lr, weight_decay=self.spec.weight_decay, foreach=False
            )
        self.average = {n: p.detach().clone() for n, p in self.net.named_parameters()}
        self.n = 0
        self.holdout = torch.as_tensor(params.holdout_x, device=self.device, dtype=self.dtype)
        self.targets = params.holdout_target

    def _tensor(self, values: Any) -> Any:
        return self.torch.as_tensor(
            np.asarray(values, dtype=np.float64), device=self.device, dtype=self.dtype
        )

    def learn(self, data: Any) -> float:
        if self.net is None:
            self._build(data)
        torch = self.torch
        out, aux = _split_output(self.net(self._tensor(data.x)[None]), self._tensor(0.0))
        smooth, stream = training_losses(out, self._tensor([data.y]), self.task, self.scale)
        total = smooth.sum() + getattr(self.spec, "balance", 0.0) * aux
        self.optimizer.zero_grad()
        total.backward()
        self.optimizer.step()
        self.n += 1
        with torch.no_grad():
            keep = ema_decay(torch.tensor(self.n), torch.tensor(self.spec.ema, dtype=self.dtype))
            for name, p in self.net.named_parameters():
                self.average[name] = keep * self.average[name] + (1.0 - keep) * p.detach()
        return float(stream.detach()[0])

    def deploy(self, data: Any) -> tuple[float, float]:
        if self.net is None:
            self._build(data)
        torch = self.torch
        with torch.no_grad():
            inputs = torch.cat([self._tensor(data.x)[None], self.holdout])
            if self.smoothing == "ema":
                result = torch.func.functional_call(self.net, self.average, (inputs,))
            else:
                result = self.net(inputs)
            out, _ = _split_output(result, inputs)
            _, stream = training_losses(out[:1], self._tensor([data.y]), self.task, self.scale)
            pred = predictions(out[1:], self.task).double().cpu().numpy()
        held = expected_losses(pred, self.targets, self.task, self.noise, self.scale)
        return float(stream[0]), float(held.mean())
