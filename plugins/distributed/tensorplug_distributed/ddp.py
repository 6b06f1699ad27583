"""``DistributedDataParallel``: gradients averaged by bucketed asynchronous allreduce during backward.

At construction every rank checks that all ranks hold the same parameters (count and shapes),
rank 0's parameters and buffers are broadcast, and the parameters that require grad are split
into buckets in reverse registration order (the order backward produces their gradients): the
first bucket holds about 1 MiB, the others about ``bucket_cap_mb``, never mixing dtypes or devices.
A post-accumulate-grad hook on each parameter copies its gradient into its place in the bucket's
buffer (allocated once); when a bucket's last gradient is in, an asynchronous ``all_reduce`` (AVG)
of the buffer is launched, so it runs while backward computes the remaining gradients. When every
rank is on one machine, float32 and float64 buffers live in memory all ranks map instead, and a
bucket is averaged there as soon as it is full (:mod:`tensorplug_distributed.shm`). Buckets are
launched in index order on every rank (MPI needs the same order of collectives everywhere); the
last, launched with the last gradient, is one blocking call. Then every bucket is waited for and
each parameter's ``.grad`` becomes a view of its bucket's buffer (no copy back; PyTorch does so with
``gradient_as_bucket_view=True``), before ``backward()`` returns. ``join()`` handles uneven inputs.
"""

from __future__ import annotations

import contextlib
import time

import tensorplug
from tensorplug.nn.parallel import DistributedDataParallel as _DistributedDataParallel
from tensorplug.nn import Module

from . import api, shm
from .group import ReduceOp, Work, resolve

__all__ = ["DistributedDataParallel", "GradBucket"]

FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's first-bucket size (dist._DEFAULT_FIRST_BUCKET_BYTES)

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error indicates "
    "that your module has parameters that were not used in producing loss. You can enable unused parameter "
    "detection by passing the keyword argument `find_unused_parameters=True` to "
    "`tensorplug.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
    "participate in calculating loss. If you already have done the above, then the distributed data parallel "
    "module wasn't able to locate the output tensors in the return value of your module's `forward` function. "
    "Please include the loss function and the structure of the return value of `forward` of your module when "
    "reporting this issue (e.g. list, dict, iterable).\nParameter indices which did not receive grad for rank "
    "{rank}: {indices}")


class _Bucket:
    __slots__ = ("index", "params", "sizes", "ready", "work", "flat", "views", "launched", "nbytes",
                 "t_launch", "node")

    def __init__(self, index, params):
        self.index = index
        self.params = params          # [(param index, parameter)]
        self.sizes = [p.numel() for _, p in params]
        self.nbytes = sum(p.numel() * p.element_size() for _, p in params)
        p0 = params[0][1]
        # the bucket's buffer, allocated once; after each reduction the parameters' .grad are these views
        self.use_buffer(tensorplug.empty(sum(self.sizes), dtype=p0.dtype, device=p0.device), None)
        self.reset()

    def use_buffer(self, flat, node):
        """Make ``flat`` the bucket's buffer; ``node``: the NodeBuffers it lives in (None: private memory)."""
        self.flat, self.node = flat, node
        self.views, offset = [], 0
        for (_, p), n in zip(self.params, self.sizes):
            self.views.append(self.flat[offset:offset + n].view(p.shape))
            offset += n

    def full(self):
        """Whether every gradient of the bucket is in its buffer."""
        return len(self.ready) == len(self.params)

    def reset(self):
        self.ready = set()
        self.work = None
        self.launched = False
        self.t_launch = None


class GradBucket:
    """What a communication hook gets for one bucket (PyTorch's ``dist.GradBucket``): the flat
    ``buffer()`` holding the bucket's gradients, their views ``gradients()``, the ``parameters()``,
    ``index()`` and ``is_last()``; ``set_buffer(t)`` replaces the buffer's contents."""

    def __init__(self, bucket, last):
        self._bucket, self._last = bucket, last

    def index(self):
        return self._bucket.index

    def buffer(self):
        return self._bucket.flat

    def set_buffer(self, tensor):
        with tensorplug.no_grad():
            self._bucket.flat.copy_(tensor)

    def gradients(self):
        return list(self._bucket.views)

    def parameters(self):
        return [p for _, p in self._bucket.params]

    def is_last(self):
        return self._last


def _buckets(params, cap_bytes, first_cap_bytes):
    """Buckets of (index, param), reverse order, split at the byte caps and at dtype/device changes."""
    buckets, current, size, key = [], [], 0, None
    for i in reversed(range(len(params))):
        p = params[i]
        k = (p.dtype, p.device)
        cap = first_cap_bytes if not buckets else cap_bytes
        if current and (k != key or size >= cap):
            buckets.append(_Bucket(len(buckets), current))
            current, size = [], 0
        current.append((i, p))
        key = k
        size += p.numel() * p.element_size()
    if current:
        buckets.append(_Bucket(len(buckets), current))
    return buckets


def _reachable_params(outputs):
    """The parameters the autograd graph of ``outputs`` (tensors nested in lists, tuples, dicts) reaches."""
    seen, found, stack = set(), set(), []

    def collect(o):
        if isinstance(o, tensorplug.Tensor):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
            elif o.requires_grad:
                found.add(id(o))
        elif isinstance(o, (list, tuple)):
            for x in o:
                collect(x)
        elif isinstance(o, dict):
            for x in o.values():
                collect(x)
    collect(outputs)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            found.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return found


class DistributedDataParallel(_DistributedDataParallel):
    """``torch.nn.parallel.DistributedDataParallel`` on a tensorplug process group.

    ``module`` is kept as ``self.module`` (so ``state_dict`` keys start with ``module.``).
    Gradients are averaged over the group's ranks during ``backward()``. See the module docstring
    and docs/distributed.md for buckets, ``no_sync()``, ``find_unused_parameters`` and buffers.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None, init_sync=True):
        Module.__init__(self)
        pg = resolve(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of process_group")
        self.module = module
        self.process_group = pg
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        seen = set()
        params = []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._params = params
        self._verify_same_model(pg)
        if init_sync:
            self._sync_module_states()
        self._buckets = _buckets(params, self.bucket_bytes_cap, min(FIRST_BUCKET_BYTES, self.bucket_bytes_cap))
        self._share_buckets(pg)
        self._bucket_of = {}
        for b in self._buckets:
            for slot, (i, _) in enumerate(b.params):
                self._bucket_of[i] = (b, slot)
        self._next_launch = 0
        self._expect_backward = False
        self._hooked = False
        self._used = None
        self._join = None        # inside join(): (divide_by_initial_world_size, throw_on_early_termination)
        self._active = self.process_group.nranks
        self._comm_hook = None
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(params)]

    # -- construction ----------------------------------------------------------------------------------------

    def _share_buckets(self, pg):
        """Put the buckets that can be in the node's shared memory (tensorplug_distributed.shm) there, one
        window per dtype; their allreduce is then a few passes over that memory instead of an MPI call."""
        by_dtype = {}
        for b in self._buckets:
            p0 = b.params[0][1]
            if shm.eligible(pg, p0.dtype, p0.device):
                by_dtype.setdefault(p0.dtype, []).append(b)
        for dtype, buckets in by_dtype.items():
            if not shm.has_room(pg, sum(b.nbytes for b in buckets)):
                continue
            node = shm.NodeBuffers(pg, [sum(b.sizes) for b in buckets], dtype)
            for k, (b, flat) in enumerate(zip(buckets, node.buffers)):
                b.use_buffer(flat, (node, k))

    def _verify_same_model(self, pg):
        shapes = [tuple(p.shape) for p in self._params]
        everyone = [None] * pg.nranks
        api.all_gather_object(everyone, shapes, group=pg)
        mine = pg.rank_
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(shapes):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {mine} has {len(shapes)} "
                                   f"params, while rank {r} has inconsistent {len(theirs)} params.")
            for i, (a, b) in enumerate(zip(shapes, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks: params[{i}] in this process "
                                       f"(rank {mine}) with sizes {list(a)} appears not to match sizes of the "
                                       f"same param in process {r} ({list(b)}).")

    def _broadcast_coalesced(self, tensors, src=0):
        """Broadcast ``tensors`` from group rank ``src``, one flat buffer per (dtype, device)."""
        groups = {}
        for t in tensors:
            groups.setdefault((t.dtype, t.device), []).append(t)
        with tensorplug.no_grad():
            for ts in groups.values():
                flat = tensorplug.cat([t.detach().reshape(-1) for t in ts])
                api.broadcast(flat, src=self.process_group.global_of(src), group=self.process_group)
                api._unpack(flat, ts)()

    def _sync_module_states(self):
        states = list(self.module.parameters()) + [b for b in self.module.buffers()]
        if self.process_group.nranks > 1 and states:
            self._broadcast_coalesced(states)

    # -- forward ---------------------------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        if self._hooked and self.require_backward_grad_sync and tensorplug.is_grad_enabled():
            missing = [i for b in self._buckets if not b.launched for i, _ in b.params if i not in b.ready]
            if missing:
                raise RuntimeError(_UNFINISHED.format(rank=self.process_group.global_rank,
                                                      indices=", ".join(map(str, sorted(missing)))))
        if self._join is not None and self.require_backward_grad_sync and tensorplug.is_grad_enabled():
            self._join_notify(1)
        if self.broadcast_buffers and self.require_forward_param_sync and self.process_group.nranks > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast_coalesced(buffers)
        out = self.module(*inputs, **kwargs)
        sync = self.require_backward_grad_sync and tensorplug.is_grad_enabled()
        for b in self._buckets:
            b.reset()
        self._next_launch = 0
        self._expect_backward = sync
        self._hooked = False
        if sync and self.find_unused_parameters:
            reached = _reachable_params(out)
            self._used = [id(p) in reached for p in self._params]
            for i, used in enumerate(self._used):
                if not used:
                    self._mark_ready(i, unused=True)
        return out

    # -- backward --------------------------------------------------------------------------------------------

    def _make_hook(self, index):
        def hook(param):
            if self.require_backward_grad_sync and self._expect_backward:
                self._hooked = True
                self._mark_ready(index)
        return hook

    def _mark_ready(self, index, unused=False):
        bucket, slot = self._bucket_of[index]
        if index in bucket.ready:
            return
        bucket.ready.add(index)
        # the gradient goes into its place in the bucket's buffer now, while backward goes on
        view = bucket.views[slot]
        p = bucket.params[slot][1]
        g = p.grad
        if g is not view:
            with tensorplug.no_grad():
                if g is None:
                    view.zero_()
                else:
                    view.copy_(g)
        if bucket.full():
            self._launch_ready()

    def _launch_ready(self):
        buckets = self._buckets
        while self._next_launch < len(buckets) and buckets[self._next_launch].full():
            self._launch(buckets[self._next_launch])
            self._next_launch += 1
        if self._next_launch == len(buckets):
            self._finish()

    def _launch(self, bucket):
        bucket.t_launch = time.perf_counter()
        # the last bucket is launched when backward has produced every gradient: nothing is left to
        # overlap it with, so it is one blocking call (no progress-thread hand-off)
        last = bucket.index == len(self._buckets) - 1
        if self._comm_hook is not None:
            state, hook = self._comm_hook
            bucket.work = hook(state, GradBucket(bucket, last))  # a future of the averaged buffer
            if not callable(getattr(bucket.work, "wait", None)):
                raise TypeError(f"the communication hook {getattr(hook, '__name__', hook)!r} must return a future "
                                f"of the bucket's reduced buffer (an object with wait()), got {bucket.work!r:.60}")
        elif bucket.node is not None or last:  # in shared memory (a few passes over it) or the last: blocking
            self._reduce(bucket)
            bucket.work = Work(self.process_group, "all_reduce", self.process_group.seq, None, None, (bucket.flat,))
            bucket.work.t_done = time.perf_counter()
        else:
            bucket.work = api.all_reduce(bucket.flat, op=ReduceOp.AVG, group=self.process_group, async_op=True)
        bucket.launched = True

    def _reduce(self, bucket):
        """The blocking average of ``bucket``'s buffer over the group, through shared memory or MPI."""
        if bucket.node is not None:
            node, k = bucket.node
            self.process_group.blocking("all_reduce", node.allreduce, k, True)
        else:
            api.all_reduce(bucket.flat, op=ReduceOp.AVG, group=self.process_group)

    def _finish(self):
        self._t_all_launched = time.perf_counter()
        self._timeline = [(b.index, b.nbytes, b.t_launch, b.work) for b in self._buckets]
        used_anywhere = None
        if self.find_unused_parameters and self._used is not None:
            local = tensorplug.tensor([1 if u else 0 for u in self._used], dtype=tensorplug.int32)
            api.all_reduce(local, op=ReduceOp.MAX, group=self.process_group)
            used_anywhere = local.tolist()
        rescale = (self._join is not None and not self._join[0] and 0 < self._active < self.process_group.nranks)
        for bucket in self._buckets:
            value = bucket.work.wait()
            if self._comm_hook is not None and value is not bucket.flat:
                if not isinstance(value, tensorplug.Tensor) or value.shape != bucket.flat.shape:
                    raise RuntimeError(f"the communication hook's future must hold a tensor of the bucket buffer's "
                                       f"shape {list(bucket.flat.shape)}, got {value!r:.80}")
                with tensorplug.no_grad():
                    bucket.flat.copy_(value)
            if rescale:  # an average over the ranks still training, not over all
                with tensorplug.no_grad():
                    bucket.flat.mul_(self.process_group.nranks / self._active)
            for (i, p), view in zip(bucket.params, bucket.views):
                if used_anywhere is not None and not used_anywhere[i]:
                    continue
                if p.grad is not view:
                    p.grad = view
            bucket.work = None
        self._expect_backward = False
        self._hooked = False

    def register_comm_hook(self, state, hook):
        """Reduce each bucket with ``hook(state, bucket)`` (a :class:`GradBucket`) instead of the built-in
        average: the hook starts the reduction and returns a future (``.wait()``) of the averaged flat
        buffer. ``tensorplug.distributed.algorithms.ddp_comm_hooks.default_hooks`` has PyTorch's
        ``allreduce_hook``, ``fp16_compress_hook`` and ``bf16_compress_hook`` (``state``: the process
        group, or None for the default one). Call it once, before training."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside; the first backward after it averages the sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- introspection ---------------------------------------------------------------------------------------

    def bucket_sizes(self):
        """The buckets as lists of parameter indices (reverse registration order) with their bytes."""
        return [([i for i, _ in b.params], b.nbytes) for b in self._buckets]

    def last_timeline(self):
        """The last synchronised backward's buckets: dicts of index, bytes, and ``time.perf_counter()``
        stamps ``launched`` and ``finished`` (the allreduce, seen by the progress thread), with
        ``all_launched`` (when the last bucket was launched, that is, when backward produced the last
        gradient). A bucket that finished before ``all_launched`` overlapped the backward."""
        return [{"index": i, "bytes": n, "launched": t, "finished": getattr(w, "t_done", None),
                 "all_launched": self._t_all_launched}
                for i, n, t, w in getattr(self, "_timeline", ())]

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Train on uneven inputs: a rank that runs out of batches leaves the block and, until every rank
        has, takes part in the others' collectives with zero gradients (PyTorch's ``Join``).

        Inside, each forward must be a training forward followed by its backward. Gradients are
        divided by the initial world size (``divide_by_initial_world_size=True``: the joined ranks
        count as zero gradients) or by the number of ranks still training. When all have joined,
        every rank takes the parameters and buffers of the highest rank that joined last. With
        ``throw_on_early_termination=True``, every rank raises once one has run out.
        """
        if not enable:
            yield
            return
        self._join = (divide_by_initial_world_size, throw_on_early_termination)
        try:
            yield
        except BaseException:
            self._join = None
            raise
        try:
            self._join_shadow()
        finally:
            self._join = None
            self._active = self.process_group.nranks

    def _join_notify(self, me):
        """The per-iteration count of ranks still training (``me``: 1 training, 0 joined)."""
        flag = tensorplug.full((1,), me, dtype=tensorplug.int64, device=self._params[0].device)
        api.all_reduce(flag, group=self.process_group)
        self._active = int(flag.item())
        if self._join[1] and self._active < self.process_group.nranks:
            raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return self._active

    def _join_shadow(self):
        pg = self.process_group
        last = None
        while self._join_notify(0) > 0:
            last = False
            # mirror one training iteration of the others: buffers, the buckets, the used-parameter map
            if self.broadcast_buffers and pg.nranks > 1:
                buffers = list(self.module.buffers())
                if buffers:
                    self._broadcast_coalesced(buffers)
            with tensorplug.no_grad():
                for b in self._buckets:
                    b.flat.zero_()
                    if self._comm_hook is not None:  # the others reduce through the hook: so does this rank
                        state, hook = self._comm_hook
                        hook(state, GradBucket(b, b.index == len(self._buckets) - 1)).wait()
                    else:
                        self._reduce(b)
                if self.find_unused_parameters:
                    api.all_reduce(tensorplug.zeros(len(self._params), dtype=tensorplug.int32), op=ReduceOp.MAX,
                                   group=pg)
        if last is None:  # nobody was training any more when this rank joined: it is one of the last
            last = True
        src = tensorplug.tensor([pg.rank_ if last else -1], dtype=tensorplug.int64,
                                device=self._params[0].device)
        api.all_reduce(src, op=ReduceOp.MAX, group=pg)
        states = list(self.module.parameters()) + list(self.module.buffers())
        if pg.nranks > 1:
            self._broadcast_coalesced(states, src=int(src.item()))
