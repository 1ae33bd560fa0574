"""How ``validate`` runs its one pipeline (:mod:`karpenter_gitops.app.validate_pipeline`) on a run: in one part,
in two parts on two cores, or streamed in many parts. Each strategy gives the report one process gives.

* :func:`whole`: the run in one part, in this process. Every run that another strategy hands back ends here,
  and reports its errors in its words.
* :func:`split`: from :data:`SPLIT_BYTES` of YAML (about 500 Karpenter objects), the run cut in two at about
  half its bytes (between files, or inside the file that holds the middle, at a document marker), a forked
  copy reading, loading and judging the first part while this process does the second, each holding its
  models from the first step to the last.
* :func:`streamed`: ``--format jsonl`` from :data:`STREAM_BYTES` (hundreds of megabytes: a fleet's rendered
  manifests, ``helm template`` of a chart with thousands of NodePools), cut into parts of about
  :data:`PART_BYTES`, each part's findings printed as soon as it is judged, in memory that does not grow with
  the run. Held whole, the parsed documents and models of 500,000 objects take gigabytes, and nothing is
  printed until the end; so each part is read and loaded in a first pass, which keeps only what other parts'
  rules need, and read again to be judged, every other part on the second core. Each part's findings come
  sorted, parts in input order, expired waivers last; an input over what one process reads is refused with
  the reason when it cannot be judged in parts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from karpenter_gitops.app.sources import nothing_found
from karpenter_gitops.app.validate_pipeline import Judging, Loaded, PartVerdict, Pipeline, Settled, Unsplittable
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.judge import Judge, conclude
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load import partition
from karpenter_gitops.load.files import MAX_FILE_BYTES, STDIN, display, pieces

#: From this many bytes of YAML (about 500 Karpenter objects) a run is split in two: 1,000 objects (1 MB)
#: took 0.48 s split against 0.62 s in one process; starting and stopping the copy takes about 5 ms.
SPLIT_BYTES = 500_000
#: From this many bytes of input a jsonl run streams: about 100,000 Karpenter objects, which one process
#: holds in some 2.5 GB.
STREAM_BYTES = 100_000_000
#: A file (or standard input) over this many bytes is refused from a streamed run: some 4 million objects, an hour's run.
MAX_STREAM_BYTES = 4 * 1024**3
#: A part's bytes in a streamed run: about 8,000 objects, whose documents and models a part holds while it is judged.
PART_BYTES = 8_000_000

Say = Callable[[str], None]  # a line on stderr: the note on a release newer than the project knows


@dataclass(frozen=True)
class Run:
    """What a run reads: its files (expanded; ``-`` for standard input), the file standard input was spooled
    to, if it is read, the folders below the named ones not read at all, and why, and the folder standard input
    was rendered from when it is kustomize's rendering (``validate --kustomize``: its findings have no lines)."""

    files: tuple[Path, ...]
    stdin: Path | None = None
    passed_over: tuple[tuple[Path, str], ...] = ()
    rendered: Path | None = None

    def pieces(self) -> list[partition.Piece]:
        return pieces(self.files, self.stdin, self.passed_over, self.rendered)

    def sizes(self) -> list[int]:
        """Each file's bytes."""
        return [(self.stdin or STDIN).stat().st_size if file == STDIN else file.stat().st_size for file in self.files]


@dataclass(frozen=True)
class Verdict:
    """What a validate run prints: the report, the release it was judged for and the note on that release."""

    report: Report
    release: versions.Release
    release_note: str | None = None


@dataclass(frozen=True)
class Stream:
    """A run judged part by part: the release and its note, and the reports of its parts, each judged when
    asked for (the last holds the expired waivers of a ``--policy`` run)."""

    release: versions.Release
    release_note: str | None
    reports: Iterator[Report]


def whole(run: Run, judging: Judging, say: Say, *, allow_empty: bool = False) -> Verdict:
    """The verdict on the run in one part; the first error raised, as one process meets it. A run that finds
    nothing of Karpenter's to judge is an error, unless ``allow_empty``."""
    with Pipeline([partition.whole(run.pieces())], judging, held=True) as pipeline:
        loaded = pipeline.load()
        if loaded.note:
            say(loaded.note)
        work = pipeline.works[0]
        assert work.files is not None and work.loading is not None  # held, and loaded for the release
        empty = nothing_found(work.files, work.loading.inputs())
        if empty and not allow_empty:
            raise InputError(empty)
        settled = pipeline.settle(loaded)
        return Verdict(_concluded(judging, loaded, settled, list(pipeline.judge(settled))), settled.release, loaded.note)


def split(run: Run, judging: Judging, say: Say) -> Verdict | None:
    """The verdict on the run worked out in two parts on two cores; None when the run is not split (too
    small, standard input beside files, no cut) or one process must judge it (see the pipeline)."""
    try:
        sizes = run.sizes() if STDIN not in run.files or len(run.files) == 1 else []
    except OSError:
        return None  # one process reports it
    if not sizes or sum(sizes) < SPLIT_BYTES:
        return None
    try:
        parts = partition.in_two(run.pieces(), sizes, SPLIT_BYTES)
    except InputError:
        return None
    if parts is None:
        return None
    with Pipeline(parts, judging, held=True) as pipeline:
        try:
            loaded = pipeline.load()
            settled = pipeline.settle(loaded)
        except (InputError, Unsplittable):
            return None
        if loaded.note:
            say(loaded.note)
        return Verdict(_concluded(judging, loaded, settled, list(pipeline.judge(settled))), settled.release, loaded.note)


def streamed(run: Run, judging: Judging, say: Say, progress: Say | None = None) -> Stream | None:
    """The run judged part by part, or None when it is smaller than :data:`STREAM_BYTES` or one process
    must judge it (see above); ``progress`` told of each part read, then of each judged."""
    try:
        sizes = run.sizes()
    except OSError:
        return None  # one process reports it
    if sum(sizes) < STREAM_BYTES or (STDIN in run.files and run.stdin is None):
        return None
    for file, size in zip(run.files, sizes, strict=True):
        if size > MAX_STREAM_BYTES:
            raise InputError(
                f"input is over {MAX_STREAM_BYTES // 1024**3} GiB; refused", display(file), hint="split it into smaller files"
            )
    try:
        parts = partition.in_parts(run.pieces(), sizes, PART_BYTES)
        if len(parts) < 2 and sizes[0] <= MAX_FILE_BYTES:
            return None  # one document (a `kubectl get -o yaml` List): reading it twice would save nothing
        pipeline = Pipeline(parts, judging, held=False, progress=progress)
        loaded = pipeline.load()
        settled = pipeline.settle(loaded)
    except (partition.Uncuttable, Unsplittable, InputError) as reason:
        large = next((file for file, size in zip(run.files, sizes, strict=True) if size > MAX_FILE_BYTES), None)
        if large is None:
            return None
        if isinstance(reason, InputError):
            raise
        raise InputError(
            f"cannot be judged in parts ({reason}), and one process reads no more than {MAX_FILE_BYTES // 1_048_576} MiB",
            display(large),
            hint="split it into smaller files",
        ) from None
    if loaded.note:
        say(loaded.note)
    return Stream(settled.release, loaded.note, _reports(pipeline, judging, settled))


def _concluded(judging: Judging, loaded: Loaded, settled: Settled, verdicts: Sequence[PartVerdict]) -> Report:
    """The one report on every part's findings, with the notes on what the user's CRDs left unchecked."""
    settings = settled.settings
    judge = Judge(settled.release, settings.policy, hygiene=settled.hygiene)
    findings = [finding for verdict in verdicts for finding in verdict.findings]
    subjects = [subject for verdict in verdicts for subject in verdict.subjects]
    report = conclude(judge, findings, settings, (*settings.waivers, *judging.waivers), objects=loaded.objects, subjects=subjects)
    checked = None
    for verdict in verdicts:
        if verdict.checked is not None:
            checked = verdict.checked if checked is None else checked.joined(verdict.checked)
    notes = tuple(checked.notes) if checked is not None else ()
    return dataclasses.replace(report, notes=report.notes + notes)


def _reports(pipeline: Pipeline, judging: Judging, settled: Settled) -> Iterator[Report]:
    """Each part's report as it is judged; then, with ``--policy``, the expired waivers."""
    judge = Judge(settled.release, settled.settings.policy, hygiene=settled.hygiene)
    waivers = (*settled.settings.waivers, *judging.waivers)
    today = dt.date.today()
    with contextlib.closing(pipeline.judge(settled)) as verdicts:
        for judged, verdict in enumerate(verdicts, 1):
            pipeline.progress(f"judged {judged:,} of {len(pipeline.works):,} parts")
            own = Inputs(notes=verdict.notes, skipped=verdict.skipped)
            yield conclude(
                judge, verdict.findings, own, waivers, today, objects=verdict.objects, subjects=verdict.subjects, expiry=False
            )
    if settled.hygiene:
        yield conclude(judge, [], Inputs(), waivers, today, objects=0)
