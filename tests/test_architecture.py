"""The architecture as checks that can fail: no import cycles, and one place a Finding is made.

The layer contracts themselves are in ``pyproject.toml`` ([tool.importlinter]); ``make test`` runs
``lint-imports`` before the suite, and this file runs them too so a plain pytest run cannot skip them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
from conftest import PROJECT

PACKAGE = PROJECT / "karpenter_gitops"


def _cycles(graph: grimp.ImportGraph, prefix: str) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), i.e. import cycles."""
    modules = sorted(m for m in graph.modules if m.startswith(prefix))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith(prefix):
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_no_module_of_the_core_imports_itself_back():
    assert _cycles(grimp.build_graph("karpenter_gitops"), "karpenter_gitops") == []


def test_the_import_contracts_hold():
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"], cwd=PROJECT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout[-4000:]


def test_findings_are_made_only_by_the_judge():
    makers = []
    shells = [*(PROJECT / "karpenter_gitops_pulumi").rglob("*.py"), *(PROJECT / "karpenter_gitops_policies").rglob("*.py")]
    for path in sorted([*PACKAGE.rglob("*.py"), *shells]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Finding":
                makers.append(str(path.relative_to(PROJECT)))
    assert makers == ["karpenter_gitops/judge/__init__.py"]
