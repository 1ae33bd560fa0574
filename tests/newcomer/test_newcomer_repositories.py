"""A newcomer's first runs: a fresh repository of their own in a temporary directory outside the
project, the installed ``karpenter-gitops`` console script run from inside it as they would type it.
Each run is judged as they see it: its exit code, the first line it prints, and never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

pytestmark = pytest.mark.packaging

SCRIPT = Path(sys.executable).with_name("karpenter-gitops")
CLASS = yaml.safe_dump(dict(BASE_NODECLASS))
POOL = yaml.safe_dump(dict(BASE_NODEPOOL))
HELM_TEMPLATE = (
    "{{- if .Values.enabled }}\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {{ .Values.name }}\n{{- end }}\n"
)
DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n"


def karpenter_gitops(
    cwd: Path, *argv: str, stdin: str | None = None, aws: dict[str, str] | None = None, path: Path | None = None
) -> tuple[int, str, str]:
    """The console script run in ``cwd`` with a user's plain environment (no colour, no AWS settings but ``aws``;
    ``path``, a folder of their programs, first on PATH)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("AWS_", "KARPENTER_GITOPS_"))}
    env |= {"NO_COLOR": "1", "COLUMNS": "120"} | (aws or {})
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([str(SCRIPT), *argv], cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done.returncode, done.stdout, done.stderr


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


@pytest.fixture
def repository(tmp_path) -> Path:
    """A user's infra repository kept under a dot-directory (``~/.ws/infra``): Git, the Karpenter
    manifests in their own folder, a Helm chart and the app's manifests beside them."""
    root = tmp_path / ".ws" / "infra"
    assert PROJECT not in root.parents and not root.is_relative_to(PROJECT)
    (root / "karpenter").mkdir(parents=True)
    (root / "karpenter" / "nodeclass.yaml").write_text(CLASS)
    (root / "karpenter" / "nodepool.yml").write_text(POOL)
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "templates" / "nodepool.yaml").write_text(HELM_TEMPLATE)
    (root / "chart" / "values.yaml").write_text("enabled: true\nname: general\n")
    (root / "apps").mkdir()
    (root / "apps" / "web.yaml").write_text(DEPLOYMENT)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_script_is_the_installed_one():
    assert SCRIPT.is_file(), f"{SCRIPT}: run make .venv/.installed"


def test_validate_a_folder_of_a_repository_under_a_dot_directory(repository):
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter")
    assert (code, first_line(out)) == (0, "2 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)")


def test_validate_the_whole_repository_skips_the_chart_and_counts_it(repository):
    code, out, err = karpenter_gitops(repository, "validate", ".")
    assert code == 0
    assert out.splitlines()[-1].endswith("; 2 file(s) skipped (not Kubernetes YAML)")
    assert "chart/templates/nodepool.yaml: a template" in err and "chart/values.yaml" in err


def test_validate_a_sibling_folder_through_dot_dot(repository):
    code, out, _ = karpenter_gitops(repository / "apps", "validate", "../karpenter")
    assert (code, first_line(out)) == (0, "2 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)")


def test_a_rendered_stream_piped_to_dash(repository):
    code, out, _ = karpenter_gitops(repository, "validate", "-", stdin=f"{CLASS}---\n{POOL}---\n{DEPLOYMENT}")
    assert (code, first_line(out)) == (0, "2 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)")


def test_a_broken_manifest_on_stdin_names_stdin(repository):
    code, out, err = karpenter_gitops(repository, "validate", "-", stdin="apiVersion: karpenter.sh/v1\nkind: NodePool\nspec: [\n")
    assert (code, out) == (2, "")
    assert first_line(err).startswith("karpenter-gitops: error: <stdin>:")


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_the_wrong_folder_fails_loudly_in_every_format(repository, fmt):
    code, out, err = karpenter_gitops(repository, "validate", "apps", "--format", fmt)
    assert (code, out) == (2, "")
    assert first_line(err).startswith("karpenter-gitops: error: no Karpenter object found in 1 file(s), so nothing was checked")


def test_a_pre_commit_run_on_a_commit_without_karpenter_objects(repository):
    code, out, _ = karpenter_gitops(repository, "validate", "--policy", "--allow-empty", "apps/web.yaml", "chart/values.yaml")
    assert (code, first_line(out)) == (0, "active waivers: 0")
    assert out.splitlines()[-1].startswith("0 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)")


def test_a_misspelt_kind_fails_with_a_did_you_mean(repository):
    (repository / "karpenter" / "nodepool.yml").write_text(POOL.replace("kind: NodePool", "kind: Nodepool"))
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter")
    assert code == 1 and first_line(out).startswith("NodePool/general")
    assert "did you mean 'NodePool'?" in out


def test_an_old_provisioner_gets_the_migration(repository):
    (repository / "karpenter" / "provisioner.yaml").write_text(
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: default}\nspec: {ttlSecondsAfterEmpty: 30}\n"
    )
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter")
    assert code == 1 and first_line(out).startswith("NodePool/default")
    assert "ttlSecondsAfterEmpty → disruption.consolidationPolicy: WhenEmpty" in out


def test_an_unknown_feature_gate_lists_the_known_ones(repository):
    code, out, err = karpenter_gitops(repository, "validate", "karpenter", "--feature-gates", "Foo=true")
    assert (code, out) == (2, "")
    assert first_line(err).startswith("karpenter-gitops: error: --feature-gates: 'Foo' is not a feature gate of Karpenter 1.15")


def test_render_to_stdout_from_a_path_argument(repository):
    code, out, _ = karpenter_gitops(repository, "render", "karpenter", "--out", "-")
    assert code == 0 and out.splitlines()[0] == "---"
    assert out.splitlines()[2] == "apiVersion: karpenter.k8s.aws/v1"


def test_plan_blocks_a_pool_that_can_launch_nothing(repository):
    pool = yaml.safe_load(POOL)
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["zz9", "qq1"]}
    )
    (repository / "karpenter" / "nodepool.yml").write_text(yaml.safe_dump(pool))
    code, out, _ = karpenter_gitops(repository, "plan", "karpenter", "--embedded-aws")
    assert code == 1
    assert "no instance type allowed: no instance type satisfies karpenter.k8s.aws/instance-family In [qq1, zz9]" in out
    assert "[live/pool-launches-nothing]" in out and out.splitlines()[-1].endswith("persistent problems")


# --- the AWS environment as users get it wrong: one line naming the setting, exit 2 --------------------------


@pytest.fixture
def aws_home(tmp_path) -> Path:
    """A home of the user's own whose ~/.aws holds one working-looking profile and an expired SSO login."""
    home = tmp_path / "home"
    (home / ".aws" / "sso" / "cache").mkdir(parents=True)
    (home / ".aws" / "config").write_text(
        "[profile team]\nregion = us-west-2\n\n[profile sso-dev]\nsso_start_url = https://example.awsapps.com/start\n"
        "sso_region = us-east-1\nsso_account_id = 111122223333\nsso_role_name = Admin\nregion = us-west-2\n"
    )
    token = hashlib.sha1(b"https://example.awsapps.com/start").hexdigest()  # botocore's cache key for the start URL
    (home / ".aws" / "sso" / "cache" / f"{token}.json").write_text(
        json.dumps(
            {
                "startUrl": "https://example.awsapps.com/start",
                "region": "us-east-1",
                "accessToken": "expired",
                "expiresAt": "2020-01-01T00:00:00Z",
            }
        )
    )
    return home


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ({"AWS_PROFILE": "tema"}, "the AWS profile 'tema' is in neither the AWS config nor the credentials file"),
        ({"AWS_CONFIG_FILE": "broken.ini"}, "the AWS config file broken.ini does not parse"),
        (
            {"AWS_SHARED_CREDENTIALS_FILE": "broken.ini", "AWS_REGION": "us-east-1"},
            "the AWS config file broken.ini does not parse",
        ),
        ({"AWS_PROFILE": "sso-dev"}, "The SSO session associated with this profile has expired"),
        ({"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x"}, "no AWS region"),
    ],
)
def test_a_wrong_aws_environment_is_one_line_naming_the_setting(repository, aws_home, setting, said):
    (repository / "broken.ini").write_text("[default\nregion = us-east-1\n")
    code, out, err = karpenter_gitops(
        repository, "plan", "--manifests", "karpenter", "--kubernetes-version", "1.32", aws={"HOME": str(aws_home), **setting}
    )
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"karpenter-gitops: error: {said}") and "(hint: " in err, err


# --- what a newcomer's files hold: older APIs, templates, upstream examples, several mistakes at once ---------


def test_karpenter_1_0_still_serves_v1beta1_so_the_object_is_a_warning_there_and_an_error_from_1_1(repository):
    (repository / "karpenter" / "nodepool.yml").write_text(
        POOL.replace("apiVersion: karpenter.sh/v1", "apiVersion: karpenter.sh/v1beta1")
    )
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--karpenter-version", "1.0")
    assert code == 0 and "Karpenter 1.0 still serves it beside 'karpenter.sh/v1'" in out and "not checked" in out
    assert "is not served" not in out
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--karpenter-version", "1.1")
    assert code == 1 and "apiVersion 'karpenter.sh/v1beta1' is not served for NodePool" in out


BLUEPRINT = CLASS.replace("role: KarpenterNodeRole-demo", "role: ${KARPENTER_NODE_IAM_ROLE_NAME}").replace(
    "karpenter.sh/discovery: demo", "karpenter.sh/discovery: ${CLUSTER_NAME}"
)


def test_an_unrendered_blueprint_is_said_once_and_never_looked_up(repository):
    (repository / "karpenter" / "nodeclass.yaml").write_text(BLUEPRINT)
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter")
    assert code == 0 and out.count("not rendered: '${KARPENTER_NODE_IAM_ROLE_NAME}'") == 1, out
    assert (
        "render with envsubst/terraform/helm first" in out
        and "envsubst < karpenter/nodeclass.yaml | karpenter-gitops validate -" in out
    )
    code, out, err = karpenter_gitops(repository, "plan", "karpenter", "--embedded-aws")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith("karpenter-gitops: error: karpenter/nodeclass.yaml: not rendered: EC2NodeClass/default spec.role")
    assert "does not exist" not in err


WINDOWS_POOL = POOL.replace(
    "group: karpenter.k8s.aws", "group: karpenter.k8s.aws/v1"
)  # Karpenter's windows-custom-userdata example


def test_an_upstream_examples_one_mistake_is_one_finding(repository):
    (repository / "karpenter" / "nodepool.yml").write_text(WINDOWS_POOL)
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--format", "json")
    findings = json.loads(out)["findings"]
    assert code == 1 and [(f["rule"], f["path"]) for f in findings] == [
        ("schema/pattern", "spec.template.spec.nodeClassRef.group")
    ]
    assert findings[0]["hint"] == "drop the version: group takes no '/v1'"


def test_the_blueprints_discovery_tag_on_nodes_is_no_policy_warning(repository):
    tagged = yaml.safe_load(CLASS)
    tagged["spec"]["tags"] = {"karpenter.sh/discovery": "demo"}
    (repository / "karpenter" / "nodeclass.yaml").write_text(yaml.safe_dump(tagged))
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--policy")
    assert "reserved-tag-domain" not in out, out


def test_a_missing_field_hides_no_other_mistake_of_the_object(repository):
    broken = yaml.safe_load(CLASS)
    del broken["spec"]["securityGroupSelectorTerms"]
    broken["spec"]["metadataOptions"] = {"httpPutResponseHopLimit": 2}
    broken["spec"]["amiSelectorTerms"] = [{"alias": "bottlerocket@v1.19.0"}]
    broken["spec"]["userData"] = "[settings.kubernetes]\nsingle-process-oom-kill = true\nmax-pod = 110\n"
    (repository / "karpenter" / "nodeclass.yaml").write_text(yaml.safe_dump(broken))
    code, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--policy", "--format", "json")
    rules = {f["rule"] for f in json.loads(out)["findings"]}
    assert code == 1
    assert {
        "schema/required",
        "policy/imds-hop-limit",
        "userdata/bottlerocket-release-setting",
        "userdata/bottlerocket-unknown-setting",
    } <= rules


def test_a_byte_order_mark_opening_a_later_document_reads_as_kubectl_reads_it(repository):
    """Files joined by ``cat``, one saved by an editor that writes a BOM: the stream is read, from a file and stdin."""
    stream = f"{CLASS}---\n\ufeff{POOL.replace('operator: In', 'operator: Inn')}"
    (repository / "karpenter" / "joined.yaml").write_text(stream, encoding="utf-8")
    for argv, stdin in ((("validate", "karpenter/joined.yaml"), None), (("validate", "-"), stream)):
        code, out, err = karpenter_gitops(repository, *argv, stdin=stdin)
        assert code == 1 and "Inn" in out and "2 object(s) checked" in out, err
