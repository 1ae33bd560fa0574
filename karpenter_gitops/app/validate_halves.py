"""``validate`` of many objects on both cores: a forked copy reads, loads and judges the first half of
the run while this process does the second.

Why: reading the YAML, building the models and judging each object are nearly all of a large run,
and all of it is work on one file or one object. A rule that looks beyond its object needs little:
the EC2NodeClass names a NodePool may reference, the NodeOverlays (judged against each other) and
the stack's settings (release, cluster and feature gates, policy, controller). So the halves
exchange only those, and the models stay where they were built (pickling them costs about a third
of building them).

The halves: the files cut at about half their bytes, between two files, or inside the file that holds
the middle when a cut between files would leave the halves far apart (one large file, ``helm
template`` output on standard input, a large file beside small ones): there at the document marker
nearest after the middle, the second part's documents numbered after the first's, so that findings
and notes name the same documents and lines.

The report is the one a single process gives. The first half, loaded from nothing, is what one
process has loaded by the end of it; the second is too, unless something in it depends on the
first: an object defined in both halves (the first is kept, the second named its duplicate), or
stack files in both (a controller block reads the cluster an earlier stack file named). Then, and
whenever reading or loading stops at an error, a part of one file reads otherwise than the file
(another number of documents, or no Kubernetes YAML in it), or the run is empty, the caller does the
run in one process, which gives its errors in the same words. When the stack files name another
release than the one both halves loaded for, each half loads its files again for it, as one process does.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karpenter_gitops.app import both_cores
from karpenter_gitops.app.sources import read_loading
from karpenter_gitops.app.validate import Verdict
from karpenter_gitops.core import feature_gates as feature_gates_of_release
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding
from karpenter_gitops.core.inputs import Inputs, PolicySettings, Waiver
from karpenter_gitops.core.yaml_reader import DOCUMENT_START
from karpenter_gitops.judge import Judge, conclude
from karpenter_gitops.load import locate
from karpenter_gitops.load.context_files import node_class_names
from karpenter_gitops.load.into_inputs import joined, loaded
from karpenter_gitops.load.files import (
    STDIN,
    STDIN_NAME,
    Documents,
    ReadFile,
    Texts,
    display,
    expand,
    from_text,
    is_stack_file,
    read_files,
    read_stream,
    read_text,
)
from karpenter_gitops.load.partition import document_count
from karpenter_gitops.load.stacks import stack_release

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from karpenter_gitops.rules.crd.engine import CrdCheck, Crds

#: Below this many bytes of YAML (about 500 Karpenter objects) a run stays in one process: 1,000 objects
#: (1 MB) took 0.48 s split against 0.62 s in one (2026-11-27); starting and stopping the copy takes about 5 ms.
THRESHOLD_BYTES = 500_000

Key = tuple[str, str, str]  # (scope, kind, name): one object of a run
Reader = Callable[[], Iterable[ReadFile]]  # a half's files, read as they are asked for


@dataclass(frozen=True)
class Cut:
    """A run cut in two: how each half reads its files. When the cut falls inside a file (at a document
    marker), ``whole`` is that file (its findings are placed on their lines in it, not in its parts),
    and its first part, the first half's last file, must hold ``first_documents`` documents (the second
    part's are numbered after them)."""

    first: Reader
    second: Reader
    whole: ReadFile | None = None
    first_documents: int | None = None


@dataclass(frozen=True)
class Summary:
    """What one half loaded, as the other half and the report need it: no EC2NodeClass, NodePool or
    CapacityBuffer model crosses between the processes, only the class names."""

    files: tuple[ReadFile, ...]  # without their documents: counted, and read again to locate findings
    stacks: tuple[tuple[str, Any], ...]  # (file name, documents) of its stack files: the release they name
    shared: Inputs  # the NodeOverlays, the stack's settings, the notes; no other model
    class_names: Mapping[str, frozenset[str]]
    keys: frozenset[Key]
    objects: int
    last_documents: int  # in its last file: a file's first part must hold as many as counted when it was cut
    observed: bool  # loading observed something (a misspelt kind is not an object, yet is something to report)


@dataclass(frozen=True)
class Settled:
    """What both halves judge with: the run's release, its settings, every NodeOverlay, and the class
    names the other half holds."""

    release: versions.Release
    settings: Inputs  # the stack's settings over the policy file, with --feature-gates; every NodeOverlay
    context_names: frozenset[str] | None  # --context
    elsewhere: Mapping[str, frozenset[str]]
    hygiene: bool


class Half:
    """The files of one half: read and loaded in the process that holds them, judged there."""

    def __init__(self, read: Reader, release: versions.Release, partial: str | None = None) -> None:
        files, loading = read_loading(read(), release)
        self.files = tuple(files)
        self.partial = partial  # the name of the file of which this half holds a part
        self.inputs = loading.inputs() if loading is not None else None
        self.keys = loading.keys if loading is not None else frozenset()

    def load_for(self, release: versions.Release) -> None:
        """Load the files again for ``release``, as one process does when the stack files name another."""
        try:
            loading = loaded(self.files, release)
        except InputError:
            self.inputs, self.keys = None, frozenset()
            return
        self.inputs, self.keys = loading.inputs(), loading.keys

    def summary(self) -> Summary | None:
        """What the other half needs, or None when loading stopped at an error."""
        if self.inputs is None:
            return None
        inputs = self.inputs
        shared = dataclasses.replace(inputs, node_classes=(), node_pools=(), capacity_buffers=(), observations=())
        stacks = tuple((file.name, file.documents) for file in self.files
                       if is_stack_file(file.documents))
        return Summary(
            files=tuple(file._replace(documents=Documents(()), text=None) for file in self.files),
            stacks=stacks, shared=shared, class_names=inputs.node_class_names_by_scope, keys=self.keys,
            objects=len(inputs.objects), last_documents=len(self.files[-1].documents) if self.files else 0,
            observed=bool(inputs.observations),
        )

    def judge(self, settled: Settled, crds: Crds | None) -> tuple[list[Finding], CrdCheck | None]:
        """The findings on this half's objects and what its loading observed, in the whole run's context,
        with the user's CRDs' verdicts when given, each on its line in the files this half holds whole (finding
        the lines composes each file with findings into YAML nodes: a run with many findings, such as
        ``--policy``'s advisories, spends as long on it as on reading); and what the CRDs left unchecked."""
        assert self.inputs is not None
        own = self.inputs
        settings = settled.settings
        view = dataclasses.replace(
            own, cluster=settings.cluster, policy=settings.policy, controller=settings.controller,
            node_overlays=settings.node_overlays, node_classes_elsewhere=settled.elsewhere,
            context_node_classes=settled.context_names,
        )
        judge = Judge(settled.release, settings.policy, hygiene=settled.hygiene)
        findings = judge.objects(view, judged=own.objects)
        check = crds.check_inputs(own) if crds is not None else None  # one by one: this half is one of the two cores
        if check is not None:
            findings += judge.findings(check.observations)
            check = dataclasses.replace(check, observations=())
        findings = list(locate.with_lines(findings, Texts(f for f in self.files if f.name != self.partial)))
        return findings, check


def validate_in_halves(
    paths: Sequence[Path],
    release: versions.Release | None,
    feature_gates: Mapping[str, bool] | None,
    *,
    house: PolicySettings | None = None,
    policy: bool = False,
    waivers: Sequence[Waiver] = (),
    crds: Crds | None = None,
    context: Sequence[str] = (),
) -> Verdict | None:
    """The verdict on ``paths``, worked out in two processes; None when the run is not split (too small, no
    second core) or must be done in one process after all (see above). Standard input is read here: the
    caller keeps a copy to read again."""
    cut = _cut(paths)
    if cut is None:
        return None
    assumed = versions.known(release or versions.DEFAULT)[0]
    partial = cut.whole.name if cut.whole else None
    with both_cores.partner(lambda channel: _serve_first_half(Half(cut.first, assumed, partial), crds, channel)) as copy:
        if copy is None:
            return None
        try:
            mine = Half(cut.second, assumed, partial)
        except InputError:
            return None
        first, second = copy.receive(), mine.summary()
        try:
            chosen, note = versions.known(release or stack_release(_stacks(first, second)) or versions.DEFAULT)
            gates = feature_gates_of_release.canonical(feature_gates or {}, chosen, "--feature-gates")
        except InputError:
            return None
        if chosen != assumed:
            mine.load_for(chosen)
            first, second = copy.ask(("load for", chosen)), mine.summary()
        if first is None or second is None or (first.stacks and second.stacks) or first.keys & second.keys:
            return None
        if cut.whole is not None and (first.last_documents != cut.first_documents or first.files[-1].skipped or second.files[0].skipped):
            return None  # the parts of one file did not read as the file does
        if not (first.objects or second.objects or first.observed or second.observed or first.stacks or second.stacks):
            return None  # nothing to judge: one process says so, in its words
        try:
            context_names = node_class_names(context) if context else None
        except InputError:
            return None
        stack = first.shared if first.stacks else second.shared
        settings = joined(first.shared, second.shared, stack).with_gates(gates)
        if house is not None:
            settings = dataclasses.replace(settings, policy=settings.policy.over(house))
        settled = Settled(chosen, settings, context_names, second.class_names, policy)
        copy.send(("judge", settled))
        findings, checked = mine.judge(dataclasses.replace(settled, elsewhere=first.class_names), crds)
        theirs = copy.receive()
        if theirs is None:
            return None
        findings, checked = theirs[0] + findings, theirs[1].joined(checked) if checked is not None else None
    judge = Judge(chosen, settings.policy, hygiene=policy)
    report = conclude(judge, findings, settings, (*settings.waivers, *waivers), objects=first.objects + second.objects)
    notes = tuple(checked.notes) if checked is not None else ()
    texts = Texts([*first.files, *second.files, *([cut.whole] if cut.whole else [])])  # the whole file over its parts
    return Verdict(dataclasses.replace(report, notes=report.notes + notes, findings=_located(report.findings, texts)), chosen, note)


def _located(findings: Sequence[Finding], texts: Texts) -> tuple[Finding, ...]:
    """``findings`` each on its line: those the halves did not place (an expired waiver's, or those in the
    file cut in two) are placed here."""
    placed = list(findings)
    pending = [index for index, finding in enumerate(placed) if finding.line is None]
    for index, finding in zip(pending, locate.with_lines([placed[i] for i in pending], texts), strict=True):
        placed[index] = finding
    return tuple(placed)


def _cut(paths: Sequence[Path]) -> Cut | None:
    """The run cut in two, or None when it is not worth cutting or cannot be cut."""
    try:
        files = expand(paths)
        if files == [STDIN]:
            text = read_stream(sys.stdin.buffer, STDIN_NAME)
            return _cut_inside([], STDIN, text, len(text) // 2, []) if len(text) >= THRESHOLD_BYTES else None
        sizes = [file.stat().st_size for file in files] if STDIN not in files else []
    except (InputError, OSError):
        return None  # one process reports it
    total = sum(sizes)
    if not sizes or total < THRESHOLD_BYTES:  # standard input beside files is read by one process
        return None
    half, before = total / 2, 0
    index = next(i for i, size in enumerate(sizes) if (before := before + size) >= half)  # the file holding the middle
    size = sizes[index]
    before -= size
    if min(half - before, before + size - half) > total / 8 and size >= THRESHOLD_BYTES:
        try:  # a cut between files would leave the halves more than a quarter apart
            cut = _cut_inside(files[:index], files[index], read_text(files[index]), int(half - before), files[index + 1:])
        except InputError:
            return None
        if cut is not None:
            return cut
    middle = min(max(index + 1 if before + size - half < half - before else index, 1), len(files) - 1)
    if not 0 < middle < len(files):
        return None
    first, second = files[:middle], files[middle:]
    return Cut(lambda: read_files(first, live=True), lambda: read_files(second, live=True))


def _cut_inside(earlier: list[Path], path: Path, text: str, target: int, later: list[Path]) -> Cut | None:
    """The run cut inside the file at ``path`` (``text``), at the document marker nearest after ``target``;
    the files ``earlier`` go to the first half, ``later`` to the second. None when no marker is there."""
    marker = DOCUMENT_START.search(text, target)
    if marker is None or marker.start() == 0:
        return None
    head, tail = text[: marker.start()], text[marker.start():]
    count = document_count(head)
    if count is None:
        return None
    name = display(path)

    def first() -> Iterator[ReadFile]:
        yield from read_files(earlier, live=True)
        yield from_text(name, head, path, live=True)

    def second() -> Iterator[ReadFile]:
        yield from_text(name, tail, path, live=True, after=count)
        yield from read_files(later, live=True)

    whole = ReadFile(name, Documents(()), path, None, text if path == STDIN else None)
    return Cut(first, second, whole, count)


def _stacks(first: Summary | None, second: Summary | None) -> list[tuple[str, Any]]:
    return [*(first.stacks if first else ()), *(second.stacks if second else ())]


def _serve_first_half(half: Half, crds: Crds | None, channel: Connection) -> None:
    """The copy's side, once it has read and loaded the first half: answer until told to stop."""
    channel.send(half.summary())
    while (message := channel.recv()) is not None:
        command, argument = message
        if command == "load for":
            half.load_for(argument)
            channel.send(half.summary())
        else:
            channel.send(half.judge(argument, crds))
