"""The connectivity probe: one short, unretried EC2 call before a run's first real one.

Endpoints as a user meets them: a port nothing listens on, a black hole (a socket that accepts
and never answers, as a firewall that drops packets or a stuck proxy behaves), an endpoint that
answers with an error, and one that refuses the credentials.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.dead_endpoints import BlackHole, free_port

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.error_kinds import AwsUnreachable, PersistentAWSError
from karpenter_gitops.core.errors import Unreachable


@pytest.fixture
def answering() -> Iterator:
    """An endpoint that answers every request with a fixed EC2 error (status, code)."""
    servers = []

    def start(status: int, code: str) -> str:
        body = (
            f"<Response><Errors><Error><Code>{code}</Code><Message>said {code}</Message></Error></Errors>"
            f"<RequestID>probe</RequestID></Response>"
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def credentials(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")


def test_a_port_nothing_listens_on_is_named_with_its_region(credentials):
    endpoint = f"http://127.0.0.1:{free_port()}"
    session = AwsSession("eu-central-1", endpoint_url=endpoint)
    with pytest.raises(AwsUnreachable) as caught:
        session.probe(timeout=2)
    line = str(caught.value)
    assert isinstance(caught.value, Unreachable) and "\n" not in line
    assert endpoint in line and "region eu-central-1" in line and "--embedded-aws" in line
    assert session.call_counts() == {}  # the probe is not one of the run's calls


def test_a_black_hole_is_named_within_the_timeout(credentials):
    with BlackHole() as endpoint:
        started = time.monotonic()
        with pytest.raises(AwsUnreachable) as caught:
            AwsSession("us-west-2", endpoint_url=endpoint).probe(timeout=1)
        took = time.monotonic() - started
    assert endpoint in str(caught.value) and "timeout" in str(caught.value).lower()
    assert took < 10, f"one attempt with a 1 s read timeout took {took:.1f} s"


@pytest.mark.parametrize("status, code", [(403, "UnauthorizedOperation"), (503, "Unavailable"), (400, "OptInRequired")])
def test_any_answer_is_reachable(credentials, answering, status, code):
    AwsSession("us-west-2", endpoint_url=answering(status, code)).probe(timeout=2)  # raises nothing


@pytest.mark.parametrize("code", ["AuthFailure", "InvalidClientTokenId", "ExpiredToken"])
def test_refused_credentials_say_so(credentials, answering, code):
    with pytest.raises(PersistentAWSError) as caught:
        AwsSession("us-west-2", endpoint_url=answering(401, code)).probe(timeout=2)
    assert caught.value.code == code and caught.value.detail.startswith(f"AWS refused the credentials ({code})")


def test_the_embedded_world_answers_the_probe(default_aws):
    default_aws.session().probe(timeout=5)
