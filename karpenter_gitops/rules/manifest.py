"""Rules on a manifest file as a whole (``manifest/``), observed while loading it."""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.registry import ALL_KINDS, Stage, rule

NOT_RENDERED = "manifest/not-rendered"

rule(
    NOT_RENDERED,
    Severity.WARNING,
    ALL_KINDS,
    "A manifest holding template placeholders (${CLUSTER_NAME} for envsubst or Terraform's templatefile, "
    "{{ .Values.name }} for Helm, <<CLUSTER_NAME>> for a blueprint's sed), reported once per file: the file is "
    "not rendered, so the values holding them are not the ones Karpenter will see. They are left unjudged (no "
    "'does not exist' for a role named after a placeholder) and plan, which would look them up in AWS, refuses "
    "the file; everything else in it is judged.",
    "Render the file first and check what it renders to, e.g. envsubst < nodes.yaml | karpenter-gitops validate - "
    "(terraform output, or helm template ... | karpenter-gitops validate -).",
    stage=Stage.LOAD,
    origin="ours",
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=(
        {"spec": {"role": "KarpenterNodeRole-${CLUSTER_NAME}"}},
        {"kind": "NodePool", "spec": {"template": {"spec": {"nodeClassRef": {"name": "{{ .Values.nodeClass }}"}}}}},
    ),
)
