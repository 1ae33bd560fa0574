"""Blocking structural errors stop the CEL rules on both sides, as in the API server: with a wrong type,
a missing required field, a value outside an enum, too long or too many, the real CRD evaluates no
CEL rule and we run none of the rules that mirror it (the other rules still run where the fields they
read are well-formed, so one push shows every mistake: tests/judge/test_reads.py); with only a
non-blocking error (a pattern), the CEL rules still run on both sides."""

from __future__ import annotations

import pytest
from support.crd_helpers import crd_errors, our_findings
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.core import versions
from karpenter_gitops.rules import crd

RELEASE = "v1.14.1"
VERSION = versions.parse(RELEASE)
# Both role and instanceProfile: a CEL rule of the CRD ("must specify exactly one of ..."), ours too.
BOTH_IDENTITIES = {"role": "KarpenterNodeRole-demo", "instanceProfile": "KarpenterNodeProfile"}

BLOCKING = [
    node_class({"spec": {**BOTH_IDENTITIES, "metadataOptions": {"httpPutResponseHopLimit": "two"}}}),  # type
    node_class({"spec": {**BOTH_IDENTITIES, "amiFamily": "Ubuntu"}}),  # enum
    node_class({"spec": {**BOTH_IDENTITIES, "subnetSelectorTerms": [{"tags": {"a": str(i)}} for i in range(31)]}}),  # maxItems
    node_class({"spec": {**BOTH_IDENTITIES, "amiSelectorTerms": [{"alias": "al2023@v20240807" + "0" * 20}]}}),  # maxLength
    node_class({"spec": {**BOTH_IDENTITIES, "subnetSelectorTerms": None}}),  # required
    node_pool(
        {
            "spec": {
                "weight": "ten",
                "template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []}]}},
            }
        }
    ),  # type, next to a CEL rule
]


@pytest.mark.parametrize("doc", BLOCKING, ids=range(len(BLOCKING)))
def test_a_blocking_error_stops_cel_there_and_the_mirroring_rules_here(doc):
    theirs = crd_errors(doc, RELEASE)
    assert theirs and not [f for f in theirs if f.rule == crd.CEL], theirs
    ours = our_findings(doc, VERSION)
    mirrored = [f for f in ours if f.layer == "api-server"]
    assert mirrored and all(f.rule.startswith("schema/") for f in mirrored), [(f.rule, f.path) for f in ours]


def test_a_non_blocking_error_leaves_the_rules_running_on_both_sides():
    doc = node_class(
        {"spec": {**BOTH_IDENTITIES, "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100GiB"}}]}}
    )  # pattern: not blocking
    assert [f for f in crd_errors(doc, RELEASE) if f.rule == crd.CEL]
    assert [f for f in our_findings(doc, VERSION) if not f.rule.startswith("schema/")]
