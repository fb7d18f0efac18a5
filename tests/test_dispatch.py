"""mlcb.kernels.dispatch: a compiled kernel called again without Numba's dispatch, only where
the arguments' types are those it met (their key tells every type apart that Numba does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

from mlcb.kernels import dispatch
from mlcb.kernels.constants import Constants
from mlcb.kernels.jit import JIT_DISABLED, kernel


@dataclass(frozen=True)
class _Paths(Constants):
    doubled: bool


class _Params(NamedTuple):
    paths: _Paths
    values: np.ndarray


class _Other(NamedTuple):
    paths: _Paths
    values: np.ndarray


def _variants() -> dict[str, tuple]:
    """Argument tuples, each of other Numba types than the others."""
    values = np.arange(6.0)
    readonly = values.copy()
    readonly.flags.writeable = False
    grid = values.reshape(2, 3)
    return {
        "float64": (values,),
        "int64": (np.arange(6),),
        "two dimensions": (grid,),
        "Fortran order": (np.asfortranarray(grid),),
        "strided": (values[::2],),
        "read-only": (readonly,),
        "big-endian": (values.astype(">f8"),),
        "named tuple": (_Params(_Paths(False), values),),
        "other constants": (_Params(_Paths(True), values),),
        "other class": (_Other(_Paths(False), values),),
        "plain tuple": ((_Paths(False), values),),
        "int": (3,),
        "uint64 int": (2**63,),
        "float": (3.0,),
        "bool": (True,),
        "numpy int32": (np.int32(3),),
        "numpy float32": (np.float32(3),),
    }


def test_every_type_numba_tells_apart_has_a_key_of_its_own():
    keys = {name: dispatch.types_key(arguments) for name, arguments in _variants().items()}
    assert None not in keys.values()
    assert len(set(keys.values())) == len(keys), keys
    again = dispatch.types_key((_Params(_Paths(False), np.zeros(4)),))  # other values, same types
    assert again == keys["named tuple"]
    assert dispatch.types_key((-(2**63),)) == keys["int"]  # int64's least, as Numba counts its bits
    assert dispatch.types_key((2**64,)) != keys["uint64 int"]  # too large for Numba


@pytest.mark.skipif(JIT_DISABLED, reason="Numba's types")
def test_keys_equal_where_numbas_types_are_equal():
    """Where two argument tuples have one key, Numba types them alike: the compiled function
    chosen for one is the other's."""
    from numba import typeof

    variants = [arguments for name, arguments in _variants().items() if name != "big-endian"]  # not typed
    for arguments in variants:
        for other in variants:
            if dispatch.types_key(arguments) == dispatch.types_key(other):
                assert typeof(arguments) == typeof(other)


@pytest.mark.skipif(JIT_DISABLED, reason="Numba's typed lists")
def test_a_typed_list_is_keyed_by_its_type():
    from numba import typed, typeof

    floats, ints = typed.List([1.0]), typed.List([1])
    assert dispatch.types_key((floats,)) == dispatch.types_key((typed.List([2.0, 3.0]),))
    assert dispatch.types_key((floats,)) != dispatch.types_key((ints,))
    assert typeof(floats) != typeof(ints)
    assert dispatch.types_key((typed.List(),)) is None  # not typed yet


def test_an_argument_it_cannot_read_has_no_key():
    assert dispatch.types_key((object(),)) is None
    assert dispatch.types_key((np.zeros(2), [1.0])) is None


@kernel
def _total(params, scale):
    total = 0.0
    for value in params.values:
        total += value
    return 2 * scale * total if params.paths.doubled else scale * total


@pytest.mark.skipif(JIT_DISABLED, reason="no dispatch without the JIT")
def test_a_call_runs_the_function_the_dispatcher_chose_for_those_types():
    """The second call with arguments of the same types skips the dispatch; arguments whose
    constants differ (another compiled path) get their own function, never the first one."""
    plain, doubled = _Params(_Paths(False), np.arange(4.0)), _Params(_Paths(True), np.arange(4.0))
    assert dispatch.call(_total, plain, 1.0) == 6.0
    assert (_total, dispatch.types_key((plain, 1.0))) in dispatch._ENTRIES
    assert dispatch.call(_total, plain, 2.0) == 12.0
    assert dispatch.call(_total, doubled, 1.0) == 12.0  # a second signature: typed exactly
    assert dispatch.call(_total, plain, 1.0) == 6.0
    assert dispatch.call(_total, doubled, 0.5) == 6.0
    keyed = {k for d, k in dispatch._ENTRIES if d is _total}
    assert keyed == {dispatch.types_key((plain, 1.0)), dispatch.types_key((doubled, 1.0))}
