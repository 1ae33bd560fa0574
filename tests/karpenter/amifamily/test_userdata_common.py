"""Checks for every family: which family applies, the 16 KiB limit, and folded YAML scalars."""

from __future__ import annotations

import pytest
import yaml

from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import common, problems
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_NODECLASS, merge_patch


@pytest.mark.parametrize(
    ("ami_family", "aliases", "expected"),
    [
        ("Custom", ["al2023@latest"], "Custom"),
        (None, ["al2@v20240807"], "AL2"),
        (None, ["al2023@v20240807"], "AL2023"),
        (None, ["bottlerocket@1.32.0"], "Bottlerocket"),
        (None, ["windows2022@latest"], "Windows2022"),
        ("AL2023", [None], "AL2023"),
        (None, [None], None),
    ],
)
def test_family_is_amifamily_else_the_alias_family(ami_family, aliases, expected):
    assert amifamily.userdata_family(ami_family, aliases) == expected


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (common.NEAR_LIMIT_BYTES - 1, []),
        (common.NEAR_LIMIT_BYTES, [problems.SIZE_NEAR_LIMIT]),
        (common.MAX_BYTES, [problems.SIZE_NEAR_LIMIT]),
        (common.MAX_BYTES + 1, [problems.SIZE]),
    ],
)
def test_size_limit_and_the_90_percent_warning(size, expected):
    assert common.NEAR_LIMIT_BYTES == 14_746  # 90% of 16,384, rounded up
    text = "#" * size
    assert [p.rule for p in amifamily.analyse_userdata(text, None)] == expected


def test_size_counts_encoded_bytes_not_characters():
    assert [p.rule for p in amifamily.analyse_userdata("é" * (common.MAX_BYTES // 2 + 1), None)] == [problems.SIZE]


def _folded(text: str) -> str:
    """What a manifest's `userData: >` hands over after YAML parsing."""
    block = "".join(f"  {line}\n" for line in text.splitlines())
    return yaml.safe_load(f"userData: >\n{block}")["userData"]


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("AL2", "#!/bin/bash\necho hello > /tmp/x\nsysctl -w vm.max_map_count=262144\n"),
        ("AL2", 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n\n#!/bin/bash\n--B--\n'),
        ("Bottlerocket", '[settings.kubernetes]\nallowed-unsafe-sysctls = ["net.core.somaxconn"]\n'),
        ("AL2023", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"),
    ],
    ids=["shell", "mime", "toml", "nodeconfig"],
)
def test_folded_scalar_is_detected_and_hides_the_family_noise(family, text):
    assert amifamily.analyse_userdata(text, family) == ()
    assert [p.rule for p in amifamily.analyse_userdata(_folded(text), family)] == [problems.FOLDED_YAML]


@pytest.mark.parametrize(
    "first_line", ["#!/bin/bash -xe", "#!/bin/bash -x -e", "#!/usr/bin/env bash", "#!/usr/bin/env -S bash -e"]
)
def test_shebangs_with_options_are_not_mistaken_for_folding(first_line):
    assert amifamily.analyse_userdata(f"{first_line}\necho hi\n", "AL2") == ()


def _findings(spec: dict) -> list:
    doc = merge_patch(BASE_NODECLASS, {"spec": spec})
    return [f for f in validate(load_documents([("nc.yaml", [doc])])).findings if f.rule.startswith("userdata/")]


def test_manifest_with_folded_userdata_is_reported_on_spec_userdata():
    manifest = yaml.safe_load("spec:\n  userData: >\n    #!/bin/bash\n    /etc/eks/bootstrap.sh demo\n")
    (finding,) = _findings({"amiSelectorTerms": [{"alias": "al2@v20240807"}], **manifest["spec"]})
    assert (finding.rule, finding.path) == (problems.FOLDED_YAML, "spec.userData")
    assert "userData: |" in finding.hint


def test_objects_without_userdata_produce_no_userdata_findings():
    assert _findings({}) == []
