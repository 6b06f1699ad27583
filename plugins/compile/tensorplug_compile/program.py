"""A captured program: the recorded kernel calls of one trace, its guards, and the straight-line
Python code that replays it.

The generated function (``Program.code``) takes the flat tensor and Python-value inputs of a call,
checks the guards (returns ``MISS`` when one fails, before anything runs), then calls each recorded
kernel directly, in order, with intermediates in local variables that are deleted after their last
use, applies the ``.grad`` writes the trace made, and builds the result. Calls a backend lowers
(its ``compile_lowering``) compute on native arrays instead, into buffers the program owns where
nothing else sees the result, fused into one loop where the lowering offers it.
"""

from __future__ import annotations

import linecache
import math
import threading

import tensorplug
from tensorplug import Tensor
from tensorplug.plugin_api import TensorSpec, backend, bump_version, dispatch_generation, tensor_maker, thread_keys

from .trace import CONST, GRAD_IN, GRAD_OUT, INPUT, NODE, Ref, collect_refs

MISS = object()
"""What a program returns when a guard fails (nothing has run)."""

_LITERAL = (int, bool, str, type(None))
_SIMPLE = (int, float, bool, str, type(None), complex)


def _simple_value(v):
    """Whether ``v`` is a plain Python value a guard can compare with ``==`` (tuples of such too)."""
    if v.__class__ in _SIMPLE:
        return True
    if v.__class__ in (tuple, list):
        return all(_simple_value(x) for x in v)
    return False


def input_specs(rec, inputs):
    """What the guards check of each flat input, read before the traced call runs (an op may change
    an input's shape in place): ``("tensor", class, shape, dtype, device, requires_grad, slot, first
    input of that slot)``, ``("value", class, value)`` or ``("object", obj)``."""
    specs = []
    first = {}
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            k = rec.bind_input(x, i)
            alias = first.setdefault(k, i)
            specs.append(("tensor", x.__class__, x._shape, x._dtype, x._device, x._requires_grad, k, alias))
        elif _simple_value(x):
            specs.append(("value", x.__class__, x))
        else:
            specs.append(("object", x))
    return specs


def python_values(fn):
    """The plain Python values (numbers, strings, tuples of them) the compiled function reads from its
    module's globals and its closure cells, at the start of a call: a trace bakes them in, so they
    are guarded (``torch.compile`` guards the globals it reads the same way). Values read by the
    functions it calls are not seen: their effect shows only if the two traces differ."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    out = []
    glb = getattr(fn, "__globals__", {})
    for name in code.co_names:
        if name in glb and _simple_value(glb[name]):
            out.append((f"the global {name}", lambda const, g=glb, n=name: f"{const(g)}.get({n!r})", glb[name]))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _simple_value(v):
            out.append((f"the closure's {name}", lambda const, c=cell: f"{const(c)}.cell_contents", v))
    return out


class Program:
    """The replayable form of one trace.

    ``nodes``/``slots``: the recorder's; ``specs``: :func:`input_specs` of the traced call; ``out``:
    the result's structure with tensors as :class:`Ref`; ``state``: the process state the trace ran
    under (grad mode, thread key sets, default dtype, autocast dtypes, dispatch generation); ``python_values``: plain
    Python values the function reads, as ``(words, expression(const) -> code, value)`` (see
    :func:`python_values`).
    """

    def __init__(self, rec, specs, out, state, name, python_values=()):
        self.name = name
        self.nodes = rec.nodes
        self.slots = rec.slots
        self.out = out
        self.state = state
        self.breaks = list(rec.breaks)
        self.input_specs = specs
        self.grad_guards = [(rec.by_id[id(p)], was_none) for p, was_none in rec.grad_in.values()]
        self.grad_writes = [(rec.by_id[id(p)], None if g is None else rec.by_id[id(g)])
                            for p, g in rec.grad_final.values()]
        self.modules = [(m, m.training, tuple(m._parameters.items()), tuple(m._buffers.items()),
                         tuple((k, v) for k, v in vars(m).items()
                               if not k.startswith("_") and k != "training" and _simple_value(v)))
                        for m in rec.modules.values()]
        self.python_values = list(python_values)
        self.optimizers = [(o, _optimizer_snapshot(o)) for o in rec.optimizers.values()]
        self.meta0 = rec.meta0
        self._bslots = None
        self.split = rec.split
        self.diff_outs = list(rec.diff_outs)
        self.leaves = list(rec.leaves)
        self.leaf_grads = list(rec.leaf_grads)
        self._fn = None
        self._check = None
        self.code = None

    # -- the replay function ------------------------------------------------------------------
    def compiled(self):
        """The generated replay function (built on first use)."""
        if self._fn is None:
            self._fn = self._generate()
        return self._fn

    def guard_check(self):
        """A function of the flat inputs returning None when every guard holds, else the first failed
        guard, in words (the reason for a recompilation)."""
        if self._check is None:
            ns, const = self._namespace()
            items = self._guards(ns, const)
            lines = [f"def check_{self.name}(*a):"]
            for item in items:
                if item[0] == "line":
                    lines.append("    " + item[1])
                else:
                    lines.append(f"    if {item[1]}: return {item[2]!r}")
            lines.append("    return None")
            exec(compile("\n".join(lines) + "\n", f"<tensorplug guards {self.name}>", "exec"), ns)
            self._check = ns[f"check_{self.name}"]
        return self._check

    def _namespace(self):
        ns = {"MISS": MISS, "Tensor": Tensor, "_grad_enabled": tensorplug.is_grad_enabled,
              "_thread_keys": thread_keys, "_default_dtype": tensorplug.get_default_dtype,
              "_generation": dispatch_generation}
        consts = {}

        def const(v):
            if v.__class__ in _LITERAL or (v.__class__ is float and math.isfinite(v)):
                return repr(v)
            key = id(v)
            name = consts.get(key)
            if name is None:
                name = consts[key] = f"v{len(consts)}"
                ns[name] = v
            return name

        for k, s in enumerate(self.slots):
            if s.kind == CONST:
                ns[f"s{k}"] = s.obj
        return ns, const

    def _guards(self, ns, const):
        """The guards, as ``("line", code)`` (a binding) and ``("guard", failing condition, words)``."""
        out = [("guard", f"len(a) != {len(self.input_specs)}", f"{len(self.input_specs)} inputs expected")]
        for i, spec in enumerate(self.input_specs):
            if spec[0] == "tensor":
                _, cls, shape, dtype, dev, rg, k, alias = spec
                if alias != i:
                    out.append(("guard", f"a[{i}] is not a[{alias}]", f"input {i} was input {alias}"))
                    continue
                out.append(("line", f"s{k} = a[{i}]"))
                out.append(("guard", f"s{k}.__class__ is not {const(cls)}", f"input {i} is not a {cls.__name__}"))
                out.append(("guard", f"s{k}._shape != {const(shape)}", f"input {i}'s shape is not {list(shape)}"))
                out.append(("guard", f"s{k}._dtype is not {const(dtype)}", f"input {i}'s dtype is not {dtype.name}"))
                out.append(("guard", f"s{k}._requires_grad is not {rg!r}", f"input {i}'s requires_grad is not {rg}"))
                out.append(("guard", f"s{k}._device is not {const(dev)} and s{k}._device != {const(dev)}",
                            f"input {i}'s device is not {dev}"))
            elif spec[0] == "value":
                _, cls, v = spec
                out.append(("guard", f"a[{i}].__class__ is not {const(cls)} or a[{i}] != {const(v)}",
                            f"input {i} is not {v!r}"))
            else:
                out.append(("guard", f"a[{i}] is not {const(spec[1])}", f"input {i} is another object"))
        tensor_inputs = [spec[6] for i, spec in enumerate(self.input_specs) if spec[0] == "tensor" and spec[7] == i]
        if len(tensor_inputs) > 1:  # inputs distinct in the trace stay distinct
            ids = ", ".join(f"id(s{k})" for k in tensor_inputs)
            out.append(("guard", f"len({{{ids}}}) != {len(tensor_inputs)}", "two inputs are the same tensor"))
        grad_mode, keys, default_dtype, autocast, generation = self.state
        out.append(("guard", f"_generation() != {generation}",
                    "kernels or plugins were registered or removed since the capture"))
        out.append(("guard", f"_grad_enabled() is not {grad_mode!r}", f"grad mode is not {grad_mode}"))
        out.append(("guard", f"_thread_keys() != {const(keys)}",
                    "the thread's dispatch keys changed (a transform such as autocast switched on or off)"))
        out.append(("guard", f"_default_dtype() is not {const(default_dtype)}",
                    f"the default dtype is not {default_dtype.name}"))
        if autocast:
            ns["_autocast_dtype"] = tensorplug.get_autocast_dtype
            for dev, dt in autocast:
                out.append(("guard", f"_autocast_dtype({dev!r}) is not {const(dt)}",
                            f"the autocast dtype of {dev} is not {dt.name}"))
        for where, expr, v in self.python_values:
            out.append(("guard", f"{expr(const)} != {const(v)}", f"{where} is not {v!r}"))
        for m, training, params, buffers, attrs in self.modules:
            mn, cls = const(m), type(m).__name__
            out.append(("guard", f"{mn}.training is not {training!r}", f"a {cls}'s training flag is not {training}"))
            for name, v in attrs:  # hyperparameters a forward may read (Dropout's p, a user's temperature)
                out.append(("guard", f"{mn}.__dict__.get({name!r}) != {const(v)}", f"a {cls}'s {name} is not {v!r}"))
            out.append(("guard", f"len({mn}._parameters) != {len(params)} or len({mn}._buffers) != {len(buffers)}",
                        f"a {cls}'s parameters or buffers were added or removed"))
            for name, p in params:
                out.append(("guard", f"{mn}._parameters.get({name!r}) is not {const(p)}",
                            f"a {cls}'s parameter {name!r} is another tensor"))
            for name, b in buffers:
                out.append(("guard", f"{mn}._buffers.get({name!r}) is not {const(b)}",
                            f"a {cls}'s buffer {name!r} is another tensor"))
        for opt, (groups, state) in self.optimizers:
            on, cls = const(opt), type(opt).__name__
            out.append(("guard", f"len({on}.param_groups) != {len(groups)} or len({on}.state) != {len(state)}",
                        f"the {cls}'s parameter groups or state changed"))
            for gi, (params, options) in enumerate(groups):
                g = f"{on}.param_groups[{gi}]"
                conds = [f"len({g}['params']) != {len(params)}"]
                conds += [f"{g}['params'][{j}] is not {const(p)}" for j, p in enumerate(params)]
                out.append(("guard", " or ".join(conds), f"the {cls}'s group {gi} holds other parameters"))
                for key, v in options:
                    out.append(("guard", f"{g}[{key!r}] != {const(v)}", f"the {cls}'s group {gi} {key} is not {v!r}"))
            for p, entries in state:
                for key, v in entries:
                    out.append(("guard", f"{on}.state[{const(p)}].get({key!r}) is not {const(v)}",
                                f"the {cls}'s state {key!r} of a parameter is another tensor"))
        for k, was_none in self.grad_guards:
            out.append(("guard", f"(s{k}._grad is None) is not {was_none!r}",
                        f"a parameter's .grad is {'not ' if was_none else ''}None"))
        return out

    def _generate(self):
        ns, const = self._namespace()
        aot = self.split is not None
        lines = [f"def {'body_' if aot else ''}{self.name}(*a):"]
        if aot:  # the guards run first, in guard_check, outside the autograd Function
            lines += [f"    {item[1]}" for item in self._guards(ns, const) if item[0] == "line"]
        else:
            conds = []
            for item in self._guards(ns, const):
                if item[0] == "line":
                    if conds:
                        lines.append(f"    if {' or '.join(conds)}: return MISS")
                        conds = []
                    lines.append("    " + item[1])
                else:
                    conds.append(f"({item[1]})" if " or " in item[1] else item[1])
                    if len(conds) == 12:
                        lines.append(f"    if {' or '.join(conds)}: return MISS")
                        conds = []
            if conds:
                lines.append(f"    if {' or '.join(conds)}: return MISS")
        for k, s in enumerate(self.slots):
            if s.kind == GRAD_IN:
                lines.append(f"    s{k} = s{self._slot_index(s.obj)}._grad")
        kernels = {}
        keep = set()
        collect_refs(self.out, keep)
        keep.update(gk for _, gk in self.grad_writes if gk is not None)
        hi = len(self.nodes) if not aot else self.split
        saved = []
        if aot:
            used = set()
            for node in self.nodes[self.split:]:
                collect_refs(node.args, used)
            collect_refs(self.leaf_grads, used)
            saved = sorted(k for k in used if self.slots[k].kind in (INPUT, GRAD_IN, NODE) and
                           not self._made_in_backward(k))
            keep.update(saved)
            keep.update(self.diff_outs)
        body, lowering = self._emit(ns, const, 0, hi, keep, kernels, "f")
        body += [f"s{pk}._grad = {'None' if gk is None else f's{gk}'}" for pk, gk in self.grad_writes]
        if not aot:
            body.append(f"return {_expr(self.out, const)}")
        else:
            diff = "".join(f"s{k}, " for k in self.diff_outs)
            kept = "".join(f"s{k}, " for k in saved)
            body.append(f"return {_expr(self.out, const)}, ({diff}), ({kept})")
        lines += _wrapped(body, lowering, ns, "f")
        if aot:
            grads = [k for k, s in enumerate(self.slots) if s.kind == GRAD_OUT]
            lines.append("")
            lines.append(f"def backward_{self.name}({', '.join(f's{k}' for k in saved + grads)}):")
            bkeep = set()
            collect_refs(self.leaf_grads, bkeep)
            body, lowering = self._emit(ns, const, self.split, len(self.nodes), bkeep, kernels, "b")
            body.append(f"return ({''.join(_expr(g, const) + ', ' for g in self.leaf_grads)})")
            lines += _wrapped(body, lowering, ns, "b")
        self.code = "\n".join(lines) + "\n"
        exec(compile(self.code, f"<tensorplug compiled {self.name}>", "exec"), ns)
        if not aot:
            return ns[self.name]
        return _aot_runner(self, ns[f"body_{self.name}"], ns[f"backward_{self.name}"])

    def _made_in_backward(self, k):
        return self.slots[k].kind == NODE and k in self._backward_slots()

    def _backward_slots(self):
        if self._bslots is None:
            made = set()
            for node in self.nodes[self.split:]:
                collect_refs(node.out, made)
            first = set()
            for node in self.nodes[:self.split]:
                collect_refs(node.out, first)
            self._bslots = made - first
        return self._bslots

    def _lowered(self, node):
        """The backend's lowered function for ``node`` (a fresh tensor from tensor arguments on one
        backend with a ``compile_lowering``), the lowering, or (None, None)."""
        out = node.out
        if node.ks is None or out.__class__ is not Ref:
            return None, None
        inplace = node.args and node.args[0].__class__ is Ref and node.args[0].slot == out.slot
        # in place: into a .grad (dense by the layout contract) or a result of the program, whose
        # layouts the guards pin down; an input's could differ from call to call
        if self.slots[out.slot].kind not in ((NODE, GRAD_IN) if inplace else (NODE,)):
            return None, None
        devs = set()
        args = []
        for a in node.args:
            if a.__class__ is Ref:
                s = self.slots[a.slot]
                devs.add(s.device.type)
                args.append(TensorSpec(s.meta[0], s.meta[1], s.device))
            elif a.__class__ in (list, tuple) and any(x.__class__ is Ref for x in a):
                return None, None
            else:
                args.append(a)
        o = self.slots[out.slot]
        devs.add(o.device.type)
        if len(devs) != 1:
            return None, None
        record = backend(devs.pop())
        lowering = getattr(record, "compile_lowering", None)
        # the lowering stands in for the backend's own kernel only (not a user's or another plugin's)
        if lowering is None or node.op.owner_for(node.ks) != record.owner:
            return None, None
        fn = lowering.lower(node.op.qualname, tuple(args), TensorSpec(o.meta[0], o.meta[1], o.device))
        return (fn, lowering) if fn is not None else (None, None)

    def _emit(self, ns, const, lo, hi, keep, kernels, tag):
        """The body lines of the kernel calls of nodes ``lo:hi`` and the lowering used (or None).

        A node a backend lowers computes on native arrays (``a<slot>``): into a buffer of the
        program's own, reused from call to call, when only lowered calls read the result, else into
        a fresh array wrapped as a tensor (``s<slot>``). Locals are deleted after their last use, and
        a buffer goes back to the pool then (never to the call that reads it last: a lowered
        function may write its result before it has read all of an argument)."""
        lowered = {}
        lowering_used = None
        inplace = set()
        for n in range(lo, hi):
            node = self.nodes[n]
            fn, lowering = self._lowered(node)
            if fn is not None:
                lowered[n] = fn
                lowering_used = lowering
                if node.args[0].__class__ is Ref and node.args[0].slot == node.out.slot:
                    inplace.add(n)
        # slot -> the lowered node that made it (a lowered in-place write keeps the array it was made as)
        made_by = {self.nodes[n].out.slot: n for n in lowered if n not in inplace}
        tensor_needed = set(k for k in made_by if k in keep)
        last = {}
        for n in range(lo, hi):
            node = self.nodes[n]
            used = set()
            collect_refs(node.args, used)
            if n not in lowered:
                tensor_needed.update(k for k in used if k in made_by)
            collect_refs(node.out, used)
            for k in used:
                if self.slots[k].kind == NODE and k not in keep:
                    last[k] = n
        dead_after = {}
        for k, n in last.items():
            dead_after.setdefault(n, []).append(k)
        groups = self._fusion_groups(lo, hi, lowered, lowering_used)
        fused_at = {}    # first node of a group -> (fused function, input slots, output slots)
        in_group = {}    # node -> first node of its group
        virtual = set()  # slots a fused loop keeps in registers: never stored
        for g in groups:
            plan = self._fusion_plan(g, lowering_used, inplace, tensor_needed, keep, last)
            if plan is not None:
                fused_at[g[0]] = plan
                for n in g:
                    in_group[n] = g[0]
                virtual.update(self.nodes[n].out.slot for n in g if n not in inplace)
                virtual.difference_update(k for k, _ in plan[2])
        free = {}    # (shape, dtype) -> buffer names ready for reuse
        held = {}    # slot -> buffer name
        buffers = [0]
        makers = {}
        body = []
        produced = set()

        def buffer(shape, dtype):
            pool = free.get((shape, dtype))
            if pool:
                return pool.pop()
            name = f"_{tag}buf{buffers[0]}"
            buffers[0] += 1
            ns[name] = lowering_used.empty(shape, dtype)
            return name

        def maker(dev):
            mk = makers.get(dev)
            if mk is None:
                mk = makers[dev] = f"_mk{len(makers)}{tag}"
                ns[mk] = tensor_maker(backend(dev.type), dev)
            return mk

        def array(k, n):
            return f"a{k}" if k in made_by and made_by[k] < n else f"s{k}._data"
        for n in range(lo, hi):
            node = self.nodes[n]
            if n in in_group:
                if n in fused_at:
                    fn, ins, outs = fused_at[n]
                    ns[f"{tag}g{n}"] = fn
                    targets = []
                    for k, written in outs:
                        if written:  # an in-place step: into the array it writes
                            targets.append(array(k, n))
                            continue
                        shape, dtype = self.slots[k].meta
                        produced.add(k)
                        if k in tensor_needed:
                            ns[f"_empty{tag}"] = lowering_used.empty
                            body.append(f"a{k} = _empty{tag}({const(shape)}, {const(dtype)})")
                        else:
                            held[k] = buffer(shape, dtype)
                            body.append(f"a{k} = {held[k]}")
                        targets.append(f"a{k}")
                    body.append(f"{tag}g{n}({''.join(array(k, n) + ', ' for k in ins)}outs=({''.join(t + ', ' for t in targets)}))")
                    for k, written in outs:
                        if written and (k not in made_by or k in tensor_needed):
                            ns["_bump"] = bump_version
                            body.append(f"_bump(s{k})")
                        elif not written and k in tensor_needed:
                            body.append(f"s{k} = {maker(self.slots[k].device)}(a{k}, {const(self.slots[k].meta[1])})")
            elif n in lowered:
                k = node.out.slot
                ns[f"{tag}{n}"] = lowered[n]
                arrays = ", ".join(array(a.slot, n) for a in node.args if a.__class__ is Ref)
                shape, dtype = self.slots[k].meta
                if n in inplace:
                    body.append(f"{tag}{n}({arrays}, out={array(k, n)})")
                    if k not in made_by or k in tensor_needed:
                        body.append(f"_bump(s{k})")
                        ns["_bump"] = bump_version
                elif k in tensor_needed:
                    produced.add(k)
                    body.append(f"a{k} = {tag}{n}({arrays})")
                    body.append(f"s{k} = {maker(self.slots[k].device)}(a{k}, {const(dtype)})")
                else:
                    produced.add(k)
                    held[k] = buffer(shape, dtype)
                    body.append(f"a{k} = {tag}{n}({arrays}, out={held[k]})")
            else:
                key = (node.op.qualname, node.ks)
                kname = kernels.get(key)
                if kname is None:
                    kname = kernels[key] = f"k{len(kernels)}"
                    ns[kname] = node.op.fn if node.ks is None else node.op.kernel_for(node.ks)
                args = ", ".join(_expr(a, const) for a in node.args)
                if node.recheck:
                    ns[f"chk{n}"] = node.op.check
                    body.append(f"chk{n}({args})")
                target = self._target(node.out, produced)
                call = f"{kname}({args})"
                body.append(f"{target} = {call}" if target else call)
            dead = sorted(dead_after.get(n, ()))
            names = []
            if dead:
                for k in dead:
                    if k in virtual:
                        continue
                    if k in made_by:
                        names.append(f"a{k}")
                        if k in tensor_needed:
                            names.append(f"s{k}")
                        if k in held:
                            shape, dtype = self.slots[k].meta
                            free.setdefault((shape, dtype), []).append(held.pop(k))
                    else:
                        names.append(f"s{k}")
            if names:
                body.append(f"del {', '.join(names)}")
        return body, lowering_used

    def _fusion_groups(self, lo, hi, lowered, lowering):
        """Runs of consecutive lowered nodes the lowering can fuse, with one result shape and dtype and
        tensor arguments of that shape or of one element."""
        if lowering is None or not hasattr(lowering, "fuse"):
            return []
        groups, run, key = [], [], None
        for n in range(lo, hi + 1):
            node = self.nodes[n] if n < hi else None
            ok = node is not None and n in lowered and lowering.fusable(node.op.qualname)
            if ok:
                meta = self.slots[node.out.slot].meta
                ok = all(self.slots[a.slot].meta[0] == meta[0] or _numel(self.slots[a.slot].meta[0]) == 1
                         for a in node.args if a.__class__ is Ref)
            if ok and run and meta == key:
                run.append(n)
                continue
            if len(run) >= 2:
                groups.append(run)
            run, key = ([n], meta) if ok else ([], None)
        return groups

    def _fusion_plan(self, group, lowering, inplace, tensor_needed, keep, last):
        """``(fused function, input slots, output slots)`` for a group, or None if the lowering declines."""
        first, end = group[0], group[-1]
        shape, dtype = self.slots[self.nodes[first].out.slot].meta
        inputs, steps = [], []
        step_of = {}  # slot -> the step whose value it holds so far in the group
        for i, n in enumerate(group):
            operands = []
            for a in self.nodes[n].args:
                if a.__class__ is not Ref:
                    operands.append(a)
                elif a.slot in step_of:
                    operands.append(("step", step_of[a.slot]))
                else:
                    if a.slot not in inputs:
                        inputs.append(a.slot)
                    s = self.slots[a.slot]
                    # a kernel's broadcast result (an expanded 0-dim tensor: all strides 0) is one value
                    broadcast = s.kind == NODE and all(st == 0 for st in self.meta0[a.slot][1])
                    kind = "input" if s.meta[0] == shape and not broadcast else "scalar"
                    operands.append((kind, inputs.index(a.slot)))
            steps.append((self.nodes[n].op.qualname, tuple(operands)))
            step_of[self.nodes[n].out.slot] = i
        outs, out_steps = [], []
        for i, n in enumerate(group):
            k = self.nodes[n].out.slot
            if n in inplace:
                outs.append((k, True))  # a write into memory someone else can see: always stored
                out_steps.append(i)
            elif k in tensor_needed or k in keep or last.get(k, end) > end:
                outs.append((k, False))
                out_steps.append(i)
        if not outs:
            return None
        fn = lowering.fuse(steps, shape, dtype, out_steps)
        return None if fn is None else (fn, inputs, outs)

    def _slot_index(self, obj):
        for k, s in enumerate(self.slots):
            if s.kind in (INPUT, CONST) and s.tensor is obj:
                return k
        raise KeyError("parameter of a .grad input is not in the program")

    def _target(self, out, produced):
        """The assignment target for a node's result: fresh slots are bound, others ignored."""
        def one(x):
            if x.__class__ is Ref and self.slots[x.slot].kind == NODE and x.slot not in produced:
                produced.add(x.slot)
                return f"s{x.slot}"
            return "_"
        if out.__class__ is Ref:
            t = one(out)
            return None if t == "_" else t
        if out.__class__ in (list, tuple) and all(x.__class__ is Ref or x is None for x in out):
            names = [one(x) for x in out]
            if all(n == "_" for n in names):
                return None
            return ", ".join(names) + ("," if len(names) == 1 else "")
        if out is None:
            return None
        raise NotImplementedError(f"a kernel result of structure {out!r} is not replayable")

    # -- comparing two traces -------------------------------------------------------------------
    def difference(self, other):
        """None when ``other`` recorded the same program, else a sentence naming the first difference."""
        if len(self.nodes) != len(other.nodes):
            return f"the second trace ran {len(other.nodes)} kernel calls, the first {len(self.nodes)}"
        for n, (a, b) in enumerate(zip(self.nodes, other.nodes)):
            if a.op != b.op or a.ks != b.ks:
                return f"kernel call {n} was {a.op.qualname}, then {b.op.qualname} ({where(b)})"
            fa, fb = _freeze(a.args), _freeze(b.args)
            if fa != fb:
                return (f"kernel call {n} ({a.op.qualname}) had other arguments: {_show(a.args)}, "
                        f"then {_show(b.args)} ({where(b)})")
            if _freeze(a.out) != _freeze(b.out):
                return f"kernel call {n} ({a.op.qualname}) produced another result structure ({where(b)})"
        for k, (sa, sb) in enumerate(zip(self.slots, other.slots)):
            if sa.kind != sb.kind or sa.index != sb.index:
                return f"slot {k} held a {sa.kind}, then a {sb.kind}"
            if sa.kind in (CONST, GRAD_IN) and sa.obj is not sb.obj and not _same_constant(sa.obj, sb.obj):
                return f"a constant tensor of the first trace ({_meta(sa.obj)}) was another one in the second"
        if len(self.slots) != len(other.slots):
            return "the traces hold different tensors"
        if _freeze(self.out) != _freeze(other.out):
            return "the result had another structure"
        if self.grad_writes != other.grad_writes or self.grad_guards != other.grad_guards:
            return "the traces changed or read .grad differently"
        return None

    # -- showing -------------------------------------------------------------------------------
    def tabular(self):
        """The nodes as a table (node, kernel call, arguments, outputs), like torch.fx's print_tabular."""
        rows = [("node", "op", "args", "out")]
        for k, s in enumerate(self.slots):
            if s.kind == INPUT:
                rows.append((f"s{k}", "input", f"a[{s.index}]", _slot_meta(s)))
            elif s.kind == CONST:
                rows.append((f"s{k}", "constant", "", _slot_meta(s)))
            elif s.kind == GRAD_IN:
                rows.append((f"s{k}", "grad input", f"s{self._slot_index(s.obj)}.grad", _slot_meta(s)))
        for n, node in enumerate(self.nodes):
            rows.append((f"n{n}", node.op.qualname.replace("tensorplug::", ""), _show(node.args), _show(node.out)))
        rows.append(("output", "return", _show(self.out), ""))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _wrapped(body, lowering, ns, tag):
    """``body`` indented as a function's; with a lowering, inside its ``enter``/``exit`` and a lock (the
    program's buffers are its own: two threads replay it one at a time)."""
    if lowering is None:
        return ["    " + line for line in body]
    ns[f"_enter_{tag}"], ns[f"_exit_{tag}"], ns[f"_lock_{tag}"] = lowering.enter, lowering.exit, threading.Lock()
    return ([f"    _lock_{tag}.acquire()", f"    _tok = _enter_{tag}()", "    try:"]
            + ["        " + line for line in body]
            + ["    finally:", f"        _exit_{tag}(_tok)", f"        _lock_{tag}.release()"])


def _aot_runner(prog, body, backward):
    """The replay of a forward whose result requires grad: guards, then the forward kernels inside an
    autograd Function whose backward runs the traced backward kernels."""
    check = prog.guard_check()
    leaf_src = []  # per leaf: ("a", input index) or ("c", the constant tensor)
    for k in prog.leaves:
        s = prog.slots[k]
        leaf_src.append(("a", s.index) if s.kind == INPUT else ("c", s.obj))

    class CompiledGraph(tensorplug.autograd.Function):
        @staticmethod
        def forward(ctx, a, holder, *leaves):
            res, diff, saved = body(*a)
            ctx.kept = saved
            holder.append(res)
            holder.append(diff)
            return diff

        @staticmethod
        def backward(ctx, *grads):
            if tensorplug.is_grad_enabled():
                raise RuntimeError("tensorplug.compile: the backward of a compiled forward is not differentiable "
                                   "(create_graph=True); run the function eagerly for higher-order gradients")
            return backward(*ctx.kept, *grads)

    def run(*a):
        if check(*a) is not None:
            return MISS
        holder = []
        leaves = [a[v] if src == "a" else v for src, v in leaf_src]
        outs = CompiledGraph.apply(a, holder, *leaves)
        res, diff = holder
        swap = {id(d): o for d, o in zip(diff, outs) if d is not o}
        return _substitute(res, swap) if swap else res
    return run


def _substitute(x, swap):
    if isinstance(x, Tensor):
        return swap.get(id(x), x)
    if x.__class__ in (list, tuple):
        return x.__class__(_substitute(v, swap) for v in x)
    if x.__class__ is dict:
        return {k: _substitute(v, swap) for k, v in x.items()}
    return x


def _optimizer_snapshot(opt):
    groups = []
    for g in opt.param_groups:
        options = tuple((key, v) for key, v in g.items() if key != "params" and _simple_value(v))
        groups.append((tuple(g["params"]), options))
    state = tuple((p, tuple((key, v) for key, v in st.items() if isinstance(v, Tensor)))
                  for p, st in opt.state.items())
    return tuple(groups), state


def _expr(x, const):
    if x.__class__ is Ref:
        return f"s{x.slot}"
    if x.__class__ is tuple:
        return "(" + "".join(_expr(v, const) + ", " for v in x) + ")"
    if x.__class__ is list:
        return "[" + ", ".join(_expr(v, const) for v in x) + "]"
    if x.__class__ is dict:
        return "{" + ", ".join(f"{const(k)}: {_expr(v, const)}" for k, v in x.items()) + "}"
    return const(x)


def _freeze(x):
    if x.__class__ is Ref:
        return ("ref", x.slot)
    if x.__class__ in (list, tuple):
        return (x.__class__.__name__,) + tuple(_freeze(v) for v in x)
    if x.__class__ is dict:
        return ("dict",) + tuple((k, _freeze(v)) for k, v in x.items())
    if x.__class__ is float:
        return ("float", repr(x))
    if x.__class__ in _SIMPLE:
        return (x.__class__.__name__, x)
    return ("obj", id(x))


def _same_constant(a, b):
    """Two constant tensors of two traces that stand for the same value: small, equal metadata, equal bytes."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        return False
    if a._shape != b._shape or a._dtype is not b._dtype or a._device != b._device or a.numel() > 64:
        return False
    return bool(tensorplug.equal(a.detach(), b.detach()))


def _meta(t):
    if not isinstance(t, Tensor):
        return type(t).__name__
    return f"{t._dtype.name}{list(t._shape)}"


def _slot_meta(s):
    shape, dtype = s.meta
    return f"{dtype.name}{list(shape)}"


def _show(x):
    if x.__class__ is Ref:
        return f"s{x.slot}"
    if x.__class__ in (list, tuple):
        inner = ", ".join(_show(v) for v in x)
        return f"[{inner}]" if x.__class__ is list else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, Tensor):
        return _meta(x)
    return repr(x)


def where(node):
    """``file:line: source`` of the user's line that made a node's call."""
    if node.where is None:
        return "<unknown>"
    filename, lineno = node.where
    return f"{filename}:{lineno}: {linecache.getline(filename, lineno).strip()}"
