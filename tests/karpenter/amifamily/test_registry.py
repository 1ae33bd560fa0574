"""The family registry: one module per family, one list, and the CRD's amiFamily enum kept equal to it."""

from __future__ import annotations

import pytest

from karpenter_gitops.core.model import AMI_FAMILIES
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.karpenter import amifamily


def test_the_registry_is_the_crds_amifamily_enum_in_its_order():
    assert {f.name: f.since for f in amifamily.FAMILIES} == dict(AMI_FAMILIES)
    assert [f.name for f in amifamily.FAMILIES] == list(AMI_FAMILIES)


@pytest.mark.parametrize("family", amifamily.FAMILIES, ids=lambda f: f.name)
def test_each_family_answers_the_protocol(family):
    assert amifamily.by_name(family.name) is family
    if family.alias is None:
        assert family.parameters is None and family.version_example is None
        return
    assert amifamily.of_alias(family.alias) is family and family.parameters is not None
    if family.version_format is None:  # Windows: only "latest"
        assert family.version_example is None
        with pytest.raises(amifamily.AliasError, match="only specify version 'latest'"):
            amifamily.parse_alias(f"{family.alias}@v1")
    else:
        pinned = amifamily.parse_alias(family.version_example)
        assert family.version_format.match(pinned.version)
        assert amifamily.alias_parameters(pinned, Kubernetes(1, 32)), "a pinned alias reads at least one SSM parameter"


def test_alias_families_follow_the_release_that_added_them():
    assert "windows2025" not in amifamily.alias_families((1, 8))
    assert list(amifamily.alias_families((1, 14))) == [f.alias for f in amifamily.FAMILIES if f.alias]


@pytest.mark.parametrize(
    ("alias", "kubernetes", "karpenter", "refused"),
    [
        ("al2@latest", "1.33", (1, 6), True),
        ("al2@latest", "1.33", (1, 5), False),
        ("al2@latest", "1.32", (1, 14), False),
        ("windows2025@latest", "1.34", (1, 14), True),
        ("windows2025@latest", "1.35", (1, 14), False),
    ],
)
def test_version_gates_are_the_familys_own(alias, kubernetes, karpenter, refused):
    parsed = amifamily.parse_alias(alias)
    if refused:
        with pytest.raises(amifamily.UnsupportedAlias):
            amifamily.alias_parameters(parsed, Kubernetes.parse(kubernetes), karpenter)
    else:
        assert amifamily.alias_parameters(parsed, Kubernetes.parse(kubernetes), karpenter)


def test_a_class_is_judged_by_its_amifamily_else_its_alias_else_custom():
    from karpenter_gitops.load.into_inputs import load_documents
    from karpenter_gitops.rules.examples import BASE_NODECLASS, merge_patch

    def family(spec):
        (node_class,) = load_documents([("x.yaml", [merge_patch(BASE_NODECLASS, {"spec": spec})])]).node_classes
        return amifamily.family_of(node_class).name

    assert family({}) == "AL2023"
    assert family({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"id": "ami-1"}]}) == "Bottlerocket"
    assert family({"amiSelectorTerms": [{"id": "ami-1"}]}) == "Custom"
