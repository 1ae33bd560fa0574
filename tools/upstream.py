"""Fetch the upstream data the tests read (``make upstream``, run by ``make test``): Karpenter's CRDs and userData fixtures.

The CRDs are those of every release the project claims, the fixtures those of Karpenter's launch templates.

Each item is one file of github.com/aws/karpenter-provider-aws at a release tag, listed with its
sha256 in ``upstream.lock`` beside this file. It is kept in a cache outside the clone,
``$XDG_CACHE_HOME/karpenter-gitops/upstream/<tag>/<path>`` (``~/.cache`` without XDG_CACHE_HOME), and
taken from the first source that has it:

1. the mirror directory KARPENTER_GITOPS_UPSTREAM_MIRROR names, laid out as the project's shared
   folder is (``karpenter-crds/<tag>/`` and ``upstream/userdata/``); an air-gapped CI keeps one;
2. the release's Go module, from each module proxy GOPROXY lists (the go command's own setting);
3. the release tag on the Git host (GitHub's raw files; KARPENTER_GITOPS_UPSTREAM_GIT_HOST names
   another base URL).

Bytes whose sha256 is not the lock's are refused, whatever their source: a stale mirror or an altered
download would have the tests judge our code by the wrong Karpenter. A cached file is checked the same
way, so a warm cache asks no source at all. Standard library only: this runs before any virtualenv
exists, and the tests and benchmarks import it to find the cache.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LOCK = Path(__file__).resolve().parent / "upstream.lock"
MODULE = "github.com/aws/karpenter-provider-aws"
CRDS = "pkg/apis/crds"
USERDATA = "pkg/providers/launchtemplate/testdata"
GIT_HOST = "https://raw.githubusercontent.com/aws/karpenter-provider-aws"
DEFAULT_GOPROXY = "https://proxy.golang.org,direct"
# A mirror keeps the files as the shared folder beside the project's own clones does: one folder of
# CRDs per tag, and the userData fixtures of the one tag the lock takes them from.
MIRROR_FOLDERS = {CRDS: "karpenter-crds/{tag}", USERDATA: "upstream/userdata"}
TIMEOUT = 60  # seconds for one answer; a module zip is a few MB


@dataclass(frozen=True)
class Item:
    """One upstream file: the release tag, its path in the repository and the sha256 the lock gives it."""

    tag: str
    path: str
    sha256: str

    def __str__(self) -> str:
        return f"{self.tag} {self.path}"


def read_lock(lock: Path = LOCK) -> tuple[Item, ...]:
    """The items ``lock`` lists, one ``tag path sha256`` a line (``#`` starts a comment line)."""
    rows = (line.split() for line in lock.read_text().splitlines() if line.strip() and not line.startswith("#"))
    return tuple(Item(*row) for row in rows)


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "karpenter-gitops" / "upstream"


class Absent(Exception):
    """A source does not have an item; the reason goes into the line of an item that no source has."""


class Mirror:
    """A directory laid out as the shared folder is."""

    def __init__(self, root: Path):
        self.name = f"mirror {root}"
        self.root = root

    def read(self, item: Item) -> bytes:
        folder, name = item.path.rsplit("/", 1)
        path = self.root / MIRROR_FOLDERS[folder].format(tag=item.tag) / name
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise Absent(f"no {path}") from None


class _Web:
    """A source over HTTP. An error answer means it lacks that file; no answer at all means it is out of
    reach, and it is not asked again this run: a closed network would otherwise cost a timeout a file."""

    def __init__(self, name: str):
        self.name = name
        self._unreachable: str | None = None

    def _get(self, url: str) -> bytes:
        if self._unreachable:
            raise Absent(self._unreachable)
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
                return answer.read()
        except urllib.error.HTTPError as error:
            raise Absent(f"HTTP {error.code}") from None
        except (urllib.error.URLError, OSError) as error:
            self._unreachable = f"unreachable ({getattr(error, 'reason', error)})"
            raise Absent(self._unreachable) from None


class ModuleProxy(_Web):
    """A Go module proxy: the release's module zip, which holds the repository's files at its tag."""

    def __init__(self, url: str):
        super().__init__(f"module proxy {url}")
        self.url = url.rstrip("/")
        # The last tag asked for and its zip, or why there is none: fetch asks tag by tag, so each zip is
        # downloaded once and no more than one is held.
        self._tag: str | None = None
        self._zip: zipfile.ZipFile | str = ""

    def read(self, item: Item) -> bytes:
        if item.tag != self._tag:
            self._tag, self._zip = item.tag, self._download(item.tag)
        if isinstance(self._zip, str):
            raise Absent(self._zip)
        try:
            return self._zip.read(f"{MODULE}@{item.tag}/{item.path}")
        except KeyError:
            raise Absent(f"not in {MODULE}@{item.tag}") from None

    def _download(self, tag: str) -> zipfile.ZipFile | str:
        try:
            return zipfile.ZipFile(io.BytesIO(self._get(f"{self.url}/{MODULE}/@v/{tag}.zip")))
        except Absent as absent:
            return f"{tag}.zip: {absent}"
        except zipfile.BadZipFile:
            return f"{MODULE}@{tag}'s answer is not a zip archive"


class GitHost(_Web):
    """The repository's files at a tag, as GitHub serves them raw: ``<base>/<tag>/<path>``."""

    def __init__(self, base: str):
        super().__init__(f"Git host {base}")
        self.base = base.rstrip("/")

    def read(self, item: Item) -> bytes:
        return self._get(f"{self.base}/{item.tag}/{item.path}")


Source = Mirror | ModuleProxy | GitHost


def module_proxies(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The proxies GOPROXY lists before an ``off``. ``direct`` (the go command's own fetch from the
    repository) is left out: the Git host is this step's direct path."""
    setting = environ.get("GOPROXY") or _go_setting("GOPROXY") or DEFAULT_GOPROXY
    proxies = []
    for entry in re.split(r"[,|]", setting):
        if entry == "off":
            break
        if entry and entry != "direct":
            proxies.append(entry)
    return proxies


def _go_setting(name: str) -> str:
    """The go command's setting, which `go env -w` keeps in a file of its own; empty without Go. The
    machine's own toolchain answers: a go.mod above the working directory must not make it fetch another."""
    if shutil.which("go") is None:
        return ""
    done = subprocess.run(
        ["go", "env", name],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=60,
        env={**os.environ, "GOTOOLCHAIN": "local"},
        check=False,
    )
    return done.stdout.strip()


def sources(environ: Mapping[str, str] = os.environ) -> list[Source]:
    """The sources in the order they are asked."""
    mirror = environ.get("KARPENTER_GITOPS_UPSTREAM_MIRROR")
    return [
        *([Mirror(Path(mirror))] if mirror else []),
        *(ModuleProxy(url) for url in module_proxies(environ)),
        GitHost(environ.get("KARPENTER_GITOPS_UPSTREAM_GIT_HOST") or GIT_HOST),
    ]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cached(cache: Path, item: Item) -> Path:
    """Where ``item`` is kept in ``cache``: the tag's folder holds the repository's files at their paths."""
    return cache / item.tag / item.path


def _store(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: two test workers may fetch the same file at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}-", delete=False) as staging:
        staging.write(data)
    os.replace(staging.name, path)


@dataclass
class Report:
    """What a fetch did: files taken per source, and one line per item the cache still lacks."""

    taken: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def fetch(items: Iterable[Item], cache: Path, chosen: Callable[[], list[Source]]) -> Report:
    """Put every item in ``cache``, each from the first of the sources ``chosen`` gives that has it. An
    item already there with the lock's sha256 asks no source; ``chosen`` is called only for the others
    (finding the module proxies may run the go command)."""
    report = Report()
    # tag by tag, so a module proxy downloads each release's zip once
    missing = sorted((item for item in items if not _is_cached(cache, item)), key=lambda item: item.tag)
    asked = chosen() if missing else []
    for item in missing:
        reasons = []
        for source in asked:
            try:
                data = source.read(item)
            except Absent as absent:
                reasons.append(f"{source.name}: {absent}")
                continue
            if sha256(data) != item.sha256:
                report.problems.append(
                    f"{item}: {source.name} served sha256 {sha256(data)}, {LOCK.name} has {item.sha256}; refused"
                )
            else:
                _store(cached(cache, item), data)
                report.taken[source.name] += 1
            break
        else:
            report.problems.append(f"{item}: no source has it ({'; '.join(reasons)})")
    return report


def _is_cached(cache: Path, item: Item) -> bool:
    path = cached(cache, item)
    return path.is_file() and sha256(path.read_bytes()) == item.sha256


class Unavailable(Exception):
    """Items the cache lacks after a fetch, one line each."""


def ensure(environ: Mapping[str, str] = os.environ) -> Path:
    """The cache, holding every item of the lock (fetched first where it does not): what the tests and
    benchmarks read."""
    cache = cache_root(environ)
    report = fetch(read_lock(), cache, lambda: sources(environ))
    if report.problems:
        raise Unavailable("\n".join(report.problems))
    return cache


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    items, cache = read_lock(), cache_root()
    report = fetch(items, cache, sources)
    for line in report.problems:
        print(f"make upstream: {line}", file=sys.stderr)
    if report.problems:
        return 1
    taken = ", ".join(f"{count} from {name}" for name, count in report.taken.items()) or "all cached already"
    print(f"make upstream: {len(items)} files in {cache} ({taken})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
