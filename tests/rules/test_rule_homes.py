"""Every rule lives where its id says, and every declared rule has a producer.

A rule's id prefix names its home, a module or folder of ``karpenter_gitops/rules``: ``cel/x`` lives in
``rules/cel/``, ``live/x`` in ``rules/live.py``. A rule with a check keeps the check in its home; a rule
without one is declared there, and a producer of its stage (``registry.PRODUCERS``) observes it and
names its id inside a function, where it makes the observation. A name outside functions does not
count: that is a declaration, or a table of what a producer cannot see.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from conftest import PROJECT

from karpenter_gitops.rules import registry
from karpenter_gitops.rules.registry import PRODUCERS, RULES, WITH_CHECK, Rule

RULES_DIR = PROJECT / "karpenter_gitops" / "rules"
MAX_LINES = 400
BY_ID = sorted(RULES.values(), key=lambda r: r.id)


def _modules(name: str) -> Iterator[ModuleType]:
    """The module ``name``, or every module of the package ``name`` (never a ``__main__``: that would run it)."""
    module = importlib.import_module(name)
    yield module
    for info in pkgutil.walk_packages(getattr(module, "__path__", ()), name + "."):
        if not info.name.endswith(".__main__"):
            yield importlib.import_module(info.name)


def _value(node: ast.AST, scope: dict[str, object]) -> object:
    """What a name, a dotted name through modules, or a string constant stands for; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _value(node.value, scope)
        return getattr(owner, node.attr, None) if isinstance(owner, ModuleType) else None
    return None


def _scope(module: ModuleType, tree: ast.AST) -> dict[str, object]:
    """The module's globals, plus what its function-local ``from ... import`` statements bind."""
    scope = dict(vars(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            source = importlib.import_module(node.module)
            for alias in node.names:
                scope.setdefault(alias.asname or alias.name, getattr(source, alias.name, None))
    return scope


def _ids(nodes: Iterator[ast.AST], scope: dict[str, object]) -> set[str]:
    return {value for node in nodes if isinstance(value := _value(node, scope), str) and value in RULES}


def _in_functions(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from ast.walk(node)


def _outside_function_bodies(node: ast.AST) -> Iterator[ast.AST]:
    """Every node but those in the body of a function (its decorators and defaults included)."""
    yield node
    for field, value in ast.iter_fields(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and field == "body":
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                yield from _outside_function_bodies(child)


def _named(name: str, where: Callable[[ast.AST], Iterator[ast.AST]]) -> frozenset[str]:
    """The rule ids the modules of ``name`` name in the nodes ``where`` picks from each module's tree."""
    found: set[str] = set()
    for module in _modules(name):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        found |= _ids(where(tree), _scope(module, tree))
    return frozenset(found)


@cache
def observed_by(producer: str) -> frozenset[str]:
    """The rule ids a producer names inside its functions."""
    return _named(producer, _in_functions)


@cache
def declared_in(home: str) -> frozenset[str]:
    """The rule ids a home names outside function bodies: in its declarations."""
    return _named(home, _outside_function_bodies)


def home_of(rule: Rule) -> str:
    return f"karpenter_gitops.rules.{rule.id.split('/')[0]}"


@pytest.mark.parametrize("rule", BY_ID, ids=lambda r: r.id)
def test_a_rule_lives_where_its_id_says(rule):
    home = home_of(rule)
    if rule.check is not None:
        assert rule.check.__module__ == home or rule.check.__module__.startswith(home + "."), rule.check.__module__
    else:
        assert rule.id in declared_in(home), f"{rule.id} is not declared in {home}"


@pytest.mark.parametrize("rule", BY_ID, ids=lambda r: r.id)
def test_a_declared_rule_has_a_producer(rule):
    if rule.stage in WITH_CHECK:
        assert rule.check is not None, f"{rule.id}: a {rule.stage.value} rule runs its own check, and has none"
    else:
        producers = PRODUCERS[rule.stage]
        assert any(rule.id in observed_by(p) for p in producers), (
            f"{rule.id}: no producer of {rule.stage.value} observes it ({producers})"
        )


def test_every_stage_without_a_check_names_its_producers():
    assert set(PRODUCERS) == set(registry.Stage) - WITH_CHECK
    assert all(importlib.import_module(producer) for producers in PRODUCERS.values() for producer in producers)


def test_a_producer_counts_observations_not_declarations_or_tables():
    """The test above can fail: the pack lists controller/cni-ip-family among the rules it cannot see (a table
    outside any function), and rules/live.py declares the live rules; neither observes them."""
    cni = "controller/cni-ip-family"
    assert cni in declared_in("karpenter_gitops_policies") and cni not in observed_by("karpenter_gitops_policies")
    assert cni in observed_by("karpenter_gitops_pulumi")
    assert not observed_by("karpenter_gitops.rules.live")


@pytest.mark.parametrize("path", sorted(RULES_DIR.rglob("*.py")), ids=lambda p: str(p.relative_to(RULES_DIR)))
def test_a_rule_module_stays_small(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", sorted(RULES_DIR.rglob("__init__.py")), ids=lambda p: str(p.relative_to(RULES_DIR)))
def test_a_package_face_only_hands_names_on(path):
    """A docstring, imports and ``__all__``: no rule, no logic."""
    for statement in ast.parse(path.read_text(encoding="utf-8")).body:
        docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        exports = isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets] == ["__all__"]
        assert docstring or exports or isinstance(statement, (ast.Import, ast.ImportFrom)), ast.unparse(statement)
