"""A team's own Pulumi project (named ``team-infra``, in a temporary directory outside the tree), run by the
real CLI against the embedded AWS and a real API server: a secret stays secret in ``pulumi stack export``
whichever way the program hands it to the components, and a change that ``up`` would refuse fails the preview
with the same line.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import PROJECT, scratch_project
from support.pulumi_cli import PulumiProject, stack_text

pytestmark = pytest.mark.real

SECRET = "token-5e1d7c-never-in-plaintext"
USER_DATA = f"#!/bin/bash\necho 'registry-token={SECRET}' > /etc/registry.conf\n"
# The team's programs, one per way a secret reaches the components. The stack file's class and pool are
# plain; each form sets the secret its own way (SECRET_CONFIG).
PROGRAMS = {
    "a secret karpenter-gitops key read with require_object into Fleet": """
import pulumi
from karpenter_gitops_pulumi import Fleet, FleetArgs

settings = pulumi.Config("karpenter-gitops")
Fleet("team", FleetArgs(nodeClasses=settings.require_object("nodeClasses"), nodePools=settings.require_object("nodePools")))
""",
    "a whole spec read with require_secret_object": """
import pulumi
from karpenter_gitops_pulumi import NodeClass, NodeClassArgs, NodePool

settings = pulumi.Config("karpenter-gitops")
node_class = NodeClass("%(name)s", NodeClassArgs(spec=pulumi.Config().require_secret_object("nodeClass")))
for pool, spec in settings.require_object("nodePools").items():
    NodePool(pool, {"spec": spec, "nodeClass": node_class})
""",
    "a secret Output inside a spec": """
import pulumi
from karpenter_gitops_pulumi import NodeClass, NodeClassArgs, NodePool

settings = pulumi.Config("karpenter-gitops")
spec = {**settings.require_object("nodeClasses")["%(name)s"], "userData": pulumi.Config().require_secret("userData")}
node_class = NodeClass("%(name)s", NodeClassArgs(spec=spec))
for pool, spec in settings.require_object("nodePools").items():
    NodePool(pool, {"spec": spec, "nodeClass": node_class})
""",
}
NAMES = dict(zip(PROGRAMS, ("secret-fleet", "secret-object", "secret-output"), strict=True))


def team_project(directory, name: str, program: str, pulumi_cli, api_server) -> PulumiProject:
    """The team's project: its own name, its program, one stack (``e2e``) of class ``name`` and its pool."""
    directory.mkdir()
    scratch_project(directory, "e2e", stack_text(name))
    pulumi_yaml = directory / "Pulumi.yaml"
    pulumi_yaml.write_text(pulumi_yaml.read_text().replace("name: karpenter-gitops", "name: team-infra"))
    (directory / "__main__.py").write_text(program % {"name": name})
    return PulumiProject.create(directory, "e2e", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)


def set_the_secret(team: PulumiProject, form: str, name: str) -> None:
    if form.startswith("a secret karpenter-gitops key"):
        team.run("config", "set", "--secret", "--path", f"karpenter-gitops:nodeClasses.{name}.userData", USER_DATA)
    elif form.startswith("a whole spec"):
        plain = json.loads(team.run("config", "get", "--path", f"karpenter-gitops:nodeClasses.{name}").stdout)
        team.run("config", "set", "--secret", "team-infra:nodeClass", json.dumps(plain | {"userData": USER_DATA}))
    else:
        team.run("config", "set", "--secret", "team-infra:userData", USER_DATA)


@pytest.mark.parametrize("form", PROGRAMS, ids=list(NAMES.values()))
def test_the_secret_stays_out_of_the_state_whichever_way_it_arrives(
    form, tmp_path, api_server, pulumi_cli, kubernetes_provider, default_aws
):
    name = NAMES[form]
    team = team_project(tmp_path / "team-infra", name, PROGRAMS[form], pulumi_cli, api_server)
    set_the_secret(team, form, name)
    shown = [team.run("preview", "--diff"), team.up(), team.run("stack", "output", "--json")]
    try:
        assert SECRET not in team.run("stack", "export").stdout
        assert SECRET in team.run("stack", "export", "--show-secrets").stdout  # it is there, encrypted
        for result in shown:
            assert "Traceback" not in result.stderr and SECRET not in result.stdout + result.stderr
    finally:
        team.run("destroy", "--yes", "--skip-preview", check=False)


# Only the payments pipeline's newest build (still pending) matches: the class would have no image.
PENDING_ONLY = "amiFamily: AL2023\n      amiSelectorTerms: [{name: payments-node-2025-02-10}]"
WHY = re.compile(r"error: \S*ReconciliationError: (EC2NodeClass pending: [^\n]*)")


def test_a_change_up_would_refuse_fails_the_preview_with_the_same_line(
    tmp_path, api_server, pulumi_cli, kubernetes_provider, default_aws
):
    directory = tmp_path / "team-infra"
    team = team_project(directory, "pending", (PROJECT / "__main__.py").read_text(), pulumi_cli, api_server)
    team.up()
    try:
        stack_file = directory / "stacks" / "Pulumi.e2e.yaml"
        stack_file.write_text(stack_file.read_text().replace("amiSelectorTerms: [{alias: al2023@latest}]", PENDING_ONLY))
        preview = team.run("preview", check=False)
        up = team.up(check=False)
        assert preview.returncode != 0 and up.returncode != 0, preview.stdout[-3000:]
        at_preview, at_up = WHY.search(preview.stdout + preview.stderr), WHY.search(up.stdout + up.stderr)
        assert at_preview and at_up, preview.stdout[-3000:] + up.stdout[-3000:]
        assert at_preview.group(1) == at_up.group(1)
        assert "only unusable images match: ami-0c9a000000000f005 (state is pending" in at_preview.group(1)
        assert "Traceback" not in preview.stdout + preview.stderr
    finally:
        team.run("destroy", "--yes", "--skip-preview", check=False)
