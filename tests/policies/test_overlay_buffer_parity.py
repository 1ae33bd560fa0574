"""NodeOverlays and CapacityBuffers get one verdict from every front end: ``validate --policy``, the policy
pack (each resource policy called as CrossGuard calls it) and the components' own judgement
(:func:`karpenter_gitops.app.stack.standalone`), on every example of every rule that judges these kinds."""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi_policy import ResourceValidationArgs, ResourceValidationPolicy
from pulumi_policy.proxy import unknown_checking_proxy
from support.policy_calls import OPTS

from karpenter_gitops.app import stack
from karpenter_gitops.core import versions
from karpenter_gitops.core.model import CAPACITYBUFFER, NAMESPACED, NODEOVERLAY
from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODEOVERLAY, example_documents
from karpenter_gitops.rules.registry import Stage
from karpenter_gitops_policies import pack

KINDS = {NODEOVERLAY: pack.NODEOVERLAY_TYPE, CAPACITYBUFFER: pack.CAPACITYBUFFER_TYPE}
RESOURCE_POLICIES = [p for p in pack.all_policies() if isinstance(p, ResourceValidationPolicy)]
_DESCRIBED = re.compile(r"^(\S+) (.+?): (\S+): .* \[([a-z0-9-]+/[a-z0-9-]+)\]\.", re.S)

EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.id} {verdict}[{index}]")
    for rule in sorted(registry.RULES.values(), key=lambda r: r.id)
    if rule.stage in (Stage.OBJECT, Stage.LOAD) and rule.kinds & set(KINDS)
    for verdict, examples in (("good", rule.good), ("bad", rule.bad))
    for index, example in enumerate(examples)
    if example.get("kind", next(iter(rule.kinds)) if len(rule.kinds) == 1 else None) in KINDS
]


def _verdicts(findings) -> set[tuple]:
    return {(f.rule, f.kind, f.name, f.path, f.severity.value) for f in findings if f.kind in KINDS}


def _documents(files) -> list[dict]:
    return [d for _, docs in files for d in docs if isinstance(d, dict) and d.get("kind") in KINDS]


def _key(doc: dict) -> str:
    metadata = doc["metadata"]
    return (
        f"{metadata['namespace']}/{metadata['name']}"
        if doc["kind"] in NAMESPACED and metadata.get("namespace")
        else metadata["name"]
    )


def via_pack(doc: dict) -> set[tuple]:
    found = set()
    urn = f"urn:pulumi:parity::p::{KINDS[doc['kind']]}::{_key(doc)}"
    for policy in RESOURCE_POLICIES:
        args = ResourceValidationArgs(KINDS[doc["kind"]], unknown_checking_proxy(doc), urn, _key(doc), OPTS, None, {})
        messages = []
        policy.validate(args, lambda message, _urn=None, into=messages: into.append(message))
        for message in messages:
            kind, name, path, rule = _DESCRIBED.match(message).groups()
            found.add((rule, kind, name, path, "mandatory" if policy.enforcement_level.value == "mandatory" else "advisory"))
    return found


@pytest.fixture(autouse=True)
def no_waivers(tmp_path, monkeypatch):
    (tmp_path / "no-waivers.yaml").write_text("waivers: []\n")
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, str(tmp_path / "no-waivers.yaml"))


def test_every_rule_of_these_kinds_has_an_example_here():
    judged = {rule.id for rule, *_ in (p.values for p in EXAMPLES)}
    wanted = {r.id for r in registry.RULES.values() if r.stage is Stage.OBJECT and r.kinds & set(KINDS)}
    assert wanted <= judged and len(EXAMPLES) >= 15


@pytest.mark.parametrize(("rule", "example"), EXAMPLES)
def test_validate_the_pack_and_the_components_agree(rule, example):
    files, release = example_documents(rule, example)
    expected = _verdicts(validate(load_documents(files, release), release, policy=True).findings)
    cluster = {
        "karpenterVersion": versions.show(release),
        **({"featureGates": example["featureGates"]} if "featureGates" in example else {}),
    }
    for doc in _documents(files):
        own = {v for v in expected if v[2] == _key(doc)}
        _, standalone = stack.standalone(doc["kind"], _key(doc), doc.get("spec"), cluster)
        assert _verdicts(standalone) == own, "the component judges otherwise than validate"
        if release == versions.DEFAULT and "stack" not in example and "featureGates" not in example:
            seen = {(*v[:4], "mandatory" if v[4] == "error" else "advisory") for v in own if v[0] not in pack.UNSEEN}
            assert via_pack(doc) == seen, "the pack judges otherwise than validate --policy"


WRONG = st.sampled_from([None, True, -1, "", [], {"a": 1}, "x"])  # a value of the wrong type or shape
REQUIREMENT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(
            ["kubernetes.io/arch", "karpenter.k8s.aws/instance-cpu", "kubernetes.io/hostname", "karpenter.sh/x"]
        ),
        "operator": st.sampled_from(["In", "NotIn", "Gt", "Gte", "Exists", "Near"]),
        "values": st.lists(st.sampled_from(["4", "arm64", "-1"]), max_size=2),
    }
)
FIELDS = {
    NODEOVERLAY: {
        "requirements": st.lists(REQUIREMENT, max_size=2),
        "price": st.sampled_from(["1.2", "0.05", "cheap"]),
        "priceAdjustment": st.sampled_from(["-10%", "+0.5", "-100%", "10%", "+5%"]),
        "capacity": st.sampled_from([{"cpu": "8"}, {"smarter-devices/fuse": 1}, {"pods": 3}, {"example.com/x": "1Gi"}]),
        "weight": st.integers(0, 10001),
    },
    CAPACITYBUFFER: {
        "podTemplateRef": st.sampled_from([None, {"name": "spare"}, {"name": ""}]),
        "scalableRef": st.sampled_from([None, {"apiGroup": "apps", "kind": "Deployment", "name": "web"}, {"name": "web"}]),
        "replicas": st.one_of(st.none(), st.integers(-1, 5)),
        "percentage": st.integers(-1, 200),
        "limits": st.sampled_from([{"cpu": "4"}, {"cpu": "four"}, {}]),
        "provisioningStrategy": st.sampled_from(["buffer.x-k8s.io/active-capacity", "other"]),
    },
}


@st.composite
def objects(draw) -> dict:
    kind = draw(st.sampled_from(sorted(KINDS)))
    base = BASE_NODEOVERLAY if kind == NODEOVERLAY else BASE_CAPACITYBUFFER
    fields = FIELDS[kind]
    chosen = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=3))
    spec = {**base["spec"], **{name: draw(st.one_of(fields[name], fields[name], WRONG)) for name in chosen}}
    return {**copy.deepcopy(base), "spec": spec}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=objects())
def test_generated_overlays_and_buffers_get_one_verdict(doc):
    expected = _verdicts(validate(load_documents([("m.yaml", [doc])], versions.DEFAULT), versions.DEFAULT, policy=True).findings)
    _, standalone = stack.standalone(doc["kind"], _key(doc), doc["spec"], {"karpenterVersion": versions.show(versions.DEFAULT)})
    assert _verdicts(standalone) == expected
    assert via_pack(doc) == {
        (*v[:4], "mandatory" if v[4] == "error" else "advisory") for v in expected if v[0] not in pack.UNSEEN
    }
