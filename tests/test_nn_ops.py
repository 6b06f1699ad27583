"""nn.functional's layers as operators: a backend's own kernel wins over the decomposition, the
dispatch table shows both, and the profiler sees one operator with its decomposition inside."""

from __future__ import annotations

import numpy as np
import pytest

import tensorplug as tp
import tensorplug.nn.functional as F
from tensorplug import cli, nn

OPS = tp.ops.tensorplug


@pytest.fixture
def fusedev(make_plugin):
    """The toy backend ``fusedev`` with native conv2d and layer_norm kernels, enabled; its log starts empty."""
    from toy_plugins import fused_nn as mod
    mod.CALLS.clear()
    make_plugin(mod, "fusednn")
    return mod


def _on(dev, *arrays):
    return [tp.tensor(a, device=dev) for a in arrays]


def test_native_conv2d_kernel_runs_instead_of_the_decomposition(fusedev):
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    xf, wf, bf = _on("fusedev", x.astype(np.float32), w.astype(np.float32), b.astype(np.float32))
    out = F.conv2d(xf, wf, bf, stride=2, padding=1)
    # the functional form normalizes ints to pairs before the op, and the toy kernel sees them as the schema says
    assert fusedev.CALLS == [("conv2d", (2, 2), (1, 1), (1, 1), 1, True)]
    assert out.device == tp.device("fusedev") and out.shape == (2, 4, 3, 3)
    assert np.all(out._data == 7.0)  # the native array: fusedev has no copy kernels
    # the CPU still runs the decomposition: real values, and the toy kernel is not called again
    xc, wc, bc = _on("cpu", x.astype(np.float32), w.astype(np.float32), b.astype(np.float32))
    ref = F.conv2d(xc, wc, bc, stride=2, padding=1)
    assert len(fusedev.CALLS) == 1 and not np.all(ref.numpy() == 7.0)
    assert ref.shape == (2, 4, 3, 3)


def test_native_layer_norm_kernel_runs_for_the_functional_and_the_module(fusedev):
    x = tp.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4), device="fusedev")
    out = F.layer_norm(x, 4, eps=1e-3)
    assert fusedev.CALLS == [("layer_norm", (4,), 1e-3)]
    assert out._data.tolist() == np.full((2, 3, 4), -1.0).tolist()
    m = nn.LayerNorm((3, 4), elementwise_affine=False)
    assert np.all(m(x)._data == -1.0)
    assert fusedev.CALLS[-1] == ("layer_norm", (3, 4), 1e-5)
    # checks run once for every backend, before the toy kernel is reached
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\]"):
        F.layer_norm(x, 5)
    assert len(fusedev.CALLS) == 2
    cpu = F.layer_norm(tp.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4)), 4)
    np.testing.assert_allclose(cpu.numpy()[0, 0], [-1.3416, -0.4472, 0.4472, 1.3416], atol=1e-3)


def test_dispatch_table_shows_the_native_kernel_for_its_key_and_the_composite_elsewhere(fusedev, capsys):
    table = {key: (prov, owner) for key, prov, owner in OPS.conv2d.default.dispatch_table()}
    assert table["FuseDev"] == ("kernel", "fusednn")
    # the CPU runs conv2d as one kernel too; autograd records conv2d itself (its backward formula) on
    # every backend, and backends without a kernel of their own decompose it below autograd
    assert table["CPU"] == ("kernel", "cpu") and table["Minimal"] == ("composite", "core")
    assert table["AutogradFuseDev"] == table["AutogradCPU"] == ("kernel", "core")
    assert cli.main(["dispatch-table", "conv2d"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("\n\n")
    assert blocks[0].splitlines()[0] == (
        "tensorplug::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, "
        "SymInt[2] dilation=1, SymInt groups=1) -> Tensor")
    rows = [line.split() for line in blocks[0].splitlines()[1:]]
    assert ["FuseDev", "kernel", "fusednn"] in rows and ["CPU", "kernel", "cpu"] in rows
    # the string-padding overload has no toy kernel: the composite serves the toy key there too
    padding_rows = [line.split() for line in blocks[1].splitlines()[1:]]
    assert blocks[1].startswith("tensorplug::conv2d.padding(")
    assert ["FuseDev", "composite", "core"] in padding_rows


def test_disabling_the_backend_plugin_removes_its_kernels(fusedev):
    tp.plugins.disable("fusednn")
    try:
        assert "FuseDev" not in {k for k, _, _ in OPS.layer_norm.default.dispatch_table()}
    finally:
        tp.plugins.enable("fusednn")
    assert ("FuseDev", "kernel", "fusednn") in OPS.layer_norm.default.dispatch_table()


@pytest.mark.parametrize("name, fn, args, kwargs", [
    ("conv2d.padding", F.conv2d, lambda: (tp.ones(1, 2, 5, 5), tp.ones(3, 2, 3, 3)), {"padding": "same"}),
    ("conv1d", F.conv1d, lambda: (tp.ones(1, 2, 5), tp.ones(3, 2, 3)), {}),
    ("max_pool2d", F.max_pool2d, lambda: (tp.ones(1, 2, 4, 4), 2), {}),
    ("max_pool2d_with_indices", F.max_pool2d, lambda: (tp.ones(1, 2, 4, 4), 2), {"return_indices": True}),
    ("avg_pool1d", F.avg_pool1d, lambda: (tp.ones(1, 2, 4), 2), {}),
    ("avg_pool2d", F.avg_pool2d, lambda: (tp.ones(1, 2, 4, 4), 2), {"stride": 1}),
    ("layer_norm", F.layer_norm, lambda: (tp.ones(2, 4), (4,)), {}),
    ("group_norm", F.group_norm, lambda: (tp.ones(2, 4, 3), 2), {}),
    ("batch_norm", F.batch_norm, lambda: (tp.randn(4, 3), None, None), {"training": True}),
    ("embedding", F.embedding, lambda: (tp.tensor([1, 0]), tp.ones(3, 2)), {}),
    ("cross_entropy_loss", F.cross_entropy, lambda: (tp.randn(3, 4), tp.tensor([0, 1, 3])), {}),
    ("scaled_dot_product_attention", F.scaled_dot_product_attention,
     lambda: (tp.ones(2, 3), tp.ones(4, 3), tp.ones(4, 2)), {"is_causal": True}),
])
def test_profiler_records_one_operator_with_its_decomposition_as_children(name, fn, args, kwargs):
    args = args()
    with tp.profiler.profile() as prof:
        fn(*args, **kwargs)
    top = [e for e in prof.events() if e.parent is None]
    assert [e.name for e in top] == [f"tensorplug::{name}"]
    assert top[0].children, "the decomposition's ops are recorded inside the operator's event"


def test_a_layer_the_cpu_runs_as_one_kernel_records_no_children():
    logp, target = tp.randn(3, 4), tp.tensor([0, 1, 3])
    with tp.profiler.profile() as prof:
        F.nll_loss(logp, target)
    top = [e for e in prof.events() if e.parent is None]
    assert [e.name for e in top] == ["tensorplug::nll_loss"] and not top[0].children
    x, w = tp.ones(1, 2, 5, 5), tp.ones(3, 2, 3, 3)
    with tp.profiler.profile() as prof:
        F.conv2d(x, w, padding=1)
    top = [e for e in prof.events() if e.parent is None]
    assert [e.name for e in top] == ["tensorplug::conv2d"] and not top[0].children


def test_reductions_and_defaults_reach_the_op_as_its_schema_says():
    logits, target = tp.randn(4, 5), tp.tensor([0, 2, 4, 1])
    for reduction, code in (("none", 0), ("mean", 1), ("sum", 2)):
        ours = F.cross_entropy(logits, target, reduction=reduction)
        direct = OPS.cross_entropy_loss(logits, target, None, code)
        assert ours.shape == direct.shape and np.allclose(ours.numpy(), direct.numpy())
    assert F.max_pool2d(tp.arange(16.0).view(1, 4, 4), 2).tolist() == [[[5.0, 7.0], [13.0, 15.0]]]
    assert OPS.max_pool2d(tp.arange(16.0).view(1, 4, 4), [2]).tolist() == [[[5.0, 7.0], [13.0, 15.0]]]
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        OPS.nll_loss(logits.log_softmax(1), target, None, 3)


def test_embedding_op_takes_weight_first_and_padding_idx_minus_one_as_none():
    w = tp.arange(6.0).view(3, 2).requires_grad_()
    out = OPS.embedding(w, tp.tensor([2, 0, 2]), 2)
    out.sum().backward()
    assert out.tolist() == [[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    w.grad = None
    F.embedding(tp.tensor([2, 0, 2]), w, padding_idx=-1).sum().backward()  # -1 is row 2 for F.embedding
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    w.grad = None
    OPS.embedding(w, tp.tensor([2, 0, 2])).sum().backward()  # the op's default: no padding row
    assert w.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
