# %% [markdown]
# # A river model pool on a stream
#
# Streaming machine learning faces budgeted expert selection every day: a pool of online models,
# a stream of samples, and no time to train every model on every sample. This page takes the
# eight river classifiers of the `phishing` preset (logistic regressions with three step sizes,
# a perceptron, PA-I, Gaussian naive Bayes, a Hoeffding tree and k-NN) and a stream of rows drawn
# from river's Phishing data set, and lets M-LCB decide which M models learn each sample, first
# through the simulator and then as a river estimator ([river and scikit-learn](../../river/)).
# It needs river: `pip install 'mlcb[river]'`.

# %%
import os
from pathlib import Path

import pandas as pd
import seaborn as sns

import mlcb
from mlcb import plot
from mlcb.river import compare

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS, SHUFFLES = (120, 1, 1) if TINY else (2_000, 4, 3)
FIGURES = Path("results/tutorials/river-pool")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The pool on the simulator
#
# `mlcb/RealData-v0` draws one row per round, with replacement, from a data set shipped with
# river; each replication is its own shuffle, and every policy meets the same rows. The preset
# wraps each model in `mlcb.river.experts.RiverExpert` (the 0-1 loss; a heuristic rate, so the
# certificate is a diagnostic here). Real data has no known expected losses: regret is measured
# against the best pool member trained on every round of the same stream, and there is no
# pseudo-regret.

# %%
result = mlcb.Result.concat(
    [
        mlcb.simulate(preset="phishing", budget=budget, horizon=HORIZON, replications=REPLICATIONS)
        for budget in (1, 2)
    ]
)
display(
    result.summary()[["setting", "rounds", "replications", "regret", "regret_std", "best_deployed_share"]]
)

# %% [markdown]
# Negative regret means a run did better than the reference: a model that learns only some
# samples can still beat the best one trained on all of them early on. The panels draw the regret
# on a linear axis, where it shows as it is; the log-log regret figure (`plot.regret`) switches
# to a symmetric log axis when that happens.

# %%
plot.panels(result).savefig(FIGURES / "panels.png")
print(f"saved {FIGURES / 'panels.png'}")

# %% [markdown]
# ## M-LCB as a river estimator
#
# `mlcb.river.BudgetedClassifier` puts M-LCB where river's `BanditClassifier` and
# `SuccessiveHalvingClassifier` sit: an estimator over a list of models, of which at most
# `budget` learn each sample, that works in `evaluate.progressive_val_score` and in pipelines.
# `mlcb.river.compare` runs it beside river's own selectors and beside training every model,
# on the same rows for each (here river's Phishing, a shuffle read once per seed), and reports
# progressive-validation accuracy (the column `value`) and model updates per sample.

# %%
table = compare("phishing", horizon=HORIZON, shuffles=SHUFFLES, budgets=(1, 2))
means = table.groupby("selector")[["value", "updates_per_sample"]].mean().sort_values("updates_per_sample")
display(means)

# %% [markdown]
# Accuracy against the updates each selector paid for: M-LCB at one update per sample against
# river's bandits at the same cost, and against training every model (eight updates per sample).

# %%
points = means.assign(accuracy=100 * means["value"]).reset_index()
grid = sns.relplot(
    data=points,
    x="updates_per_sample",
    y="accuracy",
    hue="selector",
    style="selector",
    s=70,
    height=4,
    aspect=1.5,
)
grid.set(xscale="log", xticks=[1, 2, 4, 8], xticklabels=["1", "2", "4", "8"])
grid.ax.minorticks_off()
grid.set_axis_labels("model updates per sample", "accuracy, %")
grid.ax.set_title(f"Phishing, {HORIZON} rows, mean of {SHUFFLES} shuffle(s)")
grid.savefig(FIGURES / "accuracy.png")
print(f"saved {FIGURES / 'accuracy.png'}")
