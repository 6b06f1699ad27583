"""``OptimizedModule``: what :func:`tensorplug.compile` returns for an ``nn.Module``.

As PyTorch's: the original module is ``_orig_mod`` (so ``state_dict`` keys carry the
``_orig_mod.`` prefix, as they do with ``torch.compile``), ``parameters()``, ``train()``,
``eval()`` and ``to()`` reach it, other attributes are looked up on it, and calling the wrapper
runs the compiled ``_orig_mod.__call__``.
"""

from __future__ import annotations

from tensorplug import nn


class OptimizedModule(nn.Module):
    """A compiled module: ``_orig_mod`` plus the compiled call (``_compiled_call``)."""

    def __init__(self, mod, compiled_call):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = compiled_call

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)
