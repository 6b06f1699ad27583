"""What every program provides, and how a test or benchmark runs one.

A program module defines

* ``build(T)``: the model (an ``nn.Module`` of framework ``T``), in evaluation-free training mode;
* ``batches(n, seed)``: ``n`` batches of numpy arrays (the data, and any noise the step draws, so
  both frameworks see the same values);
* ``trainer(T, model)``: a function ``step(batch) -> float`` running one training step (forward,
  backward, optimizer and scheduler) and returning the loss.
"""

import importlib.util
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent
PROGRAMS = sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))


def load(name):
    """The program module ``name`` (a file of this folder)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    spec = importlib.util.spec_from_file_location(f"tp_programs.{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def copy_state(src_model, dst_model, T_dst):
    """Load ``src_model``'s parameters and buffers into ``dst_model`` (other framework), by name."""
    state = {k: T_dst.from_numpy(np.array(v.detach().cpu().numpy(), copy=True))
             for k, v in src_model.state_dict().items()}
    missing, unexpected = dst_model.load_state_dict(state, strict=True)
    return missing, unexpected


def as_tensor(T, a):
    """A numpy array as a tensor of framework ``T`` (int arrays become int64)."""
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        a = a.astype(np.int64)
    return T.from_numpy(np.ascontiguousarray(a))
