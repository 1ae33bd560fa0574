"""Every path of ours written in backticks — in the README, the docs, docstrings and comments — exists.

A path is ours when its first part is a top-level entry of the repository (``karpenter_gitops/…``,
``tests/…``, ``docs/…``) or a folder of the package or of the tests (``rules/registry.py``,
``karpenter/scheduling/``). Upstream paths (``pkg/controllers/…`` of Karpenter) and examples of a
user's own files are not ours and are left alone; so are placeholders (``<name>``, ``*``, ``$VAR``).
The shared folder beside a developer's clone is in no other clone: no text points into it, it cites
upstream instead.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "karpenter_gitops"
# Built by `make tools`, not committed: a page may point at it before it exists.
BUILT = (".tools/",)
WRITTEN = re.compile(r"`+([^`\s]+?)`+")
FILE = re.compile(r"\.(py|md|ya?ml|go|toml|json|ambr|txt)$")
PLACEHOLDER = re.compile(r"[*<>{}$()\[\]=\"'|…]|://")
BESIDE_THE_CLONE = re.compile(r"\.\./shared/")


def _roots() -> tuple[set[str], set[str]]:
    # What git tracks: a folder a run leaves behind (`out/` of the demo, `site/`) is nobody's path to write.
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {line.split("/")[0] for line in tracked.splitlines()}
    nested = {p.name for base in (PACKAGE, ROOT / "tests") for p in base.iterdir() if p.is_dir()}
    return top, nested


TOP, NESTED = _roots()


def _texts() -> list[Path]:
    globs = ("docs/**/*.md", "karpenter_gitops*/**/*.py", "tests/**/*.py", "tools/**/*.py", "benchmarks/**/*.py")
    return [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml", *(p for g in globs for p in ROOT.glob(g))]


def written_paths(text: str) -> set[str]:
    """The paths of ours ``text`` writes in backticks, without a ``:line`` or ``#anchor`` tail."""
    found = set()
    for token in WRITTEN.findall(text):
        path = re.split(r"[:#]", token.rstrip(".,;"), maxsplit=1)[0]
        if "/" not in path or PLACEHOLDER.search(path) or path.startswith(("-", "~", "/", *BUILT)):
            continue
        first = path.split("/")[0]
        # below a package folder only a file or a folder (``nodepool/x`` is a rule id, not a path)
        if first in TOP or (first in NESTED and (FILE.search(path) or path.endswith("/"))):
            found.add(path)
    return found


def _exists(path: str, writer: Path) -> bool:
    return any((base / path).exists() for base in (ROOT, PACKAGE, ROOT / "tests", writer.parent))


def test_the_scan_finds_paths_and_skips_what_is_not_ours():
    text = (
        "see `karpenter_gitops/core/versions.py:12`, ``karpenter/scheduling/``, `pkg/x.go`, `<name>/a.yaml`, `tests/`, "
        "`../.mirror`"
    )
    assert written_paths(text) == {"karpenter_gitops/core/versions.py", "karpenter/scheduling/", "tests/"}


def test_a_moved_module_is_caught():
    assert not _exists("karpenter_gitops/worlds/default.yaml", ROOT / "README.md")


@pytest.mark.parametrize("writer", _texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_written_path_exists(writer):
    missing = sorted(p for p in written_paths(writer.read_text(encoding="utf-8")) if not _exists(p, writer))
    assert missing == [], f"{writer.relative_to(ROOT)} points at paths that do not exist: {missing}"


@pytest.mark.parametrize("writer", _texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_text_points_beside_the_clone(writer):
    lines = [n for n, line in enumerate(writer.read_text(encoding="utf-8").splitlines(), 1) if BESIDE_THE_CLONE.search(line)]
    assert lines == [], f"{writer.relative_to(ROOT)} points into the folder beside the clone on lines {lines}: cite upstream"
