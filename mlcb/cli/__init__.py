"""The ``mlcb`` command line: ``run``, ``compare``, ``sweep``, ``plot``, ``report``, ``show``, ``list``,
``paper``.

Bad input (:class:`mlcb.validation.InputError`) exits with status 2 and one line on standard
error; a fault inside an expert or of the machine (a full disk, a file-size limit, permissions,
too little memory, a Dask scheduler gone) with status 1 and one line; anything else is a bug,
shown with its traceback and a line asking to report it (``MLCB_TRACEBACK=1`` shows every
traceback). An interrupted ``run`` keeps every finished replication and continues from there when
the same command is run again. Results and their parts are kept by :mod:`mlcb.storage.store`
(atomic saves, one writer per output directory, never deleting what mlcb did not write).

Families, policies and environments of one's own come in through plugins (:mod:`mlcb.registry`):
modules named with ``--plugin MODULE`` (repeatable) and the installed entry points of the group
``mlcb.plugins``, all loaded when the command starts. A TOML file (:func:`mlcb.config.toml.load_toml`)
never makes anything be imported: its names resolve only to what is registered.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from mlcb.cli import settings
from mlcb.cli.output import LIST_SECTIONS
from mlcb.cli.output import list_names as _list
from mlcb.cli.output import print_summary as _print_summary
from mlcb.cli.output import seconds as _number
from mlcb.cli.startup import end as _end
from mlcb.cli.startup import import_figures as _import_figures
from mlcb.cli.startup import pause_collector as _pause_collector
from mlcb.cli.startup import resume_collector as _resume_collector
from mlcb.cli.texts import COMMAND_EXAMPLES, EXAMPLES, TOML_DOCS
from mlcb.cli.values import Parser as _Parser
from mlcb.cli.values import one_of_several as _one_of_several
from mlcb.cli.values import path as _path
from mlcb.cli.values import whole as _whole
from mlcb.validation import InputError, printable


def _command(commands: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """The sub-parser of command ``name`` with its own examples after the options (its
    description wrapped to the terminal's usual width)."""
    import textwrap

    description = options.pop("description", None)
    if description is not None and "\n" not in description:
        description = textwrap.fill(description, 88)
    return commands.add_parser(
        name,
        description=description,
        epilog=COMMAND_EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **options,
    )


def _section(text: str) -> str:
    """A section of ``mlcb list`` (:data:`LIST_SECTIONS`), plural or singular, in any case."""
    name = text.strip().lower()
    for section in LIST_SECTIONS:
        if name in (section, section[:-1], section.removesuffix("ies") + "y"):
            return section
    raise argparse.ArgumentTypeError(f"unknown section {text!r}; sections: {', '.join(LIST_SECTIONS)}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mlcb",
        description="Simulate budgeted expert selection (M-LCB and related policies): regret "
        "curves, the data-dependent certificate and the theory.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = _command(
        commands,
        "run",
        help="simulate a preset or a TOML setting, save results and figures",
        description="Simulate every budget of a preset (or a TOML setting file), print a summary, "
        "save the results (Parquet + JSON) and a regret figure (PNG) under --out. An interrupted "
        f"run resumes from its finished replications. The TOML format: {TOML_DOCS}.",
    )
    run.add_argument(
        "target", help="a preset name (see `mlcb list`) or a TOML setting file (see the format below)"
    )
    run.add_argument("--policy", help="a policy name (see `mlcb list`; default mlcb)")
    _common_options(run, budgets_help="budgets to run (default: the preset's)")
    _device_option(run)
    _data_options(run)
    _plugin_option(run)

    compare = _command(
        commands,
        "compare",
        help="run a preset's comparison of policies (common random numbers), save and plot it",
        description="Run every policy and budget of a preset's comparison on the same seeds and the "
        "same data stream; print a summary with the time per setting; save one result and the paper's "
        "three panels under --out.",
    )
    compare.add_argument("target", help="a preset name (see `mlcb list`)")
    compare.add_argument(
        "--policies",
        nargs="+",
        type=_one_of_several(str),
        metavar="NAME",
        help="keep only these policies of the comparison; another registered policy (one of one's own, "
        "with --plugin) joins it at every budget it runs, on the same seeds",
    )
    compare.add_argument(
        "--set",
        dest="entry_set",
        metavar="NAME",
        help="another comparison of the preset instead of the paper's (practitioners: M-LCB against "
        "river-style bandits, successive halving, R-ed-UCB and EXP3.P at equal budget)",
    )
    _common_options(compare, budgets_help="keep only these budgets (default: the comparison's)")
    _device_option(compare)
    _data_options(compare)
    _plugin_option(compare)

    plot = _command(
        commands,
        "plot",
        help="draw the figures of a saved result or sweep",
        description="Draw the figures of a result saved by `mlcb run`, `mlcb compare` or `mlcb sweep` "
        "(read and checked, never recomputed) as PNG files: by default the regret figure and the "
        "panels of a run, every kind for a sweep, into the result's folder or --out.",
    )
    plot.add_argument(
        "result", type=_path, help="a directory written by `mlcb run`, `mlcb compare` or `mlcb sweep`"
    )
    plot.add_argument(
        "--out",
        "-o",
        type=_path,
        help="figure directory (default: the result's); a file there mlcb did not draw is never replaced",
    )
    _plot_kind_option(plot)
    _plugin_option(plot)
    _sweep_parser(commands)
    _report_parser(commands)

    show = _command(
        commands,
        "show",
        help="print a saved result's or sweep's summary and metadata",
        description="Print the summary table of a result saved by `mlcb run`, `mlcb compare` or "
        "`mlcb sweep` (read and checked first), each setting's policy, budget, calibration, engine, "
        "family, certificate and key, and what produced it (versions, git revision, date).",
    )
    show.add_argument(
        "result", type=_path, help="a directory written by `mlcb run`, `mlcb compare` or `mlcb sweep`"
    )

    listing = _command(
        commands,
        "list",
        help="list presets, policies, expert families and environments",
        description="List the presets, the registered policies, expert families and environments, "
        "with those a plugin module registers (--plugin).",
    )
    listing.add_argument(
        "sections",
        nargs="*",
        type=_one_of_several(_section),
        metavar="SECTION",
        help=f"list only these: {', '.join(LIST_SECTIONS)} (default: all)",
    )
    _plugin_option(listing)
    _paper_parser(commands)
    return parser


def _paper_parser(commands: Any) -> None:
    from mlcb.paper import DURATIONS, EXPERIMENTS  # names only: the experiments are imported when run

    paper = _command(
        commands,
        "paper",
        help="reproduce the paper's experiments: one HTML page, the paper's numbers beside the package's",
        description="Run every experiment of the paper (the trap, the GLM stream, the real-data runs: "
        "cardiotocography, shipped, and Warfarin dosing from --warfarin PATH or a stand-in; the lower "
        "bound) and write OUT/index.html: each figure, and each "
        "table with the paper's published number beside the package's estimate and its standard "
        f"error, and one verdict per claim. By default at a quick size ({DURATIONS['quick']} on two "
        f"cores); --full runs the paper's sizes ({DURATIONS['paper']} on two cores). Finished sections "
        "are kept under OUT/sections/: an interrupted run resumes.",
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
    paper.add_argument("--seed", "-s", type=_whole, default=0, help="seed of every simulation (default 0)")
    paper.add_argument("--threads", "-j", type=_whole, help="worker threads (default: all cores)")
    paper.add_argument(
        "--only",
        nargs="+",
        type=_one_of_several(str),
        choices=list(EXPERIMENTS),
        metavar="SECTION",
        help=f"run only these sections, among {', '.join(EXPERIMENTS)} (the page shows every finished one)",
    )
    paper.add_argument(
        "--overwrite",
        action="store_true",
        help="recompute sections already finished at this size and seed, and replace those OUT holds of "
        "another size, seed or Warfarin file (refused without it)",
    )
    paper.add_argument("--quiet", "-q", action="store_true", help="no line per section")
    paper.add_argument(
        "--warfarin",
        type=_path,
        metavar="PATH",
        help="your copy of the IWPC warfarin subject file (CSV, or PharmGKB's .xls with xlrd): the paper's "
        "Warfarin runs on it instead of a stand-in (the file may not be redistributed, so none ships)",
    )


def _plot_kind_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        "-k",
        nargs="+",
        type=_one_of_several(str),
        metavar="KIND",
        help="figures to draw: regret, panels, theory, budget or a figure a plugin registers "
        "(`mlcb list` lists them; default: regret and panels for a run, all for a sweep); each is "
        "saved as KIND.png",
    )


def _sweep_parser(commands: Any) -> None:
    sweep = _command(
        commands,
        "sweep",
        help="run a grid of settings (TOML) on this machine's cores or on a Dask cluster",
        description="Run every setting of a grid file, split into tasks of replications, on worker\n"
        "processes of this machine (--executor local, the default) or on Dask (--executor dask:\n"
        "a LocalCluster on 127.0.0.1, or the cluster at --scheduler). Every finished task is saved\n"
        "at once into OUT/NAME/data/ (Parquet, partitioned by setting); running the same command\n"
        "again skips them. The grid format is in docs/sweeps.md.",
    )
    sweep.add_argument("grid", type=_path, help="a grid TOML file (see docs/sweeps.md)")
    sweep.add_argument("--executor", "-e", default="local", help="local (default) or dask")
    sweep.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, e.g. tcp://host:8786")
    sweep.add_argument(
        "--workers",
        "-w",
        type=_whole,
        help="worker processes here or in the LocalCluster (default: all cores)",
    )
    sweep.add_argument("--block", "-b", type=_whole, help="replications per task (default: the grid's, or 1)")
    sweep.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for --scheduler (default 10)"
    )
    sweep.add_argument(
        "--out", "-o", type=_path, default=Path("results"), help="output directory (default: results)"
    )
    sweep.add_argument("--overwrite", action="store_true", help="replace OUT/NAME if it holds something else")
    sweep.add_argument("--no-plot", action="store_true", help="skip the figures")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _plugin_option(sweep)


def _report_parser(commands: Any) -> None:
    report = _command(
        commands,
        "report",
        help="write one self-contained HTML page of a saved run or sweep",
        description="Write an HTML page with the summary tables and every figure (embedded PNG) of "
        "a saved run or sweep: one file to share.",
    )
    report.add_argument("result", type=_path, help="a directory written by `mlcb run`, `compare` or `sweep`")
    report.add_argument("--out", "-o", type=_path, help="the HTML file (default: RESULT/report.html)")
    _plugin_option(report)


def _device_option(parser: argparse.ArgumentParser) -> None:
    """``--device``: only on the commands that run pools of torch networks."""
    parser.add_argument(
        "--device",
        metavar="DEVICE",
        help="where pools of torch networks run (the moe preset; refused for other pools): auto "
        "(CUDA when present, the default), cpu, cuda or cuda:N",
    )


def _plugin_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        dest="plugins",
        metavar="MODULE",
        help="import MODULE first (repeatable): a module of one's own on PYTHONPATH that registers "
        "expert families, policies, environments, figures or writers (agents.register, "
        "mlcb.policies.register, envs.register, mlcb.plot.register, "
        "mlcb.storage.outputs.register_writer); files and options then name what it registers",
    )


def _load_plugins(args: argparse.Namespace) -> None:
    """The installed ``mlcb.plugins`` entry points, then the modules named with ``--plugin``."""
    from mlcb import registry

    registry.load_entry_points()
    for name in getattr(args, "plugins", None) or []:
        registry.load_plugin(name)


def _common_options(parser: argparse.ArgumentParser, budgets_help: str) -> None:
    parser.add_argument(
        "--budget", "-M", type=_one_of_several(_whole), nargs="+", metavar="M", help=budgets_help
    )
    parser.add_argument("--horizon", "-T", type=_whole, metavar="T", help="rounds per replication, e.g. 1e6")
    parser.add_argument("--replications", "-R", type=_whole, metavar="R", help="replications per setting")
    parser.add_argument("--seed", "-s", type=_whole, metavar="S", help="the simulation's seed (default 0)")
    parser.add_argument(
        "--calibration",
        "-c",
        help="the preset's constants: theory (the default but for warfarin-scaling's k15), practical, "
        "authors or authors-rates (the last two: trap only), ...; `mlcb list presets` lists each "
        "preset's (a setting file sets its own)",
    )
    parser.add_argument("--delta", type=float, help="confidence delta in (0, 1)")
    parser.add_argument(
        "--setting-label",
        metavar="TEXT",
        help="name the settings in results, figures and reports: TEXT for one budget, 'TEXT M=2' for "
        "several; a comparison's settings become 'TEXT: POLICY M=2' (default: 'POLICY M=2')",
    )
    parser.add_argument("--threads", "-j", type=_whole, help="worker threads (default: all cores)")
    parser.add_argument(
        "--out",
        "-o",
        type=_path,
        default=Path("results"),
        help="output directory (default: results); writes OUT/NAME/",
    )
    parser.add_argument("--no-plot", action="store_true", help="skip the figures")
    parser.add_argument(
        "--write",
        nargs="+",
        type=_one_of_several(str),
        default=[],
        metavar="WRITER",
        help="more files beside the result: csv (the frames as CSV) or a writer a plugin registers "
        "(`mlcb list` lists them)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT/NAME when it holds a different experiment (default: refuse; the same "
        "experiment resumes)",
    )


def _data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        type=_path,
        metavar="PATH",
        help="a real-data preset (ctg, ctg-35, warfarin, ...) on your own file: a CSV with a header "
        "(name its label column with --label), or for warfarin your IWPC subject file",
    )
    parser.add_argument("--label", metavar="COLUMN", help="the label column of the --data CSV file")


def _run(args: argparse.Namespace) -> int:
    name, configs = settings.configs(args)  # validates everything before any work
    return _simulate_all(args, name, settings.with_device(configs, getattr(args, "device", None)))


def _compare(args: argparse.Namespace) -> int:
    from mlcb import validation
    from mlcb.compare import comparison_configs

    fields = settings.overrides(args)
    if args.budget is not None:
        fields["budget"] = validation.budgets("budget", args.budget)
    preset = settings.preset_named(args.target, "compare")
    settings.check_data_target(preset.env, f"preset {args.target!r}", args)
    if preset.env == "mlcb/RealData-v0" and settings.data_params(args):
        fields["env_params"] = settings.data_params(args)
    entry_set = getattr(args, "entry_set", None)
    options = {"calibration": args.calibration, "policies": args.policies, "entry_set": entry_set}
    configs = settings.with_file_advice(
        args, lambda: comparison_configs(args.target, None, **options, **fields)
    )
    configs = settings.with_device(configs, getattr(args, "device", None))
    suffix = f"-{entry_set}" if entry_set else ""
    return _simulate_all(args, f"{preset.name}-comparison{suffix}", configs)


def _simulate_all(args: argparse.Namespace, name: str, configs: list) -> int:
    """Run ``configs`` into the store ``args.out / name`` (:mod:`mlcb.storage.store`): the path checked,
    the writer's lock held and the experiment in place compared before any work; the result and
    its figures saved atomically; then only these settings' parts removed."""
    from mlcb.engine.problem import build
    from mlcb.report import save_figures
    from mlcb.simulation import run_problem
    from mlcb.storage import outputs
    from mlcb.storage.results import Result
    from mlcb.storage.store import Store

    writers = outputs.check_writers(args.write)  # known before any work

    if args.threads is not None and args.threads < 1:
        raise InputError(f"threads must be an integer >= 1, got {args.threads!r}")
    labels = [config.label for config in configs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise InputError(f"setting-label: settings must have distinct labels, {repeated[0]!r} is repeated")
    for config in configs:  # every setting's identity established before any work
        config.check_resumable()
    problems = [build(config) for config in configs]  # and every setting built and checked
    for problem in problems:  # a setting whose pool makes it long or large says so first
        size = problem.estimate(args.threads)
        if size.worth_saying and not args.quiet:
            print(f"{problem.label}: {size.text}", file=sys.stderr, flush=True)
    store = Store(args.out, name)
    keys = [config.key() for config in configs]
    if not args.no_plot:
        _import_figures()
    _resume_collector()
    with store.lock():
        store.recover()
        store.check_experiment(keys, getattr(args, "overwrite", False))
        results = []
        started = time.perf_counter()
        for problem in problems:
            begun = time.perf_counter()
            result = run_problem(problem, threads=args.threads, progress=not args.quiet, parts=store.parts)
            result.metadata["settings"][problem.label]["seconds"] = time.perf_counter() - begun
            results.append(result)
        result = Result.concat(results)
        figures: list[Path] = []
        files: list[Path] = []

        def fill(directory: Path) -> None:
            result.write_files(directory)
            files.extend(store.path / path.name for path in outputs.write(result, directory, writers))
            if not args.no_plot:
                drawn = save_figures(result, directory, RUN_FIGURES)
                figures.extend(store.path / figure.name for figure in drawn)

        out = store.write(fill)
        elapsed = time.perf_counter() - started
        _print_summary(result, elapsed)
        for figure in figures:
            print(f"figure: {figure}")
        for file in files:
            print(f"file: {file}")
        print(f"results: {out}/ (curves, experts, replications .parquet; metadata.json)")
        store.remove_parts(keys)
    return 0


#: The figures of a run or a comparison (a sweep draws every kind).
RUN_FIGURES = ("regret", "panels")


def _plot(args: argparse.Namespace) -> int:
    from mlcb.report import save_figures
    from mlcb.sweeps import is_sweep, load_any

    result = load_any(args.result)
    _import_figures()
    _resume_collector()
    kinds = args.kind
    if kinds is None and not is_sweep(args.result):
        kinds = RUN_FIGURES
    for figure in save_figures(result, args.out or args.result, kinds):
        print(f"figure: {figure}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    """Validate the whole grid and the options, then run its tasks (:func:`mlcb.sweeps.sweep`);
    failed tasks are listed with their settings and the status is 1."""
    from mlcb import sweeps, validation

    grid = sweeps.load_grid(args.grid, progress=not args.quiet)  # every setting validated before work
    # The executor's options too, before the sweep's first line (a refusal came after it).
    sweeps.check_options(args.executor, args.scheduler, args.timeout, args.workers)
    if args.block is not None:
        validation.integer("block", args.block, maximum=10**6)
    _resume_collector()
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
        print(printable(f"mlcb: task failed: {task}: {error}"), file=sys.stderr)
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
        raise InputError(f"threads must be an integer >= 1, got {args.threads!r}")
    _resume_collector()
    index = reproduce(
        "paper" if args.full else "quick",
        args.out,
        seed=args.seed,
        threads=args.threads,
        only=args.only,
        overwrite=args.overwrite,
        progress=not args.quiet,
        warfarin=args.warfarin,
    )
    print(f"page: {index}")
    return 0


def _show(args: argparse.Namespace) -> int:
    """Print a saved run's or sweep's summary table and its metadata (validated when read; every
    text from the files printed with its control characters escaped, :func:`mlcb.validation.printable`)."""
    import json

    from mlcb.sweeps import is_sweep, load_any

    result = load_any(args.result)
    meta = result.metadata
    settings = meta["settings"]
    total = sum(v for s in settings.values() if (v := _number(s.get("seconds"))) == v)  # NaN left out
    sweep = meta.get("sweep") if is_sweep(args.result) else None

    def say(text: str) -> None:
        print(printable(text))

    if isinstance(sweep, dict):
        failed = sweep["failed"] if isinstance(sweep.get("failed"), list) else []
        finished = int(result.replications.shape[0])
        planned = sweep.get("planned")
        progress = f"{finished} of {planned} replications finished; " if isinstance(planned, int) else ""
        say(
            f"sweep: {args.result} ({sweep.get('name')}, preset {sweep.get('preset')}, "
            f"{sweep.get('replications')} replication(s) per setting in tasks of {sweep.get('block')}; "
            f"{progress}{len(failed)} task(s) failed in its last run)"
        )
        say(f"grid: {json.dumps(sweep.get('grid'), default=str)}")
    else:
        say(f"result: {args.result}")
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
        say(f"  {label}: " + ", ".join(f"{k} {'?' if v is None else v}" for k, v in fields.items()))
    versions = meta.get("versions")
    if isinstance(versions, dict):
        from mlcb._version import __version__

        other = versions.get("mlcb") not in (None, __version__)
        other_code = f" (made by another mlcb: this is mlcb {__version__})" if other else ""
        say("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + other_code)
    say(f"git revision: {meta.get('git_revision') or 'unknown'}")
    say(f"created: {meta.get('created') or 'unknown'}")
    return 0


#: Where a fault of mlcb itself is reported.
REPORT_TO = "the mlcb maintainers"
#: The environment variable that shows the traceback of every error, input errors included.
TRACEBACK_VARIABLE = "MLCB_TRACEBACK"
#: What a rerun keeps, said after a fault that stopped a run.
KEPT = "finished replications are kept, the same command resumes from them"
#: What ``mlcb paper`` keeps: its finished sections, not the replications of one in progress.
PAPER_KEPT = (
    "finished sections are kept in {out}, the same command resumes from them (a section in progress "
    "starts over)"
)


#: The longest line an error is shown in, in characters (the rest is counted).
LONGEST_LINE = 2_000


def _say(message: str, error: BaseException | None = None) -> None:
    """``mlcb: MESSAGE`` on standard error: its first line, every control character in it escaped
    (:func:`mlcb.validation.printable`: an escape sequence from a file never acts on the
    terminal) and at most :data:`LONGEST_LINE` characters of it; after the traceback of ``error``
    when ``MLCB_TRACEBACK`` is set to something other than 0."""
    if error is not None and os.environ.get(TRACEBACK_VARIABLE, "0") not in ("", "0"):
        traceback.print_exception(error)
    text = message.strip().split("\n")[0] if message.strip() else "error"
    if len(text) > LONGEST_LINE:
        text = f"{text[:LONGEST_LINE]}... ({len(text) - LONGEST_LINE:,} more characters)"
    print(f"mlcb: {printable(text)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mlcb`` console script.

    Exit status 2 with one line ``mlcb: error: ...`` for bad input
    (:class:`~mlcb.validation.InputError`, and a path no file system takes: a name too long, a loop
    of links, a file where a folder goes); 1 with one line for a fault inside an expert (named) and
    for a fault of the machine (a full disk, a file-size limit, permissions, too little memory);
    1 with the traceback and a line asking to report it for anything else, which is a bug of mlcb.
    ``MLCB_TRACEBACK=1`` shows the traceback of every error.
    """
    args = _parser().parse_args(argv)
    from mlcb.errors import ExpertError, Fault, PolicyError, load_fault, os_fault, path_fault

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
    kept = PAPER_KEPT.format(out=printable(str(args.out / "sections"))) if args.command == "paper" else KEPT
    try:
        _load_plugins(args)
        return command(args)
    except (ExpertError, PolicyError) as error:  # a fault of an expert or a policy: located, nothing lost
        _say(f"error: {error}; {kept}", error)
        return 1
    except Fault as error:  # of the machine or the cluster: what happened, and what is kept
        _say(f"error: {error}", error)
        return 1
    except InputError as error:
        _say(f"error: {str(error).strip() or type(error).__name__}", error)
        return 2
    except ImportError as error:  # an optional package the input needs: say what to install
        if load_fault(error) is not None:  # a library that the memory limit left no room for
            _say(f"error: {load_fault(error)}", error)
            return 1
        if "pip install" not in str(error):
            return _bug(error)
        _say(f"error: {str(error).strip()}", error)
        return 2
    except BrokenPipeError:  # the reader went away (`mlcb list | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if args.command == "paper":
            print(f"mlcb: interrupted; {kept}", file=sys.stderr)
            return 130
        print(
            "mlcb: interrupted; finished replications are kept, run the same command to resume",
            file=sys.stderr,
        )
        return 130
    except OSError as error:
        if path_fault(error) is not None:  # the path given, as no file system takes it
            _say(f"error: {path_fault(error)}", error)
            return 2
        fault = os_fault(error) or load_fault(error)
        if fault is None:
            return _bug(error)
        _say(f"error: {fault}; {kept}", error)
        return 1
    except MemoryError as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else "out of memory"
        _say(
            f"error: not enough memory ({detail}); lower --replications, --threads or the setting's "
            f"size; {kept}",
            error,
        )
        return 1
    except Exception as error:
        return _bug(error)
    finally:
        _resume_collector()


def program() -> int:
    """The ``mlcb`` program (the console script and ``python -m mlcb.cli``): :func:`main` in a
    process of its own, with Python's cycle collector paused while the command starts
    (:func:`mlcb.cli.startup.pause_collector`), ended at once where an interrupt left sections
    of ``mlcb paper`` running (:func:`mlcb.cli.startup.end`)."""
    _pause_collector()
    try:
        code = main()
    finally:
        _resume_collector()
    return _end(code)


def _bug(error: BaseException) -> int:
    """Show the traceback of an error that is no input error nor a fault of the machine: a bug."""
    traceback.print_exception(error)
    print(
        f"mlcb: this is a bug in mlcb ({type(error).__name__}), not a problem with your input: please "
        f"report it to {REPORT_TO} with the command you ran and the traceback above",
        file=sys.stderr,
    )
    return 1


__all__ = ["COMMAND_EXAMPLES", "EXAMPLES", "TOML_DOCS", "main"]
