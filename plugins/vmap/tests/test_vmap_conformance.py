"""vmap's conformance: for every op of the database, vmap(op) equals the per-example loop."""

from tensorplug.testing import conformance_tests

conformance_tests(globals(), backend="vmap")


def test_the_report_shows_dtype_free_checks_as_any():
    from tensorplug.testing import run_conformance
    report = run_conformance("vmap", ops="add,allclose")
    rows = {r.op: r for r in report.ops()}
    assert rows["add"].dtypes == {"any": "passed"} and rows["allclose"].dtypes == {"any": "xfailed"}
    line = next(ln for ln in report.table().splitlines() if ln.startswith("add "))
    assert line.split()[:2] == ["add", "any"]
