"""The generic autocast kernels: one per listed operator, for every backend at once.

Each kernel is registered at the per-backend ``Autocast`` key for all backends, so a backend gets
autocast without writing any. It finds the device type of the call (its first tensor argument),
asks that device type's policy for the operator's category, casts the eligible arguments, and
redispatches below the key with ``Autocast`` excluded, so the operators it calls inside (a
decomposition's pieces) run as PyTorch's do: without autocast.
"""

from __future__ import annotations

import tensorplug
from tensorplug import Tensor
from tensorplug.plugin_api import exclude_keys

from .policy import BANNED_MESSAGE
from .state import STATE, cached_cast, to_dtype

_F32 = tensorplug.float32
_F64 = tensorplug.float64

POLICIES: dict = {}   # device type -> Policy (filled by the plugin's policy registry)


def _is_floating(t, dev):
    d = t._dtype
    return d.is_floating_point and d is not _F64 and t._device.type == dev


def _cast_arg(a, dev, dtype, cache):
    if a.__class__ is Tensor or isinstance(a, Tensor):
        if a._dtype is dtype or not _is_floating(a, dev):
            return a
        return cached_cast(a, dtype) if cache else to_dtype(a, dtype)
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
        return type(a)(_cast_arg(x, dev, dtype, cache) for x in a)
    return a


def _widest(args, dev, start):
    d = start
    for a in args:
        if isinstance(a, Tensor):
            if _is_floating(a, dev):
                d = tensorplug.promote_types(d, a._dtype)
        elif isinstance(a, (list, tuple)):
            d = _widest(a, dev, d)
    return d


def _first_tensor(args, positions):
    for i in positions:
        a = args[i]
        if isinstance(a, Tensor):
            return a
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            return a[0]
    return None


def make_kernel(op, name, opaque=False):
    """The autocast kernel of ``op`` (whose policy name is ``name``).

    ``opaque``: the op is a decomposition here but a kernel of its own in PyTorch; unlisted, it
    runs with autocast off so its pieces stay in the inputs' dtype, as PyTorch's kernel would.
    """
    args_schema = op.schema.arguments
    positions = [i for i, a in enumerate(args_schema) if a.is_tensor]
    dtype_pos = next((i for i, a in enumerate(args_schema) if a.name == "dtype" and a.type == "ScalarType"), None)
    redispatch = op.redispatch
    no_autocast = exclude_keys("Autocast")
    # the key is declared before_checks: the op's entry left its argument checks to this kernel, which
    # runs them on the arguments as cast (a bfloat16 activation times a float32 weight is legal here)
    check = op.check or (lambda *args: None)

    def autocast_kernel(ks, *args):
        first = _first_tensor(args, positions)
        lower = STATE.active.get(first._device.type) if first is not None else None
        if lower is None:
            check(*args)
            return redispatch(ks, *args)
        dev = first._device.type
        policy = POLICIES.get(dev)
        category = policy.category(name) if policy is not None else None
        if category is None:
            check(*args)
            if opaque:
                with no_autocast:
                    return redispatch(ks, *args)
            return redispatch(ks, *args)
        with no_autocast:
            if category == "lower_precision_fp":
                args = [_cast_arg(a, dev, lower, True) for a in args]
            elif category == "fp32" or category == "fp32_append_dtype":
                args = [_cast_arg(a, dev, _F32, False) for a in args]
            elif category == "promote":
                to = _widest(args, dev, lower)
                args = [_cast_arg(a, dev, to, False) for a in args]
            elif category == "fp32_set_opt_dtype":
                if dtype_pos is not None and args[dtype_pos] is None and _is_floating(first, dev):
                    args = list(args)
                    args[dtype_pos] = _F32
            elif category == "banned":
                raise RuntimeError(BANNED_MESSAGE.get(name.split(".")[0], f"{name} is unsafe to autocast"))
            check(*args)
            return redispatch(ks, *args)

    autocast_kernel.__name__ = f"autocast_{name.replace('.', '_')}"
    return autocast_kernel
