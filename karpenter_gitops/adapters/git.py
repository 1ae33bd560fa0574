"""Where a preview's base comes from: a directory of manifests, or the same inputs at a Git ref.

A directory (rendered by ``render`` or hand-written) must hold manifests only. A Git ref is read
in memory with ``git cat-file --batch``, at the paths the head was read from, so nothing is
checked out and the working tree is left alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import config
from karpenter_gitops.load.config import Inputs


def load_base(base: str, head_paths: Sequence[Path], version: versions.Version) -> Inputs:
    """The base inputs: ``base`` as a directory when one exists, else as a Git ref."""
    path = Path(base)
    if path.is_dir():
        return _from_directory(path, version)
    return _from_git(base, head_paths, version)


def _from_directory(path: Path, version: versions.Version) -> Inputs:
    files = [p for p in sorted(path.rglob("*")) if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)]
    foreign = [str(p.relative_to(path)) for p in files if p.suffix not in config.YAML_SUFFIXES]
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise InputError(f"base directory holds files that are not manifests ({shown})", str(path), hint="pass a rendered directory")
    if not files:
        return Inputs()  # an empty base: everything in the head is new
    return config.load([path], version)


def _git(*args: str, cwd: Path, data: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed; pass --base as a directory instead") from None


def _from_git(ref: str, head_paths: Sequence[Path], version: versions.Version) -> Inputs:
    cwd = Path.cwd()
    top = _git("rev-parse", "--show-toplevel", cwd=cwd)
    if top.returncode:
        raise InputError(f"--base {ref!r} is not a directory, and {cwd} is not inside a Git repository")
    root = Path(top.stdout.decode().strip())
    if _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=root).returncode:
        raise InputError(
            f"--base {ref!r} is neither a directory nor a known Git ref",
            hint="fetch it first (actions/checkout needs fetch-depth: 0)",
        )
    relative = []
    for path in head_paths:
        try:
            relative.append(str(path.resolve().relative_to(root.resolve())))
        except ValueError:
            raise InputError("is outside the Git repository, so it has no base version", str(path)) from None
    listed = _git("ls-tree", "-r", "-z", "--name-only", ref, "--", *relative, cwd=root)
    names = [
        name
        for name in listed.stdout.decode().split("\0")
        if name.endswith(config.YAML_SUFFIXES) and not any(part.startswith(".") for part in Path(name).parts)
    ]
    blobs = _read_blobs(root, ref, names)
    documents = [(f"{ref}:{name}", config.parse_yaml(text, f"{ref}:{name}")) for name, text in zip(names, blobs)]
    return config.load_documents(documents, version)


def _read_blobs(root: Path, ref: str, names: Sequence[str]) -> list[str]:
    """The files' contents at ``ref``, in one ``git cat-file --batch`` process."""
    if not names:
        return []
    request = "".join(f"{ref}:{name}\n" for name in names).encode()
    output = _git("cat-file", "--batch", cwd=root, data=request).stdout
    texts, offset = [], 0
    for name in names:
        end = output.index(b"\n", offset)
        header = output[offset:end].decode().split()
        if len(header) != 3:
            raise InputError(f"git could not read {name} at {ref}")
        size = int(header[2])
        if size > config.MAX_FILE_BYTES:
            raise InputError(f"file is over {config.MAX_FILE_BYTES // 1_048_576} MiB; refused", f"{ref}:{name}")
        texts.append(output[end + 1 : end + 1 + size].decode("utf-8", errors="replace"))
        offset = end + 1 + size + 1
    return texts
