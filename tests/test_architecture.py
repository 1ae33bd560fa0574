"""The architecture as checks that can fail: the import contracts, no cycle through a package's
``__init__``, one place a Finding is made, modules short enough to read and names that say their layer.

The contracts themselves (layers, and no cycles among a package's modules) are in ``pyproject.toml``
([tool.importlinter]); ``make test`` runs ``lint-imports`` before the suite, and this file runs them
too so a plain pytest run cannot skip them. Only what no contract can say is checked here.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp
from conftest import PROJECT

PACKAGE = PROJECT / "karpenter_gitops"


def _package_cycles(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """(package, module) pairs where a package's ``__init__`` and one of its own modules import each other."""
    packages = sorted(module for module in graph.modules if graph.find_children(module))
    return [
        (package, module)
        for package in packages
        for module in sorted(graph.find_descendants(package))
        if graph.chain_exists(package, module) and graph.chain_exists(module, package)
    ]


def test_no_package_and_its_own_module_import_each_other():
    """The ``acyclic_siblings`` contract finds cycles among a package's modules, but a package's
    ``__init__`` is not one of them: a cycle through it (the package hands on a module's names, the
    module takes them from the package) is what this test looks for."""
    assert _package_cycles(grimp.build_graph("karpenter_gitops")) == []


def test_a_cycle_through_a_package_init_is_found():
    graph = grimp.ImportGraph()
    for module in ("layer", "layer.steps", "layer.names"):
        graph.add_module(module)
    graph.add_import(importer="layer", imported="layer.steps")
    graph.add_import(importer="layer.steps", imported="layer")
    assert _package_cycles(graph) == [("layer", "layer.steps")]


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
    assert makers == ["karpenter_gitops/judge/judgement.py"]


def _ends_the_process(node: ast.AST) -> bool:
    """``sys.exit(...)``, click's ``ctx.exit(...)``, ``exit()`` or ``quit()``, and any ``SystemExit``."""
    if isinstance(node, ast.Call):
        func = node.func
        return (isinstance(func, ast.Attribute) and func.attr == "exit") or (
            isinstance(func, ast.Name) and func.id in ("exit", "quit")
        )
    return isinstance(node, ast.Name) and node.id == "SystemExit"


def _process_enders(root: Path) -> list[str]:
    return sorted(
        f"{path.relative_to(root.parent)}:{node.lineno}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _ends_the_process(node)
    )


def test_commands_return_their_outcome_and_nothing_ends_the_process():
    """A command returns an Outcome and ``cli.entry.main`` returns it as the exit code; only ``python -m
    karpenter_gitops`` hands that to the interpreter, as the console script does. A helper that ended the
    process would skip the caller's output, clean-up and the exit-code contract."""
    enders = [
        found
        for root in ("karpenter_gitops", "karpenter_gitops_pulumi", "karpenter_gitops_policies")
        for found in _process_enders(PROJECT / root)
    ]
    assert [found.split(":")[0] for found in enders] == ["karpenter_gitops/__main__.py"]


def test_the_exit_check_sees_each_way_out(tmp_path):
    package = tmp_path / "package"
    package.mkdir()
    (package / "quiet.py").write_text("def run():\n    return 0\n")
    (package / "loud.py").write_text("import sys\nsys.exit(1)\nctx.exit(2)\nraise SystemExit(3)\nexit()\n")
    assert _process_enders(package) == ["package/loud.py:2", "package/loud.py:3", "package/loud.py:4", "package/loud.py:5"]


def _holds_logic(statement: ast.stmt) -> bool:
    """Anything in a package's ``__init__`` beyond its docstring, imports, ``__all__`` and named constants."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return False
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return False  # the docstring
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return not isinstance(statement.value, (ast.Constant, ast.List, ast.Tuple))
    return True


def test_a_package_init_only_hands_names_on():
    """As in kopf: a package's ``__init__`` says what the package is and hands its modules' names on;
    what it does lives in a module whose name says so."""
    holding = sorted(
        f"{path.relative_to(PROJECT)}:{statement.lineno}"
        for root in ("karpenter_gitops", "karpenter_gitops_pulumi", "karpenter_gitops_policies")
        for path in (PROJECT / root).rglob("__init__.py")
        for statement in ast.parse(path.read_text(encoding="utf-8")).body
        if _holds_logic(statement)
    )
    assert holding == []


def test_the_init_check_sees_a_function():
    assert _holds_logic(ast.parse("def f():\n    pass\n").body[0])
    assert not _holds_logic(ast.parse("LIMIT = 65_000\n").body[0])


MODULE_LINES = 500
# Modules allowed over MODULE_LINES, each with its reason.
LONG_MODULES: dict[str, str] = {}


def _long_modules(root: Path, limit: int) -> list[str]:
    return sorted(
        str(path.relative_to(root.parent))
        for path in root.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > limit
    )


def test_no_module_is_over_500_lines():
    """A module a newcomer can read in one sitting holds one concern; a long one is split along its seams."""
    assert _long_modules(PACKAGE, MODULE_LINES) == sorted(LONG_MODULES)


def test_the_length_check_sees_a_long_module(tmp_path):
    package = tmp_path / "package"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * 3)
    (package / "long.py").write_text("x = 1\n" * 4)
    assert _long_modules(package, 3) == ["package/long.py"]


def _shared_names(root: Path) -> dict[str, list[str]]:
    """Module names held by more than one module, with their paths.

    Inside ``rules/`` a rule's id says where it lives (``cel/nodepool/...`` in ``rules/cel/nodepool.py``,
    ``policy/nodepool/...`` in ``rules/policy/nodepool.py``), so there the folder is part of the name;
    a rules module still may not share its name with a module elsewhere."""
    paths: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name not in ("__init__.py", "__main__.py"):
            paths.setdefault(path.stem, []).append(path.relative_to(root).as_posix())
    return {
        name: found for name, found in paths.items() if len(found) > 1 and not all(where.startswith("rules/") for where in found)
    }


def test_no_two_modules_share_a_name():
    """A name says which layer a module belongs to: ``karpenter/status/nodeclass_conditions`` predicts, ``reconcile/conditions``
    is the step; a traceback, a grep or an import line never leaves a newcomer guessing which one."""
    assert _shared_names(PACKAGE) == {}


def test_the_name_check_sees_a_shared_name(tmp_path):
    for module in (
        "core/report.py",
        "output/report.py",
        "rules/cel/nodepool.py",
        "rules/policy/nodepool.py",
        "cli/__init__.py",
        "app/__init__.py",
    ):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text("")
    assert _shared_names(tmp_path) == {"report": ["core/report.py", "output/report.py"]}
