"""matmul: batching and broadcasting rules checked once in the core."""

from __future__ import annotations

from ._lib import defop
from .memory import same_device
from .promotion import broadcast_shapes


def matmul_shape(a, b):
    """Result shape of ``a @ b`` with PyTorch's errors."""
    sa, sb = a._shape, b._shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    ka = sa[-1]
    kb = sb[-2] if len(sb) >= 2 else sb[0]
    if ka != kb:
        if len(sa) == 1 and len(sb) == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have "
                               f"the same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        ma = f"{sa[-2] if len(sa) >= 2 else 1}x{ka}"
        mb = f"{kb}x{sb[-1] if len(sb) >= 2 else 1}"
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ma} and {mb})")
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    out = list(batch)
    if len(sa) >= 2:
        out.append(sa[-2])
    if len(sb) >= 2:
        out.append(sb[-1])
    return tuple(out)


def _check_matmul(a, b):
    if a._device is not b._device:
        same_device("matmul", a, b)
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a._dtype} != {b._dtype}")
    matmul_shape(a, b)


matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", check=_check_matmul)
