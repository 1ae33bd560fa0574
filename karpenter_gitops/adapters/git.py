"""Files as they were at a Git ref: what a preview compares the working tree with.

The ref is read in memory with ``git cat-file --batch``, at the paths the head was read from, so
nothing is checked out and the working tree is left alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.files import MAX_FILE_BYTES, YAML_SUFFIXES


def _git(*args: str, cwd: Path, data: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed; pass --base as a directory instead") from None


def files_at_ref(ref: str, head_paths: Sequence[Path]) -> list[tuple[str, str]]:
    """``(ref:path, text)`` of every YAML file under ``head_paths`` as the ref has it."""
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
    names = [name for name in listed.stdout.decode().split("\0") if name.endswith(YAML_SUFFIXES) and _shown(name, relative)]
    return [(f"{ref}:{name}", text) for name, text in zip(names, _read_blobs(root, ref, names), strict=True)]


def _shown(name: str, heads: Sequence[str]) -> bool:
    """Whether the head reads ``name``: named itself, or below a named directory without a hidden
    entry *below* it (the named directory may itself sit under a dot-directory, as on disk)."""
    for head in heads:
        if name == head:
            return True
        below = PurePosixPath(name).relative_to(head) if head == "." or name.startswith(head + "/") else None
        if below is not None and not any(part.startswith(".") for part in below.parts):
            return True
    return False


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
        if size > MAX_FILE_BYTES:
            raise InputError(f"file is over {MAX_FILE_BYTES // 1_048_576} MiB; refused", f"{ref}:{name}")
        texts.append(output[end + 1 : end + 1 + size].decode("utf-8", errors="replace"))
        offset = end + 1 + size + 1
    return texts
