"""Which image each instance type launches with: plan's map against Karpenter's own resolver.

The mapping this project was founded on (an alias or selector resolving to x86/arm × standard/GPU/
Neuron images) is asked of the karpenter-oracle of each release built whole: the instance types EC2
describes, built by that release's resolver for the class (their requirements: architecture, GPU and
accelerator counts, OS), mapped onto the class's images by amifamily's ``MapToInstanceTypes`` (each
type takes the first image, newest first, whose requirements it meets). The images are the ones plan
resolved (which images Karpenter keeps, and in what order, is compared in test_ami_worlds.py and
against the controller): so a difference here is the mapping's alone. Every instance type plan lists
for a NodePool must launch with the image Karpenter gives it; a type plan leaves unserved has none.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import support.oracle
import yaml
from conftest import PROJECT
from support.karpenter_worlds import generated_world

from karpenter_gitops.adapters.aws.embedded import embedded_aws
from karpenter_gitops.adapters.aws.embedded_world import load_world, parse_world
from karpenter_gitops.core import versions

pytestmark = pytest.mark.real
RELEASES = [pytest.param(release, id=versions.show(release)) for release in support.oracle.PROVIDER_RELEASES]


def _plan(directory: Path, aws, release: versions.Release, cache: Path) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "karpenter_gitops",
            "plan",
            "--manifests",
            str(directory),
            "--format",
            "json",
            "--kubernetes-version",
            str(aws.world.kubernetes),
            "--karpenter-version",
            versions.show(release),
            "--cache-dir",
            str(cache),
        ],
        env={**os.environ, **aws.environment},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _described(aws) -> list[dict]:
    """DescribeInstanceTypes as Karpenter reads it at start-up, from the same embedded AWS as plan."""
    return aws.session().paginate("ec2", "DescribeInstanceTypes", "InstanceTypes")


def differences(documents: list[dict], world, embedded_server, release, tmp_path: Path) -> tuple[dict[str, dict], int]:
    """Per NodePool, the instance types whose image differs: type → (plan's, Karpenter's); and how many
    (pool, instance type) pairs were compared."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "objects.yaml").write_text(yaml.safe_dump_all(documents))
    classes = {d["metadata"]["name"]: d for d in documents if d["kind"] == "EC2NodeClass"}
    oracle = support.oracle.oracle(release)
    with embedded_aws(world, server=embedded_server) as aws:
        plan = _plan(manifests, aws, release, tmp_path / "cache")
        described = json.loads(json.dumps(_described(aws), default=str))
    found: dict[str, dict] = {}
    compared = 0
    for pool, predicted in plan["nodePools"].items():
        class_name = predicted["nodeClass"]
        amis = plan["nodeClasses"].get(class_name, {}).get("amis")
        if not amis or not predicted.get("instanceTypes"):
            continue
        theirs = oracle.image_map(classes[class_name], described, amis=amis)["instanceTypes"]
        ours = {**predicted["instanceTypes"], **dict.fromkeys(t["type"] for t in predicted["unservedInstanceTypes"])}
        differing = {name: (image, theirs.get(name)) for name, image in ours.items() if theirs.get(name) != image}
        compared += len(ours)
        if differing:
            found[pool] = differing
    return found, compared


def _examples() -> list[dict]:
    return [
        d
        for path in sorted((PROJECT / "examples" / "manifests").glob("*.yaml"))
        for d in yaml.safe_load_all(path.read_text())
        if d
    ]


@pytest.mark.parametrize("release", RELEASES)
def test_the_examples_launch_the_images_karpenter_gives_them(release, embedded_server, tmp_path):
    found, compared = differences(_examples(), load_world(None), embedded_server, release, tmp_path)
    assert (found, compared > 100) == ({}, True), compared


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("seed", range(1, 7))
def test_generated_worlds_launch_the_images_karpenter_gives_them(seed, release, embedded_server, tmp_path):
    text, documents = generated_world(seed)
    found, compared = differences(documents, parse_world(text, f"<generated world {seed}>"), embedded_server, release, tmp_path)
    assert (found, compared >= 6) == ({}, True), compared


@pytest.mark.parametrize("release", RELEASES)
def test_an_alias_resolves_and_maps_every_variant_by_karpenters_code(release, embedded_server):
    """The whole chain on Karpenter's side (SSM → images → status.amis → instance types): AL2023's five
    variants each launch the instance types of their architecture and accelerator."""
    variants = {
        ("x86_64", "standard"): "m5.large",
        ("arm64", "standard"): "m7g.large",
        ("x86_64", "nvidia"): "g5.xlarge",
        ("arm64", "nvidia"): "g5g.xlarge",
        ("x86_64", "neuron"): "inf2.xlarge",
    }
    images, ssm = [], {}
    for index, (arch, variant) in enumerate(variants):
        name = f"amazon-eks-node-al2023-{arch}-{variant}-1.32-v20250201"
        images.append({"id": f"ami-{index:017x}", "name": name, "architecture": arch, "creationDate": "2025-02-01T00:00:00Z"})
        ssm[f"/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/{arch}/{variant}/recommended/image_id"] = images[-1]["id"]
    with embedded_aws(load_world(None), server=embedded_server) as aws:
        described = [t for t in json.loads(json.dumps(_described(aws), default=str)) if t["InstanceType"] in variants.values()]
    node_class = {"metadata": {"name": "al2023"}, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}}
    answer = support.oracle.oracle(release).image_map(
        node_class, described, images=images, ssm=ssm, kubernetes="1.32", now="2025-06-01T00:00:00Z"
    )
    assert [(c["type"], c["status"]) for c in answer["conditions"] if c["type"] == "AMIsReady"] == [("AMIsReady", "True")]
    by_id = {image["id"]: (image["architecture"], image["name"].split("-")[5]) for image in images}
    assert {name: by_id[image] for name, image in answer["instanceTypes"].items()} == {t: v for v, t in variants.items()}
