"""Karpenter's CRDs for the benchmarks, from the cache of the project's one fetch step (tools/upstream.py,
``make upstream``); a file the cache lacks is fetched first. The project never holds a copy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def release_crds(tag: str) -> Path:
    """The folder of ``tag``'s CRDs, one file per kind; exits with the fetch step's lines when no source has them."""
    spec = importlib.util.spec_from_file_location("upstream_fetch_step", PROJECT / "tools" / "upstream.py")
    step = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = step  # dataclasses look their module up by name
    spec.loader.exec_module(step)
    try:
        folder = step.ensure() / tag / step.CRDS
    except step.Unavailable as missing:
        raise SystemExit(f"the fetch step (make upstream) could not fetch:\n{missing}") from None
    if not folder.is_dir():
        raise SystemExit(f"no CRDs of {tag}: tools/upstream.lock lists the releases the fetch step holds")
    return folder
