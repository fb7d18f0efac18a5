# %% [markdown]
# # Reading the certificate
#
# Besides regret, M-LCB computes, from the run itself, a bound on its own pseudo-regret: the
# *certificate*
#
# ```
# Delta(T) = sum over the best expert's training rounds of (UCB - LCB)
#          + (1/M) sum over experts k of sum over k's training rounds of (UCB - LCB)
# ```
#
# where each width `UCB - LCB` is the one the policy used in that round. With probability at
# least `1 - delta`, the pseudo-regret is at most Delta(T) *at every T at once*
# ([the mathematics, section 4](../../theory/#4-regret-and-the-certificate)). The guarantee holds
# for M-LCB with the theory constants and experts whose rate functions are valid; results say
# whether it does (`certificate_valid`). This page measures how often the pseudo-regret exceeds
# Delta and shows that the measurement can fail.

# %%
import os
from pathlib import Path

import pandas as pd
import seaborn as sns

import agents
import mlcb
from mlcb import plot, theory

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS = (500, 10) if TINY else (5_000, 200)
FIGURES = Path("results/tutorials/certificate")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## A small instance with a valid certificate
#
# Four UCB1 experts with two arms each (their rate function is proven), M-LCB with budget 2 and
# theory constants, `delta = 0.1`.

# %%
setting = dict(
    env="mlcb/BanditExperts-v0",
    env_params={"reward_means": [[0.3, 0.5], [0.35, 0.55], [0.2, 0.6], [0.45, 0.4]], "shuffle": True},
    experts=[agents.make("ucb1", c=2.0)] * 4,
    budget=2,
    horizon=HORIZON,
    delta=0.1,
    seed=2024,
)
result = mlcb.simulate(replications=REPLICATIONS, **setting)
print("certificate_valid:", result.metadata["settings"]["mlcb M=2"]["certificate_valid"])

# %% [markdown]
# The engine compares the pseudo-regret with Delta after every round (not only at the recorded
# checkpoints) and records per replication whether it was ever exceeded
# (`certificate_violated`). The summary's `certificate_violations` is their share.

# %%
violations = int(result.replications["certificate_violated"].sum())
display(result.summary()[["setting", "pseudo_regret", "certificate", "certificate_violations"]])

# %% [markdown]
# ## Is that as often as promised?
#
# Each replication exceeds its certificate with probability at most `delta`, independently, so
# the number of violating replications V is stochastically below Binomial(R, delta). A test at
# level `a = 0.001` fails when V exceeds the `(1 - a)`-quantile of that binomial,
# `mlcb.theory.certificate_allowance`:

# %%
allowance = int(theory.certificate_allowance(REPLICATIONS, delta=0.1, alpha=1e-3))
print(f"{violations} of {REPLICATIONS} replications exceeded Delta; the allowance is {allowance}")

# %% [markdown]
# The certificate is loose: it must hold for every allocation of the budget the data could
# have led to. The ratio of pseudo-regret to Delta(t) over the rounds shows by how much.
#
# ## A certificate that is too small is caught
#
# A check that cannot fail proves nothing. Shrink both confidence widths a thousandfold
# (`bonus_scale = 1e-3`): Delta is then no longer an upper bound, the policy itself changes, and
# the same decision rule must reject it.

# %%
shrunk = mlcb.simulate(replications=REPLICATIONS, policy_params={"bonus_scale": 1e-3}, **setting)
shrunk_violations = int(shrunk.replications["certificate_violated"].sum())
print(
    f"bonus_scale 1e-3: {shrunk_violations} of {REPLICATIONS} replications exceeded Delta "
    f"(allowance {allowance}); certificate_valid = "
    f"{shrunk.metadata['settings']['mlcb M=2']['certificate_valid']}"
)

# %% [markdown]
# ## The figures
#
# First, pseudo-regret against Delta(t) for the valid certificate (means over replications, and
# the worst case B_num(t) over every allocation of the budget, which bounds Delta from above).
# Then the ratio pseudo-regret / Delta(t) of every replication, for both runs (seaborn, over the
# tidy `curves` frame); above the line at 1 a replication has exceeded its certificate at that
# checkpoint.

# %%
plot.regret(result).savefig(FIGURES / "regret.png")
print(f"saved {FIGURES / 'regret.png'}")

ratios = pd.concat(
    [
        run.curves[run.curves["round"] >= 10].assign(
            run=label, ratio=lambda rows: rows["pseudo_regret"] / rows["certificate"]
        )
        for run, label in ((result, "theory constants"), (shrunk, "bonus_scale 1e-3"))
    ],
    ignore_index=True,
)
grid = sns.relplot(
    data=ratios, x="round", y="ratio", hue="run", units="replication", estimator=None, kind="line",
    alpha=0.25, linewidth=0.8, height=3.5, aspect=1.8,
)  # fmt: skip
grid.set(xscale="log", yscale="log")
for line in grid.legend.get_lines():  # the legend's lines opaque, the runs' faint
    line.set_alpha(1.0)
grid.refline(y=1.0, color="black", linestyle="-", linewidth=1)
grid.set_axis_labels("round t", "pseudo-regret / Delta(t)")
grid.ax.set_title("every replication: above 1, its certificate is exceeded")
grid.savefig(FIGURES / "ratios.png")
print(f"saved {FIGURES / 'ratios.png'}")

# %% [markdown]
# What to read: with valid rates and theory constants, the pseudo-regret stays far below Delta,
# and violations (if any) stay within the binomial allowance. The certificate is computed from
# the run, so it is available where the best expert's identity is not: it bounds what the
# policy lost, from what it observed. With heuristic rates (vanilla Thompson sampling, Python
# learners without a proven rate, river models) or other constants, results mark it as not
# valid, and it is a diagnostic only.
