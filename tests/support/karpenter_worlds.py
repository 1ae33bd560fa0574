"""Generated worlds for the comparison with Karpenter's controller: an account (a world fixture for
the embedded AWS) and EC2NodeClasses + NodePools that select from it, drawn from a seed.

Each class draws one way to pick images (an alias at a published, unpublished or ``latest``
release; a name or tag selector over the account's own builds in every state, some deprecated),
one way to pick subnets and security groups (tags, ids, names; sometimes matching nothing) and one
identity (a role, a missing role, an instance profile with a role, without one, or missing). The
draws are plain ``random.Random(seed)``: a real controller takes seconds per world, so a few fixed
seeds, not a search, and a failing seed is replayed as is.
"""

from __future__ import annotations

import random

import yaml

ACCOUNT = "123456789012"
EKS_OWNER, BOTTLEROCKET_OWNER = "602401143452", "092701018921"
# A few types per architecture and accelerator, so every alias variant has a type to launch.
INSTANCE_TYPES = ["m5.large", "c6i.large", "m7g.large", "g5.xlarge", "g5g.xlarge", "inf2.xlarge"]
ZONES = ("a", "b", "c")
AL2023_VARIANTS = (("x86_64", "standard"), ("x86_64", "nvidia"), ("x86_64", "neuron"), ("arm64", "standard"), ("arm64", "nvidia"))
BOTTLEROCKET_VARIANTS = (("x86_64", ""), ("arm64", ""), ("x86_64", "-nvidia"), ("arm64", "-nvidia"))
STATES = ("available", "available", "available", "pending", "failed", "disabled")


class _Draw:
    def __init__(self, seed: int):
        self.random = random.Random(seed)
        self.serial = 0
        self.region = self.random.choice(["us-west-2", "eu-west-1", "us-east-1"])
        self.kubernetes = self.random.choice(["1.31", "1.32", "1.33"])
        self.world: dict = {
            "region": self.region,
            "accountId": ACCOUNT,
            "kubernetesVersion": self.kubernetes,
            "instanceTypes": INSTANCE_TYPES,
            "images": [],
            "ssmParameters": {},
            "roles": [],
            "instanceProfiles": [],
            "subnets": [],
            "securityGroups": [],
            "clusters": [{"name": f"gen{seed}"}],
        }

    def hexid(self, prefix: str, width: int = 17) -> str:
        self.serial += 1
        return f"{prefix}-{self.serial:0{width}x}"

    def image(self, name: str, arch: str, owner: str, day: int, **extra) -> str:
        image = {
            "id": self.hexid("ami"),
            "name": name,
            "architecture": arch,
            "ownerId": owner,
            "creationDate": f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T04:00:00Z",
            **extra,
        }
        self.world["images"].append(image)
        return image["id"]

    # --- the account -------------------------------------------------------------------------

    def al2023_releases(self) -> list[str]:
        """Two or three releases, the newest possibly half published; "recommended" on one of them."""
        releases = sorted(
            {
                f"v2025{month:02d}{day:02d}"
                for month, day in ((self.random.randint(1, 6), self.random.randint(10, 28)) for _ in range(3))
            }
        )
        for index, release in enumerate(releases):
            newest = index == len(releases) - 1
            for arch, variant in AL2023_VARIANTS:
                if newest and variant != "standard" and self.random.random() < 0.5:
                    continue  # still rolling out
                name = f"amazon-eks-node-al2023-{arch}-{variant}-{self.kubernetes}-{release}"
                state = "pending" if newest and self.random.random() < 0.2 else "available"
                image = self.image(name, arch, EKS_OWNER, index * 20 + len(variant), state=state)
                base = f"/aws/service/eks/optimized-ami/{self.kubernetes}/amazon-linux-2023/{arch}/{variant}"
                self.world["ssmParameters"][f"{base}/{name}/image_id"] = image
                if index == len(releases) - 2 or len(releases) == 1:  # the newest is not recommended yet
                    self.world["ssmParameters"][f"{base}/recommended/image_id"] = image
        return releases

    def bottlerocket_releases(self) -> list[str]:
        releases = [f"1.{minor}.0" for minor in sorted(self.random.sample(range(30, 45), 2))]
        for index, release in enumerate(releases):
            for arch, flavour in BOTTLEROCKET_VARIANTS:
                name_arch = "aarch64" if arch == "arm64" else arch
                name = f"bottlerocket-aws-k8s-{self.kubernetes}{flavour}-{name_arch}-v{release}-{self.serial:08x}"  # build hash
                image = self.image(name, arch, BOTTLEROCKET_OWNER, index * 20 + len(flavour))
                base = f"/aws/service/bottlerocket/aws-k8s-{self.kubernetes}{flavour}/{arch}"
                self.world["ssmParameters"][f"{base}/{release}/image_id"] = image
                if index == 0:
                    self.world["ssmParameters"][f"{base}/latest/image_id"] = image
        return releases

    def own_builds(self, team: str) -> None:
        for day in self.random.sample(range(1, 60), self.random.randint(1, 4)):
            arch = self.random.choice(["x86_64", "x86_64", "arm64"])
            extra = {"state": self.random.choice(STATES), "tags": {"team": team}}
            if self.random.random() < 0.25:
                extra["deprecationTime"] = "2025-03-01T00:00:00Z"
            self.image(f"{team}-node-{arch}-2025-{day:03d}", arch, ACCOUNT, day, **extra)

    def network(self) -> None:
        for zone in self.random.sample(ZONES, self.random.randint(1, 3)):
            tags = {"karpenter.sh/discovery": "gen"} if self.random.random() < 0.8 else {"Name": "public"}
            self.world["subnets"].append(
                {
                    "id": self.hexid("subnet"),
                    "availabilityZone": f"{self.region}{zone}",
                    "availableIpAddressCount": self.random.randint(0, 1000),
                    "tags": tags,
                }
            )
        for name in ("nodes", "cluster", "db"):
            tags = {"karpenter.sh/discovery": "gen"} if name != "db" else {"team": "db"}
            self.world["securityGroups"].append({"id": self.hexid("sg"), "name": f"gen-{name}", "tags": tags})

    def identities(self) -> None:
        self.world["roles"] = [{"name": "GenNodeRole"}]
        self.world["instanceProfiles"] = [{"name": "GenNodeProfile", "roles": ["GenNodeRole"]}, {"name": "GenEmptyProfile"}]

    # --- the classes ---------------------------------------------------------------------------

    def amis(self, al2023: list[str], bottlerocket: list[str]) -> dict:
        kind = self.random.choice(["al2023", "al2023", "bottlerocket", "custom-name", "custom-tags"])
        if kind == "al2023":
            version = self.random.choice([*al2023, "latest", "v20240101"])
            return {"amiSelectorTerms": [{"alias": f"al2023@{version}"}]}
        if kind == "bottlerocket":
            return {"amiSelectorTerms": [{"alias": f"bottlerocket@{self.random.choice([*bottlerocket, 'latest'])}"}]}
        family = {"amiFamily": self.random.choice(["AL2023", "Bottlerocket", "Custom"])}
        if kind == "custom-name":
            return {
                **family,
                "amiSelectorTerms": [{"name": self.random.choice(["payments-node-*", "batch-node-x86_64-*"]), "owner": "self"}],
            }
        return {**family, "amiSelectorTerms": [{"tags": {"team": self.random.choice(["payments", "batch", "nobody"])}}]}

    def selector(self, section: str) -> list[dict]:
        entries = self.world[section]
        way = self.random.choice(["tags", "tags", "id", "none"] + (["name"] if section == "securityGroups" else []))
        if way == "tags" or not entries:
            return [{"tags": {"karpenter.sh/discovery": "gen"}}]
        if way == "id":
            return [{"id": entry["id"]} for entry in self.random.sample(entries, min(2, len(entries)))]
        if way == "name":
            return [{"name": entries[0]["name"]}]
        return [{"tags": {"karpenter.sh/discovery": "elsewhere"}}]

    def identity(self) -> dict:
        # Mostly sound, so that ValidationSucceeded and Ready are compared too (a judged profile masks them).
        return self.random.choice(
            [{"role": "GenNodeRole"}] * 4
            + [{"instanceProfile": "GenNodeProfile"}] * 2
            + [{"role": "MissingRole"}, {"instanceProfile": "GenEmptyProfile"}, {"instanceProfile": "MissingProfile"}]
        )


def generated_world(seed: int, classes: int = 4) -> tuple[str, list[dict]]:
    """A world fixture (YAML) and the EC2NodeClasses and NodePools to apply in it."""
    draw = _Draw(seed)
    al2023, bottlerocket = draw.al2023_releases(), draw.bottlerocket_releases()
    draw.own_builds("payments")
    draw.own_builds("batch")
    draw.network()
    draw.identities()
    documents = []
    for index in range(classes):
        name = f"class-{index}"
        spec = {
            **draw.amis(al2023, bottlerocket),
            **draw.identity(),
            "subnetSelectorTerms": draw.selector("subnets"),
            "securityGroupSelectorTerms": draw.selector("securityGroups"),
        }
        documents.append({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": spec})
        documents.append(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodePool",
                "metadata": {"name": f"pool-{index}"},
                "spec": {
                    "template": {
                        "spec": {
                            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
                        }
                    }
                },
            }
        )
    return yaml.safe_dump(draw.world, sort_keys=False), documents
