"""The settings a command names: a preset or a TOML setting file, with the options that override
them (``--budget``, ``--horizon``, ``--setting-label``, ``--data``, ``--device``, ...)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from mlcb.validation import InputError


def data_params(args: argparse.Namespace) -> dict[str, Any]:
    """``env_params`` of ``--data`` and ``--label`` (empty without them)."""
    data, label = getattr(args, "data", None), getattr(args, "label", None)
    if data is None:
        if label is not None:
            raise InputError("label: --label names a column of the --data file; give --data PATH too")
        return {}
    return {"dataset": str(data), **({"label": label} if label is not None else {})}


def check_data_target(env: str, what: str, args: argparse.Namespace) -> None:
    if data_params(args) and env != "mlcb/RealData-v0":
        raise InputError(f"data: --data applies to real-data settings (env mlcb/RealData-v0), not to {what}")


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    fields = {
        "horizon": args.horizon,
        "replications": args.replications,
        "seed": args.seed,
        "policy": getattr(args, "policy", None),
        "delta": args.delta,
        "label": getattr(args, "setting_label", None),
    }
    return {key: value for key, value in fields.items() if value is not None}


#: The options of reading a data file that the command line has no flag for (``env_params`` set
#: them, from Python or a TOML setting), as the messages that suggest them spell them.
_FILE_OPTIONS = ("missing=", "columns=", "constant=", "min_class_rows")


def configs(args: argparse.Namespace) -> tuple[str, list]:
    """The target's settings, one per budget; an error that suggests an option of reading the
    ``--data`` file says where that option is set."""
    return with_file_advice(args, lambda: _target_configs(args))


def with_file_advice(args: argparse.Namespace, build: Any) -> Any:
    """``build()``; an error that suggests an option of reading the ``--data`` file (which the
    command line has no flag for) says where that option is set (``mlcb run`` and ``mlcb
    compare`` alike)."""
    try:
        return build()
    except InputError as error:
        message = str(error)
        if not data_params(args) or not any(option in message for option in _FILE_OPTIONS):
            raise
        raise type(error)(
            f"{message} (--data reads the file with the defaults: edit the file, or set this in "
            "env_params from Python or a TOML setting; docs/real-data.md)"
        ) from error


def _target_configs(args: argparse.Namespace) -> tuple[str, list]:
    if args.target.endswith(".toml"):
        from mlcb.config.toml import load_toml

        if getattr(args, "calibration", None) is not None:  # was dropped without a word
            raise InputError(
                f"calibration: --calibration picks a preset's constants; {Path(args.target).name} is a "
                "setting file, which sets its own: write them in the file (policy_params, the experts' "
                "parameters) and name them with its calibration key"
            )
        fields = overrides(args)
        if data_params(args):  # --data and --label update the file's env_params
            check_data_target(toml_env(args.target), Path(args.target).name, args)
            fields["env_params"] = data_params(args)
        return load_toml(args.target, budget=args.budget, **fields)
    from mlcb import validation
    from mlcb.config.toml import budget_label

    preset = preset_named(args.target, "run")
    budgets = list(preset.budgets) if args.budget is None else validation.budgets("budget", args.budget)
    fields = overrides(args)
    label = fields.pop("label", None)
    check_data_target(preset.env, f"preset {preset.name!r}", args)
    if preset.env == "mlcb/RealData-v0" and data_params(args):
        fields["env_params"] = data_params(args)
    return preset.name, [
        preset.config(m, args.calibration, label=budget_label(label, m, len(budgets)), **fields)
        for m in budgets
    ]


def preset_named(target: str, command: str) -> Any:
    """The preset ``target`` names (:func:`mlcb.presets.get`); a target that is no preset but a
    path (a file whose name does not end in ``.toml``, a folder, a device) or names a TOML file is
    refused saying what ``command`` reads (it was "unknown preset", as if misspelt)."""
    from mlcb import presets
    from mlcb.validation import shown

    # (os.path.exists: a name too long for a path is no path; Path.exists raised on it)
    if target not in presets.PRESETS and (target.lower().endswith(".toml") or os.path.exists(target)):
        reads = (
            "a preset (see `mlcb list`) or a TOML setting file, whose name ends in .toml"
            if command == "run"
            else "a preset (see `mlcb list`); a setting file runs with 'mlcb run FILE', a grid with "
            "'mlcb sweep FILE'"
        )
        raise InputError(f"target: {shown(target)} is no preset; mlcb {command} takes {reads}")
    return presets.get(target)


def toml_env(path: str) -> str:
    """The ``env`` a TOML setting file names (the default when it names none); a file that cannot
    be read as TOML (a folder, a named pipe, not UTF-8, not TOML) is refused in one line."""
    from mlcb import validation

    env = validation.read_toml("target", path)[1].get("env", "mlcb/Trap-v0")  # a special file: refused
    return env if isinstance(env, str) else "mlcb/Trap-v0"


def with_device(configs: list, device: str | None) -> list:
    """``configs`` with every expert that has a ``device`` set to ``device`` (``None``: as is);
    a ``ValueError`` when no expert runs on a device."""
    import dataclasses

    if device is None:
        return configs
    out = []
    for config in configs:
        experts = [
            dataclasses.replace(e, device=device)  # type: ignore[type-var]  # an instance, not a class
            if dataclasses.is_dataclass(e) and "device" in {f.name for f in dataclasses.fields(e)}
            else e
            for e in config.experts
        ]
        if all(new is old for new, old in zip(experts, config.experts)):
            raise InputError(
                f"--device applies to pools of torch networks (e.g. the moe preset), not to {config.label!r}"
            )
        out.append(dataclasses.replace(config, experts=tuple(experts)))
    return out
