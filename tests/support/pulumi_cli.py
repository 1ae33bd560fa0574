"""The real Pulumi CLI on a project of its own: a file backend and passphrase secrets in a temporary
directory, no plugin downloads, the plugins ``make tools`` built on PATH.

Each command is a new CLI process, so every run goes through the real engine, language host,
dynamic-provider host and Kubernetes provider, as ``pulumi up`` does for a user.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support import real_tools as tools
from support.processes import kill_session

PASSPHRASE = "karpenter-gitops-tests"


@dataclass
class PulumiProject:
    """A project directory, its stack and the environment every CLI call runs with."""

    directory: Path
    stack: str
    environment: dict[str, str]

    @classmethod
    def create(cls, directory: Path, stack: str, *, pulumi: Path, kubeconfig: Path | None = None) -> PulumiProject:
        """``directory`` holds Pulumi.yaml and the stack file already; this makes its backend and stack."""
        state, home = directory / ".state", directory / ".pulumi-home"
        state.mkdir(exist_ok=True)
        home.mkdir(exist_ok=True)
        path = os.pathsep.join(
            [str(pulumi.parent), str(tools.TOOLS_BIN), str(tools.PROJECT / ".venv" / "bin"), os.environ.get("PATH", "")]
        )
        environment = {
            "PATH": path,
            "PULUMI_BACKEND_URL": f"file://{state}",
            "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_HOME": str(home),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_SKIP_CONFIRMATIONS": "true",
            "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
            "NO_COLOR": "1",
        }
        if kubeconfig is not None:
            environment["KUBECONFIG"] = str(kubeconfig)
        project = cls(directory, stack, environment)
        project.run("stack", "init", stack, "--secrets-provider", "passphrase")
        return project

    def run(
        self, *args: str, check: bool = True, env: dict[str, str] | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess:
        """One CLI command on the selected stack (``stack init`` selected it in this PULUMI_HOME); the
        test's AWS environment (the embedded world) is inherited."""
        environment = {**os.environ, **self.environment, **(env or {})}
        with self._session(
            args, environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"pulumi {' '.join(args)} ran past {timeout:.0f} s") from None
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if check and result.returncode != 0:
            errors = [line.strip() for line in result.stdout.splitlines() if "error:" in line or "[mandatory]" in line]
            raise AssertionError(
                f"pulumi {' '.join(args)} exited {result.returncode}; its errors:\n"
                + "\n".join(errors)
                + f"\n--- the end of its output:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def started(self, *args: str) -> contextlib.AbstractContextManager[subprocess.Popen]:
        """A CLI command left running (its output merged into one text stream), killed with everything it
        started when the block ends: how a test stops an update midway."""
        return self._session(args, {**os.environ, **self.environment}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    @contextlib.contextmanager
    def _session(self, args: tuple[str, ...], environment: dict[str, str], **pipes) -> Iterator[subprocess.Popen]:
        """The CLI in a session of its own, ended whole when the block ends. The CLI starts its language host
        and plugins each in a process group of its own; killed (or timed out), it would leave them running
        for minutes, re-parented; they stay in its session."""
        process = subprocess.Popen(
            ["pulumi", *args], cwd=self.directory, env=environment, text=True, start_new_session=True, **pipes
        )
        try:
            yield process
        finally:
            kill_session(process.pid)
            process.communicate()

    def preview(self, *args: str, **options) -> dict:
        """``pulumi preview --json``: steps (op, urn, diffs) and diagnostics."""
        result = self.run("preview", "--json", *args, **options)
        return (
            json.loads(result.stdout)
            if result.stdout.strip().startswith("{")
            else {"raw": result.stdout, "stderr": result.stderr, "code": result.returncode}
        )

    def up(self, *args: str, **options) -> subprocess.CompletedProcess:
        return self.run("up", "--yes", "--skip-preview", *args, **options)

    def outputs(self) -> dict:
        return json.loads(self.run("stack", "output", "--json", "--show-secrets").stdout)

    def export(self) -> dict:
        return json.loads(self.run("stack", "export").stdout)

    def resources(self) -> dict[str, dict]:
        """The stack's resources in state, by URN."""
        return {r["urn"]: r for r in self.export()["deployment"].get("resources", [])}


def step_ops(preview: dict) -> dict[str, str]:
    """Resource name -> the op a preview plans for it (providers and the stack left out)."""
    return {
        step["urn"].rsplit("::", 1)[1]: step["op"]
        for step in preview.get("steps", [])
        if "pulumi:providers:" not in step["urn"] and not step["urn"].split("::")[2].startswith("pulumi:pulumi:Stack")
    }


# A stack of one EC2NodeClass and its NodePool, named after the test (the objects are cluster-scoped and
# the API server is shared), with no controller block: its pulumi_aws resources need the pulumi-aws plugin.
STACK = """
config:
  aws:region: us-west-2
  karpenter-gitops:cluster: {name: demo, kubernetesVersion: "1.32", karpenterVersion: "1.14"}
  karpenter-gitops:nodeClasses:
    %(name)s:
      amiSelectorTerms: [{alias: al2023@latest}]
      %(identity)s
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      metadataOptions: {httpTokens: required, httpPutResponseHopLimit: 1}
      %(extra)s
  karpenter-gitops:nodePools:
    %(name)s-pool:
      template:
        spec:
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %(name)s}
          requirements:
            - {key: kubernetes.io/arch, operator: In, values: [amd64]}
            - {key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}
          expireAfter: 720h
      disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m, budgets: [{nodes: "10%%"}]}
      limits: {cpu: 100, memory: 1000Gi}
      weight: 10
"""


def stack_text(name: str, identity: str = "role: KarpenterNodeRole-demo", extra: str = "") -> str:
    return STACK % {"name": name, "identity": identity, "extra": extra}
