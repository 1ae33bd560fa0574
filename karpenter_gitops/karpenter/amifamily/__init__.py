"""AMI families (Karpenter's ``pkg/providers/amifamily``): one module per family behind one protocol, the one
dispatch point (:mod:`.dispatch`), and the image each instance type launches with (:mod:`.resolver`, after Karpenter's ``MapToInstanceTypes`` in ``resolver.go``).

Each family module (:mod:`.al2`, :mod:`.al2023`, :mod:`.bottlerocket`, :mod:`.windows`,
:mod:`.custom`) defines a :class:`~karpenter_gitops.karpenter.amifamily.protocol.Family`: its ``amiFamily``
name, its alias and the format of an alias version, the Karpenter release that added it, the
SSM parameters an alias reads and the Kubernetes versions Karpenter refuses it for, and its
userData checks. :data:`FAMILIES` lists them in the CRD's order; everything else asks the
functions of :mod:`.dispatch`, whose names this package hands on. Adding a family is its module, its line in :data:`FAMILIES` and the CRD's
``amiFamily`` enum in :mod:`karpenter_gitops.core.model` (a test keeps the two equal).

Layer: imports core only; pure, no I/O.
"""

from karpenter_gitops.karpenter.amifamily.dispatch import (
    FAMILIES,
    Oversized,
    alias_families,
    alias_parameters,
    analyse_userdata,
    by_name,
    family_of,
    of_alias,
    of_image,
    oversized_userdata,
    parse_alias,
    release_userdata_problems,
    size_limit,
    userdata_family,
)
from karpenter_gitops.karpenter.amifamily.protocol import (
    Alias,
    AliasError,
    AliasParameter,
    Family,
    UnsupportedAlias,
    stops_controller,
)

__all__ = [
    "FAMILIES",
    "Alias",
    "AliasError",
    "AliasParameter",
    "Family",
    "Oversized",
    "UnsupportedAlias",
    "alias_families",
    "alias_parameters",
    "analyse_userdata",
    "by_name",
    "family_of",
    "of_alias",
    "of_image",
    "oversized_userdata",
    "parse_alias",
    "release_userdata_problems",
    "size_limit",
    "stops_controller",
    "userdata_family",
]
