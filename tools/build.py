"""Build the real Pulumi (CLI, Python and YAML hosts), Kubernetes, etcd, cel-go, kustomize, Karpenter-oracle and Karpenter controller binaries from our Go modules (``make tools``).

Each folder beside this file is one Go module of ours for one tool family, so their requirements
never meet (minimal version selection would upgrade one family's dependencies for another's sake).
A family's binaries are built once per content of its go.mod, go.sum and Go sources (and of the
folders it shares source with), the Go version and the build flags, into a cache outside the clone;
``.tools/bin`` holds links into it. A second clone on the same machine, or a second run, builds
nothing. Standard library only: this runs before any virtualenv exists.

Karpenter 1.14.3 and 1.15.0 need a newer Go than the machine's 1.26.8: their families build with
``GOTOOLCHAIN=go1.27.3``, which the go command fetches from the module proxy once (about 76 MB). The
1.9 oracle builds with it too, though its Go would do: a toolchain shares no compiled package with
another, and with the same one it reuses up to 137 packages it has at the same module versions as
1.14 and 1.15. The other families build with the machine's own Go, so the caches of a machine that
built them stay valid (they share no module version with Karpenter's: one toolchain for all would
only rebuild them).

A family a benchmark alone needs (kubectl-validate, the peer ``validate --crd`` is timed against) is
built on demand: ``make tools`` leaves it out, keeping the link of a build already cached, and
``tools/build.py kubectl-validate`` (what the benchmark runs) builds that family alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
BIN = TOOLS.parent / ".tools" / "bin"
# Two compiler settings that cut a cold build's CPU; the tests wait on these binaries rather than on
# their CPU (figures in docs/project/benchmarks.md). No inlining (-l): the costliest step for the
# generated API clients these tools carry (the AWS SDK's S3 client takes 44 s of CPU with it, 12.5 s
# without) and about a quarter of the Pulumi CLI's; the code is the same, calls are only not folded
# into their callers. No DWARF (-dwarf=false, and -w for the linker): debugger tables take up to another
# sixth of a generated package's compile (little elsewhere) and part of every link; panics still
# print file and line.
BUILD_FLAGS = ("-trimpath", "-tags", "osusergo,grpcnotrace", "-gcflags=all=-l -dwarf=false")
# A peer a benchmark times is built with inlining, as its release is: without it kubectl-validate
# takes 1.75 times the CPU to judge the same objects.
PEER_BUILD_FLAGS = ("-trimpath", "-tags", "osusergo,grpcnotrace", "-gcflags=all=-dwarf=false")
LINK_FLAGS = ("-w",)
# The approved newer toolchain the module proxy serves (a family that needs it says so).
NEWER_GO = "go1.27.3"
MACHINE_GO = "local"


@dataclass(frozen=True)
class Binary:
    """One executable: its name in .tools/bin and the main package it is built from."""

    name: str
    package: str


@dataclass(frozen=True)
class Family:
    """The binaries one go.mod of ours builds, plus files they need beside them."""

    folder: str
    binaries: tuple[Binary, ...]
    # -X settings the binaries report their versions by. The family links in one go command, so they
    # apply to each binary; the linker ignores a setting for a package a binary does not contain.
    version_flags: tuple[str, ...] = ()
    # (module, path inside it) copied beside the binaries with mode 0755: module zips keep no modes.
    module_files: tuple[tuple[str, str], ...] = ()
    # Files our sources embed, generated from a module's files before the build.
    generate: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    toolchain: str = MACHINE_GO  # GOTOOLCHAIN for every go command run in the family's folder
    # Folders of ours whose Go source the family's module replaces a requirement with (part of its key).
    shares: tuple[str, ...] = ()
    # A benchmark's peer: built only when named (module docstring), and with PEER_BUILD_FLAGS.
    on_demand: bool = False

    @property
    def build_flags(self) -> tuple[str, ...]:
        return PEER_BUILD_FLAGS if self.on_demand else BUILD_FLAGS

    @property
    def packages(self) -> list[str]:
        """The binaries' main packages, in the binaries' order."""
        return [binary.package for binary in self.binaries]


def _module_version(folder: Path, module: str, toolchain: str = MACHINE_GO) -> str:
    return _go(folder, "list", "-m", "-f", "{{.Version}}", module, toolchain=toolchain).strip()


def _module_dir(folder: Path, module: str) -> Path:
    """The module's files in the module cache, downloaded first: on a cold cache `go list` has no Dir yet."""
    return Path(json.loads(_go(folder, "mod", "download", "-json", module))["Dir"])


def _environment(toolchain: str) -> dict[str, str]:
    return {**os.environ, "GOTOOLCHAIN": toolchain}


def _go(folder: Path, *args: str, toolchain: str = MACHINE_GO) -> str:
    return subprocess.run(
        ("go", *args), cwd=folder, check=True, capture_output=True, text=True, env=_environment(toolchain)
    ).stdout


PULUMI_PKG = "github.com/pulumi/pulumi/pkg/v3"
PULUMI_SDK = "github.com/pulumi/pulumi/sdk/v3"
K8S_PROVIDER = "github.com/pulumi/pulumi-kubernetes/provider/v4"
PULUMI_YAML = "github.com/pulumi/pulumi-yaml"
KARPENTER_AWS = "github.com/aws/karpenter-provider-aws"
KARPENTER_CORE = "sigs.k8s.io/karpenter"
KUSTOMIZE = "sigs.k8s.io/kustomize/kustomize/v5"
KUBECTL_VALIDATE = "sigs.k8s.io/kubectl-validate"
# The provider module has no tags of its own; the one commit the module proxy serves is tag v4.25.0.
K8S_PROVIDER_RELEASE = "4.25.0"


def families() -> list[Family]:
    """The tool families, with versions read from their go.mod files."""
    pulumi, kube, cel = TOOLS / "pulumi", TOOLS / "kube", TOOLS / "cel"
    cli = _module_version(pulumi, PULUMI_PKG)
    yaml_host = _module_version(pulumi, PULUMI_YAML)
    k8s = _module_version(kube, "k8s.io/kubernetes")
    major, minor = k8s.lstrip("v").split(".")[:2]
    k8s_flags = tuple(
        f"-X k8s.io/component-base/version.{name}={value}"
        for name, value in (("gitVersion", k8s), ("gitMajor", major), ("gitMinor", minor), ("gitTreeState", "clean"))
    )
    return [
        # The CLI and the Python and YAML language hosts in one module: the YAML host's release builds
        # with the CLI's pkg/v3 (docs/project/real-tools.md), so the hosts reuse the packages the CLI
        # compiles instead of a second Pulumi at another version.
        Family(
            "pulumi",
            (
                Binary("pulumi", f"{PULUMI_PKG}/cmd/pulumi"),
                Binary("pulumi-language-python", "./cmd/pulumi-language-python"),
                Binary("pulumi-language-yaml", f"{PULUMI_YAML}/cmd/pulumi-language-yaml"),
            ),
            version_flags=(
                f"-X {PULUMI_SDK}/go/common/version.Version={cli}",
                f"-X {PULUMI_YAML}/pkg/version.Version={yaml_host}",
            ),
            module_files=(
                (PULUMI_SDK, "python/cmd/pulumi-language-python-exec"),
                (PULUMI_SDK, "python/dist/pulumi-resource-pulumi-python"),
            ),
            versions={"pulumi": cli, "pulumi-language-yaml": yaml_host},
        ),
        Family(
            "pulumi-kubernetes",
            (Binary("pulumi-resource-kubernetes", "./cmd/pulumi-resource-kubernetes"),),
            version_flags=(f"-X {K8S_PROVIDER}/pkg/version.Version={K8S_PROVIDER_RELEASE}",),
            generate="kubernetes-schema",
            versions={"pulumi-resource-kubernetes": K8S_PROVIDER_RELEASE},
        ),
        Family(
            "kube",
            (
                Binary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
                # Kubernetes' garbage collector (it finishes the Kubernetes provider's foreground
                # deletions) and namespace controller, without the rest of kube-controller-manager.
                Binary("kube-controllers", "./controllers"),
                Binary("etcd", "go.etcd.io/etcd/server/v3"),
            ),
            version_flags=k8s_flags,
            versions={"kube-apiserver": k8s, "kube-controllers": k8s, "etcd": _module_version(kube, "go.etcd.io/etcd/server/v3")},
        ),
        # cel-go at the version Karpenter 1.15 pins, in Karpenter's kubelet-expression environment (differential tests).
        Family("cel", (Binary("kubelet-cel", "."),), versions={"kubelet-cel": _module_version(cel, "github.com/google/cel-go")}),
        *karpenter_families(),
        # Karpenter 1.15's provisioning scheduler on a JSON world, for the simulation's differential tests (tests/support/scheduler.py).
        Family(
            "karpenter-scheduler",
            (Binary("karpenter-scheduler", "."),),
            versions={"karpenter-scheduler": _module_version(TOOLS / "karpenter-scheduler", KARPENTER_AWS, NEWER_GO)},
            toolchain=NEWER_GO,
        ),
        # The kustomize CLI, for the tests of `validate --kustomize` (a user's pipeline renders with it or kubectl).
        Family(
            "kustomize",
            (Binary("kustomize", KUSTOMIZE),),
            versions={"kustomize": _module_version(TOOLS / "kustomize", KUSTOMIZE)},
        ),
        # kubectl-validate, the offline validator on the API server's code and local CRDs, for
        # benchmarks/validate_side_by_side.py only (minutes of build no test needs).
        Family(
            "kubectl-validate",
            (Binary("kubectl-validate", KUBECTL_VALIDATE),),
            versions={"kubectl-validate": _module_version(TOOLS / "kubectl-validate", KUBECTL_VALIDATE)},
            on_demand=True,
        ),
    ]


# Karpenter releases built whole (provider and core of one release): the controller, and the oracle
# in the same module so it reuses the controller's compiled packages.
KARPENTER_RELEASES = ("1.15", "1.14")
# Releases judged by core code alone: only the core module of the 1.9 line is served.
CORE_RELEASES = ("1.9",)


def karpenter_families() -> list[Family]:
    """One family per Karpenter release, each a module of ours pinning that release's modules."""
    out = []
    for release in KARPENTER_RELEASES:
        folder = TOOLS / f"karpenter-{release}"
        provider = _module_version(folder, KARPENTER_AWS, NEWER_GO)
        core = _module_version(folder, KARPENTER_CORE, NEWER_GO)
        out.append(
            Family(
                folder.name,
                (
                    Binary(f"karpenter-controller-{release}", f"{KARPENTER_AWS}/cmd/controller"),
                    Binary(f"karpenter-oracle-{release}", "./oracle"),
                ),
                version_flags=(f"-X {KARPENTER_CORE}/pkg/operator.Version={provider.lstrip('v')}",),
                versions={
                    f"karpenter-controller-{release}": provider,
                    f"karpenter-oracle-{release}": provider,
                    f"karpenter-core-{release}": core,
                },
                toolchain=NEWER_GO,
                shares=("karpenter-oracle",),
            )
        )
    for release in CORE_RELEASES:
        folder = TOOLS / f"karpenter-{release}"
        out.append(
            Family(
                folder.name,
                (Binary(f"karpenter-oracle-{release}", "./oracle"),),
                versions={f"karpenter-oracle-{release}": _module_version(folder, KARPENTER_CORE, NEWER_GO)},
                toolchain=NEWER_GO,  # to reuse what the 1.14 and 1.15 families compiled (module docstring)
                shares=("karpenter-oracle",),
            )
        )
    return out


def _write_kubernetes_schema(folder: Path) -> None:
    """The two files the provider embeds, as its Makefile's generate step makes them."""
    source = _module_dir(folder, K8S_PROVIDER) / "cmd" / "pulumi-resource-kubernetes"
    target = folder / "cmd" / "pulumi-resource-kubernetes"
    schema = json.loads((source / "schema.json").read_text())
    schema["version"] = K8S_PROVIDER_RELEASE
    (target / "schema-embed.json").write_text(json.dumps(schema, separators=(",", ":")))
    mapping = json.loads((source / "terraform-mapping.json").read_text())
    (target / "terraform-mapping-embed.json").write_text(json.dumps(mapping, separators=(",", ":")))


GENERATORS = {"kubernetes-schema": _write_kubernetes_schema}


def cache_root() -> Path:
    configured = os.environ.get("KARPENTER_GITOPS_TOOLS_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "karpenter-gitops" / "tools"


def cache_key(family: Family) -> str:
    """What decides the binaries: our module's files, the Go toolchain and the build flags."""
    folder = TOOLS / family.folder
    digest = hashlib.sha256()
    # the family's own files by their path in its folder, shared ones by their path in tools/
    for root, base in ((folder, folder), *((TOOLS / shared, TOOLS) for shared in family.shares)):
        sources = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in {".go", ".mod", ".sum"})
        for path in sources:
            digest.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(_go(folder, "env", "GOVERSION", "GOOS", "GOARCH", toolchain=family.toolchain).encode())
    digest.update(repr((family.build_flags, LINK_FLAGS, family.binaries, family.version_flags, family.module_files)).encode())
    version = "-".join(v.lstrip("v") for v in family.versions.values())
    return f"{family.folder}-{version}-{digest.hexdigest()[:12]}"


def cached_folder(family: Family) -> Path:
    """Where the family's binaries are, or will be once built."""
    return cache_root() / cache_key(family)


def _download(families: list[Family]) -> None:
    """Fetch the modules of the families still to build while the first of them compiles: on a cold
    machine each family would otherwise begin with a minute of downloading and unzipping while a core
    waits. Listing the binaries' packages fetches just the modules the build reads (``go mod download``
    would fetch test-only ones too); a failure here is left to that family's build, which reports it."""
    for family in families:
        subprocess.run(
            ("go", "list", "-e", "-deps", "-f", "{{.ImportPath}}", *family.packages),
            cwd=TOOLS / family.folder,
            env=_environment(family.toolchain),
            capture_output=True,
            check=False,
        )


def build(family: Family, target: Path, log) -> Path:
    """The family's cached folder ``target``, building it first when it is not there yet."""
    if target.is_dir():
        log(f"{family.folder}: cached in {target}")
        return target
    folder = TOOLS / family.folder
    if family.generate:
        GENERATORS[family.generate](folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{family.folder}-", dir=target.parent))
    staging.chmod(0o755)
    started, cpu = time.monotonic(), _children_cpu()
    try:
        # The compiler collects garbage at GOGC=400 unless you set GOGC: 10-25 % less CPU on each package
        # measured, for about half as much memory again. The binaries are the same, so the cache key
        # leaves it out.
        environment = {"GOGC": "400", **_environment(family.toolchain), "CGO_ENABLED": "0"}
        packages = family.packages
        log(f"{family.folder}: building {', '.join(b.name for b in family.binaries)} (first build of a family takes minutes)")
        # One go command for the family's binaries, so one links while the next one's packages compile.
        subprocess.run(
            [
                "go",
                "build",
                *family.build_flags,
                "-ldflags",
                " ".join((*LINK_FLAGS, *family.version_flags)),
                "-o",
                f"{staging}{os.sep}",
                *packages,
            ],
            cwd=folder,
            env=environment,
            check=True,
        )
        # Each executable is named after its package (its Target's file name); .tools/bin names it ours.
        built = _go(folder, "list", "-f", "{{.Target}}", *packages, toolchain=family.toolchain).splitlines()
        for binary, target_path in zip(family.binaries, built, strict=True):
            (staging / Path(target_path).name).rename(staging / binary.name)
        for module, path in family.module_files:
            copy = staging / Path(path).name
            shutil.copyfile(_module_dir(folder, module) / path, copy)
            copy.chmod(0o755)
        staging.rename(target)  # whole or not at all: a killed build leaves only a staging folder
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"{family.folder}: built in {_spent(started, cpu)} ({family.toolchain} toolchain)")
    return target


def _spent(started: float, cpu: float) -> str:
    """Wall time and the go commands' CPU time since ``started`` and ``cpu`` were taken."""
    minutes, seconds = divmod(round(time.monotonic() - started), 60)
    return f"{minutes} min {seconds} s, {_children_cpu() - cpu:.0f} s of CPU"


def _children_cpu() -> float:
    """CPU seconds of the go commands run so far (on a shared machine the honest figure beside wall time)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def link(folders: list[Path], prune: bool = True) -> None:
    """Point .tools/bin at the cached binaries (links, so the cache stays the one copy); with ``prune``,
    links into the cache that no family makes any more (a binary renamed or dropped) go."""
    BIN.mkdir(parents=True, exist_ok=True)
    made = set()
    for folder in folders:
        for source in folder.iterdir():
            entry = BIN / source.name
            if entry.is_symlink() or entry.exists():
                entry.unlink()
            entry.symlink_to(source)
            made.add(entry.name)
    for entry in BIN.iterdir() if prune else ():
        if entry.is_symlink() and entry.name not in made and Path(os.readlink(entry)).is_relative_to(cache_root()):
            entry.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", action="store_true", help="print the versions the binaries report, as JSON")
    parser.add_argument(
        "only", nargs="*", metavar="FAMILY", help="build only these families (folders under tools/), on-demand ones included"
    )
    args = parser.parse_args(argv)
    started, cpu = time.monotonic(), _children_cpu()
    if shutil.which("go") is None:
        print("make tools: Go is not installed (the real binaries are built from Go modules); install Go 1.26", file=sys.stderr)
        return 2
    every = families()
    unknown = set(args.only) - {family.folder for family in every}
    if unknown:
        print(f"make tools: no family {', '.join(sorted(unknown))} under {TOOLS}", file=sys.stderr)
        return 2
    chosen = [f for f in every if f.folder in args.only or not (args.only or f.on_demand)]
    if args.versions:
        print(json.dumps({name: v for f in chosen for name, v in f.versions.items()}, indent=2))
        return 0
    targets = [(family, cached_folder(family)) for family in chosen]
    # make tools keeps the links of on-demand families built before, so its pruning leaves them
    kept = [] if args.only else [folder for f in every if f.on_demand and (folder := cached_folder(f)).is_dir()]
    downloads = threading.Thread(target=_download, args=([family for family, target in targets if not target.is_dir()],))
    downloads.start()
    try:
        built = [build(family, target, lambda line: print(line, file=sys.stderr)) for family, target in targets]
        link(built + kept, prune=not args.only)
    except subprocess.CalledProcessError as failure:
        print(
            f"make tools: {' '.join(map(str, failure.cmd[:3]))} failed (exit {failure.returncode}); see the output above",
            file=sys.stderr,
        )
        return 1
    finally:
        downloads.join()
    print(f"make tools: binaries in {BIN} ({_spent(started, cpu)})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
