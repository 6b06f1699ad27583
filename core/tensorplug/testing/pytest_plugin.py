"""The conformance kit's pytest plugin: what it does, and the helpers a plugin's tests use.

Its hooks live in the top-level module ``_tensorplug_pytest`` (the ``pytest11``
entry point ``tensorplug``), which imports tensorplug only when a test asks
for conformance cases.

It adds the option ``--tensorplug-backend NAME`` (repeatable; ``all`` means
every enabled backend, and every transform whose plugin declares a
conformance config) and the marker ``tensorplug_conformance(backend, ops=None,
dtypes=None, op_db=None)``. A test function that takes the argument
``tensorplug_case`` is parametrized with one conformance case per target x
op x dtype x check, with ids like ``cpu-add-float32-forward``: for the marker's
backend, or for the option's targets when it is given. Declared skips and
xfails become pytest skip and (non-strict) xfail marks; a case that passes
while some operator it reached ran through a fallback is reported as
skipped ("fallback: ..."), never as a pass.

:func:`tensorplug.testing.conformance_tests` writes that test function for
a plugin's ``tests/test_conformance.py``. In other test runs the plugin only
adds its option and marker: cases (and the op database) are built only for a
test function that asks for ``tensorplug_case``.
"""

from __future__ import annotations

import pytest

from .suite import Skip, XFail, execute


def run_case_in_pytest(case):
    """Run ``case``; a Skip becomes ``pytest.skip`` and a pass through a fallback is reported as skipped."""
    __tracebackhide__ = True
    try:
        fallback = execute(case)
    except Skip as e:
        pytest.skip(str(e))
    except XFail as e:
        pytest.xfail(str(e))
    if fallback:
        pytest.skip(f"fallback: the check passed, but {', '.join(fallback)} ran through the backend's "
                    f"fallback (another backend's kernels)")


def make_conformance_test(backend, **kwargs):
    """A ``test_conformance(tensorplug_case)`` function marked for ``backend`` (see the module doc)."""
    @pytest.mark.tensorplug_conformance(backend=backend, **kwargs)
    def test_conformance(tensorplug_case):
        """One conformance check of one op in one dtype (docs/conformance.md)."""
        run_case_in_pytest(tensorplug_case)
    return test_conformance
