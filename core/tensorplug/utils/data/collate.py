"""Turning a list of samples into a batch: :func:`default_collate` and :func:`default_convert`."""

from __future__ import annotations

import collections.abc
import copy

import numpy as np

from ... import dtypes as _dt
from ...ops.factories import as_tensor, tensor
from ...ops.joining import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _rebuild_sequence(elem, items):
    """A sequence of ``elem``'s type holding ``items`` (a list when the type can't be rebuilt)."""
    if isinstance(elem, collections.abc.MutableSequence):
        clone = copy.copy(elem)
        try:
            clone[:] = items
            return clone
        except TypeError:
            return items
    try:
        return type(elem)(items)
    except TypeError:
        return items


def _rebuild_mapping(elem, items):
    """A mapping of ``elem``'s type holding ``items`` (a dict when the type can't be rebuilt)."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(items)
            return clone
        return type(elem)(items)
    except TypeError:
        return items


def default_collate(batch):
    """Stack a list of samples into a batch, recursively, as PyTorch's ``default_collate`` does.

    - tensors are stacked along a new first dimension (:func:`tensorplug.stack`);
    - numpy arrays and numpy scalars become tensors, then are stacked;
    - Python floats become a float64 tensor, ints an int64 tensor, bools a bool tensor;
    - strings and bytes are returned as they came (the batch's list or tuple);
    - dicts are collated key by key, named tuples field by field;
    - other sequences are transposed and collated position by position: a
      batch of ``(x, y)`` tuples gives ``[xs, ys]`` (a list, as in PyTorch).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.char in "SaUO":
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.number, np.bool_)):
        return as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return tensor(batch, dtype=_dt.bool)
    if isinstance(elem, int):
        return tensor(batch, dtype=_dt.int64)
    if isinstance(elem, float):
        return tensor(batch, dtype=_dt.float64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch]) for key in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return collated
        return _rebuild_sequence(elem, collated)
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Turn numpy arrays (and numpy scalars) inside ``data`` into tensors, leaving everything else as is.

    The collate function of a DataLoader with ``batch_size=None`` (no batching).
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if data.dtype.char in "SaUO" else as_tensor(data)
    if isinstance(data, (np.number, np.bool_)):
        return as_tensor(np.asarray(data))
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(v) for key, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data
