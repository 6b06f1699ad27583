"""The kernel library names only what cupy has: every ``xp.<name>`` (and ``xp.<module>.<name>``) the
CPU kernel modules use exists in the installed cupy. Needs cupy, not a GPU (import cupy works without
one); skipped where cupy is not installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tensorplug_cpu

cupy = pytest.importorskip("cupy", reason="cupy is not installed (pip install 'tensorplug-cuda[cuda13]')")

LIBRARY = Path(tensorplug_cpu.__file__).parent
USE = re.compile(r"(?<![\w.])xp\.([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)")


def _uses():
    found = {}
    for name in tensorplug_cpu.KERNEL_MODULE_NAMES + ("halfcast",):
        text = (LIBRARY / f"{name}.py").read_text()
        for m in USE.finditer(text):
            found.setdefault(m.group(1), set()).add(name)
    return found


def test_every_array_module_name_the_library_uses_exists_in_cupy():
    missing = []
    for chain, modules in sorted(_uses().items()):
        obj = cupy
        for part in chain.split("."):
            if not hasattr(obj, part):
                missing.append(f"xp.{chain} ({', '.join(sorted(modules))})")
                break
            obj = getattr(obj, part)
    assert not missing, "names cupy lacks: " + "; ".join(missing)
