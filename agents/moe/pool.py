"""The batched pool of torch networks (:class:`mlcb.contracts.BatchedPool`): every member of every
replication in stacked tensors, one batched forward and backward per group of members per round,
masked functional optimizer steps.

Members that share a parameter layout form a group: the built-in mixtures of experts of a pool
(padded to the largest ``E`` and width) and, for members of one's own, those built by one factory
with one layout. A group's tensors have leading axes ``(replication, member)``; a round gathers
the trained members of every replication, steps them, and writes them back, leaving every other
member's parameters and optimizer state untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.moe.network import (
    adam_step,
    ema_decay,
    expected_losses,
    moe_forward,
    moe_shapes,
    predictions,
    sgd_step,
    split_output,
    training_losses,
)
from agents.moe.specs import MoEExpert, aux_weight
from agents.moe.torch_support import CPUThreads, require_torch, resolve_device
from mlcb.learners import power_rate

__all__ = ["MoEPool"]


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
        self.balance = column([aux_weight(s) for s in specs])

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
        layout = _Layout(moe_shapes(d, e_max, h_max, o))
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
            return split_output(torch.func.functional_call(module, layout.unflatten(f), (xx,)), xx)

        return torch.func.vmap(one)(flat, x)


def _signature(spec: Any, d: int, o: int) -> tuple:
    """Members sharing this key are stacked in one group."""
    if isinstance(spec, MoEExpert):
        return ("moe", spec.backend)
    module = spec.build_module(d, o, 0)
    return ("module", id(spec.factory), tuple((n, tuple(p.shape)) for n, p in module.named_parameters()))


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
            group: _MoEGroup | _ModuleGroup
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

    def _gather(self, selected: np.ndarray, counts: np.ndarray) -> tuple | None:
        """``(rows, cols, ks, x, y)``: the replications, positions and members of the selected
        pairs, and the round's samples; ``None`` when no member is selected."""
        width = selected.shape[1]
        rows, cols = np.nonzero(np.arange(width) < np.asarray(counts)[:, None])
        if rows.size == 0:
            return None
        return (rows, cols, selected[rows, cols], *self._round())

    def train(self, t, selected, counts, losses, rates) -> None:
        with CPUThreads(self.torch, self.threads):
            self._train(selected, counts, losses, rates)

    def deploy(self, t, selected, counts, losses, expected) -> None:
        with CPUThreads(self.torch, self.threads):
            self._deploy(selected, counts, losses, expected)

    def _by_group(self, rows: np.ndarray, ks: np.ndarray):
        """For each group with members among the pairs ``(rows, ks)`` (replication, member): the
        group, the mask of its pairs, their replications and their members' local indices (as
        tensors on the pool's device)."""
        for g, group in enumerate(self.groups):
            mine = self.group_of[ks] == g
            if mine.any():
                r = self.torch.as_tensor(rows[mine], device=self.device)
                yield group, mine, r, self.torch.as_tensor(self.local_of[ks[mine]], device=self.device)

    def _train(self, selected, counts, losses, rates) -> None:
        gathered = self._gather(selected, counts)
        if gathered is None:
            return
        rows, cols, ks, x, y = gathered
        steps = self.steps[rows, ks] + 1
        self.steps[rows, ks] = steps
        if steps.max() >= self._rates.shape[1]:
            self._rates = self._rate_table(2 * int(steps.max()))
        for group, mine, r, local in self._by_group(rows, ks):
            n = self.torch.as_tensor(steps[mine], device=self.device)
            stream = group.step(r, local, x[r].unsqueeze(1), y[r], n, self.task, self.scale)
            losses[rows[mine], cols[mine]] = stream.cpu().numpy()
        rates[rows, cols] = self._rates[ks, steps]

    def _deploy(self, selected, counts, losses, expected) -> None:
        gathered = self._gather(selected, counts)
        if gathered is None:
            return
        rows, cols, ks, x, y = gathered
        for group, mine, r, local in self._by_group(rows, ks):
            inputs = self.torch.cat([x[r].unsqueeze(1), self.holdout[r]], dim=1)
            out = group.predict(r, local, inputs, self.smoothed)
            _, stream = training_losses(out[:, 0], y[r], self.task, self.scale)
            pred = predictions(out[:, 1:], self.task).double().cpu().numpy()
            held = expected_losses(pred, self.targets[rows[mine]], self.task, self.noise, self.scale)
            losses[rows[mine], cols[mine]] = stream.double().cpu().numpy()
            expected[rows[mine], cols[mine]] = held.mean(axis=-1)
