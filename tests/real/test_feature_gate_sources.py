"""The feature gates we accept per release are exactly those Karpenter's own option parsers list, read
from each release's module source (core ``pkg/operator/options``, and the AWS provider's for
``--aws-feature-gates``), and the Helm keys are those of the chart's values.yaml."""

from __future__ import annotations

import re
import zipfile

import pytest
import yaml
from support import real_tools

from karpenter_gitops.core import feature_gates, versions

pytestmark = pytest.mark.real

CORE = {(1, 15): "v1.15.0", (1, 14): "v1.14.3", (1, 9): "v1.9.0"}
PROVIDER = {(1, 15): "v1.15.0", (1, 14): "v1.14.3", (1, 9): "v1.9.3"}


def _source(module: str, version: str, path: str) -> str:
    found = real_tools.downloaded(f"{module}@{version}")
    with zipfile.ZipFile(found["Zip"]) as archive:
        return archive.read(f"{module}@{version}/{path}").decode()


def _listed(source: str, flag: str) -> set[str]:
    """The gate names an options.go lists for ``flag``: its FeatureGate declarations, else its help text."""
    declared = set(re.findall(r'Name:\s+"(\w+)"', source))
    if declared:
        return declared
    match = re.search(rf'"{flag}".*?Current options are: ([^"]+)"', source)
    return set(re.findall(r"[A-Z]\w+", match[1])) if match else set()


@pytest.mark.parametrize("release", sorted(CORE), ids=lambda r: versions.show(versions.Release(r)))
def test_the_gates_of_each_release_are_karpenters(release):
    core = _source("sigs.k8s.io/karpenter", CORE[release], "pkg/operator/options/options.go")
    provider = _source("github.com/aws/karpenter-provider-aws", PROVIDER[release], "pkg/operator/options/options.go")
    ours = feature_gates.of_release(versions.Release(release))
    assert {gate.name for gate in ours if not gate.aws} == _listed(core, "feature-gates")
    assert {gate.name for gate in ours if gate.aws} == _listed(provider, "aws-feature-gates")


@pytest.mark.parametrize("release", sorted(CORE), ids=lambda r: versions.show(versions.Release(r)))
def test_the_helm_keys_are_the_charts(release):
    values = yaml.safe_load(_source("github.com/aws/karpenter-provider-aws", PROVIDER[release], "charts/karpenter/values.yaml"))
    settings = values["settings"]
    for gate in feature_gates.of_release(versions.Release(release)):
        assert gate.helm in (settings.get(gate.helm_block) or {}), gate
