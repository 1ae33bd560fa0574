"""What a command reads: files → the Karpenter release to judge against → inputs (and a policy file).

Every command (``validate``, ``plan``, ``render``, ``preview``) starts here, so each loads the
same way: the release is the one given, else the one the stack files agree on, else the default.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from karpenter_gitops.core import feature_gates as feature_gates_of_release
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs, PolicySettings
from karpenter_gitops.load import policy_settings
from karpenter_gitops.load.files import STDIN_NAME, ReadFile, Texts, display, is_stack_file, parse_yaml, read_files, read_text
from karpenter_gitops.load.into_inputs import Loading, load_files, objects_in
from karpenter_gitops.load.stacks import stack_aws_config, stack_release, stack_workloads


@dataclass(frozen=True)
class Sources:
    """What a command read: its files, the release to judge against and the loaded inputs."""

    files: tuple[ReadFile, ...]
    release: versions.Release
    inputs: Inputs
    note: str | None = None  # why the release judged is not the one asked for (newer than the project knows)
    feature_gates: Mapping[str, bool] = field(default_factory=dict)  # --feature-gates, over the stack's

    @property
    def documents(self) -> list[tuple[str, list[Any]]]:
        return [(file.name, file.documents) for file in self.files]

    @property
    def texts(self) -> Texts:
        """File name → text, to locate findings on their lines."""
        return Texts(self.files)

    def with_policy(self, settings: PolicySettings | None) -> Sources:
        """The inputs judged under a policy file's ``settings``, with the stack's own block laid over them."""
        if settings is None:
            return self
        return dataclasses.replace(self, inputs=dataclasses.replace(self.inputs, policy=self.inputs.policy.over(settings)))

    @property
    def empty(self) -> str | None:
        """One line when the run found nothing of Karpenter's to judge (see :func:`nothing_found`); else None."""
        return nothing_found(self.files, self.inputs)

    @property
    def workload_paths(self) -> tuple[str, ...]:
        """The workload manifests the stack file names (``karpenter-gitops:workloads``), if any."""
        return stack_workloads(self.documents)

    @property
    def aws_config(self) -> dict[str, Any]:
        """The stack's ``aws:`` settings (what its pulumi-aws provider uses), if a stack file was read."""
        return stack_aws_config(self.documents)


def nothing_found(files: Sequence[ReadFile], inputs: Inputs) -> str | None:
    """One line when ``files`` (loaded into ``inputs``) hold nothing of Karpenter's to judge (no object, no
    misspelt one, no stack file), as a CI job pointed at the wrong folder would; else None."""
    if inputs.objects or inputs.observations or any(is_stack_file(file.documents) for file in files):
        return None
    # What the files hold instead tells a wrong folder at a glance; the first file passed over says
    # why: a file named on purpose that is a template or broken YAML is the likeliest reason, or a
    # kustomization's patch files, which hold no whole object.
    found = _other_kinds(files)
    skipped, passed_over = "", inputs.skipped + inputs.passed_over
    if len(passed_over) == 1:
        skipped = f"; skipped {passed_over[0]}"
    elif passed_over:
        skipped = f"; {len(passed_over)} skipped, the first {passed_over[0]}"
    read = sum(1 for file in files if file.passed_over is None)
    return (
        f"no Karpenter object found in {read} file(s), so nothing was checked{found}{skipped} "
        "(hint: name the files or folder holding your EC2NodeClass and NodePool manifests, or pass --allow-empty)"
    )


_KIND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}\Z")  # what a kind's name looks like; anything else is not shown
_KINDS_SHOWN = 4


def _other_kinds(files: Iterable[ReadFile]) -> str:
    """The clause naming the kinds the files hold (a List's items each in its place), in the order met,
    such as ``; found only other kinds: ConfigMap, Deployment``: at most a few named, the rest counted;
    a kind that is no kind's name is counted, never shown."""
    kinds = dict.fromkeys(
        found["kind"]
        for file in files
        for _, found, _ in objects_in(file.documents.numbered())
        if isinstance(found, Mapping) and isinstance(found.get("kind"), str)
    )
    if not kinds:
        return ""
    named = [kind for kind in kinds if _KIND_NAME.match(kind)][:_KINDS_SHOWN]
    more = len(kinds) - len(named)
    if not named:
        return f"; found only {more} other kind(s)"
    return "; found only other kinds: " + ", ".join(named) + (f" and {more} more" if more else "")


def read_sources(
    paths: Sequence[Path],
    release: versions.Release | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    rendered: tuple[str, bytes] | None = None,
) -> Sources:
    """Read ``paths`` and load them for ``version`` (default: the stacks' release, else the newest), on a
    cluster with ``feature_gates`` set as given over what the stack declares. ``rendered`` stands in for
    standard input: (its name, the stream), kustomize's rendering of an overlay."""
    # When the stack files name another release, or loading stopped at an error, everything is loaded
    # again once all is read, exactly as it always was (the same release, the same first error).
    name, stream = (rendered[0], io.BytesIO(rendered[1])) if rendered else (STDIN_NAME, None)
    with collector_paused():
        files, loading = read_loading(read_files(paths, stream, live=True, stdin_name=name), release)
        documents = [(file.name, file.documents) for file in files]
        chosen, note = release_to_judge(release, documents)
        gates = feature_gates_of_release.canonical(feature_gates or {}, chosen, "--feature-gates")
        inputs = loading.inputs() if loading is not None and loading.release == chosen else load_files(files, chosen)
    return Sources(tuple(files), chosen, inputs.with_gates(gates), note, gates)


@contextlib.contextmanager
def collector_paused(*, freeze: bool = True) -> Iterator[None]:
    """Python's cyclic garbage collector paused while a run reads and loads: that builds millions of dicts,
    lists and models, none of them in a reference cycle, so its passes over them (about a seventh of reading
    and loading 10,000 objects) find nothing. What was read is then frozen (``gc.freeze``: later passes skip
    those objects; reference counting still frees each when it is let go), unless ``freeze`` is off (a part of
    a run let go once judged). Inside a pause, another is none of its own."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            if freeze:
                gc.freeze()
            gc.enable()


def release_to_judge(asked: versions.Release | None, files: Iterable[tuple[str, Any]]) -> tuple[versions.Release, str | None]:
    """The release a run is judged for: the one asked for, else the one the stack files among ``files``
    ((name, documents)) agree on, else the default; and the note on a release newer than the project knows."""
    return versions.known(asked or stack_release(files) or versions.DEFAULT)


def read_loading(
    read: Iterable[ReadFile], release: versions.Release | None, *, specs: bool = True
) -> tuple[list[ReadFile], Loading | None]:
    """The files ``read`` (read with ``live``, as they are asked for), each loaded as it is read, for ``release``
    (else the default), before its documents are packed: unpacking every document again to load it cost
    about as much as parsing it. The loading is None when it stopped at an error (it is then done again,
    to report the first). Without ``specs`` (a first pass that lets the files go), the objects are only
    named (see :class:`~karpenter_gitops.load.into_inputs.Loading`) and the documents stay unpacked."""
    loading: Loading | None = Loading(versions.known(release or versions.DEFAULT)[0], specs=specs)
    files = []
    for file in read:
        if loading is not None:
            try:
                loading.add(file)
            except InputError:
                loading = None
        if specs:
            file.documents.compact()
        files.append(file)
    return files, loading


def house_policy(policy_file: Path | None, rules: PolicySettings | None = None) -> PolicySettings | None:
    """The repository's house rules: a policy file's settings, with ``rules`` (the configuration file's) laid
    over them rule by rule; None when there are neither."""
    settings = read_policy_file(policy_file) if policy_file else None
    if rules is None:
        return settings
    return rules if settings is None else rules.over(settings)


def read_policy_file(path: Path) -> PolicySettings:
    """A policy file's settings: one YAML mapping with the keys of a stack's ``karpenter-gitops:policy`` block."""
    name = display(path)
    documents = [d for d in parse_yaml(read_text(path), name) if d is not None]
    if len(documents) != 1 or not isinstance(documents[0], Mapping):
        raise InputError(
            "a policy file holds one mapping of policy settings",
            name,
            hint="e.g. rules: {policy/ebs-encrypted: {severity: error}}; keys as in a stack's karpenter-gitops:policy",
        )
    return policy_settings.parse(documents[0], name, key="", origin=f"set by the policy file {name}")
