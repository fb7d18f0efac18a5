"""torch, optional: importing it with a one-line message when it is missing, devices, CPU threads.

Nothing in :mod:`agents.moe` imports torch when the package is imported; every function that needs
it calls :func:`require_torch`, which raises :class:`MissingTorch` saying what to install.

Examples
--------
>>> TORCH_MESSAGE
"mixture-of-experts pools need torch: pip install 'mlcb[torch]'"
"""

from __future__ import annotations

import re
from typing import Any

from mlcb.validation import InputError, shown

__all__ = [
    "DEVICE_FORMS",
    "DEVICE_MESSAGE",
    "TORCH_MESSAGE",
    "CPUThreads",
    "MissingTorch",
    "require_torch",
    "resolve_device",
]

#: What to install when torch is missing (one line).
TORCH_MESSAGE = "mixture-of-experts pools need torch: pip install 'mlcb[torch]'"

#: What a member's ``device`` may be (any other is refused on construction, before any work):
#: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (and ``"cpu:N"``, which torch reads as the CPU).
DEVICE_FORMS = re.compile(r"auto|(cpu|cuda)(:[0-9]+)?")
#: The start of the message that refuses a device of another form (here and in :func:`resolve_device`).
DEVICE_MESSAGE = "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got "


class MissingTorch(ImportError, InputError):
    """torch is not installed (an ``ImportError``, and an :class:`~mlcb.validation.InputError`,
    a ``ValueError``, so that the command line reports it in one line like any other bad setting)."""


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
        chosen = None
    if chosen is None or chosen.type not in ("cpu", "cuda"):  # torch knows more kinds (mps, meta...)
        raise InputError(DEVICE_MESSAGE + shown(device))
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise InputError(
            f"device {device!r} was asked for but torch sees no CUDA device; use 'auto' or 'cpu'"
        )
    if chosen.type == "cuda" and chosen.index is not None and chosen.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise InputError(f"device {device!r}: torch sees {count} CUDA device(s), cuda:0 to cuda:{count - 1}")
    return chosen


class CPUThreads:
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
