"""Backward formulas of composites that a backend may run as one fused kernel.

``addmm`` (``beta * self + alpha * mat1 @ mat2``) is a composite, so every backend
has it; with a formula of its own, autograd records one ``AddmmBackward0`` node for
it (``linear`` with a bias is ``addmm(bias, input, weight.t())``, as in PyTorch),
and below autograd a backend's fused kernel (the CPU has one) or else the composite
computes it. Imported after the modules that define the ops.
"""

from __future__ import annotations

from ..autograd.formulas import derivative
from ..autograd.helpers import sum_to
from .linalg import matmul


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
