# %% [markdown]
# # A sweep and its report
#
# A paper's figures need grids of settings: budgets, pool sizes, horizons, many seeds. A *sweep*
# runs a grid on this machine's cores (or on a Dask cluster, unchanged), writes every finished
# piece to disk at once, and turns the saved results into figures and a self-contained HTML
# report ([sweeps](../../sweeps/) has every detail). This page runs a small grid on the trap:
# M-LCB at four budgets and two pool sizes.

# %%
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

import mlcb
from mlcb import plot, sweeps
from mlcb.cli import main as mlcb_command

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS = (1_000, 2) if TINY else (50_000, 8)
FIGURES = Path("results/tutorials/sweep-report")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The grid
#
# A grid starts from a preset; every list under `grid` expands into the product. The same
# content as a TOML file runs with `mlcb sweep FILE` on the command line:
#
# ```toml
# name = "trap-grid"
# preset = "trap"
# horizon = 50_000
# replications = 8
# block = 4          # replications per task; results do not depend on it
#
# [grid]
# budget = [1, 2, 3, 4]
# n_experts = [10, 20]
# ```
#
# Every setting is built and checked before anything runs: an invalid combination (say
# `budget = 12` with `n_experts = 10`) is named in one line and nothing is written.

# %%
grid = {
    "name": "trap-grid",
    "preset": "trap",
    "horizon": HORIZON,
    "replications": REPLICATIONS,
    "block": max(1, REPLICATIONS // 2),
    "grid": {"budget": [1, 2, 3, 4], "n_experts": [10, 20]},
}
out = Path(tempfile.mkdtemp())

# %% [markdown]
# ## Run it
#
# `mlcb.sweep` splits each setting's replications into tasks of `block` replications and runs
# them on worker processes (`executor="dask"` sends them to a Dask cluster instead). Running the
# same sweep again skips the parts already on disk, so an interrupted sweep resumes.

# %%
outcome = mlcb.sweep(grid, out=out, workers=2)
print(f"{outcome.computed} tasks computed, {outcome.skipped} skipped, {len(outcome.failed)} failed")
again = mlcb.sweep(grid, out=out, workers=2)
print(f"run again: {again.computed} computed, {again.skipped} skipped")

# %% [markdown]
# ## The results
#
# `mlcb.sweeps.load(DIR)` gives the `Result` of every finished part. Each setting is labelled
# by its policy, its budget and the values that vary in the grid.

# %%
result = sweeps.load(out / "trap-grid")
display(
    result.summary()[["setting", "budget", "rounds", "replications", "pseudo_regret", "best_deployed_share"]]
)

# %% [markdown]
# The budget figure: final regret against M for each pool size K, with the theory's shape
# `sqrt(K/M) + (K/M)^(1-alpha)` scaled to the points (the theorem is an upper bound; its shape
# is fitted by least squares in log space). `plot.budget(result)` draws it too.

# %%
plot.budget(result).savefig(FIGURES / "budget.png")
print(f"saved {FIGURES / 'budget.png'}")

# %% [markdown]
# The theory figure: one panel per setting (at most six), with pseudo-regret, the certificate
# Delta(t), the main theorem's curve and the worst case B_num(t) on log-log axes, the slope
# fitted over the last decade next to the theorem's exponent `max(1/2, alpha)`.

# %%
plot.theory(result).savefig(FIGURES / "theory.png")
print(f"saved {FIGURES / 'theory.png'}")

# %% [markdown]
# ## The report
#
# `mlcb report DIR` writes one HTML file with the summary table, the settings, the grid, any
# failed tasks and every figure embedded: nothing else is needed to open or share it.
# (`mlcb.report.report(DIR)` does the same from Python.)

# %%
status = mlcb_command(["report", str(out / "trap-grid")])  # 0: done
report = out / "trap-grid" / "report.html"
print(f"{report.name}: {report.stat().st_size / 1e6:.1f} MB, {report.read_text().count('<img')} figures")

# %% [markdown]
# This page wrote into a temporary directory; `out="results"` (the default) keeps a sweep.

# %%
shutil.rmtree(out)
