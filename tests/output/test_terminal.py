"""Outside text is data on the terminal: no markup, no emoji codes, control characters shown escaped.

The guarantee is structural: only ``output/terminal.py`` imports rich, and its consoles read no
markup, so no other module can hand an AMI name to rich as markup. The user-level check runs
``plan`` on a world whose AMIs are named as the issue reported them (``golden [x86] build`` was
mangled, ``golden [/x86]`` a traceback).
"""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

from karpenter_gitops.cli import main
from karpenter_gitops.core.text import visible
from karpenter_gitops.output.terminal import Terminal, line

PACKAGE = PROJECT / "karpenter_gitops"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_terminal_module_talks_to_rich():
    talking = sorted(
        str(path.relative_to(PROJECT))
        for path in PACKAGE.rglob("*.py")
        if any(name == "rich" or name.startswith("rich.") for name in _imports(path))
    )
    assert talking == ["karpenter_gitops/output/terminal.py"]


def _printed(*parts, width: int = 200) -> str:
    terminal = Terminal(width=width)
    terminal.console.file = io.StringIO()
    terminal.print(*parts)
    return terminal.console.file.getvalue()


@pytest.mark.parametrize(
    "value",
    [
        "golden [x86] build",
        "golden [/x86]",
        "[bold]x[/bold]",
        "[/]",
        "[link=https://e.x]y[/link]",
        ":smile:",
        "\\[x]",
        "ends with \\",
        "%s {0}",
    ],
)
def test_markup_and_emoji_codes_print_as_they_are(value):
    assert _printed("  name: ", value, (" styled " + value, "bold")) == f"  name: {value} styled {value}\n"


@pytest.mark.parametrize(
    "value, shown",
    [
        ("\x1b[31mred", "\\x1b[31mred"),
        ("a\nb", "a\\nb"),
        ("a\rb", "a\\rb"),
        ("\u202eevil", "\\u202eevil"),
        ("bell\x07", "bell\\x07"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\x7f"),
        ("nel\x85", "nel\\x85"),
        ("tab\t", "tab\\t"),
        ("\udcff", "\\udcff"),
        ("é ☃ 漢字", "é ☃ 漢字"),
    ],
)
def test_control_characters_show_as_escapes(value, shown):
    assert visible(value) == shown
    assert _printed(value) == shown + "\n"


def test_a_line_keeps_our_styles_and_only_ours():
    text = line("[red]", ("ok", "green"))
    assert text.plain == "[red]ok" and [str(span.style) for span in text.spans] == ["green"]


def test_a_table_cell_is_data():
    terminal = Terminal(width=200)
    terminal.console.file = io.StringIO()
    terminal.table(("AMI", "name"), [("ami-1", "golden [/x86]"), ("ami-2", ("\x1b]0;title\x07", "red"))])
    shown = terminal.console.file.getvalue()
    assert "golden [/x86]" in shown and "\\x1b]0;title\\x07" in shown and "\x1b" not in shown


def test_a_word_wider_than_its_column_is_folded_not_cut():
    """An AWS refusal may end in one long token the user needs whole, such as the encoded authorization
    message ``aws sts decode-authorization-message`` reads (found by tests/fuzz: a 64 KiB message was cut)."""
    encoded = "Encoded authorization failure message: " + "Ab0-" * 200
    terminal = Terminal(width=80)
    terminal.console.file = io.StringIO()
    terminal.table(("condition", "status", "message"), [("SecurityGroupsReady", "False", encoded)])
    shown = terminal.console.file.getvalue()
    assert "…" not in shown and "".join(encoded.split()) in "".join(shown.split())


WORLD = PROJECT / "karpenter_gitops" / "adapters" / "aws" / "worlds" / "default.yaml"
GOLDEN = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: golden}
spec:
  amiFamily: AL2023
  amiSelectorTerms: [{tags: {team: payments}}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""


def test_plan_shows_ami_names_with_brackets_as_aws_holds_them(tmp_path, capsys, catalogue_cache, monkeypatch):
    """The issue's reproduction: AMIs named with brackets, one that looks like a closing tag."""
    world = yaml.safe_load(WORLD.read_text())
    names = {
        "ami-0c9a000000000f003": "golden [x86] build",
        "ami-0c9a000000000f002": "golden [/x86]",
        "ami-0c9a000000000f005": "golden [bold]pending[/bold] \u202e\x9b",
    }
    for image in world["images"]:
        image["name"] = names.get(image["id"], image["name"])
        if image["id"] in names:
            image["description"] = "[link=https://example.com]built by Packer[/link]"
    (tmp_path / "world.yaml").write_text(yaml.safe_dump(world, allow_unicode=True))
    (tmp_path / "golden.yaml").write_text(GOLDEN)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("KARPENTER_GITOPS_AWS_DEADLINE", "300")  # a cold catalogue cache takes moto a while on a busy machine
    code = main(
        [
            "plan",
            "--manifests",
            str(tmp_path / "golden.yaml"),
            "--embedded-aws",
            "--aws-fixture",
            str(tmp_path / "world.yaml"),
            "--kubernetes-version",
            "1.32",
            "--cache-dir",
            str(catalogue_cache),
        ]
    )
    out, err = capsys.readouterr()
    assert code in (0, 1), out + err
    assert "golden [x86] build" in out and "golden [/x86]" in out
    assert "golden [bold]pending[/bold] \\u202e\\x9b" in out and "\u202e" not in out
