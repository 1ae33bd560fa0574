"""``--workloads`` as users feed it: folders, stdin, wrong paths, hostile names; the picture only with a forecast."""

from __future__ import annotations

import functools
import json

import pytest

HOSTILE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: "[bold red]boom[/]"
  namespace: "<script>x</script>"
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: "[link=https://example.com]x[/link]"}
    spec:
      nodeSelector:
        karpenter.sh/nodepool: "[red]nowhere[/red]"
      containers:
        - name: main
          resources:
            requests: {cpu: 500m, memory: 512Mi}
---
apiVersion: v1
kind: Service
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  template:
    spec:
      containers:
        - name: main
          resources:
            requests: {cpu: lots}
"""


@pytest.fixture
def plan(cli, monkeypatch, catalogue_cache, project):
    """``plan`` of the demo stack on the embedded AWS, with more arguments."""
    monkeypatch.chdir(project)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    return functools.partial(cli, "plan", "--stack", "demo", "--embedded-aws", "--cache-dir", catalogue_cache)


@pytest.mark.slow
def test_hostile_names_from_stdin_are_printed_as_written_and_escaped_in_the_picture(plan, tmp_path):
    picture = tmp_path / "out" / "forecast.svg"
    code, out, _ = plan("--workloads", "-", "--picture", picture, stdin=HOSTILE)
    assert code == 1
    out = " ".join(out.split())  # as read, whatever the terminal's line breaks
    assert "cannot schedule <script>x</script>/Deployment/[bold red]boom[/] (2 pod(s)" in out
    assert "karpenter.sh/nodepool In [[red]nowhere[/red]]" in out  # Karpenter's message quotes the selector as written
    assert "read 2 pod(s)" in out and "from -" in out
    assert "passed over 1 object(s) that create no pods: Service × 1" in out
    assert (
        "left out <stdin>: document 3: Deployment default/broken: spec.template.spec.containers[0].resources.requests.cpu" in out
    )
    svg = picture.read_text()
    assert "&lt;script&gt;x&lt;/script&gt;/Deployment/[bold red]boom[/]" in svg and "<script>" not in svg


@pytest.mark.slow
def test_json_says_what_was_read_and_left_out(plan):
    code, out, _ = plan("--workloads", "-", "--format", "json", stdin=HOSTILE)
    assert code == 1
    workloads = json.loads(out)["forecast"]["workloads"]
    assert workloads["pods"] == 2 and len(workloads["problems"]) == 1 and workloads["paths"] == ["-"]


@pytest.mark.slow
def test_an_empty_folder_of_workloads_is_said_not_passed(plan, tmp_path):
    (tmp_path / "empty.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    code, out, _ = plan("--workloads", tmp_path)
    assert code == 1
    out = " ".join(out.split())
    assert "no pods in the workloads given: nothing to launch, the forecast is empty" in out
    assert "total: 0 NodeClaim(s) for 0 pod(s), $0.0000/h" in out


@pytest.mark.parametrize(("argv", "message"), [
    (("--picture", "x.svg"), "--picture draws the forecast: give --workloads too"),
    (("--workloads", "no/such/place"), "no such file or directory"),
])  # fmt: skip
def test_usage_errors_are_one_line_and_exit_2(plan, argv, message):
    code, _, err = plan(*argv)
    assert code == 2 and message in err


def test_malformed_yaml_on_stdin_names_stdin_and_asks_nothing(plan, tmp_path):
    code, _, err = plan("--workloads", "-", "--picture", tmp_path / "f.svg", stdin="kind: [unclosed\n")
    assert code == 2 and "<stdin>" in err and not (tmp_path / "f.svg").exists()
