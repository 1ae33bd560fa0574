"""A kustomize layout rendered, as a user's pipeline renders it: ``kustomize build DIR``, or ``kubectl kustomize DIR``.

``validate --kustomize DIR`` judges what kustomize makes of an overlay (its patches merged into the
objects of its resources) instead of the files one by one. The binary is ``$KARPENTER_GITOPS_KUSTOMIZE``
when set (a kubectl there is run as ``kubectl kustomize``), else ``kustomize`` on PATH, else ``kubectl``.
A failed build is one line naming the kustomization and kustomize's own first error line; no binary is
one line saying what to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.files import MAX_FILE_BYTES

BINARY = "KARPENTER_GITOPS_KUSTOMIZE"  # names the kustomize (or kubectl) to run
TIMEOUT = 120  # seconds: an overlay builds in well under one; a remote base fetched over the network may take longer
INSTALL = (
    "install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or kubectl, "
    f"or name one with {BINARY}; or render it yourself: kustomize build DIR | karpenter-gitops validate -"
)


def _command() -> list[str]:
    """The command that renders a kustomization folder given after it."""
    chosen = os.environ.get(BINARY)
    if chosen:
        return [chosen, "kustomize" if Path(chosen).name.startswith("kubectl") else "build"]
    if found := shutil.which("kustomize"):
        return [found, "build"]
    if found := shutil.which("kubectl"):
        return [found, "kustomize"]
    raise InputError("kustomize not found: neither kustomize nor kubectl is on PATH", hint=INSTALL)


def render(directory: Path, name: str | None = None) -> bytes:
    """The YAML stream kustomize builds from ``directory`` (named ``name`` in errors; by default, as given)."""
    name = name or str(directory)
    if not directory.is_dir():
        raise InputError("no such directory", name, hint="give --kustomize the folder that holds the kustomization.yaml")
    run = _command()
    try:
        done = subprocess.run([*run, str(directory)], capture_output=True, timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(f"{Path(run[0]).name} {run[1]} did not finish in {TIMEOUT} s", name) from None
    except OSError as err:
        raise InputError(f"cannot run {run[0]}: {err.strerror or err}", name, hint=INSTALL) from None
    if done.returncode:
        raise InputError(f"{Path(run[0]).name} {run[1]} failed: {_first_error(done.stderr)}", name)
    if len(done.stdout) > MAX_FILE_BYTES:
        raise InputError(f"kustomize rendered over {MAX_FILE_BYTES // 1_048_576} MiB; refused", name)
    return done.stdout


def _first_error(stderr: bytes) -> str:
    """Kustomize's first line saying what went wrong (``Error: `` left off), or that it said nothing."""
    for line in stderr.decode("utf-8", errors="replace").splitlines():
        if line.strip():
            return line.strip().removeprefix("Error: ")
    return "it printed no reason"
