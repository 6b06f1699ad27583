"""The import graphs of ``tensorplug.*`` and of each plugin package in this repository, read from the
source with ``ast``, have no cycle.

Function-local imports count as edges: hiding a cycle inside a function keeps the modules entangled.
A function-local import remains only for lazy loading or an optional dependency, and says why with a
``# lazy: <reason>`` comment on its line (or the line above).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import tensorplug

ROOT = Path(tensorplug.__file__).parent
REPO = ROOT.parent.parent
# the import packages of the plugins and examples in this repository (tensorplug_cpu, ...)
PLUGIN_PACKAGES = sorted(p.parent for p in (*REPO.glob("plugins/*/tensorplug_*/__init__.py"),
                                             *REPO.glob("examples/*/tensorplug_*/__init__.py")))
PACKAGES = [ROOT, *PLUGIN_PACKAGES]


def _modules(root=ROOT):
    """Module name -> (source path, whether it is a package's ``__init__``)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts.pop()
        out[".".join(parts)] = (path, is_pkg)
    # compiled extension modules the distribution's build installs into the package (``_C``): modules too
    cmake = root.parent / "CMakeLists.txt"
    if cmake.exists():
        for ext in re.findall(r"pybind11_add_module\(\s*(\w+)", cmake.read_text()):
            out[f"{root.name}.{ext}"] = (None, False)
    return out


def _resolve(base, level, module):
    if level:
        pkg = base.split(".")
        pkg = pkg[:len(pkg) - level + 1] if level > 1 else pkg
        target = ".".join(pkg + ([module] if module else []))
    else:
        target = module
    return target


def import_graph(root=ROOT):
    """Module -> set of the package's own modules it imports, at any depth of the file."""
    modules = _modules(root)
    top = root.name
    graph = {}
    for name, (path, is_pkg) in modules.items():
        if path is None:  # a compiled module imports nothing of the package
            graph[name] = set()
            continue
        package = name if is_pkg else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(package, node.level, node.module)
                # ``from pkg import sub`` names the submodule when there is one, else an attribute of pkg
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and (t == top or t.startswith(top + ".")):
                    edges.add(t)
        graph[name] = edges
    return graph


def find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_find_cycle_reports_a_cycle_and_accepts_a_dag():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_graph_sees_function_local_and_relative_imports():
    graph = import_graph()
    assert "tensorplug.dispatch.dispatcher" in graph["tensorplug.dispatch.library"]
    assert graph["tensorplug.ops._lib"] >= {"tensorplug.tensor"}


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("root", PLUGIN_PACKAGES, ids=lambda p: p.name)
def test_no_import_cycle_in_a_plugin_package(root):
    cycle = find_cycle(import_graph(root))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_plugin_packages_are_found():
    assert {"tensorplug_cpu", "tensorplug_vmap", "tensorplug_profiler", "tensorplug_minimal"} <= {
        p.name for p in PLUGIN_PACKAGES}


def unexplained_local_imports(root):
    """``path:line: source`` of each function-local import without a ``# lazy:`` reason."""
    out = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines), str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
                    if "# lazy:" not in here and "# lazy:" not in above:
                        out.append(f"{path.relative_to(root.parent)}:{node.lineno}: {here.strip()}")
    return sorted(set(out))


def test_unexplained_local_imports_are_found(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    import os\n\n\ndef g():\n    import json  # lazy: why\n")
    found = unexplained_local_imports(tmp_path)
    assert len(found) == 1 and found[0].endswith("m.py:2: import os")


@pytest.mark.parametrize("root", PACKAGES, ids=lambda p: p.name)
def test_every_function_local_import_says_why(root):
    assert unexplained_local_imports(root) == []
