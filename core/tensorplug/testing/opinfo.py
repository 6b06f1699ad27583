"""The op database: one :class:`OpInfo` per public op, primitive or composite.

Each entry says how to call the op, which inputs to try (:class:`SampleInput`),
what the right answer is (a numpy reference), which dtypes it supports,
whether autograd applies, which bad inputs must raise what, and which
backends skip or expect failure on it (with a reason). The generic tests in
``tensorplug.testing`` are instantiated from this table per backend x op x dtype.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional


@dataclasses.dataclass
class SampleInput:
    """Arguments for one call: ``input`` (a tensor), further ``args`` and ``kwargs``.

    Tensors in a sample are created on the CPU in the requested dtype; the
    suite moves them to the backend under test.
    """

    input: Any
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    name: str = ""


@dataclasses.dataclass
class ErrorInput:
    """A bad call and the exception it must raise on every backend (type and message regex)."""

    sample: SampleInput
    error_type: type
    error_regex: str


@dataclasses.dataclass
class OpInfo:
    """What the conformance suite knows about one op.

    ``name``: the public name (``"add"``, ``"nn.functional.softmax"``);
    ``op``: the callable under test (``tensorplug.add``);
    ``aten``: the operator overloads it reaches (``("add.Tensor",)``), to tell
    primitives (kernel per backend) from composites;
    ``ref``: numpy reference ``ref(*numpy_args, **kwargs)``;
    ``dtypes``: supported dtypes; ``sample_inputs(device, dtype, requires_grad)``
    yields :class:`SampleInput`; ``error_inputs(device)`` yields :class:`ErrorInput`;
    ``supports_autograd``; ``inplace``: the in-place variant (callable) if any;
    ``is_view``: the result aliases the input; ``random``: results depend on the RNG;
    ``skips``/``xfails``: ``{backend name: reason}``.
    """

    name: str
    op: Callable
    ref: Optional[Callable] = None
    aten: tuple = ()
    dtypes: tuple = ()
    sample_inputs: Optional[Callable] = None
    error_inputs: Optional[Callable] = None
    supports_autograd: bool = True
    inplace: Optional[Callable] = None
    is_view: bool = False
    random: bool = False
    atol: Optional[float] = None
    rtol: Optional[float] = None
    skips: dict = dataclasses.field(default_factory=dict)
    xfails: dict = dataclasses.field(default_factory=dict)


OP_DB: list = []  # filled by tensorplug.testing.op_db
