"""The realistic Karpenter objects the validate benchmarks judge, written as a repository holds them.

Half EC2NodeClasses (AL2023 alias, block device, metadata options, tags, a MIME userData part with a
NodeConfig), half NodePools (requirements, a taint, disruption budgets, limits), each NodePool
referring to its own class, so the whole set is clean: every checker should pass every object.
Apart from them, a small file of the same objects with one mistake each among clean ones, for
checking that two checkers refuse the same objects before their times are compared.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

RELEASE = "v1.14.1"  # validate's default release (1.14) at the patch whose CRDs the fetch step holds (harness/upstream.py)
PER_FILE = 1_000

USERDATA = """\
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s

--BOUNDARY--
"""


def node_class(index: int | str, team: int | str) -> dict:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": f"class-{index}"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
            "role": f"KarpenterNodeRole-team-{team}",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
                }
            ],
            "metadataOptions": {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"},
            "tags": {"team": f"team-{team}", "cost-center": "platform"},
            "userData": USERDATA,
        },
    }


def node_pool(index: int | str, team: int | str) -> dict:
    requirement = lambda key, *values: {"key": key, "operator": "In", "values": list(values)}  # noqa: E731
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"pool-{index}"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": f"team-{team}"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": f"class-{index}"},
                    "requirements": [
                        requirement("karpenter.sh/capacity-type", "on-demand", "spot"),
                        requirement("kubernetes.io/arch", "amd64"),
                        requirement("karpenter.k8s.aws/instance-category", "c", "m", "r"),
                        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]},
                    ],
                    "taints": [{"key": "team", "value": f"team-{team}", "effect": "NoSchedule"}],
                    "expireAfter": "720h",
                },
            },
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "1m",
                "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}],
            },
            "limits": {"cpu": "1000", "memory": "1000Gi"},
        },
    }


# Dumped once with these markers, then filled in per pair: 500,000 objects are written in seconds.
_INDEX, _TEAM = "INDEXMARK", "TEAMMARK"
_PAIR = yaml.dump_all([node_class(_INDEX, _TEAM), node_pool(_INDEX, _TEAM)], Dumper=yaml.CSafeDumper, sort_keys=False)


def _pair(index: int) -> str:
    return _PAIR.replace(_INDEX, str(index)).replace(_TEAM, str(index % 50))


def write_objects(directory: Path, count: int, per_file: int = PER_FILE) -> list[Path]:
    """``count`` objects (a class and its pool per pair) in files of ``per_file`` objects, as a repository splits them."""
    pairs_per_file = max(per_file // 2, 1)
    written = []
    for first in range(0, count // 2, pairs_per_file):
        path = directory / f"objects-{first * 2:07}.yaml"
        with path.open("w") as out:
            for index in range(first, min(first + pairs_per_file, count // 2)):
                out.write("---\n" if index > first else "")
                out.write(_pair(index))
        written.append(path)
    return written


# One object per kind of mistake a checker of Karpenter's CRDs must refuse: the structural schema (an
# unknown field, an enum, a pattern, a type, the object's name) and the CEL rules of both kinds.
MISTAKES = {
    "pool-unknown-field": lambda o: o["spec"]["disruption"].update(consolidateAftr="1m"),
    "pool-enum": lambda o: o["spec"]["disruption"].update(consolidationPolicy="WhenIdle"),
    "pool-pattern": lambda o: o["spec"]["template"]["spec"].update(expireAfter="30d"),
    "pool-type": lambda o: o["spec"]["limits"].update(cpu=["1"]),
    "Pool_Name": lambda o: None,  # not an RFC 1123 subdomain
    "pool-cel-budget": lambda o: o["spec"]["disruption"]["budgets"][1].pop("duration"),
    "pool-cel-restricted-label": lambda o: o["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["other"]}
    ),
    "class-cel-role-and-profile": lambda o: o["spec"].update(instanceProfile="KarpenterNodeInstanceProfile"),
    "class-cel-alias-and-id": lambda o: o["spec"]["amiSelectorTerms"][0].update(id="ami-0123456789abcdef0"),
    "class-enum": lambda o: o["spec"]["metadataOptions"].update(httpTokens="sometimes"),
}


def write_mistakes(path: Path) -> dict[tuple[str, str], bool]:
    """Clean pairs with each mistake of :data:`MISTAKES` among them, in one file; each object's (kind, name)
    and whether a checker must refuse it, in the file's order."""
    objects = []
    for index, (name, mistake) in enumerate(MISTAKES.items()):
        objects += [node_class(f"clean-{index}", index), node_pool(f"clean-{index}", index)]
        base = node_class(name, index) if name.startswith("class-") else node_pool(name, index)
        mistake(base)
        base["metadata"]["name"] = name
        objects.append(base)
    path.write_text(yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False))
    return {(o["kind"], o["metadata"]["name"]): o["metadata"]["name"] in MISTAKES for o in objects}


def object_count(text: str) -> int:
    """A size on the command line: a positive, even number of objects (each class comes with its pool)."""
    size = int(text)
    if size < 2 or size % 2:
        raise argparse.ArgumentTypeError(f"{text} is not a positive even number")
    return size
