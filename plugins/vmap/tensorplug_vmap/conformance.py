"""vmap's conformance check: ``tensorplug conformance vmap``.

For each op of the database and each sample, a few random ``in_dims``
combinations are drawn (each tensor of the sample batched at dim 0, the
last dim, or not at all). Example ``k`` of a batched tensor is a random
permutation of the sample tensor's elements, so examples differ while every
value stays valid for the op (indices in range, positive inputs positive).
``vmap(op)`` must equal ``op`` applied example by example and stacked. Random
ops are checked with ``randomness="different"`` for shape and dtype only.
"""

from __future__ import annotations

import random as _random
import warnings
import zlib

import numpy as np

import tensorplug as tp
from tensorplug.testing import (Skip, call, op_samples as samples, move_sample, check_close as assert_close,
                                tolerance, leaves, map_tensors, register_transform_check)
from tensorplug import Tensor

BATCH = 3
COMBOS = 2  # in_dims combinations per sample, besides "everything batched at 0"

XFAIL = {
    "allclose": "returns a Python bool computed from the data (.item()): data-dependent, cannot be vmapped",
    "one_hot": "num_classes=-1 reads the largest index (.item()): a data-dependent output shape",
    "__getitem__": "its samples include boolean masks, whose result shape depends on the data (an error in "
                   "PyTorch's vmap too); batched integer indices are tested in test_vmap.py",
    "nn.functional.batch_norm.running_stats": "updates the unbatched running statistics in place with batched "
                                              "ones: an error in PyTorch's vmap too",
}
"""Ops that cannot be vmapped, with the reason (reported as expected failures)."""


def _examples(t, rng):
    """``BATCH`` tensors shaped like ``t``: permutations of its elements (the first is ``t`` itself)."""
    flat = t.detach().reshape(-1)
    out = [t.detach().clone()]
    for _ in range(BATCH - 1):
        perm = tp.tensor(rng.permutation(flat.numel()), dtype=tp.int64)
        out.append(flat[perm].reshape(t.shape) if flat.numel() else t.detach().clone())
    return out


def _combos(n, rng):
    yield (0,) * n
    for _ in range(COMBOS):
        yield tuple(rng.choice((0, -1, None)) for _ in range(n))


def check_vmap_vs_loop(device_type, opinfo, dtype):
    """vmap(op) over random in_dims equals stacking op applied per example."""
    # float64 where supported: batched and per-example kernels may sum in different orders
    dtype = dtype or next((d for d in (tp.float64, tp.float32) if d in opinfo.dtypes), opinfo.dtypes[0])
    found = False
    rng = np.random.default_rng(zlib.crc32(opinfo.name.encode()))
    pyrng = _random.Random(opinfo.name)
    for index, sample in enumerate(samples(opinfo, dtype)):
        sample = move_sample(sample, device_type)
        struct = (sample.input, tuple(sample.args), dict(sample.kwargs))
        ts = []
        map_tensors(struct, ts.append)
        if not ts:
            continue
        found = True
        per_tensor = [_examples(t, rng) for t in ts]

        def fn(*tensors, struct=struct):
            it = iter(tensors)
            inp, args, kwargs = map_tensors(struct, lambda t: next(it))
            if opinfo.random:
                return opinfo.op(inp, *args, **kwargs)
            return call(opinfo, type(sample)(inp, args, kwargs))

        combos = list(_combos(len(ts), pyrng))
        for dims in combos:
            if all(d is None for d in dims):
                continue
            if opinfo.name.endswith("_") and dims[0] is None:
                # writing batched values into an unbatched self is an error, as in PyTorch (tested apart)
                dims = (0,) + dims[1:]
            inputs = []
            for t, exs, d in zip(ts, per_tensor, dims):
                if d is None:
                    inputs.append(exs[0])
                else:
                    st = tp.stack(exs)
                    inputs.append(st.movedim(0, d % st.dim()) if d else st)
            what = f"{opinfo.name} sample {sample.name or index} in_dims={dims}"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = tp.vmap(fn, in_dims=dims, randomness="different" if opinfo.random else "error")(*inputs)
            expected = []
            for k in range(BATCH):
                ex = [exs[k] if d is not None else exs[0] for exs, d in zip(per_tensor, dims)]
                expected.append(fn(*ex))
            got_l, exp_l = leaves(got), [leaves(e) for e in expected]
            assert len(got_l) == len(exp_l[0]), f"{what}: {len(got_l)} outputs, expected {len(exp_l[0])}"
            for j, g in enumerate(got_l):
                col = [e[j] for e in exp_l]
                if not isinstance(g, Tensor):
                    assert all(c == g for c in col), f"{what}: output {j} is {g!r}, per example {col!r}"
                    continue
                ref = tp.stack([c.detach() for c in col])
                assert g.dtype is ref.dtype, f"{what}: output {j} dtype {g.dtype}, expected {ref.dtype}"
                assert tuple(g.shape) == tuple(ref.shape), f"{what}: output {j} shape {tuple(g.shape)}, " \
                                                           f"expected {tuple(ref.shape)}"
                if not opinfo.random:
                    atol, rtol = tolerance(opinfo, ref.dtype)
                    assert_close(g, ref, atol, rtol, f"{what}: output {j}")
    if not found:
        raise Skip("no sample with a tensor input")


def register():
    """Register the check with the conformance kit (idempotent)."""
    register_transform_check("vmap", "vmap_vs_loop", check_vmap_vs_loop, per_dtype=False)
