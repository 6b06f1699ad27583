"""Makes ``helpers.py`` beside this file importable as ``compile_helpers`` (the tests run with
``--import-mode=importlib``, which puts no test directory on ``sys.path``)."""

import importlib.util
import pathlib
import sys

_spec = importlib.util.spec_from_file_location("compile_helpers", pathlib.Path(__file__).with_name("helpers.py"))
_module = importlib.util.module_from_spec(_spec)
sys.modules["compile_helpers"] = _module
_spec.loader.exec_module(_module)
