"""A real ``pulumi preview`` of a stack's classes and pools, offline: the demo's last word on the Pulumi path.

The stack runs in a project of its own in a temporary directory (this program, this virtualenv, a
file backend, passphrase secrets, no plugin downloads) under the CLI ``make tools`` built, with the
policy pack, against the embedded AWS. Its controller block is left out: the pulumi_aws resources it
makes need the pulumi-aws plugin, which cannot be built from a Go module. Usage:
``python examples/pulumi_preview.py STACK`` (exit code: pulumi's).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parent.parent
BIN = PROJECT / ".venv" / "bin"


def main(stack: str) -> int:
    pulumi = PROJECT / ".tools" / "bin" / "pulumi"
    if not pulumi.exists():
        print("pulumi preview: the Pulumi CLI is not built here; run `make tools` (needs Go 1.26)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="karpenter-gitops-preview-"))
    try:
        document = yaml.safe_load((PROJECT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
        document["config"].pop("karpenter-gitops:controller", None)
        (work / "stacks").mkdir()
        (work / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
        project = yaml.safe_load((PROJECT / "Pulumi.yaml").read_text())
        project["runtime"]["options"]["virtualenv"] = str(PROJECT / ".venv")
        (work / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        shutil.copy(PROJECT / "__main__.py", work / "__main__.py")
        environment = {
            **os.environ,
            "PATH": os.pathsep.join([str(pulumi.parent), str(BIN), os.environ.get("PATH", "")]),
            "PULUMI_BACKEND_URL": f"file://{work}",
            "PULUMI_HOME": str(work / ".pulumi"),
            "PULUMI_CONFIG_PASSPHRASE": "demo",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        }
        run = lambda *args: subprocess.run(args, cwd=work, env=environment).returncode  # noqa: E731
        if run("pulumi", "stack", "init", stack, "--secrets-provider", "passphrase") != 0:
            return 1
        pack = subprocess.run(
            [BIN / "karpenter-gitops", "policy-pack"], capture_output=True, text=True, check=True
        ).stdout.strip()
        return run(str(BIN / "karpenter-gitops"), "embedded-aws", "--", "pulumi", "preview", "--policy-pack", pack)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "demo"))
