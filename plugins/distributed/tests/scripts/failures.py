"""Failure behaviour; run under mpiexec -n 2 with one argument naming the case.

raise:    rank 1 raises before a collective rank 0 is waiting in: the job must end (not hang),
          with rank 1's traceback and the abort message.
late:     rank 1 never joins rank 0's all_reduce: rank 0's watchdog aborts after the group's timeout
          (1 s) naming the rank, the collective and its sequence number.
async:    an asynchronous all_reduce rank 1 never joins: rank 0's wait() raises DistBackendError,
          which the script catches and reports, then aborts the job itself.
monitored: every rank but 0 reaches monitored_barrier late: rank 0 names them (all of them with
          wait_all_ranks), each late rank is not released in time; both report and the job ends normally.
"""

import datetime
import sys
import time

import tensorplug as tp
import tensorplug.distributed as dist

case = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1))
rank = dist.get_rank()
x = tp.ones(3)
if case == "raise":
    if rank == 1:
        raise ValueError("rank 1 failed on purpose")
    dist.all_reduce(x)
elif case == "late":
    if rank == 1:
        time.sleep(60)
    dist.all_reduce(x)
elif case == "monitored":
    if rank > 0:
        time.sleep(1.0)
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.3), wait_all_ranks=len(sys.argv) > 2)
    except dist.DistBackendError as e:
        print(f"rank {rank} caught: {e}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0)
elif case == "async":
    if rank == 0:
        work = dist.all_reduce(x, async_op=True)
        try:
            work.wait()
        except dist.DistBackendError as e:
            print(f"caught: {e}", flush=True)
            sys.exit(3)
    time.sleep(60)
print("not reached", flush=True)
