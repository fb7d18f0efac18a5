"""``mlcb report``: one self-contained HTML page of a saved run or sweep, for sharing.

The page holds the summary table, a table of the settings (policy, budget, experts, horizon,
calibration, environment and the data it streams, engine, certificate validity, rate exponent),
the sweep's grid and any failed tasks,
and every registered figure (:func:`mlcb.plot.names`) embedded as a base64 PNG: no other file is needed to
read it. It is built from the saved frames and plain metadata only.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from mlcb import validation
from mlcb.storage.results import summary_table
from mlcb.validation import InputError

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; }
td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0 2em; }
img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #555; }
pre { background: #f7f7f7; padding: 0.6em; font-size: 0.85em; overflow-x: auto; }
"""

_CAPTIONS = {
    "regret": "Mean regret against rounds with a band of two standard errors (or each run, with "
    "fewer than five), the certificate Delta(t) (dashed) and the worst case B_num(t) (dotted); "
    "slopes fitted over the last decade.",
    "panels": "The paper's three panels: regret, deployments and training rounds per expert.",
    "theory": "Log-log: pseudo-regret, certificate, worst case and the main theorem's curve (unit "
    "constants); the slope is fitted over the last decade of rounds, next to the theorem's exponent.",
    "budget": "Final regret against the budget M with the theorem's shape sqrt(K/M) + (K/M)^(1-alpha) "
    "scaled to each line (and against K and T when the sweep varies them).",
}


def _summary(kind: str) -> str:
    """A registered figure's caption: its summary, else its name."""
    from mlcb.storage.outputs import FIGURES

    return FIGURES.entry(kind).summary or kind


def number(value: float) -> str:
    """A number as the tables show it: three decimals below 10, thousands separators above."""
    return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.0f}"


#: The PNG text entry (keyword, text) that every figure mlcb draws carries: :func:`save_figures`
#: replaces a figure file only when it carries it, or when the folder holds an mlcb result.
FIGURE_MARK = ("Source", "mlcb")


def png_text(path: Path, limit: int = 1 << 16) -> dict[str, str]:
    """The text entries (``tEXt`` chunks, and uncompressed ``iTXt``: text beyond Latin-1) of the
    PNG file ``path`` that come before its image data, read from its first ``limit`` bytes; empty
    for a file that is not a PNG."""
    with open(path, "rb") as handle:
        data = handle.read(limit)
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return {}
    entries, at = {}, 8
    while at + 8 <= len(data):
        length, kind = int.from_bytes(data[at : at + 4], "big"), data[at + 4 : at + 8]
        if kind == b"IDAT" or at + 12 + length > len(data):
            break
        if kind == b"tEXt":
            keyword, _, text = data[at + 8 : at + 8 + length].partition(b"\0")
            entries[keyword.decode("latin-1")] = text.decode("latin-1")
        elif kind == b"iTXt":  # keyword, 0, compressed?, method, language, 0, translated keyword, 0, text
            keyword, _, rest = data[at + 8 : at + 8 + length].partition(b"\0")
            if rest[:1] == b"\0":
                text = rest[2:].split(b"\0", 2)[-1]
                entries[keyword.decode("latin-1")] = text.decode("utf-8", errors="replace")
        at += 12 + length
    return entries


def _refuse_foreign_figure(path: Path) -> None:
    """An ``InputError`` when ``path`` is a regular file that mlcb may not replace: one without
    :data:`FIGURE_MARK`, in a folder that holds no mlcb result (a user's own ``regret.png``)."""
    if path.is_symlink() or not path.is_file():
        return  # nothing there, or a link: replaced, never written through
    from mlcb.storage.result_files import METADATA
    from mlcb.sweeps import SWEEP_FILE

    if any((path.parent / name).is_file() for name in (METADATA, SWEEP_FILE)):
        return  # an mlcb result's or sweep's folder: its figures are mlcb's, marked or drawn before the mark
    try:
        mine = png_text(path).get(FIGURE_MARK[0]) == FIGURE_MARK[1]
    except OSError:
        mine = False
    if not mine:
        raise InputError(
            f"{path}: a file mlcb did not write (no mlcb mark in it), where the {path.stem} figure goes; "
            "move it away or give another --out"
        )


def figure_png(result: Any, kind: str, dpi: int = 100) -> bytes:
    """The registered figure ``kind`` (:func:`mlcb.plot.names`) of ``result`` as PNG bytes.

    The figure is built at the resolution it is saved at, so that laying it out and drawing it
    share one renderer (and its cache of text sizes). mlcb's own figures (:mod:`mlcb.plot`) lay
    themselves out (constrained layout) and are saved as they are, without a second layout pass
    to crop them; any other registered figure is cropped to what it draws (``bbox_inches="tight"``).
    A figure function may return a matplotlib Figure or a seaborn grid (:func:`mlcb.plot.figure_of`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlcb import plot
    from mlcb.storage.outputs import FIGURES

    with plt.rc_context({"figure.dpi": dpi}):
        figure = plot.figure_of(plot.draw(result, kind))
    laid_out = FIGURES.entry(kind).entry_point.startswith("mlcb.plot:")
    buffer = io.BytesIO()
    try:
        figure.savefig(
            buffer,
            format="png",
            dpi=dpi,
            bbox_inches=None if laid_out else "tight",
            metadata={FIGURE_MARK[0]: FIGURE_MARK[1]},
        )
    finally:
        plt.close(figure)
    return buffer.getvalue()


def save_figures(
    result: Any,
    out: str | Path,
    kinds: Iterable[str] | None = None,
    dpi: int = 120,
) -> list[Path]:
    """Write the figures ``kinds`` of ``result`` (default: every registered figure,
    :func:`mlcb.plot.names`) into ``out/KIND.png``; returns the files written. Each file is
    replaced atomically (a link in its place is replaced, never written through); an ``out`` that
    is a file, or a figure's place that is a folder, is an ``InputError`` in one line. A file
    already in a figure's place is replaced only when mlcb wrote it (every figure carries the PNG
    text entry :data:`FIGURE_MARK`) or when ``out`` holds an mlcb result; any other file (a
    user's own ``regret.png``) is an ``InputError`` before any figure is drawn."""
    from mlcb import plot
    from mlcb.storage.outputs import check_figures
    from mlcb.storage.store import make_directory, write_file

    chosen = check_figures(plot.names() if kinds is None else kinds)  # all known before any is drawn
    out = validation.path("out", out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a directory; give a folder for the figures")
    make_directory(out, "--out ")
    for kind in chosen:  # every place checked before any figure is drawn
        path = out / f"{kind}.png"
        if path.is_dir() and not path.is_symlink():
            raise InputError(f"{path}: a folder, where the {kind} figure goes; move it away")
        _refuse_foreign_figure(path)
    paths = []
    for kind in chosen:
        path = out / f"{kind}.png"
        write_file(path, functools.partial(_write_bytes, figure_png(result, kind, dpi)))
        paths.append(path)
    return paths


def _write_bytes(data: bytes, handle: Any) -> None:
    handle.write(data)


def _table(frame: pd.DataFrame) -> str:
    """A well-formed HTML table of ``frame`` (every cell escaped)."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            text = "" if value != value else number(value)
        else:
            text = str(value)
        return html.escape(text)

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def environment(meta: Any) -> str:
    """The environment a setting's record names, with the data it streams where it reads a data
    set (``mlcb run ctg --data FILE --label COLUMN``: the file and its label column), or ``"?"``.

    Examples
    --------
    >>> params = {"dataset": "mine.csv", "label": "y"}
    >>> environment({"config": {"env": "mlcb/RealData-v0", "env_params": params}})
    "mlcb/RealData-v0: mine.csv, label 'y'"
    """
    config = meta.get("config") if isinstance(meta, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("env"), str):
        return "?"
    given = config.get("env_params")
    params: dict = given if isinstance(given, dict) else {}
    dataset = params.get("dataset")
    if dataset is None:
        return config["env"]
    label = params.get("label")
    shown = dataset.get("name", "?") if isinstance(dataset, dict) else dataset
    return f"{config['env']}: {shown}" + (f", label {label!r}" if label is not None else "")


def settings_table(result: Any) -> pd.DataFrame:
    """One row per setting: what the figures and the reader need to know about it."""
    from mlcb import plot

    rows = []
    settings = result.metadata.get("settings", {}) if isinstance(result.metadata, dict) else {}
    for label in result.settings:
        values = plot.setting_values(result, label)
        meta = settings.get(label, {}) if isinstance(settings.get(label), dict) else {}
        alpha = values["alpha"]
        rows.append(
            {
                "setting": label,
                "policy": values["policy"],
                "M": values["M"],
                "K": values["K"],
                "T": values["T"],
                "calibration": values["calibration"],
                "environment": environment(meta),
                "replications": int(
                    result.replications.loc[result.replications["setting"] == label].shape[0]
                ),
                "engine": str(meta.get("engine", "?")),
                "certificate valid": str(meta.get("certificate_valid", "?")),
                "alpha": "?" if alpha is None else f"{alpha:.2f}",
                "key": str(meta.get("key", "?")),
            }
        )
    return pd.DataFrame(rows)


def render(result: Any, title: str, kinds: tuple[str, ...] | None = None) -> str:
    """The HTML page of ``result`` (a string); ``kinds`` are the figures (default: all). Its text
    is the result's as figures show it (:func:`mlcb.storage.outputs.displayable`: a label's
    control characters written as escapes)."""
    from mlcb import plot
    from mlcb.storage.outputs import displayable

    result = displayable(result)
    kinds = tuple(plot.names()) if kinds is None else kinds
    meta = result.metadata if isinstance(result.metadata, dict) else {}
    summary = summary_table(result.summary())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8" />',
        '<meta name="viewport" content="width=device-width, initial-scale=1" />',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    facts = []
    versions = meta.get("versions")
    if isinstance(versions, dict):
        facts.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    for key, name in (("git_revision", "git revision"), ("created", "written")):
        if meta.get(key):
            facts.append(f"{name}: {meta[key]}")
    facts.append(f"{len(result.settings)} setting(s), {result.replications.shape[0]} replication(s) in all")
    parts.append("<ul>" + "".join(f"<li>{html.escape(f)}</li>" for f in facts) + "</ul>")
    parts += ["<h2>Summary (at each setting's horizon)</h2>", _table(summary)]
    parts += ["<h2>Settings</h2>", _table(settings_table(result))]
    sweep = meta.get("sweep")
    if isinstance(sweep, dict):
        parts.append("<h2>Sweep</h2>")
        grid = json.dumps(sweep.get("grid"), indent=1, default=str)
        parts.append(f"<pre>{html.escape(grid)}</pre>")
        failed = sweep.get("failed") or []
        if failed:
            frame = pd.DataFrame(
                [{"task": f.get("task"), "error": f.get("error")} for f in failed if isinstance(f, dict)]
            )
            parts += ["<h3>Failed tasks</h3>", _table(frame)]
    parts.append("<h2>Figures</h2>")
    for kind in kinds:
        data = base64.b64encode(figure_png(result, kind)).decode("ascii")
        caption = html.escape(_CAPTIONS.get(kind) or _summary(kind))
        parts.append(
            f'<figure id="figure-{kind}"><img alt="{kind} figure" src="data:image/png;base64,{data}" />'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def report(path: str | Path, out: str | Path | None = None) -> Path:
    """Write the HTML report of the saved run or sweep in ``path`` to ``out`` (default
    ``path / "report.html"``), atomically; returns the file written."""
    from mlcb.storage.store import make_directory, write_file
    from mlcb.sweeps import load_any

    path = validation.path("path", path)
    result = load_any(path)
    target = validation.path("out", out) if out is not None else path / "report.html"
    if target.is_dir():
        raise InputError(f"--out {target} is a directory; give a file name such as report.html")
    if (target.exists() or target.is_symlink()) and not _is_report(target):
        raise InputError(
            f"--out {target} holds a file that is not an mlcb report; mlcb never replaces what it did not "
            "write: choose another name, or move it away"
        )
    make_directory(target.parent, "--out ")
    page = render(result, f"mlcb report: {path.resolve().name}").encode("utf-8")
    write_file(target, lambda handle: handle.write(page))
    return target


#: How a report mlcb wrote begins (a file at ``--out`` that does not is never replaced).
REPORT_MARK = b"<title>mlcb report: "


def _is_report(path: Path) -> bool:
    """Whether ``path`` is a regular file that mlcb wrote as a report (it holds
    :data:`REPORT_MARK` near its start); a link or anything else is not."""
    from mlcb.storage.result_files import open_regular

    try:
        with open_regular(path) as handle:
            return REPORT_MARK in handle.read(4096)
    except ValueError:
        return False
