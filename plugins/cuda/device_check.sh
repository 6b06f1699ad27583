#!/usr/bin/env bash
# The real-GPU check of tensorplug-cuda, for a GPU machine without network access.
#
# Expects Python 3.12 with cupy-cuda13x, numpy, pluggy, ml-dtypes, pytest, hypothesis, mpi4py and
# torch (with CUDA) preinstalled. Run from anywhere: it works in the repository root.
#
#   OUT=/some/dir bash plugins/cuda/device_check.sh      (OUT defaults to ./out)
#
# Steps, each timed with its exit status logged; a failing step does not stop the later ones:
#   a) environment: nvidia-smi -L, python / cupy / torch versions, cupy.is_available()
#   b) install core and plugins editable without network (pip --no-deps --no-build-isolation;
#      falls back to --break-system-packages / --user, then to PYTHONPATH plus generated
#      entry-point metadata so that the plugins are still discovered)
#   c) the plugin's tests: pytest plugins/cuda -x (the conformance suite is step d)
#   f) python benchmarks/cuda.py --json $OUT/cuda_bench.json
#   e) python -m tensorplug demo --device cuda
#   g) tensorplug-distributed on the GPU: a 1-rank NCCL group (cuda collectives and DDP on cuda,
#      plugins/distributed/tests/scripts/cuda_collectives.py run without the simulation) and a
#      2-process MPI group sharing the GPU for host collectives (collectives.py under mpiexec -n 2)
#   d) python -m tensorplug conformance cuda (summary here, full output in $OUT/conformance_cuda.log),
#      last: it gets the time that is left
# Everything goes to $OUT/device_check.log and to stdout. The whole run is held under
# DEVICE_CHECK_BUDGET seconds (default 450, i.e. under 8 minutes): a step's timeout shrinks so that
# the later steps keep a minimum share, and a step with no time left is reported as skipped.
# Exit status: 0 when every step passed, 1 otherwise.

set -uo pipefail

# This is the real-GPU check: never the numpy simulation.
unset TENSORPLUG_CUDA_SIMULATE

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/device_check.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!

BUDGET="${DEVICE_CHECK_BUDGET:-450}"
START=$SECONDS
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PYTHONUNBUFFERED=1

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if command -v python >/dev/null 2>&1; then PY=python; else PY=python3; fi
fi

PROJECTS=(. plugins/cpu plugins/profiler plugins/vmap plugins/autocast plugins/quantize plugins/cuda plugins/compile
          plugins/distributed)
# plugins/privateuse1_example is left out: it needs a C++ build.

STEP_NAMES=()
STEP_STATUS=()
STEP_SECS=()
STEP_NOTES=()
STEP_NOTE=""
LIMIT=0

log() { echo "[device_check $(date -u +%H:%M:%S) +$((SECONDS - START))s] $*"; }

# run_step NAME TIMEOUT RESERVE FUNCTION: run FUNCTION with $LIMIT = min(TIMEOUT, time left - RESERVE)
# seconds (RESERVE is kept for the steps after it).
run_step() {
    local name=$1 want=$2 reserve=$3 fn=$4
    local left=$((BUDGET - (SECONDS - START)))
    LIMIT=$want
    if [ $((left - reserve)) -lt "$LIMIT" ]; then LIMIT=$((left - reserve)); fi
    if [ "$LIMIT" -lt 10 ] && [ "$left" -ge 10 ]; then LIMIT=$((left < want ? left : want)); fi
    STEP_NAMES+=("$name")
    STEP_NOTE=""
    if [ "$LIMIT" -lt 10 ]; then
        log "=== $name: SKIPPED (time budget of ${BUDGET}s spent)"
        STEP_STATUS+=("skipped")
        STEP_SECS+=(0)
        STEP_NOTES+=("")
        return
    fi
    log "=== $name (limit ${LIMIT}s)"
    local t0=$SECONDS
    "$fn"
    local rc=$?
    local dt=$((SECONDS - t0))
    local status="ok"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then status="TIMEOUT(rc=$rc)"
    elif [ "$rc" -ne 0 ]; then status="FAIL(rc=$rc)"; fi
    log "=== $name: $status in ${dt}s"
    STEP_STATUS+=("$status")
    STEP_SECS+=("$dt")
    STEP_NOTES+=("$STEP_NOTE")
}

# -- a) environment ---------------------------------------------------------------------------
step_env() {
    local rc=0
    if command -v nvidia-smi >/dev/null 2>&1; then
        timeout 20 nvidia-smi -L || rc=$?
    else
        echo "nvidia-smi: not found"
    fi
    echo "python: $(command -v "$PY")"
    timeout 10 "$PY" -c "import sys; print('python', sys.version)" || rc=$?
    timeout 10 "$PY" -m pip --version || echo "pip: not available"
    timeout 10 "$PY" -c "import setuptools; print('setuptools', setuptools.__version__)" \
        || echo "setuptools: not importable (pip -e needs it with --no-build-isolation)"
    timeout 10 "$PY" -c "import numpy; print('numpy', numpy.__version__)" || rc=$?
    timeout 60 "$PY" -c "import cupy
print('cupy', cupy.__version__, 'CUDA runtime', cupy.cuda.runtime.runtimeGetVersion())" || rc=$?
    timeout 60 "$PY" -c "import torch
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())" || rc=$?
    echo "cupy.is_available():"
    timeout 60 "$PY" -c "import cupy; print(cupy.is_available())" || rc=$?
    return $rc
}

# -- b) install without network -----------------------------------------------------------------
PIP_MODE=""          # the pip flags that worked for the first project
PIP_BROKEN=0         # 1 once every way of calling pip failed on a project: the rest go to the fallback
FAILED_PROJECTS=()

pip_install() {  # pip_install DIR: editable, no deps, no build isolation, no index
    local dir=$1 mode
    [ "$PIP_BROKEN" -eq 1 ] && return 1
    local modes=("$PIP_MODE")
    if [ -z "$PIP_MODE" ]; then modes=("" "--break-system-packages" "--user" "--user --break-system-packages"); fi
    for mode in "${modes[@]}"; do
        echo "+ $PY -m pip install -q --no-index --no-deps --no-build-isolation $mode -e $dir"
        # shellcheck disable=SC2086  # $mode is zero, one or two flags
        if timeout 60 "$PY" -m pip install -q --no-index --no-deps --no-build-isolation $mode -e "$dir"; then
            PIP_MODE="${mode:- }"
            return 0
        fi
    done
    [ -z "$PIP_MODE" ] && PIP_BROKEN=1
    return 1
}

# Without pip: put the sources on PYTHONPATH and write a minimal .dist-info per project (name,
# version, entry points from its pyproject.toml) so that importlib.metadata still finds the plugins.
fallback_pythonpath() {
    local site="$OUT/fallback_site" paths=() dir
    mkdir -p "$site"
    for dir in "$@"; do
        if [ "$dir" = "." ]; then paths+=("$ROOT/core"); else paths+=("$ROOT/$dir"); fi
    done
    "$PY" - "$site" "$@" <<'PYEOF'
import pathlib, sys, tomllib
site = pathlib.Path(sys.argv[1])
for d in sys.argv[2:]:
    proj = tomllib.loads((pathlib.Path(d) / "pyproject.toml").read_text())["project"]
    name, version = proj["name"], proj.get("version", "0")
    if not isinstance(version, str):
        version = "0"
    if name == "tensorplug":  # the core reads its version from _version.py (dynamic in pyproject)
        ns = {}
        exec((pathlib.Path(d) / "core/tensorplug/_version.py").read_text(), ns)
        version = ns["__version__"]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, eps in proj.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{k} = {v}" for k, v in eps.items()]
    for group, key in (("console_scripts", "scripts"),):
        if proj.get(key):
            lines.append(f"[{group}]")
            lines += [f"{k} = {v}" for k, v in proj[key].items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    print(f"fallback metadata: {info.name}")
PYEOF
    local joined
    joined="$(IFS=:; echo "${paths[*]}")"
    export PYTHONPATH="$site:$joined${PYTHONPATH:+:$PYTHONPATH}"
    echo "PYTHONPATH=$PYTHONPATH"
}

step_install() {
    local dir
    FAILED_PROJECTS=()
    for dir in "${PROJECTS[@]}"; do
        if [ ! -f "$dir/pyproject.toml" ]; then
            echo "!! $dir/pyproject.toml is missing"
            continue
        fi
        pip_install "$dir" || FAILED_PROJECTS+=("$dir")
    done
    if [ "${#FAILED_PROJECTS[@]}" -gt 0 ]; then
        echo "!! pip could not install: ${FAILED_PROJECTS[*]}; falling back to PYTHONPATH for those"
        fallback_pythonpath "${FAILED_PROJECTS[@]}"
    fi
    echo "plugins seen through entry points:"
    timeout 60 "$PY" -c "
from importlib.metadata import entry_points
print(sorted(e.name for e in entry_points(group='tensorplug.plugins')))
import tensorplug, tensorplug.cuda as c
print('tensorplug', tensorplug.__version__, 'from', tensorplug.__file__)
import tensorplug_cuda
print('tensorplug_cuda from', tensorplug_cuda.__file__)
print('tensorplug.cuda.is_available():', c.is_available(), 'device_count():', c.device_count())
" || return $?
    timeout 60 "$PY" -m tensorplug plugins || return $?
    [ ! -f plugins/cuda/pyproject.toml ] && return 1
    return 0
}

# -- c) the plugin's tests ----------------------------------------------------------------------
step_pytest() {
    # the conformance suite is step d (one process, its table in the log): not run twice
    timeout -k 10 "$LIMIT" "$PY" -m pytest -q -p no:cacheprovider plugins/cuda -x \
        --deselect plugins/cuda/tests/test_conformance.py --junitxml="$OUT/pytest_cuda.xml"
}

# -- d) conformance -----------------------------------------------------------------------------
step_conformance() {
    local rc
    timeout -k 10 "$LIMIT" "$PY" -m tensorplug conformance cuda > "$OUT/conformance_cuda.log" 2>&1
    rc=$?
    echo "(full output: $OUT/conformance_cuda.log, $(wc -l < "$OUT/conformance_cuda.log") lines; the tail:)"
    tail -n 15 "$OUT/conformance_cuda.log"
    return $rc
}

# -- e) demo ------------------------------------------------------------------------------------
# The demo trains on scikit-learn's digits with tqdm bars (the 'examples' extra). Without them it
# cannot train, so a synthetic training loop on cuda stands in, and the summary says so.
step_demo() {
    if timeout 30 "$PY" -c "import sklearn, tqdm" 2>/dev/null; then
        timeout -k 10 "$LIMIT" "$PY" -m tensorplug demo --device cuda
        return $?
    fi
    STEP_NOTE="scikit-learn/tqdm missing: ran a synthetic MLP training loop on cuda instead of the demo"
    echo "!! $STEP_NOTE"
    timeout -k 10 "$LIMIT" "$PY" - <<'PYEOF'
import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F
tp.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to("cuda")
opt = tp.optim.Adam(model.parameters(), lr=1e-2)
x = tp.randn(256, 64, device="cuda")
y = (x[:, :10].argmax(1)).to("cuda")
first = None
for step in range(200):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 40 == 0 or step == 199:
        print(f"step {step:3d} loss {loss.item():.4f}")
    first = loss.item() if first is None else first
acc = (model(x).argmax(1) == y).float().mean().item()
print("parameter device:", next(model.parameters()).device, "train accuracy:", f"{acc:.2%}")
assert next(model.parameters()).device.type == "cuda"
assert loss.item() < first / 2, (first, loss.item())
PYEOF
}

# -- f) benchmark -------------------------------------------------------------------------------
step_bench() {
    rm -f "$OUT/cuda_bench.json"
    timeout -k 10 "$LIMIT" "$PY" benchmarks/cuda.py --json "$OUT/cuda_bench.json" || return $?
    # the benchmark exits 0 when there is no CUDA device; on this machine that is a failure
    "$PY" -c "import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get('available') else 3)" \
        "$OUT/cuda_bench.json"
}

# -- g) distributed ------------------------------------------------------------------------------
step_distributed() {
    local rc=0 mpiexec
    timeout 30 "$PY" -c "import mpi4py; print('mpi4py', mpi4py.__version__)" || return $?
    timeout 60 "$PY" -c "from cupy.cuda import nccl; print('NCCL', nccl.get_version())" || rc=$?
    echo "+ 1-rank NCCL group: cuda collectives and DDP on cuda"
    timeout -k 5 "$((LIMIT / 2))" "$PY" plugins/distributed/tests/scripts/cuda_collectives.py || rc=$?
    mpiexec="$(dirname "$(command -v "$PY")")/mpiexec"
    [ -x "$mpiexec" ] || mpiexec="$(command -v mpiexec || true)"
    if [ -z "$mpiexec" ]; then
        echo "!! no mpiexec: the 2-process MPI group is not run"
        STEP_NOTE="no mpiexec for the 2-process group"
        return 1
    fi
    echo "+ 2-process MPI group sharing the GPU: host collectives"
    timeout -k 5 "$((LIMIT / 2))" "$mpiexec" -n 2 "$PY" plugins/distributed/tests/scripts/collectives.py || rc=$?
    return $rc
}

log "repository $ROOT; OUT=$OUT; python=$PY; time budget ${BUDGET}s"
git -C "$ROOT" log --oneline -1 2>/dev/null || true
#        name          timeout  reserve-for-later  function
run_step "a-env"           120   400 step_env
run_step "b-install"       200   300 step_install
# the conformance suite goes last: on a first run cupy compiles a kernel per op and dtype, so it
# takes what time is left and the figures of the benchmark come back whatever happens to it
run_step "c-pytest"        150   260 step_pytest
run_step "f-bench"         120   140 step_bench
run_step "e-demo"           60   150 step_demo
run_step "g-distributed"    60    90 step_distributed
run_step "d-conformance"   300     0 step_conformance

echo
log "summary (total $((SECONDS - START))s of a ${BUDGET}s budget):"
FAILED=0
for i in "${!STEP_NAMES[@]}"; do
    printf '  %-16s %-16s %5ss  %s\n' "${STEP_NAMES[$i]}" "${STEP_STATUS[$i]}" "${STEP_SECS[$i]}" \
        "${STEP_NOTES[$i]}"
    [ "${STEP_STATUS[$i]}" = "ok" ] || FAILED=1
done
echo "  log: $LOG"
[ -f "$OUT/cuda_bench.json" ] && echo "  benchmark figures: $OUT/cuda_bench.json"

# let tee write the last lines before the script ends
exec >&- 2>&-
wait "$TEE_PID" 2>/dev/null
exit "$FAILED"
