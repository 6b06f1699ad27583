"""Autocast: the API, nesting and threads, the policy as data, the cast cache, autograd, every
backend, and the plugin switched off."""

import subprocess
import sys
import threading
import warnings

import pytest

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F
from tensorplug.plugin_api import functionality_key, thread_keys


def _cast_count(fn):
    """How many dtype casts (``_to_copy`` calls) ``fn`` makes, counted by the profiler."""
    with tp.profiler.profile() as prof:
        fn()
    return sum(1 for e in prof.events() if e.name == "tensorplug::_to_copy")


# -- API -------------------------------------------------------------------------------------
def test_key_is_per_backend_priority_32_and_only_in_regions():
    key = functionality_key("Autocast")
    assert key.priority == 32 and key.per_backend
    assert not thread_keys()[0] & key.bit
    with tp.autocast("cpu"):
        assert thread_keys()[0] & key.bit
        with tp.autocast("cpu", enabled=False):
            assert not thread_keys()[0] & key.bit
        assert thread_keys()[0] & key.bit
    assert not thread_keys()[0] & key.bit


def test_lower_precision_and_fp32_ops_on_cpu():
    x, w = tp.randn(4, 8), tp.randn(3, 8)
    with tp.autocast(device_type="cpu", dtype=tp.bfloat16):
        assert tp.is_autocast_enabled("cpu") and tp.get_autocast_dtype("cpu") is tp.bfloat16
        y = F.linear(x, w)
        assert y.dtype is tp.bfloat16
        assert tp.mm(x, w.t()).dtype is tp.bfloat16
        assert (x @ w.t()).dtype is tp.bfloat16
        assert F.cross_entropy(y, tp.tensor([0, 1, 2, 0])).dtype is tp.float32   # fp32 list
        assert tp.exp(y).dtype is tp.bfloat16                                  # no CPU entry
        assert tp.cat([y, x[:, :3]]).dtype is tp.float32                         # promote
        assert (x + 1).dtype is tp.float32                                      # not listed
    assert not tp.is_autocast_enabled("cpu")


def test_default_dtypes_and_float16():
    assert tp.get_autocast_dtype("cpu") is tp.bfloat16
    with tp.autocast("cpu", dtype=tp.float16):
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float16


def test_integer_float64_and_bool_arguments_are_left_alone():
    with tp.autocast("cpu"):
        assert tp.mm(tp.ones(2, 2, dtype=tp.float64), tp.ones(2, 2, dtype=tp.float64)).dtype is tp.float64
        assert tp.mm(tp.ones(2, 2, dtype=tp.int64), tp.ones(2, 2, dtype=tp.int64)).dtype is tp.int64


def test_decorator_nesting_and_dtype_change():
    @tp.autocast("cpu")
    def f(a):
        return tp.mm(a, a)

    a = tp.ones(2, 2)
    assert f(a).dtype is tp.bfloat16
    with tp.autocast("cpu", dtype=tp.bfloat16):
        with tp.autocast("cpu", dtype=tp.float16):
            assert tp.mm(a, a).dtype is tp.float16
            assert tp.get_autocast_dtype("cpu") is tp.float16
        assert tp.mm(a, a).dtype is tp.bfloat16
        with tp.autocast("cpu", enabled=False):
            assert tp.mm(a, a).dtype is tp.float32
        assert tp.mm(a, a).dtype is tp.bfloat16
    assert tp.amp.autocast is tp.autocast


def test_state_is_per_thread():
    seen = {}
    started, release = threading.Event(), threading.Event()

    def other():
        started.wait()
        seen["enabled"] = tp.is_autocast_enabled("cpu")
        seen["dtype"] = tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with tp.autocast("cpu"):
        started.set()
        release.wait(10)
    t.join()
    assert seen == {"enabled": False, "dtype": tp.float32}


def test_set_functions_and_errors():
    tp.set_autocast_enabled("cpu", True)
    try:
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.bfloat16
        tp.set_autocast_dtype("cpu", tp.float16)
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float16
    finally:
        tp.set_autocast_enabled("cpu", False)
        tp.set_autocast_dtype("cpu", tp.bfloat16)
    assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float32
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        tp.autocast(tp.device("cpu"))
    with pytest.raises(RuntimeError, match="User specified an unsupported autocast device_type 'nodev'"):
        tp.autocast("nodev")
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        region = tp.autocast("cuda")
    with region:
        assert not tp.is_autocast_enabled("cuda")
    assert tp.amp.is_autocast_available("cpu") and not tp.amp.is_autocast_available("nodev")


def test_unsupported_cpu_dtype_warns_and_disables():
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. Disabling autocast."):
        ctx = tp.autocast("cpu", dtype=tp.float64)
    with ctx:
        assert not tp.is_autocast_enabled("cpu")
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float32


# -- policy as data ----------------------------------------------------------------------------
def test_policy_is_data_a_user_can_change():
    policy = tp.amp.policy("cpu")
    assert policy["mm"] == "lower_precision_fp" and policy["nll_loss"] == "fp32" and "exp" not in policy
    x = tp.ones(2, 2)
    try:
        policy["exp"] = "fp32"
        with tp.autocast("cpu"):
            assert tp.exp(x.bfloat16()).dtype is tp.float32
        del policy["mm"]
        with tp.autocast("cpu"):
            assert tp.mm(x, x).dtype is tp.float32
        with pytest.raises(ValueError, match="unknown autocast category"):
            policy["mm"] = "fast"
    finally:
        policy.reset()
    assert "exp" not in policy and policy["mm"] == "lower_precision_fp"
    assert "mm" in policy.names("lower_precision_fp")
    assert set(policy.as_dict()) >= {"lower_precision_fp", "fp32", "promote"}


def test_decomposition_pytorch_computes_as_one_kernel_is_not_cast_inside():
    # mv and dot decompose into matmul here; PyTorch's own kernels are not on the CPU list
    with tp.autocast("cpu"):
        assert tp.mv(tp.ones(3, 2), tp.ones(2)).dtype is tp.float32
        assert tp.dot(tp.ones(3), tp.ones(3)).dtype is tp.float32


def test_banned_op_raises_on_cuda_policy():
    assert tp.amp.policy("cpu").category("binary_cross_entropy") == "fp32"
    from tensorplug_autocast.policy import CUDA
    assert "binary_cross_entropy" in CUDA["banned"]


# -- cache -------------------------------------------------------------------------------------
def _three_linears():
    torch_like = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8))
    return torch_like, tp.randn(2, 8)


def test_cache_casts_weights_once_per_region():
    model, x = _three_linears()
    with tp.autocast("cpu"):
        first = _cast_count(lambda: model(x))
        assert tp.amp.cache_info()["entries"] == 6
        again = _cast_count(lambda: model(x))
    assert (first, again) == (7, 1)   # 6 weights and biases + the input; then the input only
    assert tp.amp.cache_info() == {"entries": 0, "bytes": 0}
    with tp.autocast("cpu", cache_enabled=False):
        assert _cast_count(lambda: model(x)) == 7
        assert _cast_count(lambda: model(x)) == 7
        assert tp.amp.cache_info()["entries"] == 0


def test_cache_is_keyed_by_version_so_it_cannot_go_stale():
    lin = nn.Linear(2, 2, bias=False)
    x = tp.ones(1, 2)
    with tp.autocast("cpu"):
        before = lin(x)
        with tp.no_grad():
            lin.weight.add_(1.0)
        after = lin(x)
    with tp.no_grad():
        want = (x @ lin.weight.t())
    assert not tp.allclose(before.float(), after.float())
    assert tp.allclose(after.float(), want, rtol=1e-2, atol=1e-2)


def test_cache_bytes_and_release():
    lin = nn.Linear(16, 16)
    with tp.autocast("cpu"):
        lin(tp.ones(1, 16))
        assert tp.amp.cache_info() == {"entries": 2, "bytes": (16 * 16 + 16) * 2}
    assert tp.amp.cache_info()["entries"] == 0


def test_no_grad_casts_are_not_reused_with_grad():
    lin = nn.Linear(2, 2)
    x = tp.ones(1, 2)
    with tp.autocast("cpu"):
        with tp.no_grad():
            lin(x)
        out = lin(x)
    out.float().sum().backward()
    assert lin.weight.grad is not None


# -- autograd ---------------------------------------------------------------------------------
def test_gradients_of_float32_leaves_arrive_in_float32():
    lin = nn.Linear(4, 3)
    x = tp.randn(5, 4, requires_grad=True)
    with tp.autocast("cpu"):
        loss = F.cross_entropy(lin(x), tp.tensor([0, 1, 2, 0, 1]))
    loss.backward()
    assert lin.weight.grad.dtype is tp.float32 and x.grad.dtype is tp.float32
    ref_lin = nn.Linear(4, 3)
    ref_lin.load_state_dict(lin.state_dict())
    x2 = x.detach().clone().requires_grad_()
    F.cross_entropy(ref_lin(x2), tp.tensor([0, 1, 2, 0, 1])).backward()
    assert tp.allclose(lin.weight.grad, ref_lin.weight.grad, rtol=5e-2, atol=5e-2)


def test_double_backward_through_a_region():
    x = tp.randn(3, 3, requires_grad=True)
    with tp.autocast("cpu"):
        y = tp.mm(x, x).float().pow(2).sum()
    (g,) = tp.autograd.grad(y, x, create_graph=True)
    (gg,) = tp.autograd.grad(g.sum(), x)
    assert g.dtype is tp.float32 and gg.dtype is tp.float32 and gg.shape == (3, 3)


def test_custom_fwd_and_bwd():
    seen = {}

    class MyMM(tp.autograd.Function):
        @staticmethod
        @tp.amp.custom_fwd(device_type="cpu", cast_inputs=tp.float32)
        def forward(ctx, a, b):
            seen["fwd"] = (a.dtype, tp.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @tp.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["bwd"] = tp.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), a.t().mm(grad)

    a = tp.randn(2, 2, requires_grad=True)
    with tp.autocast("cpu"):
        out = MyMM.apply(a.bfloat16(), tp.randn(2, 2))
    assert out.dtype is tp.float32 and seen["fwd"] == (tp.float32, False)
    out.sum().backward()
    assert seen["bwd"] is False and a.grad.dtype is tp.float32


# -- every backend ----------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["openreg", "minimal"])
def test_backends_get_autocast_without_code_of_their_own(device):
    lin = nn.Linear(4, 3).to(device)
    x = tp.randn(2, 4, device=device)
    with tp.autocast(device_type=device, dtype=tp.float16):
        y = lin(x)
        loss = F.cross_entropy(y, tp.tensor([0, 1], device=device))
    assert y.dtype is tp.float16 and loss.dtype is tp.float32
    loss.backward()
    assert lin.weight.grad.dtype is tp.float32 and lin.weight.grad.device.type == device
    with tp.autocast(device_type=device, dtype=tp.float16):   # cpu tensors are not cast by a device region
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float32


def test_training_under_autocast_on_openreg_lowers_the_loss():
    tp.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to("openreg")
    opt = tp.optim.SGD(model.parameters(), lr=0.1)
    x = tp.randn(32, 8).to("openreg")
    y = (x[:, 0] > 0).long()
    losses = []
    for _ in range(30):
        with tp.autocast("openreg", dtype=tp.float16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]


# -- switched off ------------------------------------------------------------------------------
def test_disabled_plugin_names_itself_and_comes_back():
    tp.plugins.disable("autocast")
    try:
        with pytest.raises(AttributeError, match=r"tensorplug.autocast is provided by the plugin 'autocast' "
                                                 r"\(pip install tensorplug-autocast\), which is installed but disabled"):
            tp.autocast
        with pytest.raises(AttributeError, match=r"tensorplug.amp.custom_fwd is provided by the plugin 'autocast'"):
            tp.amp.custom_fwd
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.float32
    finally:
        tp.plugins.enable("autocast")
    with tp.autocast("cpu"):
        assert tp.mm(tp.ones(2, 2), tp.ones(2, 2)).dtype is tp.bfloat16


def test_disabled_by_environment_variable():
    code = ("import tensorplug as tp\n"
            "try:\n    tp.autocast\nexcept AttributeError as e:\n    print(e)\n")
    env = {**__import__("os").environ, "TENSORPLUG_DISABLE_PLUGINS": "autocast"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert "provided by the plugin 'autocast'" in out and "disabled" in out


def test_docs_page_shows_the_tables_of_the_code():
    from pathlib import Path
    from tensorplug_autocast.policy import markdown_tables
    page = (Path(__file__).parents[3] / "docs" / "autocast.md").read_text()
    start = page.index("<!-- generated: autocast tables -->\n") + len("<!-- generated: autocast tables -->\n")
    assert page[start:page.index("<!-- end generated -->")] == markdown_tables()
