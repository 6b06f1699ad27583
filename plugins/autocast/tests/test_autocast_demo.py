"""``tensorplug demo --amp bf16`` and ``--amp fp16`` (with a GradScaler) reach float32's held-out
accuracy within one point."""

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")

from tensorplug import demo  # noqa: E402


def _accuracy(*extra):
    return demo.train(demo.parser().parse_args(["--epochs", "20", "--seed", "0", *extra]))


def test_mixed_precision_demo_matches_float32_accuracy(capsys):
    full = _accuracy()
    bf16 = _accuracy("--amp", "bf16")
    fp16 = _accuracy("--amp", "fp16")
    out = capsys.readouterr().out
    assert "autocast to tensorplug.bfloat16 on cpu" in out and "with a GradScaler" in out
    assert abs(bf16 - full) <= 0.01 and abs(fp16 - full) <= 0.01, (full, bf16, fp16)
