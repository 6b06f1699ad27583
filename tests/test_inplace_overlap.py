"""In-place writes through a tensor whose elements share memory (an ``expand``ed view).

PyTorch rejects them (``has_internal_overlap`` is YES: a stride of 0 on a dimension of size > 1)
with one RuntimeError; the core checks it once, in the wrapper the dispatcher puts around the
Dense kernel of every op that writes an argument, so every backend behaves the same. A few ops
accept such a tensor as PyTorch does: ``fill_`` with a number (and ``zero_``), and ``index_put_``
and ``masked_fill_``, which warn that this is deprecated.
"""

import re
import warnings

import pytest

import tensorplug as tp
import tensorplug.nn.functional as F

INTERNAL = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")
DEVICES = ["cpu", "minimal", "openreg"]


def _expanded(device):
    return tp.zeros(1, 3, device=device).expand(4, 3)


def _long(values, device):
    return tp.tensor(values, dtype=tp.int64, device=device)


REJECTED = {
    "add_": lambda x, d: x.add_(1), "add_.Tensor": lambda x, d: x.add_(tp.ones(4, 3, device=d)),
    "add_ itself": lambda x, d: x.add_(x), "mul_": lambda x, d: x.mul_(2), "sub_": lambda x, d: x.sub_(1),
    "div_": lambda x, d: x.div_(2), "pow_": lambda x, d: x.pow_(2), "neg_": lambda x, d: x.neg_(),
    "exp_": lambda x, d: x.exp_(), "floor_": lambda x, d: x.floor_(), "clamp_": lambda x, d: x.clamp_(0, 1),
    "clamp_min_": lambda x, d: x.clamp_min_(0), "sigmoid_": lambda x, d: x.sigmoid_(),
    "relu_": lambda x, d: x.relu_(), "F.relu inplace": lambda x, d: F.relu(x, inplace=True),
    "F.hardtanh inplace": lambda x, d: F.hardtanh(x, inplace=True),
    "F.dropout inplace": lambda x, d: F.dropout(x, 0.5, True, True),
    "copy_": lambda x, d: x.copy_(tp.ones(4, 3, device=d)), "copy_ broadcast": lambda x, d: x.copy_(tp.ones(3, device=d)),
    "fill_ tensor": lambda x, d: x.fill_(tp.tensor(1.0, device=d)),
    "uniform_": lambda x, d: x.uniform_(), "normal_": lambda x, d: x.normal_(),
    "bernoulli_": lambda x, d: x.bernoulli_(0.5), "random_": lambda x, d: x.random_(0, 5),
    "scatter_": lambda x, d: x.scatter_(1, tp.zeros(4, 1, dtype=tp.int64, device=d), 1.0),
    "scatter_.src": lambda x, d: x.scatter_(1, tp.zeros(4, 1, dtype=tp.int64, device=d), tp.ones(4, 1, device=d)),
    "scatter_add_": lambda x, d: x.scatter_add_(1, tp.zeros(4, 1, dtype=tp.int64, device=d), tp.ones(4, 1, device=d)),
    "addcmul_": lambda x, d: x.addcmul_(tp.ones(4, 3, device=d), tp.ones(4, 3, device=d)),
    "lerp_": lambda x, d: x.lerp_(tp.ones(4, 3, device=d), 0.5),
    "logical_not_": lambda x, d: x.logical_not_(),
    "x[:, 0] = 1.0": lambda x, d: x.__setitem__((slice(None), 0), 1.0),
    "x[...] = 1.0": lambda x, d: x.__setitem__(Ellipsis, 1.0),
    "x[:, 0] = tensor": lambda x, d: x.__setitem__((slice(None), 0), tp.ones(4, device=d)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(REJECTED))
def test_writes_through_an_expanded_view_raise(device, name):
    warnings.simplefilter("ignore")  # the fallback devices warn on their first CPU fallback
    base = tp.zeros(1, 3, device=device)
    x = base.expand(4, 3)
    with pytest.raises(RuntimeError, match=re.escape(INTERNAL)):
        REJECTED[name](x, device)
    assert base.tolist() == [[0.0, 0.0, 0.0]]  # nothing was written
    assert x._version == 0


@pytest.mark.parametrize("device", DEVICES)
def test_fill_and_zero_accept_an_expanded_view(device):
    """``fill_`` with a number and ``zero_`` write every element the same value: PyTorch allows them."""
    base = tp.zeros(1, 3, device=device)
    assert base.expand(4, 3).fill_(2.0).tolist() == [[2.0] * 3] * 4
    assert base.expand(4, 3).zero_().tolist() == [[0.0] * 3] * 4
    assert base._version == 2


@pytest.mark.parametrize("device", DEVICES)
def test_index_put_and_masked_fill_warn_on_an_expanded_view(device):
    base = tp.zeros(1, 3, device=device)
    x = base.expand(4, 3)
    mask = tp.tensor([[True, False, False]] * 4, device=device)
    calls = {
        "index_put_": (lambda: x.index_put_((_long([0], device),), tp.tensor(1.0, device=device)),
                       "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                       "performing this operation. This also applies to advanced indexing e.g. tensor[indices] "
                       "= tensor"),
        "masked_fill_": (lambda: x.masked_fill_(mask, 2.0),
                         "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                         "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                         "scalar"),
    }
    for name, (call, message) in calls.items():
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            call()
        assert message in [str(w.message) for w in got if w.category is UserWarning], name
    if device == "cpu":  # row 0 written is every row written (a CPU fallback writes its dense copy back)
        assert base.tolist() == [[2.0, 1.0, 1.0]]


@pytest.mark.parametrize("device", DEVICES)
def test_stride_zero_is_no_overlap_on_size_one_or_empty_dims(device):
    """Only a stride of 0 on a dimension of more than one element makes two elements meet (and an empty
    tensor has none): PyTorch's ``has_internal_overlap`` answers YES only then."""
    one = tp.zeros(1, device=device).expand(1, 1)
    assert one.stride() == (0, 1) or 0 in one.stride()
    assert one.add_(1).tolist() == [[1.0]]
    empty = tp.zeros(1, 0, device=device).expand(3, 0)
    assert empty.add_(1).shape == (3, 0)
    # a layout whose elements may meet without a zero stride is not analysed (PyTorch's MAYBE)
    flat = tp.zeros(3, device=device)
    flat.as_strided((2, 2), (1, 1)).add_(1)


def test_a_detached_or_data_alias_of_an_expanded_view_is_checked_too():
    x = tp.zeros(1).expand(3)
    for alias in (x.detach(), x.data):
        with pytest.raises(RuntimeError, match=re.escape(INTERNAL)):
            alias.mul_(2)


def test_gradients_of_expanded_results_are_stored_dense():
    """A leaf's ``.grad`` follows the leaf's layout (PyTorch's layout contract), never an expanded
    gradient such as mean's: so accumulating into it in place keeps working."""
    x = tp.ones(3, 4, requires_grad=True)
    x.mean().backward()
    assert x.grad.stride() == (4, 1)
    x.mean().backward()
    assert x.grad.tolist() == tp.full((3, 4), 2 / 12).tolist()
    y = tp.ones(4, 3, requires_grad=True)
    (y.t() * tp.ones(3, 4)).sum().backward()
    assert y.grad.stride() == (3, 1)


@pytest.mark.parametrize("backend", DEVICES + ["vmap", "profiler"])
def test_the_conformance_kit_runs_the_expanded_samples(backend):
    """The op database's ``*.expanded`` entries (forward and error inputs) pass on every backend and transform."""
    from tensorplug.testing import run_conformance
    report = run_conformance(backend, ops="*.expanded")
    assert report.ok
    if backend in DEVICES:
        ran = {(c.opinfo.name, c.check.name) for c, o in report.results if o.status in ("passed", "fallback")}
        for name in ("add_.expanded", "copy_.expanded", "relu_.expanded", "scatter_.expanded", "uniform_.expanded",
                     "fill_.expanded"):
            assert (name, "error_inputs") in ran
        assert ("fill_.expanded", "forward") in ran


def test_a_tensor_given_an_expanded_layout_by_data_assignment_is_checked_again():
    """The first write finds a tensor free of overlap and remembers it; ``.data = ...`` gives it a new layout."""
    y = tp.zeros(4, 3)
    y.add_(1)
    y[0].add_(1)
    y.data = tp.zeros(1, 3).expand(4, 3)
    with pytest.raises(RuntimeError, match=re.escape(INTERNAL)):
        y.add_(1)
