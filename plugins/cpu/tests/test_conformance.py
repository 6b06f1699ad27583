"""tensorplug-cpu against the whole conformance suite: every op of the database in every dtype.

``pytest --tensorplug-backend NAME`` runs the suite for another backend or
transform instead (docs/conformance.md).
"""

from tensorplug.testing import conformance_tests

conformance_tests(globals(), backend="cpu")
