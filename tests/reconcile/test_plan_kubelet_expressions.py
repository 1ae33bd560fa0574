"""``plan`` predicts Karpenter 1.15 evaluating the kubelet expressions for every instance type (embedded AWS).

The cluster declares the NodeClassCEL gate on, as a stack's ``karpenter-gitops:cluster.featureGates`` does.
"""

from __future__ import annotations

import copy
import dataclasses

from support.aws_refusals import session_denying

from karpenter_gitops.cli import main
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.load import into_inputs
from karpenter_gitops.reconcile import reconcile
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

GATED = Cluster(feature_gates=frozenset({"NodeClassCEL"}))


def plan_with(aws_env, cache, kubelet: dict, *, pool_types: list[str] | None = None, cluster: Cluster = GATED, session=None):
    node_class = copy.deepcopy(BASE_NODECLASS)
    node_class["spec"].update(amiSelectorTerms=[{"alias": "al2023@latest"}], kubelet=kubelet)
    docs = [node_class]
    if pool_types is not None:
        pool = copy.deepcopy(BASE_NODEPOOL)
        pool["spec"]["template"]["spec"]["requirements"] = [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": pool_types}
        ]
        docs.append(pool)
    inputs = dataclasses.replace(into_inputs.load_documents([("test.yaml", docs)], (1, 15)), cluster=cluster)
    return reconcile(inputs, release=(1, 15), kubernetes=Kubernetes(1, 32), aws=session or aws_env.session(), cache_dir=cache)


def validation(plan) -> tuple[str, str, str]:
    condition = plan.node_classes["default"].condition("ValidationSucceeded")
    return condition.status, condition.reason, condition.message


def findings(plan, rule: str) -> list:
    return [f for f in plan.findings if f.rule == rule]


def test_a_division_by_zero_on_some_types_fails_the_class_with_karpenters_message(default_aws, catalogue_cache):
    expression = "memory_mib / (default_enis - 2)"  # a1.medium, c6g.medium, ... have two ENIs
    plan = plan_with(default_aws, catalogue_cache, {"kubeReserved": {"memory": expression}})
    assert validation(plan) == (
        "False",
        "KubeletExpressionEvaluationFailed",
        f"evaluating kubelet resource expression, evaluating expression, division by zero (expression={expression}, "
        f"instance-type=a1.medium) (expression={expression}, field=kubeReserved, instance-type=a1.medium, key=memory)",
    )
    [finding] = findings(plan, "live/kubelet-expression-failed")
    assert (finding.path, finding.severity.value) == ("spec.kubelet.kubeReserved[memory]", "error")
    assert finding.message.startswith("fails on ") and "(a1.medium, c6g.medium, c6gd.medium and " in finding.message
    assert finding.hint.startswith("guard the divisor")
    assert plan.exit_code == 1


def test_a_max_pods_below_zero_is_out_of_karpenters_range(default_aws, catalogue_cache):
    plan = plan_with(default_aws, catalogue_cache, {"maxPods": "max_pods - 30"})
    status, reason, message = validation(plan)
    assert (status, reason) == ("False", "KubeletExpressionEvaluationFailed")
    # the first type by name: a1.large, 3 ENIs × (10 − 1) + 2 = 29 pods (EKS's own figure), so 29 − 30
    assert message == (
        "maxPods expression evaluated to a value outside the valid range [0, 2147483647] "
        "(expression=max_pods - 30, instance-type=a1.large, result=-1)"
    )


def test_expressions_that_hold_everywhere_leave_the_class_valid(default_aws, catalogue_cache):
    kubelet = {"maxPods": "min(max_pods, 110)", "kubeReserved": {"cpu": "max(70, vcpus * 10)", "memory": "255 + 11 * max_pods"}}
    plan = plan_with(default_aws, catalogue_cache, kubelet, pool_types=["m5.large"])
    assert validation(plan)[0] == "True"
    assert [f.rule for f in plan.findings if f.rule.startswith("live/kubelet")] == []


def test_values_no_node_can_use_are_warned_about_on_the_types_the_pools_launch(default_aws, catalogue_cache):
    kubelet = {"maxPods": "vcpus * 100", "kubeReserved": {"memory": "memory_mib"}}
    plan = plan_with(default_aws, catalogue_cache, kubelet, pool_types=["m5.large", "m5.24xlarge"])
    assert validation(plan)[0] == "True"  # Karpenter takes them: nothing fails to evaluate
    by_path = {f.path: f for f in findings(plan, "live/kubelet-expression-unusable")}
    assert {f.severity.value for f in by_path.values()} == {"warning"}
    assert by_path["spec.kubelet.maxPods"].message == (
        "gives a value no node can use on 2 instance type(s): m5.24xlarge: maxPods 9600: more than the 250 EKS supports "
        "on a node, m5.large: maxPods 200 on 2 vCPUs: EKS recommends at most 110 below 30 vCPUs"
    )
    assert (
        "m5.large: reserves 8192Mi of its 8192Mi memory: nothing is left for pods"
        in by_path["spec.kubelet.kubeReserved[memory]"].message
    )


def test_without_the_gate_nothing_is_evaluated(default_aws, catalogue_cache):
    plan = plan_with(
        default_aws, catalogue_cache, {"kubeReserved": {"memory": "memory_mib / (default_enis - 2)"}}, cluster=Cluster()
    )
    assert validation(plan)[1] == "KubeletExpressionsDisabled"
    assert findings(plan, "live/kubelet-expression-failed") == []


def test_an_expression_that_does_not_compile_stops_before_evaluation_with_cel_gos_lines(default_aws, catalogue_cache):
    plan = plan_with(default_aws, catalogue_cache, {"maxPods": "max_pods * 0.9"})
    assert validation(plan) == (
        "False",
        "KubeletExpressionInvalid",
        "validating expression, compiling expression, ERROR: <input>:1:10: found no matching overload for '_*_' applied to "
        "'(int, double)'\n | max_pods * 0.9\n | .........^ (expression=max_pods * 0.9) (field=spec.kubelet.maxPods)",
    )
    assert findings(plan, "live/kubelet-expression-failed") == []


def test_without_a_catalogue_karpenter_waits_instead_of_failing(default_aws, tmp_path):
    session = session_denying(default_aws, "DescribeInstanceTypes")
    plan = plan_with(default_aws, tmp_path, {"kubeReserved": {"memory": "memory_mib / (default_enis - 2)"}}, session=session)
    assert validation(plan) == ("Unknown", "AwaitingDependency", "awaiting the instance-type catalogue")
    assert findings(plan, "live/kubelet-expression-failed") == []


def test_plan_from_a_gated_stack_shows_the_prediction_and_the_fields_in_full(tmp_path, monkeypatch, capsys, catalogue_cache):
    (tmp_path / "Pulumi.gated.yaml").write_text(
        'config:\n  karpenter-gitops:cluster: {name: demo, karpenterVersion: "1.15", kubernetesVersion: "1.32", '
        "featureGates: {NodeClassCEL: true}}\n  karpenter-gitops:nodeClasses:\n    default:\n"
        "      amiSelectorTerms: [{alias: al2023@latest}]\n      role: KarpenterNodeRole-demo\n"
        "      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n"
        "      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]\n"
        "      kubelet: {kubeReserved: {memory: 'memory_mib / (default_enis - 2)'}}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--stack", "gated", "--embedded-aws", "--cache-dir", str(catalogue_cache)]) == 1
    out = " ".join(capsys.readouterr().out.split())  # the table wraps long lines
    assert "KubeletExpressionEvaluationFailed" in out
    assert "spec.kubelet.kubeReserved[memory]: fails on" in out and "[live/kubelet-expression-failed]" in out
