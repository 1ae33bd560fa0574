"""The README is the front page: it keeps the two set-up commands, and its links into docs/ lead somewhere
(mkdocs --strict checks the links inside docs/, not the README's)."""

from __future__ import annotations

import re

from conftest import PROJECT

README = (PROJECT / "README.md").read_text(encoding="utf-8")


def test_the_readme_gives_the_two_set_up_commands():
    assert "make demo" in README and "make test" in README


def test_every_relative_link_of_the_readme_exists():
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README) if "://" not in t]
    assert targets, "the README links into the docs"
    missing = [t for t in targets if not (PROJECT / t).exists()]
    assert missing == [], f"README links to missing files: {missing}"


def test_the_readme_is_a_front_page_that_installs_into_a_users_repository():
    assert len(README.splitlines()) <= 150
    install = README.index("## Install into your own repository")
    assert install < README.index("## A 5-minute tour") < README.index("## Working on karpenter-gitops itself")
    assert (
        'pip install "git+$REPO@main"' in README and "make dist" in README
    )  # run as written: tests/newcomer/test_install_lines.py


def test_no_page_installs_a_version_no_registry_has():
    """karpenter-gitops is on no package registry: every `pip install karpenter-gitops` shown takes it from Git."""
    pages = [PROJECT / "README.md", *(PROJECT / "docs").rglob("*.md"), *(PROJECT / "examples").rglob("*.yml")]
    by_name = re.compile(
        r"""(pip|pipx|uv tool) install\s+["']?karpenter-gitops(\[[^\]]*\])?(?!\s*@\s*git\+)(["'\s=<>~]|$)""", re.M
    )
    offenders = [
        f"{page.relative_to(PROJECT)}: {m.group(0)!r}"
        for page in pages
        for m in by_name.finditer(page.read_text(encoding="utf-8"))
    ]
    assert offenders == []
