"""``status.amis`` as Karpenter would compute it from ``amiSelectorTerms`` (``pkg/providers/amifamily/ami.go``
of github.com/aws/karpenter-provider-aws, which ``pkg/controllers/nodeclass/ami.go`` writes to the status).

Differences from Karpenter, on purpose: images a selector matched but Karpenter cannot use
(state pending/failed/disabled, an unsupported architecture) are reported in ``skipped`` with
the reason instead of vanishing; and a transient failure anywhere (an SSM lookup included) makes
the whole resolution transient rather than silently shrinking the AMI list.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from karpenter_gitops.adapters.aws.client import AwsSession, tag_filters
from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError, TransientAWSError
from karpenter_gitops.core import versions
from karpenter_gitops.core.model import AMISelectorTerm
from karpenter_gitops.core.resolved import AMI, SkippedAMI
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily import protocol

DEFAULT_OWNERS_FOR_NAME = ("self", "amazon")  # a name alone must not pick up look-alike public AMIs


class AMIOutcome(enum.StrEnum):
    """How the resolution ended; the comment says what Karpenter does with ``AMIsReady``."""

    READY = "Ready"  # True
    NOT_FOUND = "AMINotFound"  # False: "AMISelector did not match any AMIs"
    ALIAS_NOT_DISCOVERED = "AliasNotDiscovered"  # reconcile error; stays Unknown
    UNSUPPORTED_ALIAS = "UnsupportedAlias"  # False, terminal
    TRANSIENT_ERROR = "TransientError"  # reconcile error; stays Unknown, retry later
    AWS_ERROR = "AWSError"  # AWS refused (access denied, malformed input); stays Unknown
    CONTROLLER_EXITS = "ControllerExits"  # the controller exits reading the alias: no status at all


@dataclass(frozen=True)
class AMIResolution:
    """``amis`` is ``status.amis`` (creation date desc, then id); empty unless the outcome is READY."""

    outcome: AMIOutcome
    message: str
    amis: tuple[AMI, ...] = ()
    skipped: tuple[SkippedAMI, ...] = ()
    missing_parameters: tuple[str, ...] = ()  # SSM parameters that gave no image id, with why

    @property
    def ready(self) -> bool:
        return self.outcome is AMIOutcome.READY


@dataclass(frozen=True)
class _ImageQuery:
    filters: tuple[tuple[str, tuple[str, ...]], ...]
    owners: tuple[str, ...] = ()

    def params(self) -> dict:
        params: dict = {
            "Filters": [{"Name": name, "Values": list(values)} for name, values in self.filters],
            "IncludeDeprecated": True,
            "IncludeDisabled": True,  # so disabled matches can be reported as skipped
            "MaxResults": 1000,
        }
        if self.owners:
            params["Owners"] = list(self.owners)
        return params


def resolve_amis(
    aws: AwsSession,
    terms: Sequence[AMISelectorTerm],
    kubernetes: versions.Kubernetes | None,
    *,
    release: versions.Release = versions.DEFAULT,
    now: datetime | None = None,
) -> AMIResolution:
    """Resolve ``terms`` into the AMIs Karpenter would put in ``status.amis``, plus what it skipped and why."""
    now = now or datetime.now(UTC)
    alias = next((term.alias for term in terms if term.alias), None)
    try:
        if alias:
            queries, known, missing = _alias_queries(aws, alias, kubernetes, release)
            if not queries:
                return AMIResolution(
                    AMIOutcome.ALIAS_NOT_DISCOVERED,
                    f"failed to discover any AMIs for alias (alias={alias})",
                    missing_parameters=missing,
                )
        else:
            queries, missing = _term_queries(aws, terms)
            known = {}
        found = [image for query in queries for image in _describe(aws, query)]
    except protocol.AliasStopsController as error:
        return AMIResolution(AMIOutcome.CONTROLLER_EXITS, str(error))
    except protocol.AliasError as error:
        return AMIResolution(AMIOutcome.UNSUPPORTED_ALIAS, str(error))
    except TransientAWSError as error:
        return AMIResolution(AMIOutcome.TRANSIENT_ERROR, str(error))
    except PersistentAWSError as error:
        return AMIResolution(AMIOutcome.AWS_ERROR, str(error))

    try:
        images = {image["ImageId"]: image for image in found}
        amis, skipped = select_amis(images.values(), known, now)
    except (KeyError, TypeError, ValueError) as error:  # a response shape this code does not know
        return AMIResolution(AMIOutcome.AWS_ERROR, f"DescribeImages returned an image this tool cannot read: {_what(error)}")
    if not amis:
        why = f" (matched but unusable: {', '.join(f'{s.id} {s.reason}' for s in skipped)})" if skipped else ""
        return AMIResolution(AMIOutcome.NOT_FOUND, f"AMISelector did not match any AMIs{why}", (), skipped, missing)
    return AMIResolution(AMIOutcome.READY, f"{len(amis)} AMI entries selected", amis, skipped, missing)


def _alias_queries(aws: AwsSession, alias: str, kubernetes: versions.Kubernetes | None, release: versions.Release):
    """One image-id query for every image the alias's SSM parameters name; failed lookups are skipped."""
    if kubernetes is None:
        raise protocol.AliasError(f"alias {alias} needs the cluster's Kubernetes version")
    parameters = amifamily.alias_parameters(amifamily.parse_alias(alias), kubernetes, release)
    known: dict[str, tuple[protocol.RequirementSet, ...]] = {}
    missing = []
    for parameter in parameters:
        image_id = _ssm_image_id(aws, parameter.path, missing)
        if image_id:
            known[image_id] = known.get(image_id, ()) + parameter.requirement_sets
    queries = [_ImageQuery((("image-id", tuple(sorted(known))),))] if known else []
    return queries, known, tuple(missing)


def _term_queries(aws: AwsSession, terms: Sequence[AMISelectorTerm]):
    """Karpenter's queries: all ids (direct or via SSM) in one, then one per name/tags term."""
    ids: list[str] = []
    missing: list[str] = []
    queries: list[_ImageQuery] = []
    for term in terms:
        if term.id:
            ids.append(term.id)
        elif term.ssm_parameter:
            image_id = _ssm_image_id(aws, term.ssm_parameter, missing)
            if image_id:
                ids.append(image_id)
        else:
            filters = [(f["Name"], tuple(f["Values"])) for f in tag_filters(term.tags)]
            if term.name:
                filters.insert(0, ("name", (term.name,)))
            owners = (term.owner,) if term.owner else DEFAULT_OWNERS_FOR_NAME if term.name else ()
            if filters:
                queries.append(_ImageQuery(tuple(filters), owners))
    if ids:
        queries.insert(0, _ImageQuery((("image-id", tuple(sorted(set(ids)))),)))
    return queries, tuple(missing)


def _ssm_image_id(aws: AwsSession, name: str, missing: list[str]) -> str | None:
    """The AMI id an SSM parameter holds, or None (noted in ``missing``) when it is absent, denied or not an AMI id."""
    try:
        value = aws.call("ssm", "GetParameter", Name=name)["Parameter"]["Value"]
    except PersistentAWSError as error:
        missing.append(f"{name} ({error.code})")
        return None
    if not value.startswith("ami-"):
        missing.append(f"{name} (value {value!r} is not an AMI id)")
        return None
    return value


def _describe(aws: AwsSession, query: _ImageQuery) -> list[dict]:
    return aws.paginate("ec2", "DescribeImages", "Images", **query.params())


def select_amis(
    images, known: dict[str, tuple[protocol.RequirementSet, ...]], now: datetime
) -> tuple[tuple[AMI, ...], tuple[SkippedAMI, ...]]:
    """Karpenter's ``amis()``: usable images only, one per requirement set, newest first."""
    best: dict[protocol.RequirementSet, AMI] = {}
    skipped = []
    for image in images:
        image_id, name = image["ImageId"], image.get("Name", "")
        state, arch = image.get("State", "available"), protocol.KUBERNETES_ARCH.get(image.get("Architecture", ""))
        if state != "available":
            skipped.append(SkippedAMI(image_id, name, f"state is {state}; Karpenter selects only available images"))
            continue
        if arch is None:
            reason = f"architecture {image.get('Architecture')} is not supported (only x86_64 and arm64)"
            skipped.append(SkippedAMI(image_id, name, reason))
            continue
        deprecation = image.get("DeprecationTime")
        deprecated = bool(deprecation) and _timestamp(deprecation) <= now
        for requirements in protocol.image_requirements(known.get(image_id, ()), arch):
            candidate = AMI(image_id, name, arch, image.get("CreationDate", ""), deprecated, requirements)
            kept = best.get(requirements)
            if kept is None or _preference(candidate) > _preference(kept):
                best[requirements] = candidate
    amis = sorted(best.values(), key=lambda ami: (-_timestamp(ami.creation_date).timestamp(), ami.id, ami.requirements))
    return tuple(amis), tuple(sorted(skipped, key=lambda s: s.id))


def _preference(ami: AMI) -> tuple:
    """Non-deprecated beats deprecated, then the newer creation date, then the greater name."""
    return (not ami.deprecated, _timestamp(ami.creation_date), ami.name)


def _timestamp(text: str) -> datetime:
    if not text:
        return datetime.min.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        raise ValueError(f"CreationDate or DeprecationTime {text!r} is not an ISO 8601 time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _what(error: Exception) -> str:
    return f"field {error.args[0]} is missing" if isinstance(error, KeyError) else str(error)
