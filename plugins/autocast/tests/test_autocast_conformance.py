"""Autocast's conformance: for every op of the database, on the CPU and on openreg, the output
dtypes under autocast follow the policy and the values match float32 within tolerance."""

from tensorplug.testing import conformance_tests, run_conformance

conformance_tests(globals(), backend="autocast")


def test_conformance_on_openreg():
    report = run_conformance("autocast:openreg")
    assert report.ok, report.table()
