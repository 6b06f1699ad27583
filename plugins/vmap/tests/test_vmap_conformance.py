"""vmap's conformance: for every op of the database, vmap(op) equals the per-example loop."""

from tensorplug.testing import conformance_tests

conformance_tests(globals(), backend="vmap")
