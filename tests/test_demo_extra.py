"""``tensorplug demo`` without the ``examples`` extra: a one-line hint, not a traceback."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("hide", [("tqdm",), ("sklearn",), ("tqdm", "sklearn")])
def test_demo_without_examples_extra_says_how_to_install_it(tmp_path, hide):
    # modules of these names on PYTHONPATH shadow the installed ones and fail to import
    for name in hide:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('no module named {name}')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "tensorplug", "demo", "--epochs", "1"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "Traceback" not in out.stderr, out.stderr
    assert "pip install 'tensorplug[examples]'" in out.stderr
    assert ("scikit-learn" in out.stderr) == ("sklearn" in hide)
    assert ("tqdm" in out.stderr) == ("tqdm" in hide)
    assert "epoch" not in out.stdout
