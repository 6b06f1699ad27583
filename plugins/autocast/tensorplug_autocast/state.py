"""Per-thread autocast state, the cast cache, and the key switch.

Each thread has its own state (as PyTorch's thread-local autocast flags): which device types are
enabled with which dtype, whether the cache is on, how deep the regions nest, and the cache of
lower-precision copies of weights. The ``Autocast`` key is in the thread's include set exactly when
some device type is enabled; outside every region the key is off the calls' key sets, so autocast
costs nothing there.
"""

from __future__ import annotations

import threading
import weakref

import tensorplug
from tensorplug.plugin_api import key_bit, lookup_op, set_thread_keys, thread_keys

from .backends import backend_default_dtype

KEY_NAME = "Autocast"
PRIORITY = 32


class _State(threading.local):
    def __init__(self):
        self.enabled = {}        # device type -> bool (absent: False)
        self.dtype = {}          # device type -> dtype set by the user (absent: the default)
        self.active = {}         # device type -> dtype, for the enabled ones: what the kernels read
        self.cache_enabled = True
        self.nesting = 0
        # id(source) -> (weakref to source, source version, grad mode, dtype, cast copy)
        self.cache = {}


STATE = _State()


def refresh_key():
    """Recompute ``STATE.active`` and put the Autocast key in or out of this thread's include set."""
    st = STATE
    st.active = {dev: st.dtype.get(dev) or default_dtype(dev) for dev, on in st.enabled.items() if on}
    try:
        bit = key_bit(KEY_NAME)
    except KeyError:  # the plugin is being disabled: the key is gone already
        return
    inc, exc = thread_keys()
    new = inc | bit if st.active else inc & ~bit
    if new != inc:
        set_thread_keys(new, exc)


def default_dtype(device_type):
    """PyTorch's default autocast dtype: bfloat16 on the CPU, float16 on CUDA; a backend may say."""
    return backend_default_dtype(device_type)


_TO_COPY = [None]


def to_dtype(t, dtype):
    """``t.to(dtype)`` through the ``_to_copy`` operator's entry (no argument parsing of ``Tensor.to``)."""
    entry = _TO_COPY[0]
    if entry is None:
        entry = _TO_COPY[0] = lookup_op("tensorplug::_to_copy").entry
    return entry(t, dtype=dtype)


def cached_cast(t, dtype):
    """``t.to(dtype)``, reusing the copy made earlier in this region for a float32 weight.

    Only float32 leaves that require grad and are not views (weights) are cached, as in PyTorch.
    The entry remembers the weight's version counter and the grad mode it was made under: after an
    in-place update of the weight, or in a no_grad block, the copy is made afresh instead of
    served stale (PyTorch's cache would serve the old copy after ``weight.add_(...)``).
    """
    st = STATE
    if (st.cache_enabled and t._dtype is tensorplug.float32 and t._base is None
            and t.requires_grad and t.grad_fn is None):
        grad_on = tensorplug.is_grad_enabled()
        key = id(t)
        hit = st.cache.get(key)
        if hit is not None and hit[0]() is t and hit[1] == t._version and hit[2] is grad_on and hit[3] is dtype:
            return hit[4]
        out = to_dtype(t, dtype)
        st.cache[key] = (weakref.ref(t), t._version, grad_on, dtype, out)
        return out
    return to_dtype(t, dtype)


def clear_cache():
    """Drop every cached copy of this thread."""
    STATE.cache.clear()


def cache_info():
    """``{"entries": n, "bytes": b}``: the copies this thread's cache holds now."""
    entries = [v[4] for v in STATE.cache.values()]
    return {"entries": len(entries), "bytes": sum(t.numel() * t.element_size() for t in entries)}
