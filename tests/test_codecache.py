"""The cache of generated code: a second import compiles nothing, a corrupt cache is ignored, and
nothing is written when Python may not write bytecode."""

import os
import subprocess
import sys

import tensorplug
from tensorplug import _codecache

CODE = "import tensorplug, tensorplug._codecache as c; print(c.stats()['compiled'], c.stats()['cached'])"


def _run(tmp_path, **env):
    full = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", CODE], env=full, capture_output=True, text=True, check=True)
    return tuple(int(x) for x in out.stdout.split())


def _with_cache_at(monkeypatch, path):
    monkeypatch.setattr(_codecache, "_PATH", str(path))
    monkeypatch.setattr(_codecache, "_DIR", str(path.parent))


def test_second_import_takes_everything_from_the_cache(tmp_path):
    # the real cache of this installation: the first run may compile, the next one must not
    _run(tmp_path)
    compiled, cached = _run(tmp_path)
    if not os.access(os.path.dirname(_codecache._PATH), os.W_OK):
        return  # a read-only installation compiles every time, by design
    assert compiled == 0 and cached > 100


def test_roundtrip_and_corrupt_file(tmp_path, monkeypatch):
    path = tmp_path / "generated.marshal"
    _with_cache_at(monkeypatch, path)
    monkeypatch.setattr(_codecache, "_cache", None)
    monkeypatch.setattr(_codecache, "_used", {})
    monkeypatch.setattr(_codecache, "_new", [False])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    code = _codecache.compiled("x = 41 + 1\n", "<test>")
    ns = {}
    exec(code, ns)
    assert ns["x"] == 42
    _codecache.save()
    assert path.is_file() and oct(path.stat().st_mode & 0o777) == "0o644"
    monkeypatch.setattr(_codecache, "_cache", None)
    assert _codecache._load()[("x = 41 + 1\n", "<test>")].co_filename == "<test>"
    path.write_bytes(b"tensorplug-codecache-1\n" + b"\x00garbage")
    monkeypatch.setattr(_codecache, "_cache", None)
    assert _codecache._load() == {}
    exec(_codecache.compiled("y = 2\n", "<test>"), ns)
    assert ns["y"] == 2


def test_nothing_is_written_without_bytecode(tmp_path, monkeypatch):
    path = tmp_path / "generated.marshal"
    _with_cache_at(monkeypatch, path)
    monkeypatch.setattr(_codecache, "_new", [True])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _codecache.save()
    assert not path.exists()
    assert tensorplug.add(tensorplug.ones(1), 1).item() == 2.0
