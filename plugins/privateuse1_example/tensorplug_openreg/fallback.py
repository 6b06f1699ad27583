"""The boxed CPU fallback: every operator without a native openreg kernel runs on the CPU.

Tensor arguments are downloaded to host tensors, the operator runs on the CPU
backend, results are uploaded to the device the arguments came from, and
arguments the operator wrote in place are copied back into their device
memory. Each operator warns once, so a user sees what is not native.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import Tensor, warn_user, wrap, key_set, written_arguments

from . import _C
from . import backend as _b

CPU = tensorplug.device("cpu")
_warned: set = set()


def warn_once(qualname, detail=""):
    """The once-per-operator warning that ``qualname`` left the device."""
    if qualname not in _warned:
        _warned.add(qualname)
        warn_user(f"{qualname} is not implemented natively for 'openreg'{detail}; falling back to the CPU")


def _device_of(args, qualname):
    """The one openreg device among the arguments (PyTorch's error if there are two)."""
    found = None
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            dev = x._device if isinstance(x, Tensor) else (x if isinstance(x, tensorplug.device) else None)
            if dev is None or dev.type != "openreg" or (isinstance(x, Tensor) and x._wrapped_number):
                continue
            if found is None:
                found = dev
            elif dev is not found:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"{found} and {dev}! (when checking arguments for {qualname})")
    return found


def _to_host(x, copies):
    if isinstance(x, Tensor):
        if x._device.type != "openreg":
            return x
        host = wrap(_b.download(x._data), x._dtype, CPU)
        host._wrapped_number = x._wrapped_number
        copies[id(host)] = (host, x)
        return host
    if isinstance(x, (list, tuple)):
        return type(x)(_to_host(v, copies) for v in x)
    if isinstance(x, tensorplug.device) and x.type == "openreg":
        return CPU
    return x


def _to_device(x, copies, device):
    if isinstance(x, Tensor):
        if id(x) in copies:  # an argument written in place: the device original is the result
            return copies[id(x)][1]
        return wrap(_b.upload(x._data, device.index, x._dtype), x._dtype, device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v, copies, device) for v in x)
    return x


def run_on_cpu(op, args):
    """Run ``op`` on host copies of ``args``; results and in-place writes come back to the device."""
    device = _device_of(args, op.qualname) or _b.DEVICES[_b.current_device()]
    copies: dict = {}
    host_args = [_to_host(a, copies) for a in args]
    out = op.redispatch(key_set("cpu"), *host_args)
    for i in written_arguments(op):
        for host in (host_args[i] if isinstance(host_args[i], (list, tuple)) else (host_args[i],)):
            if isinstance(host, Tensor) and id(host) in copies:
                # the host copy is dense and in the original's shape; upload follows the original's strides
                _C.upload(copies[id(host)][1]._data, _b.host_bytes(host._data))
    return _to_device(out, copies, device)


def cpu_fallback(op, keyset, *args):
    """The boxed fallback registered for every operator at openreg's Dense key."""
    warn_once(op.qualname)
    return run_on_cpu(op, args)
