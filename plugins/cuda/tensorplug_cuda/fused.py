"""Fused kernels: one launch where the library would run a chain of elementwise passes.

Each :class:`Fused` is a cupy ``ElementwiseKernel`` (its CUDA source, compiled on first use) and a
numpy function of the same formula. On a GPU the kernel runs; in the simulated mode the numpy
function does, so the plugin's dispatch to it, its argument handling and its dtype rules are tested
on a CPU against the unfused library kernels (the CUDA sources themselves only on a GPU:
``device_check.sh``).

Fused here: the elementwise backward formulas ``tanh_backward``, ``sigmoid_backward``,
``threshold_backward`` (ReLU's backward), ``gelu_backward`` (exact and tanh, and
``_fused_gelu_backward`` from the forward's kept CDF), and the Adam / AdamW
parameter update (``_fused_adam_`` / ``_fused_adamw_``: one launch per parameter updating the
parameter and both moments in place), the SGD update (``_fused_sgd_``: momentum, dampening, Nesterov,
weight decay, one launch per parameter updating it and its buffer), ``nll_loss`` forward and
backward over (N, C) log-probabilities (cross-entropy after log_softmax), and, as per-row ``RawKernel``s (one block per row),
``softmax`` and ``log_softmax`` over the last dim of a contiguous input (cross-entropy's forward runs
the latter) and their backward ops ``_softmax_backward_data`` / ``_log_softmax_backward_data``, and
``native_layer_norm`` with its backward's input gradient (float16, computed in float32 and rounded
once, float32 and float64). Other dtypes, and layouts the row kernels do
not cover, use the library kernels.
"""

from __future__ import annotations

import math

import numpy as np

_FLOATS = frozenset({"float16", "float32", "float64"})


class Fused:
    """An elementwise kernel with a CUDA source for cupy and a numpy twin for the simulated mode.

    ``in_params`` / ``out_params`` / ``operation`` are cupy ``ElementwiseKernel``'s arguments (``T``
    is the arrays' type; the arithmetic is written in ``double`` or ``float`` and cast back);
    ``reference(*inputs)`` computes the same result with numpy and returns the output array(s).
    """

    def __init__(self, name, in_params, out_params, operation, reference):
        self.name = name
        self.in_params, self.out_params, self.operation = in_params, out_params, operation
        self.reference = reference
        self._kernel = None
        self.launches = 0  # calls, on either path (tests read it to see the fused path was taken)

    def __call__(self, drv, *args):
        self.launches += 1
        if drv.simulated:
            return self.reference(*args)
        k = self._kernel
        if k is None:
            k = self._kernel = drv.xp.ElementwiseKernel(self.in_params, self.out_params, self.operation,
                                                        f"tensorplug_{self.name}")
        return k(*args)


# -- elementwise backward formulas -----------------------------------------------------------------
def _ref_tanh_backward(g, y):
    return (g.astype(np.float64) * (1.0 - y.astype(np.float64) ** 2)).astype(g.dtype)


def _ref_sigmoid_backward(g, y):
    y64 = y.astype(np.float64)
    return (g.astype(np.float64) * (1.0 - y64) * y64).astype(g.dtype)


def _ref_threshold_backward(g, x, threshold):
    return np.where(x <= threshold, np.zeros((), g.dtype), g)


def _ref_gelu_backward(g, x, tanh_approx):
    x64 = x.astype(np.float64)
    if tanh_approx:
        k = math.sqrt(2.0 / math.pi)
        inner = k * (x64 + 0.044715 * x64 ** 3)
        t = np.tanh(inner)
        d = 0.5 * (1.0 + t) + 0.5 * x64 * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x64 * x64)
    else:
        from math import erf  # lazy: only the simulated mode's reference needs it
        cdf = 0.5 * (1.0 + np.vectorize(erf, otypes=[np.float64])(x64 / math.sqrt(2.0)))
        d = cdf + x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2.0 * math.pi)
    return (g.astype(np.float64) * d).astype(g.dtype)


TANH_BACKWARD = Fused("tanh_backward", "T g, T y", "T z",
                      "double yy = (double)y; z = (T)((double)g * (1.0 - yy * yy));", _ref_tanh_backward)
SIGMOID_BACKWARD = Fused("sigmoid_backward", "T g, T y", "T z",
                         "double yy = (double)y; z = (T)((double)g * (1.0 - yy) * yy);", _ref_sigmoid_backward)
THRESHOLD_BACKWARD = Fused("threshold_backward", "T g, T x, float64 threshold", "T z",
                           "z = ((double)x <= threshold) ? (T)0 : g;", _ref_threshold_backward)
GELU_BACKWARD = Fused(
    "gelu_backward", "T g, T x, int32 tanh_approx", "T z",
    """
    double xx = (double)x, d;
    if (tanh_approx) {
        const double k = 0.7978845608028654;  // sqrt(2 / pi)
        double t = tanh(k * (xx + 0.044715 * xx * xx * xx));
        d = 0.5 * (1.0 + t) + 0.5 * xx * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * xx * xx);
    } else {
        d = 0.5 * (1.0 + erf(xx * 0.7071067811865476)) + xx * exp(-0.5 * xx * xx) * 0.3989422804014327;
    }
    z = (T)((double)g * d);
    """, _ref_gelu_backward)


def _ref_gelu_backward_cdf(g, x, cdf):
    x64 = x.astype(np.float64)
    d = cdf.astype(np.float64) + x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2.0 * math.pi)
    return (g.astype(np.float64) * d).astype(g.dtype)


# the backward of the forward that kept Phi(x) (``_fused_gelu``: float32 and float64)
GELU_BACKWARD_CDF = Fused(
    "gelu_backward_cdf", "T g, T x, T cdf", "T z",
    "double xx = (double)x; z = (T)((double)g * ((double)cdf + xx * exp(-0.5 * xx * xx) * 0.3989422804014327));",
    _ref_gelu_backward_cdf)


# -- Adam / AdamW ----------------------------------------------------------------------------------
def _ref_adam(g, p, m, v, vmax, sign, lr, beta1, beta2, eps, wd, decoupled, step_size, bc2, amsgrad):
    g64 = g.astype(np.float64) * sign
    p64 = p.astype(np.float64)
    if decoupled:
        p64 = p64 * (1.0 - lr * wd)
    elif wd:
        g64 = g64 + wd * p64
    m64 = m.astype(np.float64)
    m64 = m64 + (1.0 - beta1) * (g64 - m64)
    v64 = beta2 * v.astype(np.float64) + (1.0 - beta2) * g64 * g64
    m[...] = m64
    v[...] = v64
    if amsgrad:
        np.maximum(vmax, v64.astype(vmax.dtype), out=vmax)
        v64 = vmax.astype(np.float64)
    p[...] = p64 - step_size * m64 / (np.sqrt(v64) / bc2 + eps)
    return p


_ADAM_OP = """
    double gg = sign * (double)g, pp = (double)p;
    if (decoupled) { pp *= 1.0 - lr * wd; } else { gg += wd * pp; }
    double mm = (double)m; mm += (1.0 - beta1) * (gg - mm);
    double vv = beta2 * (double)v + (1.0 - beta2) * gg * gg;
    m = (T)mm; v = (T)vv;
    AMSGRAD
    p = (T)(pp - step_size * mm / (sqrt(vv) / bc2 + eps));
"""
_ADAM_IN = ("T g, float64 sign, float64 lr, float64 beta1, float64 beta2, float64 eps, float64 wd, int32 decoupled, "
            "float64 step_size, float64 bc2")
# one kernel per variant, so that no output is passed twice: with amsgrad the running maximum is a fourth output
ADAM = Fused("adam", _ADAM_IN, "T p, T m, T v", _ADAM_OP.replace("AMSGRAD", ""), None)
ADAM_AMSGRAD = Fused("adam_amsgrad", _ADAM_IN, "T p, T m, T v, T vmax", _ADAM_OP.replace(
    "AMSGRAD", "double mx = (double)vmax; if (vv > mx) { vmax = (T)vv; mx = vv; } vv = mx;"), None)


def _elementwise(drv, fused):
    k = fused._kernel
    if k is None:
        k = fused._kernel = drv.xp.ElementwiseKernel(fused.in_params, fused.out_params, fused.operation,
                                                     f"tensorplug_{fused.name}")
    return k


def _adam_call(drv, g, p, m, v, vmax, sign, lr, beta1, beta2, eps, wd, decoupled, step_size, bc2, amsgrad):
    ADAM.launches += 1  # the family's count, whichever variant runs
    if drv.simulated:
        return _ref_adam(g, p, m, v, vmax, sign, lr, beta1, beta2, eps, wd, decoupled, step_size, bc2, amsgrad)
    args = (g, sign, lr, beta1, beta2, eps, wd, int(decoupled), step_size, bc2, p, m, v)
    if amsgrad:
        _elementwise(drv, ADAM_AMSGRAD)(*args, vmax)
    else:
        _elementwise(drv, ADAM)(*args)
    return p


# -- SGD -------------------------------------------------------------------------------------------
def _ref_sgd(g, p, buf, sign, wd, momentum, lr, dampening, nesterov, first, has_momentum):
    g64 = g.astype(np.float64) * sign
    p64 = p.astype(np.float64)
    if wd:
        g64 = g64 + wd * p64
    if has_momentum:
        b64 = g64 if first else momentum * buf.astype(np.float64) + (1.0 - dampening) * g64
        buf[...] = b64
        g64 = g64 + momentum * b64 if nesterov else b64
    p[...] = p64 - lr * g64
    return p


_SGD_IN = "T g, float64 sign, float64 wd, float64 momentum, float64 lr, float64 dampening, int32 nesterov, int32 first"
SGD = Fused("sgd", _SGD_IN, "T p, T buf", """
    double gg = sign * (double)g, pp = (double)p;
    if (wd != 0.0) { gg += wd * pp; }
    double bb = first ? gg : momentum * (double)buf + (1.0 - dampening) * gg;
    buf = (T)bb;
    gg = nesterov ? gg + momentum * bb : bb;
    p = (T)(pp - lr * gg);
""", None)
SGD_PLAIN = Fused("sgd_plain", "T g, float64 sign, float64 wd, float64 lr", "T p", """
    double gg = sign * (double)g, pp = (double)p;
    if (wd != 0.0) { gg += wd * pp; }
    p = (T)(pp - lr * gg);
""", None)  # without momentum: no buffer


def _sgd_call(drv, g, p, buf, sign, wd, momentum, lr, dampening, nesterov, first):
    SGD.launches += 1  # the family's count, whichever variant runs
    has_momentum = momentum != 0
    if drv.simulated:
        return _ref_sgd(g, p, buf, sign, wd, momentum, lr, dampening, nesterov, first, has_momentum)
    if has_momentum:
        _elementwise(drv, SGD)(g, sign, wd, momentum, lr, dampening, int(nesterov), int(first), p, buf)
    else:
        _elementwise(drv, SGD_PLAIN)(g, sign, wd, lr, p)
    return p


# -- nll_loss (cross-entropy after log_softmax) ----------------------------------------------------
# the picked log-probability and the target's weight per sample, in one pass over the targets; the
# product is exact in double, so rounding it once gives the library's value bit for bit
NLL_PICK = Fused("nll_pick", "int64 t, raw T x, raw T w, int64 C, int64 ignore, int32 has_w", "T loss, T wt", """
    if (t == ignore) { loss = (T)0; wt = (T)0; }
    else {
        const double ww = has_w ? (double)w[t] : 1.0;
        loss = (T)(-(double)x[i * C + t] * ww);
        wt = (T)ww;
    }
""", None)
# the gradient: -(g * w) at each kept sample's target class of a zeroed (N, C) matrix
NLL_GRAD = Fused("nll_grad", "int64 t, T g, T wt, int64 C, int64 ignore", "raw T out", """
    if (t != ignore) { out[i * C + t] = (T)(-(double)g * (double)wt); }
""", None)


def nll_pick(drv, t, x, w, ignore_index):
    """``(loss, weight)`` per sample of log-probabilities ``x`` (N, C) and targets ``t`` (N,)."""
    NLL_PICK.launches += 1
    if drv.simulated:
        ignored = t == ignore_index
        safe = np.where(ignored, 0, t)
        ww = np.ones(t.shape, np.float64) if w is None else w[safe].astype(np.float64)
        ww[ignored] = 0.0
        loss = -x[np.arange(t.shape[0]), safe].astype(np.float64) * ww
        return loss.astype(x.dtype), ww.astype(x.dtype)
    k = _elementwise(drv, NLL_PICK)
    flat = x.reshape(-1)  # raw arrays are indexed by element: one flat C-ordered view
    return k(t, flat, flat if w is None else w, np.int64(x.shape[1]), np.int64(ignore_index),
             np.int32(w is not None))


def nll_grad(drv, t, g, wt, shape, ignore_index):
    """The (N, C) gradient: ``-(g * wt)`` at each kept sample's target, 0 elsewhere."""
    NLL_GRAD.launches += 1
    out = drv.xp.zeros(shape, wt.dtype)
    if drv.simulated:
        keep = t != ignore_index
        vals = np.negative(np.broadcast_to(g, t.shape).astype(np.float64) * wt.astype(np.float64))
        out[np.arange(t.shape[0])[keep], t[keep]] = vals[keep]
        return out
    _elementwise(drv, NLL_GRAD)(t, g, wt, np.int64(shape[1]), np.int64(ignore_index), out.reshape(-1))
    return out


# -- row kernels: one thread block per row of a contiguous (rows, n) matrix ------------------------
_ROW_PRELUDE = r"""
#include <cupy/float16.cuh>
#define BLOCK 256
__device__ __forceinline__ float ld(const float16 v) { return (float)v; }
__device__ __forceinline__ void st(float16* p, float v) { *p = float16(v); }
__device__ __forceinline__ float ld(const float v) { return v; }
__device__ __forceinline__ double ld(const double v) { return v; }
__device__ __forceinline__ void st(float* p, float v) { *p = v; }
__device__ __forceinline__ void st(double* p, double v) { *p = v; }
template <typename A> __device__ A neg_inf();
template <> __device__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ double neg_inf<double>() { return __longlong_as_double(0xfff0000000000000LL); }

template <typename A> __device__ A warp_sum(A v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
template <typename A> __device__ A warp_max(A v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}
// the block's sum (or max) of one value per thread, returned to every thread
template <typename A> __device__ A block_sum(A v, A* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = threadIdx.x < (BLOCK >> 5) ? red[lane] : (A)0;
    if (warp == 0) v = warp_sum(v);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();
    return v;
}
template <typename A> __device__ A block_max(A v, A* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_max(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = threadIdx.x < (BLOCK >> 5) ? red[lane] : neg_inf<A>();
    if (warp == 0) v = warp_max(v);
    if (threadIdx.x == 0) red[0] = v;
    __syncthreads();
    v = red[0];
    __syncthreads();
    return v;
}
"""

# (log_)softmax of each row: its max, the sum of exp(x - max), then one write; NaN in, NaN out, and a
# row whose max is infinite gives NaN, as PyTorch's
_SOFTMAX_SRC = _ROW_PRELUDE + r"""
template <typename T, typename A, bool LOG>
__device__ void row_softmax(const T* __restrict__ x, T* __restrict__ y, long long n) {
    __shared__ A red[32];
    const T* xr = x + (long long)blockIdx.x * n;
    T* yr = y + (long long)blockIdx.x * n;
    A m = neg_inf<A>();
    for (long long j = threadIdx.x; j < n; j += BLOCK) m = fmax(m, (A)ld(xr[j]));
    m = block_max(m, red);
    A s = 0;
    for (long long j = threadIdx.x; j < n; j += BLOCK) s += exp((A)ld(xr[j]) - m);
    s = block_sum(s, red);
    if (LOG) {
        const A ls = log(s);
        for (long long j = threadIdx.x; j < n; j += BLOCK) st(yr + j, (A)ld(xr[j]) - m - ls);
    } else {
        for (long long j = threadIdx.x; j < n; j += BLOCK) st(yr + j, exp((A)ld(xr[j]) - m) / s);
    }
}
extern "C" __global__ void log_softmax_f16(const float16* x, float16* y, long long n) { row_softmax<float16, float, true>(x, y, n); }
extern "C" __global__ void softmax_f16(const float16* x, float16* y, long long n) { row_softmax<float16, float, false>(x, y, n); }
extern "C" __global__ void log_softmax_f32(const float* x, float* y, long long n) { row_softmax<float, float, true>(x, y, n); }
extern "C" __global__ void log_softmax_f64(const double* x, double* y, long long n) { row_softmax<double, double, true>(x, y, n); }
extern "C" __global__ void softmax_f32(const float* x, float* y, long long n) { row_softmax<float, float, false>(x, y, n); }
extern "C" __global__ void softmax_f64(const double* x, double* y, long long n) { row_softmax<double, double, false>(x, y, n); }

// the backward of (log_)softmax over each row, from the forward's output y: one row sum, one write
template <typename T, typename A, bool LOG>
__device__ void row_softmax_backward(const T* __restrict__ g, const T* __restrict__ y, T* __restrict__ out,
                                     long long n) {
    __shared__ A red[32];
    const long long off = (long long)blockIdx.x * n;
    const T* gr = g + off;
    const T* yr = y + off;
    T* outr = out + off;
    A s = 0;
    for (long long j = threadIdx.x; j < n; j += BLOCK) s += LOG ? (A)ld(gr[j]) : (A)ld(gr[j]) * (A)ld(yr[j]);
    s = block_sum(s, red);
    if (LOG) {
        for (long long j = threadIdx.x; j < n; j += BLOCK) st(outr + j, (A)ld(gr[j]) - exp((A)ld(yr[j])) * s);
    } else {
        for (long long j = threadIdx.x; j < n; j += BLOCK) { const A yy = (A)ld(yr[j]); st(outr + j, yy * ((A)ld(gr[j]) - s)); }
    }
}
extern "C" __global__ void log_softmax_backward_f16(const float16* g, const float16* y, float16* out, long long n) { row_softmax_backward<float16, float, true>(g, y, out, n); }
extern "C" __global__ void softmax_backward_f16(const float16* g, const float16* y, float16* out, long long n) { row_softmax_backward<float16, float, false>(g, y, out, n); }
extern "C" __global__ void log_softmax_backward_f32(const float* g, const float* y, float* out, long long n) { row_softmax_backward<float, float, true>(g, y, out, n); }
extern "C" __global__ void log_softmax_backward_f64(const double* g, const double* y, double* out, long long n) { row_softmax_backward<double, double, true>(g, y, out, n); }
extern "C" __global__ void softmax_backward_f32(const float* g, const float* y, float* out, long long n) { row_softmax_backward<float, float, false>(g, y, out, n); }
extern "C" __global__ void softmax_backward_f64(const double* g, const double* y, double* out, long long n) { row_softmax_backward<double, double, false>(g, y, out, n); }
"""

# layer norm of each row: mean, then the variance about it (two passes: no cancellation), then
# (x - mean) * rstd * w + b in one write; mean and rstd are kept for the backward
_LAYER_NORM_SRC = _ROW_PRELUDE + r"""
template <typename T, typename A>
__device__ void row_layer_norm(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                               T* __restrict__ y, T* __restrict__ mean, T* __restrict__ rstd, long long n, double eps,
                               int has_w, int has_b) {
    __shared__ A red[32];
    const long long row = blockIdx.x;
    const T* xr = x + row * n;
    T* yr = y + row * n;
    A s = 0;
    for (long long j = threadIdx.x; j < n; j += BLOCK) s += (A)ld(xr[j]);
    const A mu = block_sum(s, red) / (A)n;
    A q = 0;
    for (long long j = threadIdx.x; j < n; j += BLOCK) { const A c = (A)ld(xr[j]) - mu; q += c * c; }
    const A r = (A)1 / sqrt(block_sum(q, red) / (A)n + (A)eps);
    for (long long j = threadIdx.x; j < n; j += BLOCK) {
        A v = ((A)ld(xr[j]) - mu) * r;
        if (has_w) v *= (A)ld(w[j]);
        if (has_b) v += (A)ld(b[j]);
        st(yr + j, v);
    }
    if (threadIdx.x == 0) { st(mean + row, mu); st(rstd + row, r); }
}
extern "C" __global__ void layer_norm_f16(const float16* x, const float16* w, const float16* b, float16* y,
                                          float16* mean, float16* rstd, long long n, double eps, int has_w,
                                          int has_b) {
    row_layer_norm<float16, float>(x, w, b, y, mean, rstd, n, eps, has_w, has_b); }
extern "C" __global__ void layer_norm_f32(const float* x, const float* w, const float* b, float* y, float* mean,
                                          float* rstd, long long n, double eps, int has_w, int has_b) {
    row_layer_norm<float, float>(x, w, b, y, mean, rstd, n, eps, has_w, has_b); }
extern "C" __global__ void layer_norm_f64(const double* x, const double* w, const double* b, double* y, double* mean,
                                          double* rstd, long long n, double eps, int has_w, int has_b) {
    row_layer_norm<double, double>(x, w, b, y, mean, rstd, n, eps, has_w, has_b); }

// layer norm's input gradient per row: with h = g * w (g where there is no weight) and
// xhat = (x - mean) * rstd, dx = rstd * (h - mean(h) - xhat * mean(h * xhat))
template <typename T, typename A>
__device__ void row_layer_norm_backward(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ mean,
                                        const T* __restrict__ rstd, const T* __restrict__ w, T* __restrict__ dx,
                                        long long n, int has_w) {
    __shared__ A red[32];
    const long long row = blockIdx.x;
    const T* gr = g + row * n;
    const T* xr = x + row * n;
    T* dxr = dx + row * n;
    const A mu = (A)ld(mean[row]), r = (A)ld(rstd[row]);
    A s1 = 0, s2 = 0;
    for (long long j = threadIdx.x; j < n; j += BLOCK) {
        const A h = has_w ? (A)ld(gr[j]) * (A)ld(w[j]) : (A)ld(gr[j]);
        s1 += h;
        s2 += h * ((A)ld(xr[j]) - mu) * r;
    }
    const A a = block_sum(s1, red) / (A)n;
    const A b = block_sum(s2, red) / (A)n;
    for (long long j = threadIdx.x; j < n; j += BLOCK) {
        const A h = has_w ? (A)ld(gr[j]) * (A)ld(w[j]) : (A)ld(gr[j]);
        st(dxr + j, (h - a - ((A)ld(xr[j]) - mu) * r * b) * r);
    }
}
extern "C" __global__ void layer_norm_backward_f16(const float16* g, const float16* x, const float16* mean,
                                                   const float16* rstd, const float16* w, float16* dx, long long n,
                                                   int has_w) {
    row_layer_norm_backward<float16, float>(g, x, mean, rstd, w, dx, n, has_w); }
extern "C" __global__ void layer_norm_backward_f32(const float* g, const float* x, const float* mean, const float* rstd,
                                                   const float* w, float* dx, long long n, int has_w) {
    row_layer_norm_backward<float, float>(g, x, mean, rstd, w, dx, n, has_w); }
extern "C" __global__ void layer_norm_backward_f64(const double* g, const double* x, const double* mean,
                                                   const double* rstd, const double* w, double* dx, long long n,
                                                   int has_w) {
    row_layer_norm_backward<double, double>(g, x, mean, rstd, w, dx, n, has_w); }
"""

_SUFFIX = {"float16": "f16", "float32": "f32", "float64": "f64"}
_ROW_FLOATS = frozenset(_SUFFIX)  # float16 rows compute in float32 and round once, as the CPU's kernels
_BLOCK = 256


class RowKernels:
    """A cupy ``RawModule`` of per-row kernels (one block of 256 threads per row; compiled on first
    use), with a numpy function computing the same rows for the simulated mode."""

    def __init__(self, name, source, reference):
        self.name, self.source, self.reference = name, source, reference
        self._module = None
        self.launches = 0

    def function(self, drv, kernel, dtype_name):
        if self._module is None:
            self._module = drv.xp.RawModule(code=self.source, options=("-std=c++14",))
        return self._module.get_function(f"{kernel}_{_SUFFIX[dtype_name]}")


def _ref_softmax(x, log):
    a = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        s = a - a.max(axis=1, keepdims=True)
        if log:
            out = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
        else:
            e = np.exp(s)
            out = e / e.sum(axis=1, keepdims=True)
    return out.astype(x.dtype)


def _ref_layer_norm(x, w, b, eps):
    a = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    mu = a.mean(axis=1, keepdims=True)
    r = 1 / np.sqrt(((a - mu) ** 2).mean(axis=1, keepdims=True) + eps)
    y = (a - mu) * r
    if w is not None:
        y = y * w.astype(a.dtype)
    if b is not None:
        y = y + b.astype(a.dtype)
    return y.astype(x.dtype), mu.astype(x.dtype), r.astype(x.dtype)


def _ref_softmax_backward(g, y, log):
    a = np.float64 if y.dtype == np.float64 else np.float32
    g, y = g.astype(a), y.astype(a)
    if log:
        out = g - np.exp(y) * g.sum(axis=1, keepdims=True)
    else:
        out = y * (g - (g * y).sum(axis=1, keepdims=True))
    return out


def _ref_layer_norm_backward(g, x, mean, rstd, w):
    a = np.float64 if x.dtype == np.float64 else np.float32
    g, x, mean, rstd = g.astype(a), x.astype(a), mean.astype(a)[:, None], rstd.astype(a)[:, None]
    h = g if w is None else g * w.astype(a)
    xhat = (x - mean) * rstd
    return (h - h.mean(axis=1, keepdims=True) - xhat * (h * xhat).mean(axis=1, keepdims=True)) * rstd


SOFTMAX = RowKernels("softmax", _SOFTMAX_SRC, _ref_softmax)
LAYER_NORM = RowKernels("layer_norm", _LAYER_NORM_SRC, _ref_layer_norm)


def row_softmax(drv, x, log):
    """(log_)softmax over the last axis of the C-contiguous float array ``x`` (one launch on a GPU)."""
    SOFTMAX.launches += 1
    n = x.shape[-1]
    rows = x.size // n
    if drv.simulated:
        return _ref_softmax(x.reshape(rows, n), log).reshape(x.shape)
    y = drv.xp.empty_like(x)
    fn = SOFTMAX.function(drv, "log_softmax" if log else "softmax", x.dtype.name)
    fn((rows,), (_BLOCK,), (x, y, np.int64(n)))
    return y


def row_softmax_backward(drv, g, y, log):
    """The input gradient of (log_)softmax over the last axis from its output ``y`` (C-contiguous, one dtype)."""
    SOFTMAX.launches += 1
    n = y.shape[-1]
    rows = y.size // n
    if drv.simulated:
        return _ref_softmax_backward(g.reshape(rows, n), y.reshape(rows, n), log).astype(y.dtype).reshape(y.shape)
    out = drv.xp.empty_like(y)
    fn = SOFTMAX.function(drv, "log_softmax_backward" if log else "softmax_backward", y.dtype.name)
    fn((rows,), (_BLOCK,), (drv.xp.ascontiguousarray(g), y, out, np.int64(n)))
    return out


def row_layer_norm_backward(drv, g, x, mean, rstd, w, rows, n):
    """Layer norm's input gradient over rows of ``n`` elements (C-contiguous ``g`` and ``x``)."""
    LAYER_NORM.launches += 1
    if drv.simulated:
        dx = _ref_layer_norm_backward(g.reshape(rows, n), x.reshape(rows, n), mean.reshape(rows), rstd.reshape(rows),
                                      None if w is None else w.reshape(n))
        return dx.astype(x.dtype).reshape(x.shape)
    xp = drv.xp
    dx = xp.empty_like(x)
    fn = LAYER_NORM.function(drv, "layer_norm_backward", x.dtype.name)
    wa = x if w is None else xp.ascontiguousarray(w)
    fn((rows,), (_BLOCK,), (xp.ascontiguousarray(g), x, xp.ascontiguousarray(mean), xp.ascontiguousarray(rstd), wa,
                             dx, np.int64(n), np.int32(w is not None)))
    return dx


def row_layer_norm(drv, x, w, b, eps, rows, n):
    """``(y, mean, rstd)`` of layer norm over rows of ``n`` elements of the C-contiguous float ``x``."""
    LAYER_NORM.launches += 1
    x2 = x.reshape(rows, n)
    if drv.simulated:
        y, mu, r = _ref_layer_norm(x2, None if w is None else w.reshape(n), None if b is None else b.reshape(n),
                                   eps)
        return y.reshape(x.shape), mu.reshape(rows), r.reshape(rows)
    xp = drv.xp
    y = xp.empty_like(x)
    mu = xp.empty(rows, x.dtype)
    r = xp.empty(rows, x.dtype)
    fn = LAYER_NORM.function(drv, "layer_norm", x.dtype.name)
    # a missing weight or bias is flagged off (x stands in for the pointer, never read)
    wa = x if w is None else xp.ascontiguousarray(w)
    ba = x if b is None else xp.ascontiguousarray(b)
    fn((rows,), (_BLOCK,), (x, wa, ba, y, mu, r, np.int64(n), np.float64(eps), np.int32(w is not None),
                             np.int32(b is not None)))
    return y, mu, r


# -- the kernels -----------------------------------------------------------------------------------
def kernels(drv, mods, wrap):
    """``{op overload name: kernel}`` of the fused kernels, falling back to the library's ``mods``."""
    lib = {}
    for m in mods.values():
        lib.update(m.KERNELS)

    def unary_backward(fused, name):
        fallback = lib[name]

        def kernel(grad_output, output):
            d = grad_output._dtype
            if d.name not in _FLOATS or output._dtype is not d:
                return fallback(grad_output, output)
            return wrap(fused(drv, grad_output._data, output._data), d)
        kernel.__name__ = name
        return kernel

    lib_threshold = lib["threshold_backward"]

    def threshold_backward(grad_output, self, threshold):
        d = grad_output._dtype
        if d.name not in _FLOATS or self._dtype is not d:
            return lib_threshold(grad_output, self, threshold)
        return wrap(THRESHOLD_BACKWARD(drv, grad_output._data, self._data, float(threshold)), d)

    lib_gelu = lib["gelu_backward"]

    def gelu_backward(grad_output, self, approximate="none"):
        d = grad_output._dtype
        if d.name not in _FLOATS or self._dtype is not d:
            return lib_gelu(grad_output, self, approximate)
        return wrap(GELU_BACKWARD(drv, grad_output._data, self._data, int(approximate == "tanh")), d)

    lib_gelu_cdf = lib["_fused_gelu_backward"]

    def fused_gelu_backward(grad, self, cdf):
        d = grad._dtype
        if d.name not in _FLOATS or self._dtype is not d or cdf._dtype is not d:
            return lib_gelu_cdf(grad, self, cdf)
        return wrap(GELU_BACKWARD_CDF(drv, grad._data, self._data, cdf._data), d)

    def adam(decoupled):
        fallback = lib["_fused_adamw_" if decoupled else "_fused_adam_"]

        def kernel(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2, weight_decay,
                   eps, amsgrad, maximize):
            if any(p._dtype.name not in _FLOATS for p in self):
                return fallback(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1, beta2,
                                weight_decay, eps, amsgrad, maximize)
            for i, (pt, gt, mt, vt) in enumerate(zip(self, grads, exp_avgs, exp_avg_sqs)):
                step = float(steps[i]._host())  # a 0-dim CPU counter, as PyTorch keeps it
                vmax = max_exp_avg_sqs[i]._data if amsgrad else None
                _adam_call(drv, gt._data, pt._data, mt._data, vt._data, vmax, -1.0 if maximize else 1.0, float(lr),
                           float(beta1), float(beta2), float(eps), float(weight_decay), decoupled,
                           float(lr) / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5, bool(amsgrad))
        kernel.__name__ = "_fused_adamw_" if decoupled else "_fused_adam_"
        return kernel

    def over_last_dim(a, d, dim):
        """Whether the row kernels serve ``a`` (dtype ``d``) along ``dim``: its contiguous last dim."""
        return (d.name in _ROW_FLOATS and a.ndim > 0 and 0 not in a.shape and dim in (-1, a.ndim - 1)
                and a.flags.c_contiguous)

    def softmax_forward(log):
        fallback = lib["log_softmax.int" if log else "softmax.int"]

        def kernel(self, dim, dtype=None):
            if (dtype is not None and dtype is not self._dtype) or not over_last_dim(self._data, self._dtype, dim):
                return fallback(self, dim, dtype)
            return wrap(row_softmax(drv, self._data, log), self._dtype)
        kernel.__name__ = "log_softmax" if log else "softmax"
        return kernel

    def softmax_backward(log):
        fallback = lib["_log_softmax_backward_data" if log else "_softmax_backward_data"]

        def kernel(grad_output, output, dim, input_dtype):
            y = output._data
            d = output._dtype
            if grad_output._dtype is not d or input_dtype is not d or not over_last_dim(y, d, dim):
                return fallback(grad_output, output, dim, input_dtype)
            return wrap(row_softmax_backward(drv, grad_output._data, y, log), d)
        kernel.__name__ = "_log_softmax_backward_data" if log else "_softmax_backward_data"
        return kernel

    lib_layer_norm = lib["native_layer_norm"]

    def native_layer_norm(input, normalized_shape, weight, bias, eps):
        d = input._dtype
        a = input._data
        k = len(normalized_shape)
        n = 1
        for s in normalized_shape:
            n *= s
        if (d.name not in _ROW_FLOATS or n == 0 or a.size == 0 or not a.flags.c_contiguous
                or any(t is not None and (t._dtype is not d) for t in (weight, bias))):
            return lib_layer_norm(input, normalized_shape, weight, bias, eps)
        rows = a.size // n
        y, mu, r = row_layer_norm(drv, a, None if weight is None else weight._data,
                                  None if bias is None else bias._data, float(eps), rows, n)
        stat_shape = input._shape[:input.dim() - k] + (1,) * k
        return wrap(y, d), wrap(mu.reshape(stat_shape), d), wrap(r.reshape(stat_shape), d)

    lib_sgd = lib["_fused_sgd_"]

    def fused_sgd(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov, maximize,
                  is_first_step):
        if any(p._dtype.name not in _FLOATS for p in self):
            return lib_sgd(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov,
                           maximize, is_first_step)
        for i, (pt, gt) in enumerate(zip(self, grads)):
            buf = momentum_buffer_list[i]._data if momentum != 0 else None
            _sgd_call(drv, gt._data, pt._data, buf, -1.0 if maximize else 1.0, float(weight_decay), float(momentum),
                      float(lr), float(dampening), bool(nesterov), bool(is_first_step))

    red, ew = mods["reductions"], mods["elementwise"]
    lib_nll, lib_nll_backward = lib["nll_loss"], lib["nll_loss_backward"]

    def _nll_fusable(self, target, weight):
        x, t = self._data, target._data
        return (self._dtype.name in _FLOATS and x.ndim == 2 and x.flags.c_contiguous and t.ndim == 1
                and t.dtype == np.int64 and t.flags.c_contiguous and x.shape[0] == t.shape[0]
                and (weight is None or (weight._dtype is self._dtype and weight._data.flags.c_contiguous)))

    def nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
        if not _nll_fusable(self, target, weight):
            return lib_nll(self, target, weight, reduction, ignore_index)
        d = self._dtype
        _, safe = red._nll_targets(target, ignore_index)
        bad = (safe < 0) | (safe >= self._data.shape[1])
        if bad.any():  # PyTorch's error, where cupy's gather would wrap
            raise IndexError(f"Target {int(safe[bad][0])} is out of bounds.")
        loss, wt = nll_pick(drv, target._data, self._data, None if weight is None else weight._data, ignore_index)
        loss = wrap(loss, d)
        if reduction == 0:
            return loss
        if reduction == 2:
            return red.sum(loss)
        return ew.div(red.sum(loss), red.sum(wrap(wt, d)))

    def nll_loss_backward(grad_output, self, target, weight=None, reduction=1, ignore_index=-100):
        if not _nll_fusable(self, target, weight) or grad_output._dtype is not self._dtype:
            return lib_nll_backward(grad_output, self, target, weight, reduction, ignore_index)
        d = self._dtype
        dn = d.np
        t = target._data
        ignored = t == ignore_index
        w = (~ignored).astype(dn)
        if weight is not None:
            w = weight._data[drv.xp.where(ignored, 0, t)] * w
        g = grad_output._data
        if reduction == 1:  # the library's steps: the total weight in float32 for half types
            total = drv.xp.add.reduce(w, axis=None, dtype=np.float32 if d.name == "float16" else dn)
            g = drv.xp.true_divide(g, total.astype(dn))
        return wrap(nll_grad(drv, t, drv.xp.asarray(g, dtype=dn), w, self._data.shape, ignore_index), d)

    lib_layer_norm_backward = lib["native_layer_norm_backward"]

    def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
        d = input._dtype
        x = input._data
        n = 1
        for s in normalized_shape:
            n *= s
        if (not output_mask[0] or d.name not in _ROW_FLOATS or n == 0 or x.size == 0 or not x.flags.c_contiguous
                or any(t is not None and t._dtype is not d for t in (grad_out, mean, rstd, weight))):
            return lib_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask)
        rows = x.size // n
        dx = row_layer_norm_backward(drv, grad_out._data, x, mean._data, rstd._data,
                                     None if weight is None else weight._data, rows, n)
        # the weight's and bias's gradients are sums over the rows: the library's kernels
        _, gw, gb = lib_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                                            (False, output_mask[1], output_mask[2]))
        return wrap(dx, d), gw, gb

    return {"log_softmax.int": softmax_forward(True), "softmax.int": softmax_forward(False), "_fused_sgd_": fused_sgd,
            "_log_softmax_backward_data": softmax_backward(True), "_softmax_backward_data": softmax_backward(False),
            "native_layer_norm_backward": native_layer_norm_backward,
            "nll_loss": nll_loss, "nll_loss_backward": nll_loss_backward, "native_layer_norm": native_layer_norm,
            "tanh_backward": unary_backward(TANH_BACKWARD, "tanh_backward"),
            "sigmoid_backward": unary_backward(SIGMOID_BACKWARD, "sigmoid_backward"),
            "threshold_backward": threshold_backward, "gelu_backward": gelu_backward,
            "_fused_gelu_backward": fused_gelu_backward,
            "_fused_adam_": adam(False), "_fused_adamw_": adam(True)}
