"""Manifests that were never rendered: a value holding ``${CLUSTER_NAME}``, ``{{ .Values.x }}`` or ``<<NAME>>``
is reported once per file as not rendered, is never judged as if it were the value, and is never looked up."""

from __future__ import annotations

import pytest
import yaml

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.reconcile import reconcile
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch
from karpenter_gitops.rules.manifest import NOT_RENDERED

BLUEPRINT = yaml.safe_load("""\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default, annotations: {example.com/owner: "{{ team }}"}}
spec:
  role: "KarpenterNodeRole-${CLUSTER_NAME}"
  amiSelectorTerms: [{alias: "al2023@${AMI_VERSION}"}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: "${CLUSTER_NAME}"}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: "${CLUSTER_NAME}"}}]
  blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: "${ROOT_SIZE}"}}]
  tags: {"kubernetes.io/cluster/${CLUSTER_NAME}": owned}
  userData: |
    #!/bin/bash
    echo "${HOSTNAME}" > /etc/node-name
""")


def _load(*docs, file="nodes.yaml"):
    return load_documents([(file, [dict(doc) for doc in docs])])


def test_a_blueprint_is_reported_once_as_not_rendered_and_nothing_else_is_said_of_its_placeholders():
    report = validate(_load(BLUEPRINT, BASE_NODEPOOL))
    ((rule, path, message, hint),) = [(f.rule, f.path, f.message, f.hint) for f in report.findings]
    assert (rule, path) == (NOT_RENDERED, "spec.role")
    assert message.startswith("not rendered: 'KarpenterNodeRole-${CLUSTER_NAME}'") and "(and 5 more value(s)" in message
    assert (
        "render with envsubst/terraform/helm first" in message
        and hint == "e.g. envsubst < nodes.yaml | karpenter-gitops validate -"
    )
    assert report.errors == 0


def test_userdata_and_annotations_are_the_users_own_text():
    (node_class,) = _load(BLUEPRINT).node_classes
    assert "spec.userData" not in node_class.unrendered and not any("annotations" in path for path in node_class.unrendered)
    assert "spec.tags[kubernetes.io/cluster/${CLUSTER_NAME}]" in node_class.unrendered  # a key can be the placeholder


def test_once_per_file_and_only_where_a_placeholder_is():
    helm_pool = merge_patch(
        BASE_NODEPOOL, {"spec": {"template": {"spec": {"nodeClassRef": {"name": "{{ .Values.nodeClass }}"}}}}}
    )
    inputs = load_documents([("a.yaml", [BLUEPRINT, helm_pool]), ("b.yaml", [BASE_NODECLASS])])
    noted = [(o.kind, o.source.file) for o in inputs.observations if o.rule == NOT_RENDERED]
    assert noted == [("EC2NodeClass", "a.yaml")]
    assert [o.violation.hint for o in inputs.observations if o.rule == NOT_RENDERED] == [
        "e.g. envsubst < a.yaml | karpenter-gitops validate -"
    ]
    assert _load(helm_pool).observations[0].violation.hint == "e.g. helm template ... | karpenter-gitops validate -"
    assert not _load(BASE_NODECLASS).observations


def test_a_mistake_beside_a_placeholder_is_still_found():
    broken = merge_patch(
        BLUEPRINT, {"spec": {"instanceProfile": "arn:aws:iam::123456789012:instance-profile/Nodes", "role": None}}
    )
    rules = {f.rule for f in validate(_load(broken)).findings}
    assert {"nodeclass/instance-profile-arn", NOT_RENDERED} <= rules


def test_plan_refuses_an_unrendered_file_before_any_aws_call():
    with pytest.raises(InputError) as refused:
        reconcile(_load(BLUEPRINT, BASE_NODEPOOL), aws=None)  # no session: a look-up would fail otherwise
    assert refused.value.file == "nodes.yaml" and "not rendered: EC2NodeClass/default spec.role" in refused.value.message
    assert "envsubst < nodes.yaml | karpenter-gitops plan -" in refused.value.hint
