"""compile's conformance: for every op of the database, compile(op) equals op, results and gradients."""

from tensorplug.testing import conformance_tests

conformance_tests(globals(), backend="compile")
