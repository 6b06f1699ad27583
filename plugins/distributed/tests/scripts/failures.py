"""Failure behaviour; run under mpiexec -n 2 with one argument naming the case.

raise:    rank 1 raises before a collective rank 0 is waiting in: the job must end (not hang),
          with rank 1's traceback and the abort message.
late:     rank 1 never joins rank 0's all_reduce: rank 0's watchdog aborts after the group's timeout
          (1 s) naming the rank, the collective and its sequence number.
async:    an asynchronous all_reduce rank 1 never joins: rank 0's wait() raises DistBackendError,
          which the script catches and reports, then aborts the job itself.
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
