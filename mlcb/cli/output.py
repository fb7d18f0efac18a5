"""What the commands print: the summary of a run and the registered names (``mlcb list``)."""

from __future__ import annotations

import argparse
from typing import Any

#: The summary columns printed (names of :data:`mlcb.storage.results.SUMMARY_COLUMNS`), before the seconds.
PRINTED_COLUMNS = (
    "setting",
    "rounds",
    "replications",
    "regret",
    "regret_std",
    "pseudo_regret",
    "best_deployed_share",
    "certificate_violations",
)


def print_summary(result: Any, elapsed: float) -> None:
    """The summary table of ``result`` as the commands print it, with each setting's seconds."""
    from mlcb.report import number, printable
    from mlcb.storage.results import summary_table

    summary = result.summary()
    calibration = ", ".join(sorted(printable(c) for c in summary["calibration"].unique()))
    table = summary_table(summary, PRINTED_COLUMNS)
    print(f"{len(table)} setting(s), calibration {calibration}, {elapsed:.1f} s")
    settings = result.metadata.get("settings", {})
    table["seconds"] = [
        seconds(settings.get(label, {}).get("seconds") if isinstance(settings.get(label), dict) else None)
        for label in table["setting"]
    ]
    table["setting"] = [printable(label) for label in table["setting"]]
    for line in table.to_string(index=False, float_format=number).splitlines():
        print(printable(line))
    for setting in settings.values():  # a certificate that is not a number is never shown without a word
        if isinstance(setting, dict) and isinstance(setting.get("certificate_problem"), str):
            print(printable(f"note: {setting['certificate_problem']}"))


def seconds(value: Any) -> float:
    """``value`` as a float (NaN unless it is a real number)."""
    from mlcb import validation

    return float(value) if validation.is_real(value) else float("nan")


def list_names(args: argparse.Namespace) -> int:
    """``mlcb list``: every registered name with its one-line summary."""
    import agents
    import envs
    from mlcb import policies, presets
    from mlcb.storage import outputs

    print("presets:")
    for name in presets.names():
        preset = presets.get(name)
        print(f"  {name:<16} {preset.description}")
        print(
            f"  {'':<16} calibrations: {', '.join(preset.calibrations)}; budgets {list(preset.budgets)}, "
            f"T = {preset.horizon:,}, R = {preset.replications}"
        )
        comparison = "; ".join(f"{e.policy} M in {list(e.budgets)}" for e in preset.comparison)
        if comparison:
            print(f"  {'':<16} comparison (mlcb compare {name}): {comparison}")
        for set_name in preset.entry_sets:
            print(f"  {'':<16} comparison set: mlcb compare {name} --set {set_name}")
    print("policies:")
    for name in policies.names():
        print(f"  {name:<16} {policies.registry.entry(name).summary}")
    print("experts (a pool is of one family; each runs on the environments named):")
    fits: dict[str, list[str]] = {}
    for name in agents.names():
        entry = agents.registry.entry(name)
        print(f"  {name:<16} {entry.summary}")
        if entry.environments:
            print(f"  {'':<16} runs on {', '.join(entry.environments)}")
        for environment in entry.environments:
            fits.setdefault(environment, []).append(name)
    print(
        "  (and any Python learner with learn and deploy, river and scikit-learn models among them, on "
        "any environment: docs/python-experts.md)"
    )
    print("environments:")
    for name in envs.names():
        print(f"  {name:<24} {envs.registry.entry(name).summary}")
        if name in fits:
            print(f"  {'':<24} experts: {', '.join(fits[name])}")
        if name == "mlcb/GLM-v0":
            from envs.links import LINK_NAMES

            print(f"  {'':<24} links (its target_link, an ogd expert's link): {', '.join(LINK_NAMES)}")
    print("figures (mlcb plot --kind NAME):")
    for name in outputs.FIGURES.names():
        print(f"  {name:<16} {outputs.FIGURES.entry(name).summary}")
    print("writers (mlcb run --write NAME):")
    for name in outputs.WRITERS.names():
        files = ", ".join(outputs.writer_files(name))
        print(f"  {name:<16} {outputs.WRITERS.entry(name).summary} ({files})")
    return 0
