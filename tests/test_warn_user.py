"""warn_user attributes a warning raised inside a dispatch to the user's line."""

from __future__ import annotations

import inspect
import warnings

import tensorplug as tp
from tensorplug.library import Library, warn_user


def test_library_is_importable_as_a_module():
    assert Library is tp.library.Library and warn_user is tp.library.warn_user


def _internal_kernel():
    """A kernel whose code counts as tensorplug's (its file name starts with <tensorplug), as a plugin's does."""
    ns = {"warn_user": warn_user}
    exec(compile("def kernel(x):\n    warn_user('slow path taken')\n    return x\n", "<tensorplug test kernel>",
                 "exec"), ns)
    return ns["kernel"]


def test_a_kernel_warning_names_the_callers_line(make_library):
    make_library("warntest", "DEF").define("f(Tensor x) -> Tensor")
    make_library("warntest", "IMPL", "CPU").impl("f", _internal_kernel())
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        tp.ops.warntest.f(tp.ones(2))  # kernel -> generated entry -> here
    assert [str(w.message) for w in rec] == ["slow path taken"]
    assert (rec[0].filename, rec[0].lineno, rec[0].category) == (__file__, line, UserWarning)
