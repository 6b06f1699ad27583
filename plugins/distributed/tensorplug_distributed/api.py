"""``tensorplug.distributed``'s functions, with ``torch.distributed``'s signatures, defaults and errors.

Every tensor collective calls its ``c10d`` dispatcher operator (kernels.py) with the group's id;
the kernel leaves the collective's work handle on the group. Ranks given as ``src`` / ``dst`` are
global ranks, as in PyTorch; ``group_src`` / ``group_dst`` are ranks within ``group``.
"""

from __future__ import annotations

import os
import time
import warnings

import tensorplug
from tensorplug import plugin_api

from . import _mpi
from .group import (GROUPS, NO_GROUP, Backend, GroupMember, ProcessGroup, ReduceOp, RedOpType, Work,
                    default_group,
                    DistBackendError, red_op, resolve, _env_int, _install_excepthook, _seconds, _start_watchdog,
                    default_pg_timeout)

__all__ = ["is_available", "is_initialized", "is_mpi_available", "is_nccl_available", "is_gloo_available",
           "is_torchelastic_launched", "init_process_group", "destroy_process_group", "new_group", "get_rank",
           "get_world_size", "get_backend", "get_process_group_ranks", "get_global_rank", "get_group_rank",
           "barrier", "broadcast", "all_reduce", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "gather", "scatter", "send", "recv", "isend", "irecv",
           "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
           "all_to_all_single", "all_to_all", "reduce_scatter", "send_object_list", "recv_object_list", "P2POp",
           "batch_isend_irecv", "is_backend_available", "get_default_backend_for_device", "get_node_local_rank",
           "monitored_barrier", "new_subgroups", "new_subgroups_by_enumeration", "is_ucc_available",
           "is_xccl_available"]

_OPS = {}
_ALLREDUCE = [None]
_generation = plugin_api.dispatch_generation
_Tensor = tensorplug.Tensor
_SUM = ReduceOp.SUM


_GENERATION = [None]


def _op(name):
    """The ``c10d::name`` operator (looked up again after any registration change: a plugin re-enabled
    defines new operator objects)."""
    gen = plugin_api.dispatch_generation()
    if gen != _GENERATION[0]:
        _OPS.clear()
        _ALLREDUCE[0] = None
        _GENERATION[0] = gen
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = plugin_api.lookup_op(f"c10d::{name}")
    return op


# -- availability and the default group -----------------------------------------------------------------------

def is_available():
    """True when MPI can be used here: mpi4py is installed and an mpiexec was found."""
    return _mpi.missing() is None


def is_mpi_available():
    return is_available()


def is_nccl_available():
    """Whether cupy with NCCL can be imported (imports cupy; never touches a GPU)."""
    import importlib.util  # lazy: only this question needs it
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        from cupy.cuda import nccl  # lazy: cupy is optional
        return bool(getattr(nccl, "available", True))
    except Exception:
        return False


def is_gloo_available():
    """False: tensorplug has no gloo; ``init_process_group("gloo")`` is served by MPI."""
    return False


def is_backend_available(backend):
    """Whether ``backend`` ("mpi", "nccl", "gloo") can be used here."""
    name = str(backend).lower()
    check = {"mpi": is_mpi_available, "nccl": is_nccl_available, "gloo": is_gloo_available}.get(name)
    return bool(check and check())


def get_default_backend_for_device(device):
    """The backend a group uses for tensors of ``device`` ("cpu": "mpi", "cuda": "nccl")."""
    kind = device.type if isinstance(device, tensorplug.device) else str(device).split(":")[0]
    table = {"cpu": "mpi", "cuda": "nccl"}
    if kind not in table:
        raise ValueError(f"Default backend not registered for device : {device}")
    return table[kind]


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its node: ``LOCAL_RANK`` (set by ``tensorplug run`` and torchrun), else
    ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


def is_ucc_available():
    """False: tensorplug has no UCC backend."""
    return False


def is_xccl_available():
    """False: tensorplug has no XCCL backend."""
    return False


def is_initialized():
    """Whether the default process group exists."""
    return 0 in GROUPS


def is_torchelastic_launched():
    """Whether the process was started by ``tensorplug run`` (which sets ``TORCHELASTIC_RUN_ID``, as torchrun)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Create the default process group: every process of the MPI job joins it.

    Ranks and the world size come from MPI (``tensorplug run -n N`` or ``mpiexec -n N``). ``rank``
    and ``world_size``, or the ``RANK`` / ``WORLD_SIZE`` variables a torchrun-style launcher sets,
    are checked against MPI's. ``backend``: ``"mpi"`` (the default), ``"nccl"`` (cuda tensors
    through NCCL, host tensors through MPI) or ``"gloo"`` (served by MPI: tensorplug has no gloo).
    ``timeout`` (a timedelta; default 30 minutes, PyTorch's): see docs/distributed.md.
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend) if backend is not None else Backend.MPI
    why = _mpi.missing()
    if why is not None:
        raise RuntimeError(f"tensorplug.distributed is not available: {why}")
    if init_method is not None and not str(init_method).startswith(("env://", "mpi://")):
        raise ValueError(f"init_method {init_method!r}: tensorplug's process groups join through MPI; use "
                         f"'env://' (the default) and start the job with `tensorplug run -n N` or mpiexec")
    if store is not None:
        raise ValueError("store=: tensorplug's process groups join through MPI, not a store")
    MPI = _mpi.mpi()
    world = MPI.COMM_WORLD
    mrank, msize = world.Get_rank(), world.Get_size()
    for what, given, env, mine in (("rank", rank, "RANK", mrank), ("world_size", world_size, "WORLD_SIZE", msize)):
        wanted = given if given is not None and given >= 0 else _env_int(env)
        if wanted is not None and wanted != mine:
            origin = f"{what}={wanted}" if given is not None and given >= 0 else f"{env}={wanted} in the environment"
            raise ValueError(f"init_process_group: {origin} disagrees with MPI, which runs this process as rank "
                             f"{mrank} of {msize}: start the job with `tensorplug run -n N script.py` or "
                             f"`mpiexec -n N python script.py` (ranks come from MPI)")
    comm = world.Dup()
    pg = ProcessGroup(comm, range(msize), str(name), timeout if timeout is not None else default_pg_timeout, mrank)
    if pg.id != 0:  # the default group is id 0: ids restart after destroy_process_group()
        GROUPS.pop(pg.id)
        pg.id = 0
        GROUPS[0] = pg
    if msize > 1:
        _start_watchdog()
        _install_excepthook()


def destroy_process_group(group=None):
    """Destroy ``group`` (default: every group, the default one included); collective over its ranks."""
    from . import group as _g  # lazy: the module's id counter is reset below
    if group is None:
        if not is_initialized():
            raise ValueError(NO_GROUP)
        for pg in sorted(GROUPS.values(), key=lambda p: -p.id):
            pg.destroy()
        _g._NEXT_ID[0] = 0
        return
    pg = resolve(group)
    if pg is not None:
        pg.destroy()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of ``ranks`` (sorted; default: all). Every rank of the default group must call it.

    A rank outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``, as in PyTorch.
    """
    world = default_group()
    members = sorted(set(range(world.nranks) if ranks is None else ranks))
    for r in members:
        if not 0 <= r < world.nranks:
            raise ValueError(f"Invalid rank {r}: new_group ranks must be in [0, {world.nranks - 1}]")
    MPI = _mpi.mpi()
    inside = world.global_rank in members
    comm = world.comm.Split(0 if inside else MPI.UNDEFINED, world.global_rank)
    if not inside:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, members, str(Backend(backend)) if backend else world.backend,
                        timeout if timeout is not None else world.timeout_s, world.global_rank)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """One group per list of ranks (collective over the default group; the lists must not overlap):
    (the group holding this rank or None, every group made)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen, subgroups, mine = {}, [], None
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen[r]} and {list(ranks)}")
            seen[r] = list(ranks)
    me = get_rank()
    for ranks in ranks_per_subgroup_list:
        g = new_group(ranks, timeout=timeout, backend=backend)
        subgroups.append(g)
        if me in ranks:
            mine = g
    return mine, subgroups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split ``group``'s ranks (default: all) into consecutive groups of ``group_size`` (default: the
    number of cuda devices): (the subgroup holding this rank, every subgroup)."""
    if group_size is None:
        if not (hasattr(tensorplug, "cuda") and tensorplug.cuda.is_available()):
            raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using "
                             "a backend that does not depend on CUDA,please pass in 'group_size' correctly.")
        group_size = tensorplug.cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by '{group_size=}'")
    ranks = get_process_group_ranks(group) if group is not None else list(range(world_size))
    return new_subgroups_by_enumeration([ranks[i:i + group_size] for i in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend)


def get_rank(group=None):
    """This process's rank in ``group`` (default: the default group); -1 outside the group."""
    pg = resolve(group)
    return -1 if pg is None else pg.rank_


def get_world_size(group=None):
    """The number of processes in ``group``; -1 when this process is not in it."""
    pg = resolve(group)
    return -1 if pg is None else pg.nranks


def get_backend(group=None):
    """The backend name of ``group`` ("mpi", "nccl" or "gloo", as given to init_process_group)."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.backend


def get_process_group_ranks(group):
    """The global ranks of ``group``, in group-rank order."""
    pg = resolve(group)
    return list(pg.ranks) if pg is not None else []


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    pg = resolve(group)
    if not 0 <= group_rank < pg.nranks:
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.global_of(group_rank)


def get_group_rank(group, global_rank):
    """The rank in ``group`` of global rank ``global_rank``."""
    return resolve(group).group_of(global_rank)


# -- argument handling ---------------------------------------------------------------------------------------

def _tensor(t, param="tensor"):
    if not isinstance(t, tensorplug.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type tensorplug.Tensor\n"
                        f"             but got {type(t)} instead.")


def _member(group, name):
    pg = resolve(group)
    if pg is None:
        warnings.warn(f"Running {name} on global rank {default_group().global_rank} which does not belong to "
                      f"the given group.", stacklevel=3)
    return pg


def _peer(pg, global_rank, group_rank, what):
    """The group rank named by ``src``/``dst`` (a global rank) or by ``group_src``/``group_dst``."""
    if global_rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is not None:
        return int(group_rank)
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if pg.id == 0:  # the default group: global and group ranks agree (the op checks the range)
        return int(global_rank)
    return pg.group_of(int(global_rank))


def _result(pg, async_op, name="collective", result=()):
    work = pg.last_work
    pg.last_work = None
    if not async_op:
        return None
    return work if work is not None else Work(pg, name, pg.seq, None, None, result)


class _ThenWork(Work):
    """A work whose results need one more local step (copying a flat buffer into a tensor list)."""

    __slots__ = ("_inner", "_then", "_ran")

    def __init__(self, inner, then, result):
        Work.__init__(self, inner._pg, inner._name, inner._seq, None, None, result)
        self._inner, self._then, self._ran = inner, then, False
        self._done = False

    def _run(self):
        if not self._ran:
            self._ran = True
            self._then()
            self._done = True

    def is_completed(self):
        if self._inner.is_completed():
            self._run()
        return self._done

    def wait(self, timeout=None):
        self._inner.wait(timeout)
        self._run()
        return True


def _then(pg, async_op, then, result):
    inner = pg.last_work
    pg.last_work = None
    if not async_op:
        then()
        return None
    if inner is None or inner.is_completed():
        then()
        return Work(pg, "collective", pg.seq, None, None, result)
    return _ThenWork(inner, then, result)


# -- tensor collectives --------------------------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group in place (``op``: a ReduceOp); every rank gets the result."""
    if group is None and op is _SUM and tensor.__class__ is _Tensor and not async_op:
        pg = GROUPS.get(0)
        run = _ALLREDUCE[0]
        if pg is not None and run is not None and _GENERATION[0] == _generation():  # the common call
            run.entry(tensor, 0, 0, False)
            pg.last_work = None
            return None
    if not isinstance(tensor, _Tensor):
        _tensor(tensor)
    pg = GROUPS.get(0) if group is None else None
    if pg is None:
        pg = _member(group, "all_reduce")
        if pg is None:
            return None
    run = _op("allreduce_")
    _ALLREDUCE[0] = run
    run.entry(tensor, op._value_ if op.__class__ is RedOpType else red_op(op)._value_, pg.id, async_op)
    if async_op:
        return _result(pg, True, "all_reduce", (tensor,))
    pg.last_work = None
    return None


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` (global) into ``tensor`` on every rank of the group."""
    _tensor(tensor)
    pg = _member(group, "broadcast")
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "src")
    _op("broadcast_")(tensor, root, pg.id, bool(async_op))
    return _result(pg, async_op, "broadcast", (tensor,))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (others keep theirs)."""
    _tensor(tensor)
    pg = _member(group, "reduce")
    if pg is None:
        return None
    root = _peer(pg, dst, group_dst, "dst")
    _op("reduce_")(tensor, root, red_op(op)._value_, pg.id, bool(async_op))
    return _result(pg, async_op, "reduce", (tensor,))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's ``input_tensor`` into ``output_tensor`` (world_size times as large)."""
    _tensor(output_tensor, "output_tensor")
    _tensor(input_tensor, "input_tensor")
    pg = _member(group, "all_gather_into_tensor")
    if pg is None:
        return None
    _op("allgather_into_tensor_")(output_tensor, input_tensor, pg.id, bool(async_op))
    return _result(pg, async_op, "all_gather_into_tensor", (output_tensor,))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world_size chunks) across the group; rank r gets chunk r in ``output``."""
    _tensor(output, "output")
    _tensor(input, "input")
    pg = _member(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    _op("reduce_scatter_tensor_")(output, input, red_op(op)._value_, pg.id, bool(async_op))
    return _result(pg, async_op, "reduce_scatter_tensor", (output,))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Split ``input`` along dim 0 (equally, or by ``input_split_sizes``) and send piece r to rank r;
    the pieces received, in rank order, fill ``output`` (split equally or by ``output_split_sizes``)."""
    _tensor(output, "output")
    _tensor(input, "input")
    pg = _member(group, "all_to_all_single")
    if pg is None:
        return None
    _op("alltoall_base_")(output, input, [int(n) for n in output_split_sizes or ()],
                          [int(n) for n in input_split_sizes or ()], pg.id, bool(async_op))
    return _result(pg, async_op, "all_to_all_single", (output,))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Send ``input_tensor_list[r]`` to rank r; ``output_tensor_list[r]`` receives rank r's piece
    (tensors of any shapes; one dtype)."""
    pg = _member(group, "all_to_all")
    if pg is None:
        return None
    for what, tensors in (("input", input_tensor_list), ("output", output_tensor_list)):
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(f"Invalid function argument: {what}_tensor_list should be a list of tensors")
        if len(tensors) != pg.nranks:
            raise RuntimeError(f"Number of {what} tensors are not equal to group size")
        for t in tensors:
            _tensor(t, f"{what}_tensor_list")
    like = input_tensor_list[0]
    for t in list(input_tensor_list) + list(output_tensor_list):
        if t.dtype != like.dtype or t.device != like.device:
            raise RuntimeError("Tensors are not equal in data type")
    flat_in = tensorplug.cat([t.detach().reshape(-1) for t in input_tensor_list])
    out_sizes = [t.numel() for t in output_tensor_list]
    flat_out = tensorplug.empty(sum(out_sizes), dtype=like.dtype, device=like.device)
    _op("alltoall_base_")(flat_out, flat_in, out_sizes, [t.numel() for t in input_tensor_list], pg.id,
                          bool(async_op))
    return _then(pg, async_op, _unpack(flat_out, output_tensor_list), output_tensor_list)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[r]`` over the ranks into ``output`` on rank r (each entry ``output``'s shape)."""
    _tensor(output, "output")
    pg = _member(group, "reduce_scatter")
    if pg is None:
        return None
    _check_list("reduce_scatter", input_list, output, pg.nranks)
    flat = tensorplug.stack([t.detach().reshape(-1) for t in input_list])
    return reduce_scatter_tensor(output, flat.view((pg.nranks,) + tuple(output.shape)), op, group, async_op)


def _check_list(name, tensors, like, size):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"Invalid function argument: {name} should be a list of tensors")
    if len(tensors) != size:
        raise RuntimeError(f"ProcessGroupMPI::{name}: invalid output tensor list at index 0 (expected length "
                           f"{size}, got {len(tensors)})")
    for i, t in enumerate(tensors):
        _tensor(t, name)
        if t.dtype != like.dtype:
            raise RuntimeError(f"ProcessGroupMPI::{name}: invalid tensor type at index {i} (expected "
                               f"{like.dtype}, got {t.dtype})")
        if t.shape != like.shape:
            raise RuntimeError(f"ProcessGroupMPI::{name}: invalid tensor size at index {i} (expected "
                               f"{tuple(like.shape)}, got {tuple(t.shape)})")


def _unpack(flat, tensors):
    """The step copying ``flat``'s consecutive pieces (one per tensor, of its size) into ``tensors``."""
    def then():
        with tensorplug.no_grad():
            elements, offset = flat.reshape(-1), 0
            for t in tensors:
                n = t.numel()
                t.copy_(elements[offset:offset + n].view(t.shape))
                offset += n
    return then


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list`` (one tensor per rank, each ``tensor``'s shape)."""
    _tensor(tensor)
    pg = _member(group, "all_gather")
    if pg is None:
        return None
    _check_list("allgather", tensor_list, tensor, pg.nranks)
    flat = tensorplug.empty((pg.nranks, tensor.numel()), dtype=tensor.dtype, device=tensor.device)
    _op("allgather_into_tensor_")(flat, tensor, pg.id, bool(async_op))
    return _then(pg, async_op, _unpack(flat, tensor_list), tensor_list)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    _tensor(tensor)
    pg = _member(group, "gather")
    if pg is None:
        return None
    root = _peer(pg, dst, group_dst, "dst")
    if pg.rank_ == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_list("gather", gather_list, tensor, pg.nranks)
        flat = tensorplug.empty((pg.nranks, tensor.numel()), dtype=tensor.dtype, device=tensor.device)
    else:
        if gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
        flat = tensorplug.empty(0, dtype=tensor.dtype, device=tensor.device)
    _op("gather_")(flat, tensor, root, pg.id, bool(async_op))
    if pg.rank_ != root:
        return _result(pg, async_op, "gather", ())
    return _then(pg, async_op, _unpack(flat, gather_list), gather_list)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``scatter_list[r]`` into ``tensor`` on rank r."""
    _tensor(tensor)
    pg = _member(group, "scatter")
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "src")
    if pg.rank_ == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_list("scatter", scatter_list, tensor, pg.nranks)
        flat = tensorplug.stack([t.reshape(-1) for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
        flat = tensorplug.empty(0, dtype=tensor.dtype, device=tensor.device)
    _op("scatter_")(tensor, flat, root, pg.id, bool(async_op))
    return _result(pg, async_op, "scatter", (tensor,))


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` without waiting; returns a Work."""
    _tensor(tensor)
    pg = _member(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    _op("send")(tensor, peer, int(tag), pg.id, True)
    return _result(pg, True, "isend", (tensor,))


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` (returns once the buffer may be reused)."""
    _tensor(tensor)
    pg = _member(group, "send")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    _op("send")(tensor, peer, int(tag), pg.id, False)
    _result(pg, False)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (None: any rank) without waiting; returns a Work."""
    _tensor(tensor)
    pg = _member(group, "irecv")
    if pg is None:
        return None
    peer = -1 if src is None and group_src is None else _peer(pg, src, group_src, "src")
    _op("recv_")(tensor, peer, int(tag), pg.id, True)
    return _result(pg, True, "irecv", (tensor,))


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (None: any rank); returns the sender's rank."""
    _tensor(tensor)
    pg = _member(group, "recv")
    if pg is None:
        return -1
    peer = -1 if src is None and group_src is None else _peer(pg, src, group_src, "src")
    _op("recv_")(tensor, peer, int(tag), pg.id, False)
    work = pg.last_work
    pg.last_work = None
    return work._source


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv`: ``op`` is ``isend`` or ``irecv``."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``tensorplug.distributed.isend`` or "
                             "``tensorplug.distributed.irecv``.")
        _tensor(tensor)
        self.op, self.tensor, self.peer, self.group, self.tag, self.group_peer = op, tensor, peer, group, tag, group_peer

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, shape={list(self.tensor.shape)})"


def batch_isend_irecv(p2p_op_list):
    """Start every operation of ``p2p_op_list`` (P2POp objects), in order; the list of their works."""
    if not isinstance(p2p_op_list, (list, tuple)) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``tensorplug.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, group_dst=p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, group_src=p.group_peer))
    return works


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reached the barrier."""
    pg = _member(group, "barrier")
    if pg is None:
        return None
    if pg.nranks == 1:
        return Work(pg, "barrier", pg.seq) if async_op else None
    if async_op:
        return pg.started("barrier", pg.comm.Ibarrier())
    pg.blocking("barrier", pg.comm.Barrier)
    return None


_BARRIER_TAG = 32766  # below the object messages' tag; tensors use 0 unless told


def _poll(requests, deadline):
    """Wait for MPI ``requests`` (dict key -> request) until ``deadline``; the keys still pending, sorted."""
    pending = dict(requests)
    while pending:
        for k in [k for k, req in pending.items() if req.Test()]:
            del pending[k]
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(0.0005)
    for req in pending.values():
        req.Cancel()
        req.Wait()
    return sorted(pending)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it: group rank 0 waits up to ``timeout``
    (default: the group's) for every other rank, then lets them go; past it, rank 0 raises
    :class:`DistBackendError` naming the first late rank (every late rank with ``wait_all_ranks``),
    and a rank that rank 0 did not release in time raises too."""
    pg = _member(group, "monitored_barrier")
    if pg is None or pg.nranks == 1:
        return None
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        warnings.warn(f"Please specify timeout arg as a timedelta. Converting current value of {timeout} assuming "
                      f"it represents seconds", stacklevel=2)
    limit = pg.timeout_s if timeout is None else _seconds(timeout)
    deadline = time.monotonic() + limit
    BYTE = _mpi.mpi().BYTE
    token = lambda: [bytearray(1), BYTE]  # noqa: E731
    ms = f"{limit * 1000:.0f} ms"
    if pg.rank_ == 0:
        late = _poll({r: pg.comm.Irecv(token(), source=r, tag=_BARRIER_TAG) for r in range(1, pg.nranks)}, deadline)
        if late:
            if wait_all_ranks:
                raise DistBackendError(f"[Rank 0]: Ranks {', '.join(map(str, late))} failed to pass "
                                       f"monitoredBarrier in {ms}")
            raise DistBackendError(f"[Rank 0]: Rank {late[0]} failed to pass monitoredBarrier in {ms}")
        for r in range(1, pg.nranks):
            pg.comm.Send(token(), dest=r, tag=_BARRIER_TAG)
        return None
    pg.comm.Send(token(), dest=0, tag=_BARRIER_TAG)
    if _poll({0: pg.comm.Irecv(token(), source=0, tag=_BARRIER_TAG)}, deadline):
        raise DistBackendError(f"[Rank {pg.rank_}]: rank 0 did not release monitoredBarrier within {ms} (it is "
                               f"late itself, or another rank is)")
    return None


# -- object collectives (pickled by mpi4py) -------------------------------------------------------------------

def _object_call(pg, name, method, *args):
    box = []
    pg.blocking(name, lambda: box.append(method(*args)))
    return box[0]


def all_gather_object(object_list, obj, group=None):
    """Every rank's picklable ``obj`` into ``object_list`` (whose length must be the world size)."""
    pg = _member(group, "all_gather_object")
    if pg is None:
        return None
    if len(object_list) != pg.nranks:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries; the group has {pg.nranks} "
                         f"ranks")
    object_list[:] = _object_call(pg, "all_gather_object", pg.comm.allgather, obj)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Rank ``src``'s ``object_list`` entries (picklable) into ``object_list`` on every rank, in place."""
    pg = _member(group, "broadcast_object_list")
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "src")
    got = _object_call(pg, "broadcast_object_list", pg.comm.bcast,
                       list(object_list) if pg.rank_ == root else None, root)
    if len(got) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg.global_of(root)} sent {len(got)} objects; this rank's "
                         f"object_list has {len(object_list)}")
    object_list[:] = got


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = _member(group, "gather_object")
    if pg is None:
        return None
    root = _peer(pg, dst, group_dst, "dst")
    got = _object_call(pg, "gather_object", pg.comm.gather, obj, root)
    if pg.rank_ == root:
        if object_gather_list is None or len(object_gather_list) != pg.nranks:
            raise ValueError("Argument ``object_gather_list`` must be specified on destination rank, with one "
                             "entry per rank")
        object_gather_list[:] = got


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Rank ``src``'s ``scatter_object_input_list[r]`` into ``scatter_object_output_list[0]`` on rank r."""
    pg = _member(group, "scatter_object_list")
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    items = list(scatter_object_input_list) if pg.rank_ == root else None
    scatter_object_output_list[0] = _object_call(pg, "scatter_object_list", pg.comm.scatter, items, root)


_OBJECT_TAG = 32767  # MPI's smallest allowed tag bound: object messages never match a tensor's (tag 0 by default)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Send the picklable ``object_list`` entries to rank ``dst`` (which calls :func:`recv_object_list`)."""
    pg = _member(group, "send_object_list")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst")
    if peer == pg.rank_:
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                         "current process.")
    pg.blocking("send_object_list", pg.comm.send, list(object_list), peer, _OBJECT_TAG)


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Receive a :func:`send_object_list` message from rank ``src`` (None: any rank) into ``object_list``,
    in place; returns the sender's global rank (-1 outside the group)."""
    pg = _member(group, "recv_object_list")
    if pg is None:
        return -1
    MPI = _mpi.mpi()
    source = MPI.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "src")
    status = MPI.Status()
    got = _object_call(pg, "recv_object_list", pg.comm.recv, None, source, _OBJECT_TAG, status)
    sender = pg.global_of(status.Get_source())
    if len(got) != len(object_list):
        raise ValueError(f"recv_object_list: rank {sender} sent {len(got)} objects; this rank's object_list has "
                         f"{len(object_list)}")
    object_list[:] = got
    return sender
