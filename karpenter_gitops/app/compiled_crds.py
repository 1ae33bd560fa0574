"""The user's CRDs (``--crd``) compiled once per CRD files and tool, and kept across runs as the verdicts are.

Compiling a release's CRDs (reading their YAML, translating the structural schemas, compiling every CEL
rule) costs several times what loading the result does, and a repository's CRDs change with its Karpenter
release, not between runs. The key is a SHA-256 over the CRD files (each path as the user gave it, the files
it names and their bytes) and what a verdict's key reads of the tool itself
(:func:`~karpenter_gitops.app.verdict_cache.rule_set_version` and
:func:`~karpenter_gitops.app.verdict_cache.environment`: any edit to the engine, another Python or another
version of the schema and CEL runtimes is another key). The entry is the pickled :class:`Crds`: its CEL
programs pickle as the runtime's serialized checked expressions, its schema validators are built again from
their JSON schemas. Entries live in the verdict cache's directory, in ``compiled-crds/``, written
atomically; ``KARPENTER_GITOPS_VERDICT_CACHE=off`` turns them off too.

What is kept is what the CRDs compile into, never a verdict, so ``--no-cache`` (judge again) still loads it.
An entry that does not load is compiled again and replaced; a directory that cannot be written means
compiling every run, and the verdict cache, kept in the same directory, says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from karpenter_gitops.app import verdict_cache
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import crds as crd_files
from karpenter_gitops.load.files import STDIN, expand
from karpenter_gitops.rules.crd.engine import Crds

FORMAT = b"compiled-crds/1"  # bump when what is pickled changes shape
FOLDER = "compiled-crds"
ENTRIES_KEPT = 16  # a few releases' CRDs, for a few installs of the tool


def load(paths: Sequence[str | Path]) -> Crds:
    """The CRDs under ``paths``, loaded from the cache when compiled before, else compiled (and kept)."""
    folder = verdict_cache.directory()
    entry = key(paths) if folder is not None else None
    if folder is None or entry is None:
        return crd_files.load(paths)
    try:
        stored = verdict_cache.read(folder / FOLDER / entry)
    except Exception:  # absent, truncated or foreign: compiled below, and replaced
        stored = None
    if isinstance(stored, Crds):
        return stored
    compiled = crd_files.load(paths)
    try:
        verdict_cache.write(folder / FOLDER, entry, compiled, ENTRIES_KEPT)
    except Exception:  # not kept: the next run compiles again, which costs only time
        pass
    return compiled


def key(paths: Sequence[str | Path]) -> str | None:
    """The entry of the CRDs under ``paths``; None when one cannot be hashed (standard input, a file gone): the
    load then says what is wrong, or compiles without keeping."""
    digest = hashlib.sha256(
        FORMAT + b"\0" + verdict_cache.rule_set_version().encode() + b"\0" + verdict_cache.environment().encode()
    )
    try:
        for path in paths:
            digest.update(f"\0path\0{path}\0".encode())
            for file in expand([path]):
                if file == STDIN:
                    return None
                digest.update(f"\0{file}\0".encode())
                digest.update(hashlib.sha256(file.read_bytes()).digest())
    except (OSError, InputError):
        return None
    return digest.hexdigest()
