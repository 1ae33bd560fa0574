"""NodePool rules on the values a requirement names: values Karpenter knows all of (capacity type,
tenancy: its ``WellKnownValuesForRequirements`` per release) and values no EC2 instance type carries
(an architecture by EC2's name, a family that does not exist). Karpenter accepts a requirement with
one good and one dead value, and the dead one silently narrows nothing: ``capacity-type In [spot,
ondemand]`` is a spot-only pool. ``plan`` checks families and types against the region's catalogue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from karpenter_gitops.core import ec2_names, labels
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEPOOL
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.cel.nodepool import requirement_path, requirements, values_of
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)

# Labels whose values Karpenter knows all of (WellKnownValuesForRequirements: core's capacity types, the
# AWS provider's tenancies), by the release that first knows them; a requirement allowing none of them
# matches no capacity.
_KNOWN_VALUES = {
    labels.CAPACITY_TYPE: (("on-demand", "spot", "reserved"), None),
    labels.TENANCY: (("default", "dedicated"), (1, 9)),
}


def well_known_values(release: Release) -> dict[str, tuple[str, ...]]:
    """Karpenter's well-known values per label in ``release`` (what its WellKnownValuesForRequirements holds)."""
    return {key: values for key, (values, since) in _KNOWN_VALUES.items() if since is None or release >= since}


@rule(
    "nodepool/requirement-unknown-values",
    Severity.ERROR,
    KINDS,
    "An In requirement on karpenter.sh/capacity-type (or instance-tenancy) that allows none of the values "
    "Karpenter knows (on-demand, spot, reserved; default, dedicated): Karpenter rejects the NodePool.",
    "Use the values Karpenter knows, in lower case: on-demand, spot or reserved.",
    origin="karpenter",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]
                    }
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["SPOT"]}]}
                }
            }
        },
    ),
)
def requirement_unknown_values(obj, ctx):
    known_values = well_known_values(ctx.release)
    for index, requirement in requirements(obj):
        known = known_values.get(requirement.key)
        if known is None or requirement.operator != "In":
            continue
        values = values_of(requirement)
        if values and not set(values) & set(known):
            yield Violation(
                f"{requirement_path(index)}.values",
                # Karpenter's words (sigs.k8s.io/karpenter pkg/apis/v1/nodeclaim_validation.go), its list as Go prints it
                f"no valid values found in [{' '.join(map(str, values))}] for {requirement.key}, "
                f"expected one of: {', '.join(known)}",
                did_you_mean(str(values[0]).lower(), known),
            )


_ARCHITECTURES = tuple(labels.KUBE_ARCHITECTURES.values())
_SYSTEMS = ("linux", "windows")
# What any instance type can carry for labels Karpenter computes from EC2 (offline: the names EC2 has):
# whether a value is carried, and the values a did-you-mean picks from.
_CARRIED: dict[str, tuple[Callable[[str], bool], Collection[str]]] = {
    labels.ARCH: (_ARCHITECTURES.__contains__, _ARCHITECTURES),
    labels.OS: (_SYSTEMS.__contains__, _SYSTEMS),
    labels.FAMILY: (ec2_names.FAMILIES.__contains__, ec2_names.FAMILIES),
    labels.CATEGORY: (ec2_names.CATEGORIES.__contains__, ec2_names.CATEGORIES),
    labels.SIZE: (ec2_names.SIZES.__contains__, ec2_names.SIZES),
    labels.INSTANCE_TYPE: (ec2_names.is_instance_type, ()),
}


def _hint(key: str, value: str, known: Collection[str]) -> str | None:
    if key == labels.ARCH and value in labels.KUBE_ARCHITECTURES:
        return f"{value} is EC2's name; Kubernetes calls it {labels.KUBE_ARCHITECTURES[value]}"
    if key == labels.INSTANCE_TYPE:
        family, _, size = value.partition(".")
        known = ec2_names.SIZES if family in ec2_names.FAMILIES else ec2_names.FAMILIES
        value = size if family in ec2_names.FAMILIES else family
    return did_you_mean(value.lower(), known)


@rule(
    "nodepool/requirement-dead-value",
    Severity.WARNING,
    KINDS,
    "An In requirement names a value no instance type carries and Karpenter knows no such value for "
    "(capacity-type ondemand, arch x86_64, a family EC2 does not have). Karpenter accepts it: beside valid "
    "values the dead one silently narrows nothing (capacity-type In [spot, ondemand] is a spot-only pool), "
    "alone it leaves the pool nothing to launch.",
    "Fix the value's spelling (the hint names the closest known value) or drop it.",
    origin="ours",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]
                    }
                }
            }
        },
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i", "c7g"]}]
                    }
                }
            }
        },
        {
            "spec": {
                "template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "NotIn", "values": ["x86_64"]}]}}
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "ondemand"]}]
                    }
                }
            }
        },
        {
            "spec": {
                "template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["x86_64"]}]}}
            }
        },
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i", "m7x"]}]
                    }
                }
            }
        },
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.lrage"]}
                        ]
                    }
                }
            }
        },
    ),
)
def requirement_dead_value(obj, ctx):
    known_values = well_known_values(ctx.release)
    for index, requirement in requirements(obj):
        if requirement.operator != "In" or not requirement.key:
            continue
        if requirement.key in known_values:
            known = known_values[requirement.key]
            carried, shown = known.__contains__, known
        elif requirement.key in _CARRIED:
            carried, shown = _CARRIED[requirement.key]
        else:
            continue
        values = [str(value) for value in values_of(requirement)]
        dead = [(i, value) for i, value in enumerate(values) if not carried(value)]
        if not dead or (requirement.key in known_values and len(dead) == len(values)):
            continue  # nothing dead, or all of them: Karpenter's own refusal (requirement-unknown-values)
        alive = [value for value in values if carried(value)]
        effect = f"the requirement selects only {alive}" if alive else "the requirement leaves the pool nothing to launch"
        for i, value in dead:
            yield Violation(
                f"{requirement_path(index)}.values[{i}]",
                f"no instance type carries {requirement.key}={value!r} and Karpenter knows no such value, so {effect}",
                _hint(requirement.key, value, shown),
            )
