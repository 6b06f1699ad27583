"""A cache of the code objects the core generates (operator entries, autograd kernels and formulas).

Defining an operator generates Python functions from its schema; compiling their source is most of
``import tensorplug``'s time. Like Python's own ``.pyc`` files, the compiled code is kept in the
package's ``__pycache__`` (one marshal file per interpreter version), keyed by the exact source and
file name, so a later import compiles only what changed. The file is written once, at the end of
``import tensorplug``, atomically (a temporary file renamed over it), and only when something new was
compiled and Python may write bytecode (``sys.dont_write_bytecode``, ``PYTHONDONTWRITEBYTECODE``).
A missing, unreadable or corrupt file is ignored: everything is compiled as if there were none.
"""

from __future__ import annotations

import marshal
import os
import sys
import tempfile

_DIR = os.path.join(os.path.dirname(__file__), "__pycache__")
_PATH = os.path.join(_DIR, f"generated.{sys.implementation.cache_tag}.marshal")
_MAGIC = b"tensorplug-codecache-1\n"

_cache = None        # (source, filename) -> code object, loaded on first use
_used = {}           # what this process compiled or took from the cache
_new = [False]
_counts = {"compiled": 0, "cached": 0}


def _load():
    global _cache
    _cache = {}
    try:
        with open(_PATH, "rb") as f:
            data = f.read()
        if data.startswith(_MAGIC):
            table = marshal.loads(data[len(_MAGIC):])
            if isinstance(table, dict):
                _cache = table
    except (OSError, ValueError, EOFError, TypeError):
        _cache = {}
    return _cache


def compiled(src, filename):
    """``compile(src, filename, "exec")``, from the cache when the same source was compiled before."""
    cache = _cache if _cache is not None else _load()
    key = (src, filename)
    code = cache.get(key)
    if code is None:
        code = compile(src, filename, "exec")
        _new[0] = True
        _counts["compiled"] += 1
    else:
        _counts["cached"] += 1
    _used[key] = code
    return code


def stats():
    """``{"compiled": n, "cached": m}``: the code objects this process compiled and took from the cache."""
    return dict(_counts)


def save():
    """Write the code compiled so far, if anything was new and bytecode may be written."""
    if not _new[0] or sys.dont_write_bytecode:
        return
    _new[0] = False
    try:
        os.makedirs(_DIR, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=_DIR, prefix=".generated.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + marshal.dumps(dict(_used)))
            os.chmod(tmp, 0o644)  # readable by all, as .pyc files are (mkstemp makes it private)
            os.replace(tmp, _PATH)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:  # a read-only installation: compile every time, as without the cache
        pass
