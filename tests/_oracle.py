"""Karpenter's own Go code as a judge: the ``karpenter-oracle`` program `make tools` builds from
tools/karpenter-oracle (our Go module, Karpenter as its dependency).

One process per test session answers JSON requests line by line: NodePool ``RuntimeValidate``,
the well-known and restricted labels, and how an EC2NodeClass's amiSelectorTerms become image
queries and kept images (see tools/karpenter-oracle/main.go for the fields).
"""

from __future__ import annotations

import ctypes
import json
import signal
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import _real_tools as tools

# The release the oracle is built from: the go.mod of tools/karpenter-oracle decides it.
RELEASE = (1, 14)


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Oracle:
    """A running karpenter-oracle; ``ask`` sends requests and returns the answers in order."""

    def __init__(self, binary: Path) -> None:
        self.process = subprocess.Popen([str(binary)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        preexec_fn=_die_with_parent)

    def ask(self, requests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        lines = [json.dumps(request) for request in requests]
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write("".join(line + "\n" for line in lines))
        self.process.stdin.flush()
        answers = []
        for _ in lines:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"karpenter-oracle exited with {self.process.wait()}")
            answers.append(json.loads(line))
        return answers

    def one(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self.ask([request])[0]

    def runtime_errors(self, node_pool: Mapping[str, Any]) -> list[str]:
        """RuntimeValidate's messages for a NodePool the API server accepted (empty: valid)."""
        answer = self.one({"op": "nodepool", "object": node_pool})
        assert "error" not in answer, answer
        return answer["errors"]

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


HOW_TO_GET = "run `make tools` (needs Go 1.26; it builds tools/karpenter-oracle)"


def start() -> Oracle:
    path = tools.find("karpenter-oracle")
    if path is None:
        tools.unavailable(f"karpenter-oracle not found: {HOW_TO_GET}")
    return Oracle(path)
