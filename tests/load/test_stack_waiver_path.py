"""A stack's ``karpenter-gitops:waivers`` as the path of a waiver file, read by ``validate --stack`` as the pack reads it."""

from __future__ import annotations

import pytest

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import files, waiver_files

WAIVER = "waivers: [{rule: policy/no-public-ip, object: bastion, reason: jump host, expires: 2999-01-01}]\n"


def test_a_relative_path_is_the_projects_whichever_directory_holds_the_stack_file(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: team-infra\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "waivers.yaml").write_text(WAIVER)
    (waiver,) = waiver_files.from_stack("policies/waivers.yaml", str(tmp_path / "stacks" / "Pulumi.dev.yaml"))
    assert (waiver.rule, waiver.object) == ("policy/no-public-ip", "bastion")


def test_a_named_file_that_is_missing_is_refused_and_entries_are_read_as_before(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: team-infra\n")
    with pytest.raises(InputError, match=r"karpenter-gitops:waivers: the waiver file '.*policies/waivers.yml' does not exist"):
        waiver_files.from_stack("policies/waivers.yml", str(tmp_path / "Pulumi.dev.yaml"))
    entries = [{"rule": "policy/no-public-ip", "object": "x", "reason": "r", "expires": "2999-01-01"}]
    assert [w.object for w in waiver_files.from_stack(entries, str(tmp_path / "Pulumi.dev.yaml"))] == ["x"]


def test_the_project_is_the_nearest_directory_holding_pulumi_yaml(tmp_path):
    project = tmp_path / "team-infra"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: team-infra\n")
    assert files.enclosing_project(project / "stacks") == project
    assert files.enclosing_project(project) == project
    assert files.enclosing_project(tmp_path) is None
