"""mlcb.compare: a policy deploys with the same wrapper however the comparison is given (the
preset's entries, an Entry, a plain tuple, a filter), and that wrapper is the preset's."""

from __future__ import annotations

import pytest

import mlcb
from mlcb import presets
from mlcb.compare import comparison_configs, preset_smoothing
from mlcb.presets import Entry

#: Presets whose settings build in well under a second (the others load data sets or torch).
CHEAP = ("trap", "glm")


def _wrappers(configs) -> dict[tuple[str, int], str]:
    return {(c.policy, c.budget): c.smoothing for c in configs}


@pytest.mark.parametrize("name", CHEAP)
def test_every_way_of_giving_a_policy_deploys_it_alike(name):
    preset = presets.get(name)
    entries = [*preset.comparison, *(e for s in preset.entry_sets.values() for e in s)]
    for entry in entries:
        budget = entry.budgets[:1]
        given = {
            "the preset's": _wrappers(
                comparison_configs(
                    name, entry_set=_set_of(preset, entry), policies=[entry.policy], budget=budget
                )
            ),
            "a tuple": _wrappers(comparison_configs(name, [(entry.policy, budget)])),
            "a tuple with parameters": _wrappers(comparison_configs(name, [(entry.policy, budget, {})])),
            "an Entry": _wrappers(comparison_configs(name, [Entry(entry.policy, budget)])),
        }
        expected = {(entry.policy, budget[0]): preset_smoothing(preset, entry.policy)}
        assert all(found == expected for found in given.values()), (entry, given)


def _set_of(preset, entry) -> str | None:
    if entry in preset.comparison:
        return None
    return next(name for name, entries in preset.entry_sets.items() if entry in entries)


def test_limited_advice_on_the_trap_deploys_its_last_iterate_unless_told_otherwise():
    """The case that was wrong: a tuple switched LimitedAdvice to the experts' default, play counts."""
    for entries in ([("limited-advice", (1,))], [Entry("limited-advice", (1,))], None):
        configs = comparison_configs("trap", entries, policies=["limited-advice"], budget=[1])
        assert [c.smoothing for c in configs] == ["last"]
    told = comparison_configs("trap", [("limited-advice", (1,), {}, "counts")])
    assert [c.smoothing for c in told] == ["counts"]
    everyone = comparison_configs("trap", [("limited-advice", (1,)), ("mlcb", (1,))], smoothing="average")
    assert [c.smoothing for c in everyone] == ["average", "average"]  # a field for every setting


def test_a_policy_the_preset_does_not_name_takes_its_experts_default():
    assert preset_smoothing(presets.get("glm"), "oracle") is None
    (config,) = comparison_configs("glm", [("oracle", (1,))])
    assert config.smoothing == "average"  # the GLM experts' default
    (config,) = comparison_configs("trap", [("oracle", (1,))])
    assert config.smoothing == "counts"


def test_the_recorded_setting_says_which_wrapper_ran():
    result = mlcb.compare("trap", [("mlcb", (1,)), ("limited-advice", (1,))], horizon=500, replications=2)
    meta = result.metadata["settings"]
    assert meta["limited-advice M=1"]["config"]["smoothing"] == "last"
    assert meta["mlcb M=1"]["config"]["smoothing"] == "counts"


@pytest.mark.parametrize("name", CHEAP)
def test_a_single_setting_of_a_preset_deploys_as_its_comparison(name):
    """``Preset.config`` (``mlcb run trap --policy limited-advice``, ``simulate(preset=...)``, a
    sweep) gives a policy the wrapper the preset's comparisons give it; told, or with another
    pool, the wrapper given or the experts' default."""
    import agents

    preset = presets.get(name)
    for entry in [*preset.comparison, *(e for s in preset.entry_sets.values() for e in s)]:
        config = preset.config(entry.budgets[0], policy=entry.policy)
        assert config.smoothing == preset_smoothing(preset, entry.policy), entry
    assert presets.get("trap").config(1, policy="limited-advice", smoothing="counts").smoothing == "counts"
    pool = tuple(agents.make("ucb1") for _ in range(10))
    assert presets.get("trap").config(1, policy="limited-advice", experts=pool).smoothing == "counts"
