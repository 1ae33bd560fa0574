"""What every userData rule is made of: the analysis of an EC2NodeClass's userData run once per object
(:meth:`~karpenter_gitops.rules.registry.Context.derived`), a rule that reports the problems of one id, and the
examples the rules show (a class of each AMI family with a given userData).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, EC2NodeClass
from karpenter_gitops.core.schema_fields import SecretValue
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata.problems import Problem
from karpenter_gitops.rules.registry import Context, rule

PATH = "spec.userData"


AL2 = {"amiSelectorTerms": [{"alias": "al2@v20240807"}]}


AL2023 = {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}


BOTTLEROCKET = {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0"}]}


WINDOWS = {"amiSelectorTerms": [{"alias": "windows2022@latest"}]}


CUSTOM = {"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}]}


def example(family: Mapping[str, Any], user_data: str) -> dict:
    """An example: the base EC2NodeClass with this family's AMI and ``user_data``."""
    return {"spec": {**family, "userData": user_data}}


def bootstrap_call(extra_args: str, separator: str = " ") -> str:
    return f"#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args{separator}{extra_args}\n"


def node_config(taint: str) -> str:
    return (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n"
        f"      registerWithTaints:\n      - {taint}\n"
    )


ByProblem = dict[str, tuple[Violation, ...]]  # problem id -> its violations


def _by_id(problems: Iterable[Problem]) -> ByProblem:
    found: ByProblem = {}
    for p in problems:
        found[p.rule] = (*found.get(p.rule, ()), Violation(PATH, p.message, p.hint))
    return found


def problems_of(obj: EC2NodeClass) -> ByProblem:
    spec = obj.spec
    if not spec.user_data or isinstance(spec.user_data, SecretValue):  # a secret is checked at preview
        return {}
    aliases = (t.alias for t in spec.ami_selector_terms or ())
    return _by_id(amifamily.analyse_userdata(spec.user_data, amifamily.userdata_family(spec.ami_family, aliases)))


def release_problems_of(obj: EC2NodeClass) -> ByProblem:
    """Bottlerocket settings the release behind the class's bottlerocket alias does not have."""
    spec = obj.spec
    if not spec.user_data or isinstance(spec.user_data, SecretValue):
        return {}
    aliases = (t.alias for t in spec.ami_selector_terms or ())
    return _by_id(amifamily.release_userdata_problems(spec.user_data, spec.ami_family, aliases))


def userdata_rule(
    id: str,
    severity: Severity,
    doc: str,
    fix: str,
    *,
    good: Iterable[Mapping[str, Any]],
    bad: Iterable[Mapping[str, Any]],
    origin: str = "ours",
    problem: str | None = None,
    since: Release | None = None,
    until: Release | None = None,
    source: Callable[[EC2NodeClass], ByProblem] = problems_of,
) -> None:
    """A rule reporting the problems of one id (``problem``, default the rule's own) that ``source`` finds."""
    kind = problem or id

    @rule(id, severity, [EC2NODECLASS], doc, fix, origin=origin, since=since, until=until, good=good, bad=bad)
    def check(obj: EC2NodeClass, ctx: Context) -> Iterable[Violation]:
        return ctx.derived(source, obj).get(kind, ())


SCRIPT = "#!/bin/bash\necho hello > /tmp/x\n"


MIME = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n--BOUNDARY\n'
    'Content-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho hello\n--BOUNDARY--\n'
)
