"""``validate``'s one pipeline: read → load → judge → locate over each part of a run, plus the context the
parts share.

Why parts: reading the YAML, building the models and judging each object are nearly all of a large run,
and all of it is work on one file or one object. A rule that looks beyond its object needs little: the
EC2NodeClass names a NodePool may reference, the NodeOverlays (judged against each other) and the stack's
settings (release, cluster and feature gates, policy, controller). So parts exchange only those, a
:class:`Summary` each, and the models stay where they were built (pickling them costs about a third of
building them). How a run is cut into parts (:mod:`karpenter_gitops.load.partition`) and where each part
runs (:mod:`karpenter_gitops.app.executor`) is a strategy's (:mod:`karpenter_gitops.app.validate_strategies`).

The pipeline, whatever the strategy:

1. each part is read and loaded for the release asked for (else the default) and summed up;
2. the summaries settle the run's release (the stack files', when none is asked for), and every part is
   loaded again when that is another one, as one process loads its files again;
3. they settle the context every part is judged in (:class:`Settled`): the stack's settings over the policy
   file, the feature gates asked for, every NodeOverlay, every part's EC2NodeClass names;
4. each part is judged in that context, with the user's CRDs when given, and its findings are placed on
   their lines in its own files, a slice's as in its whole file.

A part is held between the steps (its models judged where they were built) or, for a run too large to
hold, read again for the judging (memory bounded by a part). The report is the one a single process gives:
a run of several parts whose parts depend on each other is refused (:class:`Unsplittable`): an object
defined in two parts (one process keeps the first and names the second its duplicate), stack files in two
(a controller block reads the cluster an earlier stack file named), a slice of a file that reads otherwise
than as that part of it, loading stopped at an error, nothing to judge. The strategy then judges the run in
one part, which gives its errors in the same words.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karpenter_gitops.app import executor
from karpenter_gitops.app.sources import collector_paused, read_loading, release_to_judge
from karpenter_gitops.core import feature_gates as feature_gates_of_release
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding
from karpenter_gitops.core.inputs import Inputs, PolicySettings, Waiver
from karpenter_gitops.judge import Judge
from karpenter_gitops.judge.report import Subject
from karpenter_gitops.load import kustomizations, locate
from karpenter_gitops.load.context_files import node_class_names
from karpenter_gitops.load.files import ReadFile, Texts, is_stack_file, read_part
from karpenter_gitops.load.into_inputs import Loading, joined, loaded
from karpenter_gitops.load.partition import Part

if TYPE_CHECKING:
    from karpenter_gitops.rules.crd.engine import CrdCheck, Crds, Spread
    from karpenter_gitops.rules.crd.engine import Outcome as CrdOutcome


class Unsplittable(Exception):
    """Why the parts of a run cannot be judged as one process judges the run."""


@dataclass(frozen=True)
class Judging:
    """What a run is judged with, whatever its parts: the release and feature gates asked for, the policy
    file's settings, ``--policy`` and its waivers, the user's CRDs (``--crd``) and ``--context``."""

    release: versions.Release | None = None
    feature_gates: Mapping[str, bool] | None = None
    house: PolicySettings | None = None
    policy: bool = False
    waivers: tuple[Waiver, ...] = ()
    crd_paths: tuple[str, ...] = ()
    context: tuple[str, ...] = ()

    @functools.cached_property
    def crds(self) -> Crds | None:
        """The CRDs under ``crd_paths``, compiled (or loaded as compiled by an earlier run) when a run is first
        judged (a cached verdict needs none); None when none are given."""
        if not self.crd_paths:
            return None
        from karpenter_gitops.app import compiled_crds  # jsonschema and a CEL interpreter, only for runs given CRDs

        return compiled_crds.load(self.crd_paths)


@dataclass(frozen=True)
class Summary:
    """What one part loaded, as the other parts and the report need it: no EC2NodeClass, NodePool or
    CapacityBuffer model crosses between processes, only the class names and a hash of each object's key."""

    stacks: tuple[tuple[str, Any], ...]  # (file name, documents) of its stack files: the release they name
    shared: Inputs | None  # the NodeOverlays, the stack's settings, the notes; no other model. None: loading stopped at an error
    class_names: Mapping[str, frozenset[str]]
    keys: frozenset[int]  # a hash of each object's (scope, kind, name): an object in two parts is a duplicate
    objects: int
    observed: bool  # loading observed something (a misspelt kind is not an object, yet is something to report)
    misread: str | None = None  # how a slice of a file reads otherwise than as that part of it


@dataclass(frozen=True)
class Loaded:
    """Every part loaded for the run's release: their summaries, the release, its note and feature gates."""

    summaries: list[Summary]
    release: versions.Release
    note: str | None
    gates: Mapping[str, bool]

    @property
    def objects(self) -> int:
        return sum(summary.objects for summary in self.summaries)


@dataclass(frozen=True)
class Settled:
    """The context every part is judged in: the run's release, its settings, every part's class names."""

    release: versions.Release
    settings: Inputs  # the stack's settings over the policy file, with --feature-gates; every NodeOverlay
    context_names: frozenset[str] | None  # --context
    class_names: Mapping[str, frozenset[str]]  # every part's, by scope
    hygiene: bool


@dataclass(frozen=True)
class PartVerdict:
    """One part judged: its findings on their lines, what the user's CRDs left unchecked, and what its
    loading counted, listed and noted (a report of the part alone needs them)."""

    findings: list[Finding]
    checked: CrdCheck | None
    objects: int
    subjects: tuple[Subject, ...]
    notes: tuple[str, ...]
    skipped: tuple[str, ...]


def _collector_paused(step: Callable[[PartWork, Any], Any]) -> Callable[[PartWork, Any], Any]:
    """``step`` run with the cyclic collector paused (see :func:`~karpenter_gitops.app.sources.collector_paused`),
    in whichever process runs it: a part read again for each step (a streamed run) spent half its time in the
    collector's passes, and leaves no cycle worth collecting once let go. Held parts run paused already."""

    @functools.wraps(step)
    def paused(work: PartWork, argument: Any) -> Any:
        with collector_paused(freeze=False):
            return step(work, argument)

    return paused


class PartWork:
    """One part of a run in the process that works on it: read and loaded, then judged there. Held, it keeps
    its files and models between the steps; else it reads them again for each."""

    def __init__(self, part: Part, *, held: bool, crds: Crds | None = None, spread: Spread | None = None) -> None:
        self.part, self.held, self.crds, self.spread = part, held, crds, spread
        self.files: tuple[ReadFile, ...] | None = None
        self.loading: Loading | None = None  # None: not loaded, or loading stopped at an error
        self.loaded_for: versions.Release | None = None
        self.crd_outcomes: dict[tuple[str, int], CrdOutcome] = {}  # see _checked_as_read

    @_collector_paused
    def summary(self, release: versions.Release) -> Summary:
        """The part read (unless held) and loaded for ``release``, summed up for the other parts. A part read
        again to be judged is only named here: the specs of its objects stay in it (see :class:`Summary`)."""
        files, loading = self._loaded(release, specs=self.held)
        self._let_go()
        stacks = tuple((file.name, file.documents) for file in files if is_stack_file(file.documents))
        if loading is None:
            return Summary(stacks, None, {}, frozenset(), 0, False, self._misread(files))
        inputs = loading.inputs()
        shared = dataclasses.replace(inputs, node_classes=(), node_pools=(), capacity_buffers=(), observations=())
        return Summary(
            stacks,
            shared,
            inputs.node_class_names_by_scope,
            frozenset(hash(key) for key in loading.keys),
            len(inputs.objects),
            bool(inputs.observations),
            self._misread(files),
        )

    def load_strictly(self, release: versions.Release) -> None:
        """Load the part for ``release``, raising the first error (a run judged in one part reports it)."""
        files, loading = self._loaded(release)
        if loading is None:
            self.loading = loaded(files, release)

    @_collector_paused
    def verdict(self, settled: Settled) -> PartVerdict:
        """The findings on this part's objects and what its loading observed, in the whole run's context, with
        the user's CRDs' verdicts when given, each on its line (finding the lines composes the documents with
        findings into YAML nodes: a run with many findings, such as ``--policy``'s advisories, spends as long on
        it as on reading); and what the CRDs left unchecked."""
        files, loading = self._loaded(settled.release)
        self._let_go()
        if loading is None:  # it loaded when it was summed up
            raise InputError("changed while it was judged", self.part.pieces[0].name, hint="run again")
        own = loading.inputs()
        settings = settled.settings
        view = dataclasses.replace(
            own,
            cluster=settings.cluster,
            policy=settings.policy,
            controller=settings.controller,
            node_overlays=settings.node_overlays,
            node_classes_elsewhere=settled.class_names,
            context_node_classes=settled.context_names,
        )
        judge = Judge(settled.release, settings.policy, hygiene=settled.hygiene)
        findings = judge.objects(view, judged=own.objects)
        checked = None
        if self.crds is not None:
            checked = (
                self.crds.check_inputs(own, self.spread) if self.spread else self.crds.check_inputs(own, known=self.crd_outcomes)
            )
            self.crd_outcomes = {}
            findings = judge.with_crd_findings(findings, checked.observations)
            checked = dataclasses.replace(checked, observations=())
        offsets = {piece.name: (piece.documents_before, piece.lines_before) for piece in self.part.pieces if not piece.whole}
        located = [file for file, piece in zip(files, self.part.pieces, strict=True) if piece.rendered is None]
        findings = list(locate.with_lines(findings, Texts(located), offsets=offsets))
        for file, piece in zip(files, self.part.pieces, strict=True):
            if piece.rendered is not None:
                findings = kustomizations.with_origins(findings, file.documents, piece.rendered)
        return PartVerdict(findings, checked, len(own.objects), Subject.each_of(own.objects), own.notes, own.skipped)

    def _loaded(self, release: versions.Release, *, specs: bool = True) -> tuple[tuple[ReadFile, ...], Loading | None]:
        """The part's files and their loading for ``release``: read now, unless held from an earlier step (a
        part whose copy went away is read here, the first time it is asked for); without ``specs``, its
        objects only named, for a summary. Read with them (to be judged), its objects are checked with the
        user's CRDs as they are read (see :meth:`_checked_as_read`)."""
        if self.files is None:
            read = read_part(self.part, live=True)
            if specs and self.crds is not None and self.spread is None:
                read = self._checked_as_read(read)
            files, self.loading = read_loading(read, release, specs=specs)
            self.files, self.loaded_for = tuple(files), release
        elif self.loaded_for != release:
            self.loaded_for = release
            try:
                self.loading = loaded(self.files, release)
            except InputError:
                self.loading = None
        return self.files, self.loading

    def _checked_as_read(self, read: Iterable[ReadFile]) -> Iterator[ReadFile]:
        """``read``, each document of a kind the user gave a CRD for checked with it while it is as parsed: loading
        keeps an object's manifest pickled, and unpickling every manifest again for the check cost as much as the
        check. The outcomes wait in :attr:`crd_outcomes`, by file and document, for the objects those documents
        are the whole of (the check reads a manifest and nothing else). A run of one part instead spreads the
        check over both cores when it judges (``spread``)."""
        assert self.crds is not None
        known = self.crds.by_kind
        for file in read:
            if not is_stack_file(file.documents):
                for index, document in enumerate(file.documents):
                    if isinstance(document, dict) and document.get("kind") in known:
                        self.crd_outcomes[(file.name, index + 1)] = self.crds.by_kind[document["kind"]].check(document)
            yield file

    def _let_go(self) -> None:
        """Drop the files and models, unless held: the next step reads them again."""
        if not self.held:
            self.files, self.loading, self.loaded_for = None, None, None

    def _misread(self, files: Sequence[ReadFile]) -> str | None:
        """How a slice of a file read otherwise than as that part of it; None when none did."""
        for piece, file in zip(self.part.pieces, files, strict=True):
            if piece.whole:
                continue
            if file.skipped:
                return f"a part of it reads as {file.skipped}"
            if len(file.documents) != piece.documents_before + piece.documents:
                return "a part of it reads as another number of documents than its markers say"
            if is_stack_file(file.documents):
                return "a part of it reads as a stack file"
        return None


class Pipeline:
    """A run's parts, read, loaded and judged: :meth:`load`, then :meth:`settle`, then :meth:`judge`. Held
    parts (``with Pipeline(...)``) are worked on by one executor from the first step to the last, the cyclic
    collector paused meanwhile (see :func:`~karpenter_gitops.app.sources.collector_paused`); parts read again
    have an executor for each step."""

    def __init__(
        self, parts: Sequence[Part], judging: Judging, *, held: bool, progress: Callable[[str], None] | None = None
    ) -> None:
        self.judging, self.held = judging, held
        self.progress = progress or (lambda _message: None)  # told of each part summed up (a streamed run's progress line)
        spread = executor.ordered_map if len(parts) == 1 else None  # one part: the CRD check may take the second core
        self.works = [PartWork(part, held=held, crds=judging.crds, spread=spread) for part in parts]
        self._scope = contextlib.ExitStack()
        self._executor: executor.Executor[PartWork] | None = None

    def __enter__(self) -> Pipeline:
        if self.held:
            self._scope.enter_context(collector_paused())  # before the fork: the copy reads with it paused too
            self._executor = self._scope.enter_context(executor.Executor(self.works))
        return self

    def __exit__(self, *exc: object) -> None:
        self._scope.close()

    def load(self) -> Loaded:
        """Every part read and loaded for the run's release. A run of one part raises the first error as one
        process does; a run of several raises Unsplittable, or an InputError, when its parts cannot be
        judged as one."""
        asked = self.judging.release
        assumed = versions.known(asked or versions.DEFAULT)[0]
        summaries = self._summaries(assumed)
        chosen, note = release_to_judge(asked, [stack for summary in summaries for stack in summary.stacks])
        gates = feature_gates_of_release.canonical(self.judging.feature_gates or {}, chosen, "--feature-gates")
        if len(self.works) == 1 and summaries[0].shared is None:
            self.works[0].load_strictly(chosen)
        if chosen != assumed or summaries[0].shared is None:
            summaries = self._summaries(chosen)
        if len(self.works) > 1 and not any(summary.objects or summary.observed or summary.stacks for summary in summaries):
            raise Unsplittable("nothing to judge")  # one process says so, in its words
        return Loaded(summaries, chosen, note, gates)

    def settle(self, loaded: Loaded) -> Settled:
        """The context every part is judged in."""
        summaries = loaded.summaries
        shared = [summary.shared for summary in summaries if summary.shared is not None]  # every part, loaded
        stack = next((part for part, summary in zip(shared, summaries, strict=True) if summary.stacks), shared[0])
        settings = shared[0]  # the first join puts the stack's settings over it
        for part in shared[1:]:
            settings = joined(settings, part, stack)
        settings = settings.with_gates(loaded.gates)
        if self.judging.house is not None:
            settings = dataclasses.replace(settings, policy=settings.policy.over(self.judging.house))
        names: dict[str, frozenset[str]] = {}
        for summary in summaries:
            for scope, scoped in summary.class_names.items():
                names[scope] = names.get(scope, frozenset()) | scoped
        context = self.judging.context
        return Settled(loaded.release, settings, node_class_names(context) if context else None, names, self.judging.policy)

    def judge(self, settled: Settled) -> Generator[PartVerdict, None, None]:
        """Each part judged in ``settled``, in their order, each as soon as it is."""
        return self._each(PartWork.verdict, settled)

    def _summaries(self, release: versions.Release) -> list[Summary]:
        """Each part summed up for ``release``, checked, in their order (several parts: Unsplittable at the first
        that cannot be judged as a part of the run)."""
        summaries: list[Summary] = []
        seen: set[int] = set()
        objects = 0
        for summary in self._each(PartWork.summary, release):
            objects += summary.objects
            self.progress(f"read {len(summaries) + 1:,} of {len(self.works):,} parts ({objects:,} objects)")
            if len(self.works) > 1:
                if summary.shared is None:
                    raise Unsplittable("loading stopped at an error")
                if summary.misread:
                    raise Unsplittable(summary.misread)
                if summary.keys & seen:
                    raise Unsplittable("an object is defined in two parts")
                seen |= summary.keys
            summaries.append(dataclasses.replace(summary, keys=frozenset()))  # checked: held once, in seen
        if sum(1 for summary in summaries if summary.stacks) > 1:
            raise Unsplittable("stack files in two parts")
        return summaries

    def _each(self, step: Any, argument: Any) -> Generator[Any, None, None]:
        if self._executor is not None:
            yield from self._executor.each(step, argument)
            return
        with executor.Executor(self.works) as fresh:
            yield from fresh.each(step, argument)
