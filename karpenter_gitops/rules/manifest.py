"""Rules on a manifest as written (``manifest/``): the file as a whole, or what an object says to this tool;
observed while loading it."""

from __future__ import annotations

from karpenter_gitops.core.findings import IGNORE_ANNOTATION, Severity
from karpenter_gitops.rules.registry import ALL_KINDS, Stage, rule

NOT_RENDERED = "manifest/not-rendered"
UNUSABLE_IGNORE = "manifest/ignore-annotation"

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

rule(
    UNUSABLE_IGNORE,
    Severity.WARNING,
    ALL_KINDS,
    f"An entry of an object's {IGNORE_ANNOTATION} annotation that waives nothing: it gives no reason, names no "
    "rule (a misspelt id), names a rule whose findings cannot be waived (one that mirrors the API server's or "
    "Karpenter's own validation, which refuses the object whatever this tool says), or the annotation is not "
    "text. The finding it meant to waive is reported as it is, so this is a warning.",
    f'Write one RULE-ID: REASON per line, e.g. {IGNORE_ANNOTATION}: "policy/imds-hop-limit: CUDA images read the '
    'region from IMDS until PLAT-123"; `karpenter-gitops rules` lists the rule ids.',
    stage=Stage.LOAD,
    origin="ours",
    good=({"metadata": {"annotations": {IGNORE_ANNOTATION: "policy/detailed-monitoring: the node exporter covers it"}}},),
    bad=(
        {"metadata": {"annotations": {IGNORE_ANNOTATION: "policy/detailed-monitoring"}}},
        {"metadata": {"annotations": {IGNORE_ANNOTATION: "policy/detailed-monitorin: typo"}}},
        {"metadata": {"annotations": {IGNORE_ANNOTATION: "cel/ami-alias-format: the API server refuses it"}}},
    ),
)
