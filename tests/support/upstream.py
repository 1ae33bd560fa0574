"""Where the tests find upstream data (Karpenter's CRDs of every release, its userData fixtures): the
cache of the project's one fetch step, tools/upstream.py (``make upstream``). A file the cache lacks
is fetched first, so a bare ``pytest`` in a fresh clone works too; the project never holds a copy."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest
from conftest import PROJECT


def _fetch_step():
    """tools/upstream.py as a module: tools/ is no package, and its scripts run before any virtualenv."""
    spec = importlib.util.spec_from_file_location("upstream_fetch_step", PROJECT / "tools" / "upstream.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


STEP = _fetch_step()


@cache
def _fetch_once() -> Path | str:
    """The cache, or the lines of what no source had: asked once a session, however many tests fail on it."""
    try:
        return STEP.ensure()
    except STEP.Unavailable as missing:
        return str(missing)


def _fetched() -> Path:
    fetched = _fetch_once()
    if isinstance(fetched, str):
        pytest.fail(f"the fetch step (make upstream) could not fetch:\n{fetched}", pytrace=False)
    return fetched


def _tags(folder: str) -> list[str]:
    """The tags the lock takes files under ``folder`` from, oldest first."""
    tags = {item.tag for item in STEP.read_lock() if item.path.startswith(f"{folder}/")}
    return sorted(tags, key=lambda tag: tuple(int(part) for part in tag.lstrip("v").split(".")))


def crd_tags() -> list[str]:
    """The tag of every release whose CRDs the tests read (the newest patch of each minor), oldest first.
    Read from the lock, so listing them fetches nothing."""
    return _tags(STEP.CRDS)


def crds(tag: str) -> Path:
    """The folder of ``tag``'s CRDs, one file per kind."""
    return _fetched() / tag / STEP.CRDS


def userdata() -> Path:
    """The folder of Karpenter's launch-template userData fixtures (``*_input.golden`` and the rest)."""
    (tag,) = _tags(STEP.USERDATA)
    return _fetched() / tag / STEP.USERDATA
