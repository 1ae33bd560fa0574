"""The reference pages under docs/reference/ are what docs/gen.py makes from the code, so they cannot drift."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import PROJECT

from karpenter_gitops.rules.registry import RULES


def _load_generator():
    spec = importlib.util.spec_from_file_location("docs_gen", PROJECT / "docs" / "gen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
GENERATED = gen.pages()


@pytest.mark.parametrize("page", sorted(GENERATED), ids=str)
def test_committed_page_is_what_the_code_generates(page):
    committed = gen.REFERENCE / page
    assert committed.is_file(), f"docs/reference/{page} is missing; run `{gen.REGENERATE}` and commit it"
    assert committed.read_text(encoding="utf-8") == GENERATED[page], (
        f"docs/reference/{page} is out of date with the code; run `{gen.REGENERATE}` and commit it"
    )


def test_no_page_is_left_from_something_the_code_dropped():
    committed = {p.relative_to(gen.REFERENCE) for p in gen.REFERENCE.rglob("*.md")}
    assert committed - set(GENERATED) == set(), f"stale pages; run `{gen.REGENERATE}` and commit the removals"


def test_every_rule_has_a_page_and_an_index_row():
    index = GENERATED[gen.Path("rules/index.md")]
    for rule_id in RULES:
        assert gen.Path(f"rules/{rule_id}.md") in GENERATED
        assert f"[`{rule_id}`]({rule_id}.md)" in index


def test_a_release_split_shows_in_the_severity_per_release():
    assert gen.severity_by_release(RULES["nodeclass/role-arn"]) == [("1.0–1.1", "error"), ("1.2–1.15", "does not apply")]
    assert gen.severity_by_release(RULES["nodeclass/role-arn-name"]) == [("1.0–1.1", "does not apply"), ("1.2–1.15", "warning")]


def test_a_release_page_names_what_arrived_in_it():
    changes = gen.release_changes()
    assert "NodePool accepts `spec.disruption.consolidationPolicy: Balanced`" in changes[(1, 14)]
    assert any("EC2NodeClass accepts `spec.amiSelectorTerms[].ssmParameter`" == c for c in changes[(1, 4)])


def test_every_command_and_option_is_documented():
    from karpenter_gitops.cli import cli

    page = GENERATED[gen.Path("commands.md")]
    for name, command in cli.commands.items():
        assert f"## `{name}`" in page
        for option in (p for p in command.params if p.param_type_name == "option"):
            assert f"`{option.opts[0]}" in page or f", {option.opts[0]}" in page, f"{name} {option.opts[0]}"


def test_prose_keeps_markdown_from_reading_text_as_markup():
    assert gen.prose("c5.* and <cluster> in `a_*b`") == "c5.\\* and &lt;cluster> in `a_*b`"


def test_write_removes_pages_of_dropped_rules(tmp_path):
    stale = tmp_path / "rules" / "gone" / "rule.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    written = gen.write(tmp_path)
    assert not stale.exists()
    assert (tmp_path / "commands.md").read_text(encoding="utf-8") == GENERATED[gen.Path("commands.md")]
    assert len(written) == len(GENERATED)


@pytest.mark.parametrize("drawing", gen.DRAWINGS, ids=lambda d: d.page.name)
def test_drawings_in_hand_written_pages_are_what_the_code_declares(drawing):
    page = drawing.page.read_text(encoding="utf-8")
    assert page == drawing.onto(page), (
        f"{drawing.page.relative_to(gen.DOCS.parent)} draws something else than {drawing.source} declares; "
        f"run `{gen.REGENERATE}` and commit it"
    )


def test_the_layer_map_reads_the_imports_the_code_has():
    """A reading that found nothing would draw a map without imports that still matches itself: these imports
    are known to be there."""
    imports = gen.layer_imports()
    assert {"app", "output", "core"} <= imports.run_time["cli"]
    assert "adapters" in imports.run_time["cli"]  # only inside the commands' functions (cli/plan_command.py)
    assert {"app", "core"} <= imports.run_time["karpenter_gitops_pulumi"]
    assert "app" in imports.annotations_only["output"] and "app" not in imports.run_time["output"]  # output/pr_comment.py
    assert "core" not in imports.run_time
