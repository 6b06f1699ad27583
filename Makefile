# The two commands: `make demo` and `make test`. Both build the virtual
# environment first (core + every plugin, editable), so they work on a fresh
# machine with Python 3.10+ and nothing else.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PLUGINS := plugins/cpu
STAMP  := $(VENV)/.installed-stamp
PIP    := $(BIN)/python -m pip

.PHONY: demo test bench venv clean

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS)) Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[examples,test]" $(addprefix -e ,$(PLUGINS))
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/tensorplug demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/training.py

clean:
	rm -rf $(VENV) build core/*.egg-info plugins/*/*.egg-info
