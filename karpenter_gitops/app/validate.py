"""The ``validate`` use case: judge manifests and stack files offline, as Karpenter's API server and ours would.

:func:`validate` runs a command: standard input spooled so the run can read it more than once, the verdict
taken from the cache when nothing it depends on changed, else worked out by the strategy that suits the run
(:mod:`karpenter_gitops.app.validate_strategies`: streamed, split on two cores, or whole), and printed in
the format asked for; or, for a fleet, each stack judged as its own cluster.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karpenter_gitops.adapters import kustomize
from karpenter_gitops.app import validate_strategies as strategies
from karpenter_gitops.app.sources import house_policy
from karpenter_gitops.app.validate_pipeline import Judging
from karpenter_gitops.app.validate_strategies import Run, Verdict
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS, PolicySettings, Waiver
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load import waiver_files
from karpenter_gitops.load.files import MAX_FILE_BYTES, STDIN, expand, spool
from karpenter_gitops.output.progress import progress_line
from karpenter_gitops.output.report_text import print_fleet, print_jsonl_parts, print_note, print_report


@dataclass(frozen=True)
class Request:
    """A ``validate`` command: the run's paths, or the stacks of a fleet (each judged as its own cluster), or a
    kustomization folder whose rendering is judged, what they are judged with, and how the verdict is printed."""

    paths: tuple[Path, ...] = ()
    kustomize: Path | None = None
    fleet: tuple[str, ...] = ()
    release: versions.Release | None = None
    feature_gates: Mapping[str, bool] | None = None
    crd_paths: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    policy: bool = False
    policy_file: Path | None = None
    policy_rules: PolicySettings | None = None  # the configuration file's rules, over the policy file's
    waiver_file: str | None = None
    allow_empty: bool = False
    fmt: str = "text"
    show_info: bool = False  # text, sarif and junit: the info findings too
    quiet: bool = False  # text: the findings and the summary line only
    cache: bool = True


def validate(request: Request) -> Outcome:
    """Run the command: the verdict printed, and what it came to."""
    house = house_policy(request.policy_file, request.policy_rules)
    judging = Judging(
        release=request.release,
        feature_gates=request.feature_gates,
        house=house,
        policy=request.policy,
        waivers=waivers_for(request.policy, request.waiver_file),
        crd_paths=request.crd_paths,
        context=request.context,
    )
    if request.fleet:
        return _fleet(request, judging)
    streaming = request.fmt == "jsonl"
    with _read_in(request, strategies.MAX_STREAM_BYTES if streaming else MAX_FILE_BYTES) as (paths, stdin, rendered):
        if streaming:
            with progress_line() as progress:
                stream = _streamed(paths, stdin, judging, rendered, progress.say)
                if stream is not None:
                    return print_jsonl_parts(stream.reports, progress.aside).exit_code
        verdict, cached = validate_once(
            paths,
            lambda paths: judged(_run(paths, stdin, rendered), judging, allow_empty=request.allow_empty),
            options={
                "release": repr(request.release),
                "policy": request.policy,
                "allow_empty": request.allow_empty,
                "feature_gates": repr(sorted((request.feature_gates or {}).items())),
                "policy_rules": repr(request.policy_rules),
                "today": dt.date.today().isoformat() if request.policy else None,  # a waiver may expire overnight
            },
            extra=[
                *request.crd_paths,
                *request.context,
                *waiver_paths(request.policy, request.waiver_file),
                *([request.policy_file] if request.policy_file else []),
            ],
            cache=request.cache,
            note=print_note,
        )
    if cached and verdict.release_note:
        print_note(verdict.release_note)
    print_report(verdict.report, verdict.release, request.fmt, show_info=request.show_info, quiet=request.quiet)
    return verdict.report.exit_code


def judged(run: Run, judging: Judging, *, allow_empty: bool = False) -> Verdict:
    """The verdict on ``run``: split on two cores when that pays, else whole. A release newer than the project
    knows is said on stderr."""
    return strategies.split(run, judging, print_note) or strategies.whole(run, judging, print_note, allow_empty=allow_empty)


def _streamed(
    paths: Sequence[Path], stdin: Path | None, judging: Judging, rendered: Path | None, progress: Callable[[str], None]
) -> strategies.Stream | None:
    """The run judged part by part when it is large enough, ``progress`` told of each part read and judged; None
    when it is judged whole (a path that cannot be read too: the whole run reports it)."""
    try:
        run = _run(paths, stdin, rendered)
    except InputError:
        return None
    return strategies.streamed(run, judging, print_note, progress)


def _run(paths: Sequence[Path], stdin: Path | None, rendered: Path | None = None) -> Run:
    """What ``paths`` name, standard input read from ``stdin`` (kustomize's rendering of the folder ``rendered``, if given)."""
    passed_over: list[tuple[Path, str]] = []
    files = expand(paths, passed_over)
    return Run(tuple(files), stdin, tuple(passed_over), rendered)


def _fleet(request: Request, judging: Judging) -> Outcome:
    """Each stack judged on its own, in one part, and printed before the next is read; one report grouped by
    stack, a fleet summary, the worst exit code."""
    from karpenter_gitops.load.stacks import stack_file

    codes: dict[str, Outcome] = {}

    def each_judged() -> Iterator[tuple[str, versions.Release, Report]]:
        for stack in request.fleet:
            verdict = strategies.whole(Run((stack_file(stack),)), judging, print_note, allow_empty=request.allow_empty)
            codes[stack] = verdict.report.exit_code
            yield stack, verdict.release, verdict.report

    print_fleet(each_judged(), request.fmt, show_info=request.show_info)
    return Outcome.worst(codes.values())


@contextlib.contextmanager
def _spooled_stdin(paths: Sequence[Path], limit: int) -> Iterator[Path | None]:
    """Standard input, when ``paths`` read it, copied to a temporary file that stands in for it for the run
    (deleted when it ends): a run may measure it, cut it and read it more than once (judged in parts or on two
    cores, then in one part after all). Its path, or None. Input over ``limit`` bytes is refused by whoever
    reads it."""
    if STDIN not in paths:
        yield None
        return
    with spool(sys.stdin.buffer, limit) as spooled:
        yield Path(spooled.name)


@contextlib.contextmanager
def _read_in(request: Request, limit: int) -> Iterator[tuple[Sequence[Path], Path | None, Path | None]]:
    """The run's paths, the file standard input was spooled to (see :func:`_spooled_stdin`) and, when it is
    kustomize's rendering of ``--kustomize DIR`` standing in for standard input, that folder (the run's path is
    then ``-``, so the verdict is never cached: the folder's files are not all it depends on)."""
    if request.kustomize is None:
        with _spooled_stdin(request.paths, limit) as stdin:
            yield request.paths, stdin, None
        return
    with spool(io.BytesIO(kustomize.render(request.kustomize)), limit) as spooled:
        yield (STDIN,), Path(spooled.name), request.kustomize


def waivers_for(policy: bool, waiver_file: str | None) -> tuple[Waiver, ...]:
    """The waivers of a --policy run: the named file, else the default file if there is one."""
    return tuple(waiver for path in waiver_paths(policy, waiver_file) for waiver in waiver_files.read_file(path))


def waiver_paths(policy: bool, waiver_file: str | None) -> list[str]:
    """The waiver file a run reads: the named one, else, with --policy, the default when it exists."""
    if waiver_file:
        return [waiver_file]
    return [str(DEFAULT_WAIVERS)] if policy and DEFAULT_WAIVERS.is_file() else []


def validate_once(
    run_paths: Sequence[Path],
    judge: Callable[[Sequence[Path]], Verdict],
    *,
    options: dict[str, Any],
    extra: Sequence[str | Path] = (),
    cache: bool = True,
    note: Callable[[str], None],
) -> tuple[Verdict, bool]:
    """``judge(run_paths)``, or its stored verdict when nothing it depends on changed (see
    :mod:`karpenter_gitops.app.verdict_cache`); the verdict and whether it came from the cache."""
    from karpenter_gitops.app import verdict_cache

    run_key = verdict_cache.key(run_paths, options, extra) if cache else None
    stored = verdict_cache.load(run_key, note) if run_key else None
    if isinstance(stored, Verdict):
        return stored, True
    verdict = judge(run_paths)
    if run_key:
        verdict_cache.store(run_key, verdict, note)
    return verdict, False
