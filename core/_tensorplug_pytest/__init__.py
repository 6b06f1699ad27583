"""The conformance kit's pytest hooks, registered as the ``pytest11`` entry point ``tensorplug``.

This is a top-level module, outside the ``tensorplug`` package, on purpose:
pytest imports every ``pytest11`` plugin when it starts, in any project, and
importing a submodule of ``tensorplug`` would import ``tensorplug`` itself and
so load every installed tensorplug plugin (seconds). Here nothing of tensorplug
is imported until a test asks for ``tensorplug_case``: only then are the
conformance cases built (for the marker's backend, or for the targets of
``--tensorplug-backend NAME``). See :mod:`tensorplug.testing.pytest_plugin`
for what the option and the marker do.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("tensorplug", "tensorplug conformance")
    group.addoption("--tensorplug-backend", action="append", default=[], metavar="NAME",
                    dest="tensorplug_backend",
                    help="run the conformance tests for backend or transform NAME instead of each test "
                         "module's own (repeatable; 'all' for every enabled backend and transform)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "tensorplug_conformance(backend, ops=None, dtypes=None, op_db=None): parametrize the "
                   "test's tensorplug_case argument with the conformance cases of backend (or of "
                   "--tensorplug-backend)")


def _targets(names):
    from tensorplug.testing.suite import conformance_targets
    out = []
    for n in names:
        for t in (conformance_targets() if n == "all" else [n]):
            if t not in out:
                out.append(t)
    return out


def pytest_generate_tests(metafunc):
    if "tensorplug_case" not in metafunc.fixturenames:
        return
    from tensorplug.testing.suite import conformance_cases
    marker = metafunc.definition.get_closest_marker("tensorplug_conformance")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    default = kwargs.pop("backend", None) or (marker.args[0] if marker is not None and marker.args else "cpu")
    params = []
    for name in _targets(metafunc.config.getoption("tensorplug_backend") or [default]):
        for case in conformance_cases(name, **kwargs):
            marks = ()
            if case.skip:
                marks = (pytest.mark.skip(reason=case.skip),)
            elif case.xfail:
                marks = (pytest.mark.xfail(reason=case.xfail, strict=False),)
            params.append(pytest.param(case, id=case.id, marks=marks))
    metafunc.parametrize("tensorplug_case", params)
