"""A setting's identity covers everything that decides its numbers (issue 36, item 2): a run that
resumes from parts never mixes in another setting's replications.

The key of a setting (:meth:`mlcb.config.SimulationConfig.key`) digests each expert in full (its
``get_params()``, else every attribute, private ones included, and the code of a class of one's
own), the object registered behind each name, mlcb's version; the parts folder records the engine
too. Parts made otherwise are refused with one line naming what differs; a setting whose identity
cannot be established refuses to resume, saying how to give it.
"""

from __future__ import annotations

import collections
import datetime
import functools
import operator
import shutil
import threading
import warnings

import numpy as np
import pytest

import mlcb
from mlcb import _version, policies
from mlcb.config import SimulationConfig
from mlcb.errors import CorruptPartWarning
from mlcb.storage.identity import describe
from mlcb.storage.replications import IDENTITY
from mlcb.validation import InputError

MEANS = [[0.2, 0.8], [0.5, 0.5]]


class FixedArm:
    """A Python expert that always pulls one arm, kept in a private attribute."""

    def __init__(self, arm: int) -> None:
        self._arm = arm

    def learn(self, data):
        return data.loss(self._arm)

    def deploy(self, data):
        return data.loss(self._arm), data.mean(self._arm)


def _config(experts, **fields) -> SimulationConfig:
    values = {
        "env": "mlcb/BanditExperts-v0",
        "env_params": {"reward_means": MEANS},
        "experts": tuple(experts),
        "horizon": 200,
        "replications": 3,
        "checkpoints": 5,
    }
    return SimulationConfig(**{**values, **fields})


def _regret(result) -> np.ndarray:
    return result.curves["regret"].to_numpy()


def test_a_private_attribute_is_part_of_the_key_and_resume_does_not_mix(tmp_path):
    """The issue's case: ``_arm=0`` and ``_arm=1`` had one key, and the second simulate reused the
    first pool's replications."""
    zero, one = _config([FixedArm(0)] * 2), _config([FixedArm(1)] * 2)
    assert zero.key() != one.key()
    mlcb.simulate(zero, parts=tmp_path)
    resumed = mlcb.simulate(one, parts=tmp_path)
    fresh = mlcb.simulate(one)
    assert (_regret(resumed) == _regret(fresh)).all()
    assert not (_regret(resumed) == _regret(mlcb.simulate(zero))).all()


def test_the_same_setting_resumes(tmp_path):
    config = _config([FixedArm(0), FixedArm(1)])
    first = mlcb.simulate(config, parts=tmp_path)
    folder = tmp_path / config.key()
    assert IDENTITY in {p.name for p in folder.iterdir()}
    again = mlcb.simulate(_config([FixedArm(0), FixedArm(1)]), parts=tmp_path)
    assert (_regret(first) == _regret(again)).all()


def test_a_policy_registered_again_under_a_builtin_name_gets_another_key(tmp_path, monkeypatch):
    """A plugin that registers ``mlcb`` for another policy does not get the real M-LCB's key, and
    its run does not reuse M-LCB's parts."""
    real = _config([FixedArm(0), FixedArm(1)], budget=1)
    mlcb.simulate(real, parts=tmp_path)
    real_key = real.key()
    monkeypatch.setattr(policies.registry, "_entries", dict(policies.registry._entries))
    with pytest.warns(UserWarning, match="policy 'mlcb' is now 'mlcb.policies.references:RoundRobin'"):
        policies.register("mlcb", "mlcb.policies.references:RoundRobin", summary="not M-LCB", override=True)
    impostor = _config([FixedArm(0), FixedArm(1)], budget=1)
    assert impostor.key() != real_key
    assert impostor.identity().value["policy"]["object"] == "mlcb.policies.references:RoundRobin"
    resumed = mlcb.simulate(impostor, parts=tmp_path)
    reference = mlcb.simulate(_config([FixedArm(0), FixedArm(1)], budget=1, policy="round-robin"))
    assert (_regret(resumed) == _regret(reference)).all()


def test_the_package_version_is_part_of_the_key(monkeypatch):
    key = _config([FixedArm(0)] * 2).key()
    monkeypatch.setattr(_version, "__version__", "0.0.1")
    config = _config([FixedArm(0)] * 2)  # a description computes its identity once
    assert config.key() != key
    assert config.identity().value["mlcb"] == "0.0.1"


def test_parts_of_another_version_are_refused_with_a_line_naming_it(tmp_path, monkeypatch):
    """Parts copied under the current key but made by another version (their record says so) are
    refused, set aside, and recomputed; the warning names the version."""
    config = _config([FixedArm(0), FixedArm(1)])
    monkeypatch.setattr(_version, "__version__", "0.0.1")
    mlcb.simulate(config, parts=tmp_path / "old")
    (old_folder,) = (tmp_path / "old").iterdir()
    monkeypatch.undo()
    shutil.copytree(old_folder, tmp_path / "new" / config.key())
    with pytest.warns(CorruptPartWarning) as caught:
        resumed = mlcb.simulate(config, parts=tmp_path / "new")
    (message,) = [str(w.message) for w in caught]
    assert f"mlcb version '0.0.1', this run {mlcb.__version__!r}" in message
    assert "parts refused" in message and "replications recomputed" in message
    assert (_regret(resumed) == _regret(mlcb.simulate(config))).all()
    assert [p.name.split(".")[1].split("-")[0] for p in (tmp_path / "new").iterdir() if "." in p.name] == [
        "mismatched"
    ]


def test_parts_without_a_record_are_refused_as_an_older_mlcb(tmp_path):
    config = _config([FixedArm(0), FixedArm(1)])
    mlcb.simulate(config, parts=tmp_path)
    (tmp_path / config.key() / IDENTITY).unlink()
    with pytest.warns(
        CorruptPartWarning, match=r"parts refused, they carry no identity.json \(made by an older mlcb\)"
    ):
        mlcb.simulate(config, parts=tmp_path)


def test_parts_of_another_engine_are_refused(tmp_path):
    config = mlcb.presets.get("trap").config(2, horizon=300, replications=2)
    mlcb.simulate(config, parts=tmp_path, engine="python")
    with pytest.warns(CorruptPartWarning, match=r"engine 'python', this run 'compiled'"):
        compiled = mlcb.simulate(config, parts=tmp_path, engine="compiled")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = mlcb.simulate(config, parts=tmp_path, engine="compiled")  # its own parts: no warning
    assert (_regret(compiled) == _regret(again)).all()


class Opaque(FixedArm):
    """Holds an object with neither parameters nor attributes (as a C extension's may be)."""

    def __init__(self, arm: int) -> None:
        super().__init__(arm)
        self._handle = object()


class OpaqueWithParams(Opaque):
    def get_params(self) -> dict:
        return {"arm": self._arm}


def test_an_expert_that_cannot_be_described_refuses_to_resume(tmp_path):
    config = _config([Opaque(0), Opaque(1)])
    with pytest.raises(InputError) as caught:
        mlcb.simulate(config, parts=tmp_path)
    assert str(caught.value) == (
        "mlcb M=1: cannot resume from saved parts: experts[0] (Opaque)._handle holds a builtins:object object, "
        "which has neither parameters nor attributes, so this setting cannot be told from another; give the "
        "expert's class a get_params() method that returns what decides its numbers as plain values "
        "(numbers, strings, lists, dicts, arrays), or run without parts"
    )
    assert not any(tmp_path.iterdir())
    mlcb.simulate(config)  # without parts it runs
    locked = FixedArm(0)
    locked.lock = threading.Lock()
    with pytest.raises(InputError, match=r"experts\[0\] \(FixedArm\)\.lock holds a _thread:lock object"):
        _config([locked] * 2).check_resumable()


def test_get_params_is_the_identity_hook(tmp_path):
    zero, one = _config([OpaqueWithParams(0)] * 2), _config([OpaqueWithParams(1)] * 2)
    assert zero.identity().problems == [] and zero.key() != one.key()
    first = mlcb.simulate(zero, parts=tmp_path)
    assert (_regret(first) == _regret(mlcb.simulate(zero, parts=tmp_path))).all()


def _class(body: str) -> type:
    namespace: dict = {}
    exec(
        f"class Expert(FixedArm):\n    def learn(self, data):\n        {body}\n",
        {"FixedArm": FixedArm, "__name__": "my_experiments"},
        namespace,
    )
    return namespace["Expert"]


def test_the_code_of_ones_own_class_is_part_of_the_key():
    """Editing an expert's ``learn`` makes another setting: same class name, same attributes."""
    first, second = _class("return data.loss(self._arm)"), _class("return 1.0 - data.loss(self._arm)")
    assert first.__qualname__ == second.__qualname__
    assert _config([first(0)] * 2).key() != _config([second(0)] * 2).key()
    assert _config([first(0)] * 2).key() == _config([_class("return data.loss(self._arm)")(0)] * 2).key()


class WithRate(FixedArm):
    def __init__(self, arm: int, rate) -> None:
        super().__init__(arm)
        if callable(rate):
            self.rate = rate
        else:
            self._held = rate


class Window(collections.deque):
    """A container of one's own over a C one: its items are no attribute."""


def _rate(scale: float):
    return lambda n, delta_prime: scale * np.sqrt(n)


@pytest.mark.filterwarnings("ignore:.*WithRate holds a random generator")
@pytest.mark.parametrize(
    ("first", "second"),
    [
        (WithRate(0, _rate(1.0)), WithRate(0, _rate(2.0))),  # a closure's value
        (WithRate(0, lambda n, d: np.sqrt(n)), WithRate(0, lambda n, d: np.sqrt(n) / 2)),  # code
        (WithRate(0, np.array([1.0, 2.0])), WithRate(0, np.array([1.0, 3.0]))),  # an array's bytes
        (WithRate(0, np.random.default_rng(1)), WithRate(0, np.random.default_rng(2))),  # a state
        (WithRate(0, {"a": [1, (2, 3)]}), WithRate(0, {"a": [1, (2, 4)]})),  # nested values
        # State kept in C, which no attribute shows (partials had one key whatever they held):
        (
            WithRate(0, functools.partial(operator.mul, 1.0)),
            WithRate(0, functools.partial(operator.mul, 0.0)),
        ),
        (WithRate(0, collections.deque([0.1], maxlen=3)), WithRate(0, collections.deque([0.2], maxlen=3))),
        (WithRate(0, Window([0.1])), WithRate(0, Window([0.2]))),  # a subclass of one's own
        (WithRate(0, [0.1].append), WithRate(0, [0.2].append)),  # a built-in method's object
        (WithRate(0, datetime.date(2024, 1, 1)), WithRate(0, datetime.date(2024, 1, 2))),
    ],
    ids=["closure", "code", "array", "generator", "nested", "partial", "deque", "subclass", "method", "date"],
)
def test_every_value_an_expert_holds_decides_the_key(first, second):
    assert describe(first).problems == [] and describe(second).problems == []
    assert _config([first] * 2).key() != _config([second] * 2).key()


def test_a_cycle_and_shared_objects_are_described():
    expert = FixedArm(0)
    expert.me = expert
    expert.shared = [expert.__dict__, expert.__dict__]
    described = describe(expert)
    assert described.problems == [] and described.value["attributes"]["me"] == "<cycle>"


def test_keys_of_a_builtin_setting_are_stable_across_processes():
    """The key is the same in every process (sweep workers check theirs against the client's)."""
    import subprocess
    import sys

    code = "import mlcb; print(mlcb.presets.get('trap').config(2).key())"
    keys = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout for _ in range(2)
    }
    assert keys == {mlcb.presets.get("trap").config(2).key() + "\n"}


def test_a_model_is_described_by_its_weights_and_a_frame_by_its_columns():
    """Neighbours of a private attribute: two torch networks with other weights, two frames with
    other column names, hold objects whose attributes alone say nothing."""
    import pandas as pd

    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    first, same = torch.nn.Linear(3, 2), None
    torch.manual_seed(0)
    same = torch.nn.Linear(3, 2)
    other = torch.nn.Linear(3, 2)
    keys = [identity_digest(m) for m in (first, same, other)]
    assert keys[0] == keys[1] != keys[2]
    frames = [pd.DataFrame({"a": [1, 2]}), pd.DataFrame({"b": [1, 2]}), pd.DataFrame({"a": [1, 3]})]
    assert len({identity_digest(f) for f in frames}) == 3


def identity_digest(value) -> str:
    from mlcb.storage.identity import digest

    described = describe(value)
    assert described.problems == []
    return digest(described.value)


def _helped(helpers, tail: str = "") -> type:
    """An expert class (defined in the module ``my_experiments``) whose ``learn`` calls
    ``helpers.scaled``, a helper of its own module ``local`` and reads the constant ``SHIFT``."""
    globals_ = {"FixedArm": FixedArm, "__name__": "my_experiments", "helpers": helpers, "SHIFT": 0.0}
    exec(
        "def local(loss):\n    return loss + SHIFT\n"
        "class Helped(FixedArm):\n    def learn(self, data):\n"
        "        return local(helpers.scaled(data.loss(self._arm)))\n" + tail,
        globals_,
    )
    return globals_["Helped"]


def test_a_helper_of_ones_own_that_an_expert_calls_decides_the_key(tmp_path, monkeypatch):
    """Editing a function that an expert's ``learn`` calls, in its own module or in another module
    of one's own, or a constant it reads, makes another setting: the parts of the old code are not
    mixed in."""
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(tmp_path))

    def helpers(body: str):
        (tmp_path / "my_helpers.py").write_text(f"def scaled(loss):\n    return {body}\n")
        sys.modules.pop("my_helpers", None)
        return importlib.import_module("my_helpers")

    def key(expert_class) -> str:
        return _config([expert_class(0)] * 2).key()

    first = key(_helped(helpers("loss")))
    assert key(_helped(helpers("loss"))) == first
    assert key(_helped(helpers("0.5 * loss"))) != first  # another module's helper edited
    same_module = _helped(helpers("loss"))
    same_module.learn.__globals__["SHIFT"] = 0.25  # a constant of its own module
    assert key(same_module) != first
    edited = _helped(helpers("loss"))
    exec("def local(loss):\n    return 2 * loss\n", edited.learn.__globals__)  # a helper of its module
    assert key(edited) != first
    sys.modules.pop("my_helpers", None)


def test_code_that_names_itself_is_described():
    """A method that names its own class, and functions that call each other, end."""
    helped = _helped(None, "    def again(self):\n        return Helped, local\n")
    helped.learn.__globals__["local"].__globals__["Helped"] = helped
    assert describe(helped(0)).problems == []
    assert _config([helped(0)] * 2).key() == _config([helped(0)] * 2).key()
