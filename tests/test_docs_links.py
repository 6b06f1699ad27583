"""Links in README.md and docs/*.md lead somewhere.

Relative links must name an existing file (anchors aside); README.md is also the package
description on the package index, where relative links break, so it links to files of the
repository with absolute links to github.com/tensorplug/tensorplug/blob/main/..., which must
name existing files too. The plugins' READMEs (their package descriptions) follow the same rule.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO = "https://github.com/tensorplug/tensorplug/blob/main/"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
READMES = [ROOT / "README.md", *sorted(ROOT.glob("plugins/*/README.md")), ROOT / "examples/minimal_backend/README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _links(page):
    return LINK.findall(page.read_text())


@pytest.mark.parametrize("page", PAGES + READMES[1:], ids=lambda p: str(p.relative_to(ROOT)))
def test_links_name_existing_files(page):
    bad = []
    for link in _links(page):
        target = link.split("#")[0]
        if link.startswith(REPO):
            path = ROOT / target[len(REPO):]
        elif re.match(r"[a-z]+:", link) or not target:
            continue
        else:
            path = page.parent / target
        if not path.exists():
            bad.append(link)
    assert not bad, f"{page.relative_to(ROOT)}: links to missing files: {bad}"


@pytest.mark.parametrize("page", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_package_descriptions_use_absolute_links(page):
    relative = [link for link in _links(page) if not re.match(r"[a-z]+:", link)]
    assert not relative, f"{page.relative_to(ROOT)}: relative links break on the package index: {relative}"
    assert any(link.startswith(REPO) for link in _links(page))
