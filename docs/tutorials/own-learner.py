# %% [markdown]
# # Plug in your own learner
#
# Any online learner written in Python can sit in a pool: an object with `learn(data)` (suffer
# the loss of its current decision on the round's data, learn from it, return the loss) and
# `deploy(data)` (the loss of the decision it would deploy, and its expected loss when known).
# Nothing to inherit and nothing to register ([Python experts](../../python-experts/) is the
# whole contract). This page writes one, checks it, and lets M-LCB choose among copies of it
# with different temperatures.

# %%
import os
from pathlib import Path

import numpy as np
import pandas as pd

import mlcb
from mlcb import plot
from mlcb.testing import check_expert

try:  # a notebook shows tables as tables; a script prints them, whole
    from IPython.display import display
except ImportError:
    display = print
pd.set_option("display.width", 160, "display.max_columns", None)

# The size of the runs (the test suite sets MLCB_TUTORIAL_SIZE=tiny), and where the figures go.
TINY = os.environ.get("MLCB_TUTORIAL_SIZE") == "tiny"
HORIZON, REPLICATIONS = (300, 2) if TINY else (20_000, 8)
FIGURES = Path("results/tutorials/own-learner")
FIGURES.mkdir(parents=True, exist_ok=True)

# %% [markdown]
# ## The learner
#
# Boltzmann exploration over one expert's arms: it plays arm `a` with probability proportional
# to `exp(-mean loss of a / temperature)` and deploys its most played arm. On the bandit
# environments `data` is the expert's own arms at round t: `data.n_arms`, `data.loss(arm)` (the
# round's draw) and `data.mean(arm)` (the arm's expected loss).
#
# `rate` tells M-LCB how fast the learner's regret grows, `U(n) = beta n^alpha sqrt(log(2 n^2 /
# delta'))` for `(beta, alpha)`; nobody has proved that bound for this learner, so it says
# `heuristic = True` and results mark the certificate as not valid.


# %%
class Softmax:
    """Boltzmann exploration over one expert's arms; deploys its most played arm."""

    rate = (2.0, 0.5)
    heuristic = True

    def __init__(self, temperature=0.1, seed=0):
        self.temperature, self.rng = temperature, np.random.default_rng(seed)
        self.pulls = self.losses = None

    def spawn(self, seed):  # a fresh copy per replication, with its own random stream
        return Softmax(self.temperature, seed)

    def learn(self, data):
        if self.pulls is None:
            self.pulls, self.losses = np.zeros(data.n_arms), np.zeros(data.n_arms)
        means = self.losses / np.maximum(self.pulls, 1)
        weights = np.exp(-(means - means.min()) / self.temperature)
        arm = self.rng.choice(data.n_arms, p=weights / weights.sum())
        loss = data.loss(arm)
        self.pulls[arm] += 1
        self.losses[arm] += loss
        return loss

    def deploy(self, data):  # must not learn; returns (realised loss, expected loss)
        arm = 0 if self.pulls is None else int(np.argmax(self.pulls))
        return data.loss(arm), data.mean(arm)

    def __repr__(self):
        return f"Softmax(temperature={self.temperature})"


# %% [markdown]
# ## Check it before running it
#
# `check_expert` runs the learner for a few rounds on the environment and names whatever breaks
# the contract (a loss outside [0, 1], a `deploy` that learns, a `spawn` that shares state, ...).
# When all is well it returns a report of every check it ran (and what to know of the learner:
# here, that its rate is a heuristic); otherwise it raises `ConformanceError`.

# %%
print(check_expert(Softmax(), env="mlcb/Trap-v0"))

# %% [markdown]
# ## Simulate
#
# A pool of ten: five temperatures, each twice (every replication gets its own copies through
# `spawn`). On the trap, expert k faces the arms of trap expert k, so the same learner meets
# ten different problems. Python experts run on the Python engine, which advances the
# replications in lockstep and asks the compiled policy kernels for each round's decision.

# %%
temperatures = (0.01, 0.03, 0.1, 0.3, 1.0)
pool = [Softmax(temperature) for temperature in temperatures] * 2
result = mlcb.Result.concat(
    [
        mlcb.simulate(
            env="mlcb/Trap-v0", experts=pool, budget=budget, horizon=HORIZON, replications=REPLICATIONS
        )
        for budget in (1, 3)
    ]
)
display(
    result.summary()[["setting", "regret", "pseudo_regret", "best_deployed_share", "certificate_violations"]]
)

# %% [markdown]
# The result says which engine ran and that the certificate is not a guarantee here:

# %%
print({key: result.metadata["settings"]["mlcb M=1"][key] for key in ("engine", "certificate_valid")})

# %% [markdown]
# ## The figures
#
# The regret figure (log-log) and the three panels: regret, deployments and training rounds per
# expert. The training counts show where M-LCB spent its budget.

# %%
for kind, draw in (("regret", plot.regret), ("panels", plot.panels)):
    draw(result).savefig(FIGURES / f"{kind}.png")
    print(f"saved {FIGURES / kind}.png")

# %% [markdown]
# ## When it breaks
#
# An exception, a NaN or a loss outside [0, 1] inside a learner stops the run with one message
# that names the expert, its class, the replication and the round:


# %%
class Broken(Softmax):
    def learn(self, data):
        return float("nan") if self.pulls is not None and self.pulls.sum() > 5 else super().learn(data)

    def spawn(self, seed):
        return Broken(self.temperature, seed)


try:
    mlcb.simulate(env="mlcb/Trap-v0", experts=[Broken()] * 10, budget=2, horizon=50, replications=1)
except Exception as error:  # noqa: BLE001 (shown, not handled)
    print(f"{type(error).__name__}: {error}")
