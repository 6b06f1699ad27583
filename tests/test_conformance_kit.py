"""The conformance kit, tested with a deliberately broken toy backend and a small op database.

``brokendev`` keeps its memory in numpy. It implements the memory
primitives (``empty``, ``fill_``, ``copy_``, ``as_strided``) and four broken
kernels: an ``add`` that ignores ``alpha``, a ``sum`` that keeps integer
inputs' dtype instead of giving int64, and a ``matmul`` that reads its
operands' storage as if they were contiguous; ``exp``, which it claims to
implement natively, has no kernel at all. Every other op reaches the CPU's
kernels through a boxed fallback that copies to the host and back. The kit
must fail exactly the four broken ops, report the ops served by the fallback
as "fallback", and pass the CPU.
"""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest

import tensorplug as tp
from toy_plugins.testdev import NumpyTestBackend
from tensorplug import cli
from tensorplug.backend import BACKENDS
from tensorplug.ops.promotion import binary_dtype
from tensorplug.tensor import make_tensor, make_view
from tensorplug.testing import (OpInfo, SampleInput, ErrorInput, run_conformance, register_transform_check,
                                fallback_ops, conformance_config, TRANSFORM_CHECKS, CHECKS)
from tensorplug.testing import suite

pytest_plugins = ["pytester"]

THIS_FILE = pathlib.Path(__file__).resolve()
BROKEN = {"add", "exp", "sum", "matmul"}
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")


# -- the broken toy backend ------------------------------------------------------------------
class BrokenBackend(NumpyTestBackend):
    """Host memory in numpy arrays of its own (the test backend's memory methods)."""

    name = "brokendev"
    key_name = "BrokenDev"
    slot = None

    def normalize_device(self, dev):
        return dev


def _result(arr, dtype, device=None):
    return make_tensor(np.asarray(arr, dtype=dtype.np), dtype, device or tp.device("brokendev"),
                       BACKENDS["brokendev"].ks)


def _empty(size, dtype=None, device=None):
    d = dtype or tp.get_default_dtype()
    # an explicit index is honoured (the kit's device_index check asks for brokendev:0)
    return _result(np.empty(size, dtype=d.np), d, device if device is not None and device.index is not None else None)


def _fill_(self, value):
    self._data.fill(value)
    return self


def _store(dst, src):
    with np.errstate(all="ignore"):
        np.copyto(dst._data, src._host(), casting="unsafe")


def _copy_(self, src, non_blocking=False):
    _store(self, src)  # both directions between host and device run here: the higher backend bit wins
    return self


def _as_strided(self, size, stride, storage_offset=None):
    b = BACKENDS["brokendev"]
    root, _ = b.storage(self._data)
    off = self.storage_offset() if storage_offset is None else storage_offset
    return make_view(self, b.as_strided(root, size, stride, off, self._dtype))


def _add(self, other, alpha=1):  # broken: alpha is ignored
    dt = binary_dtype(self, other)
    return _result(self._data.astype(dt.np) + other._data.astype(dt.np), dt)


def _sum(self, dim=None, keepdim=False, dtype=None):  # broken: integers keep their dtype
    axis = tuple(dim) if dim and self._data.ndim else None  # a 0-dim tensor reduces over dim 0 or -1
    return _result(np.sum(self._data, axis=axis, keepdims=keepdim), dtype or self._dtype)


def _raw(t):
    """The broken matmul's view of an operand: its storage read as if it were contiguous."""
    root, off = BACKENDS["brokendev"].storage(t._data)
    return root.reshape(-1)[off:off + t.numel()].reshape(t.shape)


def _matmul(self, other):
    dt = binary_dtype(self, other)
    return _result(np.matmul(_raw(self).astype(dt.np), _raw(other).astype(dt.np)), dt)


KERNELS = {"empty": _empty, "fill_.Scalar": _fill_, "copy_": _copy_, "as_strided": _as_strided,
           "add.Tensor": _add, "sum.dim_IntList": _sum, "matmul": _matmul}
NATIVE_ONLY = {"tensorplug::exp"}  # promised natively, so the fallback must not hide the missing kernel


def _cpu_fallback(op, keyset, *args):
    """Run ``op`` on CPU copies of the brokendev tensors, then copy written arguments and results back."""
    if op.qualname in NATIVE_ONLY:
        raise NotImplementedError(f"Could not run '{op.qualname}' with arguments from the 'BrokenDev' backend.")
    dev = tp.device("brokendev")
    with tp.no_grad():
        host = [suite.map_tensors(a, lambda t: t.cpu() if t.device == dev else t) for a in args]
        out = op.positional(*host)
        for a, h, arg in zip(args, host, op.schema.arguments):
            if arg.is_write and isinstance(a, tp.Tensor) and a is not h:
                _store(a, h)
        inputs = {id(h): a for a, h in zip(args, host)}
        return suite.map_tensors(out, lambda t: inputs[id(t)] if id(t) in inputs else t.to(dev))


CONFORMANCE = {"backend": "brokendev"}


class BrokenDevPlugin:
    """The toy plugin: backend record, kernels, fallback and conformance declaration."""

    @tp.hookimpl
    def tensorplug_backends(self):
        return [BrokenBackend()]

    @tp.hookimpl
    def tensorplug_register_kernels(self, library):
        lib = library("tensorplug", "IMPL", "BrokenDev")
        for name, fn in KERNELS.items():
            lib.impl(name, fn)
        library("tensorplug", "IMPL").fallback(_cpu_fallback, "BrokenDev")

    @tp.hookimpl
    def tensorplug_conformance(self):
        return CONFORMANCE


# -- a small op database ------------------------------------------------------------------------
FLOATS = (tp.float16, tp.bfloat16, tp.float32, tp.float64)


def make(shape, dtype, seed=0, transposed=False):
    """A CPU tensor with values in [-3, 3) (floats) or [0, 4] (integers); ``transposed`` gives a
    non-contiguous view of the right shape."""
    rng = np.random.default_rng(seed)
    full = shape[::-1] if transposed else shape
    v = rng.uniform(-3, 3, size=full) if dtype.is_floating_point else rng.integers(0, 5, size=full)
    t = tp.tensor(v, dtype=dtype)
    return t.t() if transposed else t


def binary_samples(device, dtype, requires_grad):
    yield SampleInput(make((3,), dtype), (make((3,), dtype, 1),), name="vector")
    yield SampleInput(make((2, 3), dtype), (make((3,), dtype, 1),), name="broadcast")
    yield SampleInput(make((2, 3), dtype, transposed=True), (make((2, 3), dtype, 1),), name="transposed")


def add_samples(device, dtype, requires_grad):
    yield from binary_samples(device, dtype, requires_grad)
    yield SampleInput(make((2,), dtype), (make((2,), dtype, 1),), {"alpha": 2}, name="alpha")


def unary_samples(device, dtype, requires_grad):
    yield SampleInput(make((4,), dtype), name="vector")
    yield SampleInput(make((3, 2), dtype, transposed=True), name="transposed")
    yield SampleInput(make((), dtype), name="scalar")


def matmul_samples(device, dtype, requires_grad):
    yield SampleInput(make((2, 3), dtype), (make((3, 2), dtype, 1),), name="matrices")
    yield SampleInput(make((3, 2), dtype, transposed=True), (make((2, 3), dtype, 1, transposed=True),),
                      name="transposed")


def add_errors(device):
    yield ErrorInput(SampleInput(make((2,), tp.float32), (make((3,), tp.float32),)), RuntimeError,
                     r"The size of tensor a \(2\) must match the size of tensor b \(3\)")


def in_float64(fn):
    """A reference computing in float64 (or exactly, for integers) and rounding to the input's dtype."""
    def ref(*args, **kwargs):
        dt = args[0].dtype
        wide = [a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a for a in args]
        return np.asarray(fn(*wide, **kwargs)).astype(dt)
    return ref


def sum_ref(x):
    if x.dtype.kind in "biu":
        return np.asarray(np.sum(x, dtype=np.int64))
    return np.asarray(np.sum(x.astype(np.float64))).astype(x.dtype)


def bernoulli_samples(device, dtype, requires_grad):
    yield SampleInput(tp.full((6,), 0.5, dtype=dtype), name="half")


SMALL_DB = [
    OpInfo("add", tp.add, ref=in_float64(lambda a, b, alpha=1: a + alpha * b), aten=("add.Tensor",),
           dtypes=FLOATS + (tp.int32, tp.int64), sample_inputs=add_samples, error_inputs=add_errors,
           inplace=tp.Tensor.add_),
    OpInfo("mul", tp.mul, ref=in_float64(np.multiply), aten=("mul.Tensor",), dtypes=FLOATS + (tp.int64,),
           sample_inputs=binary_samples, inplace=tp.Tensor.mul_),
    OpInfo("neg", tp.neg, ref=in_float64(np.negative), aten=("neg",), dtypes=FLOATS + (tp.int32,),
           sample_inputs=unary_samples, inplace=tp.Tensor.neg_),
    OpInfo("exp", tp.exp, ref=in_float64(np.exp), aten=("exp",), dtypes=FLOATS, sample_inputs=unary_samples,
           inplace=tp.Tensor.exp_),
    OpInfo("sum", tp.sum, ref=sum_ref, aten=("sum.dim_IntList",), dtypes=FLOATS + (tp.int16, tp.int32),
           sample_inputs=unary_samples),
    OpInfo("matmul", tp.matmul, ref=in_float64(np.matmul), aten=("matmul",), dtypes=(tp.float32, tp.float64),
           sample_inputs=matmul_samples),
    OpInfo("t", tp.t, ref=lambda a: a.T, dtypes=FLOATS + (tp.int64,), sample_inputs=unary_samples, is_view=True),
    OpInfo("bernoulli", tp.bernoulli, aten=("bernoulli",), dtypes=(tp.float32, tp.float64),
           sample_inputs=bernoulli_samples, supports_autograd=False, random=True),
]


@pytest.fixture
def brokendev(make_plugin, monkeypatch):
    """The broken backend, enabled; its conformance declaration can be changed through ``CONFORMANCE``."""
    monkeypatch.setattr(suite, "load_op_db", lambda: SMALL_DB)  # the CLI reads the database through it
    for key in ("xfail", "skip", "ops", "dtypes"):
        monkeypatch.setitem(CONFORMANCE, key, None)
    make_plugin(BrokenDevPlugin(), "brokendev")
    return CONFORMANCE


def by_op(report, status):
    return {case.opinfo.name for case, o in report.results if o.status == status}


# -- the broken backend through the report -------------------------------------------------------
def test_cpu_passes_the_small_database():
    report = run_conformance("cpu", op_db=SMALL_DB)
    counts = report.counts()
    assert report.ok and counts["failed"] == counts["fallback"] == counts["xfailed"] == 0
    assert counts["passed"] > 100
    assert {case.check.name for case, _ in report.results} == set(CHECKS) - {"grad_vs_cpu"}


def test_broken_backend_fails_exactly_the_broken_ops(brokendev):
    report = run_conformance("brokendev", op_db=SMALL_DB)
    assert by_op(report, "failed") == BROKEN
    failed = {(c.opinfo.name, c.check.name, c.dtype.name if c.dtype else None)
              for c, o in report.results if o.status == "failed"}
    # each bug shows where it should, and sum's dtype bug only for integer inputs
    assert {(op, chk) for op, chk, _ in failed if op == "add"} == {("add", "forward"), ("add", "inplace")}
    assert {(chk, dt) for op, chk, dt in failed if op == "sum"} == {("result_dtype", "int16"),
                                                                    ("result_dtype", "int32")}
    assert ("matmul", "noncontiguous", "float32") in failed
    assert all(o.message.startswith("NotImplementedError: Could not run 'tensorplug::exp'")
               for c, o in report.results if c.opinfo.name == "exp" and o.status == "failed")


def test_the_core_database_catches_the_broken_kernels(make_plugin):
    make_plugin(BrokenDevPlugin(), "brokendev")
    report = run_conformance("brokendev", ops="add,mul,neg,exp,sum,matmul,t")
    assert by_op(report, "failed") == BROKEN
    assert by_op(report, "fallback") >= {"mul", "neg"} and by_op(report, "passed") >= {"t"}


def test_fallback_ops_are_reported_as_fallback_never_as_passes(brokendev):
    report = run_conformance("brokendev", op_db=SMALL_DB)
    assert by_op(report, "fallback") >= {"mul", "neg", "bernoulli"}
    assert not by_op(report, "passed") & {"mul", "neg", "bernoulli"}
    assert by_op(report, "passed") >= {"t"}  # a view over the backend's own as_strided
    mul = next(r for r in report.ops() if r.op == "mul")
    assert mul.fallback == ("mul.Tensor",) and not mul.with_status("passed")


@pytest.mark.parametrize("op, expected", [("mul", ("mul.Tensor",)), ("neg", ("neg",)), ("t", ()),
                                          ("matmul", ())])
def test_fallback_ops_names_the_operators_the_fallback_serves(brokendev, op, expected):
    info = next(i for i in SMALL_DB if i.name == op)
    assert fallback_ops("brokendev", info) == expected
    assert fallback_ops("cpu", info) == ()


def test_declared_xfails_and_skips_are_honoured(brokendev):
    brokendev["xfail"] = {"add": "alpha is not implemented", "sum/result_dtype": "int64 sums, issue 7"}
    brokendev["skip"] = {"exp": "no exp on this device yet"}
    report = run_conformance("brokendev", op_db=SMALL_DB)
    assert by_op(report, "failed") == {"matmul"}
    assert by_op(report, "xfailed") == {"add", "sum"}
    assert {o.message for c, o in report.results if c.opinfo.name == "exp"} == {"no exp on this device yet"}
    sum_x = {c.check.name for c, o in report.results if c.opinfo.name == "sum" and o.status == "xfailed"}
    assert sum_x == {"result_dtype"}


def test_database_xfails_per_backend_are_honoured(brokendev):
    db = [OpInfo(**{**vars(SMALL_DB[0]), "xfails": {"brokendev": "known bad add"}}), *SMALL_DB[1:]]
    report = run_conformance("brokendev", op_db=db, ops="add,mul")
    assert by_op(report, "xfailed") == {"add"} and not by_op(report, "failed")


def test_conformance_config_comes_from_the_hook(brokendev):
    brokendev["dtypes"] = ["float32", tp.float64]
    brokendev["ops"] = ["m*"]
    cfg = conformance_config("brokendev")
    assert (cfg.backend, cfg.plugin, cfg.dtypes, cfg.ops) == ("brokendev", "brokendev", (tp.float32, tp.float64),
                                                              ("m*",))
    report = run_conformance("brokendev", op_db=SMALL_DB)
    assert {c.opinfo.name for c, _ in report.results} == {"mul", "matmul"}
    assert {c.dtype for c, _ in report.results} <= {tp.float32, tp.float64, None}
    assert conformance_config("cpu").backend == "cpu"
    with pytest.raises(LookupError, match="no enabled backend or transform is named 'nodev'"):
        conformance_config("nodev")


# -- each check catches its own kind of bug (on the CPU) -----------------------------------------
class WrongGrad(tp.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


def _randomized(x):
    return x + float(np.random.default_rng().uniform())


def _raw_neg(x):
    """Reads the storage as if it were contiguous (ignores strides and offset)."""
    root = x._get_storage().root.reshape(-1)
    return tp.tensor(-root[:x.numel()].reshape(x.shape), dtype=x.dtype)


def _not_inplace(x):
    return x.neg()


def _no_bump(x):
    x._data[...] = -x._data
    return x


def _bad_error(x, y):
    raise RuntimeError("a different message")


def _unary(**kw):
    return dict(dtypes=(tp.float32, tp.float64), sample_inputs=unary_samples, **kw)


BAD_OPS = [
    # (OpInfo, the check that must fail)
    (OpInfo("wrong_value", lambda x: x + 1, ref=lambda x: x, **_unary()), "forward"),
    (OpInfo("wrong_grad", WrongGrad.apply, ref=lambda x: 2 * x, **_unary()), "gradcheck"),
    (OpInfo("ignores_strides", _raw_neg, ref=np.negative, **_unary()), "noncontiguous"),
    (OpInfo("writes_input", lambda x: x.neg_(), ref=np.negative, **_unary()), "out_of_place"),
    (OpInfo("new_tensor_inplace", tp.neg, ref=np.negative, inplace=_not_inplace, **_unary()), "inplace"),
    (OpInfo("no_version_bump", tp.neg, ref=np.negative, inplace=_no_bump, **_unary()), "inplace"),
    (OpInfo("copy_not_view", lambda x: x.t().clone(), ref=lambda x: x.T, is_view=True, **_unary()), "view"),
    (OpInfo("wrong_dtype", lambda x: x.to(tp.float16), ref=lambda x: x, **_unary()), "result_dtype"),
    (OpInfo("bad_message", _bad_error, ref=np.add, dtypes=(tp.float32,), sample_inputs=binary_samples,
            error_inputs=add_errors), "error_inputs"),
    (OpInfo("unseeded", _randomized, random=True, **_unary()), "random_reproducible"),
]


@pytest.mark.parametrize("info, check", BAD_OPS, ids=[i.name for i, _ in BAD_OPS])
def test_each_check_fails_on_its_kind_of_bug(info, check):
    report = run_conformance("cpu", op_db=[info])
    failed = {c.check.name for c, o in report.results if o.status == "failed"}
    assert check in failed


# -- transform checks --------------------------------------------------------------------------
def test_transform_checks_run_through_the_same_report(monkeypatch):
    monkeypatch.setitem(TRANSFORM_CHECKS, "toytransform", {})
    seen = []

    def sees_call(device_type, opinfo, dtype):
        seen.append((device_type, opinfo.name, dtype))
        if opinfo.name == "exp":
            raise AssertionError("exp is not seen")

    register_transform_check("toytransform", "sees_call", sees_call)
    report = run_conformance("toytransform", ops="neg,exp", dtypes=[tp.float32], op_db=SMALL_DB)
    assert seen == [("cpu", "neg", tp.float32), ("cpu", "exp", tp.float32)]
    assert [(c.opinfo.name, o.status) for c, o in report.results] == [("neg", "passed"), ("exp", "failed")]
    assert report.target == "toytransform" and report.summary() == "1 passed, 1 failed, 0 skipped"


# -- the command line --------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_table_and_summary_for_the_broken_backend(capsys, brokendev):
    code, out, _ = run_cli(capsys, "conformance", "brokendev")
    assert code == 1
    lines = out.splitlines()
    m = SUMMARY.match(lines[-1])
    report = run_conformance("brokendev", op_db=SMALL_DB)
    c = report.counts()
    assert m and tuple(map(int, m.groups())) == (c["passed"], c["failed"], c["skipped"])
    assert lines[-2] == f"{c['fallback']} passed through a fallback (not counted as passed), 0 xfailed"
    table = {line.split()[0]: line.split() for line in lines[2:-2]}
    assert lines[1].split() == ["OP", "PASSED", "FAILED", "SKIPPED", "FALLBACK", "REASONS"]
    assert table["mul"][1:5] == ["-", "-", "-", "f16,bf16,f32,f64,i64"] and table["mul"][5:7] == ["via",
                                                                                               "mul.Tensor"]
    assert table["t"][1:4] == ["f16,bf16,f32,f64,i64", "-", "-"]
    assert table["sum"][2:4] == ["i16,i32", "-"] and table["sum"][5].startswith("result_dtype:")
    failing = {op for op, cells in table.items() if cells[2] != "-"}
    assert failing == BROKEN


def test_cli_ops_and_dtypes_narrow_the_run(capsys, brokendev):
    code, out, _ = run_cli(capsys, "conformance", "brokendev", "--ops", "m*,neg", "--dtypes", "float32")
    lines = out.splitlines()
    assert {line.split()[0] for line in lines[2:-2]} == {"mul", "matmul", "neg"}
    assert code == 1  # matmul's strides
    code, out, _ = run_cli(capsys, "conformance", "brokendev", "--ops", "mul,neg,t")
    assert code == 0 and SUMMARY.match(out.splitlines()[-1])


def test_cli_json(capsys, brokendev):
    code, out, _ = run_cli(capsys, "conformance", "brokendev", "--ops", "sum,mul", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["target"] == "brokendev" and data["backend"] == "brokendev"
    ops = {o["op"]: o for o in data["ops"]}
    assert ops["sum"]["failed"] == {"int16": ["result_dtype"], "int32": ["result_dtype"]}
    assert ops["mul"]["fallback_ops"] == ["mul.Tensor"] and ops["mul"]["passed"] == []
    assert sum(data["summary"].values()) == sum(len(o["cases"]) for o in data["ops"])
    assert all(case["status"] in ("passed", "fallback", "failed", "xfailed", "skipped")
               for o in data["ops"] for case in o["cases"])


def test_cli_cpu_passes(capsys, brokendev):
    code, out, _ = run_cli(capsys, "conformance", "cpu", "--dtypes", "float64,int32")
    assert code == 0
    m = SUMMARY.match(out.splitlines()[-1])
    assert m and int(m.group(1)) > 0 and m.group(2) == "0"


@pytest.mark.parametrize("argv, code, message", [
    (["conformance", "nodev"], 1, "tensorplug conformance: no enabled backend or transform is named 'nodev'"),
    (["conformance", "cpu", "--dtypes", "float33"], 2, "tensorplug conformance: unknown dtype 'float33'"),
])
def test_cli_errors(capsys, brokendev, argv, code, message):
    got, _, err = run_cli(capsys, *argv)
    assert got == code and err.startswith(message)


# -- the pytest plugin -------------------------------------------------------------------------
CONFTEST = f"""
import importlib.util
import sys

import tensorplug

_spec = importlib.util.spec_from_file_location("conformance_kit_toy", {str(THIS_FILE)!r})
toy = sys.modules["conformance_kit_toy"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(toy)
tensorplug.plugins.register(toy.BrokenDevPlugin(), "brokendev")


def pytest_unconfigure(config):
    tensorplug.plugins.forget("brokendev")
"""


# no cache, no tracebacks, no hypothesis plugin (which would import hypothesis afresh in every run)
INNER_ARGS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--tb=no")


def outcome_ops(reprec):
    """``{outcome: {op names}}`` of an inline run's conformance tests (ids are target-op-dtype-check)."""
    passed, skipped, failed = reprec.listoutcomes()
    out = {}
    for name, reports in (("passed", passed), ("skipped", skipped), ("failed", failed)):
        out[name] = {r.nodeid.split("[", 1)[1].split("-")[1] for r in reports}
    return out, (passed, skipped, failed)


def test_pytest_plugin_fails_exactly_the_broken_ops(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_conformance="""
        from conformance_kit_toy import SMALL_DB
        from tensorplug.testing import conformance_tests
        conformance_tests(globals(), backend="brokendev", op_db=SMALL_DB)
    """)
    reprec = pytester.inline_run(*INNER_ARGS)
    ops, (passed, skipped, failed) = outcome_ops(reprec)
    assert ops["failed"] == BROKEN
    fallback = [r for r in skipped if "fallback:" in str(r.longrepr)]
    assert {r.nodeid.split("[")[1].split("-")[1] for r in fallback} == {"mul", "neg", "bernoulli"}
    assert not {r.nodeid.split("[")[1].split("-")[1] for r in passed} & {"mul", "neg", "bernoulli"}
    assert any(r.nodeid.endswith("[brokendev-matmul-float32-noncontiguous]") for r in failed)


def test_pytest_option_chooses_the_backend(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_conformance="""
        from conformance_kit_toy import SMALL_DB
        from tensorplug.testing import conformance_tests
        conformance_tests(globals(), op_db=SMALL_DB, ops="add,mul,t")
    """)
    default = pytester.inline_run(*INNER_ARGS)
    passed, skipped, failed = default.listoutcomes()
    assert not failed and passed and all("[cpu-" in r.nodeid for r in passed + skipped)
    chosen = pytester.inline_run(*INNER_ARGS, "--tensorplug-backend", "brokendev")
    assert outcome_ops(chosen)[0]["failed"] == {"add"}
    both = pytester.inline_run(*INNER_ARGS, "--tensorplug-backend", "all")
    targets = {r.nodeid.split("[")[1].split("-")[0] for rs in both.listoutcomes() for r in rs}
    # "all" is every declared target: the backends, and transforms such as the profiler when enabled
    from tensorplug.testing.suite import conformance_targets
    assert targets == {"brokendev"} | set(conformance_targets()) and "cpu" in targets
