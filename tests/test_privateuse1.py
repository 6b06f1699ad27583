"""The PrivateUse1 slot: a backend that takes it gets device methods under its own name.

A toy numpy backend named ``toyreg`` stands in for an out-of-tree device; a
plugin already on the slot (openreg, where installed) steps aside for the test.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import _privateuse1, nn
from tensorplug.dispatch import dispatcher
from tensorplug.tensor import Tensor, make_tensor

from toy_plugins import testdev


class ToyRegBackend(testdev.NumpyTestBackend):
    name, key_name, slot = "toyreg", "PrivateUse1", 15

    def device_count(self):
        return 2

    def normalize_device(self, dev):
        return tp.device("toyreg", dev.index or 0)


class ToyRegPlugin:
    @tp.hookimpl
    def tensorplug_backends(self):
        return [ToyRegBackend()]

    @tp.hookimpl
    def tensorplug_register_kernels(self, library):
        lib = library("tensorplug", "IMPL", "PrivateUse1")
        lib.impl("empty", _empty)
        lib.impl("copy_", _copy)


def _empty(size, dtype=None, device=None):
    d = dtype or tp.float32
    b = tp.backend.BACKENDS["toyreg"]
    return make_tensor(np.empty(size, d.np), d, b.normalize_device(device or tp.device("toyreg")), b.ks)


def _copy(self, src, non_blocking=False):
    np.copyto(self._data, src._data, casting="unsafe")
    return self


@pytest.fixture
def slot_free():
    """Slot 15 free for the toy: a plugin holding it is disabled for the test and enabled again after."""
    holder = next((p.name for p in tp.plugins.list() if p.state == "enabled"
                   and any(tp.backend.BACKENDS[b].slot == 15 for b in p.backends)), None)
    if holder:
        tp.plugins.disable(holder)
    yield
    if holder:
        tp.plugins.enable(holder)


@pytest.fixture
def toyreg(slot_free, make_plugin):
    make_plugin(ToyRegPlugin(), "toyreg")
    return tp.plugins.get("toyreg")


def test_taking_the_slot_adds_tensor_and_module_methods(toyreg):
    assert _privateuse1.renamed() == "toyreg"
    x = tp.tensor([1.0, 2.0])
    assert (x.is_toyreg, x.is_cpu) == (False, True)
    y = x.toyreg()
    assert (y.device, y.is_toyreg, y.tolist()) == (tp.device("toyreg", 0), True, [1.0, 2.0])
    assert x.toyreg(1).device == tp.device("toyreg", 1) == x.toyreg("toyreg:1").device
    assert y.toyreg() is y  # already there: no copy, as Tensor.to
    m = nn.Linear(2, 3).toyreg(1)
    assert all(p.device == tp.device("toyreg", 1) for p in m.parameters())
    assert isinstance(m.weight, nn.Parameter)


@pytest.mark.parametrize("call, message", [
    (lambda x: x.toyreg("cpu"), r"Invalid device, must be toyreg device, got cpu"),
    (lambda x: nn.Linear(1, 1).toyreg("cpu"), r"Invalid device, must be toyreg device, got cpu"),
])
def test_the_methods_refuse_other_devices(toyreg, call, message):
    with pytest.raises(RuntimeError, match=message):
        call(tp.tensor([1.0]))


def test_disabling_removes_the_methods_and_enabling_restores_them(toyreg):
    tp.plugins.disable("toyreg")
    assert not hasattr(Tensor, "toyreg") and not hasattr(Tensor, "is_toyreg")
    assert not hasattr(nn.Module, "toyreg") and _privateuse1.renamed() is None
    tp.plugins.enable("toyreg")
    assert tp.tensor([3.0]).toyreg().is_toyreg


def test_dispatch_table_and_errors_name_the_renamed_device(toyreg):
    rows = {key: prov for key, prov, _ in dispatcher.OPS["tensorplug::copy_"].dispatch_table()}
    assert rows["PrivateUse1[toyreg]"] == "kernel"
    assert "AutogradPrivateUse1[toyreg]" in rows
    x = tp.tensor([1.0]).toyreg()
    with pytest.raises(NotImplementedError, match=r"from the 'PrivateUse1\[toyreg\]' backend"):
        tp.exp(x)


def test_a_name_that_would_shadow_a_tensor_attribute_fails_the_plugin(slot_free, make_plugin):
    class Shadowing(ToyRegBackend):
        name = "float"

    class Plugin:
        @tp.hookimpl
        def tensorplug_backends(self):
            return [Shadowing()]

    info = make_plugin(Plugin(), "shadowing", enable_now=False)
    with pytest.raises(ValueError, match=r"the PrivateUse1 backend name would shadow Tensor.float"):
        tp.plugins.enable("shadowing")
    assert info.state == "failed" and "float" not in tp.backend.BACKENDS
    assert tp.tensor([1]).float().dtype is tp.float32  # the core's method is untouched


def test_other_slots_get_no_methods(testdev):
    assert not hasattr(Tensor, "testdev") and _privateuse1.renamed() in (None, "openreg")
