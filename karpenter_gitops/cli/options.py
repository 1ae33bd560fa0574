"""Options the commands share, parsed into typed values so a bad flag is a usage error, never a traceback."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from karpenter_gitops.core import versions


def _release(_ctx, _param, value: str | None) -> versions.Release | None:
    if value is None:
        return None
    try:
        return versions.parse(value)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--karpenter-version") from None


_GATE = re.compile(r"^([A-Za-z][A-Za-z0-9.]*)=(true|false)$", re.IGNORECASE)


def _feature_gates(ctx: click.Context, _param, value: str | None) -> None:
    """Karpenter's own flag syntax (``NodeOverlay=true,StaticCapacity=false``), kept for :func:`sources`,
    which checks the names against the release's gates once it knows the release."""
    gates = {}
    for item in filter(None, (part.strip() for part in (value or "").split(","))):
        match = _GATE.match(item)
        if not match:
            raise click.BadParameter(
                f"{item!r} is not NAME=true or NAME=false (e.g. NodeOverlay=true)", param_hint="--feature-gates"
            )
        gates[match[1]] = match[2].lower() == "true"
    ctx.meta["karpenter-gitops.feature-gates"] = gates


def karpenter(func):
    """``--karpenter-version`` and ``--feature-gates``: which Karpenter the cluster runs, and with what switched on."""
    func = click.option(
        "--feature-gates",
        metavar="NAME=BOOL,...",
        callback=_feature_gates,
        expose_value=False,
        help="Karpenter's feature gates as its --feature-gates (and, from 1.15, --aws-feature-gates) flag takes "
        "them, or by their Helm values key (nodeOverlay=true), over the stack's cluster.featureGates "
        "(e.g. NodeOverlay=true for manifests). An unknown gate is refused with the release's list.",
    )(func)
    return click.option(
        "--karpenter-version",
        "release",
        metavar="X.Y",
        callback=_release,
        help=f"Karpenter release to validate against (default: the stack's cluster.karpenterVersion, "
        f"else {versions.show(versions.DEFAULT)}).",
    )(func)


def output_format(*choices: str, help: str = "Output format."):
    def decorate(func):
        return click.option(
            "--format", "fmt", type=click.Choice(list(choices)), default=choices[0], show_default=True, help=help
        )(func)

    return decorate


def _kubernetes(_ctx, param, value: str | None) -> versions.Kubernetes | None:
    """The cluster's version, parsed here: ``--kubernetes-version 1.x`` is a usage error, not a traceback deep in alias resolution."""
    if value is None:
        return None
    try:
        return versions.Kubernetes.parse(value)
    except ValueError as err:
        raise click.BadParameter(str(err), param=param) from None


def aws(func):
    """``--embedded-aws``, ``--aws-fixture`` and ``--kubernetes-version``: what a command reading AWS takes."""
    options = (
        click.option("--embedded-aws", is_flag=True, help="Run against moto on 127.0.0.1, seeded from a world fixture."),
        click.option("--aws-fixture", metavar="FILE", type=click.Path(), help="World fixture for --embedded-aws."),
        click.option(
            "--kubernetes-version",
            "kubernetes",
            metavar="X.Y",
            callback=_kubernetes,
            help="Cluster version for alias AMIs (default: the stack's).",
        ),
    )
    for option in reversed(options):
        func = option(func)
    return func


def check_fixture(embedded_aws: bool, aws_fixture: str | None) -> None:
    if aws_fixture and not embedded_aws:
        raise click.UsageError("--aws-fixture needs --embedded-aws")


def reconcile(func):
    """``--reconcile/--offline`` and ``--cache-dir``: commands that ask AWS only when told to."""
    func = cache_dir(func)
    return click.option(
        "--reconcile/--offline",
        "reconcile_",
        default=False,
        show_default=True,
        help="Also reconcile against AWS (implied by --embedded-aws).",
    )(func)


def cache_dir(func):
    return click.option("--cache-dir", type=click.Path(path_type=Path), help="Instance-type catalogue cache directory.")(func)


def input_paths(paths: Sequence[str], stack: str | None) -> list[Path]:
    from karpenter_gitops.load.stacks import stack_file  # YAML and the models, only once a command runs

    chosen = [Path(p) for p in paths]
    if stack:
        chosen.append(stack_file(stack))
    if not chosen:
        raise click.UsageError("give at least one PATH or --stack NAME")
    return chosen


def stack_or_manifests(stack: str | None, manifests: Sequence[str]) -> list[Path]:
    if bool(stack) == bool(manifests):
        raise click.UsageError("give exactly one of --stack NAME or PATH... (or --manifests PATH...)")
    return input_paths(manifests, stack)


def manifest_paths(func):
    """``PATHS`` (files, directories, ``-`` for standard input), as validate takes them, and the older
    ``--manifests PATH`` (repeatable), which means the same."""
    func = click.option(
        "--manifests",
        "manifests",
        metavar="PATH",
        multiple=True,
        help="Manifest files or directories (the same as giving them as PATHS).",
    )(func)
    return click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))(func)


def kustomize(func):
    """``--kustomize DIR``: judge what kustomize renders from a kustomization folder instead of files."""
    return click.option(
        "--kustomize",
        "kustomize_dir",
        type=click.Path(path_type=Path),
        metavar="DIR",
        help="Judge what `kustomize build DIR` (or `kubectl kustomize DIR`; $KARPENTER_GITOPS_KUSTOMIZE names "
        "another binary) renders, patches merged, instead of PATHS; findings name the folder, without lines.",
    )(func)


def allow_empty(func):
    return click.option(
        "--allow-empty",
        is_flag=True,
        help="Exit 0 when the paths hold no Karpenter object (e.g. a pre-commit hook on a commit touching none); "
        "without it such a run says so and exits 2.",
    )(func)


def require_objects(read, allowed: bool) -> None:
    """Stop a run that found nothing of Karpenter's to work on, unless ``allowed``: one line on stderr in
    every format and exit 2, as any unusable input (a CI job pointed at the wrong folder must fail)."""
    from karpenter_gitops.core.errors import InputError

    if read.empty and not allowed:
        raise InputError(read.empty)


def stacks(help: str):
    """``--stack NAME`` (repeatable) and ``--all-stacks``: one stack, or a fleet of them; ``--shard I/N``: a
    CI job's share of ``--all-stacks`` (kept in the context, read by :func:`fleet_stacks`)."""

    def decorate(func):
        func = click.option(
            "--shard",
            metavar="I/N",
            callback=_shard,
            expose_value=False,
            help="With --all-stacks: only the I-th of N shards of the stacks (every N-th by name, from the I-th), "
            "for a CI matrix; `karpenter-gitops merge` joins the shards' JSON outputs into one run's report.",
        )(func)
        func = click.option("--all-stacks", is_flag=True, help="Every stacks/Pulumi.*.yaml, each as its own cluster.")(func)
        return click.option("--stack", "stacks", metavar="NAME", multiple=True, help=help)(func)

    return decorate


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``I/N`` parsed into the context (1 ≤ I ≤ N); a usage error otherwise."""
    if value is None:
        return
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise click.BadParameter(f"{value!r} is not I/N with 1 ≤ I ≤ N (e.g. 2/4)", ctx, param)
    ctx.meta["karpenter_gitops.shard"] = (int(index), int(count))


def is_fleet(stacks: Sequence[str], all_stacks: bool) -> bool:
    return all_stacks or len(set(stacks)) > 1


def fleet_stacks(paths: Sequence[str], stacks: Sequence[str], all_stacks: bool) -> list[str]:
    """The stacks of a fleet run; manifests (PATHS) belong to no stack, so they cannot join one."""
    from karpenter_gitops.app.fleet import chosen_stacks

    if paths:
        raise click.UsageError("PATHS cannot be combined with several stacks; run the manifests on their own")
    if all_stacks and stacks:
        raise click.UsageError("give --stack NAME... or --all-stacks, not both")
    shard = click.get_current_context().meta.get("karpenter_gitops.shard")
    if shard is None:
        return chosen_stacks(stacks, all_stacks)
    if not all_stacks:
        raise click.UsageError("--shard takes a share of --all-stacks; give --all-stacks")
    index, count = shard
    every = chosen_stacks(stacks, all_stacks)
    if index > len(every):
        raise click.UsageError(f"--shard {index}/{count}: the project has only {len(every)} stack(s); give fewer shards")
    return every[index - 1 :: count]


def sources(paths: Sequence[Path], release: versions.Release | None, rendered: tuple[str, bytes] | None = None):
    """What a command reads (app.sources.Sources), saying on stderr when the release asked for is newer
    than the project knows; ``rendered`` (name, stream) stands in for standard input. Imported here, not at
    the top: the command tree loads before any rule."""
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.output.report_text import print_note

    read = read_sources(paths, release, given_feature_gates(), rendered)
    if read.note:
        print_note(read.note)
    return read


def given_feature_gates() -> Mapping[str, bool] | None:
    """The ``--feature-gates`` the command was given (see :func:`feature_gates`)."""
    context = click.get_current_context(silent=True)
    return context.meta.get("karpenter-gitops.feature-gates") if context else None


def policy_file(func):
    """``--policy-file``: the house-style policy settings a team keeps in its repository, with or without a stack."""
    return click.option(
        "--policy-file",
        "policy_file",
        type=click.Path(path_type=Path),
        metavar="FILE",
        help="Policy settings (YAML, the keys of a stack's karpenter-gitops:policy block): raise house-style "
        "policies to blocking (rules: {ID: {severity: error}}), switch rules off, set their parameters. "
        "A stack's own block wins key by key.",
    )(func)


def show_info(func):
    """``--show-info``: list the ``info`` findings (house-style notes) that text and the PR comment leave out."""
    return click.option(
        "--show-info",
        is_flag=True,
        help="Also list info findings (house-style notes), which the text, the PR comment and validate's sarif and "
        "junit formats leave out; --format json and jsonl always hold them.",
    )(func)


def quiet(func):
    """``--quiet``: the text output cut to what a pre-commit hook or a glance needs."""
    return click.option(
        "--quiet",
        "-q",
        is_flag=True,
        help="Print the findings and the summary line only: no notes, fixes or waivers (text format).",
    )(func)


CONFIG_ENV = "KARPENTER_GITOPS_CONFIG"  # names the configuration file, as --config does
_CONFIG_FLAGS = "karpenter-gitops.config-flags"  # --config and --no-config as given, until both are known
_CONFIG = "karpenter-gitops.config"  # the configuration read (load.repository_config.RepositoryConfig)


def repository_config(func):
    """``--config FILE`` and ``--no-config``: the repository's ``.karpenter-gitops.yaml`` (found from the working
    directory up to the repository's root, :func:`karpenter_gitops.load.repository_config.find`) gives the
    defaults of the command's flags: the flags given win, then ``$KARPENTER_GITOPS_*`` variables where a flag
    reads one, then the file. Both options are eager, so the file is read, and its defaults set (click's
    ``default_map``), before any other option is; the command then runs with PATHS from the file when it
    was given none (nor a stack), and says on stderr which file it used and what it set, unless ``--quiet``."""

    @functools.wraps(func)
    def configured(*args, **kwargs):
        context = click.get_current_context()
        config = context.meta.get(_CONFIG)
        if config is None:
            return func(*args, **kwargs)
        kwargs = _with_config(context, config, kwargs)
        outcome = func(*args, **kwargs)
        if not kwargs.get("quiet"):  # once the run is through: a run refused says its one line, nothing else
            from karpenter_gitops.core.text import visible
            from karpenter_gitops.output.report_text import print_note

            used = ", ".join(config.keys) or "nothing"
            print_note(visible(f"settings from {config.file}: {used} (flags given win; --no-config ignores it)"))
        return outcome

    configured = click.option(
        "--no-config",
        is_flag=True,
        is_eager=True,
        expose_value=False,
        callback=_config_flag,
        help="Ignore .karpenter-gitops.yaml.",
    )(configured)
    return click.option(
        "--config",
        metavar="FILE",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar=CONFIG_ENV,
        is_eager=True,
        expose_value=False,
        callback=_config_flag,
        help="The configuration file whose settings are the defaults of these flags (default: .karpenter-gitops.yaml, "
        f"the nearest from here up to the repository's root; also ${CONFIG_ENV}).",
    )(configured)


def _config_flag(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Note ``--config`` or ``--no-config``; once both are known (click runs eager options first, in the order
    given), read the configuration file and make its settings the defaults of the options still to come."""
    flags = ctx.meta.setdefault(_CONFIG_FLAGS, {})
    flags[param.name] = value
    if len(flags) < 2:
        return
    if flags["no_config"]:
        if flags["config"] is not None:
            raise click.UsageError("give --config FILE or --no-config, not both")
        return
    from karpenter_gitops.load import repository_config

    path = flags["config"] or repository_config.find(Path.cwd())
    if path is None:
        return
    config = ctx.meta[_CONFIG] = repository_config.read(path)
    ctx.default_map = {**_defaults(config), **(ctx.default_map or {})}


def _defaults(config) -> dict[str, Any]:
    """The configuration's settings as the defaults of the options they stand for, spelled as the flags take them."""
    defaults: dict[str, Any] = {
        "release": config.release and versions.show(config.release),
        "feature_gates": ",".join(f"{gate}={str(on).lower()}" for gate, on in config.feature_gates.items()) or None,
        "policy": config.policy,
        "policy_file": config.policy_file,
        "waiver_file": config.waivers and str(config.waivers),
    }
    return {name: value for name, value in defaults.items() if value is not None}


def _with_config(context: click.Context, config, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The command's arguments with what the configuration sets beyond its options' defaults: its paths when
    the command reads paths and was given none (no PATHS, --manifests, stack or --kustomize); no waiver file of its own on a
    run without --policy (waivers apply only there), and neither of its policy and waiver files on a run told
    --no-policy."""
    kwargs = dict(kwargs)
    given = ("paths", "manifests", "stacks", "all_stacks", "kustomize_dir")
    if "paths" in kwargs and config.paths and not any(kwargs.get(k) for k in given):
        kwargs["paths"] = tuple(str(path) for path in config.paths)
    if context.get_parameter_source("policy") is ParameterSource.COMMANDLINE and not kwargs["policy"]:
        kwargs.update({name: None for name in ("policy_file", "waiver_file") if _from_file(context, name)})
    if _from_file(context, "waiver_file") and not (kwargs.get("policy") or kwargs.get("policy_file") or configured_rules()):
        kwargs["waiver_file"] = None
    return kwargs


def configured_rules():
    """The configuration file's ``rules`` (load.repository_config), unless the command was given ``--policy-file``
    (a flag wins over the file) or ``--no-policy``; None when there are none to apply."""
    context = click.get_current_context(silent=True)
    config = context.meta.get(_CONFIG) if context else None
    if config is None or config.rules is None:
        return None
    given = {name: context.get_parameter_source(name) is ParameterSource.COMMANDLINE for name in ("policy_file", "policy")}
    if given["policy_file"] or (given["policy"] and not context.params.get("policy")):
        return None
    return config.rules


def _from_file(context: click.Context, name: str) -> bool:
    return context.get_parameter_source(name) is ParameterSource.DEFAULT_MAP
