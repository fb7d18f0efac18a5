"""The ``mlcb`` command line: ``run``, ``compare``, ``sweep``, ``plot``, ``report``, ``show``, ``list``,
``paper``.

Bad input exits with status 2 and one line on standard error; an interrupted ``run`` keeps every
finished replication and continues from there when the same command is run again. Results and
their parts are kept by :mod:`mlcb.storage.store` (atomic saves, one writer per output directory).

Families and policies of one's own come in through plugins (:mod:`mlcb.registry`): modules named
with ``--plugin MODULE`` (repeatable) and the installed entry points of the group ``mlcb.plugins``,
all loaded when the command starts. A TOML file never makes anything be imported: its
``family = "module:Class"`` is accepted only for a module named with ``--plugin``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

EXAMPLES = """examples:
  mlcb run trap                                  the paper's bandit trap, M in {1, 2, 4}
  mlcb run trap --budget 1 2 3 4 --replications 30 --calibration practical
  mlcb run glm --horizon 10000
  mlcb run my_experiment.toml                    a setting described in TOML (see README)
  mlcb run my.toml --plugin my_families          with families registered by a module of one's own
  mlcb compare trap                              the paper's comparison: M-LCB, LimitedAdvice, CORRAL
  mlcb compare glm --policies mlcb ed2rb         a subset of the glm comparison
  mlcb compare trap --set practitioners          M-LCB against river-style bandits, halving, R-ed-UCB, EXP3.P
  mlcb plot results/trap                         redraw the figures of a saved result
  mlcb sweep grid.toml                           a grid of settings on this machine's cores
  mlcb sweep grid.toml --executor dask --scheduler tcp://HOST:8786   ... on a Dask cluster
  mlcb plot results/my-sweep --kind theory budget   figures of a saved run or sweep
  mlcb report results/my-sweep                   one self-contained HTML page with every figure
  mlcb list                                      presets, policies, experts, environments
  mlcb paper                                     the paper's experiments, one HTML page (--full: its sizes)
"""


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's error format: one line ``mlcb: error: ...``, status 2
    (``--help`` still shows the usage)."""

    def error(self, message: str):
        self.exit(2, f"mlcb: error: {message}\n")


def _path(text: str) -> Path:
    """A path argument; an empty one is refused (it would mean the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path; give a directory or file name")
    return Path(text)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mlcb",
        description="Simulate budgeted expert selection (M-LCB and related policies): regret "
        "curves, the data-dependent certificate and the theory.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run",
        help="simulate a preset or a TOML setting, save results and figures",
        description="Simulate every budget of a preset (or a TOML file), print a summary, save "
        "the results (Parquet + JSON) and a regret figure (PNG) under --out.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("target", help="a preset name (see `mlcb list`) or a .toml file")
    run.add_argument("--policy", help="a policy name (see `mlcb list`; default mlcb)")
    _common_options(run, budgets_help="budgets to run (default: the preset's)")
    _plugin_option(run)

    compare = commands.add_parser(
        "compare",
        help="run a preset's comparison of policies (common random numbers), save and plot it",
        description="Run every policy and budget of a preset's comparison on the same seeds and the "
        "same data stream; print a summary with the time per setting; save one result and the paper's "
        "three panels under --out.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("target", help="a preset name (see `mlcb list`)")
    compare.add_argument("--policies", nargs="+", metavar="NAME", help="keep only these policies")
    compare.add_argument(
        "--set",
        dest="entry_set",
        metavar="NAME",
        help="another comparison of the preset instead of the paper's (practitioners: M-LCB against "
        "river-style bandits, successive halving, R-ed-UCB and EXP3.P at equal budget)",
    )
    _common_options(compare, budgets_help="keep only these budgets (default: the comparison's)")
    _plugin_option(compare)

    plot = commands.add_parser("plot", help="draw the figures of a saved result or sweep")
    plot.add_argument(
        "result", type=_path, help="a directory written by `mlcb run`, `mlcb compare` or `mlcb sweep`"
    )
    plot.add_argument("--out", "-o", type=_path, help="figure directory (default: the result's)")
    _plot_kind_option(plot)
    _sweep_parser(commands)
    _report_parser(commands)

    show = commands.add_parser("show", help="print a saved result's or sweep's summary and metadata")
    show.add_argument(
        "result", type=_path, help="a directory written by `mlcb run`, `mlcb compare` or `mlcb sweep`"
    )

    listing = commands.add_parser("list", help="list presets, policies, expert families and environments")
    _plugin_option(listing)
    _paper_parser(commands)
    return parser


def _paper_parser(commands: Any) -> None:
    from mlcb.paper import EXPERIMENTS  # names only: the experiments are imported when run

    paper = commands.add_parser(
        "paper",
        help="reproduce the paper's experiments: one HTML page, the paper's numbers beside the package's",
        description="Run every experiment of the paper (the trap, the GLM stream, the real-data runs "
        "on stand-in data sets, the lower bound) and write OUT/index.html: each figure, and each "
        "table with the paper's published number beside the package's estimate and its standard "
        "error. By default at a quick size (under half an hour on two cores); --full runs the "
        "paper's sizes. Finished sections are kept under OUT/sections/: an interrupted run resumes.",
    )
    size = paper.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="the quick size (the default)")
    size.add_argument(
        "--full", action="store_true", help="the paper's own sizes (the trap: 100 runs of 250,000 rounds)"
    )
    paper.add_argument(
        "--out",
        "-o",
        type=_path,
        default=Path("results/paper"),
        help="output directory (default: results/paper)",
    )
    paper.add_argument("--seed", "-s", type=int, default=0, help="seed of every simulation (default 0)")
    paper.add_argument("--threads", "-j", type=int, help="worker threads (default: all cores)")
    paper.add_argument(
        "--only",
        nargs="+",
        choices=list(EXPERIMENTS),
        metavar="SECTION",
        help=f"run only these sections, among {', '.join(EXPERIMENTS)} (the page shows every finished one)",
    )
    paper.add_argument(
        "--overwrite", action="store_true", help="recompute sections already finished at this size and seed"
    )
    paper.add_argument("--quiet", "-q", action="store_true", help="no line per section")


def _plot_kind_option(parser: argparse.ArgumentParser) -> None:
    from mlcb.storage.store import FIGURE_KINDS as KINDS  # not mlcb.plot: building the parser stays light

    parser.add_argument(
        "--kind",
        "-k",
        nargs="+",
        choices=KINDS,
        metavar="KIND",
        help=f"figures to draw, among {', '.join(KINDS)} (default: regret and panels for a run, "
        "all for a sweep); each is saved as KIND.png",
    )


def _sweep_parser(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a grid of settings (TOML) on this machine's cores or on a Dask cluster",
        description="Run every setting of a grid file, split into tasks of replications, on worker\n"
        "processes of this machine (--executor local, the default) or on Dask (--executor dask:\n"
        "a LocalCluster on 127.0.0.1, or the cluster at --scheduler). Every finished task is saved\n"
        "at once into OUT/NAME/data/ (Parquet, partitioned by setting); running the same command\n"
        "again skips them. The grid format is in docs/sweeps.md.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sweep.add_argument("grid", type=_path, help="a grid TOML file (see docs/sweeps.md)")
    sweep.add_argument("--executor", "-e", default="local", help="local (default) or dask")
    sweep.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    sweep.add_argument(
        "--workers", "-w", type=int, help="worker processes here or in the LocalCluster (default: all cores)"
    )
    sweep.add_argument("--block", "-b", type=int, help="replications per task (default: the grid's, or 1)")
    sweep.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for --scheduler (default 10)"
    )
    sweep.add_argument(
        "--out", "-o", type=_path, default=Path("results"), help="output directory (default: results)"
    )
    sweep.add_argument("--overwrite", action="store_true", help="replace OUT/NAME if it holds something else")
    sweep.add_argument("--no-plot", action="store_true", help="skip the figures")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def _report_parser(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="write one self-contained HTML page of a saved run or sweep",
        description="Write an HTML page with the summary tables and every figure (embedded PNG) of "
        "a saved run or sweep: one file to share.",
    )
    report.add_argument("result", type=_path, help="a directory written by `mlcb run`, `compare` or `sweep`")
    report.add_argument("--out", "-o", type=_path, help="the HTML file (default: RESULT/report.html)")


def _with_device(configs: list, device: str | None) -> list:
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
            raise ValueError(
                f"--device applies to pools of torch networks (e.g. the moe preset), not to {config.label!r}"
            )
        out.append(dataclasses.replace(config, experts=tuple(experts)))
    return out


def _plugin_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        dest="plugins",
        metavar="MODULE",
        help="import MODULE first (repeatable): a module of one's own on PYTHONPATH that registers "
        "expert families or policies (agents.register, mlcb.policies.register); a TOML "
        'family = "MODULE:Class" needs it',
    )


def _load_plugins(args: argparse.Namespace) -> None:
    """The installed ``mlcb.plugins`` entry points, then the modules named with ``--plugin``."""
    from mlcb import registry

    registry.load_entry_points()
    for name in getattr(args, "plugins", None) or []:
        registry.load_plugin(name)


def _common_options(parser: argparse.ArgumentParser, budgets_help: str) -> None:
    parser.add_argument("--budget", "-M", type=int, nargs="+", metavar="M", help=budgets_help)
    parser.add_argument("--horizon", "-T", type=int, metavar="T", help="rounds per replication")
    parser.add_argument("--replications", "-R", type=int, metavar="R", help="replications per setting")
    parser.add_argument("--seed", "-s", type=int, metavar="S", help="the simulation's seed (default 0)")
    parser.add_argument(
        "--calibration",
        "-c",
        help="theory (default), practical, authors or authors-rates (the last two: trap only)",
    )
    parser.add_argument("--delta", type=float, help="confidence delta in (0, 1)")
    parser.add_argument("--threads", "-j", type=int, help="worker threads (default: all cores)")
    parser.add_argument(
        "--out",
        "-o",
        type=_path,
        default=Path("results"),
        help="output directory (default: results); writes OUT/NAME/",
    )
    parser.add_argument("--no-plot", action="store_true", help="skip the figures")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    parser.add_argument(
        "--device",
        metavar="DEVICE",
        help="where pools of torch networks run (the moe preset): auto (CUDA when present, the "
        "default), cpu, cuda or cuda:N",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT/NAME when it holds a different experiment (default: refuse; the same "
        "experiment resumes)",
    )


#: Experts one ``[[experts]]`` table may stand for (``count``).
MAX_COUNT = 10**6


def _toml_configs(path: Path, args: argparse.Namespace) -> tuple[str, list]:
    """Settings described by a TOML file (one per budget), every key checked before any work."""
    import dataclasses

    from mlcb import validation
    from mlcb.config import SimulationConfig

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path.name}: not a valid UTF-8 TOML file: {error}") from None
    allowed = {f.name for f in dataclasses.fields(SimulationConfig)} | {"name"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(
            f"{path.name}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"allowed keys: {', '.join(sorted(allowed))}"
        )
    tables = data.pop("experts", None)
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise ValueError(
            "experts: the TOML file needs one or more [[experts]] tables, each with a family "
            f"(see `mlcb list`), got {tables!r}"
        )
    experts = []
    for index, entry in enumerate(tables):
        entry = dict(entry)
        count = validation.integer(f"experts[{index}].count", entry.pop("count", 1), maximum=MAX_COUNT)
        if "family" not in entry:
            raise ValueError(f"experts[{index}]: each [[experts]] table needs a family (see `mlcb list`)")
        try:
            expert = _toml_expert(entry.pop("family"), entry, f"experts[{index}].family")
        except TypeError as error:  # an unknown parameter of the family
            raise ValueError(f"experts[{index}]: {error}") from None
        experts.extend([expert] * count)
    budgets = validation.budgets("budget", data.pop("budget", 1))
    if "name" in data:
        name = validation.plain_name("name", data.pop("name"))
    else:
        name = validation.plain_name(f"name (from the file name {path.name!r}; set name = ...)", path.stem)
    fields = {**data, **_overrides(args)}
    if args.budget is not None:
        budgets = validation.budgets("budget", args.budget)
    return name, [SimulationConfig(experts=tuple(experts), budget=m, **fields) for m in budgets]


def _toml_expert(family: Any, params: dict[str, Any], what: str) -> Any:
    """An expert of a TOML ``[[experts]]`` table: a registered name (``agents.make``), or
    ``"module:Class"`` of a module loaded with ``--plugin`` (nothing is imported here)."""
    import agents
    from mlcb import registry

    if not isinstance(family, str):
        raise ValueError(f"{what} must be a string, got {family!r}")
    if ":" not in family:
        return agents.make(family, **params)
    cls = registry.plugin_attribute(family, what)
    if not isinstance(cls, type):
        raise ValueError(f"{what} = {family!r} is not a class")
    return cls(**params)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    fields = {
        "horizon": args.horizon,
        "replications": args.replications,
        "seed": args.seed,
        "policy": getattr(args, "policy", None),
        "delta": args.delta,
    }
    return {key: value for key, value in fields.items() if value is not None}


def _configs(args: argparse.Namespace) -> tuple[str, list]:
    if args.target.endswith(".toml"):
        path = Path(args.target)
        if not path.is_file():
            raise ValueError(f"target: no such TOML file {args.target!r}")
        return _toml_configs(path, args)
    from mlcb import presets, validation

    preset = presets.get(args.target)
    budgets = list(preset.budgets) if args.budget is None else validation.budgets("budget", args.budget)
    fields = _overrides(args)
    return preset.name, [preset.config(m, args.calibration, **fields) for m in budgets]


def _run(args: argparse.Namespace) -> int:
    name, configs = _configs(args)  # validates everything before any work
    return _simulate_all(args, name, _with_device(configs, getattr(args, "device", None)))


def _compare(args: argparse.Namespace) -> int:
    from mlcb import presets, validation
    from mlcb.compare import comparison_configs

    fields = _overrides(args)
    if args.budget is not None:
        fields["budget"] = validation.budgets("budget", args.budget)
    entry_set = getattr(args, "entry_set", None)
    options = {"calibration": args.calibration, "policies": args.policies, "entry_set": entry_set}
    configs = comparison_configs(args.target, None, **options, **fields)
    configs = _with_device(configs, getattr(args, "device", None))
    suffix = f"-{entry_set}" if entry_set else ""
    return _simulate_all(args, f"{presets.get(args.target).name}-comparison{suffix}", configs)


def _simulate_all(args: argparse.Namespace, name: str, configs: list) -> int:
    """Run ``configs`` into the store ``args.out / name`` (:mod:`mlcb.storage.store`): the path checked,
    the writer's lock held and the experiment in place compared before any work; the result and
    its figures saved atomically; then only these settings' parts removed."""
    from mlcb.report import save_figures
    from mlcb.simulation import simulate
    from mlcb.storage.results import Result
    from mlcb.storage.store import Store

    if args.threads is not None and args.threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {args.threads!r}")
    store = Store(args.out, name)
    keys = [config.key() for config in configs]
    with store.lock():
        store.recover()
        store.check_experiment(keys, getattr(args, "overwrite", False))
        results = []
        started = time.perf_counter()
        for config in configs:
            begun = time.perf_counter()
            result = simulate(config, threads=args.threads, progress=not args.quiet, parts=store.parts)
            result.metadata["settings"][config.label]["seconds"] = time.perf_counter() - begun
            results.append(result)
        result = Result.concat(results)
        figures: list[Path] = []

        def fill(directory: Path) -> None:
            result.write_files(directory)
            if not args.no_plot:
                drawn = save_figures(result, directory, RUN_FIGURES)
                figures.extend(store.path / figure.name for figure in drawn)

        out = store.write(fill)
        elapsed = time.perf_counter() - started
        _print_summary(result, elapsed)
        for figure in figures:
            print(f"figure: {figure}")
        print(f"results: {out}/ (curves, experts, replications .parquet; metadata.json)")
        store.remove_parts(keys)
    return 0


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
#: The figures of a run or a comparison (a sweep draws every kind).
RUN_FIGURES = ("regret", "panels")


def _print_summary(result, elapsed: float) -> None:
    from mlcb.report import number
    from mlcb.storage.results import summary_table

    summary = result.summary()
    calibration = ", ".join(sorted(summary["calibration"].unique()))
    table = summary_table(summary, PRINTED_COLUMNS)
    print(f"{len(table)} setting(s), calibration {calibration}, {elapsed:.1f} s")
    settings = result.metadata.get("settings", {})
    table["seconds"] = [settings.get(label, {}).get("seconds", float("nan")) for label in table["setting"]]
    print(table.to_string(index=False, float_format=number))


def _plot(args: argparse.Namespace) -> int:
    from mlcb.report import save_figures
    from mlcb.sweeps import is_sweep, load_any

    result = load_any(args.result)
    kinds = args.kind
    if kinds is None and not is_sweep(args.result):
        kinds = RUN_FIGURES
    for figure in save_figures(result, args.out or args.result, kinds):
        print(f"figure: {figure}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    """Validate the whole grid, then run its tasks (:func:`mlcb.sweeps.sweep`); failed tasks are
    listed with their settings and the status is 1."""
    from mlcb import sweeps

    grid = sweeps.load_grid(args.grid)  # every setting validated before anything runs
    if args.executor not in sweeps.EXECUTORS:
        raise ValueError(f"executor must be one of {sweeps.EXECUTORS}, got {args.executor!r}")
    print(f"sweep {grid.name}: {len(grid.settings)} setting(s) x {grid.replications} replication(s)")
    outcome = sweeps.sweep(
        grid,
        out=args.out,
        executor=args.executor,
        scheduler=args.scheduler,
        workers=args.workers,
        block=args.block,
        overwrite=args.overwrite,
        progress=not args.quiet,
        timeout=args.timeout,
        echo=print,
    )
    print(sweeps.summary_line(outcome))
    _print_summary(outcome.result, outcome.seconds)
    if not args.no_plot:
        from mlcb.report import save_figures

        for figure in save_figures(outcome.result, outcome.path):
            print(f"figure: {figure}")
    print(f"results: {outcome.path}/ (sweep.json; data/ Parquet dataset partitioned by setting)")
    for task, error in outcome.failed:
        print(f"mlcb: task failed: {task}: {error}", file=sys.stderr)
    if outcome.failed:
        print(
            f"mlcb: {len(outcome.failed)} task(s) failed, the others are saved; fix the cause and run "
            "the same command again to run only what is missing",
            file=sys.stderr,
        )
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from mlcb.report import report

    path = report(args.result, args.out)
    print(f"report: {path}")
    return 0


def _paper(args: argparse.Namespace) -> int:
    from mlcb.paper import reproduce

    if args.threads is not None and args.threads < 1:
        raise ValueError(f"threads must be an integer >= 1, got {args.threads!r}")
    index = reproduce(
        "paper" if args.full else "quick",
        args.out,
        seed=args.seed,
        threads=args.threads,
        only=args.only,
        overwrite=args.overwrite,
        progress=not args.quiet,
    )
    print(f"page: {index}")
    return 0


def _show(args: argparse.Namespace) -> int:
    """Print a saved run's or sweep's summary table and its metadata (validated when read)."""
    import json

    from mlcb.sweeps import is_sweep, load_any

    result = load_any(args.result)
    meta = result.metadata
    settings = meta["settings"]
    seconds = [s.get("seconds") for s in settings.values()]
    total = sum(v for v in seconds if isinstance(v, (int, float)))
    sweep = meta.get("sweep") if is_sweep(args.result) else None
    if isinstance(sweep, dict):
        failed = sweep.get("failed") or []
        print(
            f"sweep: {args.result} ({sweep.get('name')}, preset {sweep.get('preset')}, "
            f"{sweep.get('replications')} replication(s) per setting in tasks of {sweep.get('block')}; "
            f"{len(failed)} task(s) failed in its last run)"
        )
        print(f"grid: {json.dumps(sweep.get('grid'), default=str)}")
    else:
        print(f"result: {args.result}")
    _print_summary(result, total)
    print("settings:")
    for label, setting in settings.items():
        config = setting.get("config") if isinstance(setting.get("config"), dict) else {}
        fields = {
            "policy": config.get("policy"),
            "budget": config.get("budget"),
            "calibration": config.get("calibration"),
            "engine": setting.get("engine"),
            "family": setting.get("family"),
            "certificate valid": setting.get("certificate_valid"),
            "key": setting.get("key"),
        }
        print(f"  {label}: " + ", ".join(f"{k} {'?' if v is None else v}" for k, v in fields.items()))
    versions = meta.get("versions")
    if isinstance(versions, dict):
        print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    print(f"git revision: {meta.get('git_revision') or 'unknown'}")
    print(f"created: {meta.get('created') or 'unknown'}")
    return 0


def _list(args: argparse.Namespace) -> int:
    import agents
    import envs
    from mlcb import policies, presets

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
    print("experts:")
    for name in agents.names():
        print(f"  {name:<16} {agents.registry.entry(name).summary}")
    print("environments:")
    for name in envs.names():
        print(f"  {name:<24} {envs.registry.entry(name).summary}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mlcb`` console script."""
    args = _parser().parse_args(argv)
    from mlcb.errors import ExpertError

    command = {
        "run": _run,
        "compare": _compare,
        "sweep": _sweep,
        "plot": _plot,
        "report": _report,
        "show": _show,
        "list": _list,
        "paper": _paper,
    }[args.command]
    try:
        _load_plugins(args)
        return command(args)
    except ExpertError as error:  # a fault inside an expert: located, and nothing finished is lost
        print(
            f"mlcb: error: {error}; finished replications are kept, the same command resumes from them",
            file=sys.stderr,
        )
        return 1
    except (ValueError, TypeError, FileNotFoundError, tomllib.TOMLDecodeError) as error:
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"mlcb: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`mlcb list | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(
            "mlcb: interrupted; finished replications are kept, run the same command to resume",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
