"""The one dispatch point over the AMI families: which family an image name, an ``amiFamily``
value or an alias names; how Karpenter reads an alias and which SSM parameters it asks; which
family judges a class's userData, and that judgement.

Layer: over the family modules, which never import it or each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

from karpenter_gitops.core import versions
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.core.schema_fields import SecretValue
from karpenter_gitops.karpenter.amifamily import al2, al2023, bottlerocket, custom, windows
from karpenter_gitops.karpenter.amifamily.protocol import (
    ALIAS,
    LATEST,
    Alias,
    AliasError,
    AliasParameter,
    AliasStopsController,
    Family,
    UnsupportedAlias,
    stops_controller,
)
from karpenter_gitops.karpenter.amifamily.userdata import common
from karpenter_gitops.karpenter.amifamily.userdata.common import MAX_BYTES
from karpenter_gitops.karpenter.amifamily.userdata.problems import SIZE_LIMIT, Problem

FAMILIES: tuple[Family, ...] = (al2.FAMILY, al2023.FAMILY, bottlerocket.FAMILY, custom.FAMILY, *windows.FAMILIES)
# From 1.14 Karpenter's launch-template validation names EC2's refusal of oversized userData in a condition.
USERDATA_REFUSED_AT_LAUNCH_SINCE = versions.Release((1, 14))
_BY_NAME = {family.name: family for family in FAMILIES}
_BY_ALIAS = {family.alias: family for family in FAMILIES if family.alias}


def of_image(name: str) -> tuple[Family, str] | None:
    """The family whose published images are named like ``name``, with the Kubernetes minor in the name."""
    for family in FAMILIES:
        match = family.image_name.match(name) if family.image_name else None
        if match:
            return family, match.group("k8s")
    return None


def by_name(name: str | None) -> Family | None:
    """The family an ``amiFamily`` value names."""
    return _BY_NAME.get(name) if name else None


def of_alias(alias_family: str) -> Family | None:
    """The family of an alias's family part (``al2023`` of ``al2023@v20240807``)."""
    return _BY_ALIAS.get(alias_family)


@cache
def alias_families(release: versions.Release) -> dict[str, str]:
    """alias family → amiFamily, in the CRD's order, of the families ``version`` knows."""
    return {f.alias: f.name for f in FAMILIES if f.alias and (f.since is None or release >= f.since)}


def parse_alias(text: str) -> Alias:
    """``family@version``, or an AliasError saying why Karpenter cannot read it."""
    if stops_controller(text):
        raise AliasStopsController(f"failed to parse AMI alias {text!r}, invalid format")
    match = ALIAS.match(text.strip())
    if not match:
        raise AliasError(f"alias {text!r} is improperly formatted, must match the format 'family@version'")
    family_part, version = match.groups()
    family = of_alias(family_part)
    if family is None:
        raise AliasError(f"alias family {family_part!r} is not supported, use one of {', '.join(_BY_ALIAS)}")
    if family.version_format is None and version != LATEST:
        raise AliasError(f"alias {text!r}: windows families may only specify version 'latest'")
    return Alias(family_part, version)


def alias_parameters(
    alias: Alias, kubernetes: versions.Kubernetes, release: versions.Release = versions.DEFAULT
) -> tuple[AliasParameter, ...]:
    """The SSM parameters ``alias`` reads on a cluster running ``kubernetes``, in Karpenter's order.

    Raises UnsupportedAlias for the combinations Karpenter refuses (e.g. AL2 on 1.33+).
    """
    family = of_alias(alias.family)
    if family is None or family.parameters is None:
        raise AliasError(f"alias family {alias.family!r} is not supported, use one of {', '.join(_BY_ALIAS)}")
    refused = family.unsupported(kubernetes, release)
    if refused:
        raise UnsupportedAlias(refused)
    return family.parameters(alias, str(kubernetes), release)


def family_of(node_class: EC2NodeClass) -> Family:
    """The family Karpenter uses for a class: ``spec.amiFamily``, else the alias's family, else Custom."""
    return (
        by_name(userdata_family(node_class.spec.ami_family, (t.alias for t in node_class.spec.ami_selector_terms or ())))
        or custom.FAMILY
    )


def userdata_family(ami_family: str | None, aliases: Iterable[str | None] = ()) -> str | None:
    """The family to judge userData by: amiFamily if set, else the alias's family."""
    if ami_family:
        return ami_family
    for alias in aliases:
        if alias:
            family = of_alias(alias.partition("@")[0].lower())
            return family.name if family else None
    return None


@lru_cache(maxsize=256)
def analyse_userdata(text: str, ami_family: str | None) -> tuple[Problem, ...]:
    """Every problem of ``text`` as userData for ``ami_family`` (None or unknown: only the common checks)."""
    problems = list(common.size(text))
    folded = common.folded(text)
    if folded:  # the family's format is broken beyond reading; report the cause only
        problems.append(folded)
    elif (family := by_name(ami_family)) is not None:
        problems.extend(family.check_userdata(text))
    return tuple(problems)


def release_userdata_problems(text: str, ami_family: str | None, aliases: Iterable[str | None]) -> tuple[Problem, ...]:
    """Bottlerocket settings in ``text`` that the Bottlerocket release a class's alias pins does not have
    (none when the class is not Bottlerocket, or picks its AMI by id or name: the release is not known offline)."""
    given = [alias for alias in aliases if alias]
    if userdata_family(ami_family, given) != "Bottlerocket":
        return ()
    for alias in given:
        family, _, version = alias.partition("@")
        if family.lower() == "bottlerocket":
            return tuple(bottlerocket.release_problems(text, version.lower()))
    return ()


@dataclass(frozen=True)
class Oversized:
    """A class whose userData, merged as Karpenter merges it, is more than EC2 accepts."""

    family: str
    written: int  # bytes of spec.userData as written
    rendered: int  # bytes of the smallest userData Karpenter can send EC2 for it (decoded, as EC2 counts)


def oversized_userdata(node_class: EC2NodeClass, release: versions.Release) -> Oversized | None:
    """How far over EC2's 16,384 bytes the userData Karpenter sends for this class is certain to be, or None
    when it may fit (no userData, a secret, an unknown family, or text Karpenter cannot merge at all)."""
    spec = node_class.spec
    if not spec.user_data or isinstance(spec.user_data, SecretValue):
        return None
    name = userdata_family(spec.ami_family, (t.alias for t in spec.ami_selector_terms or ()))
    size = _rendered_size(spec.user_data, name, release)
    if size is None or size <= MAX_BYTES:
        return None
    return Oversized(name or "", len(spec.user_data.encode("utf-8")), size)


def size_limit(node_class: EC2NodeClass, release: versions.Release) -> list[Problem]:
    """``userdata/size-limit``: the merged userData over EC2's limit while the text alone fits (over as written,
    ``userdata/size`` says so already)."""
    found = oversized_userdata(node_class, release)
    if found is None or found.written > MAX_BYTES:
        return []
    condition = (
        "; Karpenter reports ValidationSucceeded=False, reason UserDataSizeLimitExceeded"
        if release >= USERDATA_REFUSED_AT_LAUNCH_SINCE
        else ""
    )
    return [
        Problem(
            SIZE_LIMIT,
            f"the userData Karpenter sends EC2 for this {found.family} class is at least {found.rendered:,} bytes "
            f"(these {found.written:,} bytes merged with Karpenter's own bootstrap, before the cluster's CA bundle and "
            f"endpoint are added); EC2 accepts at most {MAX_BYTES:,}, so ec2:CreateLaunchTemplate refuses it and no "
            f"node launches{condition}",
            f"cut at least {found.rendered - MAX_BYTES:,} bytes, more to leave room for the CA bundle: fetch bulky "
            "content (scripts, certificates) from S3 or SSM at boot",
        )
    ]


@lru_cache(maxsize=256)
def _rendered_size(text: str, ami_family: str | None, release: versions.Release) -> int | None:
    family = by_name(ami_family)
    rendered = family.render_userdata(text, release) if family else None
    return None if rendered is None else len(rendered.encode("utf-8"))
