"""Compile-time constants in a kernel's parameters: one compiled round loop per combination of paths.

A family's or a policy's kernels serve every variant of it: a bandit pool's arm choice for each of
its algorithms, each smoothing wrapper, each kind of rate. Chosen at run time by codes,
every path is compiled into every round loop, and the loop carries them all (more code, more
values kept at hand, more branches), though a run takes one. A :class:`Constants` field of a
parameter ``NamedTuple`` says which paths a run takes, as *compile-time* constants: its values are
part of the argument's type, so the round loop is compiled (and cached on disk, like any other
signature) once for each combination a run actually uses, and LLVM removes the paths it does not
take. Kernels read its fields as attributes::

    @dataclass(frozen=True)
    class MyPaths(Constants):
        smoothing: int
        clipped: bool

    class MyPoolParams(NamedTuple):
        paths: MyPaths
        ...

    @kernel
    def _train(params, state, env_params, env_state, k, t):
        if params.paths.clipped:  # a constant: the other branch is not compiled in
            ...

Values are ``bool``, ``int`` or ``float``. Keep them few and coarse (which paths, never a size or a
constant of the model that changes from run to run): each new combination costs a compilation of
the round loop. With Numba's JIT disabled they are plain attributes of a frozen dataclass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mlcb.kernels.jit import JIT_DISABLED
from mlcb.validation import InputTypeError

_ALLOWED = (bool, int, float)


@dataclasses.dataclass(frozen=True)
class Constants:
    """Base class of a frozen dataclass of compile-time constants (module doc)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) not in _ALLOWED:
                raise InputTypeError(
                    f"{type(self).__name__}.{field.name} must be a bool, int or float, got {value!r}"
                )

    def items(self) -> tuple[tuple[str, Any], ...]:
        """``(name, value)`` of every field, in order."""
        return tuple((field.name, getattr(self, field.name)) for field in dataclasses.fields(self))


if not JIT_DISABLED:
    from numba.core import types
    from numba.core.typing.templates import AttributeTemplate
    from numba.extending import (
        NativeValue,
        box,
        infer_getattr,
        lower_getattr_generic,
        models,
        register_model,
        typeof_impl,
        unbox,
    )

    def _value_type(value: Any) -> Any:
        return (
            types.boolean
            if isinstance(value, bool)
            else types.int64
            if isinstance(value, int)
            else types.float64
        )

    class ConstantsType(types.Type):
        """The Numba type of a :class:`Constants` instance: its class and its values."""

        def __init__(self, instance_class: type, values: tuple[tuple[str, Any], ...]) -> None:
            self.instance_class = instance_class
            self.values = values
            shown = ", ".join(f"{name}={value!r}" for name, value in values)
            super().__init__(name=f"{instance_class.__qualname__}({shown})")

        @property
        def key(self) -> Any:
            return self.instance_class, self.values

    @typeof_impl.register(Constants)
    def _typeof(value: Constants, context: Any) -> ConstantsType:
        return ConstantsType(type(value), value.items())

    # Nothing to carry at run time: the values live in the type.
    register_model(ConstantsType)(models.OpaqueModel)

    @unbox(ConstantsType)
    def _unbox(typ: Any, obj: Any, c: Any) -> Any:
        return NativeValue(c.context.get_constant_null(typ))

    @box(ConstantsType)
    def _box(typ: Any, val: Any, c: Any) -> Any:
        instance = typ.instance_class(**dict(typ.values))
        return c.pyapi.unserialize(c.pyapi.serialize_object(instance))

    @infer_getattr
    class _Attributes(AttributeTemplate):
        key = ConstantsType

        def generic_resolve(self, typ: Any, attr: str) -> Any:
            values = dict(typ.values)
            return _value_type(values[attr]) if attr in values else None

    @lower_getattr_generic(ConstantsType)
    def _getattr(context: Any, builder: Any, typ: Any, value: Any, attr: str) -> Any:
        constant = dict(typ.values)[attr]
        return context.get_constant(_value_type(constant), constant)
