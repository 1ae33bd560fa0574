"""The catalogue step: the region's instance types and their offerings, loaded once per run.

Everything that lists instance types needs it: the mapping of each NodePool and the kubelet
expressions Karpenter 1.15 evaluates per instance type. Until it is loaded it is not ready, and
those steps wait rather than find "no instance types". Its instance types are labelled once per
AWS session, as a fleet's stacks of one region share them.

Layer: a step of reconcile/; imports context, graph, adapters and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.adapters.aws.error_kinds import AWSError, TransientAWSError
from karpenter_gitops.adapters.aws.instance_types import Catalogue, load_catalogue
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue, Mapper
from karpenter_gitops.reconcile.context import Run
from karpenter_gitops.reconcile.graph import StepResult


@dataclass(frozen=True)
class LoadedCatalogue(StepResult):
    """The catalogue, or an empty one whose message says why not: transient trouble, or AWS refused."""

    catalogue: Catalogue
    labelled: LabelledCatalogue | None = None  # the instance types' requirements, once hydrated
    mapper: Mapper | None = None  # maps every NodePool of the run over them (it remembers what it worked out)

    @property
    def ready(self) -> bool:
        return self.catalogue.hydrated


def load(run: Run) -> LoadedCatalogue:
    aws, cache_dir = run.aws, run.cache_dir
    try:
        catalogue = aws.remember(("catalogue", cache_dir), lambda: load_catalogue(aws, cache_dir=cache_dir))
    except TransientAWSError as error:
        return LoadedCatalogue(Catalogue(region=aws.region, message=str(error)), transient=(_not_loaded(str(error)),))
    except AWSError as error:  # persistent: each NodePool it leaves unmapped reports it
        return LoadedCatalogue(Catalogue(region=aws.region, message=str(error), refused=True))
    if not catalogue.hydrated:
        return LoadedCatalogue(catalogue, transient=(_not_loaded(catalogue.message or "no answer yet"),))
    labelled = aws.remember(
        ("labelled catalogue", cache_dir),
        lambda: LabelledCatalogue(catalogue.instance_types, catalogue.offerings, catalogue.region),
    )
    return LoadedCatalogue(catalogue, labelled, Mapper(labelled))


def _not_loaded(why: str) -> str:
    return f"instance-type catalogue not loaded: {why}"
