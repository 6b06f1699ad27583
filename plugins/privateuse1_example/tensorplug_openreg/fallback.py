"""The boxed CPU fallback: every operator without a native openreg kernel runs on the CPU.

Tensor arguments are downloaded to host tensors, the operator runs on the CPU
backend, results are uploaded to the device the arguments came from, and
arguments the operator wrote in place are copied back into their device
memory (``tensorplug.plugin_api.run_on_host``, given openreg's copies). Each
operator warns once, so a user sees what is not native.
"""

from __future__ import annotations

from tensorplug.plugin_api import run_on_host, warn_user

from . import _C
from . import backend as _b

_warned: set = set()


def warn_once(qualname, detail=""):
    """The once-per-operator warning that ``qualname`` left the device."""
    if qualname not in _warned:
        _warned.add(qualname)
        warn_user(f"{qualname} is not implemented natively for 'openreg'{detail}; falling back to the CPU")


def _copy_back(t, host):
    # the host copy is dense and in the original's shape; upload follows the original's strides
    _C.upload(t._data, _b.host_bytes(host._data))


def run_on_cpu(op, args):
    """Run ``op`` on host copies of ``args``; results and in-place writes come back to the device."""
    return run_on_host(op, args, "openreg", download=lambda t: _b.download(t._data),
                       upload=lambda values, dtype, dev: _b.upload(values, dev.index, dtype), copy_back=_copy_back,
                       default_device=lambda: _b.DEVICES[_b.current_device()])


def cpu_fallback(op, keyset, *args):
    """The boxed fallback registered for every operator at openreg's Dense key."""
    warn_once(op.qualname)
    return run_on_cpu(op, args)
