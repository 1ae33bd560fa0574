"""A content-addressed cache of ``validate``'s verdicts, so pre-commit and CI runs on an unchanged repository are instant.

The key is a SHA-256 over everything a verdict depends on: the bytes of every input file and its
name as reported (files, the --crd and --context files, the waiver file), the options (release,
feature gates, --policy and then the date, as waivers expire), the rule set's version, which is
the package version plus the size and modification time of each of its modules (an edited rule is a
new rule set, even in a development install), and what else judges: the Python, the native YAML
reader's build (:func:`karpenter_gitops.core.yaml_reader.native_build`) and the versions of the
distributions in :data:`JUDGING_DISTRIBUTIONS`. The value is the report. Entries live under the user
cache directory (``$XDG_CACHE_HOME``, else ``~/.cache``) in ``karpenter-gitops/verdicts``, one file per
key, written atomically; ``KARPENTER_GITOPS_VERDICT_CACHE`` names another directory (a CI workspace), or
``off``.

A cache that cannot be read or written is ignored with one note on stderr, never an error; an input
that cannot be hashed (standard input, a file that vanished) means no caching for that run.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import karpenter_gitops
from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.files import expand

FORMAT = b"verdicts/2"  # bump when the stored value changes shape
ENTRIES_KEPT = 64  # the oldest entries beyond this many are removed when one is written
LOCATION = "KARPENTER_GITOPS_VERDICT_CACHE"  # a directory to keep verdicts in instead, or "off"
# The distributions whose behaviour a verdict depends on: PyYAML reads every file; jsonschema checks a policy's rule
# parameters; jsonschema-rs, cel-expr-python (protobuf carries its parsed trees) and google-re2 run the CRDs' schemas,
# CEL rules and regexes, and the kubelet expressions. The others print (click, rich, tabulate), serve other commands
# (boto3, ruamel.yaml) or build the rules' examples, which only the test-suite runs (json-merge-patch).
JUDGING_DISTRIBUTIONS = ("pyyaml", "jsonschema", "jsonschema-rs", "cel-expr-python", "protobuf", "google-re2")


def directory() -> Path | None:
    """``$KARPENTER_GITOPS_VERDICT_CACHE``, else ``$XDG_CACHE_HOME/karpenter-gitops/verdicts`` (``~/.cache``
    without it); None when that variable says ``off``."""
    chosen = os.environ.get(LOCATION)
    if chosen:
        return None if chosen == "off" else Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "karpenter-gitops" / "verdicts"


@lru_cache(maxsize=1)
def rule_set_version() -> str:
    """The package version and the size and mtime of every module: any edit to a rule changes it."""
    digest = hashlib.sha256(karpenter_gitops.__version__.encode())
    root = Path(karpenter_gitops.__file__).parent
    for module in sorted(root.rglob("*.py")):
        stat = module.stat()
        digest.update(f"{module.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def environment() -> str:
    """What judges besides the rule set: the Python, the native YAML reader's build and the versions of the
    judging distributions. Worked out once a process, importing none of them (start-up is a budget)."""
    versions = installed_versions(JUDGING_DISTRIBUTIONS)
    return "\n".join([sys.version, yaml_reader.native_build(), *(f"{name} {versions[name]}" for name in JUDGING_DISTRIBUTIONS)])


def installed_versions(names: Sequence[str]) -> dict[str, str]:
    """Each distribution's version, read from the name of its metadata folder on ``sys.path``
    (``name-version.dist-info``, or ``.egg-info`` for a system package), the first folder of ``sys.path`` that
    has it winning, as for imports; "absent" where none has it. importlib.metadata reads the same from the files
    inside, at some 80 ms a start: more than half of what ``validate`` may add to Python's own start."""
    wanted = {_normalised(name): name for name in names}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            listing = sorted(os.listdir(entry or "."))
        except OSError:  # a zip file, or a folder gone
            continue
        for folder in listing:
            stem, _, suffix = folder.rpartition(".")
            if suffix in ("dist-info", "egg-info"):
                name, _, version = stem.partition("-")
                if (distribution := wanted.get(_normalised(name))) is not None:
                    found.setdefault(distribution, version)
    return {name: found.get(name, "absent") for name in names}


def _normalised(name: str) -> str:
    """A distribution's name as PEP 503 compares names: ``PyYAML``, ``pyyaml`` and ``py_yaml`` differ only in spelling."""
    return re.sub(r"[-_.]+", "-", name).lower()


def key(paths: Sequence[str | Path], options: dict[str, Any], extra: Iterable[str | Path] = ()) -> str | None:
    """The key of a run on ``paths`` (as the user named them) with ``options``; ``extra`` are further files the
    verdict reads (CRDs, context, waivers). None when some input cannot be hashed, or the cache is off: then
    nothing is cached."""
    if directory() is None:
        return None
    digest = hashlib.sha256(FORMAT + b"\0" + rule_set_version().encode() + b"\0" + environment().encode())
    digest.update(repr(sorted(options.items())).encode())
    try:
        for group in (paths, tuple(extra)):
            digest.update(b"\0group")
            passed_over: list[tuple[Path, str]] = []  # and why: a kustomization's note names the patch files it left out
            for path in expand(group, passed_over):
                digest.update(f"\0{path}\0".encode())
                digest.update(hashlib.sha256(path.read_bytes()).digest())
            digest.update(repr(passed_over).encode())
    except (OSError, InputError):
        return None  # the run itself will say what is wrong with the input
    return digest.hexdigest()


def load(run_key: str, note) -> Any | None:
    """The stored value for ``run_key``, or None (not stored, or unreadable: then ``note`` says so once)."""
    folder = directory()
    if folder is None:
        return None
    try:
        return read(folder / run_key)
    except FileNotFoundError:
        return None
    except Exception as err:  # a truncated or foreign file: a miss, said once
        note(f"verdict cache: ignored an unreadable entry ({type(err).__name__}); use --no-cache to bypass it")
        return None


def store(run_key: str, value: Any, note) -> None:
    """Write ``value`` under ``run_key`` atomically; a failure is one note, never an error."""
    folder = directory()
    if folder is None:
        return
    try:
        write(folder, run_key, value, ENTRIES_KEPT)
    except OSError as err:
        note(f"verdict cache: not written ({err.strerror or err}); use --no-cache to skip it")


def read(entry: Path) -> Any:
    """The value stored in ``entry``; raises whatever a missing, truncated or foreign file raises."""
    with entry.open("rb") as stored:
        return pickle.load(stored)  # our own file, under the user's cache directory


def write(folder: Path, name: str, value: Any, kept: int) -> None:
    """Store ``value`` as ``folder/name``, atomically (a reader sees the old entry or the new one, never a part),
    then remove the oldest entries beyond ``kept``."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=".tmp-", delete=False) as temporary:
        try:
            pickle.dump(value, temporary, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:
            os.unlink(temporary.name)
            raise
    os.replace(temporary.name, folder / name)
    _prune(folder, kept)


def _prune(folder: Path, kept: int) -> None:
    """Remove the oldest entries beyond ``kept``; folders inside (other caches' entries) are not entries."""
    entries = sorted((p for p in folder.iterdir() if not p.name.startswith(".") and p.is_file()), key=lambda p: p.stat().st_mtime)
    for stale in entries[:-kept]:
        stale.unlink(missing_ok=True)
