"""Endpoints that do not answer, as a user's network has them: a port nothing listens on, and a black
hole (a socket that accepts connections and never answers, as a stuck proxy or a firewall that drops
replies behaves)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class BlackHole:
    """A loopback socket that accepts connections and never answers a byte."""

    def __enter__(self) -> str:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)  # the kernel completes the handshakes; nobody ever reads or writes
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __exit__(self, *_exc) -> None:
        self._socket.close()
