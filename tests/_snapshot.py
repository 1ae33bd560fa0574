"""Snapshot assertions: compare text with tests/snapshots/<name>; UPDATE_SNAPSHOTS=1 rewrites the file."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if os.environ.get("UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"snapshot {name} did not exist; written — review it and re-run")
        return
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"output differs from snapshot {name} (UPDATE_SNAPSHOTS=1 to accept)"
