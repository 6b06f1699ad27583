"""tensorplug-compile: capture a function's kernel calls once, replay them without dispatch.

The plugin declares the ``Compile`` functionality key (priority 10: just above Dense, below every
transform) and a boxed fallback for it that records each backend kernel call while a compiled
function is traced (trace.py). A trace becomes a program with guards and generated straight-line
code (program.py); ``tensorplug.compile`` and ``tensorplug.compiler`` are in api.py.
See docs/compile.md.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import FunctionalityKey

from . import api, trace
from .api import compile, reset, explain, disable, CompiledFunction, ExplainOutput, is_compiling

__version__ = "0.1.0"
TENSORPLUG_API = (1, 3)  # the plugin API this plugin is written for (tensorplug.plugin_api)


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    return [FunctionalityKey(trace.KEY_NAME, trace.PRIORITY)]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    library("tensorplug", "IMPL").fallback(trace.trace_fallback, trace.KEY_NAME)


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"compile": api.compile, "compiler": api}


@tensorplug.hookimpl
def tensorplug_conformance():
    from .conformance import register, XFAIL  # lazy: the cases load only when the conformance kit asks
    register()
    return {"transform": "compile", "backend": "cpu", "xfail": dict(XFAIL)}


__all__ = ["compile", "reset", "explain", "disable", "CompiledFunction", "ExplainOutput", "is_compiling"]
