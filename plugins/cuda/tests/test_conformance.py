"""tensorplug-cuda against the whole conformance suite, op by op and dtype by dtype.

On a CPU it runs in the simulated mode (``make test`` sets ``TENSORPLUG_CUDA_SIMULATE=2``); there it
checks the plugin's dispatch, memory, copy and view code with numpy in cupy's place, not cupy's own
semantics (``plugins/cuda/device_check.sh`` runs it on a GPU).
"""

from tensorplug.testing import conformance_tests

from tensorplug_cuda.testing import REASON, needs_cuda

if REASON is None:
    conformance_tests(globals(), backend="cuda")
else:
    @needs_cuda
    def test_conformance():
        """Stands for the suite where no cuda device can be used (the mark skips it with the reason)."""
        raise AssertionError("unreachable: skipped without a cuda device")
