"""The components as the Pulumi package ``karpenter-gitops``, driven from a Pulumi YAML program through the
real CLI: the real engine, the YAML language host ``make tools`` builds, the plugin of the wheel ``make dist``
builds serving the components, the dynamic-provider host running the reconciliation with the user's
virtualenv, and the real Kubernetes provider applying the objects to the real API server, with the
embedded AWS.

The program is a user's in a temporary directory, set up as docs/guides/pulumi-languages.md says: the
wheel in a virtualenv whose bin/ comes first on PATH, the package named by ``packages:`` (the plugin's
folder) or by ``pulumi package add``. What the API server stores is held against what the same inputs
store through a Python program. The objects are cluster-scoped and the API server is shared, so each
program names its objects with a prefix of its own.
"""

from __future__ import annotations

import configparser
import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT, install_wheel
from support import real_tools
from support.api_server import live
from support.pulumi_cli import PulumiProject

pytestmark = pytest.mark.real

CLUSTER = {"name": "demo", "kubernetesVersion": "1.32", "karpenterVersion": "1.14", "featureGates": {"NodeOverlay": True}}


def node_class_spec(**changes) -> dict:
    return {
        "amiSelectorTerms": [{"alias": "al2023@v20250201"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        **changes,
    }


def pool_spec(category: str, weight: int) -> dict:
    return {
        "template": {
            "spec": {
                "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": [category]},
                ]
            }
        },
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m"},
        "limits": {"cpu": 100},
        "weight": weight,
    }


POOLS = {"general": pool_spec("m", 10), "compute": pool_spec("c", 20)}
OVERLAY = {
    "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c7i"]}],
    "priceAdjustment": "-10%",
    "weight": 10,
}


def yaml_program(prefix: str, class_spec: dict, packages: dict) -> str:
    """A user's Pulumi YAML program: one class, its two pools, an overlay (JSON values are YAML too)."""
    resources = {
        f"{prefix}class": {
            "type": "karpenter-gitops:index:NodeClass",
            "properties": {
                "spec": class_spec,
                "cluster": CLUSTER,
                "nodePools": {f"{prefix}{pool}": spec for pool, spec in POOLS.items()},
            },
        },
        **{
            f"{prefix}{pool}": {
                "type": "karpenter-gitops:index:NodePool",
                "properties": {"nodeClass": f"${{{prefix}class}}", "spec": spec},
            }
            for pool, spec in POOLS.items()
        },
        f"{prefix}overlay": {
            "type": "karpenter-gitops:index:NodeOverlay",
            "properties": {"spec": OVERLAY, "cluster": CLUSTER},
        },
    }
    project = {
        "name": "yaml-fleet",
        "runtime": "yaml",
        **({"packages": packages} if packages else {}),
        "resources": resources,
        "outputs": {
            "amiIds": f"${{{prefix}class.amiIds}}",
            "conditions": f"${{{prefix}class.conditions}}",
            "generalTypes": f"${{{prefix}general.instanceTypes}}",
        },
    }
    return yaml.safe_dump(json.loads(json.dumps(project)), sort_keys=False)  # copies: no YAML aliases, which Pulumi YAML refuses


PYTHON_PROGRAM = """
from karpenter_gitops_pulumi import NodeClass, NodeClassArgs, NodeOverlay, NodeOverlayArgs, NodePool, NodePoolArgs

prefix, class_spec, pools, overlay, cluster = %(inputs)s
cluster = {
    "name": cluster["name"], "kubernetes_version": cluster["kubernetesVersion"],
    "karpenter_version": cluster["karpenterVersion"], "feature_gates": cluster["featureGates"],
}
node_class = NodeClass(
    f"{prefix}class", NodeClassArgs(spec=class_spec, cluster=cluster, node_pools={prefix + p: s for p, s in pools.items()})
)
for pool, spec in pools.items():
    NodePool(prefix + pool, NodePoolArgs(spec=spec, node_class=node_class))
NodeOverlay(f"{prefix}overlay", NodeOverlayArgs(spec=overlay, cluster=cluster))
"""


@pytest.fixture(scope="module")
def user_venv(wheel, tmp_path_factory) -> Path:
    """A user's virtualenv with the wheel ``make dist`` builds, and the console scripts its metadata declares
    written into its bin/ as pip writes them (the test installs by unpacking, offline)."""
    venv, site = install_wheel(wheel, tmp_path_factory.mktemp("user") / "venv")
    (metadata,) = site.glob("karpenter_gitops-*.dist-info")
    entry_points = configparser.ConfigParser()
    entry_points.read(metadata / "entry_points.txt")
    for name, target in entry_points["console_scripts"].items():
        module, function = target.split(":")
        script = venv / "bin" / name
        script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n")
        script.chmod(0o755)
    return venv


@pytest.fixture
def plugin(user_venv) -> Path:
    """``pulumi-resource-karpenter-gitops`` as the wheel installs it."""
    return user_venv / "bin" / "pulumi-resource-karpenter-gitops"


def as_a_user(stack: PulumiProject, venv: Path) -> PulumiProject:
    """The user's virtualenv first on PATH, as the guide says (its ``python3`` runs the reconciliation), and
    none of this checkout on the Python path: the plugin and the reconciliation run the wheel's code."""
    stack.environment["PATH"] = os.pathsep.join([str(venv / "bin"), stack.environment["PATH"]])
    stack.environment["PYTHONPATH"] = ""
    return stack


@pytest.fixture
def yaml_host():
    return real_tools.binary("pulumi-language-yaml")


@pytest.fixture
def yaml_project(tmp_path, api_server, pulumi_cli, kubernetes_provider, yaml_host, default_aws, plugin, user_venv):
    """A YAML project naming the package in its ``packages:`` (the plugin's folder), or, ``added``, through
    ``pulumi package add`` of the plugin on PATH (which records the name and version the plugin reports)."""

    def make(prefix: str, class_spec: dict, added: bool = False) -> PulumiProject:
        directory = tmp_path / prefix
        directory.mkdir()
        packages = {} if added else {"karpenter-gitops": str(plugin.parent)}
        (directory / "Pulumi.yaml").write_text(yaml_program(prefix, class_spec, packages))
        stack = as_a_user(PulumiProject.create(directory, "dev", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig), user_venv)
        if added:
            stack.run("package", "add", str(plugin))
            assert yaml.safe_load((directory / "Pulumi.yaml").read_text())["packages"] == {
                "karpenter-gitops": "karpenter-gitops@0.1.0"
            }
        stack.run("config", "set", "aws:region", "us-west-2")
        return stack

    return make


def python_project(tmp_path, pulumi_cli, api_server, prefix: str) -> PulumiProject:
    directory = tmp_path / prefix
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text(
        f"name: python-fleet\nruntime:\n  name: python\n  options:\n    virtualenv: {PROJECT / '.venv'}\n"
    )
    (directory / "__main__.py").write_text(
        PYTHON_PROGRAM % {"inputs": repr((prefix, node_class_spec(), POOLS, OVERLAY, CLUSTER))}
    )
    stack = PulumiProject.create(directory, "dev", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)
    stack.run("config", "set", "aws:region", "us-west-2")
    return stack


STORED = (("ec2nodeclasses", "class"), ("nodepools", "general"), ("nodepools", "compute"), ("nodeoverlays", "overlay"))


def stored_specs(api_server, prefix: str) -> dict[str, dict]:
    """The specs the API server holds for a program's objects, its prefix taken out of every name."""
    specs = {}
    for plural, name in STORED:
        stored = live(api_server, plural, prefix + name)
        assert stored is not None, f"{plural}/{prefix}{name} is not stored"
        specs[f"{plural}/{name}"] = json.loads(json.dumps(stored["spec"]).replace(f'"{prefix}class"', '"class"'))
    return specs


def test_a_yaml_program_previews_and_updates_and_the_cluster_stores_what_python_stores(
    yaml_project, tmp_path, pulumi_cli, api_server
):
    stack = yaml_project("yaml-", node_class_spec())
    preview = stack.run("preview")
    assert "karpenter-gitops:index:NodeClass" in preview.stdout and "karpenter-gitops:index:NodePool" in preview.stdout
    stack.up()
    outputs = stack.outputs()
    assert outputs["amiIds"] and all(ami.startswith("ami-") for ami in outputs["amiIds"])
    assert outputs["generalTypes"] and all(ami in outputs["amiIds"] for ami in outputs["generalTypes"].values())
    assert {c["type"] for c in outputs["conditions"]} >= {"AMIsReady", "Ready"}

    python = python_project(tmp_path, pulumi_cli, api_server, "py-")
    python.up()
    assert stored_specs(api_server, "yaml-") == stored_specs(api_server, "py-")
    assert live(api_server, "nodepools", "yaml-general")["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "yaml-class"

    stack.run("preview", "--expect-no-changes")
    stack.run("destroy", "--yes")
    python.run("destroy", "--yes")
    assert live(api_server, "ec2nodeclasses", "yaml-class") is None and live(api_server, "nodepools", "yaml-general") is None


def test_a_broken_class_fails_the_yaml_preview_with_its_rule_id_and_field_path(yaml_project, api_server):
    profile = "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile"
    broken = node_class_spec(instanceProfile=profile)
    del broken["role"]
    stack = yaml_project("broken-yaml-", broken, added=True)
    refused = stack.run("preview", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "[nodeclass/instance-profile-arn]" in output and "instanceProfile must be a name, not an ARN" in output, output[-3000:]
    assert "spec.instanceProfile" in output
    assert "Traceback" not in output and 'File "' not in output, output[-3000:]
    assert live(api_server, "ec2nodeclasses", "broken-yaml-class") is None


def test_the_guides_yaml_program_previews_as_written(
    tmp_path, api_server, pulumi_cli, kubernetes_provider, yaml_host, default_aws, plugin, user_venv
):
    """The Pulumi YAML program docs/guides/pulumi-languages.md shows, run as a reader would copy it
    (only ``packages:`` points at this plugin's folder); a preview applies nothing to the shared API server."""
    guide = (PROJECT / "docs" / "guides" / "pulumi-languages.md").read_text()
    program = yaml.safe_load(guide.split("## Pulumi YAML", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0])
    assert program["packages"] == {"karpenter-gitops": "karpenter-gitops@0.1.0"}
    program["packages"] = {"karpenter-gitops": str(plugin.parent)}
    directory = tmp_path / "guide"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    stack = as_a_user(PulumiProject.create(directory, "dev", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig), user_venv)
    stack.run("config", "set", "aws:region", "us-west-2")
    preview = stack.preview()
    created = {step["urn"].split("::")[2].rsplit("$", 1)[-1] for step in preview["steps"] if step["op"] == "create"}
    kinds = ("NodeClass", "NodePool", "NodeOverlay")
    assert {f"karpenter-gitops:index:{kind}" for kind in kinds} <= created, created
    assert {"kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"} <= created, created


def test_a_component_refused_when_built_is_the_python_line_on_its_field(
    tmp_path, api_server, pulumi_cli, kubernetes_provider, yaml_host, default_aws, plugin, user_venv
):
    """A refusal raised while the provider builds a component (here a NodeOverlay judged alone) reaches the
    CLI as an error of the input it names, with the Python program's line as its reason, without a trace."""
    broken = {"requirements": [], "price": "1.2", "priceAdjustment": "-10%"}
    program = {
        "name": "refused",
        "runtime": "yaml",
        "packages": {"karpenter-gitops": str(plugin.parent)},
        "resources": {
            "refused-overlay": {"type": "karpenter-gitops:index:NodeOverlay", "properties": {"spec": broken, "cluster": CLUSTER}}
        },
    }
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump(program))
    stack = as_a_user(PulumiProject.create(tmp_path, "dev", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig), user_venv)
    refused = stack.run("preview", check=False)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "property spec with value" in output and (
        "NodeOverlay refused-overlay: spec: cannot set both 'price' and 'priceAdjustment' [cel/overlay-price-exclusive]" in output
    ), output[-3000:]
    assert "Traceback" not in output and 'File "' not in output, output[-3000:]
