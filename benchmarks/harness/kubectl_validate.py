"""kubectl-validate, the Kubernetes SIG's offline validator: the API server's own validation of local CRDs, CEL rules included.

* :func:`binary` builds it through ``tools/build.py kubectl-validate`` (our module under
  ``tools/kubectl-validate`` pins the release, v0.0.4) into the tools' cache, linked from ``.tools/bin``, on first
  use: minutes of both cores, which is why ``make tools`` leaves it out.
* :func:`command` runs it on the given CRDs alone, as JSON, never asking a cluster: with a kubeconfig
  (or in a pod) it would fetch the cluster's OpenAPI on every run, so ``KUBECONFIG`` names a file
  that does not exist and the in-cluster address is dropped; it then falls back to its built-in
  Kubernetes schemas, which these objects never need.
* :func:`verdicts` reads its report: one status per document, in each file's order.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
FAMILY = "kubectl-validate"  # its folder under tools/
EXECUTABLE = PROJECT / ".tools" / "bin" / "kubectl-validate"
MODULE = "sigs.k8s.io/kubectl-validate"


class Unavailable(Exception):
    """kubectl-validate cannot be built here; the message says why."""


def version() -> str:
    """The release our module pins (its go.mod says, so the figures name what was timed)."""
    found = re.search(rf"^\s*{re.escape(MODULE)} (v\S+)", (PROJECT / "tools" / FAMILY / "go.mod").read_text(), re.MULTILINE)
    return found.group(1) if found else "(not pinned)"


def binary() -> Path:
    """The kubectl-validate executable, built on first use (the build's lines go to stderr as they come)."""
    if shutil.which("go") is None:
        raise Unavailable("Go is not installed (kubectl-validate is built from its Go module; install Go 1.26)")
    done = subprocess.run([sys.executable, str(PROJECT / "tools" / "build.py"), FAMILY], stdout=sys.stderr)
    if done.returncode != 0:
        raise Unavailable(f"tools/build.py {FAMILY} failed (exit {done.returncode}); see its lines above")
    return EXECUTABLE


def command(executable: Path, crds: Path, paths: list[Path], scratch: Path) -> list[str]:
    """kubectl-validate on ``paths`` against the CRDs in ``crds``, reporting JSON, offline (module docstring)."""
    offline = ["env", "-u", "KUBERNETES_SERVICE_HOST", f"KUBECONFIG={scratch / 'no-kubeconfig'}"]
    return [*offline, str(executable), "--local-crds", str(crds), "--output", "json", *map(str, paths)]


def verdicts(stdout: str) -> dict[Path, list[str | None]]:
    """Per file, each document's refusal in order: None where it passed, else kubectl-validate's message."""
    report = json.loads(stdout)
    return {
        Path(path).resolve(): [None if status.get("status") == "Success" else status.get("message", "") for status in statuses]
        for path, statuses in report.items()
    }
