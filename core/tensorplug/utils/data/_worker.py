"""What runs inside a DataLoader worker process: seeding, ``get_worker_info``, fetching, error wrapping."""

from __future__ import annotations

import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...ops import random as _random

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

MP_STATUS_CHECK_INTERVAL = 1.0  # seconds between liveness checks while waiting on a queue

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker: ``id``, ``num_workers``, ``seed`` and ``dataset``
    (the worker's own copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker process, or None in the main process.

    An :class:`IterableDataset` uses it in ``__iter__`` to give each worker
    its own share of the data.
    """
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised there again."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - an exception type that takes other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """A KeyError's message shown as is (KeyError quotes its argument otherwise)."""

    def __repr__(self):
        return self


@dataclass(frozen=True)
class IterableEnd:
    """Sent by a worker whose iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers at the start of an epoch (they restart their dataset iterator)."""

    seed: int


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems is not None else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.it))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.it)
        return self.collate_fn(data)


def _seed_worker(seed):
    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(seed % 2 ** 32)


def worker_loop(dataset, index_queue, data_queue, done_event, iterable, auto_collation, collate_fn, drop_last,
                base_seed, init_fn, worker_id, num_workers):
    """The body of a worker process: serve ``(idx, indices)`` requests until told to stop (``None``)."""
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        make = _IterFetcher if iterable else _MapFetcher
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make(dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - reported to the main process with the first request
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                try:
                    fetcher = make(dataset, auto_collation, collate_fn, drop_last)
                except Exception:  # noqa: BLE001
                    init_exception = ExceptionWrapper(where=where)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001 - every error goes to the main process
                    if isinstance(e, StopIteration) and iterable:
                        data = IterableEnd(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
