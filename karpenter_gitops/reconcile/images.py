"""The images step: an EC2NodeClass's AMI selector resolved as Karpenter's AMI provider does.

Only ``available`` images are ever selected; what matched but is unusable, an alias whose SSM
parameters name no image, and images whose names say another family or Kubernetes version are
observed here (the ``live/`` rules). The mapping of the class's NodePools needs these AMIs.

Layer: a step of reconcile/; imports context, graph, rules, karpenter, adapters and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.adapters.aws import amis as ami_provider
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Observation
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.core.resolved import AMI
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.status.nodeclass_conditions import Resolution, StepOutcome
from karpenter_gitops.reconcile.context import Run, observation, unverified
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.rules import live

_OUTCOMES = {
    # Karpenter's words; which images matched but are unusable is the live/ami-not-available finding.
    ami_provider.AMIOutcome.NOT_FOUND: lambda r: StepOutcome.not_found(),
    ami_provider.AMIOutcome.UNSUPPORTED_ALIAS: lambda r: StepOutcome.not_found(r.message, "UnsupportedAlias"),
    # Karpenter's AMI reconcile returns an error for this one, so AMIsReady stays Unknown (and the plan fails).
    ami_provider.AMIOutcome.ALIAS_NOT_DISCOVERED: lambda r: StepOutcome.errored(),
    # Karpenter leaves AMIsReady Unknown for refused calls too; retrying cannot fix them, so we say False.
    ami_provider.AMIOutcome.AWS_ERROR: lambda r: StepOutcome.not_found(r.message, "AWSError"),
    ami_provider.AMIOutcome.TRANSIENT_ERROR: lambda r: StepOutcome.transient_error(r.message),
    # The controller exits before it writes any status; the class's prediction is no status at all (conditions).
    ami_provider.AMIOutcome.CONTROLLER_EXITS: lambda r: StepOutcome.errored(),
}


@dataclass(frozen=True)
class Images(StepResult):
    resolution: ami_provider.AMIResolution
    outcome: StepOutcome  # what AMIsReady says

    @property
    def ready(self) -> bool:
        return self.outcome.resolution is Resolution.READY

    @property
    def stops_controller(self) -> bool:
        """Karpenter's controller exits reading the selector, so no class of the cluster gets a status."""
        return self.resolution.outcome is ami_provider.AMIOutcome.CONTROLLER_EXITS


def resolve(run: Run, node_class: EC2NodeClass) -> Images:
    resolution = ami_provider.resolve_amis(run.aws, node_class.spec.ami_selector_terms or (), run.kubernetes, release=run.release)
    outcome = StepOutcome.ready() if resolution.ready else _OUTCOMES[resolution.outcome](resolution)
    observed = (*_selector_observations(node_class, resolution), *_name_observations(node_class, resolution.amis, run.kubernetes))
    return Images(resolution, outcome, observed=observed, transient=unverified(node_class, "AMIs", outcome))


def _selector_observations(node_class: EC2NodeClass, resolution: ami_provider.AMIResolution) -> list[Observation]:
    """A selector that matches nothing usable, or an alias whose parameters name no image."""
    selector = "spec.amiSelectorTerms"
    if resolution.outcome is ami_provider.AMIOutcome.NOT_FOUND:
        if resolution.skipped:
            unusable = ", ".join(f"{s.id} ({s.reason})" for s in resolution.skipped)
            return [observation(node_class, live.AMI_NOT_AVAILABLE, selector, f"only unusable images match: {unusable}")]
        return [observation(node_class, live.SELECTOR_MATCHES_NOTHING, selector, "the AMI selector matches no image")]
    if resolution.outcome is ami_provider.AMIOutcome.ALIAS_NOT_DISCOVERED:
        # Karpenter's words (the error it logs) name only the alias; why each parameter failed (not published
        # for this Kubernetes version, or ssm:GetParameter denied) is what the user can act on.
        why = ", ".join(resolution.missing_parameters[:2]) + (" …" if len(resolution.missing_parameters) > 2 else "")
        return [
            observation(
                node_class,
                live.SELECTOR_MATCHES_NOTHING,
                selector,
                f"{resolution.message}: no SSM parameter of the alias names an image: {why}",
            )
        ]
    return []


def _name_observations(
    node_class: EC2NodeClass, amis: tuple[AMI, ...], kubernetes: versions.Kubernetes | None
) -> list[Observation]:
    """What the names of selected custom-selector images say about the class: another family, another Kubernetes."""
    spec = node_class.spec
    if any(term.alias for term in spec.ami_selector_terms or ()):
        return []  # an alias reads the family's own parameters for the cluster's version
    found, seen = [], set()
    for ami in amis:
        published = amifamily.of_image(ami.name)
        if published is None or ami.id in seen:
            continue
        seen.add(ami.id)
        family, built_for = published
        if spec.ami_family not in (None, "Custom", family.name):
            message = (
                f"image {ami.id} ({ami.name}) is named as a {family.name} image, but amiFamily is "
                f"{spec.ami_family}: Karpenter bootstraps it as {spec.ami_family}, so the node does not join"
            )
            found.append(
                observation(node_class, live.AMI_FAMILY_MISMATCH, "spec.amiFamily", message, f"amiFamily: {family.name}")
            )
        if kubernetes and built_for != str(kubernetes):
            message = (
                f"image {ami.id} ({ami.name}) is built for Kubernetes {built_for}, and the cluster runs "
                f"{kubernetes}: the selector does not pin the version"
            )
            hint = f"put the version in the name, e.g. {ami.name.replace(built_for, str(kubernetes), 1)}"
            found.append(observation(node_class, live.AMI_KUBERNETES_VERSION, "spec.amiSelectorTerms", message, hint))
    return found
