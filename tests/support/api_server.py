"""A real Kubernetes API server for tests: etcd, kube-apiserver and Kubernetes' garbage collector and
namespace controllers (tools/kube/controllers: the collector finishes foreground deletions) on
loopback, with Karpenter's CRDs.

Started once per test session and stopped (processes killed, files removed) when the session
ends, a test fails or the run is interrupted; the processes also die with the test process
(PR_SET_PDEATHSIG), so even a killed run leaves no server behind. Each server binds its own
port: a port taken by someone else between our pick and the server's bind makes that server exit,
and it is started again on another port instead of hanging.
"""

from __future__ import annotations

import ctypes
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from karpenter_gitops.core import versions
from support import real_tools as tools

STARTS = 5  # attempts when a port turns out to be taken
READY_WITHIN = 90.0  # seconds; a cold API server on 2 cores takes ~10 s
SERVICE_RANGE = "10.0.0.0/24"
ADMIN_TOKEN = "karpenter-gitops-tests"


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Server:
    """One started process, its log and the port it bound."""

    name: str
    process: subprocess.Popen
    port: int
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])


def start_owned(
    name: str,
    directory: Path,
    command: Callable[[int], list[str]],
    ready: Callable[[int], bool],
    environment: Callable[[int], dict[str, str]] | None = None,
) -> Server:
    """Start ``command(port)`` until it binds a port of its own and ``ready(port)`` answers
    (``environment(port)``, when given, is the process's whole environment: some servers take no flags)."""
    for attempt in range(STARTS):
        port = _port()
        log = directory / f"{name}-{attempt}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                command(port),
                stdout=sink,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
                env=None if environment is None else environment(port),
            )
        server = Server(name, process, port, log)
        deadline = time.monotonic() + READY_WITHIN
        while process.poll() is None and time.monotonic() < deadline:
            if ready(port):
                return server
            time.sleep(0.2)
        server.stop()
        if "address already in use" not in log.read_text(errors="replace"):
            raise RuntimeError(f"{name} did not become ready on 127.0.0.1:{port}:\n{server.tail()}")
    raise RuntimeError(f"{name}: every port tried was taken ({STARTS} attempts)")


def _answers(url: str, context: ssl.SSLContext | None = None, token: str | None = None) -> bool:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as response:
            return response.status == 200
    except OSError:
        return False


@dataclass
class ApiServer:
    """etcd + kube-apiserver + kube-controllers; ``kubeconfig`` reaches it as a cluster admin."""

    directory: Path
    servers: list[Server] = field(default_factory=list)
    kubeconfig: Path | None = None
    url: str = ""

    def start(self) -> ApiServer:
        etcd, apiserver = tools.binary("etcd"), tools.binary("kube-apiserver")
        data = self.directory / "etcd"
        peer = _port()  # etcd binds a peer port too; a clash there is retried like the client port
        self.servers.append(
            start_owned(
                "etcd",
                self.directory,
                lambda port: [
                    str(etcd),
                    f"--data-dir={data}",
                    f"--listen-client-urls=http://127.0.0.1:{port}",
                    f"--advertise-client-urls=http://127.0.0.1:{port}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    "--unsafe-no-fsync",
                    "--log-level=warn",
                ],
                lambda port: _answers(f"http://127.0.0.1:{port}/health"),
            )
        )
        etcd_port = self.servers[0].port
        self._write_credentials()
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        certs = self.directory / "certs"
        self.servers.append(
            start_owned(
                "kube-apiserver",
                self.directory,
                lambda port: [
                    str(apiserver),
                    f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                    f"--cert-dir={certs}",
                    f"--secure-port={port}",
                    "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1",
                    f"--service-cluster-ip-range={SERVICE_RANGE}",
                    "--authorization-mode=RBAC",
                    "--disable-admission-plugins=ServiceAccount",
                    f"--token-auth-file={self.directory / 'tokens.csv'}",
                    f"--service-account-issuer=https://127.0.0.1:{port}",
                    f"--service-account-key-file={self.directory / 'sa.pub'}",
                    f"--service-account-signing-key-file={self.directory / 'sa.key'}",
                ],
                lambda port: _answers(f"https://127.0.0.1:{port}/readyz", insecure, ADMIN_TOKEN),
            )
        )
        self.url = f"https://127.0.0.1:{self.servers[1].port}"
        self.kubeconfig = self._write_kubeconfig(certs / "apiserver.crt")
        controllers = tools.binary("kube-controllers")
        self.servers.append(
            start_owned(
                "kube-controllers",
                self.directory,
                lambda port: [str(controllers), f"--kubeconfig={self.kubeconfig}", f"--health-address=127.0.0.1:{port}"],
                lambda port: _answers(f"http://127.0.0.1:{port}/healthz"),
            )
        )
        return self

    def _write_credentials(self) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.directory / "sa.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
            )
        )
        (self.directory / "sa.pub").write_bytes(
            key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        (self.directory / "tokens.csv").write_text(f'{ADMIN_TOKEN},admin,admin,"system:masters"\n')

    def _write_kubeconfig(self, serving_certificate: Path) -> Path:
        path = self.directory / "kubeconfig"
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "test",
                    "clusters": [
                        {"name": "test", "cluster": {"server": self.url, "certificate-authority": str(serving_certificate)}}
                    ],
                    "users": [{"name": "admin", "user": {"token": ADMIN_TOKEN}}],
                    "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}],
                }
            )
        )
        return path

    def stop(self) -> None:
        for server in reversed(self.servers):
            server.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def start_api_server() -> ApiServer:
    directory = Path(tempfile.mkdtemp(prefix="karpenter-gitops-apiserver-"))
    server = ApiServer(directory)
    try:
        return server.start()
    except BaseException:
        server.stop()
        raise


def kube_client(server: ApiServer):
    from kubernetes import config

    return config.new_client_from_config(config_file=str(server.kubeconfig))


# Group and version of each Karpenter kind's resource, by plural.
SERVED = {
    "ec2nodeclasses": ("karpenter.k8s.aws", "v1"),
    "nodepools": ("karpenter.sh", "v1"),
    "nodeoverlays": ("karpenter.sh", "v1alpha1"),
    "capacitybuffers": ("autoscaling.x-k8s.io", "v1beta1"),
}


def live(server: ApiServer, plural: str, name: str, namespace: str | None = None) -> dict | None:
    """The Karpenter object (a plural of :data:`SERVED`; a CapacityBuffer in its ``namespace``) the API
    server stores, or None."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    group, version = SERVED[plural]
    api = client.CustomObjectsApi(kube_client(server))
    try:
        if namespace is not None:
            return api.get_namespaced_custom_object(group, version, namespace, plural, name)
        return api.get_cluster_custom_object(group, version, plural, name)
    except ApiException as missing:
        if missing.status == 404:
            return None
        raise


def install_crds(server: ApiServer) -> None:
    """The CRDs of the release the project judges by default (core.versions.DEFAULT, its newest patch)."""
    from kubernetes import client

    from support.conformance import release_crds

    extensions = client.ApiextensionsV1Api(kube_client(server))
    names = []
    for path in sorted(release_crds(versions.DEFAULT).glob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        extensions.create_custom_resource_definition(body)
        names.append(body["metadata"]["name"])
    wait_established(extensions, names)


def wait_established(extensions, names: list[str], within: float = 60) -> None:
    """Until every named CRD is Established (its kind is served), or fail naming those that are not."""
    waiting, deadline = list(names), time.monotonic() + within
    while waiting and time.monotonic() < deadline:
        crd = extensions.read_custom_resource_definition(waiting[0])
        if any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or []):
            waiting.pop(0)
        else:
            time.sleep(0.1)
    assert not waiting, f"CRDs not established: {waiting}"
