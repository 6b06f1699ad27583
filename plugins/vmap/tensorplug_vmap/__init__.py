"""tensorplug-vmap: auto-vectorization under a ``Batched`` dispatch key.

The plugin declares the ``Batched`` functionality key (priority 20: below
Autograd, above Dense; see docs/vmap.md for why), a kernel per op with a
batching rule (rules.py), a boxed loop-and-stack fallback for the rest, and
``tensorplug.vmap``. ``tensorplug.func.vmap``, ``jacrev`` and ``hessian``
build on it.
"""

from __future__ import annotations

import tensorplug
from tensorplug.plugin_api import FunctionalityKey, lookup_op, operators

from . import batched
from .api import vmap, register_batching_rule
from .batched import BatchedTensor, is_batched
from .kernel import fallback, make_kernel
from .rules import RULES, rule_for
from . import rules_linalg  # noqa: F401  (registers the linalg primitives' rules in RULES)
from . import rules_conv  # noqa: F401  (adds the convolutions' rules to RULES)
from . import rules_math  # noqa: F401  (adds its rules to RULES)
from . import rules_special_more  # noqa: F401  (frexp and the histogram kernel)

__version__ = "0.2.0"
TENSORPLUG_API = (1, 0)  # the plugin API this plugin is written for (tensorplug.plugin_api)


@tensorplug.hookimpl
def tensorplug_functionality_keys():
    key = FunctionalityKey(batched.KEY_NAME, batched.PRIORITY, composite=True)
    batched._BIT[0] = key.bit
    return [key]


@tensorplug.hookimpl
def tensorplug_register_kernels(library):
    libs = {"tensorplug": library("tensorplug", "IMPL")}
    for name in RULES:
        lookup_op(f"tensorplug::{name}")  # every named rule is for an op that exists
    # every op with a rule, named in RULES or given by its tags (ops defined later get theirs
    # through the fallback)
    for op in operators().values():
        rule = rule_for(op)
        if rule is not None:
            lib = libs.get(op.namespace) or libs.setdefault(op.namespace, library(op.namespace, "IMPL"))
            lib.impl(op, make_kernel(op, rule), batched.KEY_NAME)
    libs["tensorplug"].fallback(fallback, batched.KEY_NAME)


@tensorplug.hookimpl
def tensorplug_namespace():
    return {"vmap": vmap}


@tensorplug.hookimpl
def tensorplug_conformance():
    from .conformance import register, XFAIL  # lazy: the cases load only when the conformance kit asks
    register()
    return {"transform": "vmap", "backend": "cpu", "xfail": dict(XFAIL)}


__all__ = ["vmap", "register_batching_rule", "BatchedTensor", "is_batched"]
