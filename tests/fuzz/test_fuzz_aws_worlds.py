"""AWS answers are data: generated embedded worlds with hostile names, descriptions, tags, SSM values
and error messages (``support.hostile_aws``), through ``plan``, ``preview``, ``bump`` and ``verify`` in every
format. Each run keeps the front-door contract (``support.hostile.run``: no traceback, the exit codes, JSON
when JSON is asked); no control character reaches the terminal raw (they show as Python escapes,
``\\x1b``); plan's text shows every AMI name, skipped AMI and condition message its JSON holds,
as AWS holds it (markup and all); and the PR comments (``preview``, ``verify --format comment``) parse
to nothing but our own markup (``support.markdown_oracle``), within GitHub's size limit.

The commands read the world as real AWS, through the standard environment and a proxy that may
refuse one operation, so the connectivity probe and the error paths run too. Examples are few
(``AWS_WORLDS``): each one plans against AWS several times. ``KARPENTER_GITOPS_FUZZ=long`` draws more.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from hypothesis import HealthCheck, Phase, given, settings
from support.fake_kube import FakeKubernetes, kubeconfig_for
from support.hostile import run
from support.hostile_aws import RAW_CONTROL, RefusingProxy, endpoint, hostile_worlds, shows, world_text
from support.markdown_oracle import check

from karpenter_gitops.adapters.aws.embedded import embedded_aws
from karpenter_gitops.adapters.aws.embedded_world import parse_world

pytestmark = pytest.mark.slow

GITHUB_LIMIT = 65_536  # characters GitHub takes in a comment

# No shrinking: a failing example is reported as drawn (shrinking 64 KiB worlds takes many minutes).
AWS_WORLDS = settings(
    max_examples=40 if os.environ.get("KARPENTER_GITOPS_FUZZ") == "long" else 3,
    deadline=None,
    derandomize=True,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

CLASSES = [
    {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "golden"},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"tags": {"team": "payments"}}],
            "role": "KarpenterNodeRole-demo",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        },
    },
    {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "edge"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "instanceProfile": "KarpenterNodeProfile",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        },
    },
]
POOLS = [
    {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                    "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                }
            },
            "limits": {"cpu": "100", "memory": "400Gi"},
        },
    }
    for name in ("golden", "edge")
]


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    """A user's repository: the manifests, a base without the edge class and with golden on AWS's images, a pinned stack to bump."""
    root = tmp_path_factory.mktemp("aws-fuzz")
    (root / "manifests.yaml").write_text(yaml.safe_dump_all([*CLASSES, *POOLS]))
    (root / "base").mkdir()
    # the base's golden class on AWS's images: the head moves its pool onto the payments team's, hostile names and all
    base_golden = {**CLASSES[0], "spec": {**CLASSES[0]["spec"], "amiSelectorTerms": [{"alias": "al2023@latest"}]}}
    (root / "base" / "manifests.yaml").write_text(yaml.safe_dump_all([base_golden, POOLS[0]]))
    (root / "Pulumi.yaml").write_text("name: infra\nruntime: python\nstackConfigDir: stacks\n")
    (root / "stacks").mkdir()
    shutil.copy(PROJECT / "stacks" / "Pulumi.pinned.yaml", root / "stacks" / "Pulumi.pinned.yaml")
    return root


@pytest.fixture(scope="module")
def empty_cluster(repository) -> Path:
    """A fake API server holding no Karpenter object: verify compares the prediction with nothing."""
    empty = {"kind": "List", "items": []}
    routes = {
        "/apis/karpenter.k8s.aws/v1/ec2nodeclasses": empty,
        "/apis/karpenter.sh/v1/nodepools": empty,
        "/apis/karpenter.sh/v1alpha1/nodeoverlays": empty,
        "/apis/karpenter.sh/v1/nodeclaims": empty,
        "/api/v1/nodes": empty,
    }
    handler = type("EmptyKubernetes", (FakeKubernetes,), {"routes": routes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield kubeconfig_for(repository / "kubeconfig", f"http://127.0.0.1:{server.server_port}")
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def refusing(embedded_server):
    """One proxy for the module, in front of the session's embedded AWS: its address names the
    catalogue cache, so the instance-type catalogue is loaded once, not per test. The run's deadline
    is long enough for moto to load it on a busy machine (the refusals are not retried anyway)."""
    saved = os.environ.get("KARPENTER_GITOPS_AWS_DEADLINE")
    os.environ["KARPENTER_GITOPS_AWS_DEADLINE"] = "300"
    with RefusingProxy(embedded_server.endpoint_url, None, "") as proxy:
        yield proxy
    os.environ["KARPENTER_GITOPS_AWS_DEADLINE"] = saved or ""
    if saved is None:
        del os.environ["KARPENTER_GITOPS_AWS_DEADLINE"]


def _against(drawn, refusing, embedded_server, argv_by_format: dict[str, list[str]]) -> dict[str, tuple[int, str, str]]:
    """Each command line run against the drawn world, behind the proxy refusing the drawn operation."""
    world, values, refusing.operation = drawn
    refusing.message = values["error message"]
    results = {}
    with embedded_aws(parse_world(world_text(world), "<fuzz world>"), server=embedded_server), endpoint(refusing.url):
        for fmt, argv in argv_by_format.items():
            results[fmt] = run([*argv, "--format", fmt], aws=True)
    for fmt, (_, stdout, stderr) in results.items():
        if fmt != "json":  # JSON escapes control characters itself
            assert not RAW_CONTROL.search(stdout), (fmt, RAW_CONTROL.search(stdout))
        if fmt in ("markdown", "comment"):  # a comment the bot posts: what AWS says is data in it, never markup
            check(stdout)
            assert len(stdout) <= GITHUB_LIMIT
        assert not RAW_CONTROL.search(stderr), (fmt, stderr[:500])
    return results


@AWS_WORLDS
@given(drawn=hostile_worlds())
def test_plan_shows_what_aws_holds(refusing, embedded_server, catalogue_cache, repository, drawn):
    argv = [
        "plan",
        "--manifests",
        str(repository / "manifests.yaml"),
        "--kubernetes-version",
        "1.32",
        "--cache-dir",
        str(catalogue_cache),
    ]
    results = _against(drawn, refusing, embedded_server, {"text": argv, "json": argv})
    (text_code, text, _), (json_code, out, _) = results["text"], results["json"]
    assert text_code == json_code
    if json_code == 3 and not out:
        return
    plan = json.loads(out)
    for node_class in plan["nodeClasses"].values():
        shown = [ami["name"] for ami in node_class["amis"]] + [s["name"] for s in node_class["skippedAmis"]]
        shown += [
            c["message"] for c in node_class["conditions"] if c["message"] and c["type"] != "Ready"
        ]  # Ready sums the others
        for value in shown:
            assert shows(text, value), value[:200]


@AWS_WORLDS
@given(drawn=hostile_worlds())
def test_preview(refusing, embedded_server, catalogue_cache, repository, drawn):
    argv = [
        "preview",
        "--manifests",
        str(repository / "manifests.yaml"),
        "--base",
        str(repository / "base"),
        "--reconcile",
        "--kubernetes-version",
        "1.32",
        "--cache-dir",
        str(catalogue_cache),
        "--full-report",
        str(repository / "full.md"),
    ]
    _against(drawn, refusing, embedded_server, {"markdown": argv, "json": argv})


@AWS_WORLDS
@given(drawn=hostile_worlds())
def test_bump_dry_run(refusing, embedded_server, repository, monkeypatch, drawn):
    monkeypatch.chdir(repository)
    stack = repository / "stacks" / "Pulumi.pinned.yaml"
    before = stack.read_bytes()
    _against(
        drawn,
        refusing,
        embedded_server,
        {fmt: ["bump", "--stack", "pinned", "--dry-run", "--pin-latest"] for fmt in ("text", "json")},
    )
    assert stack.read_bytes() == before


@AWS_WORLDS
@given(drawn=hostile_worlds())
def test_verify(refusing, embedded_server, catalogue_cache, repository, empty_cluster, drawn):
    argv = [
        "verify",
        "--manifests",
        str(repository / "manifests.yaml"),
        "--kubeconfig",
        str(empty_cluster),
        "--wait",
        "0",
        "--kubernetes-version",
        "1.32",
        "--cache-dir",
        str(catalogue_cache),
    ]
    _against(drawn, refusing, embedded_server, {fmt: argv for fmt in ("text", "json", "comment")})
