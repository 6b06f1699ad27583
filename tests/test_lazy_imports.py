"""``import tensorplug`` stays cheap: slow optional modules load on first use.

Each check runs in a fresh interpreter, since this test session has long imported everything.
"""

import subprocess
import sys
import textwrap


def _run(code, **kw):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=120, **kw)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_does_not_import_ml_dtypes_and_bfloat16_still_works():
    out = _run("""
        import sys
        import tensorplug as tp
        assert "cpu" in [p.name for p in tp.plugins.list() if p.state == "enabled"], tp.plugins.list()
        print("at import:", "ml_dtypes" in sys.modules)
        assert tp.bfloat16.itemsize == 2 and tp.bfloat16.is_floating_point
        x = tp.tensor([1.0, 2.5, 3.0], dtype=tp.bfloat16)
        y = (x * 2 + 1).sum()
        print("after use:", "ml_dtypes" in sys.modules, y.dtype, y.item())
        import numpy as np
        print(np.dtype(tp.bfloat16.np).name, x.numpy().dtype.name)
    """)
    assert out.splitlines() == ["at import: False", "after use: True tensorplug.bfloat16 16.0",
                                "bfloat16 bfloat16"]


def test_from_numpy_bfloat16_when_ml_dtypes_came_first():
    # the user imports ml_dtypes and makes an array before tensorplug has resolved bfloat16
    out = _run("""
        import ml_dtypes, numpy as np
        import tensorplug as tp
        t = tp.from_numpy(np.array([1.5, -2.0], dtype=ml_dtypes.bfloat16))
        print(t.dtype, t.tolist())
    """)
    assert out.strip() == "tensorplug.bfloat16 [1.5, -2.0]"


def test_float_types_without_ml_dtypes():
    # random number bounds of float32 and float16 use numpy's finfo, not ml_dtypes'
    out = _run("""
        import sys
        import tensorplug as tp
        tp.manual_seed(0)
        a = tp.rand(5, dtype=tp.float16)
        b = tp.randint(0, 3, (4,), dtype=tp.float32)
        c = tp.empty(3).uniform_(-1, 1)
        print(a.dtype, b.dtype, c.dtype, "ml_dtypes" in sys.modules)
    """)
    assert out.strip() == "tensorplug.float16 tensorplug.float32 tensorplug.float32 False"


def _pytest_in(project, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=project, capture_output=True, text=True, timeout=300)


def test_pytest_in_an_unrelated_project_does_not_import_tensorplug(tmp_path):
    (tmp_path / "conftest.py").write_text(textwrap.dedent("""
        import sys

        def pytest_sessionfinish(session):
            with open("imported.txt", "w") as f:
                f.write(repr(sorted(m for m in sys.modules if m.split(".")[0].startswith("tensorplug"))))
    """))
    (tmp_path / "test_trivial.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    out = _pytest_in(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "imported.txt").read_text() == "[]"
    # the plugin is still registered: its option is known
    help_out = _pytest_in(tmp_path, "--help")
    assert "--tensorplug-backend" in help_out.stdout


def test_conformance_fixture_still_loads_tensorplug(tmp_path):
    (tmp_path / "test_conf.py").write_text(textwrap.dedent("""
        from tensorplug.testing import conformance_tests

        conformance_tests(globals(), backend="cpu", ops=["add"], dtypes=["float32"])
    """))
    out = _pytest_in(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout and "failed" not in out.stdout, out.stdout
    listed = _pytest_in(tmp_path, "--collect-only", "--tensorplug-backend", "cpu")
    assert "test_conf.py::test_conformance[cpu-add-float32-forward]" in listed.stdout, listed.stdout
