"""The false-alarm corpus: maintained public Karpenter manifests, judged one file at a time as a PR would.

Run by hand: ``.venv/bin/python benchmarks/corpus.py [--mirror DIR] [--verbose]``. The manifests are
not in this repository (they are other projects' work): ``benchmarks/corpus.yaml`` lists each one
by repository, commit and path, with what a reviewer expects of it. The script reads them from
local git mirrors (``DIR/<owner>+<name>/repo``, a bare clone; default: ``../.mirror`` beside the
project), validates each file on its own, and again with ``--policy``, and prints:

* per file, the error and warning findings (``--verbose``), and any difference from what is expected;
* the totals: files, objects, files with errors (expected true positives vs false alarms), and
  the ``--policy`` warnings by rule.

Exit 0 when every file gives exactly its expected errors; 1 otherwise (a false alarm or a missed
mistake); 2 when a listed repository is not mirrored (the message says how to fetch it).
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from karpenter_gitops.app.validate import judged
from karpenter_gitops.app.validate_pipeline import Judging
from karpenter_gitops.app.validate_strategies import Run
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity

PROJECT = Path(__file__).resolve().parents[1]
LIST = PROJECT / "benchmarks" / "corpus.yaml"


def git_dir(mirror: Path, repo: str) -> Path:
    for candidate in (mirror / repo.replace("/", "+") / "repo", mirror / repo.replace("/", "+") / ".git"):
        if candidate.exists():
            return candidate
    print(
        f"corpus: {repo} is not mirrored under {mirror}; clone it there, e.g. "
        f"git clone --bare https://github.com/{repo} {mirror / repo.replace('/', '+') / 'repo'}",
        file=sys.stderr,
    )
    raise SystemExit(2)


def text_of(mirror: Path, source: dict) -> str:
    git = git_dir(mirror, source["repo"])
    spec = f"{source['commit']}:{source['path']}"
    return subprocess.run(["git", "--git-dir", str(git), "show", spec], check=True, capture_output=True, text=True).stdout


def judge(path: Path, policy: bool) -> tuple[int, list]:
    try:
        report = judged(Run((path,)), Judging(policy=policy), allow_empty=True).report
    except InputError as error:
        return 0, [("input", Severity.ERROR, str(error))]
    return report.objects, [(f.rule, f.severity, f.message) for f in report.findings]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=PROJECT.parent / ".mirror")
    parser.add_argument("--list", type=Path, default=LIST, help="the source list (default: benchmarks/corpus.yaml)")
    parser.add_argument("--verbose", action="store_true", help="list every file's findings")
    args = parser.parse_args()
    sources = yaml.safe_load(args.list.read_text())["sources"]
    totals = collections.Counter()
    policy_warnings: collections.Counter = collections.Counter()
    mismatches = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, source in enumerate(sources):
            path = Path(tmp) / f"{index:03}-{Path(source['path']).name}"
            path.write_text(text_of(args.mirror, source))
            objects, found = judge(path, policy=False)
            errors = sorted({rule for rule, severity, _ in found if severity is Severity.ERROR})
            expected = sorted(source.get("errors", []))
            totals["files"] += 1
            totals["objects"] += objects
            totals["files with expected errors"] += bool(expected)
            if errors != expected:
                mismatches.append(f"{source['repo']} {source['path']}: errors {errors}, expected {expected}")
            _, with_policy = judge(path, policy=True)
            policy_warnings.update(rule for rule, severity, _ in with_policy if severity is Severity.WARNING)
            if args.verbose:
                print(f"{source['repo']} {source['path']}")
                for rule, severity, message in found:
                    if severity is not Severity.INFO:
                        print(f"  {severity.value:<7} {rule}: {message}")
    print(f"files: {totals['files']}, objects: {totals['objects']}")
    print(f"files with errors a reviewer agrees with (true positives): {totals['files with expected errors']}")
    print(f"false alarms or missed mistakes: {len(mismatches)}")
    for line in mismatches:
        print(f"  {line}")
    print("--policy warnings by rule:")
    for rule, count in sorted(policy_warnings.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:4} {rule}")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
