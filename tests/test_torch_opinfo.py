"""tensorplug against PyTorch's own OpInfo database: every op both have, on PyTorch's sample inputs
(forward values, dtypes and shapes; in-place variants; float64 gradients; error inputs). A failure
must be listed with its reason in tensorplug.testing.torch_opinfo_exceptions, and a listed failure
that passes now fails the test too, so the list stays honest. Missing ops are counted, not failed:
``python -m tensorplug.testing.torch_opinfo --report`` prints the coverage."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

import tensorplug as tp  # noqa: E402
from tensorplug.testing import torch_opinfo as T  # noqa: E402
from tensorplug.testing.torch_opinfo_exceptions import EXCEPTIONS  # noqa: E402

OPS = T.user_facing_ops()
PRESENT = [op for op in OPS if T.resolve(op) is not None]
RESULTS = {}


@pytest.mark.parametrize("op", PRESENT, ids=T.key)
def test_opinfo(op):
    res = T.run_op(op)
    RESULTS[res.key] = res
    new, stale = T.judge(res)
    msgs = [f"{res.key}/{c}: {t}" for c, t in new.items()]
    msgs += [f"{s} is listed in torch_opinfo_exceptions but passes now: remove it" for s in stale]
    assert not msgs, "\n".join(msgs)


def test_exceptions_name_existing_ops():
    keys = {T.key(op) for op in PRESENT}
    unknown = [k for k in EXCEPTIONS if k.split("/")[0] not in keys]
    assert not unknown, f"exceptions for ops tensorplug lacks or PyTorch's op_db does not have: {unknown}"


def test_coverage_summary():
    cov = T.coverage(run=False)
    assert len(cov.present) == len({op.name for op in PRESENT})
    assert 0 < len(cov.present) <= len(cov.names)
    cov.results = list(RESULTS.values())
    print("\n" + cov.summary())


def _op(key):
    return next(op for op in OPS if T.key(op) == key)


def test_a_wrong_result_is_caught(monkeypatch):
    monkeypatch.setitem(T.ADAPTERS, "exp", lambda x, *a, **k: tp.exp(x) + 1)
    res = T.run_op(_op("exp"))
    assert "forward" in res.failures and "not close" in res.failures["forward"]


def test_a_wrong_gradient_is_caught(monkeypatch):
    def square_with_wrong_grad(x):
        return x * x.detach()   # the value of x ** 2, the gradient of x * c
    monkeypatch.setitem(T.ADAPTERS, "square", square_with_wrong_grad)
    res = T.run_op(_op("square"))
    assert "Mismatched" in res.failures["grad"]


def test_a_missing_error_is_caught(monkeypatch):
    monkeypatch.setitem(T.ADAPTERS, "index_select", lambda *a, **k: tp.zeros(1))
    res = T.run_op(_op("index_select"))
    assert res.failures["error"].startswith("no error")


def test_wrong_dtype_is_caught(monkeypatch):
    monkeypatch.setitem(T.ADAPTERS, "abs", lambda x, *a, **k: tp.abs(x).double())
    res = T.run_op(_op("abs"))
    assert "dtype" in res.failures["forward"]


def test_stale_and_new_entries(monkeypatch):
    res = T.OpResult("abs", "abs")
    monkeypatch.setitem(EXCEPTIONS, "abs/grad", "a reason that no longer holds")
    assert T.judge(res) == ({}, ["abs/grad"])
    res.fail("forward", "float32: wrong")
    new, stale = T.judge(res)
    assert new == {"forward": "float32: wrong"} and stale == ["abs/grad"]
    assert "'abs/forward': 'TODO: float32: wrong'," in T.paste_list([res])


def test_random_ops_compare_shape_and_dtype_only():
    res = T.run_op(_op("randn_like"))
    assert res.samples > 0 and not res.failures


def test_randomized_factorizations_are_compared_through_their_gauge_invariant_view(monkeypatch):
    assert T.run_op(_op("svd_lowrank")).failures == {}

    def wrong_singular_values(a, b, **kw):
        u, s, v = tp.svd_lowrank(a @ b.mT, **kw)
        return u, s * 1.01, v
    monkeypatch.setitem(T.ADAPTERS, "svd_lowrank", wrong_singular_values)
    assert "not close" in T.run_op(_op("svd_lowrank")).failures["forward"]


def test_attention_with_dropout_is_a_random_sample():
    mha = _op("nn.functional.multi_head_attention_forward")
    samples = list(mha.sample_inputs("cpu", T._torch().float32))
    flags = [T._dropout_sample(mha, s) for s in samples]
    assert any(flags) and not all(flags)
    assert all(s.args[9] > 0 and s.kwargs.get("training", True) for s, f in zip(samples, flags) if f)


def test_a_float32_result_as_accurate_as_pytorchs_passes_and_a_worse_one_fails():
    # a cancelling float32 sum: two summation orders can each be 1e-4 off the float64 value, in
    # opposite directions, and so differ from each other by more than assert_close allows
    import torch
    exact = torch.tensor([1e-3, 2.0], dtype=torch.float64)
    theirs = (exact + torch.tensor([1e-4, 0.0], dtype=torch.float64)).float()
    reference = lambda: [exact]  # noqa: E731
    as_good = tp.from_numpy((exact - torch.tensor([1e-4, 0.0], dtype=torch.float64)).float().numpy())
    worse = tp.from_numpy((exact + torch.tensor([5e-4, 0.0], dtype=torch.float64)).float().numpy())
    assert "not close" in T._compare(theirs, as_good, False)          # without the float64 reference
    assert T._compare(theirs, as_good, False, reference) is None
    assert "not close" in T._compare(theirs, worse, False, reference)
    nan = tp.from_numpy(torch.tensor([float("nan"), 2.0]).numpy())
    assert "not close" in T._compare(theirs, nan, False, reference)
