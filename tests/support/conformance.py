"""Differential judging: our ``validate`` against the real API server (the release's CRDs, server-side
dry-run) plus Karpenter's own ``RuntimeValidate`` (tests/support/oracle.py) for NodePools.

One API server serves every release in turn: :func:`use_release` swaps the Karpenter CRDs (delete,
create, wait until served): 0.4-4 s a switch, against ~6 s to start a server with CRDs and one
server's memory instead of sixteen. Each object's
outcome is counted in :data:`TALLY`, which ``make conformance`` prints as a table.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.model import KIND_SINCE
from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL
from support.api_server import ApiServer, kube_client
from support.disagreements import DOCUMENTED, Documented
from support.upstream import crd_tags, crds

# Where `make conformance` writes every undocumented disagreement in full (the table shows counts).
REPORT = os.environ.get("KARPENTER_GITOPS_CONFORMANCE_REPORT")


def releases() -> dict[versions.Release, str]:
    """Every release the project claims, as (major, minor) → the tag whose CRDs judge it."""
    return {versions.parse(tag): tag for tag in crd_tags()}


def serve_release(server: ApiServer, release: versions.Release) -> dict[str, Served]:
    """Make ``server`` serve ``release``'s CRDs, switching only when it serves another's; kind → where.
    A server starts on the default release's (install_crds); what it serves since is noted on it, so
    the conformance tests and the controller comparisons (tests/support/karpenter.py) share one server."""
    folder = release_crds(release)
    serving = getattr(server, "karpenter_release", None)
    if serving is None and release == versions.DEFAULT:
        serving = (release, {crd["spec"]["names"]["kind"]: _served(crd) for crd in _crds(folder)})
    if serving is None or serving[0] != release:
        started = time.monotonic()
        serving = (release, use_release(server, folder))
        TALLY.switches.append(time.monotonic() - started)
    server.karpenter_release = serving
    return serving[1]


def release_crds(release: versions.Release) -> Path:
    """The folder of ``release``'s CRDs (the newest patch the project has)."""
    return crds(releases()[release])


def _crds(folder: Path) -> list[dict]:
    return [yaml.safe_load(path.read_text()) for path in sorted(folder.glob("*.yaml"))]


@dataclass(frozen=True)
class Served:
    """Where the API server serves one kind: group, version, plural and whether it is namespaced."""

    group: str
    version: str
    plural: str
    namespaced: bool


def _served(crd: Mapping[str, Any]) -> Served:
    version = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    return Served(crd["spec"]["group"], version, crd["spec"]["names"]["plural"], crd["spec"]["scope"] == "Namespaced")


def use_release(server: ApiServer, folder: Path) -> dict[str, Served]:
    """Serve exactly the CRDs in ``folder`` (NodeClaims too, as a cluster has them); kind → where."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    extensions = client.ApiextensionsV1Api(kube_client(server))
    wanted = _crds(folder)
    for crd in extensions.list_custom_resource_definition().items:
        extensions.delete_custom_resource_definition(crd.metadata.name)
        # No objects of ours are left (dry runs store none, updates delete theirs), so the clean-up finalizer
        # has nothing to do; left to run, it can wait out minutes of retry back-off after a busy storage.
        try:
            extensions.patch_custom_resource_definition(crd.metadata.name, {"metadata": {"finalizers": []}})
        except ApiException as error:
            if error.status != 404:  # already gone
                raise
    for crd in extensions.list_custom_resource_definition().items:
        _wait(lambda name=crd.metadata.name: _gone(extensions, name))
    for crd in wanted:
        extensions.create_custom_resource_definition(crd)
    for crd in wanted:
        _wait(lambda name=crd["metadata"]["name"]: _established(extensions, name))
    kinds = {crd["spec"]["names"]["kind"]: _served(crd) for crd in wanted}
    objects = client.CustomObjectsApi(kube_client(server))
    for served in kinds.values():  # served once discovery has it: a list answers 200

        def listed(served=served) -> bool:
            try:
                objects.list_cluster_custom_object(served.group, served.version, served.plural)
                return True
            except ApiException as error:
                if error.status != 404:
                    raise
                return False

        _wait(listed)
    return kinds


def _gone(extensions, name: str) -> bool:
    from kubernetes.client.exceptions import ApiException

    try:
        extensions.read_custom_resource_definition(name)
        return False
    except ApiException as error:
        if error.status == 404:
            return True
        raise


def _established(extensions, name: str) -> bool:
    crd = extensions.read_custom_resource_definition(name)
    return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])


def _wait(ready, within: float = 60.0) -> None:
    """Poll ``ready`` until it holds."""
    deadline = time.monotonic() + within
    while not ready():
        assert time.monotonic() < deadline, f"the API server did not switch CRDs within {within:.0f} s"
        time.sleep(0.05)


# --- the two sides ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Theirs:
    """The API server's answer (None: accepted) and, for an accepted NodePool, RuntimeValidate's errors."""

    refused: str | None
    stored: Mapping[str, Any] | None = None
    runtime: tuple[str, ...] = ()
    validated: bool = True  # False when strict decoding refused it first (400): no schema or CEL rule ran

    @property
    def rejects(self) -> bool:
        return self.refused is not None or bool(self.runtime)


def dry_run(server: ApiServer, served: Served, doc: Mapping[str, Any]) -> Theirs:
    """Server-side dry-run create with strict field validation (what ``kubectl apply`` asks for since
    Kubernetes 1.27): what the API server would store, or its refusal's message."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    objects = client.CustomObjectsApi(_client(server))
    try:
        if served.namespaced:
            stored = objects.create_namespaced_custom_object(
                served.group, served.version, "default", served.plural, doc, dry_run="All", field_validation="Strict"
            )
        else:
            stored = objects.create_cluster_custom_object(
                served.group, served.version, served.plural, doc, dry_run="All", field_validation="Strict"
            )
    except ApiException as error:
        assert error.status in (400, 422), (error.status, error.body)
        return Theirs(json.loads(error.body).get("message", error.body), validated=error.status == 422)
    return Theirs(None, stored)


_CLIENTS: dict[int, Any] = {}


def _client(server: ApiServer):
    """One client per server: a new one per request costs more than the request."""
    if id(server) not in _CLIENTS:
        _CLIENTS[id(server)] = kube_client(server)
    return _CLIENTS[id(server)]


def runtime(release: versions.Release, kind: str, stored: Mapping[str, Any]) -> tuple[str, ...]:
    """What Karpenter of ``release`` refuses at run time in an object its API server stored (empty:
    nothing), by its own code (tests/support/oracle.py): RuntimeValidate for NodePools and NodeOverlays (the
    latter's validation controller reports them as ValidationSucceeded False, reason RuntimeValidation),
    and for an EC2NodeClass of a release whose provider is built the validation controller's verdict
    before its EC2 dry runs (1.15: the open kubelet map; both: tags), feature gates off."""
    import support.oracle

    oracle = support.oracle.oracle(release)
    if kind == "NodePool":
        return tuple(oracle.runtime_errors(stored))
    if kind == "NodeOverlay":
        return tuple(oracle.overlay_errors(stored))
    if kind == "EC2NodeClass" and release in support.oracle.PROVIDER_RELEASES:
        found = oracle.node_class_validation(stored)["validationSucceeded"]
        return (f"ValidationSucceeded False ({found['reason']}): {found['message']}",) if found["status"] == "False" else ()
    return ()


def ours(doc: Mapping[str, Any], release: versions.Release) -> tuple[Finding, ...]:
    """``validate --karpenter-version`` on ``doc`` (the judge it runs), with a base object of the other
    kind beside it so cross-object rules see what a repository would hold; ``doc``'s findings only."""
    other = BASE_NODEPOOL if doc.get("kind") == "EC2NodeClass" else BASE_NODECLASS
    documents = [("conformance.yaml", [dict(doc), dict(other)])]
    report = validate(load_documents(documents, release), release)
    return tuple(f for f in report.findings if f.kind == doc.get("kind"))


# --- the comparison ----------------------------------------------------------------------------

AGREE, DISAGREE, DOCUMENTED_ = "agree", "disagree", "documented"


@dataclass(frozen=True)
class Judgement:
    """Both verdicts on one object at one release."""

    release: versions.Release
    doc: Mapping[str, Any]
    ours: tuple[Finding, ...]
    theirs: Theirs
    what: str = ""  # the table's row; the object's kind unless given ("NodePool update")

    @property
    def row(self) -> str:
        return self.what or self.doc.get("kind", "?")

    @property
    def our_errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.ours if f.severity is Severity.ERROR)

    def unworded(self) -> list[Finding]:
        """Our CEL findings whose message is not in the API server's refusal: CRD rule messages must be its words."""
        if self.theirs.refused is None or not self.theirs.validated:
            return []
        return [f for f in self.our_errors if f.rule.startswith(("cel/", "transition/")) and f.message not in self.theirs.refused]

    def outcome(self) -> tuple[str, Documented | None]:
        differs = bool(self.our_errors) != self.theirs.rejects or bool(self.unworded())
        if not differs:
            return AGREE, None
        entry = next((d for d in DOCUMENTED if d.matches(self)), None)
        return (DOCUMENTED_, entry) if entry else (DISAGREE, None)

    def signature(self) -> str:
        """What differs, in one line: our error rules against the API server's and RuntimeValidate's answers."""
        rules = ",".join(sorted({f"{f.rule}({f.layer})" for f in self.our_errors})) or "none"
        theirs = "refused" if self.theirs.refused else "runtime" if self.theirs.runtime else "accepted"
        worded = " unworded" if self.unworded() else ""
        return f"{versions.show(self.release)} {self.row}: ours {rules}; theirs {theirs}{worded}"

    def explain(self) -> str:
        ours = "\n".join(f"  {f.severity.value} {f.rule} ({f.layer}) {f.path}: {f.message}" for f in self.ours) or "  (none)"
        theirs = self.theirs.refused or "accepted"
        runtime = "\n".join(f"  {m[:300]}" for m in self.theirs.runtime) or "  (none)"
        unworded = "".join(f"\nnot in the API server's words: {f.rule}: {f.message}" for f in self.unworded())
        return (
            f"Karpenter {versions.show(self.release)} disagrees with us on\n{yaml.safe_dump(dict(self.doc), sort_keys=False)}"
            f"ours:\n{ours}\nAPI server: {theirs}\nRuntimeValidate:\n{runtime}{unworded}"
        )


@dataclass
class Tally:
    """Outcomes per (release, kind), for the table ``make conformance`` prints."""

    counts: Counter = field(default_factory=Counter)
    examples: dict[tuple, str] = field(default_factory=dict)
    switches: list[float] = field(default_factory=list)  # seconds each change of release took

    def add(self, judgement: Judgement) -> str:
        outcome, entry = judgement.outcome()
        key = (judgement.release, judgement.row)
        self.counts[(*key, outcome)] += 1
        if entry is not None:
            self.counts[("entry", entry.id)] += 1
        if outcome == DISAGREE:
            self.examples.setdefault(key, judgement.explain())
            if REPORT:
                with open(REPORT, "a") as report:
                    report.write(judgement.explain() + "\n---\n")
            self.counts[("undocumented", judgement.signature())] += 1
        return outcome

    def table(self) -> list[str]:
        rows = sorted({key[:2] for key in self.counts if len(key) == 3})
        lines = [f"{'release':<8} {'kind':<20} {'agree':>7} {'disagree':>9} {'documented':>11}"]
        for release, kind in rows:
            lines.append(
                f"{versions.show(release):<8} {kind:<20} {self.counts[(release, kind, AGREE)]:>7} "
                f"{self.counts[(release, kind, DISAGREE)]:>9} {self.counts[(release, kind, DOCUMENTED_)]:>11}"
            )
        for (first, what), count in sorted((k, v) for k, v in self.counts.items() if k[0] in ("entry", "undocumented")):
            lines.append(f"{first} {what}: {count}")
        for entry in DOCUMENTED:  # an entry no object needed may describe a difference that is gone
            if not self.counts[("entry", entry.id)]:
                lines.append(f"entry {entry.id}: 0 (not seen in this run)")
        outcomes = {k: v for k, v in self.counts.items() if len(k) == 3}
        total = sum(outcomes.values())
        differ = sum(v for k, v in outcomes.items() if k[2] != AGREE)
        undocumented = sum(v for k, v in outcomes.items() if k[2] == DISAGREE)
        if self.switches:
            lines.append(f"release switches on one API server: {len(self.switches)}, {sum(self.switches):.1f} s in all")
        lines.append(f"conformance: {total} objects, {differ} disagreements, {undocumented} undocumented")
        return lines


TALLY = Tally()


def kinds_of(release: versions.Release) -> list[str]:
    return [
        kind for kind in ("EC2NodeClass", "NodePool", "NodeOverlay", "CapacityBuffer") if KIND_SINCE.get(kind, (1, 0)) <= release
    ]


def transition_findings(old: Mapping[str, Any], new: Mapping[str, Any], release: versions.Release) -> tuple[Finding, ...]:
    """What ``validate`` and the PR preview's transition check say about updating ``old`` to ``new``:
    the API server's share only (its schema, CEL and ``oldSelf`` rules), as an update is what it judges."""
    from karpenter_gitops.judge import check_transitions

    base, head = (load_documents([("update.yaml", [dict(doc)])], release) for doc in (old, new))
    moved = check_transitions(base, head, release)
    return tuple(f for f in (*ours(new, release), *moved) if f.layer == "api-server")


def update(server: ApiServer, served: Served, old: Mapping[str, Any], new: Mapping[str, Any]) -> Theirs | None:
    """Create ``old`` for real, then a dry-run update to ``new``; None when the server refuses ``old`` itself."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    objects = client.CustomObjectsApi(_client(server))
    name = old["metadata"]["name"]
    try:
        stored = objects.create_cluster_custom_object(served.group, served.version, served.plural, old)
    except ApiException as error:
        assert error.status in (400, 422), (error.status, error.body)
        return None
    try:
        body = {**new, "metadata": {**new["metadata"], "resourceVersion": stored["metadata"]["resourceVersion"]}}
        objects.replace_cluster_custom_object(
            served.group, served.version, served.plural, name, body, dry_run="All", field_validation="Strict"
        )
        return Theirs(None)
    except ApiException as error:
        assert error.status in (400, 422), (error.status, error.body)
        return Theirs(json.loads(error.body).get("message", error.body), validated=error.status == 422)
    finally:
        objects.delete_cluster_custom_object(served.group, served.version, served.plural, name)
