"""Karpenter v1.15.0 and v1.15.1 judged by their own files, read from their Go modules.

v1.15.1 cannot be built (the proxy refuses its core module), but its provider module downloads: its CRDs
are walked too, so a patch that changed a field, enum, bound or pattern would show here.

``go mod download`` fetches and verifies the module zip; it refuses to unpack it here (v1.15.0's
go.mod asks for go >= 1.26.9, newer than our toolchain), so the CRDs and go.mod are read from the
verified zip. The kubelet field list comes from the k8s.io/kubelet module that go.mod pins.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest
from support.crd_helpers import STRICTER, our_findings
from support.crd_walk import differences
from support.real_tools import downloaded
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.kubelet_fields import KUBELET_CONFIGURATION_FIELDS, UPSTREAM_MODULE
from karpenter_gitops.judge import Judge
from karpenter_gitops.load.crds import load as load_crds

pytestmark = pytest.mark.real
KARPENTER = "github.com/aws/karpenter-provider-aws"
PATCHES = ("v1.15.0", "v1.15.1")
V115 = (1, 15)


@pytest.fixture(scope="module", params=PATCHES)
def release(request, tmp_path_factory) -> Path:
    """The module's CRDs and go.mod (of each 1.15 patch), unpacked from its verified zip."""
    answer = downloaded(f"{KARPENTER}@{request.param}")
    target = tmp_path_factory.mktemp(f"karpenter-{request.param}")
    with zipfile.ZipFile(answer["Zip"]) as archive:
        for name in archive.namelist():
            if re.search(r"/pkg/apis/crds/[^/]+\.yaml$", name):
                (target / Path(name).name).write_bytes(archive.read(name))
    shutil.copyfile(answer["GoMod"], target / "go.mod")
    return target


def test_the_models_know_every_field_enum_bound_and_pattern_of_v115(release):
    assert differences(release, V115) == []


CASES = [
    node_class(),
    node_pool(),
    node_class({"spec": {"enclaveOptions": {"enabled": True}}}),
    node_class({"spec": {"enclaveOptions": {}}}),
    node_class({"spec": {"kubelet": {"shutdownGracePeriod": "30s", "maxPods": "max_pods"}}}),
    node_pool({"spec": {"disruption": {"consolidateAfter": None, "budgets": [{"nodes": "1", "reasons": ["Unhealthy"]}]}}}),
    node_pool({"spec": {"disruption": {"budgets": [{"nodes": "1", "reasons": ["Unhealthy", "Sometimes"]}]}}}),
]


@pytest.mark.parametrize("doc", CASES, ids=range(len(CASES)))
def test_our_v115_verdicts_are_its_crds(release, doc):
    """What the CRDs refuse, our schema and CEL rules at 1.15 refuse; Karpenter's own kubelet checks
    (kubelet/*) come on top and are not the API server's."""
    crds = load_crds([release])
    theirs = [f for f in Judge().findings(crds.check(doc).observations) if f.severity is Severity.ERROR]
    ours = [f for f in our_findings(doc, V115) if f.severity is Severity.ERROR and not f.rule.startswith(STRICTER)]
    assert bool(ours) == bool(theirs), (ours, theirs)


def test_the_kubelet_fields_are_those_of_the_kubelet_module_v115_pins(release):
    assert f"k8s.io/kubelet {UPSTREAM_MODULE.split('@')[1]}" in (release / "go.mod").read_text()
    types = Path(downloaded(UPSTREAM_MODULE)["Dir"]) / "config" / "v1beta1" / "types.go"
    struct = re.search(r"^type KubeletConfiguration struct \{(.*?)^\}", types.read_text(), re.S | re.M).group(1)
    names = {name for name in re.findall(r'json:"([^",]*)', struct) if name}
    assert KUBELET_CONFIGURATION_FIELDS == names | {"apiVersion", "kind"}
