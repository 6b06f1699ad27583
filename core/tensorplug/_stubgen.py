"""Generate ``tensorplug/__init__.pyi``, the type stub that lets an IDE or a type
checker see the names that tensorplug builds at import time (the operators'
generated entry functions, the Tensor methods attached by the ops modules).

``python -m tensorplug._stubgen`` rewrites the stub; ``python -m
tensorplug._stubgen --check`` exits 1 and prints a unified diff when the
committed stub differs from what the generator produces. Run it with
``TENSORPLUG_LOAD_PLUGINS=`` (plugins disabled) so names added by plugins stay
out of the stub; ``main`` re-runs itself that way when the variable is not
set to the empty string.

Signatures come from :func:`inspect.signature`; for an operator entry function
the annotations come from its schema (``Tensor?`` -> ``Optional[Tensor]``,
``int[]`` -> ``Sequence[int]``, ...). Defaults are written as ``...``.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import os
import subprocess
import re
import sys
import types
from pathlib import Path

STUB_PATH = Path(__file__).with_name("__init__.pyi")
COMMAND = "python -m tensorplug._stubgen"

HEADER = f"""\
# Generated file: do not edit by hand.
# Regenerate with: TENSORPLUG_LOAD_PLUGINS= {COMMAND}
# (tests/test_stubs.py fails when this file is out of date.)
"""

IMPORTS = """\
import builtins as _builtins
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union
"""

# dunders that define operators or protocols a type checker needs; other private names are skipped
STUB_DUNDERS = frozenset("""
__init__ __len__ __iter__ __getitem__ __setitem__ __delitem__ __contains__ __bool__ __int__ __float__
__index__ __complex__ __hash__ __repr__ __format__ __array__ __dlpack__ __dlpack_device__
__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__
__itruediv__ __floordiv__ __rfloordiv__ __ifloordiv__ __mod__ __rmod__ __imod__ __pow__ __rpow__ __ipow__
__matmul__ __rmatmul__ __imatmul__ __and__ __rand__ __iand__ __or__ __ror__ __ior__ __xor__ __rxor__
__ixor__ __lshift__ __rlshift__ __ilshift__ __rshift__ __rrshift__ __irshift__ __neg__ __pos__ __abs__
__invert__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __enter__ __exit__ __call__
""".split())

# schema base types -> annotations
_SCHEMA_BASE = {
    "Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool", "str": "str",
    "Scalar": "Union[int, float, bool]", "ScalarType": "dtype", "Device": "Union[device, str]",
}

# dunders whose return type is known when the function does not say
_DUNDER_RETURNS = {
    "__len__": "int", "__bool__": "bool", "__int__": "int", "__float__": "float", "__index__": "int",
    "__hash__": "int", "__repr__": "str", "__format__": "str", "__iter__": "Iterator[Tensor]",
    "__getitem__": "Tensor",
}
_TENSOR_DUNDERS = frozenset(f"__{p}{op}__" for p in ("", "r", "i") for op in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
    "rshift")) | {"__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__",
                  "__gt__", "__ge__"}

# names the stub itself rebinds (``tensorplug.int`` is a dtype, ``Tensor.device`` a property): annotations
# reach the builtins and the classes through these aliases
_QUALIFY = {"int": "_builtins.int", "float": "_builtins.float", "bool": "_builtins.bool",
            "str": "_builtins.str", "dtype": "_dtype", "device": "_device"}


def qualify(ann):
    """``ann`` with the names in :data:`_QUALIFY` replaced by their aliases."""
    return re.sub(r"(?<![.\w])(int|float|bool|str|dtype|device)\b", lambda m: _QUALIFY[m.group(1)], ann)

# modules whose functions all return a Tensor (the factories carry no annotations)
_TENSOR_RETURNING_MODULES = ("tensorplug.ops.factories",)

# submodules the stub always names, imported or not
_SUBMODULES = ("autograd", "func", "library", "nn", "optim", "plugin_api", "plugins", "testing", "utils")

# annotations of properties whose getters carry none
_PROPERTY_TYPES = {
    "shape": "Tuple[int, ...]", "dtype": "dtype", "device": "device", "requires_grad": "bool",
    "grad": "Optional[Tensor]", "grad_fn": "Any", "is_leaf": "bool", "ndim": "int", "data": "Tensor",
    "T": "Tensor", "mT": "Tensor", "H": "Tensor", "mH": "Tensor", "is_cpu": "bool", "itemsize": "int",
    "nbytes": "int", "names": "Any", "layout": "Any", "is_cuda": "bool",
}

# names an annotation found by inspect may use and still be valid in the stub
_KNOWN_NAMES = frozenset("Any Callable Dict Iterator List Optional Sequence Tuple Union Tensor dtype device "
                         "int float bool str bytes None object tuple list dict".split())


def schema_type(arg, is_return=False):
    """The Python annotation for a schema :class:`Argument`."""
    base = _SCHEMA_BASE.get(arg.type)
    if base is None:
        return "Any"
    if arg.is_list:
        elem = f"Optional[{base}]" if arg.elem_optional else base
        base = f"List[{elem}]" if is_return else f"Sequence[{elem}]"
    if arg.optional:
        base = f"Optional[{base}]"
    return base


def schema_return(schema):
    """The return annotation for a :class:`FunctionSchema`."""
    rets = schema.returns
    if not rets:
        return "None"
    if len(rets) == 1:
        return schema_type(rets[0], is_return=True)
    return "Tuple[" + ", ".join(schema_type(r, is_return=True) for r in rets) + "]"


def _annotation(ann):
    """An annotation found by :func:`inspect.signature` as stub text, or None
    when it is absent or names something the stub does not know."""
    if ann is inspect.Parameter.empty:
        return None
    if not isinstance(ann, str):
        if ann is None or ann is type(None):
            return "None"
        ann = getattr(ann, "__name__", None) if isinstance(ann, type) else None
        if ann is None:
            return None
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", ann))
    if not names <= _KNOWN_NAMES:
        return None
    return ann


def _schema_of(fn):
    op = getattr(fn, "_op", None)
    return getattr(op, "schema", None)


def render_signature(fn, as_method=False):
    """``(params) -> ret`` for ``fn``: ``self`` first when ``as_method``; a
    catch-all ``(*args, **kwargs)`` when no signature can be found."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        schema = _schema_of(fn)
        ret = schema_return(schema) if schema is not None else "Any"
        params = "(self, *args: Any, **kwargs: Any)" if as_method else "(*args: Any, **kwargs: Any)"
        return f"{params} -> {qualify(ret)}"
    schema = _schema_of(fn)
    by_name = {}
    if schema is not None:
        by_name = {a.name: a for a in schema.arguments}
        by_name.update({a.name + "_": a for a in schema.arguments})
    params = list(sig.parameters.values())
    parts = []
    if as_method:
        if params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
            first = params.pop(0)
            parts.append("self")
            if first.kind is first.POSITIONAL_ONLY and not any(p.kind is p.POSITIONAL_ONLY for p in params):
                parts.append("/")
        else:
            parts.append("self")
    star_done = False
    last_posonly = None
    for p in params:
        if p.kind is p.POSITIONAL_ONLY:
            last_posonly = len(parts)
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        ann = schema_type(by_name[p.name]) if p.name in by_name else _annotation(p.annotation)
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text = "*" + p.name
            star_done = True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        if ann is not None:
            text += f": {qualify(ann)}"
        if p.default is not p.empty:
            text += " = ..." if ann is not None else "=..."
        parts.append(text)
    if last_posonly is not None:
        parts.insert(last_posonly + 1, "/")
    if schema is not None:
        ret = schema_return(schema)
    else:
        ret = _annotation(sig.return_annotation) or "Any"
        if ret == "Any" and getattr(fn, "__module__", None) in _TENSOR_RETURNING_MODULES:
            ret = "Tensor"
    return f"({', '.join(parts)}) -> {qualify(ret)}"


def _public_members(cls):
    """Names of ``cls`` that go into its class stub, sorted."""
    names = []
    for name in sorted(dir(cls)):
        if name.startswith("_") and name not in STUB_DUNDERS:
            continue
        owner = next((c for c in cls.__mro__ if name in vars(c)), None)
        if owner is None or owner is object:
            continue
        names.append((name, vars(owner)[name]))
    return names


def class_stub(cls, name=None, stubbed=()):
    """The stub text of a class: its properties, methods and plain attributes
    (inherited ones too; a base appears only when it is in ``stubbed``)."""
    name = name or cls.__name__
    bases = [b.__name__ for b in cls.__bases__ if b.__name__ in stubbed]
    head = f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"
    lines = [head]
    for attr, raw in _public_members(cls):
        if isinstance(raw, property):
            ann = _PROPERTY_TYPES.get(attr)
            if ann is None and raw.fget is not None:
                try:
                    ann = _annotation(inspect.signature(raw.fget).return_annotation)
                except (TypeError, ValueError):
                    ann = None
            ann = qualify(ann or "Any")
            lines.append("    @property")
            lines.append(f"    def {attr}(self) -> {ann}: ...")
            if raw.fset is not None:
                lines.append(f"    @{attr}.setter")
                lines.append(f"    def {attr}(self, value: {ann}) -> None: ...")
        elif isinstance(raw, staticmethod):
            lines.append("    @staticmethod")
            lines.append(f"    def {attr}{render_signature(raw.__func__)}: ...")
        elif isinstance(raw, classmethod):
            lines.append("    @classmethod")
            sig = render_signature(raw.__func__, as_method=True).replace("(self", "(cls", 1)
            lines.append(f"    def {attr}{sig}: ...")
        elif callable(raw) or isinstance(raw, (types.MethodDescriptorType, types.WrapperDescriptorType)):
            if raw is None:
                continue
            sig = render_signature(raw, as_method=True)
            params, ret = sig.rsplit(" -> ", 1)
            if attr == "__init__":
                ret = "None"
            elif ret == "Any" and attr in _DUNDER_RETURNS:
                ret = qualify(_DUNDER_RETURNS[attr])
            elif ret == "Any" and attr in _TENSOR_DUNDERS and cls.__name__ == "Tensor":
                ret = "Tensor"
            # Tensor comparisons return a Tensor, not the bool that object's say
            ignore = "  # type: ignore[override]" if attr in ("__eq__", "__ne__") else ""
            lines.append(f"    def {attr}{params} -> {ret}: ...{ignore}")
        elif attr == "__hash__" and raw is None:
            lines.append("    __hash__: None  # type: ignore[assignment]")
        elif not attr.startswith("_"):
            lines.append(f"    {attr}: {_value_type(raw)}")
    if len(lines) == 1:
        lines.append("    ...")
    return "\n".join(lines) + "\n"


def _value_type(value):
    for t in (bool, int, float, str):
        if type(value) is t:
            return qualify(t.__name__)
    return "Any"


def generate():
    """The text of ``__init__.pyi`` for the tensorplug imported in this process."""
    import tensorplug  # lazy: the generator describes the package as imported when it runs
    from tensorplug.dtypes import dtype as dtype_cls

    modules, dtypes_, classes, functions, others = [], [], [], [], []
    for name in sorted(tensorplug.__all__):
        value = getattr(tensorplug, name)
        if isinstance(value, types.ModuleType):
            modules.append(name)
        elif isinstance(value, dtype_cls):
            dtypes_.append(name)
        elif isinstance(value, type):
            classes.append((name, value))
        elif callable(value):
            functions.append((name, value))
        else:
            others.append((name, value))
    # the classes the annotations refer to are always stubbed, under their own names
    for needed in ("Tensor", "dtype", "device"):
        if needed not in {n for n, _ in classes}:
            classes.append((needed, getattr(tensorplug, needed)))
    # dtype and device first: the aliases the annotations use follow them
    classes.sort(key=lambda nc: (nc[0] not in ("dtype", "device"), nc[0]))
    stubbed = {n for n, _ in classes}

    out = [HEADER, IMPORTS, "\n"]
    for m in sorted(set(modules) | set(_SUBMODULES)):
        # an alias such as tensorplug.library is imported from where its module lives
        real = getattr(sys.modules.get(f"tensorplug.{m}"), "__name__", f"tensorplug.{m}")
        parent, _, leaf = real.rpartition(".")
        out.append(f"from {parent.replace('tensorplug', '', 1) or '.'} import {leaf} as {m}\n")
    out.append("\n")
    for name, cls in classes:
        if cls.__name__ != name and cls.__name__ in stubbed:
            out.append(f"{name} = {cls.__name__}\n\n")
        else:
            out.append(class_stub(cls, name, stubbed) + "\n")
        if name == "dtype":  # sorted after device
            out.append("_dtype = dtype\n_device = device\n\n")
    out.extend(f"{d}: dtype\n" for d in dtypes_)
    out.append("\n")
    for name, value in others:
        out.append(f"{name}: {_value_type(value)}\n")
    out.append("\n")
    for name, fn in functions:
        out.append(f"def {name}{render_signature(fn)}: ...\n")
    text = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def main(argv=None):
    """Write the stub, or with ``--check`` compare it with the committed file."""
    parser = argparse.ArgumentParser(prog=COMMAND, description="Generate tensorplug/__init__.pyi.")
    parser.add_argument("--check", action="store_true", help="exit 1 with a diff if the stub is out of date")
    parser.add_argument("--output", type=Path, default=STUB_PATH, help="where the stub goes")
    args = parser.parse_args(argv)
    if os.environ.get("TENSORPLUG_LOAD_PLUGINS") != "":
        # `python -m` imported tensorplug (and its plugins) before this line: start over without them
        env = dict(os.environ, TENSORPLUG_LOAD_PLUGINS="")
        return subprocess.call([sys.executable, "-m", "tensorplug._stubgen", *sys.argv[1:]], env=env)
    text = generate()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current == text:
            return 0
        sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), text.splitlines(True),
                                                   str(args.output), "generated"))
        print(f"\n{args.output} is out of date: run `{COMMAND}`", file=sys.stderr)
        return 1
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
