# %% [markdown]
# # A pool of mixture-of-experts networks
#
# Here every expert of the pool is a whole neural network: a mixture of experts (a router with
# top-k gating over small MLP sub-experts), trained online by Adam, one sample per round. Only M
# networks may take a training step each round. The pool mixes fast-but-limited members (one
# small sub-expert, large steps) with slow-but-capable ones (several wider sub-experts, small
# steps), on a stream whose target is a different function in each of several clusters
# ([mixture-of-experts pools](../../moe/)). It runs on the CPU; it needs torch
# (`pip install 'mlcb[torch]'`).

# %%
import os
from pathlib import Path

import pandas as pd
import torch

import mlcb
from agents.moe import ModuleExpert, MoEExpert
from mlcb import plot

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS = (40, 1) if TINY else (1_500, 4)
FIGURES = Path("results/tutorials/moe-pool")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The pool
#
# Four `MoEExpert` members that differ in the number of sub-experts `E`, top-k, width and step
# size, and one network of our own architecture: `ModuleExpert` takes any `torch.nn.Module`
# built by a factory `factory(input_dim, output_dim)`. Members with the same architecture are
# stacked and trained together, every replication at once, in one batched forward and backward
# pass; a member that is not trained this round is left bit for bit unchanged.


# %%
class Wide(torch.nn.Module):
    """No router: one tanh MLP."""

    def __init__(self, input_dim, output_dim, width=32):
        super().__init__()
        self.hidden = torch.nn.Linear(input_dim, width)
        self.out = torch.nn.Linear(width, output_dim)

    def forward(self, x):  # (B, input_dim) -> (B, output_dim)
        return self.out(torch.tanh(self.hidden(x)))


pool = [
    MoEExpert(n_experts=1, top_k=1, hidden=4, lr=0.03, device="cpu"),  # fast but limited
    MoEExpert(n_experts=2, top_k=1, hidden=8, lr=0.02, device="cpu"),
    MoEExpert(n_experts=4, top_k=2, hidden=16, lr=0.01, device="cpu"),
    MoEExpert(n_experts=8, top_k=2, hidden=32, lr=0.003, device="cpu"),  # slow but capable
    ModuleExpert(factory=Wide, lr=0.01, device="cpu"),
]

# %% [markdown]
# ## Simulate
#
# `mlcb/Clustered-v0` draws `x` from a mixture of Gaussian clusters and `y` from a random target
# network of the cluster's region plus noise; the loss is the squared error clipped at 1.
# A network's least possible loss is unknown, so regret is measured against the stream's Bayes
# loss (an upper bound on the regret against the best member). The networks' rates are
# heuristic, so the certificate is a diagnostic here.

# %%
result = mlcb.Result.concat(
    [
        mlcb.simulate(
            env="mlcb/Clustered-v0",
            experts=pool,
            budget=budget,
            horizon=HORIZON,
            replications=REPLICATIONS,
            seed=0,
        )
        for budget in (1, 2)
    ]
)
display(
    result.summary()[["setting", "rounds", "replications", "regret", "pseudo_regret", "best_deployed_share"]]
)

# %% [markdown]
# All members share one reference (the Bayes loss), so `best_deployed_share` means little here;
# the training counts say more: where M-LCB moved its budget as evidence accumulated.

# %%
plot.panels(result).savefig(FIGURES / "panels.png")
print(f"saved {FIGURES / 'panels.png'}")

# %%
experts = result.experts[result.experts["round"] == HORIZON]  # the counts at the horizon
trained = experts.groupby(["expert", "setting"])["trained"].mean().unstack("setting")
trained.index = [f"{i}: {type(member).__name__}" for i, member in enumerate(pool)]
display(trained.rename_axis("mean training rounds at the horizon", axis=1))
