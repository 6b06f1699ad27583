"""The kernel library: tensorplug-cpu's kernels instantiated again with another array module."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tensorplug as tp
import tensorplug_cpu
from tensorplug_cpu import kernel_library, xp as cpu_context


def _instance(name):
    return kernel_library(name, xp=np, backend=tensorplug_cpu.BACKEND, device=tp.device("cpu"),
                          wrap=cpu_context.wrap, host_rng=cpu_context.host_rng, from_host=cpu_context.from_host)


def test_the_cpu_kernels_compute_with_the_array_module_of_their_context():
    assert cpu_context.xp is np
    for mod in tensorplug_cpu.KERNEL_MODULES:
        assert getattr(mod, "xp", np) is np, mod.__name__


def test_a_second_instance_has_the_same_table_from_distinct_modules():
    table, mods = _instance("_tensorplug_test_library")
    cpu = tensorplug_cpu.all_kernels()
    assert set(table) == set(cpu)
    assert table["add.Tensor"] is not cpu["add.Tensor"]
    assert mods["elementwise"].__name__ == "_tensorplug_test_library.elementwise"
    assert mods["elementwise"] is not sys.modules["tensorplug_cpu.elementwise"]
    assert sys.modules["_tensorplug_test_library.xp"].xp is np
    # the instance's kernels compute what the CPU's do
    a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
    assert table["add.Tensor"](a, b, 1).tolist() == [4.0, 6.0]


def test_an_instance_is_made_once_per_name():
    first = _instance("_tensorplug_test_library_once")
    assert _instance("_tensorplug_test_library_once") is first


def test_the_name_of_an_existing_module_is_refused():
    with pytest.raises(ValueError, match="is an existing module, not a kernel library"):
        _instance("json")


def test_a_failed_instantiation_leaves_nothing_behind():
    class Broken:  # an array module without what the kernels read at import time
        pass
    with pytest.raises(AttributeError):
        kernel_library("_tensorplug_test_library_broken", xp=Broken, backend=tensorplug_cpu.BACKEND,
                       device=tp.device("cpu"), wrap=cpu_context.wrap, host_rng=cpu_context.host_rng,
                       from_host=cpu_context.from_host)
    assert not [m for m in sys.modules if m.startswith("_tensorplug_test_library_broken")]


def test_cody_erf_for_other_array_modules_matches_math_erf():
    """``erf`` in float64 takes math.erf (exact) on numpy and Cody's approximation on another array
    module (cupy); the approximation is within a few ulps of math.erf over the whole range."""
    import math
    from tensorplug_cpu.erf_cody import erf64
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 0.46875, -0.46875, 4.0, 27.0, np.inf, -np.inf]])
    want = np.array([math.erf(v) for v in x])
    got = erf64(x)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-300)  # a few ulps
    assert np.isnan(erf64(np.array([np.nan]))[0])
