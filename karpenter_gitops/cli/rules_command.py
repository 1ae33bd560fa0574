"""``karpenter-gitops rules``: the rule catalogue, or one rule with its fix and examples."""

from __future__ import annotations

import json

import click

from karpenter_gitops.app import rules
from karpenter_gitops.cli import options
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.output.report_text import COLOURS


@click.command("rules")
@click.argument("rule_id", required=False)
@options.output_format("text", "json")
def rules_command(rule_id, fmt) -> Outcome:
    """List the rule catalogue, or explain one rule (its fix and examples) with RULE_ID."""
    chosen = rules.chosen(rule_id)
    if fmt == "json":
        click.echo(json.dumps([rules.describe(r) for r in chosen], indent=2))
        return Outcome.OK
    for rule in chosen:
        label = click.style(f"{rule.severity.value:<7}", fg=COLOURS[rule.severity])
        policy = " policy" if rule.hygiene else ""
        kinds = "/".join(sorted(rule.kinds))
        click.echo(f"{click.style(rule.id, bold=True)}  {label} {kinds}  {rule.origin}{policy}  [{rules.releases(rule)}]")
        click.echo(f"    {rule.doc}")
        if rule_id:
            click.echo(f"    fix: {rule.fix}")
            for word, examples in (("good", rule.good), ("bad", rule.bad)):
                for example in examples:
                    click.echo(f"    {word}: {json.dumps(example)}")
    return Outcome.OK
