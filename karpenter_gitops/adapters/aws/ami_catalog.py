"""AMI facts for ``bump`` from AWS: published alias releases (SSM) and selector resolution (EC2).

Transient trouble raises :class:`AwsUnavailable`: nothing may be decided, or written, on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpenter_gitops.adapters.aws.amis import AMIOutcome, AMIResolution, resolve_amis
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.error_kinds import TransientAWSError
from karpenter_gitops.core import versions
from karpenter_gitops.core.model import AMISelectorTerm


class AwsUnavailable(Exception):
    """AWS did not answer (throttled, unreachable, 5xx): nothing was decided and nothing may be written."""


@dataclass
class AwsAmiCatalog:
    aws: AwsSession
    kubernetes: versions.Kubernetes | None
    release: versions.Release = versions.DEFAULT

    def parameters(self, path: str) -> dict[str, str]:
        try:
            found = self.aws.paginate("ssm", "GetParametersByPath", "Parameters", Path=path, Recursive=True)
        except TransientAWSError as error:
            raise AwsUnavailable(str(error)) from error
        return {parameter["Name"]: parameter["Value"] for parameter in found}

    def resolve(self, terms: Sequence[AMISelectorTerm]) -> AMIResolution:
        resolution = resolve_amis(self.aws, terms, self.kubernetes, release=self.release)
        if resolution.outcome is AMIOutcome.TRANSIENT_ERROR:
            raise AwsUnavailable(resolution.message)
        return resolution
