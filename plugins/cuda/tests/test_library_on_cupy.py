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
    for name in tensorplug_cpu.KERNEL_MODULE_NAMES + ("halfcast", "erf_cody"):
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


def test_every_keyword_the_library_passes_to_an_xp_function_is_one_cupys_accepts():
    import ast
    import inspect
    wrong = []
    for name in tensorplug_cpu.KERNEL_MODULE_NAMES + ("halfcast", "erf_cody"):
        for node in ast.walk(ast.parse((LIBRARY / f"{name}.py").read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.keywords):
                continue
            chain, f = [], node.func
            while isinstance(f, ast.Attribute):
                chain.append(f.attr)
                f = f.value
            if not (isinstance(f, ast.Name) and f.id == "xp"):
                continue
            obj = cupy
            for part in reversed(chain):
                obj = getattr(obj, part, None)
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):  # ufuncs and C functions without a signature
                continue
            if any(p.kind is p.VAR_KEYWORD for p in params.values()):
                continue
            wrong += [f"{name}.py:{node.lineno} xp.{'.'.join(reversed(chain))}({kw.arg}=)" for kw in node.keywords
                      if kw.arg and kw.arg not in params]
    assert not wrong, "keywords cupy does not take: " + "; ".join(wrong)
