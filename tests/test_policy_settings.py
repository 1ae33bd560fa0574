"""A stack's policy setting (severity, enabled) changes the verdict of every front end, for every kind of rule.

One test per kind of rule: an object rule, a rule seen while loading, a cross-object rule, a
transition rule, a live rule, a rule of the user's CRDs, the expired-waiver rule and a rule only
the Pulumi layer can judge. Each shows the same setting taking effect wherever that kind is judged:
the CLI, the dynamic provider, the KarpenterController component and the policy pack (whose config
``karpenter-gitops pack-config`` derives from the same block).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
import yaml
from support import pulumi_mocks
from support.pulumi_grpc import AnalyzerHost
from support.pulumi_mocks import failure_path

from karpenter_gitops.app import analyze
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import PolicySettings, RuleSetting
from karpenter_gitops.load import policy_settings as policy_block
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch
from karpenter_gitops_policies import pack
from karpenter_gitops_pulumi.controller import KarpenterController, KarpenterControllerArgs
from karpenter_gitops_pulumi.reconciliation import ReconciliationProvider

CLASS = BASE_NODECLASS["spec"]
POOL = BASE_NODEPOOL["spec"]
OFF = {"enabled": False}


def stack(tmp_path: Path, policy: dict | None = None, classes=None, pools=None, **settings) -> Path:
    config = {
        "karpenter-gitops:cluster": {"name": "demo", "kubernetesVersion": "1.32", "karpenterVersion": "1.14"},
        "karpenter-gitops:nodeClasses": classes or {"default": CLASS},
        "karpenter-gitops:nodePools": pools if pools is not None else {"general": POOL},
        **{f"karpenter-gitops:{key}": value for key, value in settings.items()},
    }
    if policy is not None:
        config["karpenter-gitops:policy"] = policy
    path = tmp_path / "Pulumi.test.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def judged(cli, tmp_path: Path, *argv: str) -> tuple[int, dict]:
    with contextlib.chdir(tmp_path):  # no default waiver file here
        code, out, err = cli(*argv, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def severities(report: dict, rule: str) -> list[str]:
    return [f["severity"] for f in report["findings"] if f["rule"] == rule and not f.get("waived")]


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory):
    none = tmp_path_factory.mktemp("pack") / "none.yaml"
    none.write_text("waivers: []\n")
    host = AnalyzerHost({pack.WAIVER_FILE_ENV: str(none)})
    yield host
    host.close()


def pack_levels(analyzer: AnalyzerHost, settings: dict | None, analyze_call) -> dict[str, int]:
    """Enforcement level per reported policy, with the pack configured from a stack's policy block."""
    analyzer.configure(analyze.pack_config(policy_block.parse(settings or {}, "test")))
    try:
        return {d.policyName: d.enforcementLevel for d in analyze_call().diagnostics}
    finally:
        analyzer.configure({})


def test_an_object_rule_follows_the_setting_in_validate_check_and_the_pack(tmp_path, cli, analyzer):
    from pulumi.runtime.proto import analyzer_pb2

    spec = {**CLASS, "role": "team/KarpenterNodeRole-demo"}  # nodeclass/role-path, a warning
    rule, name = "nodeclass/role-path", "nodeclass-role-path"
    for setting, expected in ((None, ["warning"]), ({"severity": "error"}, ["error"]), (OFF, [])):
        policy = {"rules": {rule: setting}} if setting else None
        _, report = judged(cli, tmp_path, "validate", str(stack(tmp_path, policy, classes={"default": spec})))
        assert severities(report, rule) == expected
        props = {"nodeClassName": "default", "spec": spec, "nodePoolSpecs": {}, "cluster": {}, "policy": policy or {}}
        failures = ReconciliationProvider().check({}, props).failures
        assert [failure_path(f.reason) for f in failures] == (["spec.role"] if expected == ["error"] else [])
        doc = merge_patch(BASE_NODECLASS, {"spec": {"role": spec["role"]}})
        levels = pack_levels(analyzer, policy, lambda doc=doc: analyzer.analyze(pack.NODECLASS_TYPE, doc, "urn:x", "default"))
        assert levels.get(name) == {"warning": analyzer_pb2.ADVISORY, "error": analyzer_pb2.MANDATORY}.get(
            (expected or [None])[0]
        )


def test_a_rule_seen_while_loading_follows_the_setting_in_validate_and_the_controller_component(tmp_path, cli):
    long_prefix = "Karpenter-" + "a-rather-long-cluster-name-" * 2  # controller/name-length, an error
    block = {"nodeRoleName": "KarpenterNodeRole-demo", "namePrefix": long_prefix}
    rule = "controller/name-length"
    code, report = judged(cli, tmp_path, "validate", str(stack(tmp_path, None, controller=block)))
    assert code == 1 and set(severities(report, rule)) == {"error"}
    setting = {"rules": {rule: {"severity": "warning"}}}
    code, report = judged(cli, tmp_path, "validate", str(stack(tmp_path, setting, controller=block)))
    assert code == 0 and set(severities(report, rule)) == {"warning"}

    def component(policy):
        args = KarpenterControllerArgs(cluster_name="demo", settings=block, node_classes={"default": CLASS}, node_pools={})
        if policy:
            args["policy"] = policy
        return pulumi_mocks.run(lambda: KarpenterController("karpenter", args), recorder=pulumi_mocks.Recorder())

    with pytest.raises(Exception, match=r"\[controller/name-length\]"):
        component(None)
    assert component(setting).resources  # a warning: the component goes ahead and creates Karpenter's AWS side


def test_a_cross_object_rule_follows_the_setting_in_validate_and_the_pack(tmp_path, cli, analyzer):
    orphan = {"general": merge_patch(POOL, {"template": {"spec": {"nodeClassRef": {"name": "missing"}}}})}
    rule = "nodepool/node-class-ref-missing"
    assert severities(judged(cli, tmp_path, "validate", str(stack(tmp_path, None, pools=orphan)))[1], rule) == ["error"]
    assert (
        severities(judged(cli, tmp_path, "validate", str(stack(tmp_path, {"rules": {rule: OFF}}, pools=orphan)))[1], rule) == []
    )
    pool = merge_patch(BASE_NODEPOOL, {"spec": orphan["general"]})
    resources = [(pack.NODEPOOL_TYPE, pool, "urn:pool", "general")]
    assert "nodepool-node-class-ref-missing" in pack_levels(analyzer, None, lambda: analyzer.analyze_stack(resources))
    assert "nodepool-node-class-ref-missing" not in pack_levels(
        analyzer, {"rules": {rule: OFF}}, lambda: analyzer.analyze_stack(resources)
    )


def test_a_transition_rule_follows_the_setting_in_preview_and_check(tmp_path, cli):
    rule = "transition/role-change-drifts"  # a warning from 1.7 on: a new role replaces every node
    base = tmp_path / "base"
    base.mkdir()
    (base / "nc.yaml").write_text(yaml.safe_dump(BASE_NODECLASS))
    changed = {"default": {**CLASS, "role": "KarpenterNodeRole-other"}}
    for setting, expected in ((None, ["warning"]), ({"severity": "error"}, ["error"]), (OFF, [])):
        policy = {"rules": {rule: setting}} if setting else None
        head = stack(tmp_path, policy, classes=changed, pools={})
        _, report = judged(cli, tmp_path, "preview", "--manifests", str(head), "--base", str(base))
        assert severities(report, rule) == expected
        olds = {"nodeClassName": "default", "spec": CLASS, "nodePoolSpecs": {}, "cluster": {}, "policy": {}}
        news = {**olds, "spec": changed["default"], "policy": policy or {}}
        failures = ReconciliationProvider().check(olds, news).failures
        assert [failure_path(f.reason) for f in failures] == (["spec.role"] if expected == ["error"] else [])


@pytest.mark.slow
def test_a_live_rule_follows_the_setting_in_plan_and_the_pack(tmp_path, cli, catalogue_cache, analyzer):
    rule = "live/unserved-instance-types"  # arm64 types with an x86-only custom image
    classes = {
        "default": {**CLASS, "amiFamily": "AL2023", "amiSelectorTerms": [{"name": "payments-node-2025-01-27", "owner": "self"}]}
    }
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    for setting, expected in ((None, ["warning"]), ({"severity": "error"}, ["error"]), (OFF, [])):
        policy = {"rules": {rule: setting}} if setting else None
        path = stack(tmp_path, policy, classes=classes)
        code, plan = judged(cli, tmp_path, "plan", "--manifests", str(path), *aws)
        assert severities(plan, rule) == expected
        assert code == (1 if expected == ["error"] else 0)
    outputs = {
        "nodeClassName": "default",
        "findings": [
            {
                "rule": rule,
                "kind": "NodePool",
                "name": "general",
                "path": "spec.template.spec.requirements",
                "message": "m6g.large",
            }
        ],
    }
    resources = [(pack.RECONCILIATION_TYPE, outputs, "urn:r", "r")]
    assert "live-unserved-instance-types" in pack_levels(analyzer, None, lambda: analyzer.analyze_stack(resources))
    assert "live-unserved-instance-types" not in pack_levels(
        analyzer, {"rules": {rule: OFF}}, lambda: analyzer.analyze_stack(resources)
    )


def test_a_rule_of_the_users_crds_follows_the_setting_in_validate(tmp_path, cli):
    rule = "crd/engine"  # a CEL rule the native CEL runtime cannot run
    spec = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [{"rule": "isQuantity(self.role)", "message": "quantity"}],
    }
    schema = {"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "spec": spec}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "x"},
        "spec": {
            "group": "karpenter.k8s.aws",
            "names": {"kind": "EC2NodeClass"},
            "versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(crd))
    for setting, expected in ((None, ["warning"]), ({"severity": "info"}, ["info"]), (OFF, [])):
        policy = {"rules": {rule: setting}} if setting else None
        _, report = judged(cli, tmp_path, "validate", str(stack(tmp_path, policy, pools={})), "--crd", str(tmp_path / "crd.yaml"))
        assert severities(report, rule) == expected


def test_the_expired_waiver_rule_follows_the_setting_in_validate_and_the_pack(tmp_path, cli, analyzer, monkeypatch):
    rule = "policy/waiver-expired"
    expired = [{"rule": "policy/no-public-ip", "object": "x", "reason": "r", "expires": "2001-01-01"}]
    for setting, expected, code in ((None, ["warning"], 0), ({"severity": "error"}, ["error"], 1), (OFF, [], 0)):
        policy = {"rules": {rule: setting}} if setting else None
        got, report = judged(cli, tmp_path, "validate", str(stack(tmp_path, policy, waivers=expired)), "--policy")
        assert severities(report, rule) == expected and got == code


def test_a_rule_only_the_pulumi_layer_judges_follows_the_setting_in_the_controller_component():
    block = {"nodeRoleName": "KarpenterNodeRole-demo"}  # ipv4, on an ipv6 cluster: controller/cni-ip-family

    def component(policy):
        args = KarpenterControllerArgs(cluster_name="demo", settings=block, node_classes={"default": CLASS}, node_pools={})
        if policy:
            args["policy"] = policy
        return pulumi_mocks.run(
            lambda: KarpenterController("karpenter", args), recorder=pulumi_mocks.Recorder(cluster_ip_family="ipv6")
        )

    with pytest.raises(Exception, match=r"\[controller/cni-ip-family\]"):
        component(None)
    assert component({"rules": {"controller/cni-ip-family": {"severity": "warning"}}}).resources
    assert component({"rules": {"controller/cni-ip-family": OFF}}).resources


def test_pack_config_carries_severities_switched_off_rules_production_and_parameters():
    settings = PolicySettings(
        production=True,
        params={"maxHopLimit": 2},
        rules={"policy/ebs-encrypted": RuleSetting(enabled=False), "nodeclass/role-path": RuleSetting(severity=Severity.ERROR)},
    )
    config = analyze.pack_config(settings)
    assert config["policy-ebs-encrypted"] == {"enforcementLevel": "disabled"}
    assert config["nodeclass-role-path"] == {"enforcementLevel": "mandatory"}
    assert config["nodeclass-alias-latest"] == {"enforcementLevel": "mandatory"}  # production raises it to an error
    assert config["policy-imds-hop-limit"] == {"maxHopLimit": 2}
    assert analyze.pack_config(PolicySettings()) == {}
