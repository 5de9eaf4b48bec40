# synthrisk developer commands. `make demo` and `make test` each create .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-demo: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[report]'
	touch $@

$(VENV)/.installed-dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev,report,dask]'
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/synthrisk demo --out demo-output

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

bench: $(VENV)/.installed-dev
	$(BIN)/python benchmarks/bench_dcr.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
