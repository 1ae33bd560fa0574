"""The ``render`` use case: write the desired manifests for Argo CD / Flux, only when they are sound.

Nothing is written when the objects have error findings, when a reconciliation (if asked for)
predicts a persistent problem or met transient AWS trouble, or when a value is a Pulumi secret
render cannot decrypt. Writing is all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from karpenter_gitops.app.preview_result import not_ready
from karpenter_gitops.app.sources import Sources
from karpenter_gitops.core import typed_schema
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.judge import validate
from karpenter_gitops.judge.report import Report
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.output import manifests


@dataclass(frozen=True)
class Rendered:
    """What became of a render: written (``exit_code`` OK), or refused and why."""

    exit_code: Outcome
    report: Report | None = None  # refused by validation: its findings
    problems: tuple[str, ...] = ()  # refused by the reconciliation: what it predicted
    refusal: str | None = None  # why nothing was written, in a few words
    files: int = 0
    changed: bool = False
    stream: str = ""  # the manifests as one YAML stream, when rendered to standard output


def render_sources(sources: Sources, out: Path | None, plan: Callable[[Inputs], Plan] | None = None) -> Rendered:
    """Check ``sources`` (and reconcile them with ``plan`` when given), then write one file per object to
    ``out``, or (``out`` None) return them as one YAML stream, as an Argo CD plugin prints them."""
    inputs = sources.inputs
    if out is not None:
        manifests.check_ours(out)
    secret = next((o for o in inputs.observations if o.rule == typed_schema.SECRET), None)
    if secret:
        raise InputError(
            f"{secret.kind}/{secret.name} {secret.violation.path} is a Pulumi secret, which render cannot decrypt; "
            f"{out or 'nothing'} untouched",
            secret.file,
            hint="render it with `pulumi up` and karpenter-gitops:renderYamlToDirectory",
        )
    report = validate(inputs, sources.release)
    if report.errors:
        return Rendered(report.exit_code, report=report, refusal=f"{report.errors} error finding(s)")
    if plan is not None:
        planned = plan(inputs)
        if planned.exit_code is not Outcome.OK:
            problems = [f"transient: {t}" for t in planned.transient]
            problems += [f"{f.kind}/{f.name} {f.path}: {f.message}" for f in planned.findings if f.severity is Severity.ERROR]
            problems += [f"EC2NodeClass/{name} not Ready: {why}" for name, why in not_ready(planned)]
            why = "AWS trouble, nothing decided (retry)" if planned.exit_code is Outcome.TRANSIENT else "persistent problems"
            return Rendered(planned.exit_code, problems=tuple(problems), refusal=why)
    files = manifests.manifest_files(inputs)
    if out is None:
        stream = "".join(f"---\n{files[name]}" for name in sorted(files))
        return Rendered(Outcome.OK, files=len(files), stream=stream)
    try:
        changed = manifests.write_atomically(out, files)
    except OSError as error:  # ``out`` is as it was: the write is all or nothing
        raise InputError(f"cannot write: {error.strerror or error}", str(out), hint="check --out") from None
    return Rendered(Outcome.OK, files=len(files), changed=changed)
