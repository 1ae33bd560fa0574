"""Shared test helpers. Upstream data is read from ../shared, never copied into the project."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
SHARED = PROJECT.parent / "shared"
CRDS = SHARED / "crds"
USERDATA = SHARED / "upstream" / "userdata"


@pytest.fixture
def project() -> Path:
    return PROJECT
