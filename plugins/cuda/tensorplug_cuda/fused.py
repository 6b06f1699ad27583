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
parameter and both moments in place). Dtypes other than float16/32/64 use the library kernels.
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
    if (amsgrad) { double mx = (double)vmax; if (vv > mx) { vmax = (T)vv; mx = vv; } vv = mx; }
    p = (T)(pp - step_size * mm / (sqrt(vv) / bc2 + eps));
"""
ADAM = Fused("adam", "T g, float64 sign, float64 lr, float64 beta1, float64 beta2, float64 eps, float64 wd, "
             "int32 decoupled, float64 step_size, float64 bc2, int32 amsgrad", "T p, T m, T v, T vmax", _ADAM_OP,
             None)


def _adam_call(drv, g, p, m, v, vmax, sign, lr, beta1, beta2, eps, wd, decoupled, step_size, bc2, amsgrad):
    ADAM.launches += 1
    if drv.simulated:
        return _ref_adam(g, p, m, v, vmax, sign, lr, beta1, beta2, eps, wd, decoupled, step_size, bc2, amsgrad)
    k = ADAM._kernel
    if k is None:
        k = ADAM._kernel = drv.xp.ElementwiseKernel(ADAM.in_params, ADAM.out_params, ADAM.operation,
                                                    "tensorplug_adam")
    # without amsgrad vmax is never read or written: v stands in for it
    k(g, sign, lr, beta1, beta2, eps, wd, int(decoupled), step_size, bc2, int(amsgrad), p, m, v,
      vmax if amsgrad else v)
    return p


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
                step = steps[i]
                vmax = max_exp_avg_sqs[i]._data if amsgrad else None
                _adam_call(drv, gt._data, pt._data, mt._data, vt._data, vmax, -1.0 if maximize else 1.0, float(lr),
                           float(beta1), float(beta2), float(eps), float(weight_decay), decoupled,
                           float(lr) / (1 - beta1 ** step), (1 - beta2 ** step) ** 0.5, bool(amsgrad))
        kernel.__name__ = "_fused_adamw_" if decoupled else "_fused_adam_"
        return kernel

    return {"tanh_backward": unary_backward(TANH_BACKWARD, "tanh_backward"),
            "sigmoid_backward": unary_backward(SIGMOID_BACKWARD, "sigmoid_backward"),
            "threshold_backward": threshold_backward, "gelu_backward": gelu_backward,
            "_fused_gelu_backward": fused_gelu_backward,
            "_fused_adam_": adam(False), "_fused_adamw_": adam(True)}
