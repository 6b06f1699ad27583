"""Shared fixtures: toy plugins registered in-process, and libraries destroyed after each test."""

from __future__ import annotations

import pathlib
import sys

import pytest

TESTS_DIR = pathlib.Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))  # makes the toy_plugins package importable

import tensorplug  # noqa: E402
from tensorplug.dispatch.library import Library  # noqa: E402


@pytest.fixture(scope="module")
def without_the_cuda_plugin():
    """For a module about the core with no cuda backend: tensorplug-cuda, when installed (make installs
    it), is disabled for the module and enabled again after."""
    enabled = tensorplug.plugins.is_enabled("cuda")
    if enabled:
        tensorplug.plugins.disable("cuda")
    yield
    if enabled:
        tensorplug.plugins.enable("cuda")


@pytest.fixture
def make_plugin():
    """``make_plugin(obj, name)`` registers and enables a plugin; it is forgotten after the test."""
    names = []

    def make(obj, name, **kw):
        names.append(name)
        return tensorplug.plugins.register(obj, name, **kw)
    yield make
    for name in reversed(names):
        tensorplug.plugins.forget(name)


@pytest.fixture
def testdev(make_plugin):
    """The toy numpy backend ``testdev`` (key ``TestDev``), enabled; its call log starts empty."""
    from toy_plugins import testdev as mod
    mod.CALLS.clear()
    make_plugin(mod, "testdev")
    return mod


@pytest.fixture
def logging_plugin(make_plugin):
    """The toy ``Logging`` key (priority 12) with its logging fallback, enabled; its log starts empty."""
    from toy_plugins import logging_key as mod
    mod.LOG.clear()
    make_plugin(mod, "logging")
    return mod


@pytest.fixture
def make_library():
    """``make_library(ns, kind, dispatch_key="")``: a Library destroyed after the test."""
    libs = []

    def make(ns, kind, dispatch_key=""):
        lib = Library(ns, kind, dispatch_key)
        libs.append(lib)
        return lib
    yield make
    for lib in reversed(libs):
        lib._destroy()
