"""The "no CUDA" answers of tensorplug's runtime namespaces against PyTorch's CPU build, side by side."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorplug as tp


pytestmark = pytest.mark.usefixtures("without_the_cuda_plugin")  # tests/conftest.py


torch = pytest.importorskip("torch")
if torch.cuda.is_available():  # the reference is a machine without CUDA
    pytest.skip("torch sees a CUDA device", allow_module_level=True)

CALLS = ["m.cuda.is_available()", "m.cuda.device_count()", "m.cuda.is_initialized()",
         "m.cuda.is_bf16_supported()", "m.cuda.manual_seed(1)", "m.cuda.manual_seed_all(1)", "m.cuda.seed()",
         "m.cuda.seed_all()", "m.cuda.empty_cache()", "m.cuda.memory_allocated()",
         "m.cuda.max_memory_allocated()", "m.cuda.memory_reserved()", "m.cuda.max_memory_reserved()",
         "dict(m.cuda.memory_stats())", "m.cuda.current_device()", "m.cuda.get_device_name()",
         "m.cuda.synchronize()", "m.cuda.init()", "m.cuda.initial_seed()", "m.cuda.get_device_capability()",
         "m.cuda.set_device(-1)", "m.accelerator.is_available()", "m.accelerator.current_accelerator()",
         "m.accelerator.device_count()", "m.accelerator.current_device_index()",
         "m.backends.cuda.matmul.allow_tf32", "m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
         "m.backends.cudnn.benchmark", "m.backends.cudnn.deterministic", "m.backends.cudnn.allow_tf32",
         "m.backends.cudnn.enabled", "m.backends.cudnn.is_available()", "m.backends.cudnn.version()",
         "m.backends.mps.is_available()", "m.backends.mps.is_built()", "m.backends.cuda.is_built()",
         "m.distributed.is_initialized()", "m.distributed.get_rank()", "m.distributed.get_world_size()",
         "m.amp.GradScaler(enabled=False).state_dict()", "m.amp.GradScaler(enabled=False).get_scale()",
         "m.amp.GradScaler(enabled=False).is_enabled()", "m.amp.GradScaler('cpu').get_scale()",
         "m.amp.GradScaler('cpu').state_dict()", "m.get_default_device().type",
         "m.nn.DataParallel(m.nn.Linear(2, 2)).device_ids", "m.Tensor([1, 2]).tolist()",
         "m.Tensor(2, 3).shape[1]", "m.Tensor().shape[0]", "m.LongTensor([1, 2]).tolist()",
         "str(m.FloatTensor([1]).dtype)", "str(m.DoubleTensor(2).dtype)", "str(m.ByteTensor([1]).dtype)",
         "str(m.BoolTensor([1, 0]).dtype)", "str(m.IntTensor([3]).dtype)", "str(m.HalfTensor([3]).dtype)",
         "isinstance(m.ones(2), m.FloatTensor)", "isinstance(m.ones(2, dtype=m.float64), m.FloatTensor)",
         "m.Tensor(2.5)", "m.Tensor(True)", "m.Tensor('a')", "m.Tensor(-1)", "m.Tensor(2, -3)",
         "m.ones(2).is_xpu", "m.ones(2).is_mps", "m.ones(2).is_meta", "m.ones(2).is_sparse",
         "m.ones(2).is_quantized", "m.autocast(m.device('cpu'))"]


def _names(text):
    """Module paths written the same way: torch.X and tensorplug.X; tensorplug's device class lives in a module."""
    return text.replace("torch.", "tensorplug.").replace("tensorplug.device.device", "tensorplug.device")


def _outcome(mod, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = eval(expr, {"m": mod})
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            return type(e).__name__, _names(str(e))
    if isinstance(value, str):
        return _names(value)
    if isinstance(value, (bool, int, float, list, tuple, dict)) or value is None:
        return value
    return type(value).__name__


@pytest.mark.parametrize("expr", CALLS)
def test_same_answer_as_torch(expr):
    assert _outcome(tp, expr) == _outcome(torch, expr)


def test_grad_scaler_on_cpu_matches_torch():
    def run(m):
        p = m.tensor([1.0, -2.0], requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1)
        scaler = m.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        log = []
        for grad_override in (None, None, float("inf"), None):
            opt.zero_grad()
            scaler.scale((p * p).sum()).backward()
            if grad_override is not None:
                p.grad = m.tensor([grad_override, 1.0])
            scaler.step(opt)
            scaler.update()
            log.append((p.detach().tolist(), scaler.get_scale(), scaler.state_dict()["_growth_tracker"]))
        return log
    ours, theirs = run(tp), run(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
        assert a[1:] == b[1:]
