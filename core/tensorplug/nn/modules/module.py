"""``Module``: the base class of every layer, with PyTorch's registration, state and hook rules.

Parameters, buffers and submodules live in three ordered dicts (``_parameters``,
``_buffers``, ``_modules``); ``__setattr__`` routes assignments into them by the
value's type and ``__getattr__`` (called only when ordinary lookup fails) reads
them back, so ``self.weight`` inside ``forward`` costs one failed instance-dict
lookup and one dict hit, as in PyTorch.
"""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _privateuse1, plugins as _plugins
from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad
from ...device import device as _device
from ...tensor import Tensor
from ..parameter import Parameter, Buffer
from . import _backward_hooks as _bw_hooks

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook"]


def _typename(obj):
    """PyTorch's ``torch.typename``: ``tensorplug.FloatTensor`` for tensors, the qualified class name else."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join((" " * spaces + line) if line.strip() else "" for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the module expected but did not get, and the reverse."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` unregisters the hook (also on ``with`` exit)."""

    _next_id = itertools.count()

    def __init__(self, *hook_dicts):
        self.hook_dicts = hook_dicts
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        """Unregister the hook (a no-op if it is already gone)."""
        for d in self.hook_dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_GLOBAL_FORWARD_PRE_HOOKS: dict = OrderedDict()


def register_module_forward_pre_hook(hook):
    """Run ``hook(module, args)`` before the ``forward`` of every module, as PyTorch's function of this
    name: a non-None result replaces the positional arguments. Returns a :class:`RemovableHandle`.
    A debugging aid (and what a tracing transform uses to see which modules a function calls)."""
    handle = RemovableHandle(_GLOBAL_FORWARD_PRE_HOOKS)
    _GLOBAL_FORWARD_PRE_HOOKS[handle.id] = hook
    return handle


def _forward_unimplemented(self, *args, **kwargs):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class of all layers and models.

    Subclasses call ``super().__init__()`` first, assign parameters, buffers
    and submodules as attributes, and implement ``forward``; calling the module
    runs its forward pre-hooks, ``forward`` and its forward hooks.
    """

    _version = 1
    training: bool
    forward = _forward_unimplemented

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_load_state_dict_post_hooks"] = OrderedDict()

    # -- calling ---------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or _GLOBAL_FORWARD_PRE_HOOKS:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook in tuple(_GLOBAL_FORWARD_PRE_HOOKS.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in tuple(self._forward_pre_hooks.items()):
            if hook_id in with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        called = set()
        try:
            output = self.forward(*args, **kwargs)
            with_kwargs = self._forward_hooks_with_kwargs
            for hook_id, hook in tuple(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in with_kwargs:
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
            return output
        except Exception:
            for hook_id, hook in tuple(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception as e:
                        warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                      f"silenced as another error was raised in forward: {e}", stacklevel=2)
            raise

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces the positional args
        (a non-tuple is wrapped in one). With ``with_kwargs=True`` it is ``hook(module, args, kwargs)`` and
        may return ``(args, kwargs)``. Returns a handle whose ``remove()`` unregisters it."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces the output.
        With ``with_kwargs=True`` it is ``hook(module, args, kwargs, output)``; ``always_call=True`` also
        runs it (with output None) when ``forward`` raises. Returns a handle whose ``remove()`` unregisters it."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect to the module's
        positional tensor inputs are computed; a non-None result replaces ``grad_input``. Returns a handle."""
        return _bw_hooks.register_full_backward_hook(self, hook, prepend, RemovableHandle)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients with respect to the module's outputs are
        computed, before ``grad_input``; a non-None result replaces ``grad_output``. Returns a handle."""
        return _bw_hooks.register_full_backward_pre_hook(self, hook, prepend, RemovableHandle)

    # -- registration ----------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` (or None) as buffer ``name``: module state that is not a parameter (running
        statistics, masks). Persistent buffers are part of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(tensorplug Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Register ``param`` (a :class:`Parameter`, or None) as parameter ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(tensorplug.nn.Parameter or None required)")
        elif param._grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (or None) as the child module ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
            b = d["_buffers"]
            if name in b:
                return b[name]
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(tensorplug.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                _remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                    "(tensorplug.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                is_buffer = isinstance(value, Buffer)
                if is_buffer or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(tensorplug.nn.Buffer, tensorplug.Tensor or None expected)")
                    if is_buffer:
                        persistent = value.persistent
                        _remove_from(name, d)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    # -- traversal ------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, parameter) pairs, submodules' included (``recurse``), each shared parameter once
        (unless ``remove_duplicate=False``); names are dotted paths prefixed with ``prefix``."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """The parameters of this module and (``recurse``) its submodules, each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, buffer) pairs, persistent or not, like :meth:`named_parameters`."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers of this module and (``recurse``) its submodules."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        """(name, module) pairs of the direct submodules, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        """The direct submodules."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) pairs for this module ('' or ``prefix``) and every submodule, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """This module and all its submodules, each once."""
        for _, module in self.named_modules():
            yield module

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ("" is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at dotted path ``target`` ("block.0.weight")."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first), then on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ----------------------------------------------------------------
    def compile(self, *args, **kwargs):
        """Compile this module's ``forward`` in place with :func:`tensorplug.compile` (same arguments):
        calling the module then runs the compiled program. Needs the tensorplug-compile plugin."""
        compiled = _plugins.public("compile")(type(self).forward.__get__(self), *args, **kwargs)
        self.__dict__["forward"] = compiled

    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on this module and its submodules."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Evaluation mode: ``train(False)`` (Dropout passes through, BatchNorm uses running statistics)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters: to None (the default) or to zeros."""
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if g._grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # -- conversions --------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            # modules keep their Parameter objects (optimizers hold them): only the data changes
            with no_grad():
                param.data = fn(param)
                g = param._grad
                if g is not None:
                    g.data = fn(g)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)`` or ``to(tensor)``: move parameters and buffers
        in place (Parameter objects are kept) and cast the floating point ones to ``dtype``; returns self.

        ``non_blocking`` and ``memory_format`` are accepted for PyTorch compatibility and ignored."""
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def cpu(self):
        """Move parameters and buffers to the CPU; returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move parameters and buffers to a CUDA device (needs a CUDA backend plugin); returns self."""
        dev = _device("cuda") if device is None else (_device("cuda", device) if isinstance(device, int)
                                                      else _device(device))
        return self._apply(lambda t: t.to(dev))

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``; returns self."""
        return self._apply(lambda t: t.to(dst_type))

    def float(self):
        """Cast floating point parameters and buffers to float32; returns self."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating point parameters and buffers to float64; returns self."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating point parameters and buffers to float16; returns self."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating point parameters and buffers to bfloat16; returns self."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # -- state dict ---------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer, keyed by dotted path ("0.weight").

        Values are detached tensors sharing memory with the module's (``keep_vars=True`` keeps the
        Parameters themselves). Parameters and buffers set to None are left out.
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict`` has loaded this module; it may
        edit ``incompatible_keys`` in place (to accept missing keys, for instance)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected tensorplug.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if len(param._shape) == 0 and value._shape == (1,):
                value = value[0]
            if value._shape != param._shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {_size(value._shape)} "
                                  f"from checkpoint, the shape in current model is {_size(param._shape)}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            value = Parameter(value, requires_grad=param._requires_grad) \
                                if not isinstance(value, Parameter) else value.requires_grad_(param._requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{_size(param._shape)} and whose dimensions in the checkpoint are "
                                  f"{_size(value._shape)}, an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` (as made by :meth:`state_dict`) into this module.

        With ``strict`` (the default) missing and unexpected keys are errors; shape mismatches always are.
        All errors are reported together in one RuntimeError, PyTorch's message. ``assign=True`` puts the
        state dict's tensors in place of the module's (keeping each parameter's ``requires_grad``).
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # -- printing ----------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The text between the parentheses of this module's repr (its settings); '' by default."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _remove_from(name, *dicts_or_sets):
    for d in dicts_or_sets:
        if name in d:
            if isinstance(d, dict):
                del d[name]
            else:
                d.discard(name)


def _size(shape):
    """A shape in messages: tensorplug shapes are plain tuples (PyTorch prints ``torch.Size([3, 4])``)."""
    return str(tuple(shape))


def _parse_to(args, kwargs):
    """(device, dtype, non_blocking) from ``Module.to``'s arguments, as ``Tensor.to`` reads them."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got an unexpected keyword "
                        f"argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _device)):
            device = a
        elif isinstance(a, bool):
            non_blocking = a
        elif isinstance(a, int):
            device = _device("cpu", a)
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
    return (None if device is None else _device(device)), dtype, non_blocking


def _install_device_methods():
    _privateuse1.install_module_methods(Module)


_install_device_methods()  # Module.<name>() for a backend on the PrivateUse1 slot enabled before nn loaded
