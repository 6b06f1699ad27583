"""tensorplug.save / tensorplug.load: safetensors files, round trips, corrupt files, interoperability."""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import signal
import stat
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorplug as tp

ALL_DTYPES = [tp.bool, tp.uint8, tp.int8, tp.int16, tp.int32, tp.int64, tp.float16, tp.bfloat16, tp.float32,
              tp.float64]


def sample(dtype, shape, seed=0):
    """Values covering each dtype's extremes (and nan / inf / -0.0 for floats)."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype is tp.bool:
        flat = rng.integers(0, 2, size=n).astype(bool)
    elif dtype.is_floating_point:
        info = ml_dtypes.finfo(dtype.np)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, float(info.max), float(info.tiny)], dtype=np.float64)
        flat = np.concatenate([specials, rng.normal(size=n)])[:n].astype(dtype.np)
    else:
        info = np.iinfo(dtype.np)
        flat = np.concatenate([[info.min, info.max, 0], rng.integers(info.min, info.max, size=n)])[:n]
        flat = flat.astype(dtype.np)
    return flat.reshape(shape)


def raw_bytes(t):
    """The tensor's elements as bytes: compares nan payloads and -0.0 exactly."""
    a = np.ascontiguousarray(t.numpy(force=True))
    return a.reshape(-1).view(np.uint8).tobytes()


def same_tensor(a, b):
    return a.dtype is b.dtype and a.shape == b.shape and raw_bytes(a) == raw_bytes(b)


def read_parts(path):
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def write_parts(path, header, data, pad=True):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-(8 + len(text)) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + data)


# -- round trips ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4), (3, 0, 2)])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_every_dtype_round_trips_bit_exactly(tmp_path, dtype, shape):
    t = tp.from_numpy(sample(dtype, shape))
    tp.save({"t": t}, tmp_path / "f.safetensors")
    back = tp.load(tmp_path / "f.safetensors")["t"]
    assert same_tensor(back, t)


def test_non_contiguous_views_and_grad_tensors_are_saved_by_value(tmp_path):
    base = tp.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    view = base.t()[1:5:2]
    leaf = tp.ones(3, requires_grad=True)
    tp.save({"v": view, "leaf": leaf}, tmp_path / "f")
    back = tp.load(tmp_path / "f")
    assert back["v"].tolist() == view.tolist() and back["v"].is_contiguous()
    assert back["leaf"].tolist() == [1.0, 1.0, 1.0] and not back["leaf"].requires_grad


NESTED = {
    "weights": {"layer.0": tp.arange(6).reshape(2, 3), "layer.1": tp.ones(2, dtype=tp.bfloat16)},
    0: [1, -2 ** 70, 2.5, -0.0, float("inf"), float("-inf"), None, True, False, "text", "ünï \"quoted\"\n"],
    1.5: (tp.zeros(0), ("nested", (1, 2)), []),
    None: {},
    True: {"deep": {"deeper": [tp.tensor(3.0), {"x": tp.tensor([True, False])}]}},
    "empty": (),
}


def assert_same_structure(a, b):
    assert type(a) is type(b)
    if isinstance(a, tp.Tensor):
        assert same_tensor(a, b)
    elif isinstance(a, dict):
        assert len(a) == len(b)
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            assert_same_structure(ka, kb)
            assert_same_structure(va, vb)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_structure(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


@pytest.mark.parametrize("obj", [NESTED, tp.arange(5), [tp.ones(2), 3], (), 7, "just a string", None,
                                 {"nan": float("nan")}, {float("nan"): 1}],
                         ids=["nested", "tensor", "list", "tuple", "int", "str", "none", "nan-value", "nan-key"])
def test_nested_structures_round_trip_with_key_and_value_types(tmp_path, obj):
    tp.save(obj, tmp_path / "f")
    assert_same_structure(obj, tp.load(tmp_path / "f"))


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (st.lists(children, max_size=4) | st.lists(children, max_size=4).map(tuple)
                      | st.dictionaries(st.integers() | st.text(max_size=5) | st.booleans() | st.none(),
                                        children, max_size=4)),
    max_leaves=20)


@settings(max_examples=60, deadline=None)
@given(plain)
def test_any_plain_structure_round_trips(obj):
    buf = io.BytesIO()
    tp.save({"value": obj, "t": tp.arange(3)}, buf)
    buf.seek(0)
    back = tp.load(buf)
    assert_same_structure(obj, back["value"])


def test_file_objects_and_pathlike_are_accepted(tmp_path):
    buf = io.BytesIO()
    tp.save({"a": tp.arange(3)}, buf)
    buf.seek(0)
    assert tp.load(buf)["a"].tolist() == [0, 1, 2]
    tp.save({"a": tp.arange(2)}, str(tmp_path / "s"))
    assert tp.load(str(tmp_path / "s"))["a"].tolist() == [0, 1]


def test_the_same_tensor_object_is_stored_once_and_loads_as_one_object(tmp_path):
    t = tp.arange(4, dtype=tp.float32)
    view = t[1:3]
    tp.save({"a": t, "b": [t], "v": view}, tmp_path / "f")
    header, _ = read_parts(tmp_path / "f")
    assert sorted(k for k in header if k != "__metadata__") == ["a", "v"]
    back = tp.load(tmp_path / "f")
    assert back["a"] is back["b"][0]
    back["v"].add_(100)  # views are stored by value: no aliasing after loading
    assert back["a"].tolist() == [0.0, 1.0, 2.0, 3.0] and back["v"].tolist() == [101.0, 102.0]


def test_tensor_names_follow_the_paths_and_stay_unique(tmp_path):
    tp.save({"a": {"b": tp.ones(1)}, "a.b": tp.zeros(1), "__metadata__": tp.ones(2)}, tmp_path / "f")
    header, _ = read_parts(tmp_path / "f")
    assert sorted(header) == ["__metadata__", "__metadata__#1", "a.b", "a.b#1"]
    back = tp.load(tmp_path / "f")
    assert back["a"]["b"].tolist() == [1.0] and back["a.b"].tolist() == [0.0]
    assert back["__metadata__"].tolist() == [1.0, 1.0]


def test_layout_follows_the_spec(tmp_path):
    tp.save({"b": tp.ones(3, dtype=tp.int8), "a": tp.ones(2, dtype=tp.float64), "c": tp.ones(1, dtype=tp.int16)},
            tmp_path / "f")
    raw = open(tmp_path / "f", "rb").read()
    n = int.from_bytes(raw[:8], "little")
    assert (8 + n) % 8 == 0 and raw[8:9] == b"{"
    header = json.loads(raw[8:8 + n])
    assert header["a"] == {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]}
    assert header["c"] == {"dtype": "I16", "shape": [1], "data_offsets": [16, 18]}
    assert header["b"] == {"dtype": "I8", "shape": [3], "data_offsets": [18, 21]}
    assert len(raw) == 8 + n + 21
    assert all(isinstance(v, str) for v in header["__metadata__"].values())


def test_map_location_places_tensors(tmp_path):
    tp.save({"a": tp.arange(3)}, tmp_path / "f")
    for loc in ("cpu", tp.device("cpu"), None):
        assert tp.load(tmp_path / "f", map_location=loc)["a"].device == tp.device("cpu")
    with pytest.raises((RuntimeError, ValueError)):
        tp.load(tmp_path / "f", map_location="nowhere")
    with pytest.raises(ValueError, match="weights_only=False is not supported"):
        tp.load(tmp_path / "f", weights_only=False)


# -- optimizer and scheduler checkpoints ----------------------------------------------------------
def test_optimizer_state_dict_round_trips_and_training_resumes_identically(tmp_path):
    rng = np.random.default_rng(0)
    init = [rng.normal(size=s) for s in [(3, 2), (2,)]]
    grads = [[rng.normal(size=a.shape) for a in init] for _ in range(6)]

    def make(params):
        opt = tp.optim.Adam([{"params": params[:1]}, {"params": params[1:], "lr": 0.01}], lr=0.1, amsgrad=True)
        return opt, tp.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def run(params, opt, sched, steps):
        for g in steps:
            for p, a in zip(params, g):
                p.grad = tp.tensor(a)
            opt.step()
            sched.step()

    ps = [tp.tensor(a, requires_grad=True) for a in init]
    opt, sched = make(ps)
    run(ps, opt, sched, grads[:3])
    tp.save({"model": {"w": ps[0], "b": ps[1]}, "optim": opt.state_dict(), "sched": sched.state_dict()},
            tmp_path / "ckpt")
    groups_at_save = opt.state_dict()["param_groups"]
    run(ps, opt, sched, grads[3:])

    ck = tp.load(tmp_path / "ckpt")
    assert_same_structure(ck["optim"]["param_groups"], groups_at_save)
    assert ck["optim"]["param_groups"][0]["betas"] == (0.9, 0.999)
    qs = [tp.tensor(ck["model"]["w"].numpy(), requires_grad=True), tp.tensor(ck["model"]["b"].numpy(),
                                                                             requires_grad=True)]
    opt2, sched2 = make(qs)
    opt2.load_state_dict(ck["optim"])
    sched2.load_state_dict(ck["sched"])
    run(qs, opt2, sched2, grads[3:])
    for p, q in zip(ps, qs):
        assert p.numpy(force=True).tolist() == q.numpy(force=True).tolist()
    assert sched2.get_last_lr() == sched.get_last_lr()


# -- what cannot be saved -------------------------------------------------------------------------
@pytest.mark.parametrize("obj, message", [
    ({"a": {1, 2}}, "cannot save an object of type set at 'a'"),
    ({"a": [np.ones(2)]}, "cannot save an object of type ndarray at 'a.0'"),
    ({"a": object()}, "cannot save an object of type object at 'a'"),
    (b"bytes", "cannot save an object of type bytes at the top level"),
    ({(1, 2): 3}, "cannot save a dict key of type tuple at the top level"),
])
def test_unsupported_objects_raise_type_error(tmp_path, obj, message):
    with pytest.raises(TypeError, match=message):
        tp.save(obj, tmp_path / "f")


def test_cycles_are_rejected_and_a_failed_save_leaves_the_old_file(tmp_path):
    tp.save({"a": tp.ones(1)}, tmp_path / "f")
    before = open(tmp_path / "f", "rb").read()
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="reference cycle at 'x.0'"):
        tp.save({"x": loop}, tmp_path / "f")
    assert open(tmp_path / "f", "rb").read() == before
    assert os.listdir(tmp_path) == ["f"]


# -- the file saving creates: mode, links, signals ------------------------------------------------
def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=oct)
def test_a_new_file_gets_the_mode_open_would_give(tmp_path, umask):
    old = os.umask(umask)
    try:
        with open(tmp_path / "by_open", "wb"):
            pass
        tp.save({"a": tp.ones(1)}, tmp_path / "by_save")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "by_save") == _mode(tmp_path / "by_open") == 0o666 & ~umask


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o666], ids=oct)
def test_overwriting_a_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / "f"
    tp.save({"a": tp.ones(1)}, path)
    os.chmod(path, mode)
    old = os.umask(0o077)
    try:
        tp.save({"a": tp.zeros(2)}, path)
    finally:
        os.umask(old)
    assert _mode(path) == mode and tp.load(path)["a"].tolist() == [0.0, 0.0]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_not_replaced(tmp_path):
    path = tmp_path / "f"
    tp.save({"a": tp.ones(1)}, path)
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError):
        open(path, "wb")
    with pytest.raises(PermissionError, match="Permission denied"):
        tp.save({"a": tp.zeros(1)}, path)
    assert tp.load(path)["a"].tolist() == [1.0] and os.listdir(tmp_path) == ["f"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_saving_to_a_symlink_writes_through_it(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "ckpt.safetensors"
    tp.save({"a": tp.ones(1)}, target)
    os.chmod(target, 0o640)
    (tmp_path / "link").symlink_to(os.path.join("real", "ckpt.safetensors"))  # relative, to another directory
    (tmp_path / "link2").symlink_to("link")                                   # a chain of links
    for name, value in (("link", 2.0), ("link2", 3.0)):
        tp.save({"a": tp.tensor([value])}, tmp_path / name)
        assert os.path.islink(tmp_path / name) and os.readlink(tmp_path / "link") == os.path.join("real",
                                                                                                  "ckpt.safetensors")
        assert tp.load(target)["a"].tolist() == [value] and _mode(target) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link", "link2", "real"] and os.listdir(tmp_path / "real") == [
        "ckpt.safetensors"]
    # a dangling link: open() would create its target, and so does save
    (tmp_path / "dangling").symlink_to(os.path.join("real", "new.safetensors"))
    tp.save({"a": tp.ones(2)}, tmp_path / "dangling")
    assert os.path.islink(tmp_path / "dangling") and tp.load(tmp_path / "real" / "new.safetensors")["a"].shape == (2,)
    # a loop of links: open() raises, and save must not replace a link with a file
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    with pytest.raises(OSError):
        open(tmp_path / "loop_a", "wb")
    with pytest.raises(OSError, match="symbolic links"):
        tp.save({"a": tp.ones(1)}, tmp_path / "loop_a")
    assert os.path.islink(tmp_path / "loop_a") and os.path.islink(tmp_path / "loop_b")


_SIGNAL_CHILD = """
import os, signal, sys
import tensorplug as tp
from tensorplug import serialization

path, signame, handler = sys.argv[1:4]
sig = getattr(signal, signame)
tp.save({"a": tp.ones(2)}, path)  # the previous file, which must survive
if handler == "exit":
    signal.signal(sig, lambda *a: sys.exit(3))
elif handler == "default":
    signal.signal(sig, signal.SIG_DFL)
before = signal.getsignal(sig)
real = serialization._host_bytes

def host_bytes(t):  # the signal arrives in the middle of writing the data section
    if t.numel() == 3:
        os.kill(os.getpid(), sig)
    return real(t)

serialization._host_bytes = host_bytes
try:
    tp.save({"a": tp.zeros(2), "b": tp.zeros(3), "c": tp.zeros(4)}, path)
except KeyboardInterrupt:
    assert signal.getsignal(sig) is before
    sys.exit(4)
print("the save finished")
"""


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("signame, handler, code", [
    ("SIGTERM", "none", -signal.SIGTERM),   # the default action: the process ends, killed by the signal
    ("SIGHUP", "none", -getattr(signal, "SIGHUP", 1)),
    ("SIGINT", "default", -signal.SIGINT),  # SIGINT reset to the default action
    ("SIGINT", "none", 4),                  # Python's own handler: KeyboardInterrupt
    ("SIGTERM", "exit", 3),                 # the program's handler runs, and raises SystemExit
])
def test_a_signal_during_a_save_leaves_no_temporary_file(tmp_path, signame, handler, code):
    path = tmp_path / "ckpt.safetensors"
    r = subprocess.run([sys.executable, "-c", _SIGNAL_CHILD, str(path), signame, handler],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == code, r.stderr
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert tp.load(path)["a"].tolist() == [1.0, 1.0]


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_save_restores_the_signal_handlers_and_works_in_any_thread(tmp_path):
    def mine(*args):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        tp.save({"a": tp.ones(1)}, tmp_path / "f")
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    tp.save({"a": tp.ones(1)}, tmp_path / "f")
    assert {s: signal.getsignal(s) for s in before} == before
    errors = []

    def save_in_thread():
        try:
            tp.save({"a": tp.zeros(1)}, tmp_path / "g")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=save_in_thread)
    t.start()
    t.join()
    assert errors == [] and tp.load(tmp_path / "g")["a"].tolist() == [0.0]


# -- corrupt and hostile files -------------------------------------------------------------------
@pytest.fixture
def good_file(tmp_path):
    path = tmp_path / "good.safetensors"
    tp.save({"x": tp.arange(6, dtype=tp.float32).reshape(2, 3), "n": [1, 2], "y": tp.ones(2, dtype=tp.int16)},
            path)
    return path


def test_every_truncation_raises_a_clear_error(good_file, tmp_path):
    raw = open(good_file, "rb").read()
    cut = tmp_path / "cut.safetensors"
    for n in range(len(raw)):
        cut.write_bytes(raw[:n])
        with pytest.raises(ValueError, match="tensorplug.load: .*cut.safetensors.*: (not a safetensors|truncated)"):
            tp.load(cut)


def _mutate(path, change):
    header, data = read_parts(path)
    header, data = change(header, data)
    write_parts(path, header, data)


def _set(name, field, value):
    def change(header, data):
        header[name][field] = value
        return header, data
    return change


def _set_structure(text):
    def change(header, data):
        header["__metadata__"]["tensorplug.structure"] = text
        return header, data
    return change


CORRUPTIONS = [
    ("gap between tensors", _set("y", "data_offsets", [26, 30]), "starts at byte 26 of the data section, expected 24"),
    ("overlap", _set("y", "data_offsets", [20, 24]),
     "data of tensor 'y' starts at byte 20 of the data section, expected 24"),
    ("size mismatch", _set("x", "shape", [3, 3]), "tensor 'x' of dtype F32 and shape \\[3, 3\\] needs 36 bytes"),
    ("offsets past the end", lambda h, d: ({**h, "y": {"dtype": "I16", "shape": [4], "data_offsets": [24, 32]}}, d),
     "truncated: the header describes 32 bytes of tensor data but the file holds 28"),
    ("negative offset", _set("x", "data_offsets", [-4, 20]), "invalid data_offsets \\[-4, 20\\]"),
    ("reversed offsets", _set("x", "data_offsets", [24, 0]), "invalid data_offsets"),
    ("float shape", _set("x", "shape", [2.0, 3]), "invalid shape \\[2.0, 3\\]"),
    ("unknown dtype", _set("x", "dtype", "F31"), "unknown dtype 'F31'"),
    ("unsupported dtype", _set("x", "dtype", "U32"), "tensor 'x' has dtype U32, which tensorplug does not support"),
    ("missing field", lambda h, d: ({**h, "x": {"dtype": "F32"}}, d), "lacks dtype, shape or data_offsets"),
    ("trailing bytes", lambda h, d: (h, d + b"\0" * 4), "4 bytes follow the last tensor's data"),
    ("missing data", lambda h, d: (h, d[:-2]), "truncated: the header describes 28 bytes of tensor data but the "
                                               "file holds 26"),
    ("metadata not strings", lambda h, d: ({**h, "__metadata__": {"k": 1}}, d), "__metadata__ must map strings"),
    ("header is a list", lambda h, d: ([1], d), "does not start with"),
    ("structure not json", _set_structure("{oops"), "the structure entry is not valid JSON"),
    ("structure without tree", _set_structure("{}"), "the structure entry has no tree"),
    ("newer structure", _set_structure('{"version": 99, "tree": null}'), "structure version 99"),
    ("dangling tensor name", _set_structure('{"version": 1, "tree": {"$tensor": "zz"}}'),
     "refers to a tensor 'zz' that the file does not hold"),
    ("unknown node", _set_structure('{"version": 1, "tree": {"$pickle": "cos\\nsystem"}}'),
     "unexpected structure node"),
    ("bad dict pair", _set_structure('{"version": 1, "tree": {"$dict": [[1]]}}'), "is not a \\[key, value\\] pair"),
    ("bad dict key", _set_structure('{"version": 1, "tree": {"$dict": [[[1], 2]]}}'), "invalid dict key"),
]


@pytest.mark.parametrize("what, change, message", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_headers_raise_value_error_naming_file_and_problem(good_file, what, change, message):
    _mutate(good_file, change)
    with pytest.raises(ValueError, match="tensorplug.load: '.*good.safetensors': .*(" + message + ")"):
        tp.load(good_file)


def test_a_tensor_the_structure_does_not_place_is_never_dropped(good_file):
    # another tool added a tensor and kept tensorplug's metadata: loading must not lose it silently
    header, data = read_parts(good_file)
    header["extra"] = {"dtype": "U8", "shape": [2], "data_offsets": [len(data), len(data) + 2]}
    write_parts(good_file, header, data + b"\x01\x02")
    with pytest.raises(ValueError, match=r"tensorplug.load: '.*good.safetensors': corrupt metadata: the structure "
                                         r"does not place the tensor 'extra' that the file holds"):
        tp.load(good_file)
    # the structure dropping one of tensorplug's own tensors likewise
    header, data = read_parts(good_file)
    del header["extra"]
    header["__metadata__"]["tensorplug.structure"] = json.dumps(
        {"version": 1, "tree": {"$dict": [["x", {"$tensor": "x"}]]}})
    write_parts(good_file, header, data[:-2])
    with pytest.raises(ValueError, match=r"does not place the tensor 'y' that the file holds"):
        tp.load(good_file)


def test_values_from_the_file_are_cut_short_in_messages(tmp_path):
    write_parts(tmp_path / "f", {"n" * 10_000: {"dtype": "F32" * 1000, "shape": [0], "data_offsets": [0, 0]}}, b"")
    with pytest.raises(ValueError, match="unknown dtype 'F32F32") as e:
        tp.load(tmp_path / "f")
    assert len(str(e.value)) < 400


def test_null_metadata_is_accepted_like_the_reference_reader_does(tmp_path):
    write_parts(tmp_path / "f", {"__metadata__": None, "x": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}},
                b"ab")
    assert tp.load(tmp_path / "f")["x"].tolist() == [97, 98]


@pytest.mark.parametrize("what, raw_header, message", [
    ("garbled json", b'{"x": {"dtype": "F32",, }', "invalid JSON"),
    ("not utf-8", b'{"\xff\xfe": 1}', "not valid UTF-8"),
    ("leading space", b' {}', "it does not start with '{'"),
    ("duplicate keys", b'{"x": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}, '
                       b'"x": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}', "the key 'x' appears twice"),
])
def test_garbled_header_bytes(tmp_path, what, raw_header, message):
    path = tmp_path / "bad"
    write_parts(path, raw_header, b"")
    with pytest.raises(ValueError, match="bad'?: corrupt header: " + message):
        tp.load(path)


def test_huge_header_size_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge"
    path.write_bytes((10 ** 12).to_bytes(8, "little") + b"{}")
    with pytest.raises(ValueError, match="header size field reads 1000000000000 bytes"):
        tp.load(path)


class _Payload:
    """Unpickling this would create a marker file: loading must never get that far."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickle_payloads_never_run(tmp_path):
    marker = tmp_path / "pwned"
    blob = pickle.dumps(_Payload(str(marker)))
    assert not marker.exists()
    (tmp_path / "p.pkl").write_bytes(blob)
    with pytest.raises(ValueError, match="not a safetensors file"):
        tp.load(tmp_path / "p.pkl")
    # a valid file carrying the pickle as tensor bytes and as metadata text: loaded as data, never executed
    payload = np.frombuffer(blob, dtype=np.uint8).copy()
    tp.save({"blob": tp.from_numpy(payload), "text": blob.decode("latin-1")}, tmp_path / "ok")
    back = tp.load(tmp_path / "ok")
    assert back["blob"].numpy().tobytes() == blob and back["text"].encode("latin-1") == blob
    assert not marker.exists()


# -- interoperability with the reference implementation --------------------------------------------
def test_files_interoperate_with_the_safetensors_package(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    from safetensors.numpy import load_file, save_file

    ours = {name: tp.from_numpy(sample(d, (2, 3), seed=i)) for i, (name, d) in
            enumerate((d.name, d) for d in ALL_DTYPES if d is not tp.bfloat16)}
    tp.save(ours, tmp_path / "ours.safetensors")
    theirs = load_file(str(tmp_path / "ours.safetensors"))
    assert sorted(theirs) == sorted(ours)
    for name, t in ours.items():
        assert theirs[name].dtype == t.dtype.np and theirs[name].tobytes() == raw_bytes(t)

    arrays = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "flags": np.array([True, False]),
              "scalar": np.array(3, dtype=np.int64), "empty": np.zeros((0, 2), dtype=np.float16)}
    save_file(arrays, str(tmp_path / "theirs.safetensors"), metadata={"source": "reference"})
    back = tp.load(tmp_path / "theirs.safetensors")
    assert sorted(back) == sorted(arrays)
    for name, a in arrays.items():
        assert back[name].numpy().dtype == a.dtype and back[name].shape == a.shape
        assert back[name].numpy().tobytes() == a.tobytes()

    # bfloat16 and nested structure: the reference parser accepts the header and sees our metadata
    tp.save({"opt": {"state": {0: {"m": tp.ones(2, dtype=tp.bfloat16)}}}}, tmp_path / "nested.safetensors")
    with safetensors.safe_open(str(tmp_path / "nested.safetensors"), framework="numpy") as f:
        assert list(f.keys()) == ["opt.state.0.m"]
        assert "tensorplug.structure" in f.metadata()


@pytest.mark.parametrize("where", ["header", "structure"])
def test_absurdly_deep_nesting_is_a_clear_error(tmp_path, where):
    deep = "[" * 100_000 + "]" * 100_000
    if where == "header":
        header = ('{"__metadata__": {}, "x": ' + deep + "}").encode()
        message = "corrupt header: the JSON is nested too deeply"
    else:
        header = json.dumps({"__metadata__": {"tensorplug.structure": '{"version": 1, "tree": ' + deep + "}"}})
        header = header.encode()
        message = "corrupt metadata: the structure is nested too deeply"
    write_parts(tmp_path / "deep", header, b"")
    with pytest.raises(ValueError, match=message):
        tp.load(tmp_path / "deep")


# -- fuzzing the loader: only ValueError naming the file, or a correct load -------------------------
_CODE_OF = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64,
            "F16": np.float16, "BF16": ml_dtypes.bfloat16, "F32": np.float32, "F64": np.float64}
_ALTERNATIVES = [None, True, 0, -1, 1, 3, 2 ** 63, 2 ** 64 + 5, 1.5, float("inf"), "", "F32", "x", [], [0], [[]],
                 [-1, 2], [0, 10 ** 30], [1] * 70, {}, {"$tensor": "x"}, {"$tensor": []}, {"$dict": [[[], 1]]},
                 {"$float": "nan"}, {"$float": [1]}, {"$tuple": None}, {"a": 1, "b": 2}]


def _json_paths(node, path=()):
    """Every (path, value) of a JSON tree, the root last."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _json_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _json_paths(v, path + (i,))
    yield path, node


def _replaced(tree, path, value, delete=False):
    """A deep copy of ``tree`` with the node at ``path`` replaced (or deleted)."""
    if not path:
        return value
    tree = json.loads(json.dumps(tree))
    parent = tree
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return tree


def _fuzz_cases(raw):
    """A deterministic list of (label, file bytes) variants of the valid file ``raw``."""
    n = int.from_bytes(raw[:8], "little")
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    cases = []

    def emit(label, header_obj, data=data):
        text = json.dumps(header_obj).encode()
        text += b" " * (-(8 + len(text)) % 8)
        cases.append((label, len(text).to_bytes(8, "little") + text + data))

    # the header size field
    for size in (0, 1, 2, 7, n - 1, n + 1, n + 8, len(raw) - 8, len(raw), 2 ** 63, 2 ** 64 - 1):
        cases.append((f"size field {size}", size.to_bytes(8, "little") + raw[8:]))
    # single bytes of the header overwritten
    rng = np.random.default_rng(12)
    for pos in sorted(rng.choice(np.arange(8, 8 + n), size=min(n, 120), replace=False)):
        for b in (b'"', b"}", b"\xff", rng.choice([b"0", b"[", b",", b"\x00", b"-", b"e", b"9"])):
            cases.append((f"byte {pos} -> {b!r}", raw[:pos] + b + raw[pos + 1:]))
    # every node of the header replaced or deleted; the structure tree likewise
    k = 0
    for path, _ in _json_paths(header):
        for _ in range(3):
            emit(f"header {path} = {_ALTERNATIVES[k % len(_ALTERNATIVES)]!r}",
                 _replaced(header, path, _ALTERNATIVES[k % len(_ALTERNATIVES)]))
            k += 1
        if path:
            emit(f"header {path} deleted", _replaced(header, path, None, delete=True))
    # shapes that agree with the data's size but not with what an array can be
    for shape in ([0, 10 ** 30], [0, 2 ** 62, 2 ** 62], [2 ** 64, 0], [0] * 70):
        emit(f"shape of e = {shape}", _replaced(header, ("e", "shape"), shape))
    emit("shape of s = [1] * 70", _replaced(header, ("s", "shape"), [1] * 70))
    structure = json.loads(header["__metadata__"]["tensorplug.structure"])
    for path, _ in _json_paths(structure):
        for _ in range(3):
            alt = _ALTERNATIVES[k % len(_ALTERNATIVES)]
            k += 1
            s = json.dumps(_replaced(structure, path, alt))
            emit(f"structure {path} = {alt!r}",
                 {**header, "__metadata__": {**header["__metadata__"], "tensorplug.structure": s}})
        if path:
            s = json.dumps(_replaced(structure, path, None, delete=True))
            emit(f"structure {path} deleted",
                 {**header, "__metadata__": {**header["__metadata__"], "tensorplug.structure": s}})
    # data section cut or extended
    for extra in (data[:-1], data + b"\0", b""):
        emit(f"data of {len(extra)} bytes", header, extra)
    return cases


def _tensors_in(obj, out):
    """The distinct tensors of a loaded object, by identity."""
    if isinstance(obj, tp.Tensor):
        out.setdefault(id(obj), obj)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            _tensors_in(key, out)
            _tensors_in(value, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _tensors_in(v, out)
    return out


def _check_correct_load(blob, loaded):
    """Every tensor the file's header describes was loaded, with its dtype, shape and bytes."""
    n = int.from_bytes(blob[:8], "little")
    header, data = json.loads(blob[8:8 + n]), blob[8 + n:]
    want = sorted((e["dtype"], tuple(e["shape"]), data[e["data_offsets"][0]:e["data_offsets"][1]])
                  for name, e in header.items() if name != "__metadata__")
    got = sorted((next(c for c, d in _CODE_OF.items() if np.dtype(d) == t.dtype.np), tuple(t.shape), raw_bytes(t))
                 for t in _tensors_in(loaded, {}).values())
    assert got == want


class _NamedBytes(io.BytesIO):
    """An in-memory file with a name, as open() gives: the fuzz test needs no disk."""

    name = "fuzz.safetensors"


def test_fuzzed_files_raise_value_error_naming_the_file_or_load_correctly():
    buf = _NamedBytes()
    tp.save({"w": tp.arange(6, dtype=tp.float32).reshape(2, 3), "meta": {1: [2.5, None, "s"], "t": (True,)},
             "b": tp.ones(3, dtype=tp.bfloat16), "e": tp.zeros(0, 2, dtype=tp.int64), "s": tp.tensor(7, dtype=tp.int8)},
            buf)
    cases = _fuzz_cases(buf.getvalue())
    assert len(cases) > 300
    bad, loaded = [], 0
    for label, blob in cases:
        try:
            result = tp.load(_NamedBytes(blob))
        except ValueError as e:
            if "tensorplug.load: fuzz.safetensors: " not in str(e):
                bad.append(f"{label}: ValueError not naming the file: {e}")
            continue
        except Exception as e:
            bad.append(f"{label}: {type(e).__name__}: {e}")
            continue
        try:
            _check_correct_load(blob, result)
            loaded += 1
        except AssertionError:
            bad.append(f"{label}: loaded, but not every tensor of the file came back intact")
    assert not bad, f"{len(bad)} of {len(cases)} cases:\n" + "\n".join(bad[:40])
    assert loaded  # some mutations (a renamed metadata value, say) leave a valid file
