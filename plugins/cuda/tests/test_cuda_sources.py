"""The fused kernels' CUDA sources compile, for every dtype they serve, with nvcc (to PTX for sm_90).

The simulated mode never runs these sources, and CI has no CUDA compiler; this test runs where
``nvcc`` and cupy's headers are found (a CUDA toolkit with cupy installed, GPU or not) and skips
with the reason elsewhere. Elementwise kernels are wrapped the way cupy's ``ElementwiseKernel``
generates them (inputs as ``const T`` values, outputs as ``T&``; float16 is cupy's ``float16``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorplug_cuda import fused

NVCC = shutil.which("nvcc")
_CUPY = importlib.util.find_spec("cupy")
CUPY_INCLUDE = None if _CUPY is None else Path(_CUPY.origin).parent / "_core" / "include"

pytestmark = [
    pytest.mark.skipif(NVCC is None, reason="no nvcc (a CUDA toolkit) on PATH"),
    pytest.mark.skipif(CUPY_INCLUDE is None or not (CUPY_INCLUDE / "cupy" / "float16.cuh").exists(),
                       reason="cupy (for its float16 header) is not installed"),
]

_C_TYPE = {"float16": "float16", "float32": "float", "float64": "double", "int32": "int", "int64": "long long"}


def _compile(source, tmp_path, name):
    src = tmp_path / f"{name}.cu"
    src.write_text(source)
    out = subprocess.run([NVCC, "-std=c++17", "-arch=sm_90", "-ptx", f"-I{CUPY_INCLUDE}", "-o",
                          str(tmp_path / f"{name}.ptx"), str(src)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ))
    assert out.returncode == 0, f"{name}: nvcc failed:\n{out.stderr[-4000:]}"


def _params(spec, t):
    """cupy's typed parameter list ('T g, raw T x, float64 lr') as (C type, name, raw) with T = ``t``."""
    out = []
    for item in spec.split(","):
        words = item.split()
        raw = words[0] == "raw"
        typ, name = words[-2:]
        out.append((_C_TYPE[t] if typ == "T" else _C_TYPE[typ], name, raw))
    return out


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("kernel", [fused.TANH_BACKWARD, fused.SIGMOID_BACKWARD, fused.THRESHOLD_BACKWARD,
                                    fused.GELU_BACKWARD, fused.GELU_BACKWARD_CDF, fused.ADAM, fused.ADAM_AMSGRAD,
                                    fused.SGD, fused.SGD_PLAIN, fused.NLL_PICK, fused.NLL_GRAD],
                         ids=lambda k: k.name)
def test_elementwise_kernel_sources_compile(kernel, dtype, tmp_path):
    ins, outs = _params(kernel.in_params, dtype), _params(kernel.out_params, dtype)
    args = [f"const {t}* _raw_{n}" for t, n, _ in ins] + [f"{t}* _raw_{n}" for t, n, _ in outs] + ["long long _n"]
    # an element parameter is a value (an output a reference) at the loop index i; a raw one the whole array
    body = ([f"const {t}* {n} = _raw_{n};" if raw else f"const {t} {n} = _raw_{n}[_i];" for t, n, raw in ins]
            + [f"{t}* {n} = _raw_{n};" if raw else f"{t} &{n} = _raw_{n}[_i];" for t, n, raw in outs]
            + ["const long long i = _i;"])
    source = (f"#include <cupy/float16.cuh>\n"
              f"typedef {_C_TYPE[dtype]} T;\n"
              f"extern \"C\" __global__ void {kernel.name}({', '.join(args)}) {{\n"
              f"  long long _i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
              f"  if (_i >= _n) return;\n  " + "\n  ".join(body) + "\n"
              f"  {kernel.operation}\n}}\n")
    _compile(source, tmp_path, f"{kernel.name}_{dtype}")


@pytest.mark.parametrize("kernels", [fused.SOFTMAX, fused.LAYER_NORM], ids=lambda k: k.name)
def test_row_kernel_sources_compile(kernels, tmp_path):
    _compile(kernels.source, tmp_path, kernels.name)
