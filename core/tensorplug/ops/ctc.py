"""The connectionist temporal classification loss: ``_ctc_loss`` and its gradient ``_ctc_loss_backward``,
primitives with PyTorch's semantics (a backend implements both; the CPU's run the log-space
forward-backward recursions in numpy). ``F.ctc_loss`` reduces the per-sample losses."""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.formulas import derivative
from ._common import document as _document
from ._lib import DYNAMIC_SHAPE, defop
from .pointwise import not_implemented


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    if log_probs.dim() != 3:
        raise RuntimeError(f"log_probs must be 3-D (T, N, C), got {log_probs.dim()}-D")
    if not log_probs._dtype.is_floating_point or log_probs._dtype in (_dt.float16, _dt.bfloat16):
        raise not_implemented("ctc_loss_cpu", log_probs._dtype)
    if targets._dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have one of the following scalar types: "
                           f"Long, Int; but got {targets._dtype} instead (while checking arguments for ctc_loss_cpu)")
    t_max, batch, classes = log_probs._shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.dim() == 1:
        total = sum(target_lengths)
        if targets._shape[0] < total:
            raise RuntimeError(f"Expected tensor to have size at least {total} at dimension 0, but got size "
                               f"{targets._shape[0]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_cpu)")
    else:
        if targets.dim() != 2 or targets._shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got size "
                               f"{targets._shape[0] if targets.dim() else 0} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_cpu)")
        longest = max(target_lengths, default=0)
        if targets._shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets._shape[1]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_cpu)")
    for n in input_lengths:
        if n < 0 or n > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {n} (while "
                               "checking arguments for ctc_loss_cpu)")
    for n in target_lengths:
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to be non-negative, but got value {n}")


ctc_loss = _document(
    defop("_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
          "bool zero_infinity=False) -> (Tensor, Tensor)", check=_check_ctc, tags=DYNAMIC_SHAPE),
    "The CTC negative log likelihood of each sample (N,) and the log forward variables (N, T, 2 * S + 1), "
    "for log-probabilities (T, N, C) and targets (N, S) or concatenated (sum of target_lengths,).")

ctc_loss_backward = _document(
    defop("_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
          "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) "
          "-> Tensor"),
    "The gradient of ``_ctc_loss`` for the log-probabilities: PyTorch's, which assumes they come from a "
    "log_softmax (exp(log_probs) minus the posterior of each class), zero past each input length.")


@derivative("_ctc_loss", nondiff_outputs=(1,))
def _(grad, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result, result1):
    return ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, result, result1, blank,
                             zero_infinity), None
