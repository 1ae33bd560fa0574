#!/usr/bin/env bash
# The main job on the embedded default, step by step, as a user would type it.
# Steps that are expected to find problems say so; their exit code 1 is part of the show.
set -uo pipefail
cd "$(dirname "$0")/.."
kg=".venv/bin/karpenter-gitops"

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; "${@:2}"; echo "(exit $?)"; }

step "Validate the demo stack offline" "$kg" validate --stack demo
step "Validate the example manifests (clean)" "$kg" validate examples/manifests
step "Validate manifests with real-world mistakes (expected: findings, exit 1)" "$kg" validate examples/broken
step "Plan the demo stack against the embedded AWS, and forecast what Karpenter would launch for the demo's workloads and what it costs (expected: a skipped pending AMI, unserved arm64 types, a profile without a role; exit 1; the picture in out/forecast.svg)" \
  "$kg" plan --stack demo --embedded-aws --workloads examples/workloads --picture out/forecast.svg
if [ -x .tools/bin/pulumi ]; then
  step "A real pulumi preview of the demo stack's classes and pools with the policy pack (expected: 17 to create, advisory policies; a preview checks the specs, AWS is resolved by up and by plan above)" \
    .venv/bin/python examples/pulumi_preview.py demo
else
  printf '\n== pulumi preview: skipped, the Pulumi CLI is not built here (run `make tools`, needs Go 1.26)\n'
fi
step "Propose AMI pin bumps for the pinned example stack (dry run: the file is not touched)" \
  "$kg" bump --stack pinned --embedded-aws --dry-run
rm -rf out/rendered out/base
step "Render the demo stack for Argo CD / Flux into out/rendered (one file per object, byte-stable)" \
  "$kg" render --stack demo --out out/rendered
# A base as the main branch would have it: the same objects, still on the older AL2023 release.
cp -r out/rendered out/base && sed -i 's/al2023@v20250201/al2023@v20240807/' out/base/ec2nodeclass-default.yaml
step "PR comment for that AMI bump (expected: AMIs move on NodePool general, arm64 types become launchable and the workloads' cost drops, payments blocked; exit 1)" \
  "$kg" preview --stack demo --base out/base --embedded-aws --workloads examples/workloads --full-report out/preview-full.md
exit 0
