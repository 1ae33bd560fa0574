"""The ``karpenter-gitops:controller`` stack key, read strictly into :class:`ControllerSettings`.

.. code-block:: yaml

    karpenter-gitops:controller:
      identity: podIdentity            # or irsa (then oidcProviderArn)
      nodeRoleName: KarpenterNodeRole-dev
      createInstanceProfile: false     # Karpenter makes profiles from spec.role itself
      interruptionQueue: {enabled: true}
      helm: {enabled: true, version: "1.14.1"}
      nodeRoles:                       # node roles made elsewhere that NodeClasses use
        PaymentsNodeRole: {instanceProfiles: [PaymentsNodeProfile-v2], accessEntry: existing}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import (
    ACCESS_CREATE,
    ACCESS_ENTRY_TYPES,
    ACCESS_EXISTING,
    ECR_PULL_ONLY,
    ECR_READ_ONLY,
    IPV4,
    IPV6,
    IRSA,
    OIDC_PROVIDER_ARN,
    POD_IDENTITY,
    ControllerSettings,
    NodeRole,
)
from karpenter_gitops.core.inputs import CONTROLLER_KEY as KEY
from karpenter_gitops.core.text import did_you_mean

_NAME_CHARS = re.compile(r"^[A-Za-z0-9_-]+$")  # what the queue and rule names derived from the prefix allow

_IAM_NAME = re.compile(r"^[\w+=,.@-]+$")

_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/.+$")


def _enum(*allowed: str) -> Callable[[Any], bool]:
    return lambda v: v in allowed


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and bool(v)


def _is_bool(v: Any) -> bool:
    return type(v) is bool


class Field(NamedTuple):
    """One key of the block: the settings attribute it sets, its check, a valid value in words, and what it does."""

    attr: str
    valid: Callable[[Any], bool]
    expected: str
    doc: str


FIELDS: dict[str, Field] = {
    "identity": Field(
        "identity",
        _enum(POD_IDENTITY, IRSA),
        f"{POD_IDENTITY} or {IRSA}",
        "How the controller's pods assume its role: EKS Pod Identity or IRSA.",
    ),
    "oidcProviderArn": Field(
        "oidc_provider_arn",
        lambda v: isinstance(v, str) and bool(OIDC_PROVIDER_ARN.match(v)),
        "an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>)",
        "The cluster's IAM OIDC provider; required with `identity: irsa`, refused otherwise.",
    ),
    "namespace": Field("namespace", _is_str, "a Kubernetes namespace", "The controller's namespace."),
    "serviceAccount": Field("service_account", _is_str, "a service account name", "The controller's service account."),
    "namePrefix": Field(
        "name_prefix",
        lambda v: isinstance(v, str) and bool(_NAME_CHARS.match(v)),
        "letters, digits, - and _",
        "What the role, queue and rule names derive from (default `Karpenter-<cluster>`).",
    ),
    "nodeRoleName": Field(
        "node_role_name",
        lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)),
        "an IAM role name",
        "The node IAM role the stack creates (default `<namePrefix>-node`).",
    ),
    "createInstanceProfile": Field(
        "create_instance_profile",
        _is_bool,
        "true or false",
        "Also create an instance profile for the node role (Karpenter makes its own from `spec.role`).",
    ),
    "instanceProfileName": Field(
        "instance_profile_name",
        lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)),
        "an IAM name",
        "The created profile's name (default: the node role's); needs `createInstanceProfile`.",
    ),
    "accessEntryType": Field(
        "access_entry_type",
        _enum(*ACCESS_ENTRY_TYPES),
        " or ".join(ACCESS_ENTRY_TYPES),
        "The EKS access entry type of the node role.",
    ),
    "ipFamily": Field(
        "ip_family",
        _enum(IPV4, IPV6),
        f"{IPV4} or {IPV6} (the cluster's IP family)",
        "The cluster's IP family: which CNI policy the node role gets.",
    ),
    "ecrPolicy": Field(
        "ecr_policy",
        _enum(ECR_READ_ONLY, ECR_PULL_ONLY),
        f"{ECR_READ_ONLY} or {ECR_PULL_ONLY}",
        "Which ECR managed policy the node role gets.",
    ),
    "ssmManagedInstanceCore": Field(
        "ssm_managed_instance_core", _is_bool, "true or false", "Attach AmazonSSMManagedInstanceCore to the node role."
    ),
    "runsOnFargate": Field("runs_on_fargate", _is_bool, "true or false", "The controller runs on Fargate."),
}

QUEUE_FIELDS = {
    "enabled": Field("interruption_queue", _is_bool, "true or false", "Create the interruption queue and its EventBridge rules."),
    "kmsKeyArn": Field(
        "kms_key_arn",
        lambda v: isinstance(v, str) and bool(_KMS_KEY_ARN.match(v)),
        "a KMS key or alias ARN",
        "A customer-managed key for the queue (default: SQS-managed encryption).",
    ),
}

HELM_FIELDS = {
    "enabled": Field("enabled", _is_bool, "true or false", "Install the Karpenter chart (and its CRDs chart first)."),
    "version": Field("version", _is_str, 'a chart version, e.g. "1.14.1"', "The chart version; required when enabled."),
}

NODE_ROLE_FIELDS = {
    "instanceProfiles": Field(
        "instance_profiles",
        lambda v: isinstance(v, list) and all(map(_is_str, v)),
        "a list of names",
        "Instance profiles holding the role that NodeClasses name.",
    ),
    "accessEntry": Field(
        "access_entry",
        _enum(ACCESS_CREATE, ACCESS_EXISTING),
        f"{ACCESS_CREATE} or {ACCESS_EXISTING}",
        "Whether this stack creates the role's EKS access entry or one exists already.",
    ),
}

# The block's nested mappings, with the fields each takes (nodeRoles: per role name).
BLOCKS = {
    "interruptionQueue": ("The interruption queue.", QUEUE_FIELDS),
    "helm": ("The Karpenter Helm release.", HELM_FIELDS),
    "nodeRoles": ("Node roles made elsewhere that NodeClasses use, by role name.", NODE_ROLE_FIELDS),
}


def _read(value: Any, where: str, file: str, fields: Mapping[str, Field], extra: Iterable[str] = ()) -> dict[str, Any]:
    """Known keys of a mapping as settings attributes; an unknown key or a bad value is an InputError."""
    known = [*fields, *extra]
    if not isinstance(value, Mapping):
        raise InputError(f"'{where}' must be a mapping", file, hint=f"keys: {', '.join(known)}")
    read = {}
    for key, item in value.items():
        if key in extra:
            continue
        if key not in fields:
            hint = did_you_mean(str(key), known) or f"known keys: {', '.join(known)}"
            raise InputError(f"unknown field '{where}.{key}'", file, hint=hint)
        field = fields[key]
        if not field.valid(item):
            raise InputError(f"'{where}.{key}' is {item!r}; expected {field.expected}", file)
        read[field.attr] = item
    return read


def parse(value: Any, file: str, cluster_name: str | None) -> ControllerSettings:
    """The controller block of a stack, strictly: unknown keys, bad values and missing pairs are InputErrors."""
    if not cluster_name:
        raise InputError(f"'{KEY}' needs the cluster's name", file, hint="set karpenter-gitops:cluster.name")
    options = _read(value, KEY, file, FIELDS, BLOCKS)
    options.update(_read(value.get("interruptionQueue", {}), f"{KEY}.interruptionQueue", file, QUEUE_FIELDS))
    helm = _read(value.get("helm", {}), f"{KEY}.helm", file, HELM_FIELDS)
    if helm.get("enabled"):
        if "version" not in helm:
            raise InputError(f"'{KEY}.helm.version' is required when the release is enabled", file, hint='e.g. "1.14.1"')
        options["helm_version"] = helm["version"]
    options["node_roles"] = _node_roles(value.get("nodeRoles", {}), file)
    identity = options.get("identity", POD_IDENTITY)
    if identity == IRSA and "oidc_provider_arn" not in options:
        raise InputError(
            f"'{KEY}.identity' is irsa but no oidcProviderArn is given",
            file,
            hint="add the cluster's IAM OIDC provider ARN, or use podIdentity",
        )
    if identity == POD_IDENTITY and "oidc_provider_arn" in options:
        raise InputError(
            f"'{KEY}.oidcProviderArn' is only used with identity: irsa", file, hint="remove it or set identity: irsa"
        )
    if "instance_profile_name" in options and not options.get("create_instance_profile"):
        raise InputError(
            f"'{KEY}.instanceProfileName' names a profile that is not created",
            file,
            hint="set createInstanceProfile: true, or drop the name",
        )
    prefix = options.setdefault("name_prefix", f"Karpenter-{cluster_name}")
    options.setdefault("node_role_name", f"{prefix}-node")
    if options.get("create_instance_profile"):
        options.setdefault("instance_profile_name", options["node_role_name"])
    return ControllerSettings(cluster_name=cluster_name, **options)


def _node_roles(value: Any, file: str) -> tuple[NodeRole, ...]:
    where = f"{KEY}.nodeRoles"
    if not isinstance(value, Mapping):
        raise InputError(f"'{where}' must map role names to {{instanceProfiles, accessEntry}}", file)
    roles = []
    for name, entry in value.items():
        if not isinstance(name, str) or not _IAM_NAME.match(name.rsplit("/", 1)[-1]):
            raise InputError(f"'{where}': {name!r} is not an IAM role name", file)
        options = _read(entry or {}, f"{where}.{name}", file, NODE_ROLE_FIELDS)
        roles.append(NodeRole(name, tuple(options.get("instance_profiles", ())), options.get("access_entry", ACCESS_EXISTING)))
    return tuple(roles)
