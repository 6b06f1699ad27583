"""Matrix products and norms: ``matmul`` and its fixed-rank forms (mm, bmm, dot, mv), ``addmm``,
``linear``, ``outer`` and the vector norms (``norm``, ``linalg_vector_norm``).

``matmul`` is the backend primitive: numpy's semantics, which are PyTorch's
(1-D operands are promoted to matrices and the added dim removed again, batch
dims broadcast). Its shape, dtype and device checks run here with PyTorch's
messages, which differ by the path PyTorch takes (dot, mv, folded mm, bmm).
``mm``, ``bmm``, ``dot`` and ``mv`` check their own ranks and decompose into
``matmul``; ``addmm``, ``linear`` and ``outer`` decompose into ``matmul`` and
elementwise ops (float16 and bfloat16 in float32, rounded once), the norms
into reductions.
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from ..tensor import Tensor, _wrap_dim
from ._common import document, dims_arg as _dims, opmath as _opmath, as_dtype as _as, cj
from ._lib import defop, attach, public
from .arithmetic import add_
from .comparison import where_fn as _where
from .factories import zeros
from .memory import same_device
from .pointwise import not_implemented
from .promotion import broadcast_shapes, promote_types, _pt_name
from .reductions import reduce_dims, count as _count, safe_sqrt as _sqrt, sum as _sum, amax, amin
from .views import reshape, view, unsqueeze, t as _t

_INF = math.inf

def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _dot_size_error(n, m):
    return RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
                        f"number of elements, but got {n} and {m} elements respectively")


def _mm_error(sa, sb):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")


def _mv_error(rows, k, n):
    return RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({n})")


def _bmm_error(batch, k, k2):
    return RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] "
                        f"but got: [{batch}, {k2}].")


def matmul_shape(a, b):
    """Result shape of ``a @ b``, with the error PyTorch raises on its path for these ranks."""
    sa, sb = a._shape, b._shape
    na, nb = len(sa), len(sb)
    if not na or not nb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    ka = sa[-1]
    kb = sb[-2] if nb >= 2 else sb[0]
    if nb == 1:
        if ka != kb:
            if na == 1:
                raise _dot_size_error(ka, kb)
            raise _mv_error(_prod(sa[:-1]), ka, kb)
        return sa[:-1]
    if nb == 2:
        if ka != kb:
            raise _mm_error((_prod(sa[:-1]), ka), sb)
        return sa[:-1] + sb[-1:]
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    if ka != kb:
        raise _bmm_error(_prod(batch), ka, kb)
    return batch + sa[-2:-1] + sb[-1:]


def _check_same_dtype(a, b):
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dt.c_type_name(a._dtype)} != {_dt.c_type_name(b._dtype)}")


def _kernel_name(na, nb):
    """The PyTorch CPU kernel that ``matmul`` reaches for these ranks (it names it in dtype errors)."""
    if nb == 1:
        return "dot" if na == 1 else "addmv_impl_cpu"
    return "addmm_impl_cpu_" if nb == 2 else "bmm"


def _check_matmul(a, b):
    if a._device is not b._device:
        same_device("matmul", a, b)
    _check_same_dtype(a, b)
    shape = matmul_shape(a, b)
    if a._dtype is _dt.bool and 0 not in shape:
        raise NotImplementedError(f"\"{_kernel_name(len(a._shape), len(b._shape))}\" not implemented for 'Bool'")


matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", check=_check_matmul)


def _transposed_layout(t):
    """Whether ``t``'s matrix dims are laid out column-major (a ``.t()``/``.mT`` view of a row-major one)."""
    shape = t._shape
    if len(shape) < 2 or shape[-2] == 1 or shape[-1] == 1:
        return False
    st = t.stride()
    return st[-2] == 1 and st[-1] != 1


@derivative("matmul")
def _(grad, self, other, needs_input_grad):
    sa, sb = self._shape, other._shape
    # 1-D operands as matrices (a row, a column), as the forward treats them
    a = cj(self if len(sa) > 1 else self.unsqueeze(0))  # complex operands: the adjoint is conjugated
    b = cj(other if len(sb) > 1 else other.unsqueeze(-1))
    g = grad
    if len(sb) == 1:
        g = g.unsqueeze(-1)
    if len(sa) == 1:
        g = g.unsqueeze(-2)
    # batch dims that broadcast in the forward are summed over
    ga = gb = None
    # A gradient comes out in its operand's layout, as in PyTorch: for a transposed operand (the
    # weight in x @ w.t()) the product is computed transposed, so the gradient that reaches w is
    # row-major and the optimizer's update on it runs at memory speed instead of striding.
    if needs_input_grad[0]:
        ga = matmul(b, g.mT).mT if _transposed_layout(a) else matmul(g, b.mT)
        ga = sum_to(ga, a._shape)
        ga = ga.reshape(sa) if len(sa) == 1 else ga
    if needs_input_grad[1]:
        gb = matmul(g.mT, a).mT if _transposed_layout(b) else matmul(a.mT, g)
        gb = sum_to(gb, b._shape)
        gb = gb.reshape(sb) if len(sb) == 1 else gb
    return ga, gb


def _check_mm(a, b):
    if len(a._shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b._shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul(a, b)


def _check_bmm(a, b):
    if len(a._shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b._shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a._shape[0] != b._shape[0] or a._shape[2] != b._shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a._shape[0]}, {a._shape[2]}] but got: [{b._shape[0]}, {b._shape[1]}].")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected scalar type {_pt_name(a._dtype)} but found {_pt_name(b._dtype)}")
    _check_matmul(a, b)


def _check_dot(a, b):
    if len(a._shape) != 1 or len(b._shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a._shape)}D and {len(b._shape)}D tensors")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_pt_name(a._dtype)} and {_pt_name(b._dtype)}")
    _check_matmul(a, b)


def _check_mv(a, b):
    if not a._shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if len(a._shape) != 2 or len(b._shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a._shape)}, {len(b._shape)}")
    if a._dtype is not b._dtype:
        # PyTorch's mv is addmv with an input of the vector's dtype, hence the triple
        v, m = _pt_name(b._dtype), _pt_name(a._dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}")
    _check_matmul(a, b)


def _via_matmul(self, other):
    return matmul(self, other)


mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", check=_check_mm, composite=_via_matmul)
bmm = defop("bmm(Tensor self, Tensor mat2) -> Tensor", check=_check_bmm, composite=_via_matmul)
dot = defop("dot(Tensor self, Tensor tensor) -> Tensor", check=_check_dot, composite=_via_matmul)
mv = defop("mv(Tensor self, Tensor vec) -> Tensor", check=_check_mv, composite=_via_matmul)


def __matmul__(self, other):
    """``self @ other``: :func:`matmul` for tensors, NotImplemented for anything else."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def __rmatmul__(self, other):
    """``other @ self`` for a tensor ``other`` (reached by calling it directly), NotImplemented otherwise."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


for _name, _fn, _doc in (
        ("matmul", matmul, "Matrix product with PyTorch's rules for 1-D operands and broadcast batch dims; "
                           "both operands must have the same dtype."),
        ("mm", mm, "Product of two matrices (2-D tensors)."),
        ("bmm", bmm, "Batched product of two 3-D tensors with the same batch size."),
        ("dot", dot, "Inner product of two 1-D tensors of the same size."),
        ("mv", mv, "Product of a matrix and a vector.")):
    attach(_name, document(_fn, _doc))
    public(_name, _fn)
attach("__matmul__", __matmul__)
attach("__rmatmul__", __rmatmul__)


# -- linear, addmm, outer ----------------------------------------------------------------------
def _check_expandable(t, size):
    """``t`` broadcasts to ``size`` without growing: PyTorch's expand errors otherwise."""
    shape = t._shape
    n, m = len(shape), len(size)
    if n > m:
        raise RuntimeError(f"expand({t._dtype}{{{list(shape)}}}, size={list(size)}): the number of sizes "
                           f"provided ({m}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({n})")
    for i in reversed(range(n)):
        have, want = shape[i], size[m - n + i]
        if have != want and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({have}) "
                               f"at non-singleton dimension {m - n + i}.  Target sizes: {list(size)}.  "
                               f"Tensor sizes: {list(shape)}")


def _check_addmm(self, mat1, mat2, beta=1, alpha=1):
    if self._dtype is not mat2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_pt_name(self._dtype)} and "
                           f"{_pt_name(mat2._dtype)}")
    if mat1._dtype is not mat2._dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_pt_name(mat1._dtype)} and "
                           f"{_pt_name(mat2._dtype)}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if len(m._shape) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(m._shape)}-D tensor")
    (n, k), (k2, p) = mat1._shape, mat2._shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _check_expandable(self, (n, p))
    if self._dtype is _dt.bool and n * p:
        if k:
            raise not_implemented("addmm_impl_cpu_", _dt.bool)
        if beta != 0 and beta.__class__ is not bool:  # PyTorch scales self in place by the number
            raise RuntimeError(f"result type {'Float' if beta.__class__ is float else 'Long'} can't be cast to "
                               "the desired output type Bool")


def _addmm(self, mat1, mat2, beta=1, alpha=1):
    d = self._dtype
    if d.category < _dt.FLOATING:  # integer results truncate the factors, as PyTorch does
        beta, alpha = int(beta), int(alpha)
    # a zero factor skips its operand entirely, so its NaNs and infs do not leak (as in BLAS)
    if alpha == 0 or mat1._shape[1] == 0:
        out = zeros((mat1._shape[0], mat2._shape[1]), dtype=d, device=self._device)
    else:
        out = matmul(_opmath(mat1), _opmath(mat2))
        if alpha != 1:
            out = out * alpha
    if beta != 0:
        out = out + (_opmath(self) if beta == 1 else _opmath(self) * beta)
    return _as(out, d)


addmm = document(defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
                       "-> Tensor", check=_check_addmm, composite=_addmm),
                 "beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape; one dtype for "
                 "all three.")


# A composite with a formula of its own: autograd records one AddmmBackward0 node for it (linear with a
# bias is addmm(bias, input, weight.t()), as in PyTorch), and below autograd a backend's fused kernel
# (the CPU has one) or else the composite computes it.
def _column_major(strides, rows):
    """PyTorch's test in mm_mat1_backward / mm_mat2_backward for an operand laid out column-major."""
    return strides[0] == 1 and strides[1] == rows


@derivative("addmm", uses={"mat1": ("mat2",), "mat2": ("mat1",), "mat1_strides": ("mat1",),
                           "mat2_strides": ("mat2",)})
def _(grad, self_shape, mat1, mat2, mat1_strides, mat2_strides, beta, alpha, needs_input_grad):
    gs = g1 = g2 = None
    if needs_input_grad[0]:
        g = grad if beta == 1 else grad * beta
        # the bias of linear: one sum over the batch, no keepdim-and-view round trip
        gs = g.sum((0,)) if len(self_shape) == 1 and g._shape[1] == self_shape[0] else sum_to(g, self_shape)
    # a column-major operand (the weight's .t() in linear) gets its gradient computed transposed,
    # as in PyTorch, so the gradient reaching the weight is row-major
    if needs_input_grad[1]:
        n = grad._shape[0]
        g1 = matmul(mat2, grad.mT).mT if _column_major(mat1_strides, n) else matmul(grad, mat2.mT)
        if alpha != 1:
            g1 = g1 * alpha
    if needs_input_grad[2]:
        k = mat1._shape[1]
        g2 = matmul(grad.mT, mat1).mT if _column_major(mat2_strides, k) else matmul(mat1.mT, grad)
        if alpha != 1:
            g2 = g2 * alpha
    return gs, g1, g2


def _check_linear(input, weight, bias=None):
    ni, nw = len(input._shape), len(weight._shape)
    if ni == 0 or nw == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {ni}D and {nw}D")
    if nw > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nw}D")


def _fusable_bias(bias):
    """PyTorch's test for folding the bias into an addmm: one non-trivial dim, contiguous."""
    return sum(1 for s in bias._shape if s != 1) == 1 and bias.is_contiguous()


def _linear(input, weight, bias=None):
    wt = _t(weight)
    if bias is not None:
        shape = input._shape
        if len(shape) == 2:
            return addmm(bias, input, wt)
        # PyTorch folds the leading dims of a contiguous input into one addmm (so addmm's rules apply)
        if _fusable_bias(bias) and input.is_contiguous():
            rows = _count(shape, range(len(shape) - 1))
            out = addmm(bias, reshape(input, (rows, shape[-1])), wt)
            return view(out, shape[:-1] + (out._shape[1],))
    out = matmul(input, wt)
    # in place, as in PyTorch: the bias may neither widen the dtype nor the shape of the product
    return out if bias is None else add_(out, bias)


linear = document(defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
                        check=_check_linear, composite=_linear),
                  "input @ weight.T + bias (weight: out_features x in_features).")


def _check_outer(self, vec2):
    for name, v in (("self", self), ("vec2", vec2)):
        if len(v._shape) != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {len(v._shape)}-D")


outer = document(defop("outer(Tensor self, Tensor vec2) -> Tensor", check=_check_outer,
                       composite=lambda self, vec2: unsqueeze(self, 1) * vec2),
                 "The outer product of two 1-D tensors (dtypes promote).")


# -- norm -------------------------------------------------------------------------------------
def _check_vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    if self._dtype.category < _dt.FLOATING:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_pt_name(self._dtype)}")
    if dtype is not None:
        if dtype.category < _dt.FLOATING:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{_pt_name(dtype)}")
        if promote_types(self._dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_pt_name(self._dtype)}) should be "
                               f"convertible without narrowing to the specified dtype ({_pt_name(dtype)})")
    if (ord < 0 or ord == _INF) and 0 in self._shape:
        what = f"the {ord:g} norm"
        if not dim:
            raise RuntimeError(f"linalg.vector_norm cannot compute {what} on an empty tensor because the "
                               "operation does not have an identity")
        for d in dim:
            if self._shape[_wrap_dim(d, len(self._shape))] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute {what} on the dimension {d}because this "
                                   "dimension is empty and the operation does not have an identity")
    reduce_dims(self, dim)


def _vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    out = self._dtype if dtype is None else dtype
    x = _opmath(_as(self, out))
    if x._dtype.category == _dt.COMPLEX:  # the norm of the magnitudes, real
        x, out = x.abs(), out.to_real()
    dims = reduce_dims(x, dim)
    if ord == 2:
        r = _sqrt(_sum(x * x, dims, keepdim))
    elif ord == _INF:
        r = amax(x.abs(), dims, keepdim)
    elif ord == -_INF:
        r = amin(x.abs(), dims, keepdim)
    elif ord == 0:
        r = _sum(x != 0, dims, keepdim, dtype=x._dtype)
    elif ord == 1:
        r = _sum(x.abs(), dims, keepdim)
    else:
        total = _sum(x.abs() ** ord, dims, keepdim)
        if ord > 0:  # a zero norm's gradient is 0, as in PyTorch, not inf * 0
            zero = total == 0
            r = _where(zero, 0.0, _where(zero, 1.0, total) ** (1.0 / ord))
        else:
            r = total ** (1.0 / ord)
    return _as(r, out)


vector_norm = defop("linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
                    "ScalarType? dtype=None) -> Tensor", check=_check_vector_norm, composite=_vector_norm)


@derivative("linalg_vector_norm")
def _(grad, self, ord, dim, keepdim, dtype, result):
    # PyTorch's norm_backward. Through the decomposition, ord=0's count (a comparison) would drop
    # requires_grad, and |x|**ord for ord < 1 would give NaN at x = 0; here ord=0 has no gradient (the
    # result requires grad, the input's .grad stays None) and those terms are masked as in PyTorch.
    if ord == 0:
        return None
    dims = reduce_dims(self, dim)
    norm = result
    if not keepdim and self._shape:
        for d in dims:
            grad, norm = unsqueeze(grad, d), unsqueeze(norm, d)
    x = self
    sign = x.sgn if x._dtype.category == _dt.COMPLEX else x.sign  # z / |z| for complex inputs
    if ord == 1:
        return sign() * grad
    if ord == 2:
        return grad * (x / norm).masked_fill(norm == 0, 0)
    if ord == _INF or ord == -_INF:
        # amax / amin of |x| with the gradient shared by the extremes, NaN counting as one
        a = x.abs()
        mask = (a == norm) | (a != a)
        return sign() * ((grad / _sum(mask, dims, True, dtype=grad._dtype)) * mask)
    if ord < 1:
        scaled = sign() * x.abs().pow(ord - 1).masked_fill(x == 0, 0)
        return scaled * grad * norm.pow(1 - ord)
    scaled = sign() * x.abs().pow(ord - 1) if ord < 2 else x * x.abs().pow(ord - 2)
    return scaled * (grad / norm.pow(ord - 1)).masked_fill(norm == 0, 0)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector ``p``-norm over ``dim`` (all dims by default): p a number (inf, -inf and 0 included),
    "fro" or None for 2. Floating point inputs only; ``dtype`` computes in a wider dtype. Gradients are
    PyTorch's: none for p = 0 (the result still requires grad), 0 at x = 0 for p < 1."""
    dim = _dims(dim)
    if p.__class__ is str:
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        dims = tuple(range(input.dim())) if dim is None else dim
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        if p != "nuc":
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        raise NotImplementedError("linalg.matrix_norm: the nuclear norm needs a singular value decomposition, "
                                  "which tensorplug does not implement")
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


for _name, _fn in {"addmm": addmm, "outer": outer, "norm": norm}.items():
    attach(_name, _fn)
    public(_name, _fn)
public("linear", linear)
