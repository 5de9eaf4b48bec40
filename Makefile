# synthrisk developer commands. `make demo` and `make test` each create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-gpu test-slow check lint typecheck doctest bench clean chromium chromium-note

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-demo: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[report]'
	touch $@

# The dev extra is what the checks need (pytest, ruff, mypy, hypothesis, polars): no torch,
# so .venv stays small. The torch backend's tests are skipped without torch; `make test-gpu`
# installs PyTorch (the CPU build, pinned, so pip never pulls a multi-GB CUDA build; elsewhere
# point TORCH_PIP at another wheel, e.g. TORCH_PIP="torch --index-url
# https://download.pytorch.org/whl/cpu") and runs them.
TORCH_PIP ?= torch==2.13.0

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev,report,dask]'
	touch $@ $(VENV)/.installed-demo

$(VENV)/.installed-gpu: $(VENV)/.installed-dev
	$(BIN)/python -m pip install -q $(TORCH_PIP)
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/synthrisk demo --out demo-output
	@echo "Open demo-output/report.html in a browser (every version: demo-output/reports/*.html)."

# The HTML report's browser test needs headless Chromium (Debian's `chromium` package).
# `make test` installs nothing outside .venv: without chromium it prints a note and the
# browser test is skipped. `make chromium` installs it (as root, with apt-get: Debian's
# chromium and its dependencies, about 115 packages on a minimal Debian). CI sets
# SYNTHRISK_REQUIRE_CHROMIUM=1 (.ci/run): `make test` then installs it when missing, and
# the browser test fails instead of skipping.
HAS_CHROMIUM = command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1

chromium:
	@$(HAS_CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium (and its dependencies) for the browser test of the HTML report ..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "make chromium: cannot install chromium here (needs root and apt-get);" \
	         "install your system's chromium package, or the browser test is skipped."; \
	    exit 1; \
	  fi; }

chromium-note:
	@$(HAS_CHROMIUM) || echo "note: chromium is not installed: the browser test of the HTML report" \
	  "will be skipped (\`make chromium\` installs Debian's chromium, about 115 packages, as root)."

# the slow tests (a few, marked `slow`) are left out; `make test-slow` runs them.
# The suite runs on every logical CPU, at most 4 worker processes (pytest-xdist; each worker
# imports numba and Dask): `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= logical
PYTEST_PARALLEL = $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --maxprocesses 4)
test: $(VENV)/.installed-dev $(if $(filter 1,$(SYNTHRISK_REQUIRE_CHROMIUM)),chromium,chromium-note)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL)

# the torch neighbour backend's tests (CPU tensors; CUDA when present), with torch installed
test-gpu: $(VENV)/.installed-gpu
	$(BIN)/python -m pytest tests/neighbors/test_torch_backend.py tests/neighbors/test_neighbors.py $(PYTEST_PARALLEL)

test-slow: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -m slow $(PYTEST_PARALLEL)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

doctest: $(VENV)/.installed-dev
	$(BIN)/python -m pytest --doctest-modules src/synthrisk -q

# the gate CI runs (after `make demo`): lint, types, the suite, the doctests
check: lint typecheck test doctest

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_dcr.py

clean:
	rm -rf $(VENV) demo-output test-artifacts .pytest_cache .mypy_cache .ruff_cache
