"""The family of torch network pools (:class:`mlcb.contracts.ExpertFamily`): :data:`MOES`.

It has no compiled kernels: its pool is the batched one of :mod:`agents.moe.pool`, run by the
Python engine. Its rates and heuristic flags come from the members (:mod:`agents.moe.specs`),
its ``L_k*`` from the stream.

Examples
--------
>>> MOES, MOES.smoothing
(agents.moe.family.MOES, ('ema', 'last'))
"""

from __future__ import annotations

import math
from typing import Any

from agents.family import Family
from agents.moe.network import moe_shapes, split_output
from agents.moe.pool import MoEPool
from agents.moe.specs import ModuleExpert, MoEExpert
from agents.moe.torch_support import require_torch, resolve_device
from mlcb import validation
from mlcb.validation import InputError

__all__ = ["MOES", "MoEFamily"]


#: Copies of a network's parameters a replication holds at the peak of a training step,
#: measured on the CPU: the weights, the optimizer's two moments and the smoothed (averaged)
#: weights, the float64 draws they are made from, and the gradients and temporaries of a step that
#: trains every member at once (the warm start).
PARAMETER_COPIES = 16
#: Copies held between steps: the weights, the two moments and the average.
STATE_COPIES = 4
#: Copies of a deployed network's hidden units (``n_experts x hidden`` per point: every
#: sub-expert is evaluated) held at once while it is scored on the round's point and the held-out
#: ones, beside the :data:`STATE_COPIES`.
HIDDEN_COPIES = 2


#: What a torch network reads of its stream (the clustered one, :mod:`envs.clustered`).
STREAM_ATTRIBUTES = ("input_dim", "output_dim", "task", "scale", "noise", "targets")


def check_stream(env: Any, who: str) -> None:
    """An :class:`InputError` starting with ``who`` unless ``env`` is a stream torch networks run
    on: one with :data:`STREAM_ATTRIBUTES` (the clustered stream)."""
    for attribute in STREAM_ATTRIBUTES:
        if not hasattr(env, attribute):
            raise InputError(
                f"{who}: torch networks run on the clustered stream (mlcb/Clustered-v0); "
                f"{type(env).__name__} has no {attribute!r}"
            )


def check_module(spec: ModuleExpert, env: Any, who: str) -> None:
    """An :class:`InputError` starting with ``who`` unless ``spec``'s factory builds a module that
    the pool can train on ``env``: built and run on a batch of zeros, it returns outputs of shape
    ``(B, output_dim)`` for inputs ``(B, input_dim)``, or a pair of them and a scalar ``aux``, and
    it runs under ``torch.func.vmap`` as the pool runs it (no random operation such as dropout, no
    ``.item()``). Any error of the user's factory or module is named with its type and text."""
    torch = require_torch()
    try:
        module = spec.build_module(env.input_dim, env.output_dim, 0)
        result = module(torch.zeros((2, env.input_dim), dtype=torch.float64))
    except InputError as error:
        raise InputError(f"{who}: {error}") from None
    except Exception as error:  # the user's factory or module: named, with its error
        raise InputError(
            f"{who}: building the module and running it on a batch of zeros raised "
            f"{type(error).__name__}: {error}"
        ) from error
    pair = isinstance(result, tuple)
    out, aux = result if pair and len(result) == 2 else (result, 0.0)
    if not isinstance(out, torch.Tensor):
        raise InputError(
            f"{who}: the module must return a tensor of outputs or a pair (outputs, aux), got "
            f"{'a tuple of ' + str(len(result)) if pair else 'a ' + type(result).__name__}"
        )
    if tuple(out.shape) != (2, env.output_dim):
        raise InputError(
            f"{who}: the module must map (B, {env.input_dim}) to (B, {env.output_dim}), "
            f"got output shape {tuple(out.shape)}"
        )
    scalar = validation.is_real(aux) or (isinstance(aux, torch.Tensor) and aux.dim() == 0)
    if not scalar:
        got = f"shape {tuple(aux.shape)}" if isinstance(aux, torch.Tensor) else type(aux).__name__
        raise InputError(f"{who}: the aux the module returns beside its outputs must be a scalar, got {got}")
    try:  # one member, stacked, as the pool runs a group of them
        stacked = {name: p.detach().unsqueeze(0) for name, p in module.named_parameters()}
        inputs = torch.zeros((1, 2, env.input_dim), dtype=torch.float64)
        torch.func.vmap(lambda f, x: split_output(torch.func.functional_call(module, f, (x,)), x))(
            stacked, inputs
        )
    except Exception as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(
            f"{who}: the pool runs the module under torch.func.vmap, which raised "
            f"{type(error).__name__}: {first}"
        ) from error


class MoEFamily(Family):
    """Pools of torch networks on the clustered stream (:class:`mlcb.contracts.ExpertFamily`).

    Smoothing ``"ema"`` (default) or ``"last"``; ``L_k*`` is replaced by the stream's Bayes loss
    (a lower bound: regret against it bounds the regret against the best member from above);
    rates are heuristic (alpha = 1/2, ``beta`` per member).
    """

    name = "moe"
    smoothing = ("ema", "last")
    #: What regret is measured against (recorded in every result's metadata).
    reference = "the Bayes loss of the stream"

    def check_environment(self, experts: list, env: Any) -> None:
        """A ``ValueError`` (a :class:`MissingTorch` without torch) unless the pool can run on
        ``env``: the clustered stream, one device, dtype, thread count and MoE backend for the
        pool, and modules of one's own that map ``(B, input_dim)`` to ``(B, output_dim)``."""
        require_torch()
        check_stream(env, "experts")
        for name in ("device", "dtype", "threads"):
            values = {getattr(e, name) for e in experts}
            if len(values) > 1:
                raise InputError(
                    f"experts: every member of a pool must have one {name}, got {sorted(values)}"
                )
        backends = {e.backend for e in experts if isinstance(e, MoEExpert)}
        if len(backends) > 1:
            raise InputError(
                f"experts: the MoE members of a pool must share one backend, got {sorted(backends)}"
            )
        resolve_device(experts[0].device)
        for k, spec in enumerate(experts):
            if isinstance(spec, ModuleExpert):
                check_module(spec, env, f"experts[{k}]")

    def held_bytes(self, experts: list, env: Any) -> tuple[int, str]:
        """The bytes the MoE members take in one replication, and what they are, for the
        setting's memory check (:func:`mlcb.engine.problem.build` refuses what cannot fit before
        anything is built, counting every replication the engine runs in one pool at once):
        :func:`needed_bytes`."""
        return needed_bytes(experts, env)

    def batched_pool(
        self, experts: list, env: Any, batch: Any, delta: float, smoothing: str, horizon: int
    ) -> MoEPool:
        """The batched pool of every replication of ``batch``."""
        return MoEPool(experts, env, batch, delta, smoothing)


def needed_bytes(experts: list, env: Any) -> tuple[int, str]:
    """The bytes the MoE members of one replication take at most, and what they are (``(0, "")``
    without MoE members; a module of one's own is not counted): the members padded to the largest
    ``n_experts`` and ``hidden`` of the pool, the larger of their training step's peak (each
    parameter held :data:`PARAMETER_COPIES` times) and their deployment's (:data:`STATE_COPIES`
    times, beside a deployed network's hidden units on the round's point and the stream's
    ``holdout`` held-out ones)."""
    members = [e for e in experts if isinstance(e, MoEExpert)]
    if not members:
        return 0, ""
    most_experts = max(e.n_experts for e in members)
    most_hidden = max(e.hidden for e in members)
    shapes = moe_shapes(env.input_dim, most_experts, most_hidden, env.output_dim)
    per_member = sum(math.prod(shape) for shape in shapes.values())
    points = 1 + int(getattr(env, "holdout", 0))
    itemsize = 8 if members[0].dtype == "float64" else 4
    parameters = len(members) * per_member
    hidden = points * most_experts * most_hidden * HIDDEN_COPIES
    needed = max(parameters * PARAMETER_COPIES, parameters * STATE_COPIES + hidden)
    why = (
        f"{len(members)} mixture-of-experts network{'s' if len(members) > 1 else ''} of {per_member:,} "
        f"parameters (n_experts = "
        f"{most_experts:,}, hidden = {most_hidden:,}), held about {PARAMETER_COPIES} times while they "
        f"train, or a deployed network's hidden units on {points:,} points beside them, for one "
        "replication"
    )
    return needed * itemsize, why


#: The family of :class:`MoEExpert` and :class:`ModuleExpert` members.
MOES = MoEFamily()
MoEExpert.family = MOES
ModuleExpert.family = MOES
