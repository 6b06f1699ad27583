"""Op database entries of ``ops/nn_more.py`` and ``nn/functional_more.py``: channel_shuffle, max_unpool,
3-d adaptive pooling, conv_transpose3d, native_batch_norm / native_group_norm / native_layer_norm,
native_dropout_backward, max_pool2d_with_indices_backward and grid_sampler_2d / grid_sampler_3d.

References compute in float64 with numpy (explicit loops over windows and kernel positions) and cast to
the input's dtype.
"""

from __future__ import annotations

import numpy as np

import tensorplug as tp

from . import samples as S
from .opinfo import OP_DB, OpInfo, SampleInput
from .samples import ALL, FLOATING, make_tensor, index_tensor, small_when_grad as _small_when_grad
from .samples import error_input as _err, errors_of as _errors
from ..nn import functional as F
from .op_db_fft import ctensor

_TOL = {"atol": 2e-2, "rtol": 2e-2}  # reduced-precision sums round at every step, in PyTorch and here alike


def _add(name, op, ref, dtypes, samples, **kw):
    OP_DB.append(OpInfo(name=name, op=op, ref=ref, dtypes=tuple(dtypes), sample_inputs=_small_when_grad(samples),
                        **kw))


def _t(shape, dtype=tp.float32, seed=0, **kw):
    return make_tensor(shape, dtype, -1, 1, seed=seed, **kw)


def _distinct(shape, dtype, seed, requires_grad):
    """Values with distinct magnitudes (no ties for a maximum, gradients well defined)."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n).reshape(shape) / max(n, 1) - 0.5
    return make_tensor(shape, dtype, values=vals, requires_grad=requires_grad)


def _nt(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


# -- channel_shuffle ------------------------------------------------------------------------------------------
def _shuffle_ref(x, groups):
    n, c = x.shape[:2]
    return x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def _shuffle_samples(device, dtype, requires_grad):
    for i, (shape, g) in enumerate((((1, 4, 3, 3), 2), ((2, 6, 5), 3), ((2, 8, 2, 2, 2), 4), ((2, 3, 4), 1))):
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad), (g,), name=f"case{i}")
    yield SampleInput(make_tensor((2, 4, 3), dtype, seed=9, transposed=True, requires_grad=requires_grad), (2,),
                      name="transposed")


_add("nn.functional.channel_shuffle", F.channel_shuffle, _shuffle_ref, ALL, _shuffle_samples,
     aten=("channel_shuffle",), error_inputs=_errors(
         lambda: _err(RuntimeError, "Number of groups to divide channels in must be positive. Value of groups:0",
                      _t((2, 4, 3)), 0),
         lambda: _err(RuntimeError, r"channel_shuffle expects input with > 2 dims, but got input with sizes \[2, 4\]",
                      _t((2, 4)), 2),
         lambda: _err(RuntimeError, "Number of channels must be divisible by groups. Got 5 channels and 2 groups.",
                      _t((2, 5, 3)), 2)))


# -- max_unpool ---------------------------------------------------------------------------------------------------
def _unpool_ref(nd):
    def ref(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        k = _nt(kernel_size, nd)
        s = k if stride is None else _nt(stride, nd)
        p = _nt(padding, nd)
        if output_size is None:
            size = [(x.shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
        else:
            size = list(output_size)[-nd:]
        lead = x.shape[:-nd]
        out = np.zeros(lead + (int(np.prod(size)),))
        flat_x = S.f64(x).reshape(lead + (-1,))
        flat_i = indices.reshape(lead + (-1,))
        for pos in np.ndindex(*lead):
            for j in range(flat_x.shape[-1]):
                out[pos + (flat_i[pos + (j,)],)] = flat_x[pos + (j,)]
        return S.cast(out.reshape(lead + tuple(size)), x.dtype)
    return ref


def _unpool_samples(nd):
    # (pooled shape, kernel, stride, output size): indices drawn without repeats in each plane
    cases = {1: (((2, 3, 4), 2, None, None), ((1, 2, 3), 3, 2, (8,)), ((3, 5), 2, None, None)),
             2: (((2, 2, 2, 3), 2, None, None), ((1, 3, 3, 2), 3, 2, (7, 6)), ((2, 3, 3), 2, None, None)),
             3: (((1, 2, 2, 2, 2), 2, None, None), ((2, 2, 2, 2), (1, 2, 2), None, (2, 5, 5)))}[nd]

    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, k, s, size) in enumerate(cases):
            kk = _nt(k, nd)
            ss = kk if s is None else _nt(s, nd)
            full = size or tuple((shape[-nd + j] - 1) * ss[j] + kk[j] for j in range(nd))
            plane, m = int(np.prod(full)), int(np.prod(shape[-nd:]))
            rng = np.random.default_rng(i)
            lead = shape[:-nd]
            idx = np.stack([rng.permutation(plane)[:m] for _ in range(int(np.prod(lead)))]).reshape(shape)
            kw = {"stride": s} if s is not None else {}
            if size is not None:
                kw["output_size"] = size
            yield SampleInput(_distinct(shape, dtype, i, requires_grad), (index_tensor(idx), k), kw, name=f"case{i}")
    return sample_inputs


def _unpool_errors(nd):
    shape = (2, 2, 3, 3, 3)[:nd + 2]
    bad = shape[:-1] + (1,)
    return _errors(
        lambda: _err(RuntimeError, "Expected shape of indices to be same as that of the input tensor",
                     _t(shape), index_tensor(np.zeros(bad, np.int64)), 2),
        lambda: _err(RuntimeError, "Found an invalid max index: 1000", _t(shape),
                     index_tensor(np.full(shape, 1000, np.int64)), 2),
        lambda: _err(RuntimeError, "elements in indices should be type int64 but got: Int", _t(shape),
                     index_tensor(np.zeros(shape, np.int64), tp.int32), 2),
        lambda: _err(ValueError, "invalid output_size", _t(shape), index_tensor(np.zeros(shape, np.int64)), 2,
                     output_size=(1,) * nd))


for _nd in (1, 2, 3):
    _add(f"nn.functional.max_unpool{_nd}d", getattr(F, f"max_unpool{_nd}d"), _unpool_ref(_nd), FLOATING,
         _unpool_samples(_nd), aten=(f"max_unpool{max(_nd, 2)}d",), error_inputs=_unpool_errors(_nd))


# -- 3-d adaptive pooling -------------------------------------------------------------------------------------
def _adaptive3d_ref(kind):
    def ref(x, output_size, return_indices=False):
        v = S.f64(x)
        outs = _nt(output_size, 3)
        outs = tuple(v.shape[-3 + i] if o is None else o for i, o in enumerate(outs))
        sizes = v.shape[-3:]
        vals = np.zeros(v.shape[:-3] + outs)
        idx = np.zeros(v.shape[:-3] + outs, np.int64)
        for pos in np.ndindex(*outs):
            sl = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in zip(pos, sizes, outs))
            win = v[(Ellipsis,) + sl].reshape(v.shape[:-3] + (-1,))
            if kind == "avg":
                vals[(Ellipsis,) + pos] = win.mean(-1)
                continue
            a = np.argmax(win, -1)
            vals[(Ellipsis,) + pos] = np.take_along_axis(win, a[..., None], -1)[..., 0]
            c = np.unravel_index(a, tuple(s.stop - s.start for s in sl))
            idx[(Ellipsis,) + pos] = ((c[0] + sl[0].start) * sizes[1] + c[1] + sl[1].start) * sizes[2] + c[2] + \
                sl[2].start
        out = S.cast(vals, x.dtype)
        return (out, idx) if return_indices else out
    return ref


def _adaptive3d_samples(kind):
    cases = (((2, 2, 4, 5, 6), ((2, 3, 4),), {}), ((2, 4, 3, 5), ((3, None, 2),), {"return_indices": True}),
             ((1, 2, 3, 3, 3), (1,), {}), ((1, 1, 2, 3, 4), ((4, 5, 7),), {"return_indices": True}))

    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, args, kw) in enumerate(cases):
            kw = dict(kw) if kind == "max" else {}
            yield SampleInput(_distinct(shape, dtype, i, requires_grad), args, kw, name=f"case{i}")
    return sample_inputs


_add("nn.functional.adaptive_avg_pool3d", F.adaptive_avg_pool3d, _adaptive3d_ref("avg"), FLOATING,
     _adaptive3d_samples("avg"), aten=("adaptive_avg_pool3d",), **_TOL, error_inputs=_errors(
         lambda: _err(ValueError, "Input dimension should be at least 4", _t((2, 2, 2)), (2, 2, 2)),
         lambda: _err(RuntimeError, "output_size must be 3", _t((1, 2, 3, 4)), ()),
         lambda: _err(RuntimeError, "elements of output_size must be greater than or equal to 0",
                      _t((1, 1, 1, 1, 1)), (-1, 0, 2)),
         lambda: _err(NotImplementedError, "\"adaptive_avg_pool3d_cpu\" not implemented for 'Long'",
                      _t((1, 2, 3, 4), tp.int64), 2)))
_add("nn.functional.adaptive_max_pool3d", F.adaptive_max_pool3d, _adaptive3d_ref("max"), FLOATING,
     _adaptive3d_samples("max"), aten=("adaptive_max_pool3d",), error_inputs=_errors(
         lambda: _err(ValueError, "Input dimension should be at least 4", _t((2, 2, 2)), (2, 2, 2)),
         lambda: _err(RuntimeError, "internal error", _t((1, 2, 3, 4)), ()),
         lambda: _err(RuntimeError, "Trying to create tensor with negative dimension", _t((1, 1, 1, 1, 1)),
                      (-1, 0, 2)),
         lambda: _err(RuntimeError, r"adaptive_max_pool3d\(\): Expected 4D or 5D tensor, but got: \[2, 4, 4\]",
                      _t((2, 4, 4)), 2)))


# -- conv_transpose3d -----------------------------------------------------------------------------------------------
def _conv_t3_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    s, p, op, d = (_nt(v, 3) for v in (stride, padding, output_padding, dilation))
    v = S.f64(x)
    batched = v.ndim == 5
    v = v if batched else v[None]
    wt = S.f64(w)
    n, cin = v.shape[:2]
    cog = wt.shape[1]
    k = wt.shape[2:]
    sizes = v.shape[2:]
    outs = [(m - 1) * si - 2 * pi + di * (ki - 1) + oi + 1 for m, si, pi, di, ki, oi in zip(sizes, s, p, d, k, op)]
    full = np.zeros((n, cog * groups) + tuple(o + 2 * pi for o, pi in zip(outs, p)))
    cg = cin // groups
    for g in range(groups):
        xg = v[:, g * cg:(g + 1) * cg]
        for a, b_, c in np.ndindex(*k):
            contrib = np.einsum("ncdhw,co->nodhw", xg, wt[g * cg:(g + 1) * cg, :, a, b_, c])
            region = full[:, g * cog:(g + 1) * cog,
                          a * d[0]:a * d[0] + s[0] * (sizes[0] - 1) + 1:s[0],
                          b_ * d[1]:b_ * d[1] + s[1] * (sizes[1] - 1) + 1:s[1],
                          c * d[2]:c * d[2] + s[2] * (sizes[2] - 1) + 1:s[2]]
            region += contrib[..., :region.shape[2], :region.shape[3], :region.shape[4]]
    out = full[:, :, p[0]:p[0] + outs[0], p[1]:p[1] + outs[1], p[2]:p[2] + outs[2]]
    if b is not None:
        out = out + S.f64(b).reshape(1, -1, 1, 1, 1)
    return S.cast(out if batched else out[0], x.dtype)


def _conv_t3_samples(device, dtype, requires_grad):
    def mk(shape, seed):
        return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad)
    yield SampleInput(mk((1, 2, 2, 3, 2), 0), (mk((2, 2, 2, 2, 2), 1), mk((2,), 2)), name="plain")
    yield SampleInput(mk((1, 2, 2, 2, 3), 3), (mk((2, 1, 2, 1, 2), 4),),
                      {"stride": (2, 1, 2), "padding": (1, 0, 0), "output_padding": (1, 0, 1), "groups": 2},
                      name="strided_groups")
    yield SampleInput(mk((2, 2, 2, 2), 5), (mk((2, 2, 1, 2, 2), 6),), {"dilation": 2, "padding": (0, 1, 1)},
                      name="unbatched_dilated")


_add("nn.functional.conv_transpose3d", F.conv_transpose3d, _conv_t3_ref, FLOATING, _conv_t3_samples,
     aten=("conv_transpose3d.input", "conv3d"), **_TOL, error_inputs=_errors(
         lambda: _err(RuntimeError, "non-positive stride is not supported", _t((1, 2, 3, 3, 3)),
                      _t((2, 2, 2, 2, 2)), stride=0),
         lambda: _err(RuntimeError, "Expected 4D \\(unbatched\\) or 5D \\(batched\\) input to conv_transpose3d",
                      _t((2, 3, 3)), _t((2, 2, 2, 2, 2))),
         lambda: _err(RuntimeError, "output padding must be smaller than either stride or dilation, but got "
                                    "output_padding_depth: 1", _t((1, 2, 3, 3, 3)), _t((2, 2, 2, 2, 2)),
                      output_padding=1),
         lambda: _err(RuntimeError, "Output size is too small", _t((1, 2, 3, 3, 3)), _t((2, 2, 2, 2, 2)), padding=3)))


# -- native normalizations ------------------------------------------------------------------------------------------
def _bn_ref(x, w, b, rm, rv, training, momentum, eps):
    v = S.f64(x)
    dims = (0,) + tuple(range(2, v.ndim))
    shape = (1, -1) + (1,) * (v.ndim - 2)
    if training:
        mean, var = v.mean(dims), v.var(dims)
        stats = (S.cast(mean, x.dtype), S.cast(1 / np.sqrt(var + eps), x.dtype))
    else:
        mean, var = S.f64(rm), S.f64(rv)
        stats = (np.zeros((0,), rm.dtype), np.zeros((0,), rv.dtype))
    out = (v - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        out = out * S.f64(w).reshape(shape)
    if b is not None:
        out = out + S.f64(b).reshape(shape)
    return (S.cast(out, x.dtype),) + stats


def _bn_samples(device, dtype, requires_grad):
    def mk(shape, seed, rg=requires_grad, low=-1, high=1):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=rg)
    yield SampleInput(mk((3, 2, 4), 0), (mk((2,), 1), mk((2,), 2), None, None, True, 0.1, 1e-5), name="train")
    yield SampleInput(mk((2, 3, 2, 2), 3), (None, None, mk((3,), 4, False), mk((3,), 5, False, 0.5, 2), True, 0.3,
                                            1e-3), name="train_running")
    yield SampleInput(mk((4, 3), 6), (mk((3,), 7), mk((3,), 8), mk((3,), 9, False), mk((3,), 10, False, 0.5, 2),
                                      False, 0.1, 1e-5), name="eval")


# the saved statistics are not differentiable results (as in PyTorch): the gradient entries take the output
def _bn_on_copies(input, weight, bias, running_mean, running_var, *args):
    """native_batch_norm on copies of the running statistics, which training updates in place (as
    batch_norm's entry does; tests/test_nn_more.py checks the update): the out-of-place check then sees
    only the results."""
    copy = lambda t: None if t is None else t.clone()  # noqa: E731
    return tp.native_batch_norm(input, weight, bias, copy(running_mean), copy(running_var), *args)


_add("native_batch_norm.output", lambda *a: _bn_on_copies(*a)[0], lambda *a: _bn_ref(*a)[0], FLOATING,
     _bn_samples, aten=("native_batch_norm",), **_TOL)
_add("native_batch_norm", _bn_on_copies, _bn_ref, FLOATING, _bn_samples, aten=("native_batch_norm",), **_TOL,
     supports_autograd=False,
     error_inputs=_errors(
         lambda: _err(IndexError, "Dimension out of range", _t((3,)), None, None, None, None, True, 0.1, 1e-5),
         lambda: _err(RuntimeError, "running_mean should contain 3 elements not 2", _t((2, 3, 4)), None, None,
                      _t((2,)), _t((2,)), False, 0.1, 1e-5),
         lambda: _err(RuntimeError, "running_mean and running_var must be defined in evaluation mode",
                      _t((2, 3, 4)), None, None, None, None, False, 0.1, 1e-5)))


def _gn_ref(x, w, b, N, C, HxW, group, eps):
    v = S.f64(x).reshape(N, group, -1)
    mean, var = v.mean(-1), v.var(-1)
    rstd = 1 / np.sqrt(var + eps)
    out = ((v - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if w is not None:
        out = out * S.f64(w).reshape(shape)
    if b is not None:
        out = out + S.f64(b).reshape(shape)
    return S.cast(out, x.dtype), S.cast(mean, x.dtype), S.cast(rstd, x.dtype)


def _gn_samples(device, dtype, requires_grad):
    def mk(shape, seed):
        return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad)
    yield SampleInput(mk((2, 4, 3), 0), (mk((4,), 1), mk((4,), 2), 2, 4, 3, 2, 1e-5), name="affine")
    yield SampleInput(mk((3, 6, 2, 2), 3), (None, None, 3, 6, 4, 3, 1e-3), name="plain")
    yield SampleInput(mk((2, 3), 4), (mk((3,), 5), None, 2, 3, 1, 1, 1e-5), name="no_spatial")


_add("native_group_norm", tp.native_group_norm, _gn_ref, FLOATING, _gn_samples, aten=("native_group_norm",), **_TOL,
     error_inputs=_errors(
         lambda: _err(RuntimeError, "Expected number of channels in input to be divisible by num_groups",
                      _t((2, 5, 3)), None, None, 2, 5, 3, 2, 1e-5)))


def _ln_ref(x, normalized_shape, w, b, eps):
    dims = tuple(range(-len(normalized_shape), 0))
    v = S.f64(x)
    mean, var = v.mean(dims, keepdims=True), v.var(dims, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    out = (v - mean) * rstd
    if w is not None:
        out = out * S.f64(w)
    if b is not None:
        out = out + S.f64(b)
    return S.cast(out, x.dtype), S.cast(mean, x.dtype), S.cast(rstd, x.dtype)


def _ln_samples(device, dtype, requires_grad):
    def mk(shape, seed):
        return make_tensor(shape, dtype, -1, 1, seed=seed, requires_grad=requires_grad)
    yield SampleInput(mk((2, 3, 4), 0), ((3, 4), mk((3, 4), 1), mk((3, 4), 2), 1e-5), name="affine")
    yield SampleInput(mk((3, 5), 3), ((5,), None, None, 0.5), name="plain")


_add("native_layer_norm.output", lambda *a: tp.native_layer_norm(*a)[0], lambda *a: _ln_ref(*a)[0], FLOATING,
     _ln_samples, aten=("native_layer_norm",), **_TOL)
_add("native_layer_norm", tp.native_layer_norm, _ln_ref, FLOATING, _ln_samples, aten=("native_layer_norm",), **_TOL,
     supports_autograd=False,
     error_inputs=_errors(
         lambda: _err(RuntimeError, "Expected normalized_shape to be at least 1-dimensional", _t((1, 2, 3)), (),
                      None, None, 1e-5)))


# -- backward ops of torch.ops.aten ---------------------------------------------------------------------------------
def _dropout_bw_ref(g, mask, scale):
    out = S.f64(g) * mask * scale
    integral = g.dtype == np.bool_ or np.issubdtype(g.dtype, np.integer)
    return S.cast(out, np.float32 if integral else g.dtype)


def _dropout_bw_samples(device, dtype, requires_grad):
    for i, (shape, scale) in enumerate((((3, 4), 2.0), ((5,), 0.0), ((), 1.25))):
        yield SampleInput(make_tensor(shape, dtype, seed=i, requires_grad=requires_grad),
                          (S.bool_tensor(shape, seed=i + 10), scale), name=f"case{i}")


_add("native_dropout_backward", tp.ops.tensorplug.native_dropout_backward, _dropout_bw_ref, ALL, _dropout_bw_samples,
     aten=("native_dropout_backward",))


def _pool_bw(g, x, indices):
    return tp.ops.tensorplug.max_pool2d_with_indices_backward(g, x, (2, 2), (2, 2), (0, 0), (1, 1), False, indices)


def _pool_bw_ref(g, x, indices):
    lead = x.shape[:-2]
    out = np.zeros(lead + (x.shape[-2] * x.shape[-1],))
    gf, idx = S.f64(g).reshape(lead + (-1,)), indices.reshape(lead + (-1,))
    for pos in np.ndindex(*lead):
        np.add.at(out[pos], idx[pos], gf[pos])
    return S.cast(out.reshape(x.shape), g.dtype)


def _pool_bw_samples(device, dtype, requires_grad):
    for i, shape in enumerate(((2, 3, 4, 4), (3, 4, 6))):
        x = _distinct(shape, dtype, i, False)
        _, idx = F.max_pool2d(x, 2, return_indices=True)
        yield SampleInput(make_tensor(idx.shape, dtype, -1, 1, seed=i + 5, requires_grad=requires_grad), (x, idx),
                          name=f"case{i}")


_add("max_pool2d_with_indices_backward", _pool_bw, _pool_bw_ref, FLOATING, _pool_bw_samples,
     aten=("max_pool2d_with_indices_backward",))


# -- grid samplers -----------------------------------------------------------------------------------------------------
def _unnormalize(c, size, padding_mode, align_corners):
    c = (c + 1) / 2 * (size - 1) if align_corners else ((c + 1) * size - 1) / 2
    if padding_mode == 1:
        c = np.clip(c, 0, size - 1)
    elif padding_mode == 2:
        lo, hi = (0.0, 2.0 * (size - 1)) if align_corners else (-1.0, 2.0 * size - 1)
        if lo == hi:
            c = np.zeros_like(c)
        else:
            span = (hi - lo) / 2
            a = np.abs(c - lo / 2)
            extra, flips = np.fmod(a, span), np.floor(a / span)
            c = np.where(np.fmod(flips, 2) == 0, extra + lo / 2, span - extra + lo / 2)
        c = np.clip(c, 0, size - 1)
    return c


def _grid3d_ref(x, grid, mode, padding_mode, align_corners):
    v, gr = S.f64(x), S.f64(grid)
    n, c, d, h, w = v.shape
    ix = _unnormalize(gr[..., 0], w, padding_mode, align_corners)
    iy = _unnormalize(gr[..., 1], h, padding_mode, align_corners)
    iz = _unnormalize(gr[..., 2], d, padding_mode, align_corners)
    out = np.zeros((n, c) + gr.shape[1:4])

    def at(b, z, y, xx):
        if 0 <= z < d and 0 <= y < h and 0 <= xx < w:
            return v[b, :, z, y, xx]
        return 0.0
    for b in range(n):
        for pos in np.ndindex(*gr.shape[1:4]):
            px, py, pz = ix[(b,) + pos], iy[(b,) + pos], iz[(b,) + pos]
            if mode == 1:
                out[(b, slice(None)) + pos] = at(b, int(np.rint(pz)), int(np.rint(py)), int(np.rint(px)))
                continue
            x0, y0, z0 = np.floor(px), np.floor(py), np.floor(pz)
            acc = 0.0
            for dz, dy, dx in np.ndindex(2, 2, 2):
                wt = (px - x0 if dx else 1 - (px - x0)) * (py - y0 if dy else 1 - (py - y0)) * \
                    (pz - z0 if dz else 1 - (pz - z0))
                acc = acc + wt * at(b, int(z0) + dz, int(y0) + dy, int(x0) + dx)
            out[(b, slice(None)) + pos] = acc
    return S.cast(out, x.dtype)


def _grid3d_samples(device, dtype, requires_grad):
    i = 0
    for mode, pad, align in ((0, 0, False), (0, 1, True), (0, 2, False), (1, 0, True), (0, 2, True)):
        x = make_tensor((2, 2, 2, 3, 2), dtype, -1, 1, seed=i, requires_grad=requires_grad)
        g = make_tensor((2, 2, 1, 2, 3), dtype, -1.3, 1.3, seed=i + 20, requires_grad=requires_grad and mode == 0)
        yield SampleInput(x, (g, mode, pad, align), name=f"mode{mode}_pad{pad}_align{int(align)}")
        i += 1


_add("grid_sampler_3d", tp.grid_sampler_3d, _grid3d_ref, FLOATING, _grid3d_samples, aten=("grid_sampler_3d",),
     **_TOL, error_inputs=_errors(
         lambda: _err(RuntimeError, "expected grid to have size 3 in last dimension", _t((1, 1, 2, 2, 2)),
                      _t((1, 1, 1, 1, 2)), 0, 0, False),
         lambda: _err(RuntimeError, "bicubic interpolation only supports 4D input", _t((1, 1, 2, 2, 2)),
                      _t((1, 1, 1, 1, 3)), 2, 0, False)))


def _grid2d_ref(x, grid, mode, padding_mode, align_corners):
    """The 3-d reference on a depth of 1 sampled at z = 0 (exactly the 2-d sampling)."""
    g3 = np.concatenate([grid[:, None], np.zeros(grid.shape[:-1] + (1,), grid.dtype)[:, None]], -1)
    return _grid3d_ref(x[:, :, None], g3, mode, padding_mode, align_corners)[:, :, 0]


def _grid2d_samples(device, dtype, requires_grad):
    i = 0
    for mode, pad, align in ((0, 0, False), (0, 1, True), (0, 2, False), (1, 2, True), (0, 2, True)):
        x = make_tensor((2, 2, 3, 4), dtype, -1, 1, seed=i, requires_grad=requires_grad)
        g = make_tensor((2, 3, 2, 2), dtype, -1.3, 1.3, seed=i + 20, requires_grad=requires_grad and mode == 0)
        yield SampleInput(x, (g, mode, pad, align), name=f"mode{mode}_pad{pad}_align{int(align)}")
        i += 1


_add("grid_sampler_2d", tp.grid_sampler_2d, _grid2d_ref, FLOATING, _grid2d_samples, aten=("grid_sampler_2d",),
     **_TOL, error_inputs=_errors(
         lambda: _err(RuntimeError, "expected grid to have size 2 in last dimension", _t((1, 1, 2, 2)),
                      _t((1, 1, 1, 3)), 0, 0, False)))
_add("channel_shuffle", tp.channel_shuffle, _shuffle_ref, ALL, _shuffle_samples, aten=("channel_shuffle",))
_add("nn.functional.native_channel_shuffle", F.native_channel_shuffle, _shuffle_ref, ALL, _shuffle_samples,
     aten=("channel_shuffle",))


# -- linear_cross_entropy -----------------------------------------------------------------------------------------
def _lce_ref(x, w, target, linear_bias=None, weight=None, reduction="mean", ignore_index=None, label_smoothing=0.0):
    v, wt = S.f64(x), S.f64(w)
    c = wt.shape[0]
    logits = v @ wt.reshape(-1, wt.shape[-1]).T
    if linear_bias is not None:
        logits = logits + S.f64(linear_bias).reshape(-1)
    logits = logits.reshape(v.shape[:-1] + wt.shape[:-1])
    cdim = 0 if v.ndim == 1 else 1
    m = logits.max(cdim, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(cdim, keepdims=True))
    cw = np.ones(c) if weight is None else S.f64(weight)
    wshape = [1] * logits.ndim
    wshape[cdim] = c
    if not np.issubdtype(target.dtype, np.integer):  # class probabilities
        loss = -(logp * S.f64(target) * cw.reshape(wshape)).sum(cdim)
        out = loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
        return S.cast(out, x.dtype)
    ii = -100 if ignore_index is None else ignore_index
    keep = target != ii
    t = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, np.expand_dims(t, cdim), cdim).squeeze(cdim)
    wt_t = cw[t] * keep
    loss = -picked * wt_t
    if reduction == "mean":
        return S.cast(loss.sum() / wt_t.sum(), x.dtype)
    return S.cast(loss.sum() if reduction == "sum" else loss, x.dtype)


def _lce_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=-1, high=1, rg=requires_grad):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=rg)
    yield SampleInput(mk((4, 3), 0), (mk((5, 3), 1), index_tensor([0, 4, 2, 1])), name="mean")
    yield SampleInput(mk((4, 3), 2), (mk((5, 3), 3), index_tensor([0, 4, 1, 1])),
                      {"linear_bias": mk((5,), 4), "weight": mk((5,), 5, 0.5, 2, False), "reduction": "sum"},
                      name="bias_weight_sum")
    yield SampleInput(mk((3,), 6), (mk((4, 3), 7), index_tensor(2)), {"reduction": "none"}, name="unbatched")
    yield SampleInput(mk((2, 3), 8), (mk((4, 2, 3), 9), index_tensor([[0, 3], [1, 1]])),
                      {"ignore_index": 1, "reduction": "none"}, name="k_dim")
    yield SampleInput(mk((2, 3), 10), (mk((4, 3), 11), mk((2, 4), 12, 0, 1)), name="probabilities")


_add("nn.functional.linear_cross_entropy", F.linear_cross_entropy, _lce_ref, FLOATING, _lce_samples,
     aten=("linear", "cross_entropy_loss"), **_TOL, error_inputs=_errors(
         lambda: _err(RuntimeError, "expected input with dimensionality 1 or 2, got 3", _t((2, 3, 3)), _t((2, 3)),
                      _t((3, 2))),
         lambda: _err(RuntimeError, r"expected linear_bias shape \(2,\), got \(3,\)", _t((2, 3)), _t((2, 3)),
                      _t((2,)), linear_bias=_t((3,))),
         lambda: _err(RuntimeError, "ignore_index cannot be specified when target contains probabilities",
                      _t((2, 3)), _t((2, 3)), _t((2, 2)), ignore_index=0)))


# -- fractional max pooling -----------------------------------------------------------------------------------------
def _frac_starts(u, n, o, k, dt):
    if o == 1:
        return [n - k]
    a = dt(n - k) / dt(o - 1)
    return [int(dt(dt(i + dt(u)) * a)) - int(dt(dt(u) * a)) for i in range(o - 1)] + [n - k]


def _frac_ref(nd):
    def ref(x, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        v = S.f64(x)
        batched = v.ndim == nd + 2
        v = v if batched else v[None]
        sizes = v.shape[2:]
        ks = _nt(kernel_size, nd)
        outs = _nt(output_size, nd) if output_size is not None else \
            tuple(int(s * r) for s, r in zip(sizes, _nt(output_ratio, nd)))
        dt = np.float64 if x.dtype == np.float64 else np.float32
        order = (1, 0) if nd == 2 else (0, 1, 2)
        vals = np.zeros(v.shape[:2] + outs)
        idx = np.zeros(v.shape[:2] + outs, np.int64)
        for b, c in np.ndindex(*v.shape[:2]):
            starts = [None] * nd
            for j, dim in enumerate(order):
                starts[dim] = _frac_starts(_random_samples[b, c, j], sizes[dim], outs[dim], ks[dim], dt)
            for pos in np.ndindex(*outs):
                sl = tuple(slice(starts[d][p], starts[d][p] + ks[d]) for d, p in enumerate(pos))
                win = v[(b, c) + sl]
                a = int(np.argmax(win))
                vals[(b, c) + pos] = win.ravel()[a]
                co = np.unravel_index(a, ks)
                flat = 0
                for d in range(nd):
                    flat = flat * sizes[d] + starts[d][pos[d]] + co[d]
                idx[(b, c) + pos] = flat
        out = S.cast(vals if batched else vals[0], x.dtype)
        ind = idx if batched else idx[0]
        return (out, ind) if return_indices else out
    return ref


def _frac_samples(nd):
    cases = {2: (((1, 2, 9, 9), 3, {"output_size": (2, 3)}), ((2, 5, 6), (2, 3), {"output_ratio": (0.5, 0.5)}),
                 ((1, 1, 4, 4), 2, {"output_size": 2, "return_indices": True})),
             3: (((1, 2, 5, 5, 5), 2, {"output_size": (2, 3, 2)}),
                 ((2, 4, 5, 6), (2, 2, 3), {"output_ratio": (0.5, 0.5, 0.5), "return_indices": True}))}[nd]

    def sample_inputs(device, dtype, requires_grad):
        for i, (shape, k, kw) in enumerate(cases):
            n = shape[0] if len(shape) == nd + 2 else 1
            u = make_tensor((n, shape[-nd - 1], nd), dtype, 0, 1, seed=i + 50)
            yield SampleInput(_distinct(shape, dtype, i, requires_grad), (k,), {**kw, "_random_samples": u},
                              name=f"case{i}")
    return sample_inputs


for _nd in (2, 3):
    _add(f"nn.functional.fractional_max_pool{_nd}d", getattr(F, f"fractional_max_pool{_nd}d"), _frac_ref(_nd),
         FLOATING, _frac_samples(_nd), aten=(f"fractional_max_pool{_nd}d",), error_inputs=_errors(
             lambda _nd=_nd: _err(ValueError, "requires specifying either an output_size or an output_ratio",
                                  _t((1, 2) + (5,) * _nd), 2),
             lambda _nd=_nd: _err(RuntimeError, "Expect _random_samples.size\\(1\\) equals to input channel size",
                                  _t((1, 2) + (5,) * _nd), 2, output_size=2,
                                  _random_samples=_t((1, 3, _nd)))))


# -- stft / istft -----------------------------------------------------------------------------------------------------
def _win(window, win, n_fft, dtype):
    w = np.ones(win) if window is None else np.asarray(window, np.complex128 if np.iscomplexobj(window) else
                                                            np.float64)
    left = (n_fft - win) // 2
    return np.pad(w, (left, n_fft - win - left))


def _stft_ref(x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
              normalized=False, onesided=None, return_complex=None):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    v = np.asarray(x, np.complex128 if np.iscomplexobj(x) else np.float64)
    v = v if v.ndim == 2 else v[None]
    if center:
        v = np.pad(v, ((0, 0), (n_fft // 2, n_fft // 2)), mode="reflect")
    n_frames = 1 + (v.shape[-1] - n_fft) // hop
    frames = np.stack([v[:, i * hop:i * hop + n_fft] for i in range(n_frames)], 1) * _win(window, win, n_fft, None)
    cplx = np.iscomplexobj(frames)
    spec = np.fft.fft(frames, axis=-1)
    if not cplx and (onesided is None or onesided):
        spec = spec[..., :n_fft // 2 + 1]
    if normalized:
        spec = spec / np.sqrt(n_fft)
    spec = spec.transpose(0, 2, 1)
    spec = spec if np.ndim(x) == 2 else spec[0]
    cd = np.complex64 if np.asarray(x).dtype in (np.float32, np.complex64) else np.complex128
    spec = spec.astype(cd)
    if return_complex is None:
        return_complex = cplx
    return spec if return_complex else np.stack([spec.real, spec.imag], -1)


def _stft_samples(device, dtype, requires_grad):
    def mk(shape, seed, low=-1, high=1):
        return make_tensor(shape, dtype, low, high, seed=seed, requires_grad=requires_grad)
    yield SampleInput(mk((40,), 0), (10,), {"return_complex": True}, name="centred")
    yield SampleInput(mk((2, 30), 1), (8,), {"hop_length": 3, "center": False, "return_complex": False},
                      name="real_view")
    yield SampleInput(mk((24,), 2), (8,), {"window": mk((6,), 3, 0.5, 2), "win_length": 6, "normalized": True,
                                           "onesided": False, "return_complex": True}, name="window_twosided")


_add("stft", tp.stft, _stft_ref, (tp.float32, tp.float64), _stft_samples, aten=("stft",), error_inputs=_errors(
    lambda: _err(RuntimeError, "stft requires the return_complex parameter be given for real inputs", _t((20,)), 8),
    lambda: _err(RuntimeError, "expected 0 < n_fft < 20, but got n_fft=30", _t((20,)), 30, center=False,
                 return_complex=True),
    lambda: _err(RuntimeError, "expected hop_length > 0, but got hop_length=0", _t((20,)), 8, 0,
                 return_complex=True)))


def _istft_ref(z, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
               onesided=None, length=None, return_complex=False):
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    v = z if z.ndim == 3 else z[None]
    one = (v.shape[-2] != n_fft) if onesided is None else onesided
    frames = v.transpose(0, 2, 1).astype(np.complex128)
    if return_complex:
        y = np.fft.ifft(frames, axis=-1)
    else:
        y = np.fft.irfft(frames[..., :n_fft // 2 + 1] if not one else frames, n=n_fft, axis=-1)
    if normalized:
        y = y * np.sqrt(n_fft)
    w = _win(window, win, n_fft, None)
    n_frames = v.shape[-1]
    total = n_fft + hop * (n_frames - 1)
    out = np.zeros((v.shape[0], total), y.dtype)
    env = np.zeros(total)
    for i in range(n_frames):
        out[:, i * hop:i * hop + n_fft] += y[:, i] * w
        env[i * hop:i * hop + n_fft] += np.abs(w) ** 2 if not np.iscomplexobj(w) else w ** 2
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    out = out[:, start:min(end, total)] / env[start:min(end, total)]
    if end > total:
        out = np.pad(out, ((0, 0), (0, end - total)))
    out = out if z.ndim == 3 else out[0]
    real = np.float32 if z.dtype == np.complex64 else np.float64
    return out.astype(np.complex64 if real is np.float32 else np.complex128) if return_complex else out.astype(real)


def _istft_samples(device, dtype, requires_grad):

    def mk(shape, seed):
        return ctensor(shape, dtype, seed=seed, low=-1, high=1, requires_grad=requires_grad)
    yield SampleInput(mk((6, 4), 0), (10,), name="onesided")
    yield SampleInput(mk((2, 10, 6), 1), (10,), {"center": False, "onesided": False, "return_complex": True},
                      name="twosided_complex")
    yield SampleInput(mk((9, 5), 2), (16,), {"hop_length": 4, "window": make_tensor((12,), tp.float32, 0.5, 2,
                                                                                      seed=3),
                                             "win_length": 12, "length": 21}, name="window_length")


_add("istft", tp.istft, _istft_ref, (tp.complex64, tp.complex128), _istft_samples, aten=("istft",),
     xfails={"vmap": "the window overlap-add check reads its minimum on the host (.item()), as PyTorch does"},
     error_inputs=_errors(
         lambda: _err(RuntimeError, "istft requires a complex-valued input tensor", _t((6, 4, 2)), 10)))
