"""The schema layer's rules: violations observed while loading objects into the typed models.

They mirror the CRD's OpenAPI constraints (types, required fields, enums, patterns, ranges,
sizes) for the chosen Karpenter release, plus unknown fields with a "did you mean" hint.
"""

from karpenter_gitops.core import kinds, typed_schema
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.registry import ALL_KINDS, Stage, rule

_NP = "NodePool"


def _schema_rule(id: str, doc: str, fix: str, good: tuple, bad: tuple, kinds=ALL_KINDS) -> None:
    rule(id, Severity.ERROR, kinds, doc, fix, stage=Stage.LOAD, good=good, bad=bad)


_schema_rule(
    typed_schema.UNKNOWN_FIELD,
    "A field the CRD does not define: the API server prunes it, so the setting silently does nothing.",
    "Fix the spelling (the hint names the closest field) or remove the field.",
    good=({"spec": {"detailedMonitoring": True}},),
    bad=({"spec": {"detailedMonitring": True}}, {"kind": _NP, "spec": {"wieght": 10}}),
)
_schema_rule(
    typed_schema.WRONG_TYPE,
    "A value of the wrong type (e.g. a string where the CRD wants an integer).",
    "Write the value with the type the CRD declares; quote strings, do not quote numbers.",
    good=({"spec": {"metadataOptions": {"httpPutResponseHopLimit": 2}}},),
    bad=({"spec": {"metadataOptions": {"httpPutResponseHopLimit": "two"}}}, {"spec": {"amiSelectorTerms": "x"}}),
)
_schema_rule(
    typed_schema.REQUIRED,
    "A field the CRD requires is missing.",
    "Add the field named in the path.",
    good=({"spec": {"subnetSelectorTerms": [{"id": "subnet-1"}]}},),
    # consolidateAfter: required up to 1.14; 1.15's API server defaults it
    bad=(
        {"spec": {"subnetSelectorTerms": None}},
        {"kind": _NP, "karpenterVersion": "1.14", "spec": {"disruption": {"consolidateAfter": None}}},
    ),
)
_schema_rule(
    typed_schema.ENUM,
    "A value outside the CRD's enum for the chosen Karpenter release (e.g. Balanced before 1.14).",
    "Use one of the supported values, or upgrade Karpenter when the value is newer.",
    good=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},),
    bad=({"spec": {"amiFamily": "Ubuntu", "amiSelectorTerms": [{"id": "ami-123"}]}},),
)
_schema_rule(
    typed_schema.PATTERN,
    "A string that does not match the CRD's pattern (ids, quantities, durations, label keys).",
    "Write the value in the format the message shows, e.g. volumeSize: 100Gi.",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100GiB"}}]}},),
)
_schema_rule(
    typed_schema.RANGE,
    "A number outside the CRD's minimum/maximum.",
    "Use a value inside the range the message names.",
    good=({"kind": _NP, "spec": {"weight": 100}},),
    bad=({"kind": _NP, "spec": {"weight": 101}}, {"spec": {"metadataOptions": {"httpPutResponseHopLimit": 0}}}),
)
_schema_rule(
    typed_schema.SIZE,
    "Too many or too few list items or map entries, or a string that is too long.",
    "Stay within the CRD's limits (e.g. at most 30 selector terms, alias at most 30 characters).",
    good=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0-aaaaaaaaaaaaaaa"}]}},),
)
_schema_rule(
    typed_schema.UNIQUE,
    "A value repeated in a list the CRD declares a set (x-kubernetes-list-type: set).",
    "List each value once.",
    good=({"kind": _NP, "spec": {"disruption": {"budgets": [{"nodes": "0", "reasons": ["Empty", "Drifted"]}]}}},),
    bad=({"kind": _NP, "spec": {"disruption": {"budgets": [{"nodes": "0", "reasons": ["Empty", "Empty"]}]}}},),
    kinds={_NP},
)
rule(
    typed_schema.SECRET,
    Severity.INFO,
    ALL_KINDS,
    "A value stored as a Pulumi secret ({secure: ...}): it cannot be read offline, so the rules that "
    "need it run at `pulumi preview` (the dynamic provider's check sees the decrypted value).",
    "Nothing to fix; run the Pulumi preview to check the value.",
    stage=Stage.LOAD,
    good=({"spec": {"userData": "#!/bin/bash\necho hi\n"}},),
    bad=({"spec": {"userData": {"secure": "v1:AAAA"}}},),
)
_schema_rule(
    typed_schema.NEWER_FIELD,
    "A field the chosen Karpenter release does not know yet; its API server drops it silently.",
    "Upgrade Karpenter to the release the message names, or remove the field.",
    good=({"spec": {"amiSelectorTerms": [{"ssmParameter": "/my/ami"}], "amiFamily": "AL2023"}},),
    bad=({"karpenterVersion": "1.3", "spec": {"amiSelectorTerms": [{"ssmParameter": "/my/ami"}], "amiFamily": "AL2023"}},),
)
_schema_rule(
    typed_schema.DUPLICATE,
    "Two objects of the same kind share a name; the later one would overwrite the earlier.",
    "Give each object a unique metadata.name.",
    good=({"metadata": {"name": "default"}},),
    bad=({"duplicate": True},),
)
_schema_rule(
    typed_schema.API_VERSION,
    "An EC2NodeClass or NodePool with an apiVersion the release does not serve (v1beta1 from Karpenter 1.1).",
    "Migrate the object to karpenter.k8s.aws/v1 or karpenter.sh/v1.",
    good=({"apiVersion": "karpenter.k8s.aws/v1"},),
    bad=({"apiVersion": "karpenter.k8s.aws/v1beta1"}, {"apiVersion": "karpenter.k8s.aws/v1alpha5"}),
)
CONVERTED_API_VERSION = "schema/converted-api-version"
rule(
    CONVERTED_API_VERSION,
    Severity.WARNING,
    ("EC2NodeClass", _NP),
    "A v1beta1 EC2NodeClass or NodePool under Karpenter 1.0, whose CRDs still serve v1beta1 beside v1 and convert "
    "between them: the API server takes it, but 1.1 no longer serves v1beta1. karpenter-gitops models the v1 "
    "schema only, so the object's content is not checked; the warning says so rather than judge it as v1.",
    "Migrate the object to v1 before upgrading to 1.1 (the hint lists the main field moves), then validate it.",
    stage=Stage.LOAD,
    origin="ours",
    until=kinds.CONVERTED_UNTIL,
    good=({"karpenterVersion": "1.0", "apiVersion": "karpenter.k8s.aws/v1"},),
    bad=(
        {"karpenterVersion": "1.0", "apiVersion": "karpenter.k8s.aws/v1beta1"},
        {"karpenterVersion": "1.0", "kind": _NP, "apiVersion": "karpenter.sh/v1beta1"},
    ),
)
_schema_rule(
    typed_schema.UNSERVED_KIND,
    "A document in Karpenter's API groups (karpenter.sh, karpenter.k8s.aws) of a kind the release does not serve: "
    "a misspelt kind, or a pre-v1 object (v1alpha5 Provisioner, v1alpha1 AWSNodeTemplate). The API server refuses "
    "it, so nothing it says reaches Karpenter.",
    "Fix the kind's spelling (the hint names the closest served kind), or migrate the object to the v1 API as the "
    "hint and Karpenter's v1 migration guide say.",
    good=({"kind": "EC2NodeClass"}, {"kind": _NP}),
    bad=(
        {"kind": "EC2NodeClas"},
        {"kind": "Nodepool", "apiVersion": "karpenter.sh/v1"},
        {"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner"},
        {"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate"},
    ),
)
