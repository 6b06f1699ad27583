"""``tensorplug.backends``: the switches of ``torch.backends`` (``cuda``, ``cudnn``, ``mps``, ``mkldnn``).

They are plain settings: a backend plugin that honours one reads it (for
instance ``tensorplug.backends.cuda.matmul.allow_tf32``) when it runs a
kernel. The ``is_available()`` functions ask the registered backends. See
docs/runtime.md.
"""

from __future__ import annotations

from . import cuda, cudnn, mps, mkldnn

__all__ = ["cuda", "cudnn", "mps", "mkldnn"]
