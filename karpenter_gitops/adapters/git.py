"""Files as they were at a Git ref: what a preview compares the working tree with.

The ref is read in memory with ``git cat-file --batch``, at the paths the head was read from, so
nothing is checked out and the working tree is left alone; the patch files its kustomizations list are
left out, as on disk (:mod:`karpenter_gitops.load.kustomizations`). For kustomize, which reads a folder,
the ref's tree is written to a temporary folder (:func:`tree_at_ref`).
"""

from __future__ import annotations

import contextlib
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.files import MAX_FILE_BYTES, YAML_SUFFIXES
from karpenter_gitops.load.kustomizations import NAMES, Layouts


def _git(*args: str, cwd: Path, data: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git is not installed; pass --base as a directory instead") from None


def files_at_ref(ref: str, head_paths: Sequence[Path]) -> list[tuple[str, str]]:
    """``(ref:path, text)`` of every YAML file under ``head_paths`` as the ref has it, but the patch files of its
    kustomizations and those themselves."""
    root = _repository(ref)
    relative = [_inside(root, path) for path in head_paths]
    names = [name for name in _listed(root, ref, *relative) if name.endswith(YAML_SUFFIXES) and _shown(name, relative)]
    kustomizations = [name for name in _listed(root, ref) if PurePosixPath(name).name in NAMES]
    layouts = Layouts(dict(zip((root / name for name in kustomizations), _read_blobs(root, ref, kustomizations), strict=True)))
    names = [name for name in names if not layouts.takes(root / name)]
    texts = (blob.decode("utf-8", errors="replace") for blob in _read_blobs(root, ref, names))
    return [(f"{ref}:{name}", text) for name, text in zip(names, texts, strict=True)]


@contextlib.contextmanager
def tree_at_ref(ref: str, folder: Path) -> Iterator[Path]:
    """``folder`` (of the working tree) as ``ref`` has it: the whole tree at the ref written to a temporary folder,
    deleted afterwards (a kustomization reaches files beside and above it); the folder's path there, which need
    not exist."""
    root = _repository(ref)
    relative = _inside(root, folder)
    with tempfile.TemporaryDirectory(prefix="karpenter-gitops-base-") as copy:
        archive = ["git", "archive", "--format=tar", ref]
        with subprocess.Popen(archive, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as written:
            try:
                with tarfile.open(fileobj=written.stdout, mode="r|") as tar:
                    tar.extractall(copy, filter="data")  # no path out of the folder, no device, no setuid bit
            except (tarfile.TarError, OSError) as err:
                raise InputError(f"git could not write out the tree of {ref}: {err}") from None
        yield Path(copy) / relative


def _repository(ref: str) -> Path:
    """The root of the repository the working directory is in, once ``ref`` is known to be a commit in it."""
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
    return root


def _inside(root: Path, path: Path) -> str:
    """``path``, relative to the repository's ``root``."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        raise InputError("is outside the Git repository, so it has no base version", str(path)) from None


def _listed(root: Path, ref: str, *paths: str) -> list[str]:
    """The files at ``ref`` under ``paths`` (every file without), relative to the root."""
    listed = _git("ls-tree", "-r", "-z", "--name-only", ref, "--", *paths, cwd=root)
    return [name for name in listed.stdout.decode().split("\0") if name]


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


def _read_blobs(root: Path, ref: str, names: Sequence[str]) -> list[bytes]:
    """The files' contents at ``ref``, in one ``git cat-file --batch`` process."""
    if not names:
        return []
    request = "".join(f"{ref}:{name}\n" for name in names).encode()
    output = _git("cat-file", "--batch", cwd=root, data=request).stdout
    blobs, offset = [], 0
    for name in names:
        end = output.index(b"\n", offset)
        header = output[offset:end].decode().split()
        if len(header) != 3:
            raise InputError(f"git could not read {name} at {ref}")
        size = int(header[2])
        if size > MAX_FILE_BYTES:
            raise InputError(f"file is over {MAX_FILE_BYTES // 1_048_576} MiB; refused", f"{ref}:{name}")
        blobs.append(output[end + 1 : end + 1 + size])
        offset = end + 1 + size + 1
    return blobs
