# Two commands do all set-up on a fresh machine with Python 3.11: `make demo` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# torch==2.13.0 is a local CPU wheel on our machines; any other pin would pull CUDA builds.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: demo test install-demo install-test clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[all]"
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/python -m legalrag demo --answer

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV)
