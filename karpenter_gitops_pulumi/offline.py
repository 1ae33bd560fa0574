"""Run the Pulumi program as ``pulumi preview`` / ``pulumi up`` would, without the Pulumi CLI.

The run goes through :mod:`karpenter_gitops_pulumi.engine`: the program in its own process against a gRPC
resource monitor, every reconciliation in the real dynamic-provider host (check, then create or
update against AWS; check only in a preview), policy packs started from their ``PulumiPolicy.yaml``.
As with ``pulumi up --continue-on-error``, a failed step blocks its dependents and the rest still
runs, so the whole stack shows. ``--state`` keeps the stack's state between runs (a second ``up``
shows what would change; ``--refresh`` re-reads AWS for every reconciliation first).

    python -m karpenter_gitops_pulumi.offline --stack demo --embedded-aws [--preview] [--policy-pack karpenter_gitops_policies]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from karpenter_gitops_pulumi.engine import Engine, Run, StackState, StateError
from karpenter_gitops_pulumi.engine.wire import STACK_TYPE, name_of, plain, type_of
from karpenter_gitops.core.errors import InputError

RECONCILIATION = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
GET_CLUSTER = "aws:eks/getCluster:getCluster"  # the one invoke answered: KarpenterController looks its cluster up
PROJECT = Path(__file__).resolve().parent.parent
_SYMBOLS = {"create": "+", "update": "~", "replace": "+-", "delete": "-", "same": " ", "failed": "!", "skip": "?"}


def stand_in_cluster(name: str, region: str | None, ip_family: str = "ipv4") -> dict:
    """An EKS cluster as ``aws.eks.get_cluster`` returns it, for when no AWS answers: in the stack's region."""
    region = region or "us-west-2"
    return {
        "name": name,
        "arn": f"arn:aws:eks:{region}:123456789012:cluster/{name}",
        "endpoint": f"https://{name.upper()}.gr7.{region}.eks.amazonaws.com",
        "kubernetesNetworkConfigs": [{"ipFamily": ip_family}],
    }


def engine_for(
    stack: str,
    *,
    project: Path | None = None,
    cluster_lookup: Callable[[str], dict] | None = None,
    state: Path | None = None,
    policy_packs: list[Path] | None = None,
    **options,
) -> Engine:
    """The engine stand-in for one stack file of the project, answering the program's cluster look-up."""
    from karpenter_gitops.app.stack import engine_config

    project = project or PROJECT
    config = engine_config(stack, project)
    lookup = cluster_lookup or (lambda name: stand_in_cluster(name, config.get("aws:region")))
    return Engine(
        project,
        stack,
        config,
        state=StackState(state),
        policy_packs=list(policy_packs or []),
        invokes={GET_CLUSTER: lambda args: lookup(args["name"])},
        **{"continue_on_error": True, **options},
    )


def _summary(resource) -> str:
    outputs = plain(resource.outputs)
    if resource.type == RECONCILIATION:
        ready = next((c for c in outputs.get("conditions") or () if c.get("type") == "Ready"), None)
        if ready is None:
            return ""
        amis = len({a["id"] for a in outputs.get("amis") or ()})
        return f"  → Ready={ready['status']} ({ready['reason']}), {amis} AMI(s)"
    spec = plain(resource.inputs).get("spec")
    if isinstance(spec, dict) and "amiSelectorTerms" in spec:
        return f"  → amiSelectorTerms={json.dumps(spec['amiSelectorTerms'])}"
    return ""


def print_run(run: Run, out=None) -> None:
    """The resource tree with each step's operation, then diagnostics, policy violations and failures."""
    out = out or sys.stdout
    steps = {step.urn: step for step in run.steps}
    nodes = {**{urn: None for urn in run.registrations}, **run.resources}
    children: dict[str, list[str]] = {}
    for urn in nodes:
        request = run.registrations.get(urn)
        parent = request.parent if request is not None else getattr(nodes[urn], "parent", "")
        if type_of(urn) == STACK_TYPE or type_of(urn).startswith("pulumi:providers:"):
            continue
        children.setdefault(parent if parent in nodes and type_of(parent) != STACK_TYPE else "", []).append(urn)

    def show(parent: str, depth: int) -> None:
        for urn in sorted(children.get(parent, []), key=lambda u: (type_of(u), name_of(u))):
            step = steps.get(urn)
            op = step.op if step else "same"
            marker = {"failed": "  [FAILED]", "skip": "  [blocked: it depends on a failed resource]"}.get(op, "")
            keys = f"  [{', '.join(step.keys)}]" if step and step.keys and op in ("update", "replace") else ""
            resource = run.resources.get(urn)
            summary = _summary(resource) if resource is not None else ""
            print(f"{_SYMBOLS.get(op, ' ')} {'  ' * depth}{type_of(urn)}  {name_of(urn)}{marker}{keys}{summary}", file=out)
            show(urn, depth + 1)

    show("", 0)
    for diagnostic in run.diagnostics:
        if diagnostic.severity in ("warning", "error") and diagnostic.urn not in run.failures:
            where = name_of(diagnostic.urn) if diagnostic.urn else "stack"
            print(f"{diagnostic.severity}: {where}: {one_line(diagnostic.message)}", file=out)
    for pack, policy, urn in run.remediations:
        print(f"policy remediated: {policy} ({pack}): {name_of(urn)}", file=out)
    for violation in run.violations:
        where = name_of(violation.urn) if violation.urn else "stack"
        print(f"policy {violation.level}: {violation.policy}: {where}: {violation.message.strip().splitlines()[0]}", file=out)
    counts = Counter(step.op for step in run.steps if step.op != "same")
    done = {"create": "created", "update": "updated", "replace": "replaced", "delete": "deleted"}
    words = [
        f"{n} {'to ' + op if run.operation == 'preview' else done[op]}" if op in done else f"{n} {'failed' if op == 'failed' else 'skipped'}"
        for op, n in sorted(counts.items())
    ]
    print("Resources: " + (", ".join(words) or "no changes"), file=out)
    for urn, reason in sorted(run.failures.items()):
        if not reason.startswith("skipped:"):
            print(f"FAILED {name_of(urn)}: {one_line(reason)}", file=out)


def program_error(run: Run) -> str | None:
    """The program's own failure (not a resource's), as one line: what it raised, without frames."""
    if run.program_exit == 0:
        return None
    errors = [d.message for d in run.diagnostics if d.severity == "error" and d.urn not in run.failures]
    return one_line(errors[-1] if errors else run.program_output or "the program failed")


def one_line(message: str) -> str:
    """The last line of an error the engine shows (a traceback ends with it), without the exception's class."""
    last = (message.strip().splitlines() or [""])[-1]
    kind, _, rest = last.partition(": ")
    return rest if rest and kind.rsplit(".", 1)[-1].endswith(("Error", "Exception")) else last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m karpenter_gitops_pulumi.offline", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--preview", action="store_true", help="as `pulumi preview`: check() only, nothing changes")
    parser.add_argument("--refresh", action="store_true", help="as `pulumi refresh` before the run (needs --state)")
    parser.add_argument("--embedded-aws", action="store_true", help="reconcile against moto on 127.0.0.1")
    parser.add_argument("--policy-pack", action="append", type=Path, default=[], help="a CrossGuard pack directory (repeatable)")
    parser.add_argument("--policy-pack-config", action="append", type=Path, default=[], help="a JSON config for the pack in the same position")
    parser.add_argument("--state", type=Path, help="the stack's state file, kept between runs (default: none, every run starts empty)")
    args = parser.parse_args(argv)
    if len(args.policy_pack_config) > len(args.policy_pack):
        parser.error("each --policy-pack-config goes with the --policy-pack in the same position")
    if args.refresh and args.state is None:
        parser.error("--refresh needs --state: without a state there is nothing to refresh")
    from karpenter_gitops.adapters.aws.embedded import embedded_aws
    from karpenter_gitops.app.stack import eks_cluster

    try:
        with embedded_aws() if args.embedded_aws else contextlib.nullcontext():
            engine = engine_for(
                args.stack, cluster_lookup=eks_cluster if args.embedded_aws else None, state=args.state,
                policy_packs=args.policy_pack, policy_pack_configs=args.policy_pack_config,
            )
            if args.refresh:
                print_run(engine.refresh())
            run = engine.preview() if args.preview else engine.up()
    except (InputError, StateError, RuntimeError, OSError) as error:  # no stack file or virtualenv, a bad state file, a pack that cannot start
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    failure = program_error(run)
    if failure is not None and not run.failures:  # the program refused its config: nothing registered to show
        print(f"{parser.prog}: error: {failure}", file=sys.stderr)
        return 2
    print_run(run)
    return 1 if run.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
