"""Check stacks.yaml against the Pulumi Kubernetes Operator's real Stack CRD (run by hand).

    python deploy/pulumi-operator/verify.py [--mirror DIR] [--commit SHA]

The CRD is not in this repository (it is the operator's work): it is read from a local bare clone
of pulumi/pulumi-kubernetes-operator (``DIR/pulumi+pulumi-kubernetes-operator/repo``, default
``../.mirror`` beside the project), at the commit stack-schema.json was written from. The tests check
the examples against stack-schema.json, which this script keeps honest.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

HERE = Path(__file__).resolve().parent
COMMIT = "475dbc6c9d34ccab38ba1d3b16c924dd8a1c59b1"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=HERE.parents[2] / ".mirror")
    parser.add_argument("--commit", default=COMMIT)
    args = parser.parse_args()
    git = args.mirror / "pulumi+pulumi-kubernetes-operator" / "repo"
    shown = subprocess.run(
        ["git", "--git-dir", str(git), "show", f"{args.commit}:deploy/crds/pulumi.com_stacks.yaml"],
        capture_output=True,
        text=True,
    )
    if shown.returncode != 0:
        print(f"verify: cannot read the CRD from {git}: {shown.stderr.strip()}", file=sys.stderr)
        return 2
    crd = yaml.safe_load(shown.stdout)
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")["schema"]["openAPIV3Schema"]
    validator = Draft202012Validator(schema)
    problems = [
        f"{doc['metadata']['name']}: {'.'.join(map(str, e.absolute_path))}: {e.message}"
        for doc in yaml.safe_load_all((HERE / "stacks.yaml").read_text())
        for e in validator.iter_errors(doc)
    ]
    print("\n".join(problems) or "stacks.yaml matches the operator's Stack CRD")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
