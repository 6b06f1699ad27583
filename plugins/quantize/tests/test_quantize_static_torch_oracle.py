"""Static quantization against PyTorch: observers' parameters, fake quantization bit for bit (values and
gradient masks), and the eager prepare / calibrate / convert flow on the same weights and data."""

import warnings

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import nn

torch = pytest.importorskip("torch")
ttq = torch.ao.quantization
tq = tp.ao.quantization


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Please use quant_min and quant_max")
        warnings.filterwarnings("ignore", message=".*must run observer.*")
        yield


def _kw(kwargs, lib):
    return {k: (getattr(lib, v) if isinstance(v, str) else v) for k, v in kwargs.items()}


OBSERVERS = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"reduce_range": True}),
    ("MinMaxObserver", {"dtype": "qint8"}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric", "reduce_range": True}),
    ("MinMaxObserver", {"qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 127}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 255, "reduce_range": True}),
    ("MinMaxObserver", {"qscheme": "per_tensor_symmetric", "quant_min": 0, "quant_max": 127}),
    ("MinMaxObserver", {"eps": 0.01}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.3, "dtype": "qint8",
                                     "qscheme": "per_tensor_symmetric"}),
    ("PerChannelMinMaxObserver", {}),
    ("PerChannelMinMaxObserver", {"dtype": "qint8", "qscheme": "per_channel_symmetric"}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1, "reduce_range": True}),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_affine_float_qparams"}),
    ("MovingAveragePerChannelMinMaxObserver", {"ch_axis": 1, "averaging_constant": 0.2}),
]


@pytest.mark.parametrize("name,kwargs", OBSERVERS, ids=[f"{n}-{k}" for n, k in OBSERVERS])
def test_observer_parameters_equal_torch(name, kwargs):
    ours = getattr(tq, name)(**_kw(kwargs, tp))
    theirs = getattr(ttq, name)(**_kw(kwargs, torch))
    assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
    rng = np.random.default_rng(len(name) + len(kwargs))
    for i in range(4):
        a = (rng.standard_normal((6, 5, 3)) * (i + 1) + 0.4 * i).astype(np.float32)
        ours(tp.tensor(a))
        theirs(torch.tensor(a))
    s, z = ours.calculate_qparams()
    ts, tz = theirs.calculate_qparams()
    np.testing.assert_array_equal(s.numpy(), ts.numpy())
    np.testing.assert_array_equal(z.numpy(), tz.numpy().astype(z.numpy().dtype))
    assert s.dtype is tp.float32


def test_observer_on_constant_and_tiny_inputs_equals_torch():
    for a in (np.zeros(4, np.float32), np.full(4, 1e-9, np.float32), np.full(3, -7.0, np.float32)):
        for kwargs in ({}, {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}):
            ours, theirs = tq.MinMaxObserver(**_kw(kwargs, tp)), ttq.MinMaxObserver(**_kw(kwargs, torch))
            ours(tp.tensor(a))
            theirs(torch.tensor(a))
            s, z = ours.calculate_qparams()
            ts, tz = theirs.calculate_qparams()
            assert (s.item(), z.item()) == (ts.item(), tz.item())


@pytest.mark.parametrize("scale,zp,qmin,qmax", [(0.1, 3, 0, 255), (0.0234, 0, -128, 127), (0.5, 10, 0, 15),
                                                (1 / 3, -2, -8, 7), (0.25, 0, 0, 127)])
def test_fake_quantize_per_tensor_equals_torch_bit_for_bit(scale, zp, qmin, qmax):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 33)) * 3).astype(np.float32)
    a[0, :8] = np.arange(-4, 4) * np.float32(scale) / 2  # ties
    x = tp.tensor(a, requires_grad=True)
    y = tp.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
    (y * tp.tensor(np.arange(a.size, dtype=np.float32).reshape(a.shape))).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.fake_quantize_per_tensor_affine(xt, scale, zp, qmin, qmax)
    (yt * torch.arange(a.size, dtype=torch.float32).reshape(a.shape)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    assert 0 < (x.grad.numpy() == 0).sum() < a.size  # the mask cuts some, not all


@pytest.mark.parametrize("axis", [0, 1])
def test_fake_quantize_per_channel_equals_torch_bit_for_bit(axis):
    rng = np.random.default_rng(axis)
    a = (rng.standard_normal((12, 10)) * 4).astype(np.float32)
    n = a.shape[axis]
    sc = (np.abs(rng.standard_normal(n)) * 0.1 + 0.01).astype(np.float32)
    zp = rng.integers(-5, 5, n)
    x = tp.tensor(a, requires_grad=True)
    y = tp.fake_quantize_per_channel_affine(x, tp.tensor(sc), tp.tensor(zp), axis, -128, 127)
    y.sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.fake_quantize_per_channel_affine(xt, torch.tensor(sc), torch.tensor(zp, dtype=torch.int32), axis,
                                                -128, 127)
    yt.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("args", [(0.1, 300, 0, 255), (0.1, 0, 10, 5)])
def test_fake_quantize_errors_match_torch(args):
    with pytest.raises(RuntimeError) as theirs:
        torch.fake_quantize_per_tensor_affine(torch.zeros(3), *args)
    with pytest.raises(RuntimeError) as ours:
        tp.fake_quantize_per_tensor_affine(tp.zeros(3), *args)
    expected = str(theirs.value).splitlines()[0].replace("\\", "").replace("  ", " ")
    assert " ".join(str(ours.value).split()) in " ".join(expected.split())


@pytest.mark.parametrize("backend,version", [("x86", 0), ("x86", 1), ("qnnpack", 0), ("qnnpack", 1),
                                             ("onednn", 1)])
def test_qat_fake_quantize_modules_equal_torch_over_steps(backend, version):
    ours = tq.get_default_qat_qconfig(backend, version).activation()
    theirs = ttq.get_default_qat_qconfig(backend, version).activation()
    ow, tw = tq.get_default_qat_qconfig(backend, version).weight(), ttq.get_default_qat_qconfig(backend, version).weight()
    assert type(ours).__name__ == type(theirs).__name__ and type(ow).__name__ == type(tw).__name__
    rng = np.random.default_rng(5)
    for i in range(4):
        a = (rng.standard_normal((16, 8)) * (1 + i) + (0.5 if i == 3 else 0)).astype(np.float32)
        with torch.no_grad():
            np.testing.assert_array_equal(ours(tp.tensor(a)).numpy(), theirs(torch.tensor(a)).numpy())
            np.testing.assert_array_equal(ow(tp.tensor(a)).numpy(), tw(torch.tensor(a)).numpy())
    assert ours.scale.tolist() == theirs.scale.tolist() and ow.scale.tolist() == tw.scale.tolist()
    assert ours.zero_point.tolist() == theirs.zero_point.tolist()
    s, z = ow.calculate_qparams()
    ts, tz = tw.calculate_qparams()
    assert s.tolist() == ts.tolist() and z.tolist() == tz.tolist()


# -- the eager static flow --------------------------------------------------------------------------
def _qconfigs():
    ours = tq.QConfig(activation=tq.MinMaxObserver.with_args(reduce_range=True),
                      weight=tq.PerChannelMinMaxObserver.with_args(dtype=tp.qint8, qscheme=tp.per_channel_symmetric))
    theirs = ttq.QConfig(activation=ttq.MinMaxObserver.with_args(reduce_range=True),
                         weight=ttq.default_per_channel_weight_observer)
    return ours, theirs


def _copy_params(ours, theirs):
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n1 == n2
        p2.data = torch.tensor(p1.detach().numpy())


def _flow(ours, theirs, fuse, data, engine, qconfig_pair=None):
    _copy_params(ours, theirs)
    ours.eval()
    theirs.eval()
    if fuse:
        ours = tq.fuse_modules(ours, fuse)
        theirs = ttq.fuse_modules(theirs, fuse)
    oq, tqc = qconfig_pair or _qconfigs()
    ours.qconfig, theirs.qconfig = oq, tqc
    po, pt = tq.prepare(ours), ttq.prepare(theirs)
    for a in data:
        po(tp.tensor(a))
        pt(torch.tensor(a))
    with _engine(engine):
        co, ct = tq.convert(po), ttq.convert(pt)
        return co, ct, _run_both(co, ct, data[0])


class _engine:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.old = torch.backends.quantized.engine
        torch.backends.quantized.engine = self.name

    def __exit__(self, *exc):
        torch.backends.quantized.engine = self.old


def _run_both(co, ct, a):
    with torch.no_grad():
        return co(tp.tensor(a)).numpy(), ct(torch.tensor(a)).numpy()


def _output_scale(co):
    mods = [m for m in co.modules() if hasattr(m, "scale") and isinstance(getattr(m, "scale"), float)]
    return mods[-1].scale


@pytest.mark.parametrize("engine", ["x86", "fbgemm"])
def test_linear_flow_equals_torch_within_one_step(engine):
    tp.manual_seed(0)
    ours = nn.Sequential(tq.QuantStub(), nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 24), tq.DeQuantStub())
    theirs = torch.nn.Sequential(ttq.QuantStub(), torch.nn.Linear(48, 64), torch.nn.ReLU(), torch.nn.Linear(64, 24),
                                 ttq.DeQuantStub())
    rng = np.random.default_rng(1)
    data = [rng.standard_normal((32, 48)).astype(np.float32) for _ in range(3)]
    co, ct, (yo, yt) = _flow(ours, theirs, None, data, engine)
    # the float activations the observers see differ from torch's in the last bits (BLAS order)
    assert co[1].scale == pytest.approx(ct[1].scale, rel=1e-5) and co[1].zero_point == ct[1].zero_point
    assert co[0].scale.tolist() == ct[0].scale.tolist()
    np.testing.assert_array_equal(co[1].weight().int_repr().numpy(), ct[1].weight().int_repr().numpy())
    step = _output_scale(co)
    assert np.abs(yo - yt).max() <= step * 1.001
    assert (yo == yt).mean() > 0.95


@pytest.mark.parametrize("engine", ["x86", "fbgemm"])
def test_fused_linear_relu_flow_equals_torch(engine):
    tp.manual_seed(2)
    ours = nn.Sequential(tq.QuantStub(), nn.Linear(40, 30), nn.ReLU(), nn.Linear(30, 10), tq.DeQuantStub())
    theirs = torch.nn.Sequential(ttq.QuantStub(), torch.nn.Linear(40, 30), torch.nn.ReLU(), torch.nn.Linear(30, 10),
                                 ttq.DeQuantStub())
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((16, 40)).astype(np.float32) for _ in range(2)]
    pair = (tq.default_qconfig, ttq.default_qconfig)  # per-tensor weights
    co, ct, (yo, yt) = _flow(ours, theirs, [["1", "2"]], data, engine, pair)
    assert type(ct[1]).__name__ == "LinearReLU" and co[1]._get_name() == "QuantizedLinearReLU"
    assert np.abs(yo - yt).max() <= _output_scale(co) * 1.001


@pytest.mark.parametrize("engine", ["x86", "fbgemm"])
def test_conv_relu_flow_equals_torch_within_one_step(engine):
    tp.manual_seed(4)
    ours = nn.Sequential(tq.QuantStub(), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(8, 6, 3, stride=2, padding=1), tq.DeQuantStub())
    theirs = torch.nn.Sequential(ttq.QuantStub(), torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.Conv2d(8, 6, 3, stride=2, padding=1), ttq.DeQuantStub())
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((2, 3, 10, 10)).astype(np.float32) for _ in range(3)]
    co, ct, (yo, yt) = _flow(ours, theirs, [["1", "2"]], data, engine)
    assert co[1].scale == pytest.approx(ct[1].scale, rel=1e-5) and co[1].zero_point == ct[1].zero_point
    assert yo.shape == yt.shape == (2, 6, 5, 5)
    assert np.abs(yo - yt).max() <= _output_scale(co) * 1.001
    with torch.no_grad():
        io = co[:4](tp.tensor(data[1])).int_repr().numpy().astype(np.int64)
        it = ct[:4](torch.tensor(data[1])).int_repr().numpy().astype(np.int64)
    assert np.abs(io - it).max() <= 1 and (io == it).mean() > 0.95


def test_conv_bn_fusion_equals_torch():
    tp.manual_seed(6)
    ours = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    rng = np.random.default_rng(7)
    mean, var = rng.standard_normal(4).astype(np.float32), (rng.random(4) + 0.5).astype(np.float32)
    with tp.no_grad():
        ours[1].running_mean.copy_(tp.tensor(mean))
        ours[1].running_var.copy_(tp.tensor(var))
    theirs[1].running_mean.copy_(torch.tensor(mean))
    theirs[1].running_var.copy_(torch.tensor(var))
    _copy_params(ours, theirs)
    fo = tq.fuse_modules(ours.eval(), ["0", "1", "2"])
    ft = ttq.fuse_modules(theirs.eval(), ["0", "1", "2"])
    np.testing.assert_allclose(fo[0][0].weight.detach().numpy(), ft[0][0].weight.detach().numpy(), rtol=1e-6,
                               atol=1e-7)
    np.testing.assert_allclose(fo[0][0].bias.detach().numpy(), ft[0][0].bias.detach().numpy(), rtol=1e-6, atol=1e-7)


HISTOGRAM_DATA = {
    "normal": lambda r, i: r.standard_normal((32, 20)) * (1 + i) + 0.3,
    "positive": lambda r, i: np.abs(r.standard_normal((64, 64))) * (i + 1),
    "heavy_tails": lambda r, i: r.standard_normal((4, 3, 16, 16)) ** 3,
    "constant": lambda r, i: np.full((4, 4), 2.5),
    "shrinking": lambda r, i: r.standard_normal(5000) * (3 - i),
}


@pytest.mark.parametrize("data", sorted(HISTOGRAM_DATA))
@pytest.mark.parametrize("kwargs", [{"reduce_range": True}, {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
                                    {"bins": 256, "quant_min": 0, "quant_max": 127}])
def test_histogram_observer_equals_torch(data, kwargs):
    ours = tq.HistogramObserver(**_kw(kwargs, tp))
    theirs = ttq.HistogramObserver(**_kw(kwargs, torch))
    rng = np.random.default_rng(0)
    for i in range(3):
        a = HISTOGRAM_DATA[data](rng, i).astype(np.float32)
        assert ours(tp.tensor(a)) is not None
        theirs(torch.tensor(a))
    np.testing.assert_array_equal(ours.histogram.numpy(), theirs.histogram.numpy())
    assert (ours.min_val.item(), ours.max_val.item()) == (theirs.min_val.item(), theirs.max_val.item())
    s, z = ours.calculate_qparams()
    ts, tz = theirs.calculate_qparams()
    assert s.tolist() == ts.tolist() and z.tolist() == tz.tolist()


def test_default_qconfig_flow_equals_torch():
    """get_default_qconfig("x86") on both sides: histogram activations, per-channel weights."""
    tp.manual_seed(8)
    ours = nn.Sequential(tq.QuantStub(), nn.Linear(24, 32), nn.ReLU(), nn.Linear(32, 8), tq.DeQuantStub())
    theirs = torch.nn.Sequential(ttq.QuantStub(), torch.nn.Linear(24, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8),
                                 ttq.DeQuantStub())
    rng = np.random.default_rng(9)
    data = [rng.standard_normal((16, 24)).astype(np.float32) for _ in range(2)]
    pair = (tq.get_default_qconfig("x86"), ttq.get_default_qconfig("x86"))
    co, ct, (yo, yt) = _flow(ours, theirs, [["1", "2"]], data, "x86", pair)
    assert co[0].scale.tolist() == ct[0].scale.tolist() and co[0].zero_point.tolist() == ct[0].zero_point.tolist()
    assert co[1].scale == pytest.approx(ct[1].scale, rel=1e-4)
    assert np.abs(yo - yt).max() <= _output_scale(co) * 1.001
