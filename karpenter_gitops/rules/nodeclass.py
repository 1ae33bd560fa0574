"""Our EC2NodeClass rules (``nodeclass/``): what the CRD admits but breaks nodes, or does not do what it says.

They close the gaps of the CRD's CEL rules (:mod:`karpenter_gitops.rules.cel`): a mixed selector term
that CEL lets through because another term is well-formed, an alias version no SSM parameter has, an
AMI name of another family, an ARN where Karpenter wants a name, a block device without ebs.
"""

from __future__ import annotations

import re

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.rules.cel.ami import alias_path, aliases
from karpenter_gitops.rules.cel.selector_terms import has_field, term_lists
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR, WARNING = Severity.ERROR, Severity.WARNING

# --- selector terms -----------------------------------------------------------------------


@rule(
    "nodeclass/selector-term-exclusive",
    WARNING,
    KINDS,
    "A subnet, security-group or capacity-reservation term mixes an exclusive field with others. "
    "Upstream CEL only rejects this when every term does it; we flag each such term (Karpenter runs it, "
    "matching only what every field of the term selects).",
    "Split the term: one term with only the exclusive field, another with the rest.",
    origin="ours",
    good=({"spec": {"subnetSelectorTerms": [{"id": "subnet-1"}, {"tags": {"x": "y"}}]}},),
    bad=(
        {"spec": {"subnetSelectorTerms": [{"id": "subnet-1", "tags": {"a": "b"}}, {"tags": {"x": "y"}}]}},
        {"spec": {"securityGroupSelectorTerms": [{"name": "web", "id": "sg-1"}, {"id": "sg-2"}]}},
    ),
)
def per_term_exclusive(obj, ctx):
    for terms in term_lists(ctx.release).values():
        if not terms.every_term:
            continue  # upstream already checks each term
        present = list(terms.indexed(obj.spec))
        for exclusive in terms.exclusives:
            offending = [(index, term) for index, term in present if exclusive.broken_by(term)]
            if len(offending) == len(present):
                continue  # every term is at fault: the cel/ rule reports it
            for index, term in offending:
                mixed = ", ".join(f"'{o}'" for o in exclusive.others if has_field(term, o))
                yield Violation(
                    terms.path(index),
                    f"'{exclusive.field}' is combined with {mixed} in one {terms.noun}; "
                    f"Karpenter's CRD accepts this only because another term is well-formed",
                    f"move '{exclusive.field}' to a term of its own",
                )


# --- AMI selection ------------------------------------------------------------------------


# What a name selector's wildcards stand for when we ask which family's published images it names:
# nothing, a build date (with or without its v), or the arch-variant-version run of an EKS image name.
_GLOB_FILLS = ("", "20250101", "v20250101", "x86_64-standard-1.32-v20250101")


def named_family(name: str) -> amifamily.Family | None:
    """The family whose published images a name selector (with * and ? wildcards) can only mean, if any."""
    parts = re.split(r"[*?]", name)
    if len(parts) > 3:
        return None
    candidates = [parts[0]]
    for part in parts[1:]:
        candidates = [done + fill + part for done in candidates for fill in _GLOB_FILLS]
    found = {found[0].name: found[0] for text in candidates if (found := amifamily.of_image(text))}
    return next(iter(found.values())) if len(found) == 1 else None


@rule(
    "nodeclass/ami-name-family",
    WARNING,
    KINDS,
    "An AMI name selector that names another family's published images than amiFamily (a Bottlerocket "
    "image under amiFamily AL2023, an AL2 image under AL2023): Karpenter writes the userData for amiFamily, "
    "the image does not read it, and the nodes never join (aws/karpenter-provider-aws#5940). plan checks "
    "the images themselves (live/ami-family-mismatch); this reads the name offline.",
    "Set amiFamily to the family the images belong to, or select that family's images.",
    origin="ours",
    good=({"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-x86_64-*"}]}},),
    bad=(
        {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-x86_64-*"}]}},
        {"spec": {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "amazon-eks-node-al2023-*"}]}},
    ),
)
def ami_name_family(obj, ctx):
    declared = obj.spec.ami_family
    if declared in (None, "Custom"):
        return
    for index, term in enumerate(obj.spec.ami_selector_terms or ()):
        family = named_family(term.name) if term.name else None
        if family is not None and family.name != declared:
            yield Violation(
                f"spec.amiSelectorTerms[{index}].name",
                f"{term.name!r} names {family.name} images, but amiFamily is {declared}: the nodes would get "
                f"{declared} userData they cannot read",
                f"set amiFamily: {family.name}",
            )


@rule(
    "nodeclass/alias-version-format",
    ERROR,
    KINDS,
    "An alias version that is not the family's AMI version (al2023@2023.0.20230222 is an Amazon Linux release, "
    "not an EKS AMI version vYYYYMMDD): the CRD accepts it, but no SSM parameter has that name, so AMI discovery "
    "finds nothing and no node launches.",
    "Use the family's version format: vYYYYMMDD for AL2 and AL2023, the OS version (v1.32.0) for Bottlerocket, or latest.",
    origin="ours",
    good=(
        {"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},
        {"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@1.32.0"}]}},
    ),
    bad=(
        {"spec": {"amiSelectorTerms": [{"alias": "al2023@2023.0.20230222"}]}},
        {"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v20240807"}]}},
    ),
)
def alias_version_format(obj, ctx):
    for index, alias in aliases(obj.spec):
        family_part, at, version = alias.partition("@")
        family = amifamily.of_alias(family_part)
        if not at or family is None or family.version_format is None or version == "latest" or "@" in version:
            continue  # malformed aliases, unknown families and Windows are the CEL rules', a second '@' alias-format's
        if not family.version_format.match(version):
            yield Violation(
                alias_path(index),
                f"{version!r} is not a {family_part} AMI version, so no SSM parameter has that name and AMI "
                "discovery finds nothing",
                f"pin a version like {family.version_example}, or use {family_part}@latest",
            )


@rule(
    "nodeclass/alias-format",
    ERROR,
    KINDS,
    "An alias with more than one '@' (al2023@v20240807@x, windows2022@latest@x). The CRD's rules only look at "
    "what comes before the first '@' and after it, so the API server stores it; Karpenter's controller splits the "
    "alias on every '@' and, finding more than two parts, exits (log.Fatalf \"failed to parse AMI alias ..., "
    'invalid format", provider pkg/apis/v1/ec2nodeclass.go, every release from 1.0 to 1.15): it restarts, reads '
    "the class again and exits again, so no NodePool of the cluster launches anything.",
    "Write the alias as family@version with a single '@', e.g. al2023@v20240807 or windows2022@latest.",
    origin="ours",
    good=({"spec": {"amiSelectorTerms": [{"alias": "windows2022@latest"}]}},),
    bad=(
        {"spec": {"amiSelectorTerms": [{"alias": "al2@x@y"}]}},
        {"spec": {"amiSelectorTerms": [{"alias": "windows2022@latest@x"}]}},
    ),
)
def alias_format(obj, ctx):
    for index, alias in aliases(obj.spec):
        if amifamily.stops_controller(alias):
            yield Violation(
                alias_path(index),
                f"{alias!r} has {alias.count('@')} '@'; Karpenter's controller exits when it reads it (failed to parse "
                "AMI alias, invalid format) and keeps restarting, so no NodePool of the cluster launches",
                f"keep one '@': {alias.split('@')[0]}@{alias.split('@')[1]}",
            )


@rule(
    "nodeclass/alias-latest",
    WARNING,
    KINDS,
    "An '@latest' alias follows every AMI release and control-plane upgrade, and each new AMI "
    "drifts and replaces all nodes of the class (Windows aliases only allow 'latest', so they are exempt).",
    "Pin a released version, e.g. al2023@v20240807, and bump it deliberately.",
    origin="ours",
    hygiene=True,
    production=ERROR,
    good=({"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}},),
    bad=({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}},),
)
def alias_latest(obj, ctx):
    for index, alias in aliases(obj.spec):
        family_part, _, version = alias.partition("@")
        family = amifamily.of_alias(family_part)
        if version == "latest" and family is not None and family.version_example:
            yield Violation(
                alias_path(index),
                f"alias {alias!r} moves to each new AMI as AWS publishes it; every move drifts and replaces the nodes",
                f"pin a version, e.g. {family.version_example}",
            )


_NOT_WITH_SSM = ("alias", "tags", "id", "name", "owner")


@rule(
    "nodeclass/ssm-parameter-exclusive",
    WARNING,
    KINDS,
    "An AMI term with ssmParameter and other fields: Karpenter resolves only one of them and silently "
    "ignores the rest (CEL does not check this).",
    "Give ssmParameter a term of its own.",
    origin="ours",
    since=Release((1, 4)),
    good=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami"}, {"name": "my-ami"}]}},),
    bad=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami", "name": "my-ami"}]}},),
)
def ssm_parameter_exclusive(obj, ctx):
    for index, term in enumerate(obj.spec.ami_selector_terms or ()):
        if term is None or term.ssm_parameter is None:
            continue
        mixed = [wire for wire in _NOT_WITH_SSM if has_field(term, wire)]
        if mixed:
            yield Violation(
                f"spec.amiSelectorTerms[{index}]",
                f"'ssmParameter' is combined with {', '.join(repr(w) for w in mixed)} in one AMI selector term; "
                "Karpenter uses only one of them and ignores the rest",
            )


# --- IAM ----------------------------------------------------------------------------------

# Any partition and account, as a user may write them (a typo in the account is still an ARN to EC2).
_IAM_ARN = re.compile(r"^arn:[^:]*:iam:[^:]*:[^:]*:(instance-profile|role)/(.+)$")


def _arn_name(value: str, resource: str) -> str | None:
    """The bare name in an IAM ARN of ``resource`` (the last path segment), else None."""
    match = _IAM_ARN.match(value)
    if match and match.group(1) == resource:
        return match.group(2).rsplit("/", 1)[-1]
    return None


@rule(
    "nodeclass/instance-profile-arn",
    ERROR,
    KINDS,
    "instanceProfile given as an ARN: Karpenter passes it to EC2 as a profile name, every launch fails with "
    "'Invalid IAM Instance Profile name'; Karpenter 1.15 reports ValidationSucceeded=False (InstanceProfileNotFound), "
    "earlier releases leave it Unknown.",
    "Give the instance profile's name (the last segment of the ARN).",
    origin="ours",
    good=({"spec": {"role": None, "instanceProfile": "KarpenterNodeProfile"}},),
    bad=(
        {"spec": {"role": None, "instanceProfile": "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile"}},
        {"spec": {"role": None, "instanceProfile": "arn:aws:iam::1:instance-profile/KarpenterNodeProfile"}},
        {"spec": {"role": None, "instanceProfile": "arn:aws-us-gov:iam::123456789012:role/KarpenterNodeRole"}},
    ),
)
def instance_profile_arn(obj, ctx):
    value = obj.spec.instance_profile
    if not value or not value.startswith("arn:"):
        return
    name = _arn_name(value, "instance-profile")
    if name:
        yield Violation(
            "spec.instanceProfile",
            f"instanceProfile must be a name, not an ARN; EC2 rejects the ARN and no node launches (use {name!r})",
            f"instanceProfile: {name}",
        )
    else:  # an ARN of something else, or one IAM would not write: EC2 refuses it just the same
        yield Violation(
            "spec.instanceProfile",
            "instanceProfile must be the name of an instance profile, not an ARN; EC2 rejects it and no node launches",
            "give the instance profile's name (IAM's list-instance-profiles shows it)",
        )


def _role_arn(obj) -> tuple[str, str] | None:
    value = obj.spec.role
    name = _arn_name(value, "role") if value else None
    return (value, name) if name else None


@rule(
    "nodeclass/role-arn",
    ERROR,
    KINDS,
    "role given as an ARN before Karpenter 1.2: Karpenter hands spec.role to IAM as a role name, IAM refuses "
    "it, and no instance profile (so no node) is made.",
    "Give the role's name (the last segment of the ARN).",
    origin="ours",
    until=Release((1, 2)),
    good=({"karpenterVersion": "1.1", "spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"karpenterVersion": "1.1", "spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},),
)
def role_arn(obj, ctx):
    arn = _role_arn(obj)
    if arn:
        yield Violation(
            "spec.role", f"role must be a role name, not an ARN, before Karpenter 1.2 (use {arn[1]!r})", f"role: {arn[1]}"
        )


@rule(
    "nodeclass/role-arn-name",
    WARNING,
    KINDS,
    "role given as an ARN: since 1.2 Karpenter attaches the role by the name after the last '/', so nodes "
    "launch, but the attached role's name never equals spec.role, so from 1.7 on it takes the role for changed "
    "and creates a new instance profile whenever its 15-minute cache expires.",
    "Give the role's name (the last segment of the ARN).",
    origin="ours",
    since=Release((1, 2)),
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},),
)
def role_arn_name(obj, ctx):
    arn = _role_arn(obj)
    if arn:
        yield Violation(
            "spec.role",
            f"role {arn[0]!r} is an ARN; Karpenter uses the name {arn[1]!r}, and comparing that with spec.role "
            "it may keep replacing the node instance profile",
            f"role: {arn[1]}",
        )


@rule(
    "nodeclass/role-path",
    WARNING,
    KINDS,
    "role with an IAM path: IAM reports the bare name, which never equals spec.role, so from 1.7 on "
    "Karpenter may take the role for changed and create a new instance profile each time its cache expires.",
    "Give the role's bare name (the part after the last '/').",
    origin="ours",
    good=({"spec": {"role": "KarpenterNodeRole-demo"}},),
    bad=({"spec": {"role": "team/KarpenterNodeRole-demo"}},),
)
def role_path(obj, ctx):
    value = obj.spec.role
    if value and "/" in value and not _IAM_ARN.match(value):
        name = value.rstrip("/").rsplit("/", 1)[-1]
        yield Violation(
            "spec.role",
            f"role {value!r} includes an IAM path; Karpenter attaches the role by its name {name!r} and, "
            "comparing that with spec.role, may keep replacing the node instance profile",
            f"role: {name}",
        )


# --- block devices ------------------------------------------------------------------------


@rule(
    "nodeclass/block-device-without-ebs",
    ERROR,
    KINDS,
    "A block device mapping without ebs. The CRD accepts it, but Karpenter's controller reads the "
    "missing ebs when it builds the launch template: its reconcile panics and the EC2NodeClass never "
    "gets a status, so its NodePools launch nothing (seen on 1.14.1; 1.15.0 has the same code).",
    "Give the mapping an ebs block (volumeSize or snapshotID), or remove the mapping.",
    origin="ours",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}]}},),
    bad=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]}},),
)
def block_device_without_ebs(obj, ctx):
    for index, mapping in enumerate(obj.spec.block_device_mappings or ()):
        if mapping is not None and mapping.ebs is None:
            yield Violation(f"spec.blockDeviceMappings[{index}]", "the mapping has no ebs; Karpenter's controller panics on it")
