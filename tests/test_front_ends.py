"""One verdict whichever way a user meets it: ``validate``, the dynamic provider's Check, the policy pack.

The same corpus (the example manifests, every rule's good and bad spec examples, the project's
stack files with their policy blocks, quantities written as numbers and as strings, and generated
specs) goes through

(a) ``karpenter-gitops validate --format json`` (plain for (b), ``--policy`` for (c)),
(b) the Reconciliation's Check over the real ``python -m pulumi.dynamic`` gRPC server, inputs
    serialised as the engine serialises them (protobuf Structs: every number a double),
(c) the pack over its real Analyzer gRPC server: Analyze per custom resource, AnalyzeStack per stack,

and the sets of (rule, kind, name, path, severity) must be equal, but for what a front end
cannot see, written in :data:`CHECK_CANNOT_SEE` and :data:`PACK_CANNOT_SEE`. The pack's verdict is a
CrossGuard enforcement level, so there an error is ``mandatory`` and a warning or info ``advisory``;
the stack's policy block reaches it as the pack config ``karpenter-gitops pack-config`` writes.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROJECT
from hypothesis import HealthCheck, given, settings
from support.crd_strategies import NODECLASS_SPEC, NODEPOOL_SPEC
from support.pulumi_grpc import AnalyzerHost, ProviderHost, provider_inputs
from support.pulumi_mocks import failure_path

from karpenter_gitops.app import analyze
from karpenter_gitops.cli import main
from karpenter_gitops.core import versions
from karpenter_gitops.load.files import parse_yaml
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, example_documents, merge_patch
from karpenter_gitops.rules.registry import Stage
from karpenter_gitops_policies import pack
from karpenter_gitops_pulumi.reconciliation import INPUT_KEYS, OUTPUT_KEYS, ReconciliationProvider

Verdict = tuple[str, str, str, str, str]  # rule, kind, name, path, severity
NAMESPACE = "karpenter-gitops"
KINDS = {"EC2NodeClass": pack.NODECLASS_TYPE, "NodePool": pack.NODEPOOL_TYPE}
# The Reconciliation carries one class and the pools that name it: a pool of no class in the stack never
# reaches a Reconciliation (the Fleet refuses it before registering anything), and the class's check sees
# the pools of its own class only, so it never reports a missing one.
CHECK_CANNOT_SEE = {"nodepool/node-class-ref-missing": "a pool of no class never reaches a Reconciliation"}
# The pack judges each custom resource by itself for Karpenter 1.14; what needs more is listed per rule.
PACK_CANNOT_SEE = {
    **{rule_id: why for rule_id, why in pack.UNSEEN.items()},
    "schema/duplicate": "two resources cannot share a URN, so the engine never hands the pack a duplicate",
}


@dataclass
class Case:
    """A set of objects that form one stack (one cluster), with its release and policy block."""

    id: str
    documents: list[dict[str, Any]]
    release: versions.Release = versions.DEFAULT
    policy: Mapping[str, Any] | None = None
    classes: dict[str, dict] = field(init=False)
    pools: dict[str, dict] = field(init=False)

    def __post_init__(self) -> None:
        self.classes = {d["metadata"]["name"]: d for d in self.documents if d["kind"] == "EC2NodeClass"}
        self.pools = {d["metadata"]["name"]: d for d in self.documents if d["kind"] == "NodePool"}

    def pool_class(self, pool: Mapping[str, Any]) -> str | None:
        ref = (((pool.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        return ref.get("name") if ref.get("name") in self.classes else None

    def stack_file(self) -> dict:
        config = {
            f"{NAMESPACE}:cluster": {"name": "parity", "karpenterVersion": versions.show(self.release)},
            f"{NAMESPACE}:nodeClasses": {name: d.get("spec") for name, d in self.classes.items()},
            f"{NAMESPACE}:nodePools": {name: d.get("spec") for name, d in self.pools.items()},
        }
        if self.policy:
            config[f"{NAMESPACE}:policy"] = self.policy
        return {"config": config}


def _well_formed(doc: Any) -> bool:
    """An envelope every front end takes: Pulumi builds it (apiVersion, kind, a string name), so the
    envelope rules (``schema/api-version``, a missing name) are the manifest loader's alone."""
    if not isinstance(doc, Mapping) or doc.get("kind") not in KINDS:
        return False
    api = BASE_NODECLASS["apiVersion"] if doc["kind"] == "EC2NodeClass" else BASE_NODEPOOL["apiVersion"]
    name = (doc.get("metadata") or {}).get("name")
    return doc.get("apiVersion") == api and isinstance(name, str) and bool(name)


def corpus() -> Iterator[Case]:
    for path in sorted([*(PROJECT / "examples" / "manifests").glob("*.yaml"), *(PROJECT / "examples" / "broken").glob("*.yaml")]):
        docs = [d for d in parse_yaml(path.read_text(), path.name) if _well_formed(d)]
        yield Case(f"example {path.name}", docs)
    for rule in sorted(registry.RULES.values(), key=lambda r: r.id):
        if rule.stage not in (Stage.OBJECT, Stage.LOAD):
            continue
        for verdict, examples in (("good", rule.good), ("bad", rule.bad)):
            for index, example in enumerate(examples):
                if "controller" in example or example.get("duplicate"):
                    continue  # the controller block is the component's; duplicates are listed above
                if (example.get("metadata") or {}).get("annotations"):
                    continue  # a stack file holds specs, not annotations: only the pack and validate of manifests see them
                files, release = example_documents(rule, example)
                docs = [d for _, documents in files for d in documents if _well_formed(d)]
                yield Case(f"{rule.id} {verdict}[{index}]", docs, release)
    for path in sorted((PROJECT / "stacks").glob("Pulumi.*.yaml")):
        config = yaml.safe_load(path.read_text())["config"]
        cluster = config.get(f"{NAMESPACE}:cluster") or {}
        docs = [
            merge_patch(base, {"metadata": {"name": name}, "spec": None}) | {"spec": spec}
            for key, base in (("nodeClasses", BASE_NODECLASS), ("nodePools", BASE_NODEPOOL))
            for name, spec in (config.get(f"{NAMESPACE}:{key}") or {}).items()
        ]
        release = versions.parse(cluster["karpenterVersion"]) if cluster.get("karpenterVersion") else versions.DEFAULT
        yield Case(f"stack {path.name}", docs, release, config.get(f"{NAMESPACE}:policy"))
    # A policy block that changes severities, switches rules off, tunes a parameter and is production.
    settings = {
        "production": True,
        "maxHopLimit": 2,
        "rules": {
            "policy/imds-hop-limit": {"severity": "error"},
            "policy/ebs-encrypted": {"enabled": False},
            "nodeclass/role-path": {"severity": "info"},
            "policy/spot-flexibility": {"severity": "info"},
        },
    }
    tuned = merge_patch(
        BASE_NODECLASS,
        {
            "spec": {
                "role": "team/KarpenterNodeRole-demo",
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "metadataOptions": {"httpPutResponseHopLimit": 3},
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}}],
            }
        },
    )
    spot = merge_patch(
        BASE_NODEPOOL,
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
                        ]
                    }
                }
            }
        },
    )
    yield Case("stack with a policy block", [tuned, spot], policy=settings)
    for cpu in (100, "100", 100.5):
        pool = merge_patch(BASE_NODEPOOL, {"spec": {"limits": {"cpu": cpu, "memory": 400}}})
        yield Case(f"quantities cpu={cpu!r}", [copy.deepcopy(BASE_NODECLASS), pool])


# --- the three front ends ------------------------------------------------------------------------


def via_validate(case: Case, tmp_path: Path, capsys, policy: bool) -> set[Verdict]:
    """The case as a stack file through the CLI, from a directory without a waiver file (the pack has none)."""
    path = tmp_path / "Pulumi.parity.yaml"
    path.write_text(yaml.safe_dump(case.stack_file(), sort_keys=False))
    args = ["validate", path.name, "--format", "json", *(["--policy"] if policy else [])]
    with contextlib.chdir(tmp_path):
        code = main([*args, "--karpenter-version", versions.show(case.release)])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return {
        (f["rule"], f["kind"], f["name"], f["path"], f["severity"]) for f in json.loads(out)["findings"] if not f.get("waived")
    }


_RULE = re.compile(r"\[([a-z0-9-]+/[a-z0-9-]+)\]")
_LOGGED = re.compile(r"^(warning|info): (\S+) (\S+): (.+?): (.*)$", re.S)


def _rule(text: str, fix: str) -> str | None:
    """The rule id a front end wrote after the message, before its fix hint."""
    found = _RULE.findall(text.split(fix, 1)[0])
    return found[-1] if found else None


_POOL = re.compile(r'^nodePoolSpecs\["([^"]+)"\](.*)$')
_SYNC = 0


def _finding_path(prop: str) -> tuple[str | None, str]:
    """A Check property path back as (the pool's name or None, the finding's path)."""
    pool = _POOL.match(prop)
    return (pool.group(1), "spec" + pool.group(2)) if pool else (None, prop)


def via_check(case: Case, host: ProviderHost, provider) -> set[Verdict]:
    """Each class's Reconciliation, checked as the engine checks it: errors are failures, warnings and
    info go to the host's stderr, read up to a marker check that logs one known warning."""
    global _SYNC
    found = set()
    cluster = {"name": "parity", "karpenterVersion": versions.show(case.release)}
    for name, doc in case.classes.items():
        pools = {p: d.get("spec") for p, d in case.pools.items() if case.pool_class(d) == name}
        props = {
            "nodeClassName": name,
            "spec": doc.get("spec"),
            "nodePoolSpecs": pools,
            "nodeOverlaySpecs": {},
            "cluster": cluster,
            "policy": case.policy or {},
        }  # the cases draw no NodeOverlay
        assert set(props) == set(INPUT_KEYS) - {"workloads"}  # optional: without workloads no forecast is stored
        _, failures = host.check({}, provider_inputs(provider, **props, **{k: None for k in OUTPUT_KEYS}))
        for prop, reason in failures:
            rule = _rule(reason, " (fix: ")
            pool, path = _finding_path(prop or failure_path(reason))  # a finding's path leads its reason
            found.add((rule, "NodePool" if pool else "EC2NodeClass", pool or name, path, "error"))
    _SYNC += 1
    marker = f"sync-{_SYNC}"
    sync = {
        "nodeClassName": marker,
        "spec": {**BASE_NODECLASS["spec"], "role": "path/Sync"},
        "nodePoolSpecs": {},
        "cluster": {},
        "policy": {},
    }
    host.check({}, provider_inputs(provider, **sync, **{k: None for k in OUTPUT_KEYS}))
    return found | logged(host.stderr_until(f"EC2NodeClass {marker}:"))


def logged(stderr: str) -> set[Verdict]:
    """Check's warnings and info, as the provider host wrote them for the engine (a hint may span lines)."""
    found = set()
    for record in re.split(r"\n(?=(?:warning|info): )", stderr):
        match = _LOGGED.match(record)
        if match:
            severity, kind, name, prop, reason = match.groups()
            _, path = _finding_path(prop)
            found.add((_rule(reason, " (fix: "), kind, name, path, severity))
    return found


def via_pack(case: Case, host: AnalyzerHost) -> set[Verdict]:
    """Every custom resource through Analyze, the whole stack through AnalyzeStack."""
    from pulumi.runtime.proto import analyzer_pb2

    resources = [
        (KINDS[d["kind"]], d, f"urn:pulumi:parity::p::{KINDS[d['kind']]}::{d['metadata']['name']}", d["metadata"]["name"])
        for d in case.documents
    ]
    diagnostics = [diag for r in resources for diag in host.analyze(*r).diagnostics]
    diagnostics += list(host.analyze_stack(resources).diagnostics)
    found = set()
    for diag in diagnostics:
        message = diag.message.removeprefix(diag.description).lstrip("\n")  # the SDK puts the description first
        rule = _rule(message, ". Fix: ")  # the pack writes "...: message [rule]. Fix: hint"
        if rule is None:
            continue  # an advisory note about values unknown in preview
        kind, rest = message.split(" ", 1)
        name, path, _ = rest.split(": ", 2)
        level = "mandatory" if diag.enforcementLevel == analyzer_pb2.MANDATORY else "advisory"
        found.add((rule, kind, name, path, level))
    return found


def enforced(verdicts: set[Verdict]) -> set[Verdict]:
    """Severities as CrossGuard enforcement levels."""
    return {(*v[:4], "mandatory" if v[4] == "error" else "advisory") for v in verdicts}


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("hosts")
    (workdir / "no-waivers.yaml").write_text("waivers: []\n")
    analyzer = AnalyzerHost({pack.WAIVER_FILE_ENV: str(workdir / "no-waivers.yaml")})
    provider = ProviderHost(cwd=workdir)
    provider.configure({})
    yield provider, analyzer
    analyzer.close()
    provider.close()


def _compare(case: Case, tmp_path: Path, capsys, hosts) -> None:
    provider, analyzer = hosts
    plain = via_validate(case, tmp_path, capsys, policy=False)
    orphans = {name for name, d in case.pools.items() if case.pool_class(d) is None}
    expected_check = {v for v in plain if v[0] not in CHECK_CANNOT_SEE and not (v[1] == "NodePool" and v[2] in orphans)}
    assert via_check(case, provider, ReconciliationProvider()) == expected_check, f"{case.id}: Check differs from validate"
    if case.release != versions.DEFAULT:
        return  # the pack judges Karpenter 1.14 only
    analyzer.configure(analyze.pack_config(_settings(case)))
    with_policy = via_validate(case, tmp_path, capsys, policy=True)
    expected_pack = enforced({v for v in with_policy if v[0] not in PACK_CANNOT_SEE})
    assert via_pack(case, analyzer) == expected_pack, f"{case.id}: the pack differs from validate --policy"


def _settings(case: Case):
    from karpenter_gitops.load import policy_settings

    return policy_settings.parse(case.policy, "parity") if case.policy else policy_settings.parse({}, "parity")


CASES = list(corpus())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_three_front_ends_agree(case, tmp_path, capsys, hosts):
    _compare(case, tmp_path, capsys, hosts)


def test_the_corpus_covers_every_kind_of_input():
    ids = " ".join(c.id for c in CASES)
    assert "example platform.yaml" in ids and "stack Pulumi.demo.yaml" in ids and "quantities cpu=100" in ids
    assert "stack with a policy block" in ids
    assert sum(1 for c in CASES if c.id.startswith(("cel/", "schema/", "policy/", "nodeclass/", "nodepool/", "userdata/"))) > 200
    assert any(c.policy for c in CASES), "a stack with a policy block"


@pytest.mark.slow
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(NODECLASS_SPEC, NODEPOOL_SPEC)
def test_generated_specs_get_one_verdict(tmp_path_factory, capsys, hosts, class_spec, pool_spec):
    node_class = merge_patch(BASE_NODECLASS, {"spec": class_spec})
    node_pool = merge_patch(BASE_NODEPOOL, {"spec": pool_spec})
    _compare(Case("generated", [node_class, node_pool]), tmp_path_factory.mktemp("generated"), capsys, hosts)
