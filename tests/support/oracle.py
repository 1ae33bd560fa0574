"""Karpenter's own Go code as a judge: the ``karpenter-oracle-X.Y`` programs `make tools` builds, one per
release, from tools/karpenter-X.Y (that release's Karpenter modules) and the questions in
tools/karpenter-oracle (our Go source, shared by every release).

1.15 and 1.14 are built whole (provider v1.15.0 / v1.14.3 and their cores); 1.9 from its core
(v1.9.0) alone, with the AWS provider's label registrations applied as data. One process per
release answers JSON requests line by line (:func:`oracle` starts it once per test session):

- every release: NodePool and NodeOverlay ``RuntimeValidate``, the NodeOverlay validation controller
  over overlays, pools and instance types (the conditions it writes), the label sets, the NodePool's
  static drift hash and which NodeClaim label sets its requirements drift;
- 1.15 and 1.14: how an EC2NodeClass's amiSelectorTerms become image queries and kept images, which
  image each instance type launches with (the AMI step plus amifamily's ``MapToInstanceTypes``), the
  instance types as the provider's resolver builds them, and the EC2NodeClass validation
  controller's verdict up to its EC2 dry runs (1.15: the open kubelet map, its CEL expressions and
  feature gate, the fields each AMI family applies, the NVIDIA annotation, tags), the EC2NodeClass's
  static drift hash.

tools/karpenter-oracle/{core,aws}/*.go document each question's fields.
"""

from __future__ import annotations

import ctypes
import json
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from karpenter_gitops.core import versions
from support import real_tools as tools

RELEASES = tools.ORACLE_RELEASES
# Releases whose oracle has the AWS provider's questions (images, amimap, instancetypes, nodeclass).
PROVIDER_RELEASES = tools.CONTROLLER_RELEASES


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class OracleError(AssertionError):
    """The oracle could not answer (a malformed question), or Karpenter's code panicked on it."""


class Oracle:
    """A running karpenter-oracle of one release; ``ask`` sends requests and returns the answers in order.

    Some of Karpenter's code exits the process on a value it cannot read (``log.Fatalf`` on an alias with two
    '@'): what the controller itself would do. The answer to that request is then ``{"fatal": <its last log
    line>}``, and a new process answers the rest."""

    def __init__(self, binary: Path, release: versions.Release) -> None:
        self.binary = binary
        self.release = release
        self._start()

    def _start(self) -> None:
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(
            [str(self.binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            preexec_fn=_die_with_parent,
        )

    def _last_words(self) -> str:
        self.log.seek(0)
        said = [line.strip() for line in self.log.read().splitlines() if line.strip()]
        return said[-1] if said else f"exited with {self.process.returncode}"

    def ask(self, requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        lines = [json.dumps(request) for request in requests]
        answers: list[dict[str, Any]] = []
        while len(answers) < len(lines):
            assert self.process.stdin and self.process.stdout
            waiting = lines[len(answers) :]
            self.process.stdin.write("".join(line + "\n" for line in waiting))
            self.process.stdin.flush()
            for _ in waiting:
                line = self.process.stdout.readline()
                if not line:
                    self.process.wait()
                    answers.append({"fatal": self._last_words()})
                    self._start()
                    break
                answers.append(json.loads(line))
        return answers

    def one(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self.ask([request])[0]

    def answer(self, request: Mapping[str, Any]) -> Any:
        """The answer to ``request``; an error, a panic or an exit is raised, naming the release."""
        return self.answer_of(self.one(request), request.get("op"))

    def answer_of(self, reply: Any, op: Any) -> Any:
        if isinstance(reply, dict) and ({"error", "panic", "fatal"} & reply.keys()):
            raise OracleError(f"karpenter-oracle-{versions.show(self.release)} on {op}: {reply}")
        return reply

    def runtime_errors(self, node_pool: Mapping[str, Any]) -> list[str]:
        """RuntimeValidate's messages for a NodePool the API server accepted (empty: valid)."""
        return self.answer({"op": "nodepool", "object": node_pool})["errors"]

    def overlay_errors(self, overlay: Mapping[str, Any]) -> list[str]:
        """NodeOverlay RuntimeValidate's messages (its validation controller's reason RuntimeValidation)."""
        return self.answer({"op": "nodeoverlay", "object": overlay})["errors"]

    def overlay_conditions(
        self,
        overlays: Sequence[Mapping[str, Any]],
        node_pools: Sequence[Mapping[str, Any]] = (),
        instance_types: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, list[dict[str, str]]]:
        """Overlay name → the conditions the NodeOverlay validation controller writes after one pass over
        ``overlays``, ``node_pools`` and ``instance_types`` (``{name, requirements, capacity, offerings:
        [{requirements, price, available}]}``; see :meth:`instance_types` for the provider's requirements)."""
        return self.answer(
            {
                "op": "nodeoverlays",
                "overlays": list(overlays),
                "nodePools": list(node_pools),
                "instanceTypes": list(instance_types),
            }
        )

    def instance_types(
        self, node_class: Mapping[str, Any], described: Sequence[Mapping[str, Any]], zones: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """EC2's instance types (DescribeInstanceTypes' ``InstanceTypes``) as the release's resolver builds
        them for ``node_class``: name, requirements, capacity."""
        return self.answer({"op": "instancetypes", "object": node_class, "instanceTypes": list(described), "zones": list(zones)})

    def image_map(
        self,
        node_class: Mapping[str, Any],
        described: Sequence[Mapping[str, Any]],
        *,
        amis: Sequence[Mapping[str, Any]] | None = None,
        images: Sequence[Mapping[str, Any]] = (),
        ssm: Mapping[str, str] | None = None,
        kubernetes: str = "",
        now: str = "",
        zones: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Which image each instance type launches with, by Karpenter's own resolver: ``instanceTypes``
        (name → image id; a type no image fits is absent), ``amis`` (status.amis, newest first) and, unless
        ``amis`` is given, the AMI step's ``conditions`` run over ``images``/``ssm`` (see ``images`` in
        tools/karpenter-oracle/aws/images.go for the image fields)."""
        request: dict[str, Any] = {
            "op": "amimap",
            "object": node_class,
            "instanceTypes": list(described),
            "zones": list(zones),
            "kubernetes": kubernetes,
            "now": now,
        }
        if amis is not None:
            request["amis"] = list(amis)
        else:
            request.update(images=list(images), ssm=dict(ssm or {}))
        return self.answer(request)

    def node_class_validation(
        self,
        node_class: Mapping[str, Any],
        *,
        feature_gates: str = "",
        described: Sequence[Mapping[str, Any]] = (),
        cluster_name: str = "",
    ) -> dict[str, Any]:
        """The EC2NodeClass validation controller's ValidationSucceeded condition (``validationSucceeded``)
        up to its EC2 dry runs; ``feature_gates`` in AWS_FEATURE_GATES' syntax (``NodeClassCEL=true``),
        ``described`` the instance types kubelet expressions are evaluated for."""
        reply = self.one(
            {
                "op": "nodeclass",
                "object": node_class,
                "featureGates": feature_gates,
                "instanceTypes": list(described),
                "clusterName": cluster_name,
            }
        )
        if "fatal" in reply:  # the controller would exit on this class (and restart, and exit again)
            return {"validationSucceeded": {"status": "False", "reason": "ControllerExits", "message": reply["fatal"]}}
        return self.answer_of(reply, "nodeclass")

    def node_pool_drift(self, node_pool: Mapping[str, Any], labels: Sequence[Mapping[str, str]] = ()) -> dict[str, Any]:
        """What the NodeClaim drift controller reads off a NodePool: its static ``hash`` and ``hashVersion``,
        and per label set (a NodeClaim's labels) whether ``RequirementsDrifted`` fires (``requirementsDrifted``)."""
        return self.answer({"op": "nodepooldrift", "object": node_pool, "labels": [dict(each) for each in labels]})

    def node_class_hash(self, node_class: Mapping[str, Any]) -> dict[str, Any]:
        """The EC2NodeClass's static drift ``hash`` and ``hashVersion`` (1.15 and 1.14: the provider's code)."""
        return self.answer({"op": "nodeclasshash", "object": node_class})

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def binary_name(release: versions.Release) -> str:
    return f"karpenter-oracle-{versions.show(release)}"


def judge_of(release: versions.Release) -> versions.Release:
    """The oracle that judges ``release``: its own, else the nearest built release above it (the core's
    runtime checks only ever grew), else the newest."""
    return min((built for built in RELEASES if built >= release), default=max(RELEASES))


def start(release: versions.Release | None = None) -> Oracle:
    """A new oracle process for ``release`` (default: the release the project judges by default)."""
    chosen = judge_of(release or versions.DEFAULT)
    path = tools.find(binary_name(chosen))
    if path is None:
        tools.unavailable(f"{binary_name(chosen)} not found: {tools.HOW_TO_GET[binary_name(chosen)]}")
    return Oracle(path, chosen)


_RUNNING: dict[versions.Release, Oracle] = {}


def oracle(release: versions.Release | None = None) -> Oracle:
    """The session's oracle judging ``release``, started on first use and stopped when the session ends
    (:func:`stop_all`, from tests/conftest.py)."""
    chosen = judge_of(release or versions.DEFAULT)
    if chosen not in _RUNNING or _RUNNING[chosen].process.poll() is not None:
        _RUNNING[chosen] = start(chosen)
    return _RUNNING[chosen]


def stop_all() -> None:
    """End the session's oracles: the test session does, before it checks that no test left a process behind."""
    for running in _RUNNING.values():
        running.stop()
    _RUNNING.clear()
