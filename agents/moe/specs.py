"""The members of a pool of torch networks: :class:`MoEExpert` (a built-in mixture of experts) and
:class:`ModuleExpert` (a ``torch.nn.Module`` of one's own), frozen dataclasses checked on
construction.

Both report the heuristic rate ``U(n, delta') = min(n, beta n^(1/2) sqrt(log(2 n^2 / delta')))``
(:func:`mlcb.learners.power_rate`, ``alpha = 1/2``, ``beta`` per member) and are ``heuristic``:
networks are non-convex and no valid rate is known. Their family is
:data:`agents.moe.family.MOES`.

Examples
--------
>>> expert = MoEExpert(n_experts=2, hidden=4)
>>> expert.rate, expert.heuristic
((0.5, 0.5), True)
>>> float(expert.rate_function(1, None, 0.01))
1.0
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from agents.moe.network import moe_shapes
from agents.moe.torch_support import DEVICE_FORMS, DEVICE_MESSAGE, require_torch
from agents.rates import Counts, Rate
from mlcb import validation
from mlcb.learners import power_rate
from mlcb.validation import InputError

__all__ = ["BACKENDS", "DTYPES", "OPTIMIZERS", "ModuleExpert", "MoEExpert"]

OPTIMIZERS = ("adam", "sgd")
BACKENDS = ("bmm", "vmap")
DTYPES = ("float32", "float64")


def aux_weight(spec: Any) -> float:
    """The weight of a member's auxiliary loss in its training loss: ``balance`` for an
    :class:`MoEExpert` (its load-balancing term), 1 for a :class:`ModuleExpert` (the ``aux`` its
    module returns is added as it is; a module that returns outputs alone adds zero)."""
    return float(spec.balance) if isinstance(spec, MoEExpert) else 1.0


def _check_common(spec: Any) -> None:
    """The fields every member shares, checked (and kept as plain Python values) on construction:
    step size, weight decay, smoothing decay and rate constant, optimizer, dtype, threads and
    device."""
    _number(spec, "lr", validation.positive)
    _number(spec, "weight_decay", validation.non_negative)
    _number(spec, "ema", _unit_interval)
    _number(spec, "beta", validation.positive)
    validation.choice("optimizer", spec.optimizer, OPTIMIZERS)
    _dtype(spec)
    _positive_int(spec, "threads")
    _device(spec)


def _number(spec: Any, name: str, check: Any) -> None:
    """``spec.name`` checked by ``check(name, value)`` (a real number, NumPy's included, never a
    bool), and kept as a Python float unless it is one already or an int: a NumPy ``float32`` or a
    ``Fraction`` becomes the float torch and the setting's description take, while ``1`` and
    ``0.01`` stay as given (the setting's key is made from the fields as they are)."""
    value = getattr(spec, name)
    number = check(name, value)
    if type(value) not in (int, float):
        object.__setattr__(spec, name, number)


def _unit_interval(name: str, value: Any) -> float:
    """``value`` as a float in ``[0, 1]``, else an :class:`InputError` naming ``name``."""
    if not (validation.is_real(value) and 0 <= value <= 1):
        raise InputError(f"{name} must be a number in [0, 1], got {validation.shown(value)}")
    return float(value)


def _torch_object(value: Any, kind: str) -> bool:
    """Whether ``value`` is a ``torch.device`` or ``torch.dtype`` (``kind``), told without
    importing torch (a member is made, and checked, without it)."""
    return type(value).__name__ == kind and type(value).__module__ == "torch"


def _dtype(spec: Any) -> None:
    """``spec.dtype`` checked against :data:`DTYPES`; ``torch.float32`` is kept as ``"float32"``."""
    if _torch_object(spec.dtype, "dtype"):
        object.__setattr__(spec, "dtype", str(spec.dtype).removeprefix("torch."))
    if spec.dtype not in DTYPES:
        raise InputError(f"dtype must be one of {DTYPES}, got {validation.shown(spec.dtype)}")


def _device(spec: Any) -> None:
    """``spec.device`` checked against :data:`DEVICE_FORMS`; a ``torch.device`` is kept as its
    string (``torch.device("cuda", 1)``: ``"cuda:1"``). Whether torch sees the device is asked
    when a pool is built (:func:`agents.moe.torch_support.resolve_device`)."""
    device = spec.device
    if _torch_object(device, "device"):
        device = str(device)
        object.__setattr__(spec, "device", device)
    if not (isinstance(device, str) and DEVICE_FORMS.fullmatch(device)):
        raise InputError(DEVICE_MESSAGE + validation.shown(device))


def _positive_int(spec: Any, name: str) -> None:
    """``spec.name`` checked and kept as an int (``1e2`` is 100: :func:`mlcb.validation.integer`)."""
    object.__setattr__(spec, name, validation.integer(name, getattr(spec, name)))


class _Member:
    """What every member shares: its heuristic rate (``beta``, ``alpha = 1/2``)."""

    #: No valid rate is known for a network: every member is heuristic.
    heuristic: ClassVar[bool] = True
    beta: float  # a field of every member

    @property
    def rate(self) -> tuple[float, float]:
        """``(beta, alpha)`` of the rate, as a Python expert reports it (:class:`agents.moe.TorchLearner`)."""
        return (float(self.beta), 0.5)

    def rate_function(self, n: Counts, rate_input: Any, delta_prime: float) -> Rate:
        """``min(n, beta n^(1/2) sqrt(log(2 n^2 / delta')))`` (``rate_input`` is not read)."""
        return power_rate(np.asarray(n, dtype=np.float64), self.beta, 0.5, delta_prime)


@dataclass(frozen=True)
class MoEExpert(_Member):
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
        ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (a ``torch.device`` is kept as its
        string); ``"float32"`` or ``"float64"`` (``torch.float32``, ``torch.float64`` too), the
        same for every member of a pool.
    threads : int
        torch's CPU threads while the pool works (restored after each call). The default is 1:
        the tensors of one round are small, and more threads mostly cost synchronisation.
    """

    family: ClassVar[Any] = None  # agents.moe.family.MOES, set there
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
        _positive_int(self, "n_experts")
        _positive_int(self, "hidden")
        _positive_int(self, "top_k")
        if self.top_k > self.n_experts:
            raise InputError(f"top_k must be in [1, n_experts={self.n_experts}], got {self.top_k!r}")
        _number(self, "balance", validation.non_negative)
        _number(self, "init_scale", validation.positive)
        validation.choice("backend", self.backend, BACKENDS)
        _check_common(self)

    def initial_parameters(self, input_dim: int, output_dim: int, generator: Any) -> dict:
        """This member's initial parameters (float64, unpadded), drawn from ``generator``."""
        torch = require_torch()
        shapes = moe_shapes(input_dim, self.n_experts, self.hidden, output_dim)
        # Weights and the hidden biases are uniform in +-init_scale/sqrt(fan_in), drawn in this
        # order; the router's and the outputs' biases start at zero.
        fan_in = {"gate_w": input_dim, "w1": input_dim, "b1": input_dim, "w2": self.hidden}

        def draw(shape: tuple, fan_in: int) -> Any:
            bound = self.init_scale / math.sqrt(fan_in)
            return (torch.rand(shape, generator=generator, dtype=torch.float64) * 2.0 - 1.0) * bound

        return {
            name: draw(shape, fan_in[name]) if name in fan_in else torch.zeros(shape, dtype=torch.float64)
            for name, shape in shapes.items()
        }


@dataclass(frozen=True)
class ModuleExpert(_Member):
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

    family: ClassVar[Any] = None  # agents.moe.family.MOES, set there
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
            raise InputError(
                "factory must be a callable factory(input_dim, output_dim) -> torch.nn.Module, "
                f"got {self.factory!r}"
            )
        if self.architecture == "":  # names the factory in results and in the setting's key
            label = f"{getattr(self.factory, '__module__', '?')}:{getattr(self.factory, '__qualname__', '?')}"
            object.__setattr__(self, "architecture", label)
        if not (isinstance(self.architecture, str) and self.architecture.isprintable()):  # any length:
            # the label made of a factory's module and qualified name may be long
            raise InputError(
                f"architecture must be a string of printable characters (no line breaks or control "
                f"codes), got {validation.shown(self.architecture)}"
            )
        _check_common(self)

    def build_module(self, input_dim: int, output_dim: int, seed: int) -> Any:
        """The module, its parameters initialised under ``seed`` (torch's global generator is
        saved and restored around the constructor, so nothing outside changes), as a float64 copy
        of what the factory returns: a factory may hand out one module of one's own every time,
        and it is then neither converted nor trained in place, nor shared between members and
        replications."""
        torch = require_torch()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self.factory(input_dim, output_dim)
        if not isinstance(module, torch.nn.Module):
            raise InputError(f"factory must return a torch.nn.Module, got {type(module).__name__}")
        if not list(module.parameters()):
            raise InputError(f"factory's module {type(module).__name__} has no parameters")
        if list(module.buffers()):
            raise InputError(
                f"factory's module {type(module).__name__} has buffers; members must hold parameters only"
            )
        return copy.deepcopy(module).to(torch.float64)

    def initial_parameters(self, input_dim: int, output_dim: int, seed: int) -> dict:
        module = self.build_module(input_dim, output_dim, seed)
        return {name: p.detach().clone() for name, p in module.named_parameters()}
