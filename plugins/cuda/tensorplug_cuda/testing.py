"""pytest marks for tests of code on cuda: whether a device can be used here, and why not.

``needs_cuda`` skips without a device (a GPU, or the simulated mode), with the plugin's error as the
reason; ``needs_gpu`` without a real GPU; ``needs_simulation`` outside the simulated mode;
``needs_two`` with fewer than two devices.
"""

from __future__ import annotations

import pytest

import tensorplug as tp


def unavailable_reason():
    """None when a cuda device (a GPU, or the simulated mode) can be used; else the plugin's error text."""
    try:
        tp.zeros(1, device="cuda")
    except (RuntimeError, TypeError) as e:
        return str(e)
    return None


REASON = unavailable_reason()
needs_cuda = pytest.mark.skipif(REASON is not None, reason=f"no cuda device: {REASON}")


def simulated():
    return REASON is None and tp.cuda.is_simulated()


needs_simulation = pytest.mark.skipif(not simulated(), reason="checks the simulated mode's own counters "
                                      "(set TENSORPLUG_CUDA_SIMULATE=N)")
needs_gpu = pytest.mark.skipif(REASON is not None or simulated(), reason="needs a real GPU with cupy "
                               "(the simulated mode keeps device memory on the host)")
needs_two = pytest.mark.skipif(REASON is not None or tp.cuda.device_count() < 2,
                               reason="needs two cuda devices (TENSORPLUG_CUDA_SIMULATE=2 simulates them)")
