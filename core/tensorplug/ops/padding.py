"""``nn.functional.pad``: constant, reflect, replicate and circular padding of the last dims, with
PyTorch's errors; negative pads crop. In the ops layer so that ops (``stft``'s centering) pad too."""

from __future__ import annotations

from .. import dtypes as _dt
from .factories import tensor as _tensor
from .nn_ops import constant_pad as _constant_pad

__all__ = ["pad"]


def _check_pad_output(x, pad, mode):
    """PyTorch's errors for reflect / replicate padding whose negative pads (crops) leave nothing."""
    nd = len(pad) // 2
    sizes = x._shape[-nd:][::-1]  # W, H, D: the order of ``pad``
    outs = [s + pad[2 * i] + pad[2 * i + 1] for i, s in enumerate(sizes)]
    if all(o < 1 for o in outs) or nd == 1 and outs[0] < 1:
        names = "WHD"[:nd][::-1]
        got = dict(zip(names[::-1], sizes))
        out = dict(zip(names[::-1], outs))
        if nd == 1:
            inside = f"W: {got['W']}"
        elif nd == 2:
            inside = f"H: {got['H']}, W: {got['W']}" + (" " if mode == "replicate" else "")
        else:
            inside = f"D: {got['D']} H: {got['H']}, W: {got['W']}"
        raise RuntimeError(f"input ({inside}) is too small. Calculated output "
                           + " ".join(f"{k}: {out[k]}" for k in names))
    if any(o < 0 for o in outs):
        shape = list(x._shape[:-nd]) + outs[::-1]
        bad = next(o for o in shape if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")


def _index_pad(x, pad, mode):
    """reflect / replicate / circular padding as one ``index_select`` per padded dim; negative pads crop.

    As PyTorch computes them, reflect and replicate pad relative to the whole input and then crop,
    circular crops first and wraps around what is left."""
    if mode != "circular":
        _check_pad_output(x, pad, mode)
    out = x
    n = x.dim()
    for i in range(len(pad) // 2):
        dim = n - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = out._shape[dim]
        if mode == "reflect":
            if lo >= size or hi >= size:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                                   f"{list(x._shape)}")
            idx = [abs(j) if j < size else 2 * (size - 1) - j for j in range(-lo, size + hi)]
        elif mode == "replicate":
            idx = [min(max(j, 0), size - 1) for j in range(-lo, size + hi)]
        else:
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if size + lo + hi < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            start = max(-lo, 0)
            kept = size - start - max(-hi, 0)  # what the crops leave, which the pads wrap around
            if kept <= 0 and (lo > 0 or hi > 0):
                raise RuntimeError("Padding value causes wrapping around more than once.")
            idx = [start + j % kept for j in range(-max(lo, 0), kept + max(hi, 0))] if kept > 0 else []
        if lo or hi:
            out = out.index_select(dim, _tensor(idx, dtype=_dt.int64, device=out._device))
    return out


_PAD_SIZES = {2: (2, 3), 4: (3, 4), 6: (4, 5)}


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left, right, top, bottom, ...)``, last dim first.

    ``mode`` is "constant" (``value``, 0 by default), "reflect", "replicate" or "circular" (these pad the
    last 1-3 dims of a batched input). Negative pads crop, in every mode, as in PyTorch.
    """
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        out = _constant_pad(input, pad, 0 if value is None else value)
        return input.clone() if out is input else out
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}"" doesn\'t take in value argument.')
    if input.dim() not in _PAD_SIZES.get(len(pad), ()):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\nSupported combinations "
            "for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D "
            "input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last "
            "3 dimensions)")
    out = _index_pad(input, pad, mode)
    return input.clone() if out is input else out
