"""The ``policy-pack`` use case: a pack directory ``pulumi preview --policy-pack`` runs on this environment.

The engine runs a Python pack with the interpreter of the virtualenv its ``PulumiPolicy.yaml`` names
(relative to the pack directory), else ``python3`` from PATH, which for a program on an unactivated
virtualenv has neither pulumi_policy nor the pack. The shipped pack names the repository's
``.venv``; where that is not this environment (a wheel installed in another project's virtualenv),
a two-file pack naming ``sys.prefix`` and running the shipped one is written to the user cache.

Located with :func:`importlib.util.find_spec`, so nothing here imports pulumi or the pack.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
from pathlib import Path

import yaml

from karpenter_gitops.adapters import atomic
from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.errors import InputError

PACK_PACKAGE = "karpenter_gitops_policies"
RUNTIME_FILE = "PulumiPolicy.yaml"
# Run the shipped pack as the engine would run it from its own directory.
ENTRY_POINT = f'import runpy\n\nrunpy.run_module("{PACK_PACKAGE}", run_name="__main__", alter_sys=True)\n'


def shipped_pack() -> Path:
    """The installed pack's directory (``karpenter_gitops_policies/``)."""
    spec = importlib.util.find_spec(PACK_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            f"the policy pack {PACK_PACKAGE} is not installed in {sys.prefix}",
            hint="pip install karpenter-gitops into the environment you run this command from",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _runtime_document(pack: Path) -> dict:
    path = pack / RUNTIME_FILE
    try:
        document = yaml_reader.document(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            f"cannot read the pack's runtime file: {error.strerror or error}", str(path), hint="reinstall karpenter-gitops"
        ) from None
    except yaml_reader.YAMLError as error:
        raise InputError(
            f"not valid YAML ({' '.join(str(error).split())})", str(path), hint="reinstall karpenter-gitops"
        ) from None
    if not isinstance(document, dict):
        raise InputError("not a mapping", str(path), hint="reinstall karpenter-gitops")
    return document


def _virtualenv(document: dict) -> str | None:
    runtime = document.get("runtime")
    options = runtime.get("options") if isinstance(runtime, dict) else None
    return options.get("virtualenv") if isinstance(options, dict) else None


def runs_here(pack: Path, document: dict) -> bool:
    """Whether the engine would start ``pack`` with this interpreter's environment."""
    virtualenv = _virtualenv(document)
    return bool(virtualenv) and (pack / virtualenv).resolve() == Path(sys.prefix).resolve()


def pack_files(document: dict) -> dict[str, str]:
    """The pack for this environment: the shipped runtime file naming ``sys.prefix``, and an entry point."""
    runtime: dict | str = "python"
    if sys.prefix != sys.base_prefix:  # a virtualenv; otherwise the engine's ``python3`` from PATH is all there is
        runtime = {"name": "python", "options": {"virtualenv": sys.prefix}}
    header = f"# Written by `karpenter-gitops policy-pack` for {sys.prefix}: it runs {PACK_PACKAGE} from there.\n"
    return {RUNTIME_FILE: header + yaml.safe_dump({**document, "runtime": runtime}, sort_keys=False), "__main__.py": ENTRY_POINT}


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/karpenter-gitops/policy-pack`` (``~/.cache`` without it)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "karpenter-gitops" / "policy-pack"


def _key() -> str:
    """Package version and environment: a new release or another virtualenv gets a directory of its own."""
    try:
        version = importlib.metadata.version("karpenter-gitops")
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"karpenter-gitops is not installed in {sys.prefix}", hint="pip install karpenter-gitops") from None
    return f"{version}-{hashlib.sha256(sys.prefix.encode()).hexdigest()[:16]}"


def _holds(directory: Path, files: dict[str, str]) -> bool:
    try:
        return all((directory / name).read_text(encoding="utf-8") == text for name, text in files.items())
    except (OSError, UnicodeDecodeError):
        return False


def write_pack(directory: Path, files: dict[str, str]) -> None:
    """Make ``directory`` hold ``files``: staged in a sibling, then renamed, so a reader never sees half a pack.

    Idempotent, and safe when two runs race: the loser's staging is discarded if the winner's pack is whole.
    """
    if _holds(directory, files):
        return
    try:
        if directory.exists() and (not directory.is_dir() or {entry.name for entry in directory.iterdir()} - set(files)):
            raise InputError(
                "refusing to replace: it holds files `karpenter-gitops policy-pack` did not write",
                str(directory),
                hint="give --out a new or empty directory",
            )
        try:
            atomic.replace_directory(directory, files)
        except OSError:
            if not _holds(directory, files):  # another run's rename won the race with a whole pack: keep it
                raise
    except OSError as error:
        raise InputError(
            f"cannot write the policy pack: {error.strerror or error}",
            str(directory),
            hint="set XDG_CACHE_HOME to a writable directory, or give --out",
        ) from None


def policy_pack(out: Path | None = None) -> Path:
    """A pack directory the engine runs with this environment: the shipped one when it already does, or
    one written to ``out`` (default: the user cache, keyed by version and environment)."""
    shipped = shipped_pack()
    document = _runtime_document(shipped)
    if out is None and runs_here(shipped, document):
        return shipped
    directory = out if out is not None else cache_dir() / _key()
    write_pack(directory, pack_files(document))
    return directory.absolute()
