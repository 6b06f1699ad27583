# The two commands: `make demo` and `make test`. Both build the virtual
# environment first (core + every plugin, editable), so they work on a fresh
# machine with Python 3.10+ and nothing else.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PLUGINS := plugins/cpu plugins/profiler plugins/vmap plugins/autocast plugins/quantize plugins/cuda plugins/compile plugins/distributed plugins/privateuse1_example examples/minimal_backend
# tensorplug-distributed with its [mpi] extra (the mpich and mpi4py wheels, 15 MB to download): its
# multi-process tests run under the venv's own mpiexec
INSTALL := $(patsubst plugins/distributed,"plugins/distributed[mpi]",$(PLUGINS))
STAMP  := $(VENV)/.installed-stamp
# pytest workers (pytest-xdist): one per core, at most 4; `make test JOBS=0` runs in one process
JOBS   ?= $(shell $(PYTHON) -c "import os; print(min(4, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1))")
PIP    := $(BIN)/python -m pip

.PHONY: demo test bench venv clean openreg

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS)) Makefile
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[examples,test]" $(addprefix -e ,$(INSTALL))
	touch $(STAMP)

venv: $(STAMP)

# Rebuild the openreg C++ extension after a change under plugins/privateuse1_example/csrc
# (Python files of the editable install are picked up without it).
openreg: $(STAMP)
	$(PIP) install -q -e plugins/privateuse1_example

demo: $(STAMP)
	$(BIN)/tensorplug demo

# The second run is tensorplug-cuda's tests and conformance in its simulated mode (two simulated
# devices on numpy: a test aid, not a GPU); in the first they check the behaviour without a GPU.
test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(JOBS)
	TENSORPLUG_CUDA_SIMULATE=2 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(JOBS) plugins/cuda

# One BLAS thread for numpy (and so tensorplug-cpu) and for PyTorch: on a small shared machine
# OpenBLAS's spinning worker threads make small matmuls erratic.
bench: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/run.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/training.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/profiler_overhead.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/openreg.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/vmap.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/layers.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/layers_conv.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/layers_rnn.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/autocast.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/quantize.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/compile.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/programs.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/distributed.py

clean:
	rm -rf $(VENV) build core/*.egg-info plugins/*/*.egg-info plugins/privateuse1_example/build
