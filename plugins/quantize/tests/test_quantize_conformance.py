"""Quantize's conformance: for every op of the database, on the CPU and on openreg, an op with a
Quantized kernel agrees with the float op on dequantized values, and every other op refuses
quantized arguments (or decomposes into ops that have a kernel)."""

from tensorplug.testing import conformance_tests, run_conformance

conformance_tests(globals(), backend="quantize")


def test_conformance_on_openreg():
    report = run_conformance("quantize:openreg")
    assert report.ok, report.table()
