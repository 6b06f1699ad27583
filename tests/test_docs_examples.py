"""Every ```python block of README.md and docs/*.md runs without error.

A page's blocks run in order as one session (one namespace per page), in a fresh
interpreter whose working directory is a temporary directory, so files that examples
write land there. The project's conventions (docs/architecture.md, "Docs code blocks"):

* a block right after the line ``<!-- excerpt -->`` is a fragment (a signature,
  pseudo-code) and is not run;
* a block right after ``<!-- requires: MODULE -->`` runs only where MODULE is
  importable; the page is skipped, saying so, where it is not.
"""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)

# runs the blocks given as JSON [(line, source), ...] on stdin in one namespace; names the failing block
_RUNNER = r"""
import json, sys, traceback
blocks = json.load(sys.stdin)
ns = {"__name__": "__main__"}
for line, source in blocks:
    try:
        exec(compile(source, f"<block at line {line}>", "exec"), ns)
    except BaseException:
        traceback.print_exc()
        print(f"FAILED block at line {line}", file=sys.stderr)
        sys.exit(1)
"""


def blocks(page):
    """(line of the fence, source, marker) for each python block of ``page``."""
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = before if before.startswith("<!--") else None
        out.append((line, m.group(1), marker))
    return out


def test_blocks_are_found():
    readme = blocks(ROOT / "README.md")
    assert readme and "import tensorplug as tp" in readme[0][1]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_code_blocks_run(page, tmp_path):
    run = []
    for line, source, marker in blocks(page):
        if marker == "<!-- excerpt -->":
            continue
        if marker and marker.startswith("<!-- requires:"):
            module = marker[len("<!-- requires:"):-len("-->")].strip()
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{page.name} line {line} needs {module}, which is not installed")
        run.append((line, source))
    if not run:
        pytest.skip(f"{page.name} has no runnable python block")
    out = _run(run, tmp_path)
    assert out.returncode == 0, f"{page.relative_to(ROOT)}: {out.stderr[-3000:]}"


def _run(run, cwd):
    return subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(run), cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_failing_block_is_named_and_excerpts_are_not_run(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n<!-- excerpt -->\n```python\ndef f(...): ...\n```\n"
                    "\n```python\nopen('written.txt', 'w').write('x')\nassert x == 2, 'x is 1'\n```\n")
    found = blocks(page)
    assert [(line, marker) for line, _, marker in found] == [(3, None), (8, "<!-- excerpt -->"), (12, None)]
    out = _run([(line, src) for line, src, marker in found if marker is None], tmp_path)
    assert out.returncode == 1
    assert "AssertionError: x is 1" in out.stderr and "FAILED block at line 12" in out.stderr
    assert (tmp_path / "written.txt").exists()   # examples write into the temporary cwd
