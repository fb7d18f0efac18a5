# %% [markdown]
# # Your first simulation
#
# The paper's bandit "trap": K = 10 bandit experts learn online, and each round a meta-policy may
# train at most M of them and must deploy one. Expert 0 is the best in the long run but learns
# slowly; the others learn fast and plateau higher, so a policy that trusts early losses falls
# into the trap. M-LCB trains the M experts with the smallest lower confidence bounds and
# deploys, among them, the one with the smallest upper bound
# ([the mathematics](../../theory/)).
#
# This page runs M-LCB at budgets M = 1, 2 and 4, reads the summary and draws the regret figure.
# It runs as it is: `python docs/tutorials/first-simulation.py` prints what each step computes and
# saves the figures under `results/tutorials/first-simulation/`.

# %%
import os
from pathlib import Path

import pandas as pd

import mlcb
from mlcb import plot

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS = (2_000, 2) if TINY else (100_000, 20)
FIGURES = Path("results/tutorials/first-simulation")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## Simulate
#
# `mlcb.simulate` runs one setting: a preset (or an environment and a pool of experts of your
# own), a budget, a horizon and a number of independent replications. Each call returns a
# `Result`; `Result.concat` puts several side by side. The first call on a machine compiles the
# engine (`progress=True` says so while it does; Numba caches it on disk, so later runs start
# at once).

# %%
result = mlcb.Result.concat(
    [
        mlcb.simulate(preset="trap", budget=budget, horizon=HORIZON, replications=REPLICATIONS, seed=0)
        for budget in (1, 2, 4)
    ]
)
print(result.settings)

# %% [markdown]
# ## The summary
#
# One row per setting, at the horizon, as means over the replications: the realised `regret` and
# its standard deviation, the `pseudo_regret` (the expected loss of what was deployed, minus the
# best expert's limit, summed over rounds), the data-dependent `certificate` Delta(T), the share
# of rounds in which the best expert was deployed, and the share of replications whose
# pseudo-regret ever exceeded the certificate (see [reading the certificate](../certificate/)).

# %%
summary = result.summary()
display(
    summary[
        ["setting", "rounds", "replications", "regret", "pseudo_regret", "certificate", "best_deployed_share"]
    ]
)

# %% [markdown]
# A larger budget buys less regret: more experts learn each round, so the slow but capable
# expert 0 is found sooner and deployed more often.

# %%
display(summary.set_index("setting")[["pseudo_regret", "best_deployed_share"]])

# %% [markdown]
# ## The regret figure
#
# Solid: the mean pseudo-regret over replications with its band (two standard errors of the
# mean; with fewer than five runs, each run is drawn thin), the slope fitted over the last decade
# of rounds in the legend; dashed: the mean certificate Delta(t); dotted: the worst case B_num(t)
# over every allocation of the budget. Log-log axes: a straight line is a power law. Each figure
# function returns seaborn's `FacetGrid`, to restyle (`grid.set_axis_labels(...)`) or save.

# %%
grid = plot.regret(result)
grid.savefig(FIGURES / "regret.png")
print(f"saved {FIGURES / 'regret.png'}")

# %% [markdown]
# The paper's other two panels show what the policy did: how often each expert was deployed
# and trained. Expert 0 is the best one.

# %%
grid = plot.panels(result)
grid.savefig(FIGURES / "panels.png")
print(f"saved {FIGURES / 'panels.png'}")

# %% [markdown]
# ## The raw data
#
# Every figure is drawn from three tidy pandas frames: `curves` (one row per setting,
# replication and checkpoint round), `experts` (per-expert counts) and `replications` (one row
# per run). `result.save(DIR)` writes them as Parquet with the metadata, and `mlcb.load(DIR)`
# reads them back; on the command line, `mlcb run trap` does all of this at the paper's size.

# %%
display(result.curves.head())
