"""The texts of the command line's help: the examples of ``mlcb --help`` and of each command's
``--help``, and where the TOML setting format is documented."""

from __future__ import annotations

EXAMPLES = """examples:
  mlcb run trap                                  the paper's bandit trap, M in {1, 2, 4}
  mlcb run my_experiment.toml                    a setting described in TOML
  mlcb compare trap                              the paper's comparison: M-LCB, LimitedAdvice, CORRAL
  mlcb sweep grid.toml                           a grid of settings on this machine's cores
  mlcb plot results/trap                         redraw the figures of a saved result
  mlcb report results/my-sweep                   one self-contained HTML page with every figure
  mlcb show results/trap                         a saved result's summary and metadata
  mlcb list                                      presets, policies, experts, environments
  mlcb paper                                     the paper's experiments, one HTML page (--full: its sizes)
  mlcb compare ctg --data mine.csv --label y     the cardiotocography comparison on your own CSV
`mlcb COMMAND --help` shows each command's options and examples.
"""

#: Where the TOML setting format is documented (``mlcb run --help`` says it).
TOML_DOCS = (
    "docs/command-line.md, section 'A setting of your own' (in Python: help(mlcb.config.toml.load_toml))"
)

#: Each command's own examples (its ``--help``), after the options.
COMMAND_EXAMPLES = {
    "run": f"""examples:
  mlcb run trap                                  the paper's bandit trap, M in {{1, 2, 4}}
  mlcb run trap --budget 1 2 3 4 --replications 30 --calibration practical
  mlcb run glm --horizon 10000
  mlcb run trap --policy exp3p --budget 2        another registered policy
  mlcb run my_experiment.toml                    a setting described in TOML
  mlcb run my.toml --plugin my_families          with names registered by a module of one's own
  mlcb run moe --device cpu                      a pool of torch networks, on the CPU
  mlcb run ctg --data mine.csv --label y         a real-data preset on your own CSV file

TOML setting files: {TOML_DOCS}.
""",
    "compare": """examples:
  mlcb compare trap                              the paper's comparison: M-LCB, LimitedAdvice, CORRAL
  mlcb compare glm --policies mlcb ed2rb         a subset of the glm comparison
  mlcb compare trap --set practitioners          M-LCB against river-style bandits, halving, R-ed-UCB, EXP3.P
  mlcb compare trap --policies mlcb my-policy --plugin my_policies
                                                 a policy of one's own beside M-LCB, same seeds and stream
  mlcb compare ctg                               the paper's cardiotocography comparison (the data ship)
  mlcb compare ctg --data mine.csv --label y     the same classifiers and policies on your own CSV
""",
    "sweep": """examples:
  mlcb sweep grid.toml                           a grid of settings on this machine's cores
  mlcb sweep grid.toml --workers 4 --block 5     4 processes, 5 replications per task
  mlcb sweep grid.toml --executor dask           on a Dask LocalCluster started for the sweep
  mlcb sweep grid.toml --executor dask --scheduler tcp://HOST:8786   ... on a Dask cluster
  mlcb sweep grid.toml --plugin my_policies      a grid over policies of one's own
""",
    "plot": """examples:
  mlcb plot results/trap                         the regret figure and the panels of a saved run
  mlcb plot results/my-sweep --kind theory budget   figures of a saved sweep
  mlcb plot results/trap --out figures           into another folder
""",
    "report": """examples:
  mlcb report results/my-sweep                   RESULT/report.html
  mlcb report results/trap --out trap.html
""",
    "show": """examples:
  mlcb show results/trap                         a saved run's summary, settings and provenance
  mlcb show results/my-sweep                     a sweep's, with its grid and failed tasks
""",
    "list": """examples:
  mlcb list                                      presets, policies, experts, environments
  mlcb list policies                             one section (presets, policies, experts,
                                                 environments, figures, writers)
  mlcb list --plugin my_families                 with the names a module of one's own registers
""",
    "paper": """examples:
  mlcb paper                                     the quick size, results/paper/index.html
  mlcb paper --full --out results/paper-full     the paper's sizes
  mlcb paper --only trap glm                     two sections
  mlcb paper --warfarin warfarin.csv             with the Warfarin runs on your copy of the IWPC file
""",
}
