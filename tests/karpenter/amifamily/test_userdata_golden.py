"""Karpenter's own userData fixtures (v1.14.1 testdata): what Karpenter accepts, we accept."""

from __future__ import annotations

import pytest
from support.upstream import userdata

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import bootstrap, mime, nodeconfig, problems, taints, toml_settings
from karpenter_gitops.rules import registry

FAMILIES = {"al2": "AL2", "al2023": "AL2023", "br": "Bottlerocket", "windows": "Windows2022"}
INPUTS = sorted(userdata().glob("*_input.golden"))
GENERATED = sorted(userdata().glob("*_merged.golden")) + sorted(userdata().glob("*_unmerged.golden"))


def _family(path) -> str:
    return FAMILIES[path.name.split("_")[0]]


def _severity(problem) -> Severity:
    return registry.RULES[problem.rule].severity


def test_fixtures_are_present():
    """Guards the parametrized tests below against silently running over nothing."""
    assert len(INPUTS) == 8 and {_family(p) for p in INPUTS} == set(FAMILIES.values())


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_golden_input_has_no_error_for_its_family(path):
    found = amifamily.analyse_userdata(path.read_text(), _family(path))
    assert [p for p in found if _severity(p) is Severity.ERROR] == []


def test_bottlerocket_golden_warns_about_what_karpenter_drops_or_replaces():
    """The fixture carries an unknown key, a `labels` table and node-taints, which the merged output lacks,
    and the cluster's name, endpoint, CA and max-pods, which it replaces with Karpenter's."""
    found = amifamily.analyse_userdata((userdata() / "br_userdata_input.golden").read_text(), "Bottlerocket")
    assert sorted(p.rule for p in found) == [
        problems.BOTTLEROCKET_NODE_TAINTS,
        *[problems.BOTTLEROCKET_OVERRIDDEN_SETTING] * 4,
        problems.BOTTLEROCKET_UNKNOWN_SETTING,
        problems.BOTTLEROCKET_UNKNOWN_SETTING,
    ]
    replaced = sorted(p.message.split()[0] for p in found if p.rule == problems.BOTTLEROCKET_OVERRIDDEN_SETTING)
    assert replaced == [f"settings.kubernetes.{key}" for key in ("api-server", "cluster-certificate", "cluster-name", "max-pods")]
    assert "settings.kubernetes.labels" in " ".join(p.message for p in found)


def test_mime_golden_ending_on_a_bare_delimiter_is_read_like_go_does():
    """al2023_mime ends with `--//` and no `--//--`; Go's reader stops there, so two parts and no problem."""
    archive = mime.read((userdata() / "al2023_mime_userdata_input.golden").read_text())
    assert archive.problems == ()
    assert [p.content_type for p in archive.parts] == [mime.NODECONFIG, "text/x-shellscript"]


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.name)
def test_karpenter_generated_userdata_passes_as_custom(path):
    """What Karpenter writes for each family registers correctly, so it must pass our Custom checks."""
    assert amifamily.analyse_userdata(path.read_text(), "Custom") == ()


def test_karpenter_al2_bootstrap_line_tokenises_to_its_kubelet_flags():
    """The two rounds of unquoting on Karpenter's own bootstrap.sh line yield exactly its kubelet flags."""
    script = mime.read((userdata() / "al2_userdata_merged.golden").read_text()).parts[-1].body
    (call,) = bootstrap.invocations(script)
    assert call.problems == ()
    assert call.head[:2] == ("/etc/eks/bootstrap.sh", "test-cluster")
    assert call.kubelet_args[1:] == ("--register-with-taints=karpenter.sh/unregistered:NoExecute", "--max-pods=110")
    assert call.kubelet_args[0].startswith("--node-labels=karpenter.k8s.aws/ec2nodeclass=%s,")
    assert call.taints == (taints.REGISTRATION,)


def test_karpenter_nodeconfig_and_bottlerocket_taints_are_found():
    part = mime.read((userdata() / "al2023_userdata_unmerged.golden").read_text()).parts[0]
    (document,) = nodeconfig.node_configs(part).documents
    assert nodeconfig.taints_of(document) == ((taints.REGISTRATION,), [])
    settings = toml_settings.load((userdata() / "br_userdata_unmerged.golden").read_text())
    assert taints.REGISTRATION in toml_settings.node_taints(settings)
