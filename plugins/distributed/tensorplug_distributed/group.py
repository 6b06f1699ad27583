"""Process groups on MPI communicators, work handles, the timeout watchdog and the group registry.

A :class:`ProcessGroup` owns a duplicate of an MPI communicator (so a user's own mpi4py calls never
mix with tensorplug's), a sequence number per collective, and, once a cuda tensor is reduced, an
NCCL communicator. A synchronous collective is one blocking MPI call in the caller's thread; an
asynchronous one is a non-blocking MPI call whose request a per-group progress thread waits on, so
the communication proceeds while the caller computes (DDP's overlap). Timeouts: see
:func:`_watchdog` and docs/distributed.md.
"""

from __future__ import annotations

import atexit
import datetime
import enum
import os
import sys
import threading
import time
from time import monotonic as _monotonic

from . import _mpi

__all__ = ["ReduceOp", "Backend", "Work", "ProcessGroup", "GroupMember", "group", "DistError",
           "DistBackendError", "DistNetworkError", "DistStoreError", "QueueEmptyError", "DebugLevel",
           "get_debug_level", "set_debug_level", "set_debug_level_from_env", "supports_complex", "get_pg_count",
           "default_pg_timeout"]

NO_GROUP = "Default process group has not been initialized, please make sure to call init_process_group."
default_pg_timeout = datetime.timedelta(minutes=30)


class DistError(RuntimeError):
    """Base of the errors tensorplug.distributed raises itself (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the communication library (PyTorch's ``DistBackendError``)."""


class DistNetworkError(DistError):
    """A network failure (PyTorch's ``DistNetworkError``; MPI reports its own as DistBackendError)."""


class DistStoreError(DistError):
    """A key-value store failure (PyTorch's ``DistStoreError``; tensorplug's groups need no store)."""


class QueueEmptyError(DistError):
    """PyTorch's ``QueueEmptyError`` (a store's queue had nothing to pop)."""


class DebugLevel(enum.IntEnum):
    """``TORCH_DISTRIBUTED_DEBUG``'s levels: DETAIL makes every collective compare its tensors across ranks."""
    OFF = 0
    INFO = 1
    DETAIL = 2


_DEBUG = [None]


def set_debug_level(level):
    """Set the debug level (a :class:`DebugLevel`) for the process groups created from now on."""
    _DEBUG[0] = DebugLevel(level)


def set_debug_level_from_env():
    """Read the level from ``TORCH_DISTRIBUTED_DEBUG`` (OFF, INFO or DETAIL; unset: OFF)."""
    name = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper() or "OFF"
    if name not in DebugLevel.__members__:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    _DEBUG[0] = DebugLevel[name]


def get_debug_level():
    """The debug level (from ``TORCH_DISTRIBUTED_DEBUG`` until :func:`set_debug_level` is called)."""
    if _DEBUG[0] is None:
        set_debug_level_from_env()
    return _DEBUG[0]


def supports_complex(reduceOp):
    """Whether ``reduceOp`` is defined on complex tensors (not MAX, MIN, PRODUCT or the bitwise ones)."""
    return red_op(reduceOp) not in (RedOpType.MAX, RedOpType.MIN, RedOpType.PRODUCT, RedOpType.BAND,
                                     RedOpType.BOR, RedOpType.BXOR)


def get_pg_count():
    """The number of process groups this process is a member of (the default one included)."""
    return len(GROUPS)


class RedOpType(int, enum.Enum):
    """The reduction codes (an int each, so the c10d operators take them as ``int reduce_op``)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """The reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor`` (``ReduceOp.SUM``...)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED

    def __init__(self, op=RedOpType.SUM):
        self.op = red_op(op)


def red_op(op):
    """``op`` (a ReduceOp member, a ReduceOp instance) as a :class:`RedOpType`, or PyTorch's TypeError."""
    if isinstance(op, RedOpType):
        return op
    if isinstance(op, ReduceOp):
        return op.op
    raise TypeError(f"all_reduce(): incompatible function arguments: op must be a ReduceOp member "
                    f"(ReduceOp.SUM, ...), got {type(op).__name__} {op!r}")


class Backend(str):
    """Backend names: ``Backend.MPI`` ("mpi"), ``Backend.NCCL`` ("nccl"), ``Backend.GLOO`` ("gloo")."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    backend_list = ["gloo", "nccl", "mpi"]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = name.lower()
        if value not in cls.backend_list and not _is_device_backend_string(value):
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


def _is_device_backend_string(value):
    """``"cpu:mpi,cuda:nccl"``: a backend per device type, as PyTorch accepts."""
    parts = [p.partition(":") for p in value.split(",")]
    return all(sep and dev and be in Backend.backend_list for dev, sep, be in parts)


# -- the watchdog --------------------------------------------------------------------------------------------

_WATCHDOG = [None]


def _timeout_message(pg, name, seq, ran_s):
    return (f"[Rank {pg.global_rank}] Watchdog caught collective operation timeout: {name} (SeqNum={seq}, group "
            f"ranks {pg.ranks}) ran for {ran_s * 1000:.0f} milliseconds before timing out (timeout "
            f"{pg.timeout_s * 1000:.0f} ms): another rank did not reach the same collective")


def _watchdog():
    """Aborts the job when a collective outlives its group's timeout, so no rank waits forever.

    A blocking MPI call cannot be interrupted: like PyTorch's NCCL watchdog, this thread reports the
    rank, the collective and its sequence number on stderr and then calls ``MPI_Abort`` on the
    world, which ends every process of the job with exit status 1. (``Work.wait()`` of an
    asynchronous collective raises :class:`DistBackendError` in the caller instead.)
    """
    while True:
        now = time.monotonic()
        expired = None
        period = 1.0
        for pg in list(GROUPS.values()):
            period = min(period, pg.timeout_s / 4)
            running = pg.inflight
            if running is not None and now - running[2] > pg.timeout_s:
                expired = (pg, running[0], running[1], now - running[2])
            for work in list(pg.outstanding):
                period = min(period, pg.timeout_s / 4)
                if not work._done and now - work._start > pg.timeout_s + 0.5:
                    expired = (pg, work._name, work._seq, now - work._start)
        if expired is not None:
            abort(_timeout_message(*expired) + ". Aborting the job so that no rank waits forever.")
        time.sleep(max(period, 0.01))


def _start_watchdog():
    if _WATCHDOG[0] is None:
        t = threading.Thread(target=_watchdog, name="tensorplug-distributed-watchdog", daemon=True)
        t.start()
        _WATCHDOG[0] = t


def abort(message, code=1):
    """Write ``message`` to stderr and end every process of the MPI job (``MPI_Abort``)."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    sys.stdout.flush()
    time.sleep(0.25)  # mpiexec forwards this output before MPI_Abort tears the job down
    _mpi.mpi().COMM_WORLD.Abort(code)


_PREVIOUS_EXCEPTHOOK = [None]


def _abort_on_uncaught(exc_type, exc, tb):
    """An exception nobody caught on one rank ends the job instead of leaving the others in a collective."""
    _PREVIOUS_EXCEPTHOOK[0](exc_type, exc, tb)
    world = GROUPS.get(0)
    if world is not None and world.nranks > 1 and not issubclass(exc_type, SystemExit):
        abort(f"[Rank {world.global_rank}] uncaught {exc_type.__name__}: aborting the job (the other ranks "
              f"would wait for this one in their next collective)")


def _install_excepthook():
    if _PREVIOUS_EXCEPTHOOK[0] is None:
        _PREVIOUS_EXCEPTHOOK[0] = sys.excepthook
        sys.excepthook = _abort_on_uncaught
        # registered after mpi4py's own exit handler, so it runs first (atexit is last-in, first-out)
        atexit.register(_abort_if_unfinished)


def _abort_if_unfinished():
    """At exit: a collective still running would make MPI_Finalize wait forever; end the job instead."""
    for pg in list(GROUPS.values()):
        late = [w for w in pg.outstanding if not w._done]
        if late:
            w = late[0]
            abort(f"[Rank {pg.global_rank}] exiting while {w._name} (SeqNum={w._seq}) has not finished: aborting "
                  f"the job (MPI_Finalize would wait for the other ranks forever)")


# -- work handles --------------------------------------------------------------------------------------------

class Work:
    """The handle of a collective (``async_op=True``): ``wait()``, ``is_completed()``, ``result()``.

    ``wait(timeout=None)`` blocks until the collective finished here (the output tensors hold
    their results) and returns True; past ``timeout`` (default: the group's) it raises
    :class:`DistBackendError` naming the rank, the collective and its sequence number.
    """

    __slots__ = ("_pg", "_name", "_seq", "_request", "_finish", "_event", "_error", "_result", "_start",
                 "_done", "_source", "t_done")

    def __init__(self, pg, name, seq, request=None, finish=None, result=()):
        self._pg = pg
        self._name = name
        self._seq = seq
        self._request = request
        self._finish = finish
        self._result = list(result)
        self._error = None
        self._source = -1
        self._start = time.monotonic()
        self._done = request is None
        self._event = None if request is None else threading.Event()
        self.t_done = None  # time.perf_counter() when the progress thread saw it finish

    def _complete(self):
        """Run in the progress thread: wait for the MPI request, then the finishing step."""
        try:
            status = _mpi.mpi().Status()
            self._request.Wait(status)
            if self._finish is not None:
                self._finish()
            if self._name == "recv":
                self._source = self._pg.global_of(status.Get_source())
        except BaseException as e:  # the waiter re-raises it
            self._error = e
        self.t_done = time.perf_counter()
        self._done = True
        self._event.set()

    def is_completed(self):
        """Whether the collective finished (non-blocking)."""
        return self._done

    def is_success(self):
        """Whether it finished without an error."""
        return self._done and self._error is None

    def exception(self):
        """The error the collective ended with, or None."""
        return self._error

    def wait(self, timeout=None):
        """Block until the collective finished here; True, or :class:`DistBackendError` past the timeout."""
        if not self._done:
            limit = self._pg.timeout_s if timeout is None else _seconds(timeout)
            if not self._event.wait(limit):
                raise DistBackendError(
                    f"[Rank {self._pg.global_rank}] {self._name} (SeqNum={self._seq}, group ranks "
                    f"{self._pg.ranks}) did not finish within {limit * 1000:.0f} ms: another rank did not reach "
                    f"the same collective (or failed)")
        if self._error is not None:
            raise DistBackendError(f"[Rank {self._pg.global_rank}] {self._name} (SeqNum={self._seq}) failed: "
                                   f"{self._error}") from self._error
        return True

    def synchronize(self):
        self.wait()

    def result(self):
        """The output tensors of the collective."""
        self.wait()
        return self._result

    def source_rank(self):
        """For a ``recv`` from any source: the rank the message came from."""
        self.wait()
        return self._source

    def get_future(self):
        """A :class:`Future` completed with ``result()`` when the collective finishes."""
        return Future(self)


class Future:
    """A minimal ``torch.futures.Future`` over a :class:`Work`: ``wait()``, ``value()``, ``done()``, ``then()``."""

    def __init__(self, work, fn=None, parent=None):
        self._work = work
        self._fn = fn
        self._parent = parent
        self._value = None
        self._has_value = False

    def done(self):
        return self._work.is_completed()

    def wait(self):
        if not self._has_value:
            value = self._parent.wait() if self._parent is not None else self._work.result()
            self._value = self._fn(self._parent) if self._fn is not None else value
            self._has_value = True
        return self._value

    def value(self):
        return self.wait()

    def then(self, callback):
        return Future(self._work, fn=callback, parent=self)


# -- process groups ------------------------------------------------------------------------------------------

GROUPS: dict = {}     # group id -> ProcessGroup (0: the default group)
_NEXT_ID = [0]


def _seconds(timeout):
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class ProcessGroup:
    """A set of ranks that run collectives together, over one MPI communicator (and NCCL for cuda)."""

    def __init__(self, comm, ranks, backend, timeout, global_rank):
        self.comm = comm
        self.ranks = list(ranks)
        self.backend = backend
        self.timeout_s = _seconds(timeout)
        self.global_rank = global_rank
        self.rank_ = comm.Get_rank()
        self.nranks = comm.Get_size()
        self.seq = 0
        self.id = _NEXT_ID[0]
        _NEXT_ID[0] += 1
        self.outstanding = []          # asynchronous works not yet finished, in issue order
        self.last_work = None          # what the last kernel call on this group left for its caller
        self.inflight = None           # (collective, seq, start) of the blocking call running now
        # PyTorch's switch: compare each collective's tensors across ranks before running it
        self.detail = get_debug_level() is DebugLevel.DETAIL
        MPI = _mpi.mpi()
        self.IN_PLACE, self.SUM = MPI.IN_PLACE, MPI.SUM
        self._queue = None
        self._thread = None
        self._nccl = None
        self._group_of = {g: i for i, g in enumerate(self.ranks)}
        self._node = None              # [the node communicator, or None when the ranks span machines]
        self.windows = []              # shared memory windows (DDP's buckets, tensorplug_distributed.shm)
        GROUPS[self.id] = self

    def rank(self):
        """This process's rank in the group (``ProcessGroup.rank()``, as PyTorch's)."""
        return self.rank_

    def size(self):
        """The number of processes in the group (``ProcessGroup.size()``, as PyTorch's)."""
        return self.nranks

    def name(self):
        """The backend name ("mpi", "nccl" or "gloo")."""
        return self.backend

    def __repr__(self):
        return f"<tensorplug.distributed.ProcessGroup {self.backend} ranks={self.ranks} id={self.id}>"

    def group_of(self, global_rank):
        """The rank in this group of global rank ``global_rank`` (ValueError when it is not a member)."""
        r = self._group_of.get(global_rank)
        if r is None:
            raise ValueError(f"Global rank {global_rank} is not part of group {self}")
        return r

    def global_of(self, group_rank):
        return self.ranks[group_rank]

    def node_comm(self):
        """A communicator of this group's ranks, in rank order, when they all share one machine's memory
        (for shared memory windows), else None. Collective on its first call."""
        if self._node is None:
            MPI = _mpi.mpi()
            node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank_)
            if node.Get_size() != self.nranks:
                node.Free()
                node = None
            self._node = [node]
        return self._node[0]

    # -- running collectives -----------------------------------------------------------------------------

    def blocking(self, name, call, *args):
        """Run ``call(*args)`` (a blocking MPI call) under the watchdog's eye."""
        self.seq += 1
        self.inflight = (name, self.seq, _monotonic())
        try:
            call(*args)
        finally:
            self.inflight = None

    def started(self, name, request, finish=None, result=()):
        """A Work for a non-blocking MPI ``request``; the group's progress thread waits on it."""
        self.seq += 1
        work = Work(self, name, self.seq, request, finish, result)
        if self._thread is None:
            import queue  # lazy: only asynchronous collectives need the progress thread
            self._queue = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._progress, name=f"tensorplug-distributed-pg{self.id}",
                                            daemon=True)
            self._thread.start()
        self.outstanding.append(work)
        self._queue.put(work)
        return work

    def _progress(self):
        while True:
            work = self._queue.get()
            if work is None:
                return
            work._complete()
            try:
                self.outstanding.remove(work)
            except ValueError:
                pass

    def destroy(self):
        for work in list(self.outstanding):
            work.wait()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        GROUPS.pop(self.id, None)
        self._nccl = None
        for win in self.windows:  # collective, as destroy is
            win.Unlock_all()
            win.Free()
        self.windows = []
        if self._node is not None and self._node[0] is not None:
            self._node[0].Free()
        self._node = None
        comm, self.comm = self.comm, None
        if comm is not None:
            comm.Free()


class _GroupMember:
    """``GroupMember.WORLD`` (the default group, once initialised) and ``NON_GROUP_MEMBER``."""

    NON_GROUP_MEMBER = -100

    @property
    def WORLD(self):
        return GROUPS.get(0)


GroupMember = _GroupMember()


class _Group:
    """``tensorplug.distributed.group.WORLD``, as ``torch.distributed.group.WORLD``."""

    @property
    def WORLD(self):
        return GROUPS.get(0)


group = _Group()


def default_group():
    pg = GROUPS.get(0)
    if pg is None:
        raise ValueError(NO_GROUP)
    return pg


def resolve(group_arg):
    """The ProcessGroup of ``group`` (None: the default one); None when this rank is not a member."""
    if group_arg is None:
        return default_group()
    if group_arg is GroupMember.NON_GROUP_MEMBER:
        return None
    if isinstance(group_arg, ProcessGroup):
        if GROUPS.get(group_arg.id) is not group_arg:
            raise ValueError(f"{group_arg} was destroyed")
        return group_arg
    raise TypeError(f"group must be a ProcessGroup (from new_group) or None, got {type(group_arg).__name__}")


def _env_int(name):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {raw!r}") from None
