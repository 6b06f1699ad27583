"""The CPU plugin keeps numpy's large freed blocks in glibc's heap (tensorplug_cpu/allocator.py)."""

import os
import subprocess
import sys

import pytest

from tensorplug_cpu import allocator

glibc = pytest.mark.skipif(allocator._libc() is None or not hasattr(allocator._libc(), "mallinfo2"),
                           reason="needs glibc 2.33+ (mallopt and mallinfo2)")

# allocate and free an 8 MiB array once, then print how many free bytes glibc's heap holds
_PROBE = r"""
import ctypes, numpy as np
import tensorplug
class MI(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                 "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MI
from tensorplug_cpu import allocator
a = np.ones(2 * 1024 * 1024, np.float32)
del a
print(allocator._applied[0], libc.mallinfo2().fordblks)
"""


def _probe(**env):
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**os.environ, **env}, capture_output=True,
                         text=True, check=True).stdout.split()
    return out[0] == "True", int(out[1])


@glibc
def test_freed_large_block_stays_in_the_heap():
    applied, free = _probe()
    assert applied
    assert free >= 8 * 1024 * 1024


@glibc
def test_opt_out_keeps_glibc_defaults():
    applied, free = _probe(TENSORPLUG_CPU_MALLOPT="0")
    assert not applied
    assert free < 8 * 1024 * 1024   # the block was mmapped and returned to the system


def test_tune_is_idempotent():
    first = allocator.tune()
    assert allocator.tune() is first
