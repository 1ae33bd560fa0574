"""The keys of ours a stack file may hold, declared once.

The loader accepts exactly these keys (an unknown one is an error with a did-you-mean hint), and
the stack-key reference in the docs is generated from the same tables, so the two cannot drift.
The controller block's keys are declared beside their checks in :mod:`karpenter_gitops.load.controller_settings`,
and the policy block's rule parameters by the rules that read them (:data:`karpenter_gitops.rules.registry.PARAMS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    """One key of a block: its name, what it holds, and whether every entry must give it."""

    name: str
    doc: str
    required: bool = False


def _table(*keys: Key) -> Mapping[str, Key]:
    return {key.name: key for key in keys}


# Under `config:`, each as `karpenter-gitops:<name>`.
STACK_KEYS = _table(
    Key("cluster", "The cluster this stack file is: its name, Kubernetes version and Karpenter release."),
    Key("nodeClasses", "EC2NodeClass specs by name, each spelled exactly as the CRD's `spec` (camelCase)."),
    Key("nodePools", "NodePool specs by name; `template.spec.nodeClassRef.name` names a class of the same stack."),
    Key(
        "nodeOverlays",
        "NodeOverlay specs by name (`karpenter.sh/v1alpha1`, Karpenter 1.7+): the price or capacity Karpenter "
        "assumes for the instance types their requirements match. Karpenter reads them only with its `NodeOverlay` feature gate on.",
    ),
    Key(
        "capacityBuffers",
        "CapacityBuffer specs by `namespace/name` (a bare name: the namespace the applier defaults to; "
        "`autoscaling.x-k8s.io/v1beta1`, Karpenter 1.14+): spare capacity kept ready. Karpenter reads them only with its "
        "`CapacityBuffer` feature gate on.",
    ),
    Key(
        "pinAmis",
        "`true`: the Pulumi program applies custom-AMI selectors as the reconciled `id` terms, so a newer "
        "build reaches the cluster only through a reviewed `pulumi up` (alias classes stay aliases; `@latest` is refused).",
    ),
    Key(
        "fullOutputs",
        "`true`: the Pulumi program's `nodePools` stack output holds each pool's whole instance-type to AMI map and "
        "unserved types; by default it is a summary per pool (how many types, how many per AMI, how many unserved).",
    ),
    Key(
        "amiSources",
        "Per class pinned by `id`, the AMI selector terms (name, tags, ssmParameter, owner) `bump` resolves the pins from.",
    ),
    Key(
        "renderYamlToDirectory",
        "A directory: the Pulumi program writes the manifests there for Argo CD / Flux instead of applying them.",
    ),
    Key(
        "workloads",
        "Paths (files or directories, relative to the project) of the workload manifests the stack's "
        "NodePools serve: the Pulumi program forecasts what Karpenter would launch for them and what it costs, per "
        "EC2NodeClass over its NodePools (the class's `forecast` output; only the workload kinds are passed on), and "
        "`verify` sets the NodeClaims Karpenter launched beside that forecast when `--workloads` is not given.",
    ),
    Key("policy", "Hygiene policy settings: production, rule parameters, per-rule severity or switch-off."),
    Key(
        "waivers",
        "Reasoned, expiring exceptions to hygiene rules for named objects: the entries, or the path of a waiver file "
        "(relative to the project, where `Pulumi.yaml` is), which the policy pack reads too.",
    ),
    Key("controller", "Karpenter's AWS side for the stack's EKS cluster: IAM, access entry, interruption queue, Helm release."),
)

CLUSTER_KEYS = _table(
    Key("name", "The EKS cluster's name (the controller block derives its resource names from it)."),
    Key("kubernetesVersion", 'The cluster\'s Kubernetes version, quoted (`"1.32"`): alias AMIs are looked up for it.'),
    Key("karpenterVersion", 'The Karpenter release the cluster runs, quoted (`"1.15"`): rules and schema follow it.'),
    Key(
        "featureGates",
        "The feature gates the cluster's Karpenter runs with, by name (`{NodeClassCEL: true}`): "
        "checks that depend on a gate follow it (NodeClassCEL, NodeOverlay, CapacityBuffer, StaticCapacity), and the "
        "controller block's Helm release runs with them; a gate not named is off, as Karpenter ships it. A gate may "
        "be named as the chart's values name it (`nodeOverlay`); a name the release has no gate for is refused.",
    ),
)

# The policy block's own keys; the rule parameters it also takes are declared by the rules.
POLICY_KEYS = _table(
    Key("production", "`true`: rules with a production severity use it (e.g. `@latest` aliases become errors)."),
    Key("rules", "Per rule id, `{enabled, severity}`; rules that mirror Karpenter's own validation cannot be changed."),
)

RULE_SETTING_KEYS = _table(
    Key("enabled", "`false` switches the rule off (for this stack, or wherever the policy file is used)."),
    Key("severity", "`error`, `warning` or `info`: the rule's severity there; `error` makes a house-style policy blocking."),
)

WAIVER_KEYS = _table(
    Key("rule", "The rule id waived (not one that mirrors Karpenter's validation, nor `policy/waiver-expired`).", True),
    Key("object", "An object name or an fnmatch glob such as `gpu-*`.", True),
    Key("reason", "Why the exception is acceptable; shown with every waived finding.", True),
    Key("expires", "An ISO date; the waiver holds through that day, then is itself an error.", True),
    Key("kind", "`EC2NodeClass`, `NodePool`, `NodeOverlay` or `CapacityBuffer`: waive only objects of this kind."),
)

# The repository configuration file's keys (.karpenter-gitops.yaml), each the default of the flag of the same name.
CONFIG_KEYS = _table(
    Key("karpenter-version", 'The Karpenter release to judge against, quoted (`"1.12"`), as `--karpenter-version` takes it.'),
    Key("feature-gates", "Karpenter's feature gates by name (`{NodeOverlay: true}`), as `--feature-gates` sets them."),
    Key("paths", "The files or folders to read when a command is given no PATHS and no `--stack`."),
    Key("policy", "`true`: `validate` runs as with `--policy` (house-style policies reported, waivers applied)."),
    Key("policy-file", "A policy file (`rules: {ID: {severity: error}}`, ...), as `--policy-file` names one."),
    Key(
        "rules",
        "Per rule id, `{enabled, severity}`, as a policy file's `rules`, laid over the policy file's rule by rule; "
        "`--policy-file` given replaces both.",
    ),
    Key("waivers", "The waiver file of `--policy` runs, as `validate --waivers` names one."),
)
