"""The kustomization beside the manifests is a front door too: a hostile one (wrong types, nulls, huge or deep
values, anchors, a tab, YAML that does not parse) keeps the contract (``support.hostile.run``) for the folder and
for its patch file named alone, and, whatever it says, the pool and class beside it are judged."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from support.hostile import PROFILE, TEXT_EDITS, as_text, mutated, run
from support.validate_runs import VALID_NODECLASS

KUSTOMIZATIONS = [
    {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["pool.yaml", "class.yaml"],
        "patches": [{"path": "patch.yaml"}, {"patch": "- op: remove\n  path: /spec/weight\n", "target": {"kind": "NodePool"}}],
        "patchesStrategicMerge": ["patch.yaml"],
        "patchesJson6902": [{"path": "patch.yaml", "target": {"kind": "NodePool", "name": "general"}}],
    },
    {"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component", "patches": [{"path": "patch.yaml"}]},
]
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
"""
PATCH = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec: {weight: 5}\n"


@PROFILE
@given(
    kustomization=mutated(st.sampled_from(KUSTOMIZATIONS)),
    edit=TEXT_EDITS,
    name=st.sampled_from(["kustomization.yaml", "Kustomization"]),
)
def test_a_hostile_kustomization_keeps_the_contract(tmp_path_factory, kustomization, edit, name):
    folder = tmp_path_factory.mktemp("overlay")
    (folder / name).write_text(as_text([kustomization], edit))
    (folder / "pool.yaml").write_text(POOL)
    (folder / "class.yaml").write_text(VALID_NODECLASS)
    (folder / "patch.yaml").write_text(PATCH)
    code, out, _ = run(["validate", str(folder), "--format", "json", "--no-cache"])
    if code != 2:  # the pool and its class are read whatever the kustomization says (it lists them as resources)
        assert json.loads(out)["summary"]["objects"] >= 2, out
    run(["validate", str(folder / "patch.yaml"), "--allow-empty", "--format", "json", "--no-cache"])
