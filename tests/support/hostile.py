"""Hostile inputs for the fuzz suite: valid documents from the schemas, then mutated as a careless or
malicious author would (wrong types, nulls, deep nesting, huge strings, unicode, duplicate keys,
anchors and aliases), and the invariant every front door keeps on them.

The seeds are what the project already trusts: the example manifests and stack files, the rule
examples' base objects, the CRD-driven spec strategies of the parity tests and the upstream userData
fixtures. Mutations are picked by hypothesis, so a failure shrinks to a small reproduction.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import yaml
from conftest import PROJECT
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from karpenter_gitops.cli import main
from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODECLASS, BASE_NODEOVERLAY, BASE_NODEPOOL, merge_patch
from support.crd_strategies import NODECLASS_SPEC, NODEPOOL_SPEC
from support.upstream import userdata

# `make test` runs a bounded number of examples; `make fuzz` (KARPENTER_GITOPS_FUZZ=long) many more.
settings.register_profile(
    "fuzz-ci",
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-long",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("fuzz-long" if os.environ.get("KARPENTER_GITOPS_FUZZ") == "long" else "fuzz-ci")
CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "corpus"


def _documents(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


MANIFESTS = [doc for path in sorted((PROJECT / "examples").rglob("*.yaml")) for doc in _documents(path)]
STACKS = [_documents(path)[0] for path in sorted((PROJECT / "stacks").glob("Pulumi.*.yaml"))]
USERDATA_TEXTS = [path.read_text(errors="replace") for path in sorted(userdata().glob("*_input.golden"))]
WAIVERS = [
    {"rule": "policy/imds-hop-limit", "object": "gpu-*", "kind": "EC2NodeClass", "reason": "PLAT-1", "expires": "2030-01-01"}
]


# --- hostile values -----------------------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["", "\n", "ü☃\u202e", "\x00"[:0] + "\u0000x", "${x}", "*", "1.30", "720h\n"]),
)
HUGE = st.sampled_from(["x" * 70_000, "é" * 20_000, "1" * 5_000])


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


HOSTILE = st.one_of(
    SCALARS,
    HUGE,
    st.just([None]),
    st.just({"secure": "v1:AAAA"}),
    st.integers(20, 120).map(_deep),
    st.recursive(
        SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8
    ),
)


def _paths(node: Any, limit: int = 12) -> list[tuple]:
    """Paths to ``node``'s values, the first ``limit`` levels deep (deeper ones come from HOSTILE itself)."""
    found, stack = [], [((), node)]
    while stack:
        path, value = stack.pop()
        found.append(path)
        if len(path) < limit:
            children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            stack.extend(((*path, key), child) for key, child in children)
    return sorted(found, key=lambda path: (len(path), [str(step) for step in path]))


def _replace(node: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = node
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return node


@st.composite
def mutated(draw, seeds: st.SearchStrategy[Any], at_most: int = 3) -> Any:
    """A seed with up to ``at_most`` of its values (anywhere, the whole document included) replaced."""
    doc = copy.deepcopy(draw(seeds))
    for _ in range(draw(st.integers(0, at_most))):
        path = draw(st.sampled_from(_paths(doc)))
        doc = _replace(doc, path, copy.deepcopy(draw(HOSTILE)))
    return doc


def _objects() -> st.SearchStrategy[dict]:
    generated = st.one_of(
        NODECLASS_SPEC.map(lambda spec: merge_patch(BASE_NODECLASS, {"spec": spec})),
        NODEPOOL_SPEC.map(lambda spec: merge_patch(BASE_NODEPOOL, {"spec": spec})),
    )
    user_data = st.sampled_from(USERDATA_TEXTS).map(lambda text: merge_patch(BASE_NODECLASS, {"spec": {"userData": text}}))
    overlays = st.sampled_from(OVERLAYS).map(lambda spec: merge_patch(BASE_NODEOVERLAY, {"spec": spec}))
    buffers = st.sampled_from(BUFFERS).map(lambda spec: merge_patch(BASE_CAPACITYBUFFER, {"spec": spec}))
    return st.one_of(st.sampled_from(MANIFESTS), generated, user_data, overlays, buffers)


# CapacityBuffer and NodeOverlay specs to mutate: these kinds have no generator of their own yet.
BUFFERS = [
    {"replicas": 3},
    {"podTemplateRef": None, "scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"}, "percentage": 20},
    {"limits": {"cpu": "4", "memory": "8Gi"}},
]
OVERLAYS = [
    {"priceAdjustment": "-10%", "weight": 10},
    {"price": "0.52"},
    {"capacity": {"smarter-devices/fuse": 1}},
    {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]}], "priceAdjustment": "+0.1"},
]


OBJECT = mutated(_objects())
MANIFEST = st.lists(OBJECT, min_size=1, max_size=3)
STACK = mutated(st.sampled_from(STACKS), at_most=2)
WAIVER_FILE = mutated(st.just({"waivers": WAIVERS}), at_most=2)


# --- from documents to text, with what only text can say ------------------------------------------


def _dump(docs: list[Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True)


TEXT_EDITS = st.sampled_from(["none", "duplicate-key", "shared-anchor", "merge-key", "recursive-alias", "alias-bomb", "tab"])


def as_text(docs: list[Any], edit: str) -> str:
    """YAML for ``docs``, then one textual edit: a key given twice, anchors and aliases (shared, merged,
    recursive, a billion laughs), a tab where YAML forbids one."""
    text = _dump(docs)
    lines = text.splitlines(keepends=True)
    keyed = [i for i, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("-")]
    if edit == "duplicate-key" and keyed:
        lines.insert(keyed[-1] + 1, lines[keyed[-1]])
    elif edit == "shared-anchor":
        lines.append("---\n" if lines else "")
        lines += ["base: &b {role: R, tags: {a: b}}\n", "copy: *b\n"]
    elif edit == "merge-key" and keyed:
        index = keyed[0]
        indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
        lines[index:index] = [f"{indent}x-defaults: &d {{detailedMonitoring: true}}\n", f"{indent}<<: *d\n"]
    elif edit == "recursive-alias":
        lines += [
            "---\n",
            "apiVersion: karpenter.k8s.aws/v1\n",
            "kind: EC2NodeClass\n",
            "metadata: {name: loop}\n",
            "spec: &s\n",
            "  role: R\n",
            "  tags: {self: *s}\n",
            "  amiSelectorTerms: [*s]\n",
        ]
    elif edit == "alias-bomb":
        lines += ["---\n", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 8)]
    elif edit == "tab" and keyed:
        lines[keyed[0]] = "\t" + lines[keyed[0]]
    return "".join(lines)


# --- the invariant --------------------------------------------------------------------------------


def run(argv: list[str], *, aws: bool = False, writes: Path | None = None) -> tuple[int, str, str]:
    """Run one command in process and check the contract every front door keeps on any input.

    Exit 0, 1 or 2 (3 only when ``aws``); an exception escaping ``main`` (a traceback) fails the test;
    with ``--format json`` and exit 0/1, stdout is one JSON document; on exit 2, one line on stderr,
    nothing on stdout and nothing at ``writes``.
    """
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    stdout, stderr = out.getvalue(), err.getvalue()
    allowed = {0, 1, 2, 3} if aws else {0, 1, 2}
    assert code in allowed, (code, stdout, stderr)
    if code == 2:
        assert stdout == "" and stderr.count("\n") == 1 and stderr.startswith(("karpenter-gitops: error:", "Error:")), stderr
        assert writes is None or not writes.exists(), f"exit 2 but {writes} was written"
    elif code in (0, 1) and "--format" in argv and argv[argv.index("--format") + 1] == "json":
        json.loads(stdout)
    return code, stdout, stderr
