"""What the commands print: the summary of a run and the registered names (``mlcb list``)."""

from __future__ import annotations

import argparse
from collections.abc import Hashable
from typing import Any

#: The summary columns printed (names of :data:`mlcb.storage.results.SUMMARY_COLUMNS`), before the seconds.
_PRINTED_COLUMNS = (
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
    from mlcb.storage.results import summary_table
    from mlcb.validation import printable

    summary = result.summary()
    calibration = ", ".join(sorted(printable(c) for c in summary["calibration"].unique()))
    table = summary_table(summary, _PRINTED_COLUMNS)
    print(f"{len(table)} setting(s), calibration {calibration}, {elapsed:.1f} s")
    settings = result.metadata.get("settings", {})
    table["seconds"] = [
        seconds(settings.get(label, {}).get("seconds") if isinstance(settings.get(label), dict) else None)
        for label in table["setting"]
    ]
    table["setting"] = [printable(label) for label in table["setting"]]
    for column in table.columns[1:]:
        table[column] = column_text(table[column], "{:,.1f}" if column == "seconds" else None)
    widths: dict[Hashable, int] = {
        column: 2 + max(len(column), *(len(str(v)) for v in table[column])) for column in table.columns[1:]
    }
    for line in table.to_string(index=False, col_space=widths).splitlines():
        print(printable(line))
    for setting in settings.values():  # a certificate that is not a number is never shown without a word
        if isinstance(setting, dict) and isinstance(setting.get("certificate_problem"), str):
            print(printable(f"note: {setting['certificate_problem']}"))


#: What a table shows where there is no number (a policy without a certificate has no share of
#: runs that exceeded it).
NO_NUMBER = "–"


def column_text(values: Any, form: str | None = None) -> list[str]:
    """A column of numbers (a pandas Series) as text, every row in one form: ``form`` (a format
    string) when given; whole numbers of an integer column as they are; else the form of the
    column's largest magnitude (three decimals below 10, whole numbers with separators above), so
    that one row never reads ``35`` and the next ``5.050``; :data:`NO_NUMBER` where a value is
    missing.

    Examples
    --------
    >>> import pandas as pd
    >>> column_text(pd.Series([35.2, 5.05, float("nan")]), "{:,.1f}")
    ['35.2', '5.0', '–']
    >>> column_text(pd.Series([0.5, float("nan")])), column_text(pd.Series([2_000, 20]))
    (['0.500', '–'], ['2,000', '20'])
    """
    import pandas as pd

    numbers = pd.to_numeric(values, errors="coerce").astype(float)
    finite = numbers[numbers.notna() & (numbers.abs() != float("inf"))]
    if form is None:
        if pd.api.types.is_integer_dtype(values):
            form = "{:,.0f}"
        else:
            form = "{:,.3f}" if finite.empty or finite.abs().max() < 10 else "{:,.0f}"
    return [form.format(v) if v == v and abs(v) != float("inf") else NO_NUMBER for v in numbers]


def seconds(value: Any) -> float:
    """``value`` as a float (NaN unless it is a real number)."""
    from mlcb import validation

    return float(value) if validation.is_real(value) else float("nan")


#: The sections of ``mlcb list``, in the order it prints them.
LIST_SECTIONS = ("presets", "policies", "experts", "environments", "figures", "writers")


def list_names(args: argparse.Namespace) -> int:
    """``mlcb list [SECTION ...]``: every registered name with its one-line summary, in every
    section or in those named (:data:`LIST_SECTIONS`)."""
    sections = getattr(args, "sections", None) or LIST_SECTIONS
    for section in LIST_SECTIONS:
        if section in sections:
            _LISTERS[section]()
    return 0


def _list_presets() -> None:
    from mlcb import presets

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


def _list_policies() -> None:
    from mlcb import policies
    from mlcb.validation import printable

    print("policies:")
    for name in policies.names():
        print(printable(f"  {name:<16} {policies.registry.entry(name).summary}"))


def _list_experts() -> None:
    import agents
    from mlcb.validation import printable

    print("experts (a pool is of one family; each runs on the environments named):")
    for name in agents.names():
        entry = agents.registry.entry(name)
        print(printable(f"  {name:<16} {entry.summary}"))
        if entry.environments:
            print(printable(f"  {'':<16} runs on {', '.join(entry.environments)}"))
    print(
        "  (and any Python learner with learn and deploy, river and scikit-learn models among them, on "
        "any environment: docs/python-experts.md)"
    )


def _list_environments() -> None:
    import agents
    import envs
    from mlcb.validation import printable

    fits: dict[str, list[str]] = {}
    for name in agents.names():
        for environment in agents.registry.entry(name).environments:
            fits.setdefault(environment, []).append(name)
    print("environments:")
    for name in envs.names():
        print(printable(f"  {name:<24} {envs.registry.entry(name).summary}"))
        if name in fits:
            print(printable(f"  {'':<24} experts: {', '.join(fits[name])}"))
        if name == "mlcb/GLM-v0":
            from envs.links import LINK_NAMES

            print(f"  {'':<24} links (its target_link, an ogd expert's link): {', '.join(LINK_NAMES)}")


def _list_figures() -> None:
    from mlcb.storage import outputs
    from mlcb.validation import printable

    print("figures (mlcb plot --kind NAME):")
    for name in outputs.FIGURES.names():
        print(printable(f"  {name:<16} {outputs.FIGURES.entry(name).summary}"))


def _list_writers() -> None:
    from mlcb.storage import outputs
    from mlcb.validation import printable

    print("writers (mlcb run --write NAME):")
    for name in outputs.WRITERS.names():
        files = ", ".join(outputs.writer_files(name))
        print(printable(f"  {name:<16} {outputs.WRITERS.entry(name).summary} ({files})"))


_LISTERS = {
    "presets": _list_presets,
    "policies": _list_policies,
    "experts": _list_experts,
    "environments": _list_environments,
    "figures": _list_figures,
    "writers": _list_writers,
}
