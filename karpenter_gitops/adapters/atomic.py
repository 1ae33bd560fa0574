"""Writes that land whole or not at all: a reader sees the old content or the new, never half of it.

What is written is staged beside its target (the same directory, so the same filesystem) and then
renamed into place; a failure on the way leaves the target as it was and nothing staged behind.
``bump`` rewrites stack files with it, ``render`` replaces its output directory, and the catalogue
cache is written while other runs may be reading it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_file(path: Path, text: str) -> None:
    """Make ``path`` hold ``text`` (UTF-8), creating its directory if need be.

    The text is flushed to disk before the rename, so a crash leaves the old file or the new one.
    A replaced file keeps its permission bits; a new one is readable by its owner only.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def replace_directory(out: Path, files: Mapping[str, str]) -> None:
    """Make the directory ``out`` hold exactly ``files`` (name → UTF-8 text), whatever it held before.

    The new set is written to a hidden sibling that replaces ``out`` by two renames: readers see
    the old set or the new set, never a mix (between the renames ``out`` is briefly absent).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".new", dir=out.parent))
    try:
        os.chmod(staging, 0o755)
        for name, text in files.items():
            (staging / name).write_bytes(text.encode("utf-8"))
        _swap_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap_into_place(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    os.rmdir(retired)  # only its unique name is wanted
    os.rename(out, retired)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(retired, out)
        raise
    shutil.rmtree(retired)
