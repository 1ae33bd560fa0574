"""What the tests of ``validate``'s strategies share (split on two cores, streamed in parts): objects, files
and streams to judge, and a recorder of the strategy a run took."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from hypothesis import strategies as st

from karpenter_gitops.app import validate_strategies
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

# A valid EC2NodeClass, as a user writes it.
VALID_NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""


def node_class(name: str, **spec) -> dict:
    made = copy.deepcopy(dict(BASE_NODECLASS))
    made["metadata"] = {"name": name}
    made["spec"].update(spec)
    return made


def node_pool(name: str, node_class_name: str, **spec) -> dict:
    made = copy.deepcopy(dict(BASE_NODEPOOL))
    made["metadata"] = {"name": name}
    made["spec"]["template"]["spec"]["nodeClassRef"]["name"] = node_class_name
    made["spec"].update(spec)
    return made


def overlay(name: str, price: str, weight: int = 10) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {
            "weight": weight,
            "price": price,
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}],
        },
    }


def stack(**config) -> dict:
    return {"config": {f"karpenter-gitops:{key}": value for key, value in config.items()}}


def write(folder: Path, files: dict[str, list]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, documents in files.items():
        (folder / name).write_text(documents if isinstance(documents, str) else yaml.safe_dump_all(documents))
    return folder


class Recorder:
    """Records whether each run took ``strategy``, by wrapping it (None: it handed the run back)."""

    def __init__(self, monkeypatch, strategy: str = "split") -> None:
        self.taken: list[bool] = []
        real = getattr(validate_strategies, strategy)

        def recorded(*args, **kwargs):
            result = real(*args, **kwargs)
            self.taken.append(result is not None)
            return result

        monkeypatch.setattr(validate_strategies, strategy, recorded)


STREAM = "\n".join(
    [
        "# rendered by helm template",
        yaml.safe_dump(node_class("one")),
        "---",
        yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
        "---",
        "---",  # an empty document still counts in the numbers
        yaml.safe_dump(node_class("two", amiSelectorTerms=[{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}])),
        "--- # the middle is near here",
        yaml.safe_dump(node_pool("general", "one")),
        "---",
        "# a comment-only document",
        "---",
        yaml.safe_dump(node_pool("lost", "missing", weight=5000)),
        "---",
        yaml.safe_dump(node_class("three", role="arn:aws:iam::111122223333:role/x")),
    ]
)


NAMES = st.sampled_from(["one", "two", "three"])
DOCUMENTS = st.one_of(
    st.builds(node_class, NAMES),
    st.builds(node_pool, st.sampled_from(["general", "batch"]), NAMES),
    st.builds(lambda name: node_class(name, role="arn:aws:iam::111122223333:instance-profile/x"), NAMES),
    st.builds(lambda name: node_pool(name, "one", weight=1000), st.sampled_from(["heavy", "general"])),
    st.builds(overlay, st.sampled_from(["cheap", "dear"]), st.sampled_from(["0.01", "+10%", "nope"])),
    st.just({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
)
FILES = st.lists(
    st.one_of(
        st.lists(DOCUMENTS, min_size=1, max_size=4),
        st.just([stack(cluster={"name": "dev", "featureGates": {"NodeOverlay": True}})]),
        st.just("not: [yaml\n"),
    ),
    min_size=2,
    max_size=5,
)


SEPARATORS = st.sampled_from(["---\n", "---\n---\n", "--- # next\n", "# between\n---\n", "---\n# only a comment\n---\n"])
