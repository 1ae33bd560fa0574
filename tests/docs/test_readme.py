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
