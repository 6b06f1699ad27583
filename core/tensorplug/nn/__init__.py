"""``tensorplug.nn``: modules, layers, losses, ``functional``, ``init`` and ``utils``, as in ``torch.nn``.

Every layer is a composite of public tensor ops, so it runs on any backend
and autograd differentiates it through its decomposition. See docs/nn.md.
"""

from .parameter import Parameter, Buffer
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, utils
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", "DataParallel"] + list(_modules_all)
