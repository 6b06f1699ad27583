"""Backward formulas and the Autograd kernels built from them.

A formula is registered next to its op's definition::

    @derivative("mul.Tensor")
    def _(grad, self, other):
        return grad * other, grad * self

Its first parameter receives the output gradient (``grads``: a tuple, for ops
with several differentiable outputs); every other parameter names a schema
argument or ``result`` (the op's output; ``result1`` the second), which the
node saves at forward time, so a node keeps exactly what its formula reads
(``<argument>_shape`` and ``<argument>_strides`` keep only that of a tensor argument).
It returns one gradient per Tensor argument in schema order (a list for a
``Tensor[]`` argument; ``None`` where there is none; a bare value when the op
has one Tensor argument). Formulas are written with tensor ops, so under
``create_graph=True`` they are themselves recorded and give higher-order
gradients.

For each formula the core generates one Autograd kernel (for every backend),
specialised to the op's schema like the dispatcher's entry functions: when no
input requires grad it only redispatches; otherwise it records a node with
the edges, input metadata and saved values. Tensors that do not require grad
never reach it (their key set lacks the Autograd bit), nor does anything
under ``no_grad``.
"""

from __future__ import annotations

from .. import _codecache

import inspect
import traceback
import weakref

from .. import dtypes as _dt
from ..dispatch.keys import Autograd
from ..dispatch import dispatcher as _d
from ..dispatch.dispatcher import _tls
from ..dispatch.library import Library, owner_scope
from ..tensor import Tensor, make_tensor as _make_tensor
from . import _ops
from .graph import Node, AccumulateGrad, gradient_edge, leaf_edge, _seq, _anomaly, _type_name
from .views import check_inplace_write, rebase_history, register_view, regenerate_views

_new = object.__new__

_BIT = Autograd.bit
FORMULAS: dict = {}  # qualified op name -> FormulaInfo
_NO_EDGE = (None, 0)
_NO_META = ((), None, None)
_LOOKUP = "\0lookup\0"  # marks where a generated kernel finds the kernel below Autograd

# kinds of saved values
_VALUE, _INPUT, _OUTPUT, _LIST, _SNAPSHOT, _SHAPE, _STRIDES = range(7)

_SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.strip("_").split("_"))


def _modified_error(t, saved_version, what):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{_type_name(t)} {list(t._shape)}], which is {what}, is at version {t._version}; expected version "
        f"{saved_version} instead. Hint: the backtrace further above can point to the operation that failed to "
        "compute its gradient. The variable in question was changed in there or anywhere later. Good luck!")


def save_output(t):
    """``(alias, version)`` for an output its own node keeps: an alias without history that shares the
    output's storage, not the output itself (which holds the node: a reference cycle).

    Backward reads the alias as it is; with grad mode on (``create_graph``) it is rebuilt with the
    node as grad_fn, so double backward sees the graph through it.
    """
    if t.__class__ is not Tensor:
        alias = getattr(t, "_alias_without_history", None)
        if alias is not None:
            # a transform's wrapper (vmap's batched tensor) has no native array of its own
            return (alias(), t._version)
    st = t._storage
    if st is None:
        st = t._get_storage()
    a = _new(Tensor)
    a._data = t._data
    a._shape = t._shape
    a._dtype = t._dtype
    a._device = t._device
    a._ks = t._ks & ~_BIT
    a._storage = st
    return (a, st.version)


def unpack_output(v, node, output_nr, differentiable):
    a, version = v
    if a._version != version:
        raise _modified_error(a, version, f"output {output_nr} of {node.name()}")
    if not differentiable or _tls.exclude & _BIT or a._dtype.category < _dt.FLOATING:
        return a
    if a.__class__ is Tensor:
        out = _make_tensor(a._data, a._dtype, a._device, a._ks | _BIT)
        out._storage = a._storage
    else:
        out = a._alias_without_history()
        out._ks |= _BIT
    out._requires_grad = True
    out._grad_fn = node
    out._output_nr = output_nr
    return out


def _unpack_input(v):
    t, version = v
    if t._version != version:
        fn = t._grad_fn
        raise _modified_error(t, version, f"output {t._output_nr} of {fn.name()}" if fn is not None else "a leaf")
    return t


class FormulaNode(Node):
    """A node whose backward is a registered formula; one subclass per op (``MulBackward0``)."""

    __slots__ = ("_saved",)
    # made by the generated kernels, which set every field: calling the class without Node's
    # __init__ costs a third less than object.__new__(cls)
    __init__ = object.__init__

    _info = None
    _slots = None      # per Tensor argument: 0, or the length of a Tensor[] argument (set per call for lists)
    _out_meta = None   # outputs' (shape, dtype, device), for ops with several outputs

    def apply(self, grads):
        info = self._info
        saved = self._saved
        if saved is None:
            raise RuntimeError(_SECOND_TIME)
        vals = []
        for (kind, p), v in zip(info.saves, saved):
            if kind == _VALUE or kind == _SHAPE or kind == _STRIDES:
                vals.append(v)
            elif kind == _INPUT or kind == _SNAPSHOT:
                vals.append(_unpack_input(v) if v is not None else None)
            elif kind == _OUTPUT:
                vals.append(unpack_output(v, self, p, p not in info.nondiff_outputs))
            else:
                vals.append([_unpack_input(x) if x is not None else None for x in v])
        if info.wants_needs:
            vals.append(self._needs())
        om = self._out_meta
        if info.multi_grad:
            out = info.formula(tuple(_zeros_if_none(g, m) for g, m in zip(grads, om)), *vals)
        else:
            out = info.formula(_zeros_if_none(grads[0], om[0]) if om is not None else grads[0], *vals)
        if info.n_tensor_args == 1:
            out = (out,)
        slots = self._slots
        if slots is None:
            return tuple(out)
        flat = []
        for slot, g in zip(slots, out):
            if slot:
                flat.extend(g if g is not None else [None] * slot)
            else:
                flat.append(g)
        return tuple(flat)

    def _needs(self):
        """Per Tensor argument: does any of its inputs have an edge (need a gradient)?"""
        edges = self.next_functions
        slots = self._slots
        if slots is None:
            return tuple(e[0] is not None for e in edges)
        out, i = [], 0
        for slot in slots:
            k = slot or 1
            out.append(any(e[0] is not None for e in edges[i:i + k]))
            i += k
        return tuple(out)

    def release(self):
        self._saved = None


def _zeros_if_none(g, meta):
    if g is not None or meta is None:
        return g
    shape, dtype, device = meta
    return _ops.zeros(shape, dtype, device)


def _lazy_apply(info):
    """Installs the generated ``apply`` on the node class at its first backward (not at import)."""
    def apply(self, grads):
        fast = _fast_apply(info)
        info.node_class.apply = fast
        return fast(self, grads)
    return apply


def _fast_apply(info):
    """``apply`` generated for the common case (one output, no Tensor[] argument):
    saved values unpacked inline and the formula called positionally."""
    lines = ["def apply(self, grads):", "    s = self._saved", "    if s is None:",
             "        raise RuntimeError(_SECOND_TIME)"]
    args = ["grads[0]"]
    diff = 0 not in info.nondiff_outputs
    for i, kind in enumerate(info.save_kinds):
        if kind in (_VALUE, _SHAPE, _STRIDES):
            args.append(f"s[{i}]")
        elif kind == _OUTPUT:
            # the alias as it is unless grad mode is on (create_graph) and the output is differentiable
            lines.append(f"    o{i}, ver{i} = s[{i}]")
            fast = f"o{i}._version == ver{i}" + (" and _tls.exclude & _BIT" if diff else "")
            lines.append(f"    if not ({fast}):")
            lines.append(f"        o{i} = _unpack_output(s[{i}], self, 0, {diff})")
            args.append(f"o{i}")
        else:
            lines.append(f"    v{i} = s[{i}]")
            lines.append(f"    if v{i} is not None:")
            lines.append(f"        t{i}, ver{i} = v{i}")
            lines.append(f"        v{i} = t{i} if t{i}._version == ver{i} else _unpack_input(v{i})")
            args.append(f"v{i}")
    if info.wants_needs:
        n = info.n_tensor_args
        lines.append("    e = self.next_functions")
        args.append("(" + "".join(f"e[{k}][0] is not None, " for k in range(n)) + ")")
    call = f"_formula({', '.join(args)})"
    lines.append(f"    return ({call},)" if info.n_tensor_args == 1 else f"    return tuple({call})")
    ns = {"_formula": info.formula, "_unpack_input": _unpack_input, "_unpack_output": unpack_output,
          "_SECOND_TIME": _SECOND_TIME, "_tls": _tls, "_BIT": _BIT}
    exec(_codecache.compiled("\n".join(lines) + "\n", f"<backward {info.op.qualname}>"), ns)
    return ns["apply"]


class FormulaInfo:
    """What the generated kernel and the node need to know about one formula."""

    def __init__(self, op, formula, nondiff_outputs=(), uses=None):
        self.op = op
        self.uses = dict(uses or {})  # saved name -> Tensor arguments whose gradients read it
        self.formula = formula
        schema = op.schema
        params = list(inspect.signature(formula).parameters)
        self.multi_grad = params[0] == "grads"
        # a formula may take ``needs_input_grad`` (one bool per Tensor argument) to skip
        # gradients nobody needs, like PyTorch's should_compute_output
        self.wants_needs = "needs_input_grad" in params
        self.save_names = [p for p in params[1:] if p != "needs_input_grad"]
        args = schema.arguments
        arg_names = [a.name for a in args]
        self.tensor_positions = [i for i, a in enumerate(args) if a.type == "Tensor"]
        self.list_positions = [i for i in self.tensor_positions if args[i].is_list]
        self.write_positions = [i for i, a in enumerate(args) if a.is_write]
        self.n_tensor_args = len(self.tensor_positions)
        self.n_outputs = len(schema.returns)
        self.nondiff_outputs = set(nondiff_outputs)
        self.saves = []  # (kind, position)
        for n in self.save_names:
            if n == "result" or (n.startswith("result") and n[6:].isdigit()):
                self.saves.append((_OUTPUT, int(n[6:] or 0)))
                continue
            if n not in arg_names and n.endswith("_shape") and n[:-6] in arg_names:
                # only the shape of a tensor argument: the tensor itself is not kept alive
                self.saves.append((_SHAPE, arg_names.index(n[:-6])))
                continue
            if n not in arg_names and n.endswith("_strides") and n[:-8] in arg_names:
                # only the strides (the layout) of a tensor argument, for a gradient in that layout
                self.saves.append((_STRIDES, arg_names.index(n[:-8])))
                continue
            if n not in arg_names:
                raise ValueError(f"formula for {op.qualname}: parameter {n!r} is neither a schema argument, "
                                 f"'<argument>_shape', '<argument>_strides' nor 'result'")
            p = arg_names.index(n)
            a = args[p]
            if a.type != "Tensor":
                self.saves.append((_VALUE, p))
            elif a.is_list:
                self.saves.append((_LIST, p))
            elif p in self.write_positions:
                self.saves.append((_SNAPSHOT, p))
            else:
                self.saves.append((_INPUT, p))
        self.save_kinds = [k for k, _ in self.saves]
        attrs = {"_info": self, "num_outputs": max(1, self.n_outputs)}
        if not self.list_positions and not self.multi_grad and self.n_outputs <= 1:
            attrs["apply"] = _lazy_apply(self)
        self.node_class = type(camel(schema.name) + "Backward0", (FormulaNode,), attrs)
        if not self.list_positions:
            self.node_class._slots = None


def _formula_library(ns):
    """The library to register a formula's Autograd kernel in: the core's for ``tensorplug``, else a
    new one, owned by the plugin registering (if any), so disabling it removes the kernel."""
    if ns == "tensorplug":
        return _CORE_FORMULAS
    return Library(ns, "IMPL")


with owner_scope("core"):
    _CORE_FORMULAS = Library("tensorplug", "IMPL")  # the Autograd kernels of the core's own ops


def derivative(op_name, *, nondiff_outputs=(), uses=None):
    """Register the backward formula of ``op_name`` (``"mul.Tensor"`` or ``"ns::op.overload"``).

    ``nondiff_outputs``: indices of outputs that never carry gradients (sort's indices).
    ``uses``: ``{saved name: (Tensor arguments whose gradients read it)}``; the value is
    then saved only when one of those arguments requires grad (``x * 2`` keeps nothing
    of ``x``), as PyTorch's generated code does. The formula gets None otherwise.
    """
    def register(formula):
        qual = op_name if "::" in op_name else f"tensorplug::{op_name}"
        op = _d.lookup_op(qual)
        if qual in FORMULAS:
            raise RuntimeError(f"a backward formula for {qual} is already registered")
        info = FORMULAS[qual] = FormulaInfo(op, formula, nondiff_outputs, uses)
        _formula_library(op.namespace).impl(op, _lazy_kernel(info), "Autograd", with_keyset=True)
        return formula
    return register


def _opt_edge(t):
    return gradient_edge(t) if t is not None and t._requires_grad else _NO_EDGE


def _meta(t):
    return (t._shape, t._dtype, t._device) if t is not None else _NO_META


def _any_req(ts):
    for t in ts:
        if t is not None and t._requires_grad:
            return True
    return False


_check_write = check_inplace_write


def _snapshot(t):
    """A copy of a tensor an in-place op is about to overwrite, when its formula reads the old value.

    The copy is recorded (CloneBackward0), so double backward reaches the old value's history.
    """
    return (_ops.clone(t), 0)


def _set_history(t, node, nr):
    if t._dtype.category >= _dt.FLOATING:
        t._grad_fn = node
        t._output_nr = nr
        t._requires_grad = True
        t._ks |= _BIT


def _lazy_kernel(info):
    """A stand-in that generates the real kernel on the op's first recorded call.

    Generating (and compiling) a kernel for each of the several hundred formulas
    at import would cost a large share of ``import tensorplug``.
    """
    op = info.op

    def first_call(ks, *args):
        real = make_autograd_kernel(info)
        for reg in tuple(op.table.values()):  # a copy: another thread may register meanwhile
            if reg.kernel is first_call:
                reg.kernel = real
        op.cache.clear()
        return real(ks, *args)
    first_call.__name__ = f"autograd_{op.name}"
    return first_call


def make_autograd_kernel(info):
    """Generate the Autograd kernel for one op (see the module docstring)."""
    op = info.op
    schema = op.schema
    n = len(schema.arguments)
    names = [f"a{i}" for i in range(n)]
    call = ", ".join(names)
    req, edges, metas, flags = [], [], [], {}
    for p in info.tensor_positions:
        a = schema.arguments[p]
        v = names[p]
        if a.is_list:
            req.append(f"_any_req({v})")
        elif a.optional:
            req.append(f"({v} is not None and {v}._requires_grad)")
            edges.append(f"_opt_edge({v})")
            metas.append(f"_meta({v})")
        else:
            # read once: the edge and the conditional saves below test it again
            flags[p] = f"_r{p}"
            req.append(f"_r{p}")
            edges.append(f"_e{p}")
            metas.append(f"({v}._shape, {v}._dtype, {v}._device)")
    body = []
    body.extend(f"    {r} = {names[p]}._requires_grad" for p, r in flags.items())
    body += [f"    if not ({' or '.join(req) or 'False'}):",
             _LOOKUP + "        ",
             "        return _k(" + call + ")"]
    for p in info.write_positions:
        body.append(f"    _check_write({names[p]})")
    saved_pre = {}
    arg_index = {a.name: i for i, a in enumerate(schema.arguments)}

    def when(i):
        """The condition under which save ``i`` is needed, or None for always."""
        readers = info.uses.get(info.save_names[i])
        if not readers:
            return None
        return " or ".join(flags.get(arg_index[r], f"{names[arg_index[r]]}._requires_grad") for r in readers)

    for i, (kind, p) in enumerate(info.saves):
        if kind == _SNAPSHOT:
            cond = when(i)
            body.append(f"    _s{i} = _snapshot({names[p]})" + (f" if ({cond}) else None" if cond else ""))
            saved_pre[i] = f"_s{i}"
    if info.list_positions:
        # variable number of inputs: build edges and metadata in order
        body.append("    _edges, _metas, _slots = [], [], []")
        for p in info.tensor_positions:
            v = names[p]
            if p in info.list_positions:
                body.append(f"    _slots.append(len({v}))")
                body.append(f"    for _t in {v}:")
                body.append("        _edges.append(_opt_edge(_t)); _metas.append(_meta(_t))")
            else:
                body.append("    _slots.append(0)")
                body.append(f"    _edges.append(_opt_edge({v})); _metas.append(_meta({v}))")
        edges_expr, metas_expr = "tuple(_edges)", "tuple(_metas)"
    else:
        for p in flags:
            # inline, without a call: graph.gradient_edge (and leaf_edge for a leaf's accumulator)
            v = names[p]
            body += [f"    if not _r{p}:",
                     f"        _e{p} = _NO_EDGE",
                     f"    elif (_f{p} := {v}._grad_fn) is not None:",
                     f"        _e{p} = (_f{p}, {v}._output_nr)",
                     "    else:",
                     "        try:",
                     f"            _a = {v}._grad_acc()",
                     "        except AttributeError:",
                     "            _a = None",
                     "        if _a is None:",
                     f"            _a = _Acc(); _a.sequence_nr = _next_seq(); _a.variable = {v}",
                     f"            {v}._grad_acc = _weakref(_a)",
                     f"        _e{p} = (_a, 0)"]
        edges_expr = "(" + "".join(e + ", " for e in edges) + ")"
        metas_expr = "(" + "".join(m + ", " for m in metas) + ")"
    body.append(f"    _e = {edges_expr}")
    body.append(f"    _m = {metas_expr}")
    # inputs are saved with their versions before the op runs: an in-place op that reads
    # its own output (y.mul_(y)) must be caught at backward, as in PyTorch
    for i, (kind, p) in enumerate(info.saves):
        if i in saved_pre or kind == _OUTPUT:  # p is an output's index: outputs are saved after the call
            continue
        v = names[p]
        if kind == _LIST:
            body.append(f"    _s{i} = [(x, x._version) if x is not None else None for x in {v}]")
            saved_pre[i] = f"_s{i}"
        elif kind == _INPUT:
            conds = [c for c in (f"{v} is not None" if schema.arguments[p].optional else None, when(i)) if c]
            body.append(f"    _s{i} = ({v}, {v}._version)" + (f" if ({') and ('.join(conds)}) else None"
                                                               if conds else ""))
            saved_pre[i] = f"_s{i}"
    body.append(_LOOKUP + "    ")
    body.append(f"    out = _k({call})")
    multi = info.n_outputs > 1
    if multi:
        body.append("    outs = out")
    saved = []
    for i, (kind, p) in enumerate(info.saves):
        if i in saved_pre:
            saved.append(saved_pre[i])
        elif kind == _VALUE:
            saved.append(names[p])
        elif kind == _SHAPE:
            saved.append(f"{names[p]}._shape")
        elif kind == _STRIDES:
            cond = when(i)
            saved.append(f"{names[p]}.stride()" + (f" if ({cond}) else None" if cond else ""))
        elif kind == _OUTPUT:
            saved.append(f"_save_output({'outs[%d]' % p if multi else 'out'})")
        elif kind == _LIST:
            saved.append(f"[(x, x._version) if x is not None else None for x in {names[p]}]")
        else:
            a = schema.arguments[p]
            v = names[p]
            saved.append(f"({v}, {v}._version) if {v} is not None else None" if a.optional
                         else f"({v}, {v}._version)")
    body.append("    node = _Node()")
    body.append("    node.next_functions = _e")
    body.append("    node._meta = _m")
    body.append("    node.sequence_nr = _next_seq()")
    body.append("    node._saved = (" + "".join(f"{s}, " for s in saved) + ")")
    if info.list_positions:
        body.append("    node._slots = tuple(_slots)")
    if multi:
        body.append("    node._out_meta = tuple((t._shape, t._dtype, t._device) if hasattr(t, '_ks') else None "
                    "for t in outs)")
    body.append("    if _anomaly[0]: node._stack = _format_stack()[:-1]")
    if multi:
        for i in range(info.n_outputs):
            if i not in info.nondiff_outputs:
                body.append(f"    _set_history(outs[{i}], node, {i})")
    elif schema.returns and schema.returns[0].is_list:
        body.append("    for _i, _t in enumerate(out): _set_history(_t, node, _i)")
    elif schema.returns and 0 not in info.nondiff_outputs:
        body.append("    if out._dtype.category >= _FLOATING:")
        # a fresh output has the class default _output_nr 0; the tensor an in-place op returns may not
        body.append("        out._grad_fn = node; out._requires_grad = True; out._ks |= _BIT"
                    + ("; out._output_nr = 0" if info.write_positions else ""))
        if schema.is_view:
            body.append("        _register_view(out)")
    for p in info.write_positions:
        body.append(f"    if {names[p]}._base is not None: _rebase(({names[p]}), node)")
        body.append(f"    elif '_views' in {names[p]}.__dict__: _regenerate({names[p]})")
    body.append("    return out")
    ns = {"_redispatch": op.redispatch, "_cache": op.cache, "op": op, "_any_req": _any_req, "_leaf_edge": leaf_edge, "_NO_EDGE": _NO_EDGE,
          "_opt_edge": _opt_edge, "_FLOATING": _dt.FLOATING,
          "_meta": _meta, "_check_write": _check_write, "_snapshot": _snapshot, "_save_output": save_output,
          "_new": object.__new__, "_Node": info.node_class, "_next_seq": _seq.__next__, "_anomaly": _anomaly,
          "_format_stack": traceback.format_stack, "_set_history": _set_history, "_rebase": rebase_history,
          "_register_view": register_view, "_regenerate": regenerate_views,
          "_BIT": _BIT, "_Acc": AccumulateGrad, "_weakref": weakref.ref}
    # Two forms of one body. ``kernel(ks, *args)`` is what the op's table holds; the dispatcher
    # calls ``kernel.bind_keyset(ks)`` instead of wrapping it in a partial, which gives a closure
    # over the key set and the kernel below Autograd, resolved once (both live in the op's cache,
    # so a registration change that clears it drops them together).
    head = f"def kernel(ks, {call}):" if call else "def kernel(ks):"
    unbound = [head] + [
        # the op's own cache, inline (what op.redispatch does, without its call)
        f"{ln[len(_LOOKUP):]}try:\n{ln[len(_LOOKUP):]}    _k = _cache[ks]\n{ln[len(_LOOKUP):]}except KeyError:\n"
        f"{ln[len(_LOOKUP):]}    _k = op._resolve(ks)" if ln.startswith(_LOOKUP) else ln for ln in body]
    bound = ["def bind_keyset(ks):", "    try:", "        _k_below = _cache[ks]", "    except KeyError:",
             "        _k_below = op._resolve(ks)", f"    def kernel({call}):"] + [
        f"    {ln[len(_LOOKUP):]}_k = _k_below" if ln.startswith(_LOOKUP) else "    " + ln for ln in body] + [
        "    return kernel"]
    src = "\n".join(unbound) + "\n"
    bsrc = "\n".join(bound) + "\n"
    exec(_codecache.compiled(src, f"<autograd kernel {op.qualname}>"), ns)
    kernel = ns["kernel"]
    kernel.__name__ = f"autograd_{op.name}"
    kernel._source = src
    bns = dict(ns)
    exec(_codecache.compiled(bsrc, f"<autograd kernel {op.qualname}>"), bns)
    bind = bns["bind_keyset"]

    def bind_keyset(ks):
        k = bind(ks)
        k.__name__ = kernel.__name__
        return k
    kernel.bind_keyset = bind_keyset
    return kernel


__all__ = ["derivative", "FORMULAS", "FormulaNode", "save_output", "unpack_output", "camel"]
