"""matmul and its fixed-rank forms (mm, bmm, dot, mv).

``matmul`` is the backend primitive: numpy's semantics, which are PyTorch's
(1-D operands are promoted to matrices and the added dim removed again, batch
dims broadcast). Its shape, dtype and device checks run here with PyTorch's
messages, which differ by the path PyTorch takes (dot, mv, folded mm, bmm).
``mm``, ``bmm``, ``dot`` and ``mv`` check their own ranks and decompose into
``matmul``.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor
from ._lib import defop, attach, public
from .memory import same_device
from .promotion import broadcast_shapes, _pt_name
from .reductions import document

# dtype names as PyTorch's C++ checks print them
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "float32": "float", "float64": "double"}


def _c_name(d):
    return _C_NAMES.get(d.name, d.name)


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
                           f"{_c_name(a._dtype)} != {_c_name(b._dtype)}")


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


# -- backward formulas ----------------------------------------------------------------
from ..autograd.formulas import derivative  # noqa: E402
from ..autograd.helpers import sum_to  # noqa: E402


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
    a = self if len(sa) > 1 else self.unsqueeze(0)
    b = other if len(sb) > 1 else other.unsqueeze(-1)
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
