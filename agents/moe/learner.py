"""One member of a pool of torch networks run on its own, as a Python expert: :class:`TorchLearner`.

An unbatched ``torch.nn.Module`` trained by ``torch.optim``: the reference the batched pool is
tested against (same seeds, same results) and a template for learners of one's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.moe.family import MOES, check_module, check_stream
from agents.moe.network import (
    ADAM_BETAS,
    ADAM_EPS,
    ema_decay,
    expected_losses,
    moe_network,
    predictions,
    split_output,
    training_losses,
)
from agents.moe.specs import ModuleExpert, MoEExpert, aux_weight
from agents.moe.torch_support import require_torch, resolve_device
from mlcb import validation
from mlcb.validation import InputError

__all__ = ["TorchLearner"]


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
        if not isinstance(spec, (MoEExpert, ModuleExpert)):
            raise InputError(f"spec must be an MoEExpert or a ModuleExpert, got {validation.shown(spec)}")
        validation.choice("smoothing", smoothing, MOES.smoothing)
        self.spec, self.smoothing, self.seed = spec, smoothing, int(seed)
        self.net: Any = None  # the torch module, built by reset

    @property
    def rate(self) -> tuple[float, float]:
        return self.spec.rate

    def spawn(self, seed: int) -> TorchLearner:
        return TorchLearner(self.spec, self.smoothing, seed)

    def optimal_loss(self, env: Any, env_params: Any) -> float:
        """The Bayes loss of the stream, the reference of the batched pool's family (a Python
        expert's default would be the best expert in hindsight, :mod:`mlcb.engine.hindsight`).

        Asked when a replication is built, before its first round: so it first refuses, in one
        line, a stream other than the clustered one, a device torch does not see and a module of
        one's own that does not fit the stream (the checks the batched pool makes of its members),
        which would otherwise stop the run at its first training step."""
        require_torch()  # without torch, the one line saying what to install, as it is
        who = f"TorchLearner of {type(self.spec).__name__}"
        check_stream(env, who)
        try:
            resolve_device(self.spec.device)
        except InputError as error:
            raise InputError(f"{who}: {error}") from None
        if isinstance(self.spec, ModuleExpert):
            check_module(self.spec, env, who)
        return float(env.optimal_loss(env_params, 0))

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
        out, aux = split_output(self.net(self._tensor(data.x)[None]), self._tensor(0.0))
        smooth, stream = training_losses(out, self._tensor([data.y]), self.task, self.scale)
        total = smooth.sum() + aux_weight(self.spec) * aux
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
            out, _ = split_output(result, inputs)
            _, stream = training_losses(out[:1], self._tensor([data.y]), self.task, self.scale)
            pred = predictions(out[1:], self.task).double().cpu().numpy()
        held = expected_losses(pred, self.targets, self.task, self.noise, self.scale)
        return float(stream[0]), float(held.mean())
