"""Every distribution's sdist: licence, readme and metadata, and nothing stale or half-shipped.

The sdists are built with the build backends installed in this environment (no isolation,
so no network): tests are left out of every sdist (they need the whole repository), and so
are build directories and bytecode; an ``*.egg-info`` may only be the one the build itself
writes.
"""

import email
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISTS = {".": "tensorplug", "plugins/cpu": "tensorplug-cpu", "plugins/profiler": "tensorplug-profiler",
         "plugins/vmap": "tensorplug-vmap", "plugins/privateuse1_example": "tensorplug-openreg",
         "examples/minimal_backend": "tensorplug-minimal", "plugins/autocast": "tensorplug-autocast",
         "plugins/quantize": "tensorplug-quantize"}


@pytest.fixture(scope="module")
def sdists(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdists")
    built = {}
    for sub, name in DISTS.items():
        before = set(out.iterdir())
        r = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
                            "-o", str(out), str(ROOT / sub)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        (new,) = set(out.iterdir()) - before
        built[name] = new
    return built


@pytest.mark.parametrize("name", DISTS.values())
def test_sdist_contents(sdists, name):
    with tarfile.open(sdists[name]) as tar:
        names = tar.getnames()
        top = names[0].split("/")[0]
        files = [n[len(top) + 1:] for n in names if "/" in n]
        meta = email.message_from_bytes(tar.extractfile(f"{top}/PKG-INFO").read())
        egg_infos = {f.split(".egg-info/")[0] for f in files if ".egg-info/" in f}
        for e in egg_infos:  # only the one this build wrote, for this distribution and version
            info = email.message_from_bytes(tar.extractfile(f"{top}/{e}.egg-info/PKG-INFO").read())
            assert (info["Name"], info["Version"]) == (meta["Name"], meta["Version"])
            listed = tar.extractfile(f"{top}/{e}.egg-info/SOURCES.txt").read().decode().split()
            assert not [f for f in listed if f.startswith("tests/") or "/build/" in f or f.startswith("build/")]
    assert meta["Name"] == name
    assert len(egg_infos) <= 1
    assert "LICENSE" in files and "README.md" in files and "pyproject.toml" in files
    assert not [f for f in files if f == "tests" or f.startswith("tests/") or "/tests/" in f], files
    assert not [f for f in files if f.startswith("build/") or "/build/" in f or f == "build"], files
    assert not [f for f in files if f.endswith((".pyc", ".so")) or "__pycache__" in f], files
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert "Programming Language :: Python :: 3" in meta.get_all("Classifier")
    assert "Homepage, https://github.com/tensorplug/tensorplug" in meta.get_all("Project-URL")
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().lstrip().startswith("# " + name)


def test_every_plugin_readme_says_how_to_install_it():
    for sub, name in DISTS.items():
        if sub == ".":
            continue
        text = (ROOT / sub / "README.md").read_text()
        assert text.startswith(f"# {name}\n")
        assert "pip install" in text and "](" in text
        assert (ROOT / sub / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
