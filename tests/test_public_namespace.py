"""``tensorplug.__all__`` lists the public namespace, and the package ships its ``py.typed`` marker."""
from pathlib import Path

import tensorplug as tp
from tensorplug.ops._lib import PUBLIC


def test_all_lists_every_public_op_and_resolves():
    assert set(PUBLIC) <= set(tp.__all__)
    assert {"Tensor", "float32", "no_grad", "nn", "optim", "utils"} <= set(tp.__all__)
    for name in tp.__all__:
        assert getattr(tp, name) is not None, name


def test_all_has_no_private_names():
    assert not [n for n in tp.__all__ if n.startswith("_")]
    assert "annotations" not in tp.__all__


def test_py_typed_marker_and_stub_are_shipped():
    import tomllib
    pkg = Path(tp.__file__).parent
    assert (pkg / "py.typed").is_file() and (pkg / "__init__.pyi").is_file()
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert {"py.typed", "__init__.pyi"} <= set(pyproject["tool"]["setuptools"]["package-data"]["tensorplug"])
