"""Operator schemas in PyTorch's mini-language.

``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` parses
into a :class:`FunctionSchema` with typed :class:`Argument` records. Alias
annotations (``Tensor(a!) self``) mark arguments an op writes to;
``Tensor(a) self ... -> Tensor(a)`` marks a view; ``Tensor(a -> *) self``
says the results may alias ``self`` (``split``). ``*`` starts keyword-only
arguments. ``str(parse_schema(s))`` prints the canonical form, which is
``s`` itself for schemas written the way PyTorch prints them.
"""

from __future__ import annotations

import re

_BASE_TYPES = {
    "Tensor", "Scalar", "int", "SymInt", "float", "bool", "str", "ScalarType", "Device",
    "Generator", "Layout", "MemoryFormat", "Dimname", "Storage", "Stream", "Any",
}
# Types whose defaults may be enum-like names (``ScalarType dtype=long``,
# ``MemoryFormat m=contiguous_format``).
_ENUM_TYPES = {"ScalarType", "Layout", "MemoryFormat", "Device", "Generator", "Dimname", "Any"}

_SET = r"(?:[a-z][a-z0-9]*(?:\|[a-z][a-z0-9]*)*|\*)"
_ARG_RE = re.compile(
    r"^(?P<type>[A-Za-z]+)"
    rf"(?:\((?P<alias>{_SET})(?P<write>!)?(?:\s*->\s*(?P<after>{_SET}))?\))?"
    r"(?P<opt1>\?)?(?P<list>\[(?P<n>\d*)\])?(?P<opt2>\?)?"
    r"(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?(?:\s*=\s*(?P<default>.+))?$"
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAME = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*)::)?([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?$")


class SchemaError(ValueError):
    """A schema string that does not parse, or that Python cannot call."""


class Argument:
    """One argument or return: ``type`` (base name), ``is_list``, ``list_len``,
    ``optional`` (``T?``), ``elem_optional`` (``Tensor?[]``), ``alias``
    (``"a"``), ``is_write`` (``a!``), ``alias_after`` (``"*"`` in
    ``Tensor(a -> *)``), ``kwarg_only``, ``default`` (the Python value) and
    ``has_default``."""

    __slots__ = ("name", "type", "is_list", "list_len", "optional", "elem_optional", "alias",
                 "is_write", "alias_after", "kwarg_only", "default", "has_default", "default_text")

    def __init__(self, name, type, is_list=False, list_len=None, optional=False, elem_optional=False,
                 alias=None, is_write=False, alias_after=None, kwarg_only=False, default=None,
                 has_default=False, default_text=None):
        self.name = name
        self.type = type
        self.is_list = is_list
        self.list_len = list_len
        self.optional = optional
        self.elem_optional = elem_optional
        self.alias = alias
        self.is_write = is_write
        self.alias_after = alias_after
        self.kwarg_only = kwarg_only
        self.default = default
        self.has_default = has_default
        self.default_text = default_text

    @property
    def is_tensor(self):
        return self.type == "Tensor"

    def type_str(self):
        """The type as written in a schema: ``Tensor(a!)``, ``int[1]?``, ``Tensor?[]``."""
        s = self.type
        if self.alias:
            s += f"({self.alias}{'!' if self.is_write else ''}"
            s += f" -> {self.alias_after})" if self.alias_after else ")"
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
            s += "=" + (self.default_text if self.default_text is not None else _default_str(self.default))
        return s

    def __repr__(self):
        return f"Argument({str(self)!r})"


def _default_str(v):
    if v is None or v is True or v is False:
        return str(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, tuple):
        return "[" + ", ".join(_default_str(x) for x in v) + "]"
    return repr(v)


_NUMBER = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")


def _number(t):
    """An int or float literal (as PyTorch's schema lexer reads them; no inf or nan), else None."""
    if not _NUMBER.match(t):
        return None
    try:
        return int(t)
    except ValueError:
        return float(t)


def _parse_scalar_default(t, typ, optional, where):
    """The Python value of one default literal ``t`` for base type ``typ``."""
    if t == "None":
        if not optional:
            raise SchemaError(f"default None for the non-optional argument {where}")
        return None
    if typ == "Tensor":
        raise SchemaError(f"a Tensor argument can only default to None: {where}")
    if typ == "bool":
        if t not in ("True", "False"):
            raise SchemaError(f"invalid bool default {t!r} in {where}")
        return t == "True"
    if typ == "str":
        if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
            return t[1:-1]
        raise SchemaError(f"invalid str default {t!r} in {where} (quote it)")
    if typ in ("int", "SymInt"):
        v = _number(t)
        if not isinstance(v, int):
            raise SchemaError(f"invalid int default {t!r} in {where}")
        return v
    if typ in ("float", "Scalar"):
        if typ == "Scalar" and t in ("True", "False"):
            return t == "True"
        v = _number(t)
        if v is None:
            raise SchemaError(f"invalid numeric default {t!r} in {where}")
        return float(v) if typ == "float" else v
    if typ in _ENUM_TYPES and _IDENT.match(t):
        return t
    raise SchemaError(f"invalid {typ} default {t!r} in {where}")


def _parse_default(text, arg, where):
    t = text.strip()
    if arg.is_list and t != "None":
        if t.startswith("[") and t.endswith("]"):
            inner = t[1:-1].strip()
            parts = [p.strip() for p in inner.split(",")] if inner else []
            return tuple(_parse_scalar_default(p, arg.type, arg.elem_optional, where) for p in parts)
        if arg.list_len is not None:
            # ``int[2] stride=1`` means ``[1, 1]``, as in PyTorch
            return (_parse_scalar_default(t, arg.type, False, where),) * arg.list_len
        raise SchemaError(f"invalid list default {t!r} in {where}")
    return _parse_scalar_default(t, arg.type, arg.optional or arg.elem_optional, where)


def _split_top(s, where):
    """Split ``s`` at top-level commas; raises on unbalanced brackets."""
    parts, depth, cur = [], 0, []
    quote = None
    for ch in s:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                raise SchemaError(f"unbalanced brackets in {where!r}")
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth or quote:
        raise SchemaError(f"unbalanced brackets or quotes in {where!r}")
    last = "".join(cur).strip()
    if last or parts:
        parts.append(last)
    if any(not p for p in parts):
        raise SchemaError(f"empty argument in {where!r}")
    return parts


def _parse_arg(text, kwarg_only, where, is_return=False):
    m = _ARG_RE.match(text.strip())
    if not m:
        raise SchemaError(f"cannot parse {'return' if is_return else 'argument'} {text!r} in {where!r}")
    typ = m.group("type")
    if typ not in _BASE_TYPES:
        raise SchemaError(f"unknown type {typ!r} in {text!r}")
    name = m.group("name")
    if not is_return and not name:
        raise SchemaError(f"argument {text!r} has no name in {where!r}")
    is_list = m.group("list") is not None
    n = m.group("n")
    if m.group("opt1") and not is_list and m.group("opt2"):
        raise SchemaError(f"'??' in {text!r}")
    arg = Argument(
        name=name, type=typ, is_list=is_list, list_len=int(n) if n else None,
        optional=bool(m.group("opt2")) if is_list else bool(m.group("opt1") or m.group("opt2")),
        elem_optional=bool(m.group("opt1")) if is_list else False,
        alias=m.group("alias"), is_write=bool(m.group("write")), alias_after=m.group("after"),
        kwarg_only=kwarg_only)
    default_text = m.group("default")
    if default_text is not None:
        if is_return:
            raise SchemaError(f"a return cannot have a default: {text!r}")
        arg.default = _parse_default(default_text, arg, f"{text!r}")
        arg.has_default = True
        t = default_text.strip()
        arg.default_text = f'"{arg.default}"' if typ == "str" and not is_list and t != "None" else t
    return arg


class FunctionSchema:
    """A parsed schema: ``namespace`` ('' if none), ``name``, ``overload`` (''
    for the default overload), ``arguments`` and ``returns`` (lists of
    :class:`Argument`)."""

    def __init__(self, name, overload, arguments, returns, namespace=""):
        self.namespace = namespace
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
        if len(self.returns) == 1:
            ret = str(self.returns[0])
        else:
            ret = "(" + ", ".join(str(r) for r in self.returns) + ")"
        ns = self.namespace + "::" if self.namespace else ""
        return f"{ns}{self.full_name}({', '.join(args)}) -> {ret}"

    def __repr__(self):
        return f"FunctionSchema({str(self)!r})"


def parse_schema(text: str) -> FunctionSchema:
    """Parse ``[ns::]name[.overload](args) -> returns``; raises :class:`SchemaError`.

    >>> str(parse_schema("neg(Tensor self) -> Tensor"))
    'neg(Tensor self) -> Tensor'
    """
    text = text.strip()
    open_ = text.find("(")
    m = _NAME.match(text[:open_].strip()) if open_ > 0 else None
    if not m:
        raise SchemaError(f"cannot parse schema {text!r}: expected 'name.overload(args) -> returns'")
    namespace, name, overload = m.groups()
    depth, close = 0, -1
    for i in range(open_, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            close = i
            break
    rest = text[close + 1:].strip() if close > 0 else ""
    if not rest.startswith("->") or not rest[2:].strip():
        raise SchemaError(f"cannot parse schema {text!r}: expected '(args) -> returns'")
    arguments, kwarg_only, seen_default = [], False, False
    for part in _split_top(text[open_ + 1:close], text):
        if part == "*":
            if kwarg_only:
                raise SchemaError(f"'*' appears twice in {text!r}")
            kwarg_only = True
            continue
        a = _parse_arg(part, kwarg_only, text)
        if any(b.name == a.name for b in arguments):
            raise SchemaError(f"duplicate argument name {a.name!r} in {text!r}")
        if not a.kwarg_only:
            if seen_default and not a.has_default:
                raise SchemaError(f"non-default argument {a.name!r} follows a default argument in {text!r}")
            seen_default = seen_default or a.has_default
        arguments.append(a)
    ret_text = rest[2:].strip()
    if ret_text.startswith("(") and ret_text.endswith(")"):
        returns = [_parse_arg(p, False, text, True) for p in _split_top(ret_text[1:-1], text)]
    else:
        returns = [_parse_arg(ret_text, False, text, True)]
    return FunctionSchema(name, overload or "", arguments, returns, namespace or "")
