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
from typing import Any

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

# stack key -> (settings attribute, validity check, what a valid value looks like)
_FIELDS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "identity": ("identity", _enum(POD_IDENTITY, IRSA), f"{POD_IDENTITY} or {IRSA}"),
    "oidcProviderArn": (
        "oidc_provider_arn",
        lambda v: isinstance(v, str) and bool(OIDC_PROVIDER_ARN.match(v)),
        "an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>)",
    ),
    "namespace": ("namespace", _is_str, "a Kubernetes namespace"),
    "serviceAccount": ("service_account", _is_str, "a service account name"),
    "namePrefix": ("name_prefix", lambda v: isinstance(v, str) and bool(_NAME_CHARS.match(v)), "letters, digits, - and _"),
    "nodeRoleName": ("node_role_name", lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)), "an IAM role name"),
    "createInstanceProfile": ("create_instance_profile", _is_bool, "true or false"),
    "instanceProfileName": ("instance_profile_name", lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)), "an IAM name"),
    "accessEntryType": ("access_entry_type", _enum(*ACCESS_ENTRY_TYPES), " or ".join(ACCESS_ENTRY_TYPES)),
    "ipFamily": ("ip_family", _enum(IPV4, IPV6), f"{IPV4} or {IPV6} (the cluster's IP family)"),
    "ecrPolicy": ("ecr_policy", _enum(ECR_READ_ONLY, ECR_PULL_ONLY), f"{ECR_READ_ONLY} or {ECR_PULL_ONLY}"),
    "ssmManagedInstanceCore": ("ssm_managed_instance_core", _is_bool, "true or false"),
    "runsOnFargate": ("runs_on_fargate", _is_bool, "true or false"),
}

_QUEUE_FIELDS = {
    "enabled": ("interruption_queue", _is_bool, "true or false"),
    "kmsKeyArn": ("kms_key_arn", lambda v: isinstance(v, str) and bool(_KMS_KEY_ARN.match(v)), "a KMS key or alias ARN"),
}

_HELM_FIELDS = {"enabled": ("enabled", _is_bool, "true or false"), "version": ("version", _is_str, 'a chart version, e.g. "1.14.1"')}

_NODE_ROLE_FIELDS = {
    "instanceProfiles": ("instance_profiles", lambda v: isinstance(v, list) and all(map(_is_str, v)), "a list of names"),
    "accessEntry": ("access_entry", _enum(ACCESS_CREATE, ACCESS_EXISTING), f"{ACCESS_CREATE} or {ACCESS_EXISTING}"),
}

_BLOCKS = ("interruptionQueue", "helm", "nodeRoles")

def _read(value: Any, where: str, file: str, fields: Mapping[str, tuple], extra: Iterable[str] = ()) -> dict[str, Any]:
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
        attr, valid, expected = fields[key]
        if not valid(item):
            raise InputError(f"'{where}.{key}' is {item!r}; expected {expected}", file)
        read[attr] = item
    return read

def parse(value: Any, file: str, cluster_name: str | None) -> ControllerSettings:
    """The controller block of a stack, strictly: unknown keys, bad values and missing pairs are InputErrors."""
    if not cluster_name:
        raise InputError(f"'{KEY}' needs the cluster's name", file, hint="set karpenter-gitops:cluster.name")
    options = _read(value, KEY, file, _FIELDS, _BLOCKS)
    options.update(_read(value.get("interruptionQueue", {}), f"{KEY}.interruptionQueue", file, _QUEUE_FIELDS))
    helm = _read(value.get("helm", {}), f"{KEY}.helm", file, _HELM_FIELDS)
    if helm.get("enabled"):
        if "version" not in helm:
            raise InputError(f"'{KEY}.helm.version' is required when the release is enabled", file, hint='e.g. "1.14.1"')
        options["helm_version"] = helm["version"]
    options["node_roles"] = _node_roles(value.get("nodeRoles", {}), file)
    identity = options.get("identity", POD_IDENTITY)
    if identity == IRSA and "oidc_provider_arn" not in options:
        raise InputError(f"'{KEY}.identity' is irsa but no oidcProviderArn is given", file,
                         hint="add the cluster's IAM OIDC provider ARN, or use podIdentity")
    if identity == POD_IDENTITY and "oidc_provider_arn" in options:
        raise InputError(f"'{KEY}.oidcProviderArn' is only used with identity: irsa", file, hint="remove it or set identity: irsa")
    if "instance_profile_name" in options and not options.get("create_instance_profile"):
        raise InputError(f"'{KEY}.instanceProfileName' names a profile that is not created", file,
                         hint="set createInstanceProfile: true, or drop the name")
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
        options = _read(entry or {}, f"{where}.{name}", file, _NODE_ROLE_FIELDS)
        roles.append(NodeRole(name, tuple(options.get("instance_profiles", ())), options.get("access_entry", ACCESS_EXISTING)))
    return tuple(roles)
