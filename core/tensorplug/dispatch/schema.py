"""Operator schemas in PyTorch's mini-language.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` parses
into a :class:`FunctionSchema` with typed :class:`Argument` records. Alias
annotations (``Tensor(a!) self``) mark arguments an op writes to; ``*`` starts
keyword-only arguments.
"""

from __future__ import annotations

import re

_BASE_TYPES = {
    "Tensor", "Scalar", "int", "SymInt", "float", "bool", "str", "ScalarType",
    "Device", "Generator", "Layout", "MemoryFormat", "Any",
}

_ARG_RE = re.compile(
    r"^(?P<type>[A-Za-z]+)(?P<alias>\([a-z0-9]+!?\))?(?P<opt1>\?)?"
    r"(?P<list>\[(?P<n>\d*)\])?(?P<opt2>\?)?(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?"
    r"(?:\s*=\s*(?P<default>.+))?$"
)


class SchemaError(ValueError):
    pass


class Argument:
    """One argument or return: ``type`` (base name), ``is_list``, ``list_len``,
    ``optional`` (``T?``), ``elem_optional`` (``Tensor?[]``), ``alias``
    (``"a"``), ``is_write`` (``a!``), ``kwarg_only``, ``default`` and
    ``has_default``."""

    __slots__ = ("name", "type", "is_list", "list_len", "optional", "elem_optional",
                 "alias", "is_write", "kwarg_only", "default", "has_default")

    def __init__(self, name, type, is_list=False, list_len=None, optional=False,
                 elem_optional=False, alias=None, is_write=False, kwarg_only=False,
                 default=None, has_default=False):
        self.name = name
        self.type = type
        self.is_list = is_list
        self.list_len = list_len
        self.optional = optional
        self.elem_optional = elem_optional
        self.alias = alias
        self.is_write = is_write
        self.kwarg_only = kwarg_only
        self.default = default
        self.has_default = has_default

    @property
    def is_tensor(self):
        return self.type == "Tensor"

    def type_str(self):
        s = self.type
        if self.alias:
            s += f"({self.alias}{'!' if self.is_write else ''})"
        if self.elem_optional:
            s += "?"
        if self.is_list:
            s += f"[{self.list_len or ''}]"
        if self.optional:
            s += "?"
        return s

    def __str__(self):
        s = self.type_str()
        if self.name:
            s += " " + self.name
        if self.has_default:
            s += "=" + _default_str(self.default)
        return s


def _default_str(v):
    if v is None:
        return "None"
    if v is True:
        return "True"
    if v is False:
        return "False"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, tuple):
        return "[" + ", ".join(_default_str(x) for x in v) + "]"
    return repr(v)


def _parse_default(text):
    t = text.strip()
    if t == "None":
        return None
    if t == "True":
        return True
    if t == "False":
        return False
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return tuple(_parse_default(x) for x in inner.split(",")) if inner else ()
    if t[0] in "\"'":
        return t[1:-1]
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        pass
    return t  # enum-like names such as contiguous_format


def _split_top(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _parse_arg(text, kwarg_only, is_return=False):
    m = _ARG_RE.match(text.strip())
    if not m:
        raise SchemaError(f"cannot parse argument {text!r}")
    typ = m.group("type")
    if typ not in _BASE_TYPES:
        raise SchemaError(f"unknown type {typ!r} in {text!r}")
    alias = m.group("alias")
    is_write = False
    if alias:
        alias = alias[1:-1]
        if alias.endswith("!"):
            alias, is_write = alias[:-1], True
    is_list = m.group("list") is not None
    n = m.group("n")
    name = m.group("name")
    if not is_return and not name:
        raise SchemaError(f"argument {text!r} has no name")
    default_text = m.group("default")
    return Argument(
        name=name, type=typ, is_list=is_list, list_len=int(n) if n else None,
        optional=bool(m.group("opt2")) if is_list else bool(m.group("opt1") or m.group("opt2")),
        elem_optional=bool(m.group("opt1")) if is_list else False,
        alias=alias, is_write=is_write, kwarg_only=kwarg_only,
        default=_parse_default(default_text) if default_text is not None else None,
        has_default=default_text is not None,
    )


class FunctionSchema:
    """A parsed schema: ``name``, ``overload`` ('' for default), ``arguments``, ``returns``."""

    def __init__(self, name, overload, arguments, returns):
        self.name = name
        self.overload = overload
        self.arguments = arguments
        self.returns = returns

    @property
    def full_name(self):
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def is_mutable(self):
        return any(a.is_write for a in self.arguments)

    @property
    def is_view(self):
        return any(r.alias and not r.is_write for r in self.returns)

    def __str__(self):
        args, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                args.append("*")
                star = True
            args.append(str(a))
        if len(self.returns) == 1 and not self.returns[0].name:
            ret = self.returns[0].type_str()
        else:
            ret = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.full_name}({', '.join(args)}) -> {ret}"


def parse_schema(text: str) -> FunctionSchema:
    """Parse ``name[.overload](args) -> returns``; raises :class:`SchemaError`."""
    text = text.strip()
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\((.*)\)\s*->\s*(.+)$", text)
    if not m:
        raise SchemaError(f"cannot parse schema {text!r}: expected 'name.overload(args) -> returns'")
    name, overload, args_text, ret_text = m.groups()
    arguments, kwarg_only, seen_default = [], False, False
    for part in _split_top(args_text):
        if part == "*":
            kwarg_only = True
            continue
        a = _parse_arg(part, kwarg_only)
        if any(b.name == a.name for b in arguments):
            raise SchemaError(f"duplicate argument name {a.name!r} in {text!r}")
        if not a.kwarg_only:
            if seen_default and not a.has_default:
                raise SchemaError(f"non-default argument {a.name!r} follows a default one in {text!r}")
            seen_default = seen_default or a.has_default
        arguments.append(a)
    ret_text = ret_text.strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        returns = [_parse_arg(p, False, True) for p in _split_top(ret_text[1:-1])]
    else:
        returns = [_parse_arg(ret_text, False, True)]
    return FunctionSchema(name, overload or "", arguments, returns)
