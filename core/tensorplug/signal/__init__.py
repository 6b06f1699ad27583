"""``tensorplug.signal``: signal processing, as ``torch.signal`` (its ``windows`` submodule).

Imported on first use (``tensorplug.signal`` is one of the package's lazy submodules). See docs/special.md.
"""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
