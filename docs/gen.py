"""Generate the reference pages under docs/reference/ from the code, so they cannot drift from it.

Four references are read from their one declaration: the commands and options (the click command
tree), the rules (the rule registry, one page per rule and an index), the stack keys (the loader's
key tables) and the Karpenter releases (the `since`/`until` releases of schema fields, enum values,
labels and rules); so are two drawings inside hand-written pages: the reconciliation's step graph in
docs/concepts/reconciliation.md (the declared steps) and the layer map in docs/project/architecture.md
(the import contracts, the imports the code has, and each package's docstring). `python docs/gen.py`
(or `make docs-reference`) rewrites them; tests/docs checks that the committed pages are what this module
generates. It never imports pulumi.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import itertools
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import click
import grimp
import yaml

from karpenter_gitops.cli import cli
from karpenter_gitops.core import versions
from karpenter_gitops.core.inputs import NAMESPACE, ControllerSettings
from karpenter_gitops.core.model import (
    CAPACITYBUFFER,
    CAPACITYBUFFER_API,
    EC2NODECLASS,
    KIND_SINCE,
    NODEOVERLAY,
    NODEOVERLAY_API,
    NODEPOOL,
    CapacityBufferSpec,
    EC2NodeClassSpec,
    NodeOverlaySpec,
    NodePoolSpec,
)
from karpenter_gitops.core.schema_fields import fields_of
from karpenter_gitops.load import controller_settings as controller_keys
from karpenter_gitops.load import keys, repository_config
from karpenter_gitops.reconcile.graph import Scope
from karpenter_gitops.reconcile.steps import STEPS
from karpenter_gitops.rules import examples, registry
from karpenter_gitops.rules.label_keys import AWS_LABELS
from karpenter_gitops.rules.registry import Rule, Stage

DOCS = Path(__file__).resolve().parent
REFERENCE = DOCS / "reference"
REGENERATE = "make docs-reference"
HEADER = f"<!-- Generated from the code by docs/gen.py: do not edit; run `{REGENERATE}`. -->\n\n"
RELEASES = [(1, minor) for minor in range(versions.OLDEST[1], versions.NEWEST[1] + 1)]

STAGES = {
    Stage.OBJECT: "each object, offline: `validate`, the Pulumi component's check and the policy pack",
    Stage.TRANSITION: "an update against the stored object: `preview` and the check of an update in `pulumi preview`",
    Stage.LOAD: "while the file is read, offline: every command that loads it",
    Stage.LIVE: "the reconciliation against AWS: `plan`, `render --reconcile`, `preview`, `pulumi up` and the pack",
    Stage.CRD: "your own CRDs: `validate --crd`",
    Stage.WAIVERS: "applying waivers: `validate --policy` and the pack",
    Stage.PULUMI: "the Pulumi layer only (a cluster look-up, resources of the stack)",
}


# --- commands ---------------------------------------------------------------------------------


def commands_page() -> str:
    """Every command of the click tree: usage, help and each option as `--help` shows it."""
    lines = [
        "# Commands",
        "",
        "`karpenter-gitops COMMAND --help` (or `-h`) prints the same; every command shares the",
        "[exit-code contract](../concepts/exit-codes.md).",
        "",
    ]
    # with the group's settings, as the CLI makes its context: a command makes its help option once, from the first
    # context it sees, so a context without -h would leave `COMMAND -h` refused for the rest of the process
    group_ctx = click.Context(cli, info_name="karpenter-gitops", **cli.context_settings)
    # the group's options that shape a command's run; the eager ones (--version) answer instead of running one
    shared = [p.get_help_record(group_ctx) for p in cli.params if isinstance(p, click.Option) and not p.is_eager]
    lines += ["Options given before the command apply to every command:", ""]
    lines += [f"- `{opts}`: {prose(help_)}" for opts, help_ in filter(None, shared)]
    lines.append("")
    for name, command in sorted(cli.commands.items()):
        ctx = click.Context(command, info_name=name, parent=group_ctx)
        lines += [
            f"## `{name}`",
            "",
            "```text",
            f"karpenter-gitops {name} {' '.join(command.collect_usage_pieces(ctx))}",
            "```",
            "",
            prose(inspect.cleandoc(command.help or "")),
            "",
        ]
        records = [p.get_help_record(ctx) for p in command.params if isinstance(p, click.Option)]
        lines += [f"- `{opts}`: {prose(help_)}" if help_ else f"- `{opts}`" for opts, help_ in filter(None, records)]
        lines.append("")
    return "\n".join(lines)


# --- rules ------------------------------------------------------------------------------------


def _span(first: versions.Release, last: versions.Release) -> str:
    return versions.show(first) if first == last else f"{versions.show(first)}–{versions.show(last)}"


def severity_by_release(rule: Rule) -> list[tuple[str, str]]:
    """Runs of consecutive supported releases with what the rule is in them (its severity, or not applying)."""
    runs: list[tuple[versions.Release, versions.Release, str]] = []
    for release in RELEASES:
        state = rule.severity.value if any(rule.applies(kind, release) for kind in rule.kinds) else "does not apply"
        if runs and runs[-1][2] == state:
            runs[-1] = (runs[-1][0], release, state)
        else:
            runs.append((release, release, state))
    return [(_span(first, last), state) for first, last, state in runs]


def releases_in_words(rule: Rule) -> str:
    applying = [span for span, state in severity_by_release(rule) if state != "does not apply"]
    return "all releases" if applying == [_span(RELEASES[0], RELEASES[-1])] else ", ".join(applying)


def prose(text: str) -> str:
    """Code-free text as Markdown shows it literally: `*` and `_` emphasise nothing, `<x>` is no HTML tag."""
    parts = text.split("`")  # odd parts are code spans, kept as they are
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    return prose(text).replace("|", "\\|").replace("\n", " ")


def _rule_link(rule_id: str, from_rules_dir: bool = True) -> str:
    return f"[`{rule_id}`]({'' if from_rules_dir else 'rules/'}{rule_id}.md)"


def _readers(param: registry.Param) -> list[str]:
    return sorted(r.id for r in registry.RULES.values() if param in r.params)


def _yaml(value: object) -> str:
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, width=100).rstrip()


def rule_page(rule: Rule) -> str:
    """One rule: what it catches and why, where it runs, its severity per release, the fix and examples."""
    depth = "../" * (rule.id.count("/") + 2)  # up to docs/
    severity = f"`{rule.severity.value}`"
    if rule.production is not None:
        severity += f"; `{rule.production.value}` in a stack with `production: true`"
    origin = (
        "mirrors Karpenter's own validation: it cannot be switched off, downgraded or waived"
        if rule.origin == "karpenter"
        else "stricter than Karpenter: a stack's policy block may change or waive it"
    )
    facts = [
        ("severity", severity),
        ("kinds", ", ".join(sorted(rule.kinds))),
        ("releases", releases_in_words(rule)),
        ("origin", origin),
        ("seen by", STAGES[rule.stage]),
    ]
    if rule.hygiene:
        facts.append(("hygiene policy", "runs with `validate --policy` and in the policy pack"))
    if rule.cross_object:
        facts.append(("cross-object", "judges an object against the other objects of its stack"))
    lines = [f"# `{rule.id}`", "", prose(rule.doc), "", "| | |", "|---|---|"]
    lines += [f"| {name} | {_cell(value)} |" for name, value in facts]
    lines += ["", "## Severity per release", "", "| Karpenter | severity |", "|---|---|"]
    lines += [f"| {span} | {state} |" for span, state in severity_by_release(rule)]
    lines += [
        "",
        f"How a severity is chosen: [Error or warning]({depth}concepts/severity.md).",
        "",
        "## Fix",
        "",
        prose(rule.fix),
        "",
    ]
    if rule.params:
        lines += [
            "## Parameters",
            "",
            f"Set in the stack's [`{NAMESPACE}:policy`]({depth}reference/stack-keys.md#policy) block "
            "or the policy pack's config.",
            "",
        ]
        lines += [f"- `{p.name}` (default `{json.dumps(p.default)}`): {prose(p.expected)}" for p in rule.params]
        lines.append("")
    for title, cases in (("Good", rule.good), ("Bad", rule.bad)):
        if not cases:
            continue
        lines += [
            f"## {title} examples",
            "",
            f"Patches onto the [base objects]({depth}reference/rules/index.md#examples) ({'' if title == 'Good' else 'each '}checked by the test-suite).",
            "",
        ]
        for case in cases:
            lines += ["```yaml", _yaml(dict(case)), "```", ""]
    return "\n".join(lines)


def rules_index() -> str:
    """The catalogue as one table, plus the base objects the examples patch."""
    lines = [
        "# Rules",
        "",
        f"{len(registry.RULES)} rules, one page each. `error` fails the run, `warning` and `info` are "
        "reported; [how the severity is chosen](../../concepts/severity.md). Hygiene policies (marked *policy*) "
        "run with `validate --policy` and in the policy pack.",
        "",
        "| rule | severity | kinds | releases | what |",
        "|---|---|---|---|---|",
    ]
    for rule in sorted(registry.RULES.values(), key=lambda r: r.id):
        severity = rule.severity.value + (f" ({rule.production.value} in production)" if rule.production else "")
        kinds = ", ".join(sorted(rule.kinds)) + (" *policy*" if rule.hygiene else "")
        lines.append(f"| {_rule_link(rule.id)} | {severity} | {kinds} | {releases_in_words(rule)} | {_cell(rule.doc)} |")
    lines += [
        "",
        "## Examples",
        "",
        "Each rule's good and bad examples are JSON merge patches (RFC 7386) onto these objects: the one of "
        "the example's `kind`, or of the rule's only kind, else the EC2NodeClass. "
        "`karpenterVersion` picks the release, `duplicate: true` adds the object twice, `controller` adds a "
        "stack holding that controller block, `stack: true` declares the objects in a stack file, and "
        "`featureGates` does too, with those gates in its cluster block.",
        "",
    ]
    for base in (examples.BASE_NODECLASS, examples.BASE_NODEPOOL, examples.BASE_NODEOVERLAY, examples.BASE_CAPACITYBUFFER):
        lines += ["```yaml", _yaml(base), "```", ""]
    return "\n".join(lines)


# --- stack keys -------------------------------------------------------------------------------


def _key_table(table: Mapping[str, keys.Key], required: bool = False) -> list[str]:
    if required:
        rows = [f"| `{k.name}` | {'yes' if k.required else 'no'} | {_cell(k.doc)} |" for k in table.values()]
        return ["| key | required | what |", "|---|---|---|", *rows]
    return ["| key | what |", "|---|---|", *(f"| `{k.name}` | {_cell(k.doc)} |" for k in table.values())]


def _controller_default(field: controller_keys.Field) -> str:
    declared = {f.name: f for f in dataclasses.fields(ControllerSettings)}.get(field.attr)
    if declared is None or declared.default is dataclasses.MISSING or declared.default is None:
        return "—"
    return f"`{json.dumps(declared.default)}`"


def _field_table(fields: Mapping[str, controller_keys.Field]) -> list[str]:
    rows = [f"| `{name}` | {_cell(f.expected)} | {_controller_default(f)} | {_cell(f.doc)} |" for name, f in fields.items()]
    return ["| key | value | default | what |", "|---|---|---|---|", *rows]


def stack_keys_page() -> str:
    """Every key of ours a stack file may hold, from the loader's tables."""
    lines = [
        "# Stack keys",
        "",
        f"A stack file `Pulumi.<stack>.yaml` holds one cluster's settings under `config:`, each key as "
        f"`{NAMESPACE}:<key>`. An unknown key is an error with a did-you-mean hint. Keys of other namespaces "
        "belong to their providers; `plan` and the Pulumi program read the `aws:` ones as pulumi-aws does "
        "([AWS settings](../guides/pulumi.md)).",
        "",
        *_key_table(keys.STACK_KEYS),
        "",
        "## cluster",
        "",
        *_key_table(keys.CLUSTER_KEYS),
        "",
        "## nodeClasses and nodePools",
        "",
        "Names map to specs spelled as the CRDs' `spec` (camelCase); the [rules](rules/index.md) check them.",
        "",
        "## policy",
        "",
        *_key_table(keys.POLICY_KEYS),
        "",
        "Each entry of `rules` takes:",
        "",
        *_key_table(keys.RULE_SETTING_KEYS),
        "",
        "And the parameters rules declare:",
        "",
        "| key | default | value | read by |",
        "|---|---|---|---|",
    ]
    for param in sorted(registry.PARAMS.values(), key=lambda p: p.name):
        readers = ", ".join(_rule_link(rule_id, from_rules_dir=False) for rule_id in _readers(param))
        lines.append(f"| `{param.name}` | `{json.dumps(param.default)}` | {_cell(param.expected)} | {readers} |")
    lines += [
        "",
        "## waivers",
        "",
        "A list of entries (also the `waivers:` list of a waiver file):",
        "",
        *_key_table(keys.WAIVER_KEYS, required=True),
        "",
        "## amiSources",
        "",
        "Class name → a list of AMI selector terms (`name`, `tags`, `ssmParameter`, with an "
        "optional `owner`), as in the CRD; only for classes pinned by `id`.",
        "",
        "## controller",
        "",
        *_field_table(controller_keys.FIELDS),
        "",
    ]
    for block, (doc, fields) in controller_keys.BLOCKS.items():
        lines += [f"### controller.{block}", "", doc, "", *_field_table(fields), ""]
    return "\n".join(lines)


def config_keys_page() -> str:
    """The keys of the repository's configuration file, from the loader's table."""
    return "\n".join(
        [
            "# Configuration file keys",
            "",
            f"`{repository_config.FILE_NAME}`, found from the working directory up to the repository's root, "
            "gives the defaults of the flags; a flag given wins. An unknown key is an error with a did-you-mean "
            "hint; paths are relative to the file's folder. The [guide](../guides/configuration.md) has a full "
            "example and inline waivers.",
            "",
            *_key_table(keys.CONFIG_KEYS),
        ]
    )


# --- releases ---------------------------------------------------------------------------------


def _schema_changes(cls: type, path: str) -> Iterator[tuple[versions.Release, str]]:
    """(release, change) for every field and enum value of a model, recursively, that a release added,
    made optional or left to Karpenter to check."""
    for wire, field in fields_of(cls).items():
        where = f"{path}.{wire}"
        if field.prop.since:
            yield field.prop.since, f"accepts `{where}`"
        if field.prop.required_until:
            yield field.prop.required_until, f"no longer requires `{where}` (the API server defaults it)"
        for value, since in (field.prop.enum or {}).items():
            if since:
                yield since, f"accepts `{where}: {value}`"
        if field.item is not None and dataclasses.is_dataclass(field.item):
            if (opened := getattr(field.item, "OPEN_SINCE", None)) is not None:
                yield opened, f"keeps any field under `{where}`: Karpenter checks the block, not the API server"
            yield from _schema_changes(
                field.item, where + ("[]" if field.kind == "list" else ".*" if field.kind == "map" else "")
            )


def release_changes() -> dict[versions.Release, list[str]]:
    """What each supported release changed, as this project checks it."""
    changes: dict[versions.Release, list[str]] = {release: [] for release in RELEASES}
    for kind, api in ((NODEOVERLAY, NODEOVERLAY_API), (CAPACITYBUFFER, CAPACITYBUFFER_API)):
        changes[KIND_SINCE[kind]].append(f"{kind} (`{api}`) is served, and checked with its CRD's rules")
    specs = (
        (EC2NODECLASS, EC2NodeClassSpec),
        (NODEPOOL, NodePoolSpec),
        (NODEOVERLAY, NodeOverlaySpec),
        (CAPACITYBUFFER, CapacityBufferSpec),
    )
    for kind, spec in specs:
        for since, what in sorted(_schema_changes(spec, "spec")):
            changes[since].append(f"{kind} {what}")
    for label, since in sorted(AWS_LABELS.items()):
        if since:
            changes[since].append(f"NodePool requirements and labels accept `karpenter.k8s.aws/{label}`")
    for rule in sorted(registry.RULES.values(), key=lambda r: r.id):
        if rule.since in changes and rule.since != RELEASES[0]:
            changes[rule.since].append(
                f"{_rule_link(rule.id, from_rules_dir=False)} applies ({rule.severity.value}): {prose(rule.doc)}"
            )
        if rule.until in changes:
            changes[rule.until].append(f"{_rule_link(rule.id, from_rules_dir=False)} no longer applies")
    return changes


def releases_page() -> str:
    lines = [
        "# Karpenter releases",
        "",
        f"Supported: {versions.show(RELEASES[0])} to {versions.show(RELEASES[-1])}; the default is "
        f"{versions.show(versions.DEFAULT)}. Pick one with `--karpenter-version` or the stack's "
        f"`{NAMESPACE}:cluster.karpenterVersion`; schema fields, enum values and rules follow it, and a newer "
        f"release is judged as {versions.show(RELEASES[-1])} with a line saying so. What each release changed, "
        "as this project checks it:",
        "",
    ]
    for release, changed in sorted(release_changes().items(), reverse=True):
        title = f"## {versions.show(release)}" + (" (default)" if release == versions.DEFAULT else "")
        if release == RELEASES[0]:
            changed = ["The oldest release supported: the first of the v1 API.", *changed]
        lines += [title, "", *([f"- {c}" for c in changed] or ["Nothing this project checks changed."]), ""]
    return "\n".join(lines)


# --- drawings inside hand-written pages -----------------------------------------------------


class Drawing(NamedTuple):
    """A generated block inside a hand-written page, between two markers that name its source."""

    page: Path
    source: str  # what the block is drawn from, as the opening marker says
    draw: Callable[[], str]

    @property
    def markers(self) -> tuple[str, str]:
        return (f"<!-- Drawn from {self.source} by docs/gen.py; do not edit. -->", "<!-- End of the drawing. -->")

    def onto(self, page: str) -> str:
        """``page`` with this block between its markers drawn anew."""
        start, end = self.markers
        head, rest = page.split(start, 1)
        return f"{head}{start}\n{self.draw()}\n{end}{rest.split(end, 1)[1]}"


def step_graph() -> str:
    """The declared steps as a Mermaid chart (a solid arrow is a need, waited for; a dotted one a read) and a table."""
    steps = list(STEPS.steps.values())
    lines = ["```mermaid", "flowchart LR"]
    for scope in Scope:
        lines += [
            f'  subgraph {scope.name.lower()}["{scope.value}"]',
            *(f"    {s.name}" for s in steps if s.scope is scope),
            "  end",
        ]
    for step in steps:
        lines += [*(f"  {need} --> {step.name}" for need in step.needs), *(f"  {read} -.-> {step.name}" for read in step.reads)]
    lines += ["```", "", "| step | runs | needs (waits until they are ready) | reads (as they came out) |", "|---|---|---|---|"]
    lines += [f"| `{s.name}` | {s.scope.value} | {_step_names(s.needs)} | {_step_names(s.reads)} |" for s in steps]
    return "\n".join(lines)


def _step_names(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names) or "—"


PYPROJECT = DOCS.parent / "pyproject.toml"
PACKAGE = "karpenter_gitops"
# The Pulumi components and the policy pack: above the core, importing what they use of it.
SHELLS = ("karpenter_gitops_pulumi", "karpenter_gitops_policies")


def _contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def _groups(layers: list[str]) -> list[list[str]]:
    return [[name.strip().rsplit(".", 1)[-1] for name in layer.split("|")] for layer in layers]


def core_layers() -> list[list[str]]:
    """The core's layers, top to bottom, as the main layers contract lists them; a group's layers share a level."""
    (main,) = [c for c in _contracts() if c["type"] == "layers" and "containers" not in c]
    return _groups(main["layers"])


class LayerImports(NamedTuple):
    """Which layers of the core each part of the code imports, keyed by part: a layer (``cli``), a shell, or one
    of the core's top-level modules (``karpenter_gitops.__main__``). Read from the source by grimp, the graph
    ``lint-imports`` checks the contracts on: every import statement, at module level or inside a function."""

    run_time: dict[str, set[str]]  # without the imports under `if TYPE_CHECKING:`, as the contracts count them
    annotations_only: dict[str, set[str]]  # layers a part imports only under `if TYPE_CHECKING:`, to name types


def layer_imports() -> LayerImports:
    layers = {name for group in core_layers() for name in group}
    run_time = _imports_between(layers, exclude_type_checking_imports=True)
    every = _imports_between(layers, exclude_type_checking_imports=False)
    annotations_only = {part: names - run_time.get(part, set()) for part, names in every.items()}
    return LayerImports(run_time, {part: names for part, names in annotations_only.items() if names})


def _imports_between(layers: set[str], exclude_type_checking_imports: bool) -> dict[str, set[str]]:
    graph = grimp.build_graph(PACKAGE, *SHELLS, exclude_type_checking_imports=exclude_type_checking_imports, cache_dir=None)
    imports: dict[str, set[str]] = {}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            source, target = _part(importer, layers), _part(imported, layers)
            if target in layers and target != source:
                imports.setdefault(source, set()).add(target)
    return imports


def _part(module: str, layers: set[str]) -> str:
    """The layer a module of the core belongs to (``cli`` for ``karpenter_gitops.cli.entry``); else its shell
    (``karpenter_gitops_pulumi``), or the module itself (``karpenter_gitops.__main__``)."""
    top, _, rest = module.partition(".")
    if top != PACKAGE:
        return top
    layer = rest.partition(".")[0]
    return layer if layer in layers else module


def _forbidden_layers(shell: str) -> list[str]:
    """The layers of the core the forbidden contracts keep ``shell`` from importing."""
    return [
        module.removeprefix(f"{PACKAGE}.")
        for contract in _contracts()
        if contract["type"] == "forbidden" and shell in contract["source_modules"]
        for module in contract["forbidden_modules"]
        if module.startswith(f"{PACKAGE}.")
    ]


def _first_paragraph(package: str) -> str:
    """A package docstring's first paragraph as markdown (Sphinx roles become code), read from its source: the
    shells import pulumi when imported."""
    source = Path(importlib.util.find_spec(package).origin).read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    text = " ".join(doc.split("\n\n", 1)[0].split())
    text = re.sub(r":(?:mod|class|func|data|meth|attr):`~?([^`]+)`", lambda m: f"`{m.group(1).lstrip('.')}`", text)
    return text.replace("``", "`")


def layer_map() -> str:
    """The core's layers in the contracts' order and the shells' imports, as a chart; then each layer and shell
    in its own words (its package docstring), with the layers it imports and what imports it, as the code has
    them; then the orders the contracts keep inside layers."""
    groups = core_layers()
    order = [name for group in groups for name in group]
    imports = layer_imports()
    lines = ["```mermaid", "flowchart TB", *(f'  {part}["{part}/"]' for part in (*SHELLS, *order))]
    lines += [f"  {upper} --> {lower}" for above, below in itertools.pairwise(groups) for upper in above for lower in below]
    lines += [f"  {shell} -.-> {name}" for shell in SHELLS for name in order if name in imports.run_time.get(shell, ())]
    lines += [
        "```",
        "",
        "A solid arrow joins a layer to the next one down in the contracts' order; a layer may import any layer "
        "below it, and which of them it does is listed under the chart. A dotted arrow is an import a shell has.",
        "",
    ]

    def ranked(parts) -> list[str]:
        return sorted(parts, key=lambda part: (order.index(part) if part in order else len(order), part))

    def imports_line(part: str) -> str:
        importers = ranked(p for p, names in imports.run_time.items() if part in names)
        line = (
            f"Imports: {_names(ranked(imports.run_time.get(part, ()))) or 'nothing of the project'}. "
            f"Imported by: {_names(importers) or 'nothing of the project'}."
        )
        if part in imports.annotations_only:
            line += f" Names types of {_names(ranked(imports.annotations_only[part]))} in annotations only (`if TYPE_CHECKING:`)."
        return line

    for name in order:
        lines += [f"**`{PACKAGE}/{name}/`** — {_first_paragraph(f'{PACKAGE}.{name}')}", "", imports_line(name), ""]
    for shell in SHELLS:
        lines += [
            f"**`{shell}/`** — {_first_paragraph(shell)}",
            "",
            f"{imports_line(shell)} Never imports (a forbidden contract): {_names(_forbidden_layers(shell))}.",
            "",
        ]
    lines += ["Inside a layer, the modules are ordered too (top to bottom; `|` joins modules that do not import each other):", ""]
    for contract in _contracts():
        if contract["type"] == "layers" and "containers" in contract:
            (container,) = contract["containers"]
            order_inside = " → ".join(" \\| ".join(f"`{n}`" for n in group) for group in _groups(contract["layers"]))
            lines.append(f"- `{container.replace('.', '/')}/`: {order_inside}")
    return "\n".join([*lines, ""])


def _names(packages: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in packages)


RECONCILIATION = DOCS / "concepts" / "reconciliation.md"
ARCHITECTURE = DOCS / "project" / "architecture.md"
DRAWINGS = (
    Drawing(RECONCILIATION, "karpenter_gitops/reconcile/steps.py", step_graph),
    Drawing(
        ARCHITECTURE, "the import contracts in pyproject.toml, the imports in the code and each package's docstring", layer_map
    ),
)


# --- all pages --------------------------------------------------------------------------------


def pages() -> dict[Path, str]:
    """Every generated page, by path under docs/reference/."""
    generated = {
        Path("commands.md"): commands_page(),
        Path("stack-keys.md"): stack_keys_page(),
        Path("config-keys.md"): config_keys_page(),
        Path("releases.md"): releases_page(),
        Path("rules/index.md"): rules_index(),
    }
    generated.update((Path("rules") / f"{rule.id}.md", rule_page(rule)) for rule in registry.RULES.values())
    return {path: HEADER + text.rstrip() + "\n" for path, text in generated.items()}


def write(target: Path = REFERENCE) -> list[Path]:
    """Write every page under ``target`` and remove generated pages that no longer exist (a removed rule)."""
    fresh = pages()
    for stale in set(_existing(target)) - set(fresh):
        (target / stale).unlink()
    for path, text in fresh.items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text, encoding="utf-8")
    return sorted(fresh)


def _existing(target: Path) -> Iterable[Path]:
    return (p.relative_to(target) for p in target.rglob("*.md")) if target.is_dir() else ()


if __name__ == "__main__":
    print(f"docs/reference: {len(write())} pages written", file=sys.stderr)
    for drawing in DRAWINGS:
        drawing.page.write_text(drawing.onto(drawing.page.read_text(encoding="utf-8")), encoding="utf-8")
        print(f"{drawing.page.relative_to(DOCS.parent)}: drawn anew from {drawing.source}", file=sys.stderr)
