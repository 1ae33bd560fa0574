"""Commands shown with their output in the hand-written docs and the README still print that output.

A ```console block whose first line is ``$ karpenter-gitops ...`` is run from the project root
(stdout and stderr together, as a terminal shows them) and must print the rest of the block.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest
from conftest import PROJECT

_BLOCK = re.compile(r"^```console\n\$ karpenter-gitops (?P<args>[^\n]*)\n(?P<output>.*?)^```$", re.M | re.S)


def _pages():
    reference = PROJECT / "docs" / "reference"
    yield PROJECT / "README.md"
    yield from (p for p in sorted((PROJECT / "docs").rglob("*.md")) if reference not in p.parents)


EXAMPLES = [
    pytest.param(match["args"], match["output"], id=f"{page.relative_to(PROJECT)}: {match['args']}")
    for page in _pages()
    for match in _BLOCK.finditer(page.read_text(encoding="utf-8"))
]


def test_the_docs_show_commands_with_their_output():
    assert len(EXAMPLES) >= 3, "the README and the docs show at least three commands with their output"


@pytest.mark.parametrize(("args", "output"), EXAMPLES)
def test_shown_output_is_what_the_command_prints(args, output):
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    run = subprocess.run(
        [sys.executable, "-m", "karpenter_gitops", *shlex.split(args)],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    assert run.stdout == output, f"the docs show other output for `karpenter-gitops {args}`; update the page"
