"""kubeconform, the Go schema checker users compare us with: built from its module, fed strict CRD schemas.

* :func:`binary` builds kubeconform at :data:`VERSION` with ``go install`` from its Go module (no
  replace lines, so ``pkg@version`` works) into the benchmarks' cache outside the clone, once per
  version and Go toolchain; the version is stamped as its release builds stamp it.
* :func:`strict_schemas` turns CustomResourceDefinitions into the JSON schemas kubeconform reads, the
  way the CRDs-catalog converter does: each version's ``openAPIV3Schema`` as it is, except that
  every object node that lists ``properties`` (and has type object) closes them with
  ``additionalProperties: false`` unless it says otherwise, the root staying open, and a node of
  ``format: int-or-string`` becomes one of string or integer. ``x-kubernetes-*`` extensions stay
  and JSON Schema ignores them, so CEL rules are not checked: kubeconform judges schema only.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

MODULE = "github.com/yannh/kubeconform"
VERSION = "v0.8.0"
# Where kubeconform looks for a kind's schema: <group>/<kind>_<version>.json, CRDs-catalog's layout.
LOCATION = "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
_SUMMARY = re.compile(
    r"Summary: (\d+) resources? found in \d+ files? - Valid: (\d+), Invalid: (\d+), Errors: (\d+), Skipped: (\d+)"
)


class Unavailable(Exception):
    """kubeconform cannot be built here; the message says why."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "karpenter-gitops" / "benchmarks"


def binary(log=print) -> Path:
    """The kubeconform executable, built on first use (a minute with a cold module cache)."""
    go = shutil.which("go")
    if go is None:
        raise Unavailable("Go is not installed (kubeconform is built from its Go module; install Go 1.26)")
    toolchain = subprocess.run([go, "env", "GOVERSION"], check=True, capture_output=True, text=True).stdout.strip()
    target = cache_root() / f"kubeconform-{VERSION}-{toolchain}"
    executable = target / "kubeconform"
    if executable.is_file():
        return executable
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".kubeconform-", dir=target.parent))
    log(f"building kubeconform {VERSION} with {toolchain} into {target}")
    try:
        command = [go, "install", "-trimpath", "-ldflags", f"-X main.version={VERSION}", f"{MODULE}/cmd/kubeconform@{VERSION}"]
        environment = {**os.environ, "GOBIN": str(staging), "CGO_ENABLED": "0"}
        done = subprocess.run(command, cwd=staging, env=environment, capture_output=True, text=True)
        if done.returncode != 0:
            raise Unavailable(f"go install failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
        staging.rename(target)  # whole or not at all
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return executable


# --- CRDs -> strict JSON schemas ---------------------------------------------------------------


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _closed(node: Any, root: bool = False) -> Any:
    """A copy of ``node`` where every nested object with properties rejects fields it does not list."""
    if isinstance(node, list):
        return [_closed(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("format") == "int-or-string":
        return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    out = {key: _closed(value) for key, value in node.items()}
    if not root and "properties" in node and _is_object(node):
        out.setdefault("additionalProperties", False)
    return out


def _versions(crd: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    spec = crd.get("spec") or {}
    for version in spec.get("versions") or ():
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if isinstance(schema, dict):
            yield version["name"], schema


def strict_schemas(crd_dir: Path, out: Path) -> list[Path]:
    """Write a strict JSON schema for every version of every CRD in ``crd_dir`` under ``out``."""
    written = []
    for path in sorted(crd_dir.glob("*.yaml")):
        for crd in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version, schema in _versions(crd):
                target = out / group / f"{kind.lower()}_{version}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(_closed(copy.deepcopy(schema), root=True), indent=1))
                written.append(target)
    return written


def command(executable: Path, schemas: Path, paths: list[Path], workers: int | None = None) -> list[str]:
    """kubeconform on ``paths`` with only these schemas, strict YAML (duplicate keys are errors), a summary."""
    argv = [str(executable), "-strict", "-summary", "-schema-location", str(schemas / LOCATION)]
    if workers is not None:
        argv += ["-n", str(workers)]
    return [*argv, *map(str, paths)]


def summary(stdout: str) -> dict[str, int] | None:
    """kubeconform's summary line as numbers: resources, valid, invalid, errors, skipped."""
    found = _SUMMARY.search(stdout)
    if found is None:
        return None
    return dict(zip(("resources", "valid", "invalid", "errors", "skipped"), map(int, found.groups()), strict=True))
