"""The DataLoader's iterator over worker processes: index distribution, in-order results, timeouts, shutdown."""

from __future__ import annotations

import itertools
import multiprocessing
import queue

from . import _worker
from ._worker import ExceptionWrapper, IterableEnd, ResumeIteration, worker_loop

__all__ = ["MultiProcessingIter"]


def _context(loader):
    ctx = loader.multiprocessing_context
    if ctx is None:
        methods = multiprocessing.get_all_start_methods()
        return multiprocessing.get_context("fork" if "fork" in methods else None)
    if isinstance(ctx, str):
        return multiprocessing.get_context(ctx)
    return ctx


class MultiProcessingIter:
    """Batches from ``loader.num_workers`` processes, returned in sampler order."""

    def __init__(self, loader):
        self._loader = loader
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._iterable = loader._iterable
        self._shutdown = False
        ctx = _context(loader)
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues, self._workers = [], []
        base_seed = loader._shared_seed()
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=worker_loop, args=(
                loader.dataset, iq, self._data_queue, self._done_event, self._iterable, loader._auto_collation,
                loader.collate_fn, loader.drop_last, base_seed, loader.worker_init_fn, i, self._num_workers))
            w.daemon = True
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._reset(first_iter=True)

    # -- epochs ---------------------------------------------------------------------------------------------
    def _index_iter(self):
        loader = self._loader
        if self._iterable:
            item = [None] * loader.batch_size if loader._auto_collation else None
            return itertools.repeat(item)
        return iter(loader.batch_sampler) if loader.batch_sampler is not None else iter(loader.sampler)

    def _reset(self, first_iter=False):
        self._sampler_iter = self._index_iter()
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            seed = self._loader._shared_seed()
            for iq in self._index_queues:
                iq.put(ResumeIteration(seed))
            pending = self._num_workers
            while pending > 0:
                got = self._get_data()
                if isinstance(got[0], ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    # -- the main loop ----------------------------------------------------------------------------------------
    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(_worker.MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, IterableEnd):
                self._workers_status[data.worker_id] = False
                if not self._persistent:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                return self._process(data)

    def _process(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    # -- shutdown --------------------------------------------------------------------------------------------
    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for iq in self._index_queues:
            try:
                iq.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=_worker.MP_STATUS_CHECK_INTERVAL * 5)
            if w.is_alive():
                w.terminate()
                w.join()
        for iq in self._index_queues:
            iq.cancel_join_thread()
            iq.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
