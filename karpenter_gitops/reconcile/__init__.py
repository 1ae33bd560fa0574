"""The one reconcile entry point: what Karpenter will resolve, launch and report, before it does.

Shaped like Karpenter's controllers: small steps, each owning one concern, with declared
dependencies. The instance-type catalogue is hydrated once per run; each EC2NodeClass resolves
its AMIs, subnets, security groups and instance profile independently; the conditions roll up
from those; each NodePool's mapping needs the catalogue and its class's AMIs and subnets. A step
whose dependency is not ready reports ``AwaitingDependency`` instead of a false "no instance
types found", and every failure is classified transient (retry; nothing decided) or persistent.

Used by the CLI (``plan``), the Pulumi dynamic provider and the PR preview alike. What only AWS
reveals is observed under the ``live/`` rules and judged with everything else.

Layer: imports judge, adapters and below.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from karpenter_gitops import families
from karpenter_gitops.adapters.aws import amis as ami_provider
from karpenter_gitops.adapters.aws import instance_profiles, network
from karpenter_gitops.adapters.aws.catalogue import Catalogue, load_catalogue
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.errors import AWSError, TransientAWSError
from karpenter_gitops.adapters.aws.pricing import on_demand_prices
from karpenter_gitops.core import conditions, versions
from karpenter_gitops.core.conditions import StepOutcome
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Observation, Violation
from karpenter_gitops.core.inputs import Cluster, Inputs
from karpenter_gitops.core.mapping import LabelledCatalogue, Mapper, NodeClassTarget
from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.core.plan import NodeClassPlan, NodePoolPlan, Plan
from karpenter_gitops.core.resolved import AMI
from karpenter_gitops.families import family_of
from karpenter_gitops.judge import Judge
from karpenter_gitops.rules import kubelet as kubelet_rules
from karpenter_gitops.reconcile import overlays
from karpenter_gitops.rules import live

Progress = Callable[[str], None]

_AMI_OUTCOMES = {
    # Karpenter's words; which images matched but are unusable is the live/ami-not-available finding.
    ami_provider.AMIOutcome.NOT_FOUND: lambda r: StepOutcome.not_found(),
    ami_provider.AMIOutcome.UNSUPPORTED_ALIAS: lambda r: StepOutcome.not_found(r.message, "UnsupportedAlias"),
    # Karpenter's AMI reconcile returns an error for this one, so AMIsReady stays Unknown (and the plan fails).
    ami_provider.AMIOutcome.ALIAS_NOT_DISCOVERED: lambda r: StepOutcome.errored(),
    # Karpenter leaves AMIsReady Unknown for refused calls too; retrying cannot fix them, so we say False.
    ami_provider.AMIOutcome.AWS_ERROR: lambda r: StepOutcome.not_found(r.message, "AWSError"),
    ami_provider.AMIOutcome.TRANSIENT_ERROR: lambda r: StepOutcome.transient_error(r.message),
}
_PROFILE_NOT_FOUND = {
    instance_profiles.ProfileOutcome.ARN_NOT_NAME: "InstanceProfileIsARN",
    instance_profiles.ProfileOutcome.PATH_IN_NAME: "InstanceProfileNameInvalid",
    instance_profiles.ProfileOutcome.NOT_FOUND: "InstanceProfileNotFound",
    instance_profiles.ProfileOutcome.NO_ROLE: "InstanceProfileHasNoRole",
    instance_profiles.ProfileOutcome.ROLE_NOT_FOUND: "RoleNotFound",
    instance_profiles.ProfileOutcome.AWS_ERROR: "AWSError",
}


@dataclass(frozen=True)
class _Resolved:
    """One NodeClass's resolution steps, each with its outcome."""

    plan: NodeClassPlan
    amis: StepOutcome
    subnets: StepOutcome
    ami_resolution: ami_provider.AMIResolution
    expressions: tuple[kubelet_rules.Evaluated, ...] = ()  # its kubelet expressions per instance type (1.15+)


def uses_alias(inputs: Inputs) -> bool:
    return any(term.alias for nc in inputs.node_classes for term in nc.spec.ami_selector_terms or ())


def reconcile(
    inputs: Inputs,
    *,
    version: versions.Version = versions.DEFAULT,
    kubernetes_version: str | None = None,
    aws: AwsSession | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Resolve every object of ``inputs`` against AWS and predict Karpenter's view of it."""
    kubernetes_version = kubernetes_version or inputs.cluster.kubernetes_version
    if kubernetes_version is None and uses_alias(inputs):
        raise InputError(
            "alias AMI selectors need the cluster's Kubernetes version",
            hint="set karpenter-gitops:cluster.kubernetesVersion or pass --kubernetes-version",
        )
    say = progress or (lambda _message: None)
    aws = aws or AwsSession()
    judge = Judge(version, inputs.policy)
    findings = judge.objects(inputs)
    transient: list[str] = []

    say("loading the instance-type catalogue")
    catalogue = _catalogue_step(aws, cache_dir, transient)

    observed: list[Observation] = []  # what only AWS reveals, judged below like everything else
    resolved: dict[str, _Resolved] = {}
    for node_class in inputs.node_classes:
        say(f"resolving EC2NodeClass {node_class.name}")
        resolved[node_class.name] = _resolve_node_class(
            aws, node_class, kubernetes_version, version, inputs.cluster, catalogue, observed, transient
        )

    mapper, labelled = None, None
    if catalogue.hydrated:  # the instance types' requirements, worked out once per session (a fleet shares them)
        labelled = aws.remember(
            ("labelled catalogue", cache_dir),
            lambda: LabelledCatalogue(catalogue.instance_types, catalogue.offerings, catalogue.region),
        )
        mapper = Mapper(labelled)
    pools: dict[str, NodePoolPlan] = {}
    for pool in inputs.node_pools:
        say(f"mapping NodePool {pool.name}")
        pools[pool.name] = _map_node_pool(pool, inputs, resolved, catalogue, mapper, observed)
    for node_class in inputs.node_classes:
        observed.extend(_unusable_values(node_class, resolved[node_class.name].expressions, pools))

    stalled, seen = overlays.stalled_pools(inputs, version, _unlistable(inputs, resolved))
    observed.extend(seen)
    node_overlays = None
    if inputs.node_overlays:
        say("applying NodeOverlays")
        step = overlays.plan_overlays(
            inputs, version, _overlay_sources(inputs, pools, resolved), labelled,
            on_demand_prices(aws.region), overlays.refused_by_api_server(findings), failing=overlays.runtime_failures(findings),
            every_pool=all(p.mapping is not None or p.not_mapped for p in pools.values()), stalled=stalled,
        )
        node_overlays = step.plan
        pools = {name: dataclasses.replace(p, overlays=step.pools.get(name)) for name, p in pools.items()}
        observed.extend(step.observed)

    findings.extend(judge.findings(observed))
    findings.sort(key=lambda f: f.sort_key)
    return Plan(
        node_classes={name: r.plan for name, r in resolved.items()},
        node_pools=pools,
        findings=tuple(findings),
        aws_calls=aws.call_counts(),
        transient=tuple(dict.fromkeys(transient)),
        node_overlays=node_overlays,
    )


def _unlistable(inputs: Inputs, resolved: dict[str, _Resolved]) -> dict[str, str]:
    """NodePools whose instance types Karpenter cannot list, and why: their EC2NodeClass resolves no subnet."""
    found = {}
    for pool in inputs.node_pools:
        ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
        dependency = resolved.get(ref.name) if ref is not None and ref.is_ec2_node_class and ref.name else None
        if dependency is not None and dependency.subnets.resolution is conditions.Resolution.NOT_FOUND:
            found[pool.name] = f"EC2NodeClass {ref.name} has no subnets"
    return found


def _overlay_sources(inputs: Inputs, pools: dict[str, NodePoolPlan], resolved: dict[str, _Resolved]) -> list[overlays.PoolSource]:
    """The pools the plan mapped, with what the overlay step needs of their class."""
    sources = []
    for pool in inputs.node_pools:
        plan = pools[pool.name]
        if plan.mapping is None:
            continue
        node_class, dependency = inputs.node_class(plan.node_class, pool.source.scope), resolved[plan.node_class].plan
        zones = {subnet.zone for subnet in dependency.subnets}
        sources.append(overlays.PoolSource(pool, plan, node_class, _target(node_class, dependency.amis, zones), dependency.subnets))
    return sources


def _catalogue_step(aws: AwsSession, cache_dir: Path | None, transient: list[str]) -> Catalogue:
    """The catalogue, or an empty one whose message says why: transient trouble, or AWS refused."""
    try:
        catalogue = aws.remember(("catalogue", cache_dir), lambda: load_catalogue(aws, cache_dir=cache_dir))
    except TransientAWSError as error:
        transient.append(f"instance-type catalogue not loaded: {error}")
        return Catalogue(region=aws.region, message=str(error))
    except AWSError as error:  # persistent: reported on every NodePool it leaves unmapped
        return Catalogue(region=aws.region, message=str(error), refused=True)
    if not catalogue.hydrated:
        transient.append(f"instance-type catalogue not loaded: {catalogue.message or 'no answer yet'}")
    return catalogue


def _resolve_node_class(
    aws: AwsSession,
    node_class: EC2NodeClass,
    kubernetes_version: str | None,
    version: versions.Version,
    cluster: Cluster,
    catalogue: Catalogue,
    observed: list[Observation],
    transient: list[str],
) -> _Resolved:
    spec = node_class.spec
    resolution = ami_provider.resolve_amis(
        aws, spec.ami_selector_terms or (), kubernetes_version or "", karpenter_version=version
    )
    amis = StepOutcome.ready() if resolution.ready else _AMI_OUTCOMES[resolution.outcome](resolution)
    subnets, subnet_outcome = _lookup(
        lambda: network.resolve_subnets(aws, spec.subnet_selector_terms or ()), "SubnetSelector did not match any Subnets"
    )
    groups, group_outcome = _lookup(
        lambda: network.resolve_security_groups(aws, spec.security_group_selector_terms or ()),
        "SecurityGroupSelector did not match any SecurityGroups",
    )
    profile_name, profile_outcome = _profile_step(aws, node_class)

    outcomes = {"AMIs": amis, "subnets": subnet_outcome, "security groups": group_outcome, "instance profile": profile_outcome}
    for what, outcome in outcomes.items():
        if outcome.resolution is conditions.Resolution.TRANSIENT_ERROR:
            transient.append(f"EC2NodeClass {node_class.name}: {what} unverified: {outcome.message}")
    observed.extend(_live_observations(node_class, resolution, subnet_outcome, group_outcome, profile_outcome))
    observed.extend(_image_observations(node_class, resolution.amis, kubernetes_version))
    evaluated, expressions = _expression_step(node_class, version, cluster, catalogue)
    observed.extend(_failed_expressions(node_class, evaluated))

    plan = NodeClassPlan(
        conditions=conditions.predict_conditions(
            amis=amis, subnets=subnet_outcome, security_groups=group_outcome, instance_profile=profile_outcome,
            spec=_spec_validation(node_class, version, cluster), expressions=expressions,
        ),
        amis=resolution.amis,
        skipped_amis=resolution.skipped,
        subnets=subnets,
        security_groups=groups,
        instance_profile=profile_name,
    )
    return _Resolved(plan, amis, subnet_outcome, resolution, tuple(evaluated))


def _spec_validation(node_class: EC2NodeClass, version: versions.Version, cluster: Cluster) -> StepOutcome | None:
    """What Karpenter's validation reconciler refuses in the spec itself (1.15+: the kubelet block)."""
    if version < kubelet_rules.OPEN:
        return None
    failure = kubelet_rules.validation_failure(node_class, cluster)
    return StepOutcome.not_found(failure[1], failure[0]) if failure else None


def _expression_step(
    node_class: EC2NodeClass, version: versions.Version, cluster: Cluster, catalogue: Catalogue
) -> tuple[list[kubelet_rules.Evaluated], StepOutcome | None]:
    """The kubelet expressions evaluated for every instance type of the catalogue, as Karpenter 1.15 does
    once the class's dependencies are resolved; until its catalogue is loaded Karpenter requeues."""
    if version < kubelet_rules.OPEN or not kubelet_rules.evaluates(node_class, cluster):
        return [], None
    if not catalogue.hydrated:
        return [], StepOutcome.awaiting("the instance-type catalogue")
    evaluated = kubelet_rules.evaluate_expressions(node_class, catalogue.instance_types)
    failure = kubelet_rules.first_failure(evaluated)
    return evaluated, (StepOutcome.not_found(failure, kubelet_rules.EVALUATION_FAILED) if failure else None)


def _listed(names: list[str], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _failed_expressions(node_class: EC2NodeClass, evaluated: list[kubelet_rules.Evaluated]) -> list[Observation]:
    """One finding per expression that fails on some instance type: how many, which, and Karpenter's words for the first."""
    by_path: dict[str, list[kubelet_rules.Evaluated]] = {}
    for e in evaluated:
        if e.failure:
            by_path.setdefault(e.path, []).append(e)
    types = len({e.instance_type for e in evaluated})
    found = []
    for path, failed in by_path.items():
        message = f"fails on {len(failed)} of {types} instance types ({_listed([e.instance_type for e in failed])}): {failed[0].failure}"
        violation = Violation(path, message, kubelet_rules.failure_hint(failed[0].failure or ""))
        found.append(Observation(live.KUBELET_EXPRESSION_FAILED, node_class.kind, node_class.name, violation, node_class.source))
    return found


def _unusable_values(
    node_class: EC2NodeClass, evaluated: tuple[kubelet_rules.Evaluated, ...], pools: dict[str, NodePoolPlan]
) -> list[Observation]:
    """Values Karpenter accepts but no node can use, on the instance types the class's NodePools launch
    (every type of the catalogue when none of them maps)."""
    launched = {t for p in pools.values() if p.node_class == node_class.name and p.mapping for t in p.mapping.instance_types}
    by_path: dict[str, list[str]] = {}
    for e in evaluated:
        if (not launched or e.instance_type in launched) and (problem := kubelet_rules.implausible(e)):
            by_path.setdefault(e.path, []).append(f"{e.instance_type}: {problem}")
    return [
        Observation(live.KUBELET_EXPRESSION_UNUSABLE, node_class.kind, node_class.name,
                    Violation(path, f"gives a value no node can use on {len(problems)} instance type(s): {_listed(problems, 2)}"),
                    node_class.source)
        for path, problems in by_path.items()
    ]


def _lookup(resolve: Callable[[], tuple], empty_message: str) -> tuple[tuple, StepOutcome]:
    """Run a selector look-up: found, found nothing (persistent), or failed (classified)."""
    try:
        found = resolve()
    except TransientAWSError as error:
        return (), StepOutcome.transient_error(str(error))
    except AWSError as error:
        return (), StepOutcome.not_found(str(error), "AWSError")
    return found, (StepOutcome.ready() if found else StepOutcome.not_found(empty_message))


def _profile_step(aws: AwsSession, node_class: EC2NodeClass) -> tuple[str | None, StepOutcome]:
    spec = node_class.spec
    if spec.instance_profile:
        result = instance_profiles.resolve_instance_profile(aws, spec.instance_profile)
        name = result.profile.name if result.profile else spec.instance_profile
    elif spec.role:
        result = instance_profiles.resolve_role(aws, spec.role)
        name = None  # Karpenter names the profile it manages for a role
    else:
        return None, StepOutcome.not_found("neither role nor instanceProfile is set", "InstanceProfileNotFound")
    if result.ready:
        return name, StepOutcome.ready()
    if result.outcome is instance_profiles.ProfileOutcome.TRANSIENT_ERROR:
        return name, StepOutcome.transient_error(result.message)
    return name, StepOutcome.not_found(result.message, _PROFILE_NOT_FOUND[result.outcome])


def _live_observations(
    node_class: EC2NodeClass,
    resolution: ami_provider.AMIResolution,
    subnets: StepOutcome,
    groups: StepOutcome,
    profile: StepOutcome,
) -> list[Observation]:
    """What only AWS can reveal, under the ``live/`` rule ids."""
    found = []

    def report(rule_id: str, path: str, message: str) -> None:
        found.append(Observation(rule_id, node_class.kind, node_class.name, Violation(path, message), node_class.source))

    if resolution.outcome is ami_provider.AMIOutcome.NOT_FOUND:
        if resolution.skipped:
            unusable = ", ".join(f"{s.id} ({s.reason})" for s in resolution.skipped)
            report(live.AMI_NOT_AVAILABLE, "spec.amiSelectorTerms", f"only unusable images match: {unusable}")
        else:
            report(live.SELECTOR_MATCHES_NOTHING, "spec.amiSelectorTerms", "the AMI selector matches no image")
    if resolution.outcome is ami_provider.AMIOutcome.ALIAS_NOT_DISCOVERED:
        # Karpenter's message names only the alias; why each parameter failed (not published for this
        # Kubernetes version, or ssm:GetParameter denied) is what the user can act on.
        why = ", ".join(resolution.missing_parameters[:2]) + (" …" if len(resolution.missing_parameters) > 2 else "")
        report(live.SELECTOR_MATCHES_NOTHING, "spec.amiSelectorTerms", f"no SSM parameter of the alias names an image: {why}")
    if _matched_nothing(subnets):
        report(live.SELECTOR_MATCHES_NOTHING, "spec.subnetSelectorTerms", "the subnet selector matches no subnet")
    if _matched_nothing(groups):
        report(live.SELECTOR_MATCHES_NOTHING, "spec.securityGroupSelectorTerms", "the security-group selector matches no group")
    if profile.reason == "InstanceProfileHasNoRole":
        report(live.INSTANCE_PROFILE_WITHOUT_ROLE, "spec.instanceProfile", profile.message)
    return found


def _image_observations(node_class: EC2NodeClass, amis, kubernetes_version: str | None) -> list[Observation]:
    """What the names of selected custom-selector images say about the class: another family, another Kubernetes."""
    spec = node_class.spec
    if any(term.alias for term in spec.ami_selector_terms or ()):
        return []  # an alias reads the family's own parameters for the cluster's version
    found, seen = [], set()
    for ami in amis:
        published = families.of_image(ami.name)
        if published is None or ami.id in seen:
            continue
        seen.add(ami.id)
        family, kubernetes = published
        if spec.ami_family not in (None, "Custom", family.name):
            message = (f"image {ami.id} ({ami.name}) is named as a {family.name} image, but amiFamily is "
                       f"{spec.ami_family}: Karpenter bootstraps it as {spec.ami_family}, so the node does not join")
            found.append(Observation(live.AMI_FAMILY_MISMATCH, node_class.kind, node_class.name,
                                     Violation("spec.amiFamily", message, f"amiFamily: {family.name}"), node_class.source))
        if kubernetes_version and kubernetes != kubernetes_version:
            message = (f"image {ami.id} ({ami.name}) is built for Kubernetes {kubernetes}, and the cluster runs "
                       f"{kubernetes_version}: the selector does not pin the version")
            hint = f"put the version in the name, e.g. {ami.name.replace(kubernetes, kubernetes_version, 1)}"
            found.append(Observation(live.AMI_KUBERNETES_VERSION, node_class.kind, node_class.name,
                                     Violation("spec.amiSelectorTerms", message, hint), node_class.source))
    return found


def _matched_nothing(outcome: StepOutcome) -> bool:
    """A look-up that succeeded and found nothing (not one AWS refused)."""
    return outcome.resolution is conditions.Resolution.NOT_FOUND and outcome.reason is None


def _map_node_pool(
    pool: NodePool,
    inputs: Inputs,
    resolved: dict[str, _Resolved],
    catalogue: Catalogue,
    mapper: Mapper | None,
    observed: list[Observation],
) -> NodePoolPlan:
    ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
    class_name = ref.name if ref and ref.name else ""
    if ref is not None and not ref.is_ec2_node_class:
        what = "EKS Auto Mode's NodeClass" if ref.is_auto_mode else f"{ref.group} {ref.kind}"
        return NodePoolPlan(class_name, not_mapped=f"it uses {what} {class_name!r}; only EC2NodeClasses are mapped")
    node_class = inputs.node_class(class_name, pool.source.scope)
    if node_class is None:
        return NodePoolPlan(class_name, awaiting=f"EC2NodeClass {class_name!r} is not in the input")
    dependency = resolved[class_name]
    if mapper is None:
        if catalogue.refused:
            refused = Violation("spec", catalogue.message)
            observed.append(Observation(live.CATALOGUE_REFUSED, pool.kind, pool.name, refused, pool.source))
        return NodePoolPlan(class_name, awaiting=f"instance-type catalogue: {catalogue.message or 'not loaded'}")
    for what, outcome in (("AMIs", dependency.amis), ("subnets", dependency.subnets)):
        if outcome.resolution is not conditions.Resolution.READY:
            return NodePoolPlan(class_name, awaiting=f"EC2NodeClass {class_name} {what}: {outcome.message or 'not ready'}")
    zones = {subnet.zone for subnet in dependency.plan.subnets}
    try:
        mapping = mapper.map_node_pool(_target(node_class, dependency.plan.amis, zones), pool)
    except ValueError as error:  # requirements the offline rules already reject
        return NodePoolPlan(class_name, awaiting=f"requirements not evaluable: {error}")
    if mapping.unserved:
        names = ", ".join(u.type for u in mapping.unserved[:5]) + (" …" if len(mapping.unserved) > 5 else "")
        unserved = Violation(
            "spec.template.spec.requirements",
            f"{len(mapping.unserved)} allowed instance type(s) have no AMI: {names} ({mapping.unserved[0].reason})",
        )
        observed.append(Observation(live.UNSERVED_INSTANCE_TYPES, pool.kind, pool.name, unserved, pool.source))
    return NodePoolPlan(class_name, mapping=mapping)


def _target(node_class: EC2NodeClass, amis: tuple[AMI, ...], zones: set[str]) -> NodeClassTarget:
    """What of a class decides which instance types it launches and their AMIs."""
    spec, family = node_class.spec, family_of(node_class)
    return NodeClassTarget(
        name=node_class.name,
        ami_family=family.name,
        amis=amis,
        zones=frozenset(zones),
        nested_virtualization=bool(spec.cpu_options and spec.cpu_options.nested_virtualization == "enabled"),
        connection_tracking=spec.connection_tracking is not None,
        windows_build=family.windows_build,
        unsupported_types=family.unsupported_types,
    )
