# synthrisk developer commands. `make demo` and `make test` each create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test check lint typecheck doctest bench clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-demo: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[report]'
	touch $@

# The dev extra needs torch (the torch backend's tests run on CPU tensors). PyTorch's CPU
# build is installed first, pinned, so that the extra's `torch>=2.1` is already satisfied and
# pip never pulls a multi-GB CUDA build. Elsewhere, point TORCH_PIP at a CPU wheel, e.g.
# TORCH_PIP="torch --index-url https://download.pytorch.org/whl/cpu".
TORCH_PIP ?= torch==2.13.0

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q $(TORCH_PIP)
	$(BIN)/python -m pip install -q -e '.[dev,report,dask]'
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/synthrisk demo --out demo-output
	@echo "Open demo-output/report.html in a browser (every version: demo-output/reports/*.html)."

# The HTML report's browser test needs headless Chromium (Debian's `chromium` package).
# Installed here when missing and possible (root with apt-get); otherwise the test is
# skipped locally. CI sets SYNTHRISK_REQUIRE_CHROMIUM=1, which turns that skip into a failure.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian's chromium for the browser test of the HTML report ..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "note: chromium is missing and cannot be installed here (needs root and apt-get);" \
	         "the browser test of the HTML report will be skipped."; \
	  fi; }

test: $(VENV)/.installed-dev chromium
	$(BIN)/python -m pytest

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
