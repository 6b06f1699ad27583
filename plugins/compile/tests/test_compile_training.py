"""Compiled and eager training give the same results, bit for bit: the same kernels run in the same order."""

import pytest

import tensorplug as tp
from tensorplug import nn
import tensorplug.nn.functional as F

from compile_helpers import cnn, dropout_bn, mlp, run_both, same, training_step


def batches(n, shape=(8, 20), classes=4, seed=1):
    tp.manual_seed(seed)
    return [(tp.randn(*shape), tp.randint(0, classes, (shape[0],))) for _ in range(n)]


@pytest.mark.parametrize("make_opt", [
    lambda m: tp.optim.SGD(m.parameters(), lr=0.1),
    lambda m: tp.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4),
    lambda m: tp.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True),
    lambda m: tp.optim.Adam(m.parameters(), lr=0.01),
    lambda m: tp.optim.AdamW(m.parameters(), lr=0.01, amsgrad=True),
], ids=["sgd", "sgd-momentum", "sgd-nesterov", "adam", "adamw-amsgrad"])
def test_a_whole_training_step_matches_eager_bit_for_bit(make_opt):
    m1, m2, l1, l2, step = run_both(mlp, make_opt, batches(8))
    assert l1 == l2
    assert all(same(a, b) for a, b in zip(m1.parameters(), m2.parameters()))
    assert all(same(a.grad, b.grad) for a, b in zip(m1.parameters(), m2.parameters()))
    assert step.graphs, "the step was never replayed"


def test_the_replayed_step_keeps_parameters_and_state_and_eager_steps_continue():
    model = mlp()
    opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    params = list(model.parameters())
    step = tp.compile(training_step(model, opt))
    data = batches(6)
    for x, y in data[:4]:
        step(x, y)
    assert step.graphs
    bufs = [opt.state[p]["momentum_buffer"] for p in params]
    assert list(model.parameters()) == params and all(opt.state[p]["momentum_buffer"] is b
                                                      for p, b in zip(params, bufs))
    # two more steps eagerly continue from where the compiled ones left
    ref = mlp()
    ref_opt = tp.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    ref_step = training_step(ref, ref_opt)
    for x, y in data:
        ref_step(x, y)
    eager = training_step(model, opt)
    for x, y in data[4:]:
        eager(x, y)
    assert all(same(a, b) for a, b in zip(ref.parameters(), model.parameters()))


def test_zero_grad_to_zeros_and_accumulating_steps():
    def make_opt(m):
        return tp.optim.SGD(m.parameters(), lr=0.05, momentum=0.5)
    data = batches(6)
    models = [mlp(), mlp()]
    opts = [make_opt(m) for m in models]

    def make_step(model, opt):
        def step(x, y):
            opt.zero_grad(set_to_none=False)
            for half in (slice(0, 4), slice(4, 8)):  # two micro-batches accumulate into .grad
                F.cross_entropy(model(x[half]), y[half]).backward()
            opt.step()
        return step
    eager, compiled = make_step(models[0], opts[0]), tp.compile(make_step(models[1], opts[1]))
    for x, y in data:
        eager(x, y)
        compiled(x, y)
    assert compiled.graphs
    assert all(same(a, b) for a, b in zip(models[0].parameters(), models[1].parameters()))


def test_a_compiled_forward_gives_eager_gradients():
    m1, m2 = mlp(), mlp()
    cm = tp.compile(m2)
    for x, y in batches(4):
        for m in (m1, cm):
            F.cross_entropy(m(x), y).backward()
    assert cm._compiled_call.graphs
    assert all(same(a.grad, b.grad) for a, b in zip(m1.parameters(), m2.parameters()))


def test_a_compiled_forward_with_inputs_that_require_grad():
    def f(x, w):
        return (x @ w).tanh().sum(0)
    cf = tp.compile(f)
    for i in range(4):
        x = tp.randn(5, 3, requires_grad=True)
        w = tp.randn(3, 2, requires_grad=True)
        g = tp.randn(2)
        out = cf(x, w)
        out.backward(g)
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        f(x2, w2).backward(g)
        assert same(x.grad, x2.grad) and same(w.grad, w2.grad)
    assert cf.graphs


def test_backward_twice_needs_retain_graph_and_double_backward_is_refused():
    cf = tp.compile(lambda x: (x * x).sum())
    x = tp.randn(4, requires_grad=True)
    for _ in range(3):
        cf(x)
    assert cf.graphs
    y = cf(x)
    y.backward(retain_graph=True)
    y.backward()
    assert same(x.grad, 4 * x.detach())
    (gx,) = tp.autograd.grad(cf(x), x, create_graph=False)
    assert same(gx, 2 * x.detach())
    with pytest.raises(RuntimeError, match="not differentiable"):
        tp.autograd.grad(cf(x), x, create_graph=True)


def test_a_cnn_training_step():
    data = batches(5, shape=(4, 1, 8, 8), classes=10)
    m1, m2, l1, l2, step = run_both(cnn, lambda m: tp.optim.SGD(m.parameters(), lr=0.05, momentum=0.9), data)
    assert l1 == l2 and step.graphs
    assert all(same(a, b) for a, b in zip(m1.parameters(), m2.parameters()))


def test_dropout_and_batch_norm_in_train_and_eval():
    data = batches(5, shape=(8, 12), classes=3)
    m1, m2 = dropout_bn(), dropout_bn()
    o1, o2 = (tp.optim.SGD(m.parameters(), lr=0.1) for m in (m1, m2))
    s1, s2 = training_step(m1, o1), tp.compile(training_step(m2, o2))
    for seed, (x, y) in enumerate(data):
        tp.manual_seed(100 + seed)
        a = s1(x, y)
        tp.manual_seed(100 + seed)
        b = s2(x, y)
        assert same(a, b)
    assert s2.graphs
    assert all(same(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))
    # eval: another guard set (the training flags), running statistics used, no dropout
    m1.eval()
    m2.eval()
    infer = tp.compile(m2)
    x = data[0][0]
    with tp.no_grad():
        outs = [infer(x) for _ in range(3)]
        assert all(same(o, m1(x)) for o in outs)
    assert infer._compiled_call.graphs


def test_dropout_draws_fresh_numbers_each_call_and_follows_the_seed():
    f = tp.compile(lambda x: F.dropout(x, 0.5, training=True))
    x = tp.ones(64)
    tp.manual_seed(0)
    got = [f(x) for _ in range(5)]
    tp.manual_seed(0)
    want = [F.dropout(x, 0.5, training=True) for _ in range(5)]
    assert f.graphs
    assert all(same(a, b) for a, b in zip(got, want))
    assert not same(got[3], got[4])


def test_per_sample_gradients_through_vmap():
    model = nn.Linear(5, 3)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = tp.func.functional_call(model, p, (x.unsqueeze(0),))
        return F.cross_entropy(out, y.unsqueeze(0))

    def per_sample(p, x, y):
        return tp.func.vmap(tp.func.grad(loss), in_dims=(None, 0, 0))(p, x, y)

    cf = tp.compile(per_sample)
    for i in range(4):
        x, y = tp.randn(6, 5), tp.randint(0, 3, (6,))
        got, want = cf(params, x, y), per_sample(params, x, y)
        assert all(same(got[k], want[k]) for k in want)
    assert cf.graphs


def test_the_demo_model_trains_the_same_compiled():
    from tensorplug import demo
    tp.manual_seed(0)
    x, y = tp.randn(16, 8, 8), tp.randint(0, 10, (16,))
    models = []
    for _ in range(2):
        tp.manual_seed(0)
        models.append(demo.make_model("cnn"))
    opts = [tp.optim.Adam(m.parameters(), lr=1e-3) for m in models]
    eager, compiled = training_step(models[0], opts[0]), tp.compile(training_step(models[1], opts[1]))
    for _ in range(5):
        assert same(eager(x, y), compiled(x, y))
    assert compiled.graphs


@pytest.mark.parametrize("device", ["openreg", "minimal"])
def test_other_backends_get_compile_through_their_kernels(device):
    if not tp.plugins.is_enabled(device):
        pytest.skip(f"the {device} plugin is not enabled")
    model = mlp().to(device)
    ref = mlp().to(device)
    opt, ref_opt = (tp.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref))
    step, ref_step = tp.compile(training_step(model, opt)), training_step(ref, ref_opt)
    for x, y in batches(5):
        x, y = x.to(device), y.to(device)
        assert same(step(x, y).cpu(), ref_step(x, y).cpu())
    assert step.graphs
    assert all(same(a.cpu(), b.cpu()) for a, b in zip(model.parameters(), ref.parameters()))


def test_two_threads_trace_and_replay_their_own_steps():
    import threading
    data = batches(6)
    results = {}
    models = {name: mlp() for name in ("c0", "c1", "eager")}  # (the generator is shared: seeded here)

    def train(name, compiled):
        model = models[name]
        opt = tp.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        step = training_step(model, opt)
        step = tp.compile(step) if compiled else step
        results[name] = [step(x, y).item() for x, y in data] + [p.detach().clone() for p in model.parameters()]
    threads = [threading.Thread(target=train, args=(f"c{i}", True)) for i in range(2)]
    for t in threads:
        t.start()
    train("eager", False)
    for t in threads:
        t.join()
    for name in ("c0", "c1"):
        got, want = results[name], results["eager"]
        assert got[:6] == want[:6] and all(same(a, b) for a, b in zip(got[6:], want[6:]))
