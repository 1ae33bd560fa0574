"""``karpenter-gitops validate``: offline checks of manifests and stack files."""

from __future__ import annotations

import click

from karpenter_gitops.app.validate import Request, validate
from karpenter_gitops.cli import options
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS
from karpenter_gitops.core.outcome import Outcome


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@options.stacks("Also read stacks/Pulumi.NAME.yaml; several (or --all-stacks) judge each stack as its own cluster.")
@click.option(
    "--crd",
    "crd_paths",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Also check with these CRDs (a file, or a directory such as the Helm chart's crds/); repeatable.",
)
@click.option(
    "--context",
    "context_paths",
    multiple=True,
    type=click.Path(allow_dash=True),
    metavar="PATH",
    help="The rest of the repository (e.g. --context .): its EC2NodeClasses resolve NodePool references; "
    "nothing there is judged. Repeatable.",
)
@click.option(
    "--policy/--no-policy",
    default=False,
    help="Also report the house-style policies (advisory unless raised) and apply waivers (--no-policy: not, whatever "
    "the configuration file says).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Judge again even when nothing changed since a run with the same inputs and options (the verdict cache "
    "under the user cache directory is neither read nor written; --crd files compiled by an earlier run are still "
    "loaded as compiled, which changes no verdict).",
)
@click.option(
    "--waivers",
    "waiver_file",
    type=click.Path(),
    metavar="FILE",
    help=f"Waiver file for --policy (default: {DEFAULT_WAIVERS} when it exists).",
)
@options.kustomize
@options.policy_file
@options.karpenter
@options.allow_empty
@options.show_info
@options.quiet
@options.output_format(
    "text",
    "json",
    "jsonl",
    "github",
    "sarif",
    "junit",
    help="Output format; jsonl prints one JSON object per finding, then one with the summary (from 100 MB of input, "
    "the run is judged in parts, each part's findings printed as it is judged, in memory that does not grow with "
    "the input); github prints GitHub Actions annotations (::error file=…,line=…::…); sarif a SARIF 2.1.0 log "
    "for GitHub code scanning; junit a JUnit XML report, one test case per object, for GitLab, Jenkins or Azure DevOps.",
)
@options.repository_config
def validate_command(
    paths,
    stacks,
    all_stacks,
    crd_paths,
    context_paths,
    policy,
    no_cache,
    waiver_file,
    kustomize_dir,
    policy_file,
    release,
    allow_empty,
    show_info,
    quiet,
    fmt,
) -> Outcome:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests (hidden entries below them are passed over),
    Pulumi stack files, or - for a YAML stream on standard input (helm template ... | validate -).
    YAML that is not Kubernetes (templates, CloudFormation) is skipped with a note. With --policy the
    house-style policies are reported too (as warnings: they fail the run only where a policy file
    or the stack raises them to errors) and waivers apply (waived findings are listed but do not
    fail the run). In a kustomize layout the patch files a kustomization lists are passed over with a
    note; --kustomize DIR judges what kustomize renders from DIR instead. --policy-file implies
    --policy; a team that enforces encryption keeps
    `rules: {policy/ebs-encrypted: {severity: error}}` in e.g. policies/karpenter.yaml and runs
    `karpenter-gitops validate deploy/ --policy-file policies/karpenter.yaml`. A run that finds no
    Karpenter object exits 2 unless --allow-empty.
    """
    rules = options.configured_rules()
    policy = policy or policy_file is not None or rules is not None
    if waiver_file and not policy:
        raise click.UsageError("--waivers only applies with --policy")
    if kustomize_dir is not None and (paths or stacks or all_stacks):
        raise click.UsageError("--kustomize DIR is what the run judges: give it without PATHS or --stack")
    fleet = options.fleet_stacks(paths, stacks, all_stacks) if options.is_fleet(stacks, all_stacks) else []
    run_paths = [] if fleet or kustomize_dir else options.input_paths(paths, stacks[0] if stacks else None)
    return validate(
        Request(
            paths=tuple(run_paths),
            kustomize=kustomize_dir,
            fleet=tuple(fleet),
            release=release,
            feature_gates=options.given_feature_gates(),
            crd_paths=crd_paths,
            context=context_paths,
            policy=policy,
            policy_file=policy_file,
            policy_rules=rules,
            waiver_file=waiver_file,
            allow_empty=allow_empty,
            fmt=fmt,
            show_info=show_info,
            quiet=quiet,
            cache=not no_cache,
        )
    )
