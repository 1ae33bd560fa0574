"""The fetch step for upstream data (tools/upstream.py, ``make upstream``): each source on its own, in
order, against the lock's checksums, with a warm cache asking none; and a clone with no shared folder
beside it that fetches its data and runs the tests that read it.

The sources are local: a mirror folder, and HTTP servers on loopback laid out as a Go module proxy
and as GitHub's raw files are.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import io
import os
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import PROJECT
from support.upstream import STEP

TAG = "v1.99.0"
FILES = {
    f"{STEP.CRDS}/karpenter.sh_nodepools.yaml": b"kind: CustomResourceDefinition\n# NodePool\n",
    f"{STEP.CRDS}/karpenter.k8s.aws_ec2nodeclasses.yaml": b"kind: CustomResourceDefinition\n# EC2NodeClass\n",
    f"{STEP.USERDATA}/al2023_userdata_input.golden": b"#!/bin/bash\necho hello\n",
}
ITEMS = [STEP.Item(TAG, path, hashlib.sha256(data).hexdigest()) for path, data in FILES.items()]


@contextlib.contextmanager
def serving(root: Path) -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on loopback serving ``root``'s files: its URL, and the paths asked of it so far."""
    asked: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", asked
    finally:
        server.shutdown()
        server.server_close()


def mirror(root: Path, files: dict[str, bytes] = FILES) -> Path:
    """A mirror laid out as the shared folder is."""
    for path, data in files.items():
        folder, name = path.rsplit("/", 1)
        target = root / STEP.MIRROR_FOLDERS[folder].format(tag=TAG) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def git_host(root: Path, files: dict[str, bytes] = FILES) -> Path:
    """A tree laid out as GitHub's raw files are: ``<tag>/<path>``."""
    for path, data in files.items():
        (root / TAG / path).parent.mkdir(parents=True, exist_ok=True)
        (root / TAG / path).write_bytes(data)
    return root


def module_proxy(root: Path) -> Path:
    """A Go module proxy serving the module of TAG, its zip laid out as the go command makes it."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as module:
        for path, data in FILES.items():
            module.writestr(f"{STEP.MODULE}@{TAG}/{path}", data)
        module.writestr(f"{STEP.MODULE}@{TAG}/go.mod", f"module {STEP.MODULE}\n")
    target = root / STEP.MODULE / "@v" / f"{TAG}.zip"
    target.parent.mkdir(parents=True)
    target.write_bytes(archive.getvalue())
    return root


def cached(cache: Path) -> dict[str, bytes]:
    return {item.path: STEP.cached(cache, item).read_bytes() for item in ITEMS if STEP.cached(cache, item).is_file()}


def no_sources():
    raise AssertionError("a source was asked for")


def test_files_come_from_the_mirror(tmp_path):
    report = STEP.fetch(ITEMS, tmp_path / "cache", lambda: [STEP.Mirror(mirror(tmp_path / "mirror"))])
    assert (report.problems, dict(report.taken)) == ([], {f"mirror {tmp_path / 'mirror'}": 3})
    assert cached(tmp_path / "cache") == FILES


def test_files_come_from_the_module_zip_the_proxy_in_goproxy_serves_one_download_a_tag(tmp_path):
    with serving(module_proxy(tmp_path / "proxy")) as (url, asked):
        chosen = STEP.sources({"GOPROXY": f"{url},direct", "KARPENTER_GITOPS_UPSTREAM_GIT_HOST": "http://127.0.0.1:9"})
        report = STEP.fetch(ITEMS, tmp_path / "cache", lambda: chosen)
    assert (report.problems, dict(report.taken)) == ([], {f"module proxy {url}": 3})
    assert asked == [f"/{STEP.MODULE}/@v/{TAG}.zip"]
    assert cached(tmp_path / "cache") == FILES


def test_files_come_from_the_release_tag_on_the_git_host(tmp_path):
    with serving(git_host(tmp_path / "host")) as (url, asked):
        chosen = STEP.sources({"GOPROXY": "off", "KARPENTER_GITOPS_UPSTREAM_GIT_HOST": url})
        report = STEP.fetch(ITEMS, tmp_path / "cache", lambda: chosen)
    assert (report.problems, dict(report.taken)) == ([], {f"Git host {url}": 3})
    assert sorted(asked) == sorted(f"/{TAG}/{path}" for path in FILES)
    assert cached(tmp_path / "cache") == FILES


def test_each_file_comes_from_the_first_source_that_has_it(tmp_path):
    """The mirror first, then the module proxy, then the Git host; a later source is asked only for what
    the earlier ones lack."""
    first, *rest = FILES
    with (
        serving(git_host(tmp_path / "host")) as (host, host_asked),
        serving(module_proxy(tmp_path / "proxy")) as (proxy, proxy_asked),
    ):
        partial = mirror(tmp_path / "mirror", {first: FILES[first]})
        chosen = STEP.sources(
            {
                "KARPENTER_GITOPS_UPSTREAM_MIRROR": str(partial),
                "GOPROXY": f"{proxy},direct",
                "KARPENTER_GITOPS_UPSTREAM_GIT_HOST": host,
            }
        )
        assert [source.name for source in chosen] == [f"mirror {partial}", f"module proxy {proxy}", f"Git host {host}"]
        report = STEP.fetch(ITEMS, tmp_path / "cache", lambda: chosen)
    assert (report.problems, dict(report.taken)) == ([], {f"mirror {partial}": 1, f"module proxy {proxy}": len(rest)})
    assert (len(proxy_asked), host_asked) == (1, [])
    assert cached(tmp_path / "cache") == FILES


def test_bytes_other_than_the_locks_are_refused_naming_the_file_and_the_source(tmp_path):
    first = next(iter(FILES))
    altered = mirror(tmp_path / "mirror", {**FILES, first: FILES[first] + b"# changed\n"})
    with serving(git_host(tmp_path / "host")) as (url, asked):
        report = STEP.fetch(ITEMS, tmp_path / "cache", lambda: [STEP.Mirror(altered), STEP.GitHost(url)])
    (line,) = report.problems
    assert line.startswith(f"{TAG} {first}: mirror {altered} served sha256 ") and line.endswith("; refused")
    assert first not in cached(tmp_path / "cache") and asked == []  # refused, not taken from the next source


def test_a_warm_cache_asks_no_source_and_a_damaged_file_is_fetched_again(tmp_path):
    cache = tmp_path / "cache"
    STEP.fetch(ITEMS, cache, lambda: [STEP.Mirror(mirror(tmp_path / "mirror"))])
    assert STEP.fetch(ITEMS, cache, no_sources).taken == {}
    damaged = STEP.cached(cache, ITEMS[0])
    damaged.write_bytes(b"truncated")
    with serving(git_host(tmp_path / "host")) as (url, asked):
        report = STEP.fetch(ITEMS, cache, lambda: [STEP.GitHost(url)])
    assert (dict(report.taken), asked) == ({f"Git host {url}": 1}, [f"/{TAG}/{ITEMS[0].path}"])
    assert cached(cache) == FILES


def test_goproxy_lists_the_proxies_before_off_without_direct():
    assert STEP.module_proxies({"GOPROXY": "https://a.example,direct"}) == ["https://a.example"]
    assert STEP.module_proxies({"GOPROXY": "https://a.example|https://b.example,off,https://c.example"}) == [
        "https://a.example",
        "https://b.example",
    ]
    assert STEP.module_proxies({"GOPROXY": "off"}) == []


def test_make_upstream_names_every_file_no_source_has_with_the_sources_it_tried(tmp_path):
    """One line a file, each naming every source it tried, and a failing exit."""
    environment = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "KARPENTER_GITOPS_UPSTREAM_MIRROR": str(tmp_path / "empty"),
        "GOPROXY": "off",
        "KARPENTER_GITOPS_UPSTREAM_GIT_HOST": "http://127.0.0.1:9",
    }
    done = subprocess.run(
        [sys.executable, PROJECT / "tools" / "upstream.py"], env=environment, capture_output=True, text=True, timeout=120
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == len(STEP.read_lock())
    assert all(
        f"no source has it (mirror {tmp_path / 'empty'}: no " in line and "Git host http://127.0.0.1:9: unreachable" in line
        for line in lines
    ), lines[:2]


@pytest.mark.slow
def test_a_clone_with_no_shared_folder_beside_it_fetches_its_data_and_passes(tmp_path):
    """A user's clone: no shared folder beside it, no mirror named, no module proxy. `make upstream`'s
    script fills an empty cache from the Git host (a local server holding this run's cache), and then,
    with that host gone, pytest collects the whole suite and the tests that read upstream data pass."""
    clone = tmp_path / "user" / "karpenter-gitops"
    subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True, timeout=300)
    assert sorted(p.name for p in clone.parent.iterdir()) == ["karpenter-gitops"]
    environment = {
        name: value
        for name, value in os.environ.items()
        if name != "KARPENTER_GITOPS_UPSTREAM_MIRROR" and not name.startswith("PYTEST_")
    }
    environment |= {"XDG_CACHE_HOME": str(tmp_path / "cache"), "GOPROXY": "off", "PYTHONPATH": str(clone)}
    with serving(STEP.ensure()) as (url, _):
        environment["KARPENTER_GITOPS_UPSTREAM_GIT_HOST"] = url
        fetched = subprocess.run(
            [sys.executable, "tools/upstream.py"], cwd=clone, env=environment, capture_output=True, text=True, timeout=300
        )
    assert fetched.returncode == 0 and f"from Git host {url})" in fetched.stderr, fetched.stderr[-3000:]

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *argv], cwd=clone, env=environment, capture_output=True, text=True, timeout=900)

    assert run("-c", "import karpenter_gitops; print(karpenter_gitops.__file__)").stdout.startswith(str(clone))
    # Collecting alone runs no snapshot test, so syrupy would call every stored snapshot unused.
    collected = run("-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "--snapshot-warn-unused")
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    passed = run(
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/rules/test_release_walk.py",
        "tests/karpenter/amifamily/test_userdata_golden.py",
    )
    assert passed.returncode == 0 and "skipped" not in passed.stdout, passed.stdout[-3000:]
