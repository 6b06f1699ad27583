"""Real programs against PyTorch: each program in examples/programs runs unchanged in both
frameworks; from PyTorch's initial weights and the same batches, every training step's loss agrees.

A program that needs something tensorplug lacks fails here, naming what it touched.
"""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorplug as tp  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "examples" / "programs"))
import _common  # noqa: E402

STEPS = 4


@pytest.mark.parametrize("name", _common.PROGRAMS)
def test_program_matches_pytorch(name):
    prog = _common.load(name)
    torch.manual_seed(0)
    theirs = prog.build(torch)
    tp.manual_seed(0)
    ours = prog.build(tp)
    missing, unexpected = _common.copy_state(theirs, ours, tp)
    assert not missing and not unexpected
    batches = prog.batches(STEPS, seed=1)
    their_step, our_step = prog.trainer(torch, theirs), prog.trainer(tp, ours)
    for i, b in enumerate(batches):
        want, got = their_step(b), our_step(b)
        assert math.isfinite(got)
        assert got == pytest.approx(want, rel=1e-3, abs=1e-4), f"step {i}: {got} != {want}"


def test_every_program_follows_the_protocol():
    assert len(_common.PROGRAMS) >= 10
    for name in _common.PROGRAMS:
        prog = _common.load(name)
        assert callable(prog.build) and callable(prog.trainer) and callable(prog.batches)
        assert len(prog.batches(2, seed=0)) == 2
