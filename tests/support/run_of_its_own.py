"""A pytest run of its own over a test module written for the occasion, with one of our plugins loaded:
how the suite's own hooks (the time limit, the check on processes left behind) are tested."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS_FOLDER = Path(__file__).resolve().parent.parent


def run_of_its_own(
    tmp_path: Path, module: str, plugin: str, *options: str, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Pytest over ``module`` (the text of one test file) in ``tmp_path``, with ``plugin`` and no configuration
    of ours, so only the plugin under test acts."""
    (tmp_path / "test_of_its_own.py").write_text(module)
    path = os.pathsep.join([str(TESTS_FOLDER), os.environ.get("PYTHONPATH", "")])
    arguments = [
        "-p",
        plugin,
        "-p",
        "no:cacheprovider",
        "-q",
        *options,
        "--rootdir",
        str(tmp_path),
        "-c",
        os.devnull,
        str(tmp_path),
    ]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *arguments],
        cwd=tmp_path,
        env={**os.environ, **(environment or {}), "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
