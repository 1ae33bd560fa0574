"""The one table of documented disagreements between our ``validate`` and Karpenter (its API server
with the release's CRDs, plus ``RuntimeValidate`` for NodePools), each with its reason.

A verdict that differs and matches no entry here is a bug of ours. Where we are stricter on purpose
our finding is a warning, which is no verdict, so such cases need no entry: an entry never excuses
an error of ours on an object Karpenter accepts unless Karpenter itself refuses it later for a
reason neither judge here can see (the entry says which).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from karpenter_gitops.core import versions

if TYPE_CHECKING:
    from support.conformance import Judgement


@dataclass(frozen=True)
class Documented:
    id: str
    reason: str
    kinds: frozenset[str]
    matches_judgement: Callable[[Judgement], bool]
    releases: tuple[versions.Release, versions.Release] = (versions.OLDEST, versions.NEWEST)

    def matches(self, judgement: Judgement) -> bool:
        return (
            judgement.doc.get("kind") in self.kinds
            and self.releases[0] <= judgement.release <= self.releases[1]
            and self.matches_judgement(judgement)
        )


def _only(judgement: Judgement, accepted: bool, rule: Callable[[str], bool]) -> bool:
    """Karpenter accepted (or refused) it and every error of ours is of the rules ``rule`` picks."""
    errors = judgement.our_errors
    return judgement.theirs.rejects != accepted and bool(errors) and all(rule(f.rule) for f in errors)


DOCUMENTED: tuple[Documented, ...] = (
    Documented(
        "node-class-ref-not-served",
        "A nodeClassRef whose group or kind the AWS provider does not serve passes the CRD and RuntimeValidate, "
        "but Karpenter's NodePool readiness controller skips the NodePool: it never becomes Ready and launches "
        "nothing. We refuse it (nodepool/node-class-ref-kind); neither judge here sees that outcome.",
        frozenset({"NodePool"}),
        lambda j: _only(j, True, lambda rule: rule == "nodepool/node-class-ref-kind"),
    ),
    Documented(
        "block-device-without-ebs",
        "A blockDeviceMappings entry without ebs passes the CRD, but Karpenter's controller reads the missing ebs "
        "when it builds the launch template: its reconcile panics and the EC2NodeClass never gets a status "
        "(seen on 1.14.1 by tests/real/test_karpenter_controller.py). We refuse it (nodeclass/block-device-without-ebs); "
        "neither judge here runs the controller.",
        frozenset({"EC2NodeClass"}),
        lambda j: _only(j, True, lambda rule: rule == "nodeclass/block-device-without-ebs"),
    ),
    Documented(
        "alias-two-ats",
        "An alias with a second '@' (al2@x@y) passes the CRD, whose rules read only the parts around the first; "
        "Karpenter's controller splits on every '@' and exits (log.Fatalf \"failed to parse AMI alias\", in every "
        "provider release). We refuse it (nodeclass/alias-format). The 1.14 and 1.15 oracles run that code and say "
        "so (ControllerExits); for older releases only the API server judges here.",
        frozenset({"EC2NodeClass"}),
        lambda j: _only(j, True, lambda rule: rule == "nodeclass/alias-format"),
        releases=(versions.OLDEST, (1, 13)),
    ),
    Documented(
        "alias-version-not-published",
        "An alias whose version is not in the family's version format (al2@v1.32.0) passes the CRD; Karpenter asks "
        "SSM for a parameter no one publishes, finds no image and keeps the EC2NodeClass not Ready (AMIsReady "
        "False). We refuse it (nodeclass/alias-version-format); neither judge here reads SSM.",
        frozenset({"EC2NodeClass"}),
        lambda j: _only(j, True, lambda rule: rule == "nodeclass/alias-version-format"),
    ),
    Documented(
        "kubelet-checks-of-1.15",
        "Karpenter 1.15 checks the kubelet block in its controller (kubelet/...), not in the CRD; its Go module "
        "needs go >= 1.26.9, newer than this machine's toolchain, so no oracle of 1.15 can judge them and our "
        "kubelet rules stand alone (transcribed from its source, tests/rules/test_kubelet.py).",
        frozenset({"EC2NodeClass"}),
        lambda j: _only(j, True, lambda rule: rule.startswith("kubelet/")),
        releases=((1, 15), (1, 15)),
    ),
)
