"""The :class:`DataLoader`: batches of samples from a dataset, in the calling process or in worker processes."""

from __future__ import annotations

import itertools
import warnings

from ... import dtypes as _dt
from ...accelerator import is_available as _accelerator_available
from ...ops.factories import empty
from ...tensor import Tensor
from ._multiprocess import MultiProcessingIter
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, check_batching

__all__ = ["DataLoader"]


def pin_memory(data):
    """``data`` (a batch: tensors in lists, tuples, named tuples and dicts) with each tensor in pinned memory."""
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, dict):
        return type(data)((k, pin_memory(v)) for k, v in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(pin_memory(v) for v in data)
    return data


class DataLoader:
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=32, shuffle=True): ...``.

    - ``batch_size`` samples per batch (``None`` disables batching: each
      sample goes through :func:`default_convert` alone);
    - ``shuffle=True`` draws a new permutation each pass, from ``generator``
      (a :class:`tensorplug.Generator`) when given, so runs are reproducible;
    - ``sampler`` / ``batch_sampler`` replace the default index order / batching;
    - ``drop_last`` drops a final incomplete batch;
    - ``collate_fn`` turns a list of samples into a batch (default:
      :func:`default_collate`, which stacks tensors and converts numbers).

    With ``num_workers=0`` data is loaded in the calling process. With
    ``num_workers > 0`` that many worker processes load batches, as in
    PyTorch: each gets a copy of the dataset, is seeded with ``base_seed +
    worker_id`` (``random``, numpy and tensorplug), runs ``worker_init_fn(worker_id)``
    and sees its :func:`get_worker_info`; batches come back in sampler order,
    ``prefetch_factor`` per worker in flight; an exception in a worker is
    raised again in the main process, naming the worker; ``timeout`` (seconds,
    0 for none) bounds each wait; ``persistent_workers`` keeps the processes
    between epochs. ``pin_memory=True`` copies each batch's tensors into page-locked host memory
    (``Tensor.pin_memory()``) when an accelerator is available (tensorplug-cuda), so that
    ``.to("cuda", non_blocking=True)`` can overlap the copy; without one it warns, as PyTorch does,
    when iteration starts, and has no effect.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if not in_order:
            raise NotImplementedError("DataLoader(in_order=False) is not implemented: batches come in sampler order")
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.pin_memory_device = pin_memory_device
        self.in_order = in_order
        self._iterator = None
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        elif self._iterable and batch_size is not None:
            check_batching(batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def _shared_seed(self):
        """The base seed of the workers for one pass: drawn from ``generator`` (or the default generator)."""
        return int(empty((), dtype=_dt.int64).random_(generator=self.generator).item())

    def __iter__(self):
        it = self._batches()
        if not self.pin_memory:
            return it
        if not _accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
            return it
        return (pin_memory(batch) for batch in it)

    def _batches(self):
        if self.num_workers > 0:
            if not self.persistent_workers:
                return MultiProcessingIter(self)
            if self._iterator is None:
                self._iterator = MultiProcessingIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        collate, dataset = self.collate_fn, self.dataset
        if self._iterable:
            if not self._auto_collation:
                return (collate(sample) for sample in dataset)
            return self._iter_stream(iter(dataset))
        if self.batch_sampler is not None:
            return (collate([dataset[i] for i in indices]) for indices in self.batch_sampler)
        return (collate(dataset[i]) for i in self.sampler)

    def _iter_stream(self, it):
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
