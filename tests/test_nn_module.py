"""nn.Module mechanics: registration, traversal, state_dict, hooks, modes, conversions, containers, repr."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn


class Net(nn.Module):
    """Two linears sharing nothing, a buffer, a non-persistent buffer and a plain attribute."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.register_buffer("steps", tp.zeros(()))
        self.register_buffer("scratch", tp.ones(2), persistent=False)
        self.scale = 2.0

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# -- registration -----------------------------------------------------------------------------------
def test_assignment_registers_parameters_modules_and_buffers():
    m = Net()
    assert list(m._parameters) == []
    assert list(m._modules) == ["fc1", "act", "fc2"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert m._non_persistent_buffers_set == {"scratch"}
    assert "scale" in m.__dict__ and m.scale == 2.0
    m.w = nn.Parameter(tp.ones(2))
    assert m._parameters["w"] is m.w
    assert "w" not in m.__dict__


def test_reassignment_moves_names_between_kinds():
    m = nn.Module()
    m.x = nn.Linear(1, 1)
    m.x = nn.Parameter(tp.ones(1))  # a parameter now: the module entry is gone
    assert "x" not in m._modules and "x" in m._parameters
    m.x = None  # a parameter name takes None
    assert m._parameters["x"] is None and m.x is None
    m.register_buffer("b", tp.ones(1))
    m.b = tp.zeros(2)  # buffers take any tensor
    assert m._buffers["b"].shape == (2,)


@pytest.mark.parametrize("setup, name, value, error, match", [
    (lambda m: m.register_parameter("p", nn.Parameter(tp.ones(1))), "p", tp.ones(1), TypeError,
     r"cannot assign 'tensorplug.FloatTensor' as parameter 'p' \(tensorplug.nn.Parameter or None expected\)"),
    (lambda m: m.add_module("c", nn.ReLU()), "c", 3, TypeError,
     r"cannot assign 'int' as child module 'c' \(tensorplug.nn.Module or None expected\)"),
    (lambda m: m.register_buffer("b", None), "b", "text", TypeError,
     r"cannot assign 'str' as buffer 'b' \(tensorplug.nn.Buffer, tensorplug.Tensor or None expected\)"),
])
def test_assigning_the_wrong_kind_raises(setup, name, value, error, match):
    m = nn.Module()
    setup(m)
    with pytest.raises(error, match=match):
        setattr(m, name, value)


class Early(nn.Module):
    def __init__(self, what):
        if what == "param":
            self.p = nn.Parameter(tp.ones(1))
        elif what == "module":
            self.m = nn.ReLU()
        else:
            self.register_buffer("b", tp.ones(1))


@pytest.mark.parametrize("what, match", [("param", "cannot assign parameters before Module.__init__"),
                                         ("module", "cannot assign module before Module.__init__"),
                                         ("buffer", "cannot assign buffer before Module.__init__")])
def test_assignment_before_init_raises(what, match):
    with pytest.raises(AttributeError, match=match):
        Early(what)


@pytest.mark.parametrize("call, error, match", [
    (lambda m: m.register_buffer(1, tp.ones(1)), TypeError, "buffer name should be a string. Got int"),
    (lambda m: m.register_buffer("a.b", tp.ones(1)), KeyError, r'buffer name can.*t contain "\."'),
    (lambda m: m.register_buffer("", tp.ones(1)), KeyError, "buffer name can.*t be empty string"),
    (lambda m: m.register_buffer("lin", tp.ones(1)), KeyError, "attribute 'lin' already exists"),
    (lambda m: m.register_buffer("x", [1]), TypeError,
     r"cannot assign 'list' object to buffer 'x' \(tensorplug Tensor or None required\)"),
    (lambda m: m.register_parameter("a.b", None), KeyError, r'parameter name can.*t contain "\."'),
    (lambda m: m.register_parameter("", None), KeyError, "parameter name can.*t be empty string"),
    (lambda m: m.register_parameter("lin", None), KeyError, "attribute 'lin' already exists"),
    (lambda m: m.register_parameter("p", tp.ones(1)), TypeError,
     r"cannot assign 'tensorplug.FloatTensor' object to parameter 'p' \(tensorplug.nn.Parameter or None "
     r"required\)"),
    (lambda m: m.register_parameter("p", nn.Parameter(tp.ones(1)) * 2), TypeError,
     "cannot assign 'tensorplug.FloatTensor' object to parameter 'p'"),
    (lambda m: m.add_module("x", 3), TypeError, "int is not a Module subclass"),
    (lambda m: m.add_module(3, nn.ReLU()), TypeError, "module name should be a string. Got int"),
    (lambda m: m.add_module("a.b", nn.ReLU()), KeyError, r'module name can.*t contain "\.", got: a.b'),
    (lambda m: m.add_module("", nn.ReLU()), KeyError, "module name can.*t be empty string"),
    (lambda m: m.add_module("forward", nn.ReLU()), KeyError, "attribute 'forward' already exists"),
])
def test_registration_errors(call, error, match):
    m = nn.Module()
    m.lin = nn.Linear(1, 1)
    with pytest.raises(error, match=match):
        call(m)


def test_non_leaf_parameter_is_refused():
    m = nn.Module()
    p = nn.Parameter(tp.ones(1))
    p._grad_fn = object()  # what an op on a parameter would leave; Parameter() itself always detaches
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'p'"):
        m.register_parameter("p", p)


def test_getattr_and_delattr():
    m = Net()
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        m.nope
    del m.fc1, m.steps, m.scale
    assert "fc1" not in m._modules and "steps" not in m._buffers and "scale" not in m.__dict__
    del m.scratch
    assert "scratch" not in m._non_persistent_buffers_set
    m.p = nn.Parameter(tp.ones(1))
    del m.p
    assert "p" not in m._parameters
    assert {"fc2", "act", "forward"} <= set(dir(m))


def test_init_rejects_arguments_and_forward_is_required():
    with pytest.raises(TypeError, match="Module.__init__\\(\\) got an unexpected keyword argument 'x'"):
        nn.Module(x=1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(tp.ones(1))


# -- traversal ---------------------------------------------------------------------------------
def test_named_parameters_order_prefix_recurse():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert [n for n, _ in m.named_parameters(prefix="net")] == ["net.fc1.weight", "net.fc1.bias", "net.fc2.weight"]
    assert list(m.named_parameters(recurse=False)) == []
    assert [n for n, _ in m.fc1.named_parameters()] == ["weight", "bias"]
    assert [p for p in m.parameters()] == [m.fc1.weight, m.fc1.bias, m.fc2.weight]


def test_shared_parameters_and_modules_are_listed_once():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, nn.ReLU(), lin)
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "2.weight",
                                                                         "2.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in m.named_children()] == ["0", "1"]
    a = nn.Module()
    a.w = nn.Parameter(tp.ones(1))
    a.v = a.w  # the same Parameter under two names
    assert [n for n, _ in a.named_parameters()] == ["w"]


def test_buffers_children_modules():
    m = Net()
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert list(m.buffers()) == [m.steps, m.scratch]
    outer = nn.Sequential(m)
    assert [n for n, _ in outer.named_buffers()] == ["0.steps", "0.scratch"]
    assert list(outer.children()) == [m]
    assert [type(x).__name__ for x in outer.modules()] == ["Sequential", "Net", "Linear", "ReLU", "Linear"]
    assert [n for n, _ in outer.named_modules(prefix="root")] == ["root", "root.0", "root.0.fc1", "root.0.act",
                                                                  "root.0.fc2"]


def test_get_submodule_parameter_buffer():
    outer = nn.Sequential(Net())
    assert outer.get_submodule("") is outer
    assert outer.get_submodule("0.fc1") is outer[0].fc1
    assert outer.get_parameter("0.fc1.bias") is outer[0].fc1.bias
    assert outer.get_buffer("0.steps") is outer[0].steps
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        outer.get_submodule("0.nope")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        outer.get_submodule("0.scale")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        outer.get_parameter("0.steps")
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        outer.get_buffer("0.scale")


def test_apply_visits_children_first():
    m = Net()
    seen = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Linear", "Net"]


# -- state dict --------------------------------------------------------------------------------------
def test_state_dict_keys_values_and_detach():
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Sequential(nn.Linear(3, 1)))
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                        "1.num_batches_tracked", "2.0.weight", "2.0.bias"]
    w = sd["0.weight"]
    assert not w.requires_grad and not isinstance(w, nn.Parameter)
    w[0, 0] = 42.0  # shares memory with the parameter
    assert m[0].weight[0, 0].item() == 42.0
    assert sd["1.num_batches_tracked"].dtype is tp.int64
    kept = m.state_dict(keep_vars=True)
    assert kept["0.weight"] is m[0].weight
    assert list(m.state_dict(prefix="model.")) [0] == "model.0.weight"


def test_state_dict_skips_none_and_non_persistent():
    m = Net()
    assert list(m.state_dict()) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]
    m.register_buffer("gone", None)
    assert "gone" not in m.state_dict()


def test_load_state_dict_round_trip():
    tp.manual_seed(0)
    a, b = Net(), Net()
    a.steps.fill_(3.0)
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (n1, p1), (n2, p2) in zip(a.state_dict().items(), b.state_dict().items()):
        assert n1 == n2 and np.array_equal(p1.numpy(), p2.numpy())
    assert b.steps.item() == 3.0
    weight = b.fc1.weight
    b.load_state_dict(Net().state_dict())
    assert b.fc1.weight is weight  # copied in place: optimizers holding the parameter keep working


def test_load_state_dict_error_message_lists_everything():
    lin = nn.Linear(4, 3)
    bad = {"weight": tp.ones(3, 5), "foo": tp.ones(1)}
    expected = ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". \n\t'
                'Unexpected key(s) in state_dict: "foo". \n\tsize mismatch for weight: copying a param with shape '
                '(3, 5) from checkpoint, the shape in current model is (3, 4).')
    with pytest.raises(RuntimeError) as info:
        lin.load_state_dict(bad)
    assert str(info.value) == expected


def test_load_state_dict_non_strict_returns_incompatible_keys():
    lin = nn.Linear(4, 3)
    result = lin.load_state_dict({"weight": tp.ones(3, 4), "foo": tp.ones(1)}, strict=False)
    assert result == (["bias"], ["foo"])
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['foo'])"
    assert lin.weight.sum().item() == 12.0
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        lin.load_state_dict({"weight": tp.ones(2)}, strict=False)  # shape errors are never optional


def test_load_state_dict_nested_unexpected_and_bad_values():
    m = nn.Sequential(nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "1.weight", "0.extra"'):
        m.load_state_dict({**m.state_dict(), "1.weight": tp.ones(1), "0.extra": tp.ones(1)})
    with pytest.raises(RuntimeError, match='While copying the parameter named "0.bias", expected tensorplug.Tensor'):
        m.load_state_dict({"0.weight": tp.ones(1, 1), "0.bias": [1.0]})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>"):
        m.load_state_dict([])


def test_load_state_dict_assign_and_post_hook():
    lin = nn.Linear(2, 2)
    new = {"weight": tp.ones(2, 2), "bias": tp.zeros(2)}
    lin.load_state_dict(new, assign=True)
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    assert lin.weight.data_ptr() == new["weight"].data_ptr()
    seen = []
    lin.register_load_state_dict_post_hook(lambda mod, keys: (seen.append(list(keys.missing_keys)),
                                                              keys.missing_keys.clear()) and None)
    assert lin.load_state_dict({"weight": tp.ones(2, 2)}).missing_keys == []
    assert seen == [["bias"]]


def test_batchnorm_loads_old_checkpoints_without_num_batches_tracked():
    bn = nn.BatchNorm1d(2)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""]["version"] = 1
    assert bn.load_state_dict(sd).missing_keys == []
    sd._metadata[""]["version"] = 2  # a current checkpoint must have it
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        bn.load_state_dict(sd)


def test_pickle_and_deepcopy_keep_parameters():
    m = Net()
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert isinstance(clone.fc1.weight, nn.Parameter) and clone.fc1.weight.requires_grad
        assert clone.fc1.weight is not m.fc1.weight
        assert np.array_equal(clone.fc1.weight.detach().numpy(), m.fc1.weight.detach().numpy())
        assert list(clone.state_dict()) == list(m.state_dict())
    shared = nn.Sequential(m.fc1, m.fc1)
    dup = copy.deepcopy(shared)
    assert dup[0].weight is dup[1].weight


# -- modes, gradients, conversions ----------------------------------------------------------------------
def test_train_eval_recurse():
    m = nn.Sequential(Net(), nn.Dropout())
    assert m.training and m[0].fc1.training
    assert m.eval() is m
    assert not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)


def test_zero_grad_and_requires_grad():
    m = Net()
    m(tp.ones(2, 4)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())


def test_to_dtype_keeps_parameter_identity():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    w = m[0].weight
    m(tp.ones(3, 2)).sum().backward()
    assert m.to(tp.float64) is m
    assert m[0].weight is w and w.dtype is tp.float64 and w.requires_grad
    assert w.grad.dtype is tp.float64
    assert m[1].running_mean.dtype is tp.float64
    assert m[1].num_batches_tracked.dtype is tp.int64  # integer buffers keep their dtype
    assert m(tp.ones(3, 2, dtype=tp.float64)).dtype is tp.float64
    m.float()
    assert w.dtype is tp.float32
    m.to(dtype=tp.float16)
    assert w.dtype is tp.float16
    m.to("cpu")
    assert w.device.type == "cpu"
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got "
                                        "desired dtype=tensorplug.int64"):
        m.to(tp.int64)


# -- hooks -----------------------------------------------------------------------------------
def test_forward_hooks_change_inputs_and_outputs():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: (calls.append("pre"), args[0] * 0)[1])
    h2 = lin.register_forward_hook(lambda mod, args, out: (calls.append("post"), out + 1)[1])
    out = lin(tp.ones(1, 2))
    assert calls == ["pre", "post"]
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None] + 1, rtol=1e-6)
    h1.remove()
    h2.remove()
    assert np.allclose(lin(tp.zeros(1, 2)).detach().numpy(), lin.bias.detach().numpy())
    assert calls == ["pre", "post"]


def test_hooks_with_kwargs_prepend_and_always_call():
    class Add(nn.Module):
        def forward(self, x, *, y=0):
            if y == "boom":
                raise ValueError("boom")
            return x + y

    m = Add()
    order = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"y": 10}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("kw", kwargs["y"])), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    assert m(tp.tensor(1)).item() == 11
    assert order == ["first", ("kw", 10)]
    m2 = Add()
    seen = []
    m2.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m2(tp.tensor(1), y="boom")
    assert seen == [None]
    m3 = Add()
    m3.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of \\(new_args, "
                                           "new_kwargs\\), but got 5."):
        m3(tp.tensor(1))


def test_hook_handle_as_context_manager():
    m = nn.Identity()
    seen = []
    with m.register_forward_hook(lambda mod, args, out: seen.append(out)):
        m(1)
    m(2)
    assert seen == [1]


# -- Parameter and Buffer --------------------------------------------------------------------------
def test_parameter_basics():
    t = tp.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, tp.Tensor) and p.requires_grad and p.is_leaf
    p.data[0] = 5.0
    assert t[0].item() == 5.0  # shares t's memory
    assert repr(p) == "Parameter containing:\ntensor([5., 2.], requires_grad=True)"
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    nonleaf = nn.Parameter(tp.ones(2, requires_grad=True) * 2)
    assert nonleaf.is_leaf and nonleaf.grad_fn is None
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        nn.Parameter(tp.tensor([1, 2]))
    assert not isinstance(p * 2, nn.Parameter)


def test_buffer_assignment_registers_buffer():
    m = nn.Module()
    m.b = nn.Buffer(tp.ones(2))
    m.c = nn.Buffer(tp.ones(1), persistent=False)
    assert list(m._buffers) == ["b", "c"] and m._non_persistent_buffers_set == {"c"}
    assert list(m.state_dict()) == ["b"]
    assert not isinstance(tp.ones(1), nn.Buffer)


# -- containers -------------------------------------------------------------------------------------
def test_sequential_indexing_and_editing():
    a, b, c = nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    sl = s[1:]
    assert isinstance(sl, nn.Sequential) and list(sl) == [b, c] and list(sl._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s[1] = nn.Tanh()
    assert isinstance(s[1], nn.Tanh)
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s.append(nn.Sigmoid()).insert(0, a)
    assert [type(x).__name__ for x in s] == ["Linear", "Tanh", "Linear", "Sigmoid"]
    assert s.pop(-1).__class__ is nn.Sigmoid and len(s) == 3
    both = s + nn.Sequential(nn.ReLU())
    assert len(both) == 4 and len(s.extend([nn.ReLU()])) == 4
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        s + [nn.ReLU()]
    named = nn.Sequential(OrderedDict(first=nn.Linear(1, 1), act=nn.ReLU()))
    assert [n for n, _ in named.named_children()] == ["first", "act"]
    out = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))(tp.ones(5, 1))
    assert out.shape == (5, 1)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.append(nn.Sigmoid())
    ml += [nn.ReLU()]
    ml.insert(1, nn.Identity())
    assert [type(x).__name__ for x in ml] == ["ReLU", "Identity", "Tanh", "Sigmoid", "ReLU"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    with pytest.raises(IndexError, match="index 9 is out of range"):
        ml[9]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        ml.extend(3)
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Linear(1, 1)
    md.update([("c", nn.Tanh())])
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert [n for n, _ in md.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(md.pop("a"), nn.ReLU) and list(md.keys()) == ["b", "c"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        md.update([("x",)])
    md.clear()
    assert len(md) == 0


# -- repr ----------------------------------------------------------------------------------------------
REPRS = [
    (lambda: nn.Sequential(nn.Linear(4, 3), nn.ReLU()),
     "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n  (1): ReLU()\n)"),
    (lambda: nn.Sequential(nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2)), nn.Flatten()),
     "Sequential(\n  (0): Sequential(\n    (0): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))\n"
     "    (1): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n  )\n"
     "  (1): Flatten(start_dim=1, end_dim=-1)\n)"),
    (lambda: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()]),
     "ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n  (3): ReLU()\n)"),
    (lambda: nn.ModuleList(), "ModuleList()"),
    (lambda: nn.ModuleDict({"a": nn.ReLU(inplace=True)}), "ModuleDict(\n  (a): ReLU(inplace=True)\n)"),
    (lambda: nn.Linear(2, 1, bias=False), "Linear(in_features=2, out_features=1, bias=False)"),
    (lambda: nn.Module(), "Module()"),
]


@pytest.mark.parametrize("make, text", REPRS)
def test_repr_matches_pytorch_layout(make, text):
    assert repr(make()) == text


def test_multiline_extra_repr_and_children():
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Identity()

        def extra_repr(self):
            return "alpha=1\nbeta=2"

    assert repr(Custom()) == "Custom(\n  alpha=1\n  beta=2\n  (inner): Identity()\n)"
