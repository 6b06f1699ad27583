"""The runtime namespaces real programs touch first: tensorplug.cuda, amp/autocast, accelerator, backends,
distributed, nn.parallel, legacy constructors, Tensor flags, nn.modules paths, serialization's safe globals.

PyTorch's CPU build is the reference for the "no CUDA" answers (tests/test_runtime_namespaces_torch_oracle.py
compares them side by side); these tests need no torch.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.backend import Backend


pytestmark = pytest.mark.usefixtures("without_the_cuda_plugin")  # tests/conftest.py


# -- tensorplug.cuda without a cuda backend ------------------------------------------------------------------

def test_cuda_answers_no_cuda():
    assert tp.cuda.is_available() is False
    assert tp.cuda.device_count() == 0
    assert tp.cuda.is_initialized() is False
    assert tp.cuda.is_bf16_supported() is False
    for fn in (tp.cuda.manual_seed, tp.cuda.manual_seed_all):
        assert fn(3) is None
    assert tp.cuda.seed() is None and tp.cuda.seed_all() is None
    assert tp.cuda.empty_cache() is None
    assert tp.cuda.memory_allocated() == 0 and tp.cuda.max_memory_allocated() == 0
    assert tp.cuda.memory_reserved() == 0 and tp.cuda.memory_stats() == {}
    tp.cuda.set_device(-1)  # a negative index is ignored, as in PyTorch


@pytest.mark.parametrize("call", ["current_device", "get_device_name", "synchronize", "init", "initial_seed",
                                  "get_device_capability"])
def test_cuda_needs_a_device(call):
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        getattr(tp.cuda, call)()


def test_cuda_unknown_name_is_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'Stream'"):
        tp.cuda.Stream


def test_cuda_seed_rejects_non_numbers():
    with pytest.raises((TypeError, ValueError)):
        tp.cuda.manual_seed("x")


class _FakeRuntime:
    def memory_allocated(self, device=None):
        return 1234

    def get_device_name(self, device=None):
        return "Fake GPU"

    class Stream:
        pass


class _FakeCudaBackend(Backend):
    name = "cuda"
    key_name = "CUDA"
    accelerator = True
    runtime = _FakeRuntime()
    synced = []
    seeds = []

    def device_count(self):
        return 2

    def synchronize(self, device=None):
        self.synced.append(device)

    def manual_seed(self, seed):
        self.seeds.append(seed)


class _FakeCudaPlugin:
    TENSORPLUG_API = (1, 0)

    @tp.hookimpl
    def tensorplug_backends(self):
        return [_FakeCudaBackend()]


def test_a_cuda_backend_takes_the_namespace_over(make_plugin):
    make_plugin(_FakeCudaPlugin(), "fakecuda")
    assert tp.cuda.is_available() is True
    assert tp.cuda.device_count() == 2
    assert tp.cuda.memory_allocated() == 1234          # the runtime's function replaces the core's
    assert tp.cuda.get_device_name() == "Fake GPU"
    assert tp.cuda.current_device() == 0                # the core's, now that a device exists
    tp.cuda.synchronize()
    assert _FakeCudaBackend.synced[-1] is None
    tp.cuda.manual_seed(7)
    assert _FakeCudaBackend.seeds[-1] == 7
    assert tp.cuda.Stream is _FakeRuntime.Stream          # names the core lacks come from the runtime
    assert tp.accelerator.is_available() and tp.accelerator.current_accelerator() == tp.device("cuda")
    assert tp.accelerator.device_count() == 2
    assert tp.backends.cuda.is_built()


def test_cuda_back_to_no_cuda_after_the_plugin_goes(make_plugin):
    make_plugin(_FakeCudaPlugin(), "fakecuda2")
    assert tp.cuda.is_available()
    tp.plugins.disable("fakecuda2")
    assert tp.cuda.is_available() is False and tp.cuda.device_count() == 0
    with pytest.raises(AssertionError):
        tp.cuda.current_device()


# -- amp -------------------------------------------------------------------------------------------------------

def test_grad_scaler_disabled_passes_through():
    p = tp.ones(2, requires_grad=True)
    opt = tp.optim.SGD([p], lr=0.5)
    scaler = tp.amp.GradScaler(enabled=False)
    loss = (p * 3).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    assert scaler.step(opt) is None
    scaler.update()
    assert p.tolist() == [-0.5, -0.5]
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()
    scaler.load_state_dict({})


def test_grad_scaler_without_the_device_warns_and_disables():
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = tp.amp.GradScaler()
    assert not scaler.is_enabled()
    with pytest.warns(FutureWarning, match="deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            old = tp.cuda.amp.GradScaler(enabled=False)
    assert not old.is_enabled()


def test_grad_scaler_on_cpu_scales_unscales_and_skips_infs():
    p = tp.tensor([1.0, 2.0], requires_grad=True)
    opt = tp.optim.SGD([p], lr=0.1)
    scaler = tp.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    loss = (p * p).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == 8.0 * loss.item()
    scaled.backward()
    assert p.grad.tolist() == [16.0, 32.0]
    scaler.step(opt)                                  # unscales: the step uses the true gradient 2p
    assert np.allclose(p.detach().numpy(), [0.8, 1.6])
    scaler.update()
    assert scaler.get_scale() == 8.0                  # one good step of the two before growing
    opt.zero_grad()
    scaler.scale((p * p).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 16.0
    before = p.detach().clone()
    opt.zero_grad()
    p.grad = tp.tensor([float("inf"), 1.0])
    assert scaler.step(opt) is None                    # skipped
    assert p.tolist() == before.tolist()
    scaler.update()
    assert scaler.get_scale() == 8.0
    assert scaler.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 2, "_growth_tracker": 0}


def test_grad_scaler_errors():
    p = tp.ones(1, requires_grad=True)
    opt = tp.optim.SGD([p], lr=0.1)
    scaler = tp.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="_scale is None"):
        scaler.step(opt)
    scaler.scale(p.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        scaler.load_state_dict({})


def test_autocast_comes_from_the_plugin_and_checks_arguments():
    # the casting itself is tested with the plugin (plugins/autocast/tests)
    assert tp.autocast is tp.amp.autocast
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tp.autocast(tp.device("cpu"))
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        tp.autocast("cuda")
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        tp.autocast("cpu", dtype=tp.float32)
    with pytest.warns(FutureWarning, match="deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            tp.cuda.amp.autocast()


def test_amp_names_the_plugin_when_it_is_disabled():
    tp.plugins.disable("autocast")
    try:
        with pytest.raises(AttributeError, match="tensorplug.amp.autocast is provided by the plugin 'autocast'"):
            tp.amp.autocast
        assert tp.amp.GradScaler("cpu").is_enabled()   # the scaler is the core's
    finally:
        tp.plugins.enable("autocast")


# -- accelerator, backends, distributed, nn.parallel -----------------------------------------------------------

def test_accelerator_none_without_an_accelerator_backend():
    # openreg and the minimal example backend are emulated devices: they do not count as accelerators
    assert tp.accelerator.is_available() is False
    assert tp.accelerator.current_accelerator() is None
    assert tp.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        tp.accelerator.current_device_index()


def test_backends_flags():
    import tensorplug.backends.cudnn as cudnn
    assert cudnn is tp.backends.cudnn
    assert tp.backends.cuda.matmul.allow_tf32 is False
    assert (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32, cudnn.enabled) == (False, False, True, True)
    assert cudnn.is_available() is False and cudnn.version() is None
    assert tp.backends.mps.is_available() is False and tp.backends.mps.is_built() is False
    tp.backends.cuda.matmul.allow_tf32 = True
    try:
        assert tp.backends.cuda.matmul.allow_tf32 is True
    finally:
        tp.backends.cuda.matmul.allow_tf32 = False
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf64"):
        tp.backends.cuda.matmul.allow_tf64 = True
    with cudnn.flags(enabled=True, benchmark=True):
        assert cudnn.benchmark is True
    assert cudnn.benchmark is False


def test_distributed_not_available():
    """Without a distributed plugin: PyTorch's errors, and names that say which plugin provides them."""
    import tensorplug.distributed as dist
    had = tp.plugins.is_enabled("distributed")
    if had:
        tp.plugins.disable("distributed")
    try:
        assert dist.is_available() is False and dist.is_initialized() is False
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dist.get_rank()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dist.get_world_size()
        with pytest.raises(RuntimeError, match="no distributed plugin"):
            dist.init_process_group("gloo")
        with pytest.raises(AttributeError, match="tensorplug.distributed.all_reduce is provided by the plugin "
                                                 "'distributed'"):
            dist.all_reduce
    finally:
        if had:
            tp.plugins.enable("distributed")


def test_distributed_names_come_from_a_plugin():
    class Fake:
        @tp.hookimpl
        def tensorplug_namespace(self):
            return {"distributed.is_available": lambda: True, "distributed.get_rank": lambda group=None: 3,
                    "distributed.fancy_reduce": len}
    import tensorplug.distributed as dist
    had = tp.plugins.is_enabled("distributed")
    if had:
        tp.plugins.disable("distributed")
    tp.plugins.register(Fake(), "fakedist")
    try:
        assert dist.is_available() and dist.get_rank() == 3 and dist.fancy_reduce is len
        assert "fancy_reduce" in dir(dist)
        assert vars(dist)["fancy_reduce"] is len   # resolved once, then a plain attribute read
    finally:
        tp.plugins.forget("fakedist")
    assert not hasattr(dist, "fancy_reduce") and "fancy_reduce" not in vars(dist)
    assert dist.is_available() is False            # the core's answer again
    tp.plugins.register(Fake(), "fakedist")        # the cached attribute does not count as the core's own
    try:
        assert dist.fancy_reduce is len
    finally:
        tp.plugins.forget("fakedist")
        if had:
            tp.plugins.enable("distributed")


def test_data_parallel_is_a_pass_through():
    from tensorplug.nn.parallel import DataParallel, DistributedDataParallel
    tp.manual_seed(0)
    lin = tp.nn.Linear(3, 2)
    dp = tp.nn.DataParallel(lin)
    assert tp.nn.DataParallel is DataParallel and dp.module is lin and dp.device_ids == []
    x = tp.randn(4, 3)
    assert dp(x).tolist() == lin(x).tolist()
    assert sorted(dp.state_dict()) == ["module.bias", "module.weight"]
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(lin)


# -- legacy constructors and tensor flags ----------------------------------------------------------------------

def test_legacy_tensor_constructor():
    t = tp.Tensor([1, 2, 3])
    assert t.dtype == tp.float32 and t.tolist() == [1.0, 2.0, 3.0]
    assert tp.Tensor(2, 3).shape == (2, 3) and tp.Tensor(2, 3).dtype == tp.float32
    assert tp.Tensor().shape == (0,)
    assert tp.Tensor(np.arange(3)).tolist() == [0.0, 1.0, 2.0]
    src = tp.arange(3)
    assert tp.Tensor(src).dtype == tp.int64  # an existing tensor is aliased, as in PyTorch
    old = tp.get_default_dtype()
    tp.set_default_dtype(tp.float64)
    try:
        assert tp.Tensor([1.0]).dtype == tp.float64
    finally:
        tp.set_default_dtype(old)


@pytest.mark.parametrize("name,dtype", [("FloatTensor", "float32"), ("DoubleTensor", "float64"),
                                        ("LongTensor", "int64"), ("IntTensor", "int32"), ("BoolTensor", "bool"),
                                        ("ByteTensor", "uint8"), ("HalfTensor", "float16")])
def test_typed_legacy_constructors(name, dtype):
    cls = getattr(tp, name)
    dt = getattr(tp, dtype)
    a = cls([1, 0])
    assert a.dtype == dt and a.tolist() == [1, 0]
    assert cls(2, 2).dtype == dt and cls(2, 2).shape == (2, 2)
    assert cls().shape == (0,)
    assert isinstance(a, cls) and not isinstance(tp.zeros(1, dtype=tp.complex64 if False else
                                                          (tp.int8 if dt != tp.int8 else tp.int16)), cls)
    assert cls.dtype == dt and repr(cls) == f"<class 'tensorplug.{name}'>"


@pytest.mark.parametrize("args,exc,msg", [
    ((2.5,), TypeError, r"new\(\): data must be a sequence \(got float\)"),
    ((True,), TypeError, r"new\(\): data must be a sequence \(got bool\)"),
    (("a",), TypeError, r"new\(\): invalid data type 'str'"),
    ((-1,), RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1\]"),
    ((2, -1), RuntimeError, r"Trying to create tensor with negative dimension -1: \[2, -1\]"),
])
def test_legacy_constructor_errors(args, exc, msg):
    with pytest.raises(exc, match=msg):
        tp.Tensor(*args)


def test_typed_constructor_refuses_other_dtype_and_device():
    with pytest.raises(TypeError, match="expected Float \\(got Long\\)"):
        tp.FloatTensor(tp.arange(2))
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        tp.LongTensor(2, device="openreg")


def test_subclass_without_new_still_refuses():
    class Sub(tp.Tensor):
        pass
    with pytest.raises(TypeError, match="use tensorplug.tensor"):
        Sub([1])


def test_tensor_flags():
    x = tp.ones(2)
    assert (x.is_xpu, x.is_mps, x.is_meta, x.is_sparse, x.is_quantized) == (False,) * 5


def test_default_device_round_trip():
    assert tp.get_default_device() == tp.device("cpu")
    tp.set_default_device("openreg")
    try:
        assert tp.get_default_device().type == "openreg"
        assert tp.zeros(2).device.type == "openreg"
    finally:
        tp.set_default_device(None)
    assert tp.zeros(2).device == tp.device("cpu")


# -- module paths and serialization --------------------------------------------------------------------------

def test_nn_modules_paths():
    from tensorplug.nn.modules.linear import Linear
    from tensorplug.nn.modules.conv import Conv2d
    from tensorplug.nn.modules.activation import ReLU
    from tensorplug.nn.modules.loss import CrossEntropyLoss
    from tensorplug.nn.modules.module import Module
    from tensorplug.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
    from tensorplug.nn.modules.normalization import LayerNorm
    from tensorplug.nn.modules.dropout import Dropout
    from tensorplug.nn.modules.sparse import Embedding
    from tensorplug.nn.modules.container import Sequential
    from tensorplug.nn.modules.pooling import MaxPool2d
    assert (Linear, Conv2d, ReLU, CrossEntropyLoss, Module, BatchNorm1d, BatchNorm2d, LayerNorm, Dropout,
            Embedding, Sequential, MaxPool2d) == (tp.nn.Linear, tp.nn.Conv2d, tp.nn.ReLU, tp.nn.CrossEntropyLoss,
                                                 tp.nn.Module, tp.nn.BatchNorm1d, tp.nn.BatchNorm2d,
                                                 tp.nn.LayerNorm, tp.nn.Dropout, tp.nn.Embedding,
                                                 tp.nn.Sequential, tp.nn.MaxPool2d)


def test_serialization_safe_globals():
    class Config:
        pass
    before = list(tp.serialization.get_safe_globals())
    tp.serialization.add_safe_globals([Config])
    assert Config in tp.serialization.get_safe_globals()
    with tp.serialization.safe_globals([int]):
        assert int in tp.serialization.get_safe_globals()
    assert int not in tp.serialization.get_safe_globals()
    tp.serialization.clear_safe_globals()
    assert tp.serialization.get_safe_globals() == []
    tp.serialization.add_safe_globals(before)
    with pytest.raises(TypeError):
        tp.serialization.add_safe_globals(Config)


def test_import_stays_lazy():
    code = ("import sys, tensorplug\n"
            "mods = ['tensorplug.cuda', 'tensorplug.amp', 'tensorplug.backends', 'tensorplug.distributed',\n"
            "        'tensorplug.distributions', 'tensorplug.accelerator', 'tensorplug.utils.checkpoint']\n"
            "print([m for m in mods if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
