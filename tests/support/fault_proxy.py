"""A fault proxy on 127.0.0.1 in front of the embedded AWS: it fails a seeded fraction of requests.

Each failure is what AWS sends under load: the service's throttling error, or a bare 500, 502 or
503. Whether an attempt fails depends only on the seed, the request (method, path, body) and how
many times that same request came before, never on the order in which a run's threads send
their requests, so a seeded run meets the same faults every time. ``fraction=1`` is AWS down.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# The throttling error each service answers with, as AWS spells it per protocol.
THROTTLED = {
    "ec2": (
        503,
        b"<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded."
        b"</Message></Error></Errors><RequestID>fault</RequestID></Response>",
        "text/xml",
    ),
    "iam": (
        400,
        b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message>"
        b"</Error><RequestId>fault</RequestId></ErrorResponse>",
        "text/xml",
    ),
    "sts": (
        400,
        b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message>"
        b"</Error><RequestId>fault</RequestId></ErrorResponse>",
        "text/xml",
    ),
    "ssm": (400, b'{"__type":"ThrottlingException","message":"Rate exceeded"}', "application/x-amz-json-1.1"),
}
SERVER_ERRORS = (500, 502, 503)
_SCOPE = re.compile(r"Credential=[^/]+/[^/]+/[^/]+/([^/]+)/")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "server", "date"}


class FaultProxy:
    """Forwards to ``upstream`` (the embedded AWS), failing ``fraction`` of the attempts."""

    def __init__(self, upstream: str, fraction: float, seed: int = 0):
        self.upstream = urlsplit(upstream)
        self.fraction, self.seed = fraction, seed
        self.injected = self.forwarded = 0
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def reseed(self, seed: int, fraction: float | None = None) -> FaultProxy:
        """Start a new seeded run: forget what was seen, reset the counters."""
        with self._lock:
            self.seed, self.fraction = seed, self.fraction if fraction is None else fraction
            self._seen.clear()
            self.injected = self.forwarded = 0
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args) -> None:  # quiet
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, headers, payload = proxy.answer(self.command, self.path, dict(self.headers), body)
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *_exc) -> None:
        self.stop()

    def _fails(self, method: str, path: str, body: bytes) -> tuple[bool, int]:
        request = hashlib.sha256(f"{method} {path} ".encode() + body).hexdigest()
        with self._lock:
            seen = self._seen[request]
            self._seen[request] += 1
            seed, fraction = self.seed, self.fraction
        draw = int(hashlib.sha256(f"{seed}:{request}:{seen}".encode()).hexdigest(), 16)
        return (draw % 1_000_000) / 1_000_000 < fraction, draw >> 64

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list, bytes]:
        """The upstream's answer, or an injected fault."""
        fails, pick = self._fails(method, path, body)
        if fails:
            with self._lock:
                self.injected += 1
            scope = _SCOPE.search(headers.get("Authorization", ""))
            service = scope.group(1) if scope else ""
            if pick % 2 and service in THROTTLED:
                status, payload, content_type = THROTTLED[service]
                return status, [("Content-Type", content_type)], payload
            return SERVER_ERRORS[pick % len(SERVER_ERRORS)], [("Content-Type", "text/plain")], b""
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=60)
        try:
            forwarded = {k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP}
            connection.request(method, path, body=body, headers=forwarded)
            response = connection.getresponse()
            payload = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP]
        finally:
            connection.close()
        with self._lock:
            self.forwarded += 1
        return response.status, kept, payload
