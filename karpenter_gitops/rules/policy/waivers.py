"""The hygiene policy on waivers (``policy/waiver-expired``), observed by the judge while it applies them
(:mod:`karpenter_gitops.judge.waiving`): an expired waiver is a finding of its own. A warning like every
house-style policy: the finding it no longer waives comes back with its own severity, and blocks if that
is an error."""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.registry import Stage, rule

WAIVER_EXPIRED = "policy/waiver-expired"

rule(
    WAIVER_EXPIRED,
    Severity.WARNING,
    ("Waiver",),
    "A waiver past its expiry date: it no longer waives anything, and the exception it granted needs a "
    "decision. (Observed while applying waivers, not by a check.)",
    "Fix the findings it waived and delete the waiver, or agree a new expiry date.",
    stage=Stage.WAIVERS,
    origin="ours",
    hygiene=True,
)
