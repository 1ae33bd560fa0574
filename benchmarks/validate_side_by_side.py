"""Benchmark: `validate` side by side with kubeconform and kubectl-validate on the same generated Karpenter objects, in one run.

Run by hand: ``.venv/bin/python benchmarks/validate_side_by_side.py [--sizes 10000] [--rounds 3]``; for the
figures compared with kubeconform, with the Python of a regular install, as users run it (``python3 -m venv
/tmp/kg && /tmp/kg/bin/pip install .``, then ``/tmp/kg/bin/python benchmarks/...``): the run prints which
install it timed, and an editable one adds its import hook to every start.
It writes realistic objects (``harness/objects.py``: half EC2NodeClasses, half NodePools, all
valid) as multi-document files of 1,000 objects, then runs every side on that folder as a whole
process, in turns, ``--rounds`` times; each figure is the median round (wall and CPU seconds), each
peak RSS that process's own (``harness/measure.py``):

* ``kubeconform`` and ``kubeconform -n 1``: kubeconform v0.8.0, built from its Go module into the
  benchmarks' cache, with ``-strict`` and the release's CRDs converted to strict JSON schemas as
  CRDs-catalog converts them (``harness/kubeconform.py``); its default workers, then one.
* ``validate``: the installed console script, as a user runs it (read, parse, load, every rule), with
  ``--no-cache`` as every ``validate`` side but the next;
* ``validate, cached``: the same on the unchanged folder with the verdict cache warm (a pre-commit or CI
  re-run), the cache in the run's scratch directory, warmed once before the rounds.
* ``validate --crd``: the same with the release's CRD files (structural schema and every CEL rule).
* ``kubectl-validate``: kubectl-validate v0.0.4 (``harness/kubectl_validate.py``), the API server's own
  validation of the same CRD files, CEL rules included, built through ``tools/build.py`` on first
  use. It is slower than the other sides by more than an order of magnitude, so it has a table of
  its own: first it and ``validate --crd`` judge a small file of objects with one mistake each
  among clean ones (``harness/objects.py``) and must refuse exactly those, then both are timed on
  ``--peer-size`` objects (1,000 unless told), a folder of their own generated as above.
* ``validate --policy``: the hygiene catalogue too.
* ``schema`` and ``schema+cel``: floors in Python, PyYAML's C loader and a jsonschema validator built
  once from the CRDs' ``openAPIV3Schema``; then the same CRDs through ``validate --crd``'s engine alone.
* ``libyaml``: the floor under every Python tool, a process that only parses the same bytes with libyaml
  (``yaml.load_all`` with ``yaml.CSafeLoader``); the run prints ``validate``'s time ÷ this one's, the cost
  of everything ``validate`` does above parsing (target ≤ 2.5×).

Every side must judge every object and find nothing (the objects are valid): a side that does not
is reported and the run exits 1, since its figure would not compare; so does a run where
kubectl-validate and ``validate --crd`` refuse different objects. Targets: ``validate`` ≥ 1.5× kubeconform
with its default workers, ``validate --crd`` ≥ 1.0× kubeconform and ≥ 20× kubectl-validate. Figures go
in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml
from harness import kubeconform, kubectl_validate
from harness.measure import Run, console_script, install, run, user_environment
from harness.objects import RELEASE, object_count, write_mistakes, write_objects
from harness.upstream import release_crds

SIDES = (
    "kubeconform",
    "kubeconform -n 1",
    "validate",
    "validate, cached",
    "validate --crd",
    "kubectl-validate",
    "validate --policy",
    "schema",
    "schema+cel",
    "libyaml",
)
# (side, peer): how many times as fast as the peer the side must be
TARGETS = {
    ("validate", "kubeconform"): 1.5,
    ("validate --crd", "kubeconform"): 1.0,
    ("validate --crd", "kubectl-validate"): 20.0,
}
PEER_NAMES = {"kubeconform": "kubeconform (default workers)", "kubectl-validate": "kubectl-validate"}
FLOOR_TARGET = 2.5  # `validate` at most this many times libyaml's parse of the same bytes
# The sides each table shows every side's ratio to, with their columns' titles.
LABELS = {"kubeconform": "× kubeconform", "kubeconform -n 1": "× kc -n 1", "kubectl-validate": "× kubectl-val"}
# kubectl-validate is timed in a table of its own, beside the side it is the peer of.
PEER_SIDES = ["validate --crd", "kubectl-validate"]
CONSOLE_SCRIPT = console_script()


@dataclass(frozen=True)
class Figure:
    side: str
    seconds: float
    cpu_seconds: float
    rss_mib: float
    objects: int | None  # what the side says it judged
    errors: int | None


# --- the Python floors, each run in a child process of its own ------------------------------


def crd_schemas(crds: Path) -> dict[str, dict]:
    """The served v1 ``openAPIV3Schema`` of each kind in the release's CRDs."""
    schemas = {}
    for path in sorted(crds.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        version = next((v for v in crd["spec"]["versions"] if v["name"] == "v1"), None)
        if version is not None:
            schemas[crd["spec"]["names"]["kind"]] = version["schema"]["openAPIV3Schema"]
    return schemas


def run_schema(directory: Path, crds: Path) -> tuple[int, int]:
    from jsonschema import Draft202012Validator

    validators = {kind: Draft202012Validator(schema) for kind, schema in crd_schemas(crds).items()}
    objects = errors = 0
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            objects += 1
            errors += sum(1 for _ in validators[doc["kind"]].iter_errors(doc))
    return objects, errors


def run_schema_cel(directory: Path, crds: Path) -> tuple[int, int]:
    from karpenter_gitops.load.crds import load

    engine = load([str(crds)])
    objects = errors = 0
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            objects += 1
            errors += len(engine.check(doc).observations)
    return objects, errors


def run_libyaml(directory: Path, _crds: Path) -> tuple[int, int]:
    """Parse only: what libyaml alone takes to read the objects into Python, nothing judged."""
    objects = 0
    for path in sorted(directory.glob("*.yaml")):
        objects += sum(1 for _ in yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader))
    return objects, 0


FLOORS = {"schema": run_schema, "schema+cel": run_schema_cel, "libyaml": run_libyaml}


# --- the sides as whole processes -----------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    directory: Path  # the generated objects
    crds: Path  # the release's CRD files
    schemas: Path | None  # the strict JSON schemas kubeconform reads
    kubeconform: Path | None
    kubectl_validate: Path | None = None


def argv_of(side: str, setup: Setup) -> list[str]:
    if side.startswith("kubeconform"):
        workers = 1 if side.endswith("-n 1") else None
        return kubeconform.command(setup.kubeconform, setup.schemas, [setup.directory], workers)
    if side == "kubectl-validate":
        return kubectl_validate.command(setup.kubectl_validate, setup.crds, [setup.directory], setup.directory.parent)
    if side in FLOORS:
        return [sys.executable, __file__, "--measure", side, "--dir", str(setup.directory), "--crds", str(setup.crds)]
    options = {
        "validate": ["--no-cache"],
        "validate, cached": [],
        "validate --crd": ["--no-cache", "--crd", str(setup.crds)],
        "validate --policy": ["--no-cache", "--policy"],
    }[side]
    return [str(CONSOLE_SCRIPT), "validate", *options, "--format", "json", str(setup.directory)]


def counted(side: str, done: Run) -> tuple[int | None, int | None]:
    """(objects judged, errors found) as the side itself reports them; None where it reported nothing readable."""
    try:
        if side.startswith("kubeconform"):
            numbers = kubeconform.summary(done.stdout)
            return (numbers["resources"], numbers["invalid"] + numbers["errors"]) if numbers else (None, None)
        if side == "kubectl-validate":
            documents = [verdict for file in kubectl_validate.verdicts(done.stdout).values() for verdict in file]
            return len(documents), sum(verdict is not None for verdict in documents)
        if side in FLOORS:
            numbers = json.loads(done.stdout)
            return numbers["objects"], numbers["errors"]
        summary = json.loads(done.stdout)["summary"]
        return summary["objects"], summary["errors"]
    except (ValueError, KeyError, TypeError):
        return None, None


def measure(sides: list[str], setup: Setup, rounds: int) -> list[Figure]:
    """Each side ``rounds`` times, in turns (so a busy spell slows every side alike); the median round."""
    runs: dict[str, list[Run]] = {side: [] for side in sides}
    environment = user_environment(KARPENTER_GITOPS_VERDICT_CACHE=str(setup.directory.parent / "verdicts"))
    if "validate, cached" in sides:
        run(argv_of("validate, cached", setup), env=environment)  # warms the cache
    for _ in range(rounds):
        for side in sides:
            runs[side].append(run(argv_of(side, setup), env=environment))
    figures = []
    for side, done in runs.items():
        objects, errors = counted(side, done[-1])
        if done[-1].returncode not in (0, 1):
            print(f"  {side}: exited {done[-1].returncode}: {done[-1].stderr.strip()[-500:]}", file=sys.stderr)
        seconds, cpu_seconds, rss_mib = (
            statistics.median(getattr(r, field) for r in done) for field in ("seconds", "cpu_seconds", "rss_mib")
        )
        figures.append(Figure(side, seconds, cpu_seconds, rss_mib, objects, errors))
    return figures


def report(size: int, figures: list[Figure]) -> bool:
    """Print the table and the targets; False when a side did not judge every object cleanly."""
    by_side = {figure.side: figure for figure in figures}
    bases = [side for side in LABELS if side in by_side]
    print(f"\n{size:,} objects")
    header = "".join(f" {LABELS[side]:>13}" for side in bases)
    print(f"  {'side':<18} {'seconds':>8} {'CPU s':>7} {'objects/s':>10}{header} {'peak RSS':>9} {'judged':>8} {'errors':>7}")
    sound = True
    for figure in figures:
        ratios = "".join(f" {by_side[base].seconds / figure.seconds:>12.2f}×" for base in bases)
        judged = "?" if figure.objects is None else f"{figure.objects:,}"
        errors = "?" if figure.errors is None else str(figure.errors)
        print(
            f"  {figure.side:<18} {figure.seconds:>8.2f} {figure.cpu_seconds:>7.2f} {size / figure.seconds:>10,.0f}{ratios} "
            f"{figure.rss_mib:>5,.0f} MiB {judged:>8} {errors:>7}"
        )
        if figure.objects != size or figure.errors != 0:
            sound = False
            print(f"    ! {figure.side} did not judge all {size:,} objects cleanly: its figure does not compare")
    for (side, peer), target in TARGETS.items():
        if side in by_side and peer in by_side:
            ratio = by_side[peer].seconds / by_side[side].seconds
            cpu_ratio = by_side[peer].cpu_seconds / by_side[side].cpu_seconds
            verdict = "met" if ratio >= target else "NOT met"
            print(f"  target: {side} ≥ {target:g}× {PEER_NAMES[peer]}: {ratio:.2f}× ({cpu_ratio:.2f}× in CPU s), {verdict}")
    if "validate" in by_side and "libyaml" in by_side:
        floor, ours = by_side["libyaml"], by_side["validate"]
        ratio, cpu_ratio = ours.seconds / floor.seconds, ours.cpu_seconds / floor.cpu_seconds
        verdict = "met" if ratio <= FLOOR_TARGET else "NOT met"
        print(
            f"  target: validate ≤ {FLOOR_TARGET}× libyaml's parse of the same bytes: {ratio:.2f}× ({cpu_ratio:.2f}× in CPU s), {verdict}"
        )
    return sound


def setup_for(directory: Path, crds: Path, sides: list[str], scratch: Path) -> tuple[Setup, list[str]]:
    """Build what the chosen sides need; kubeconform's sides are left out, with the reason, when Go is missing."""
    if not any(side.startswith("kubeconform") for side in sides):
        return Setup(directory, crds, None, None), sides
    try:
        executable = kubeconform.binary(log=lambda line: print(line, file=sys.stderr))
    except kubeconform.Unavailable as why:
        print(f"kubeconform: not measured: {why}")
        return Setup(directory, crds, None, None), [side for side in sides if not side.startswith("kubeconform")]
    schemas = scratch / "schemas"
    kubeconform.strict_schemas(crds, schemas)
    return Setup(directory, crds, schemas, executable), sides


def refused(side: str, done: Run, expected: dict[tuple[str, str], bool], path: Path) -> set[tuple[str, str]] | None:
    """The (kind, name) of each object the side refused in the mistakes file; None where its report does not say."""
    try:
        if side == "kubectl-validate":
            verdicts = kubectl_validate.verdicts(done.stdout)[path.resolve()]
            if len(verdicts) != len(expected):
                return None
            return {key for key, verdict in zip(expected, verdicts, strict=True) if verdict is not None}
        findings = json.loads(done.stdout)["findings"]
        return {(finding["kind"], finding["name"]) for finding in findings if finding["severity"] == "error"}
    except (ValueError, KeyError, TypeError):
        return None


def same_verdicts(setup: Setup, folder: Path) -> bool:
    """Both peer sides refuse exactly the objects of the mistakes file that carry a mistake, and pass the rest."""
    folder.mkdir()
    path = folder / "mistakes.yaml"
    expected = write_mistakes(path)
    mistaken = {key for key, wrong in expected.items() if wrong}
    print(f"\nverdicts first: {len(expected)} objects, {len(mistaken)} with one mistake each")
    agree = True
    for side in PEER_SIDES:
        done = run(argv_of(side, Setup(folder, setup.crds, None, None, setup.kubectl_validate)), env=user_environment())
        found = refused(side, done, expected, path)
        if found is None:
            print(f"  ! {side} (exit {done.returncode}) reported no verdict per object: {done.stderr.strip()[-500:]}")
            agree = False
        elif found != mistaken:
            missed, extra = sorted(mistaken - found), sorted(found - mistaken)
            print(f"  ! {side} passed {missed} and refused {extra}: the times do not compare")
            agree = False
        else:
            print(f"  {side}: refuses those {len(found)}, passes the other {len(expected) - len(found)}")
    return agree


def compare_with_kubectl_validate(crds: Path, size: int, rounds: int, scratch: Path) -> bool:
    """kubectl-validate beside ``validate --crd`` on ``size`` objects once both refuse the same objects; False
    when they do not, or when a side does not judge every object cleanly."""
    try:
        executable = kubectl_validate.binary()
    except kubectl_validate.Unavailable as why:
        print(f"kubectl-validate: not measured: {why}")
        return True
    directory = scratch / "objects"
    directory.mkdir()
    write_objects(directory, size)
    setup = Setup(directory, crds, None, None, executable)
    if not same_verdicts(setup, scratch / "mistakes"):
        return False
    return report(size, measure(PEER_SIDES, setup, rounds))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=object_count, nargs="+", default=[10_000])
    parser.add_argument("--sides", nargs="+", choices=SIDES, default=list(SIDES))
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side; the median is shown")
    parser.add_argument(
        "--peer-size", type=object_count, default=1_000, help="objects kubectl-validate and validate --crd are timed on"
    )
    parser.add_argument("--release", default=RELEASE, help=f"the Karpenter CRDs to judge with (default {RELEASE})")
    parser.add_argument("--measure", choices=sorted(FLOORS), help=argparse.SUPPRESS)  # a child process: one floor
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--crds", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        objects, errors = FLOORS[args.measure](args.dir, args.crds)
        print(json.dumps({"objects": objects, "errors": errors}))
        return 0
    crds = release_crds(args.release)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}")
    print(f"install: {install()}")
    print(
        f"CRDs: Karpenter {args.release}; kubeconform {kubeconform.VERSION}; kubectl-validate {kubectl_validate.version()}; "
        f"median of {args.rounds} rounds"
    )
    print(
        f"load average at the start: {os.getloadavg()[0]:.1f}; under load wall times stretch, most for kubeconform's threads: read CPU s too"
    )
    sound = True
    table_sides = [side for side in args.sides if side != "kubectl-validate"]
    for size in args.sizes if table_sides else ():
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp) / "objects"
            directory.mkdir()
            write_objects(directory, size)
            setup, sides = setup_for(directory, crds, table_sides, Path(tmp))
            sound = report(size, measure(sides, setup, args.rounds)) and sound
    if "kubectl-validate" in args.sides:
        with tempfile.TemporaryDirectory() as tmp:
            sound = compare_with_kubectl_validate(crds, args.peer_size, args.rounds, Path(tmp)) and sound
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
