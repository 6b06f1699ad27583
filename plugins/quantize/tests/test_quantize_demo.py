"""``tensorplug demo --quantize int8|int8-weight|int4-weight``: the trained MLP quantized keeps its
held-out accuracy (within 1 point) in a file a fraction of the float32 one."""

import re

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

from tensorplug import demo  # noqa: E402


@pytest.mark.parametrize("kind,max_bytes", [("int8", 0.36), ("int8-weight", 0.36), ("int4-weight", 0.2)])
def test_quantized_demo_keeps_accuracy_in_fewer_bytes(kind, max_bytes, capsys):
    demo.train(demo.parser().parse_args(["--epochs", "8", "--seed", "0", "--quantize", kind]))
    out = capsys.readouterr().out
    rows = {m.group(1): (float(m.group(2)), int(m.group(3))) for m in
            re.finditer(r"^(float32|int8|int8-weight|int4-weight)\s+([\d.]+)%\s+(\d+)\s+[\d.]+$", out, re.M)}
    assert set(rows) == {"float32", kind}, out
    (acc_f, bytes_f), (acc_q, bytes_q) = rows["float32"], rows[kind]
    assert acc_q >= acc_f - 1.0, out
    assert bytes_q <= max_bytes * bytes_f, out   # biases stay float32: on this small MLP they weigh
