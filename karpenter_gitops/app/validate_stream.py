"""``validate --format jsonl`` of a run too large to hold at once: judged part by part, each part's
findings printed as soon as it is judged, in memory that does not grow with the run.

Why: a fleet's rendered manifests, or ``helm template`` of a chart with thousands of NodePools, can be
hundreds of megabytes. Held whole, the parsed documents and models of 500,000 objects take gigabytes,
and nothing is printed until the end; a CI job wants the findings as they come, in a runner's memory.

How: the run is cut into parts of about :data:`PART_BYTES`: consecutive whole files, or slices of a
large file (or of standard input, spooled to a temporary file first) cut at a document marker, each
slice's documents and lines numbered as in the file. A first pass reads and loads each part and keeps
only what other parts' rules need (as :mod:`karpenter_gitops.app.validate_halves` exchanges between its
two halves): the class names, the NodeOverlays, the stack's settings and a hash of every object's key.
The second pass reads each part again and judges it in the whole run's context. Reading twice costs
time; holding nothing but the context is what bounds the memory.

The findings are those one process gives; each part's come sorted, parts in input order, expired
waivers last. Whenever the parts cannot be judged as one process would judge the run (an object
defined in two parts, stack files in two parts, a slice that does not read as part of its file,
loading stopped at an error, nothing to judge), the caller judges the run in one process, which
reports it in its words; for an input over what one process reads, the reason is said instead.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from karpenter_gitops.app import both_cores
from karpenter_gitops.app.validate import crds_at
from karpenter_gitops.app.validate_halves import Half, Settled, Summary
from karpenter_gitops.core import feature_gates as feature_gates_of_release
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs, PolicySettings, Waiver
from karpenter_gitops.judge import Judge, conclude
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load import locate
from karpenter_gitops.load.context_files import node_class_names
from karpenter_gitops.load.into_inputs import joined
from karpenter_gitops.load.files import MAX_FILE_BYTES, STDIN, ReadFile, display, expand, from_text, read_files, read_stream
from karpenter_gitops.load.partition import document_count, line_breaks
from karpenter_gitops.load.stacks import stack_release

if TYPE_CHECKING:
    from karpenter_gitops.rules.crd.engine import Crds

#: From this many bytes of input a jsonl run streams: about 100,000 Karpenter objects, which one process
#: holds in some 2.5 GB.
STREAM_BYTES = 100_000_000
#: A file (or standard input) over this many bytes is refused: some 4 million objects, an hour's run.
MAX_STREAM_BYTES = 4 * 1024**3
#: A part's bytes: about 8,000 objects, whose documents and models a part holds while it is judged.
PART_BYTES = 8_000_000
_BLOCK = 1 << 20  # bytes read at a time while looking for the markers to cut at

# A document marker with what follows it read: a slice starts there (see load.partition).
_MARKER = re.compile(rb"^---(?=[ \t\r\n])", re.MULTILINE)


@dataclass(frozen=True)
class Part:
    """One part of the run: whole ``files``, or the bytes ``start``–``end`` of the file at ``path`` (named
    ``name``; standard input, ``from_stdin``, is read from its spool), after ``lines_before`` lines and
    ``documents_before`` documents of that file, holding ``documents`` documents by its markers (the parser
    must agree)."""

    files: tuple[Path, ...] = ()
    path: Path | None = None
    name: str = ""
    start: int = 0
    end: int = 0
    lines_before: int = 0
    documents_before: int = 0
    documents: int = 0
    from_stdin: bool = False

    def read(self) -> Iterator[ReadFile]:
        if self.path is None:
            yield from read_files(self.files, live=True)
            return
        with self.path.open("rb") as file:
            file.seek(self.start)
            text = read_stream(io.BytesIO(file.read(self.end - self.start)), self.name, self.start)
        yield from_text(self.name, text, STDIN if self.from_stdin else self.path, live=True, after=self.documents_before)

    def half(self, release: versions.Release) -> Half:
        """The part read and loaded; an error in a slice is placed on its line in the file."""
        try:
            return Half(self.read, release, self.name or None)
        except InputError as err:
            if self.path is not None and err.line is not None:
                err.line += self.lines_before
            raise


@dataclass(frozen=True)
class Stream:
    """A run judged part by part: the release and its note, and the reports of its parts, each judged when
    asked for (the last holds the expired waivers of a ``--policy`` run)."""

    release: versions.Release
    release_note: str | None
    reports: Iterator[Report]


class _Unstreamable(Exception):
    """Why the parts cannot be judged as one process judges the run; ``error`` when a part could not be read
    (what one process, reading in the same order, would say first)."""

    def __init__(self, reason: str, error: InputError | None = None) -> None:
        super().__init__(reason)
        self.error = error

    def __reduce__(self):  # it crosses from the second core whole
        return type(self), (str(self), self.error)


def validate_streaming(
    paths: Sequence[Path],
    release: versions.Release | None,
    feature_gates: Mapping[str, bool] | None,
    *,
    stdin: Path | None = None,
    house: PolicySettings | None = None,
    policy: bool = False,
    waivers: Sequence[Waiver] = (),
    crd_paths: Sequence[str] = (),
    context: Sequence[str] = (),
) -> Stream | None:
    """The run on ``paths`` judged part by part, or None when it is smaller than :data:`STREAM_BYTES` or
    one process must judge it (see above). ``stdin``: the file standard input was spooled to."""
    try:
        files = expand(paths)
        sizes = [(stdin or STDIN).stat().st_size if file == STDIN else file.stat().st_size for file in files]
    except (InputError, OSError):
        return None  # one process reports it
    if sum(sizes) < STREAM_BYTES or (STDIN in files and stdin is None):
        return None
    for file, size in zip(files, sizes, strict=True):
        if size > MAX_STREAM_BYTES:
            raise InputError(f"input is over {MAX_STREAM_BYTES // 1024**3} GiB; refused", display(file), hint="split it into smaller files")
    try:
        parts = list(_parts(files, sizes, stdin))
        if len(parts) < 2 and sizes[0] <= MAX_FILE_BYTES:
            return None  # one document (a `kubectl get -o yaml` List): reading it twice would save nothing
        return _stream(parts, release, feature_gates, house, policy, waivers, crd_paths, context)
    except _Unstreamable as reason:
        large = next((file for file, size in zip(files, sizes, strict=True) if size > MAX_FILE_BYTES), None)
        if large is None:
            return None
        if reason.error is not None:
            raise reason.error from None
        raise InputError(f"cannot be judged in parts ({reason}), and one process reads no more than "
                         f"{MAX_FILE_BYTES // 1_048_576} MiB", display(large), hint="split it into smaller files") from None


def _stream(parts: list[Part], release, feature_gates, house, policy, waivers, crd_paths, context) -> Stream:
    assumed = versions.known(release or versions.DEFAULT)[0]
    summaries = _first_pass(parts, assumed)
    chosen, note = versions.known(release or stack_release([s for summary in summaries for s in summary.stacks]) or versions.DEFAULT)
    if chosen != assumed:
        summaries = _first_pass(parts, chosen)
    gates = feature_gates_of_release.canonical(feature_gates or {}, chosen, "--feature-gates")
    if not any(summary.objects or summary.observed or summary.stacks for summary in summaries):
        raise _Unstreamable("nothing to judge")
    settings = _joined_settings(summaries).with_gates(gates)
    if house is not None:
        settings = dataclasses.replace(settings, policy=settings.policy.over(house))
    names: dict[str, frozenset[str]] = {}
    for summary in summaries:
        for scope, scoped in summary.class_names.items():
            names[scope] = names.get(scope, frozenset()) | scoped
    settled = Settled(chosen, settings, node_class_names(context) if context else None, names, policy)
    crds = crds_at(crd_paths)
    return Stream(chosen, note, _reports(parts, settled, crds, (*settings.waivers, *waivers)))


def _first_pass(parts: list[Part], release: versions.Release) -> list[Summary]:
    """Each part read and loaded for ``release`` (every other one by the second core), and summed up."""
    summaries, seen = [], set()
    for _part, outcome in zip(parts, both_cores.interleaved_map(partial(_summed, release=release), parts), strict=True):
        if isinstance(outcome, _Unstreamable):
            raise outcome
        keys = outcome.keys
        if keys & seen:
            raise _Unstreamable("an object is defined in two parts")
        seen |= keys
        summaries.append(outcome.summary)
    if sum(1 for summary in summaries if summary.stacks) > 1:
        raise _Unstreamable("stack files in two parts")
    return summaries


@dataclass(frozen=True)
class _Summed:
    """A part's summary without its files and keys, and a hash of each key (what crosses from the second core)."""

    summary: Summary
    keys: frozenset[int]


def _summed(part: Part, release: versions.Release) -> _Summed | _Unstreamable:
    try:
        summary = part.half(release).summary()
    except InputError as err:
        return _Unstreamable(str(err), err)
    if summary is None:
        return _Unstreamable("loading stopped at an error")
    if part.path is not None:
        if summary.files[0].skipped:
            return _Unstreamable(f"a part of it reads as {summary.files[0].skipped}")
        if summary.last_documents != part.documents_before + part.documents:
            return _Unstreamable("a part of it reads as another number of documents than its markers say")
    return _Summed(dataclasses.replace(summary, keys=frozenset(), files=()), frozenset(hash(key) for key in summary.keys))


def _joined_settings(summaries: list[Summary]) -> Inputs:
    """The run's settings and NodeOverlays, as loading every part in one run gives them."""
    stack = next((summary.shared for summary in summaries if summary.stacks), summaries[0].shared)
    settings = summaries[0].shared  # the first join puts the stack's settings over it
    for summary in summaries[1:]:
        settings = joined(settings, summary.shared, stack)
    return settings


def _reports(parts: list[Part], settled: Settled, crds: Crds | None, waivers: tuple[Waiver, ...]) -> Iterator[Report]:
    """Each part read again and judged (every other one by the second core), its findings on their lines;
    then, with ``--policy``, the expired waivers."""
    judge = Judge(settled.release, settled.settings.policy, hygiene=settled.hygiene)
    today = dt.date.today()
    for report in both_cores.interleaved_map(partial(_judged, settled=settled, crds=crds, judge=judge, waivers=waivers, today=today), parts):
        if isinstance(report, InputError):
            raise report
        yield report
    if settled.hygiene:
        yield conclude(judge, [], Inputs(), waivers, today, objects=0)


def _judged(part: Part, settled: Settled, crds: Crds | None, judge: Judge, waivers: tuple[Waiver, ...],
            today: dt.date) -> Report | InputError:
    try:
        half = part.half(settled.release)
    except InputError as err:
        return err
    if half.inputs is None:  # it loaded in the first pass
        return InputError("changed while it was judged", part.name or display(part.files[0]), hint="run again")
    findings, _ = half.judge(settled, crds)
    if part.path is not None:
        findings = list(locate.with_lines(findings, {part.name: half.files[0].text or ""},
                                          documents_before=part.documents_before, lines_before=part.lines_before))
    return conclude(judge, findings, half.inputs, waivers, today, expiry=False)


def _parts(files: list[Path], sizes: list[int], stdin: Path | None) -> Iterator[Part]:
    """The run cut into parts: consecutive files up to :data:`PART_BYTES`, a larger file in slices."""
    group: list[Path] = []
    grouped = 0
    for file, size in zip(files, sizes, strict=True):
        if size <= PART_BYTES and file != STDIN:  # standard input is read from its spool, in slices however small
            if grouped + size > PART_BYTES and group:
                yield Part(tuple(group))
                group, grouped = [], 0
            group.append(file)
            grouped += size
            continue
        if group:
            yield Part(tuple(group))
            group, grouped = [], 0
        source = stdin if file == STDIN else file
        assert source is not None
        yield from _slices(source, display(file), file == STDIN)
    if group:
        yield Part(tuple(group))


def _slices(path: Path, name: str, from_stdin: bool) -> Iterator[Part]:
    """The file at ``path`` cut at the first document marker after each :data:`PART_BYTES`, each slice
    numbered after the lines and documents before it. A document end marker lets a document start
    without a marker, so a file with one is not cut."""
    lines = documents = start = 0
    pending = bytearray()

    def part(end: int) -> Part:
        counted = document_count(pending[:end].decode("utf-8", errors="replace"))
        if counted is None:
            raise _Unstreamable("it has document end markers ('...')")
        return Part(path=path, name=name, start=start, end=start + end, lines_before=lines, documents_before=documents,
                    documents=counted, from_stdin=from_stdin)

    with path.open("rb") as file:
        while block := file.read(_BLOCK):
            pending += block
            while len(pending) > PART_BYTES and (marker := _MARKER.search(pending, PART_BYTES)):
                cut = marker.start()
                sliced = part(cut)
                yield sliced
                lines += line_breaks(pending[:cut])
                documents += sliced.documents
                start += cut
                del pending[:cut]
    yield part(len(pending))
