# Two commands on a fresh machine with Python 3.11 and make:
#   make run    set up .venv and run the main job (the paper's trap instance, M in {1, 2, 4})
#   make test   set up .venv and run the test suite
# and: make docs (the documentation site, into site/), make bench (the benchmarks)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test docs bench lint clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,all]"
	$(BIN)/python -m compileall -q mlcb agents envs  # bytecode kept even where PYTHONDONTWRITEBYTECODE=1
	# A Jupyter kernel of this environment, so that the tutorials open (and jupytext --execute runs
	# them) as notebooks with the project's packages.
	$(BIN)/python -m ipykernel install --sys-prefix --name mlcb --display-name "Python (mlcb)" > /dev/null
	# The trap's engine compiled once into Numba's cache, so that the first `mlcb run` does not
	# (about 15 s on two idle cores).
	$(BIN)/mlcb run trap --budget 1 --horizon 100 --replications 1 --no-plot --out $(VENV)/warm-up > /dev/null
	rm -rf $(VENV)/warm-up
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/mlcb run trap

# Every core: one worker per core, each test file on one worker (its module fixtures built once).
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile

# Strict: a broken link or a docstring that does not parse is an error. The tutorials are executed
# (a few minutes); MLCB_DOCS_EXECUTE=false renders them without running them.
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_suite.py
	$(BIN)/python benchmarks/bench_startup.py
	$(BIN)/python benchmarks/bench_python_engine.py
	$(BIN)/python benchmarks/bench_comparison.py
	$(BIN)/python benchmarks/bench_horizons.py
	$(BIN)/python benchmarks/bench_moe.py
	$(BIN)/python benchmarks/bench_sweep.py
	$(BIN)/python benchmarks/bench_practitioners.py
	$(BIN)/python benchmarks/bench_slopes.py

lint: $(STAMP)
	$(BIN)/ruff check mlcb envs agents tests benchmarks conftest.py

clean:
	rm -rf $(VENV) results site .cache .pytest_cache .hypothesis .benchmarks
