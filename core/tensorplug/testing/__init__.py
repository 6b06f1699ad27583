"""The conformance kit: the op database, the generic checks, the report and the pytest plugin.

* :mod:`.opinfo` (``OpInfo``, ``SampleInput``, ``ErrorInput``, ``OP_DB``)
  and ``op_db`` (the entries) describe every public op;
* :mod:`.suite` holds the checks (``CHECKS``), the transform check registry
  (:func:`register_transform_check`) and reads plugins' declarations
  (:func:`conformance_config`);
* :mod:`.report` runs a target and prints the op-by-op table
  (``tensorplug conformance NAME``);
* :mod:`.comparison` is :func:`assert_close`, PyTorch's ``torch.testing.assert_close``
  (the kit's own comparison, ``check_close(actual, expected, atol, rtol, what)``, stays beside it);
* :mod:`.pytest_plugin` is the pytest plugin (``--tensorplug-backend NAME``),
  with :func:`conformance_tests` for a plugin's ``tests/test_conformance.py``.

docs/conformance.md is the user's guide.
"""

from __future__ import annotations

from .opinfo import OpInfo, SampleInput, ErrorInput, OP_DB
from .suite import (Skip, XFail, Check, CHECKS, TRANSFORM_CHECKS, register_transform_check, load_op_db, map_tensors,
                    ConformanceConfig, conformance_config, conformance_cases, run_case, fallback_ops,
                    call, samples as op_samples, move_sample, tolerance, leaves, assert_close as check_close)
from .comparison import assert_close
from .report import Report, run_conformance


def conformance_tests(namespace, backend="cpu", *, ops=None, dtypes=None, op_db=None):
    """Define ``test_conformance`` in ``namespace`` (a test module's ``globals()``).

    The test is parametrized with every conformance case of ``backend`` (a
    device type or transform name), or of the targets given with
    ``--tensorplug-backend`` when pytest runs with that option. ``ops``,
    ``dtypes`` and ``op_db`` narrow the cases as in :func:`conformance_cases`.
    Needs pytest (it is the pytest plugin's helper)::

        from tensorplug.testing import conformance_tests
        conformance_tests(globals(), backend="mydev")
    """
    from .pytest_plugin import make_conformance_test  # lazy: needs pytest, which the kit does not require
    namespace["test_conformance"] = make_conformance_test(backend, ops=ops, dtypes=dtypes, op_db=op_db)


__all__ = ["OpInfo", "SampleInput", "map_tensors", "ErrorInput", "OP_DB", "Skip", "XFail", "Check", "CHECKS", "TRANSFORM_CHECKS",
           "register_transform_check", "load_op_db", "ConformanceConfig", "conformance_config",
           "conformance_cases", "run_case", "fallback_ops", "call", "op_samples", "move_sample",
           "assert_close", "check_close", "tolerance", "leaves", "Report", "run_conformance", "conformance_tests"]
