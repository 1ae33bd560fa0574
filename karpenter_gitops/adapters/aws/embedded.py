"""An embedded AWS for the demo and the tests: moto in server mode on 127.0.0.1, seeded from a world.

:func:`embedded_aws` starts moto, seeds a world and points the standard AWS environment (endpoint,
dummy credentials, region) at it; on exit the environment is restored and the server stopped.
moto's backends are process-global, so one world is embedded per process at a time.

The parts, one concern each: ``embedded_world`` (the world fixture contract, validated before
anything runs), ``embedded_seeding`` (putting a world into moto), ``embedded_prices`` (the Pricing
API and spot history moto lacks, as a WSGI layer in front of it) and, here, the server with EC2's
launch-time checks moto leaves out (:class:`_LaunchChecks`): RunInstances refuses a launch template whose
instance profile IAM does not have, and CreateLaunchTemplate refuses userData over 16,384 bytes once decoded.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import html
import io
import json
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.embedded_prices import PriceService
from karpenter_gitops.adapters.aws.embedded_seeding import put_parameter, seed
from karpenter_gitops.adapters.aws.embedded_world import World, load_world
from karpenter_gitops.core.errors import InputError

DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
_CLEARED_ENV = ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")

_ONE_WORLD = threading.Lock()


@dataclass(frozen=True)
class EmbeddedAWS:
    """What :func:`embedded_aws` yields: where the emulator listens and the world it holds."""

    endpoint_url: str
    world: World
    environment: dict[str, str]  # the variables set for the duration (dummy credentials only)

    @property
    def region(self) -> str:
        return self.world.region

    @property
    def cache_namespace(self) -> str:
        """On-disk cache namespace: the emulator's catalogue depends only on moto's data and the world's selection."""
        from moto import __version__ as moto_version

        selection = json.dumps(self.world.instance_types)
        return f"moto-{moto_version}-{hashlib.sha256(selection.encode()).hexdigest()[:12]}"

    def session(self, **options: Any) -> AwsSession:
        """An AwsSession on this emulator (options as for AwsSession, e.g. ``max_attempts``)."""
        return AwsSession(self.region, endpoint_url=self.endpoint_url, cache_namespace=self.cache_namespace, **options)

    def publish(self, name: str, value: str) -> None:
        """A new version of a public SSM parameter, as AWS publishes an AMI release (PutParameter refuses ``/aws/`` names)."""
        from moto.backends import get_backend

        put_parameter(get_backend("ssm")[self.world.account_id][self.region], self.world.account_id, name, value)


class EmbeddedServer:
    """moto's server app on 127.0.0.1, reusable across worlds (e.g. one per test session).

    The server binds port 0 itself and keeps the socket: probing a free port and letting moto bind it
    later lost the race to any process that took the port meanwhile, and moto's thread then died
    while the run waited for it forever.
    """

    def __init__(self) -> None:
        try:
            from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
            from werkzeug.serving import make_server
        except ModuleNotFoundError as missing:  # the `embedded` extra is optional
            raise InputError(
                f"--embedded-aws needs moto, which is not installed (no module {missing.name!r})",
                hint="pip install 'karpenter-gitops[embedded]'",
            ) from None

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per AWS call is noise here
        self.prices = PriceService(DomainDispatcherApplication(create_backend_app))
        try:
            self._server = make_server("127.0.0.1", 0, _LaunchChecks(self.prices), threaded=True)
        except OSError as error:
            raise InputError(
                f"the embedded AWS cannot listen on 127.0.0.1: {error.strerror or error}",
                hint="check that the loopback interface is up and this process may open sockets",
            ) from None
        self.endpoint_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-aws", daemon=True)

    def start(self) -> EmbeddedServer:
        self._thread.start()  # the socket already listens: requests queue until the loop picks them up
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


class _LaunchChecks:
    """EC2's checks of the instance profile at launch and of the userData size, which moto leaves out, around
    moto's WSGI app.

    EC2 answers a RunInstances (a dry run too) whose launch template names an instance profile IAM does not
    have with ``InvalidParameterValue`` "… Invalid IAM Instance Profile name"; Karpenter's validation dry run
    turns exactly that answer into its condition (1.15) or a silent requeue (1.14), so the controller
    compared with ``plan`` must get it here too."""

    def __init__(self, app: Any) -> None:
        self._app = app

    def __call__(self, environ: dict, start_response: Any) -> Any:
        scope = re.search(r"Credential=[^/]+/[^/]+/([^/]+)/ec2/", environ.get("HTTP_AUTHORIZATION", ""))
        if scope and environ.get("REQUEST_METHOD") == "POST":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
            profile = _unknown_launch_profile(form, scope[1]) if form.get("Action") == ["RunInstances"] else None
            if profile is not None:
                message = f"Value ({profile}) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"
                return _refuse(start_response, "InvalidParameterValue", message)
            if form.get("Action") == ["CreateLaunchTemplate"] and _user_data_bytes(form) > USER_DATA_LIMIT:
                return _refuse(start_response, "InvalidUserData.Malformed", f"User data is limited to {USER_DATA_LIMIT} bytes")
        return self._app(environ, start_response)


USER_DATA_LIMIT = 16_384  # EC2's, on the decoded userData


def _user_data_bytes(form: dict[str, list[str]]) -> int:
    """The decoded size of a CreateLaunchTemplate's userData (0 without any, or when it is not base64: moto says so)."""
    try:
        return len(base64.b64decode(form.get("LaunchTemplateData.UserData", [""])[0], validate=True))
    except binascii.Error:
        return 0


def _refuse(start_response: Any, code: str, message: str) -> list[bytes]:
    reply = (
        f"<Response><Errors><Error><Code>{code}</Code><Message>{html.escape(message)}</Message></Error></Errors>"
        "<RequestID>embedded</RequestID></Response>"
    ).encode()
    start_response("400 Bad Request", [("Content-Type", "text/xml"), ("Content-Length", str(len(reply)))])
    return [reply]


def _unknown_launch_profile(form: dict[str, list[str]], region: str) -> str | None:
    """The instance profile name of the RunInstances' launch template when IAM does not have it, else None."""
    from moto.backends import get_backend
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.exceptions import EC2ClientError
    from moto.iam.exceptions import NotFoundException

    account = os.environ.get("MOTO_ACCOUNT_ID", DEFAULT_ACCOUNT_ID)
    name, version = form.get("LaunchTemplate.LaunchTemplateName", [None])[0], form.get("LaunchTemplate.Version", ["$Default"])[0]
    try:
        data = get_backend("ec2")[account][region].get_launch_template_by_name(name).get_version(version).data if name else {}
    except (EC2ClientError, ValueError):  # an unknown template or version: moto answers that itself
        return None
    profile = (data.get("IamInstanceProfile") or {}).get("Name")
    if not profile:
        return None
    try:
        get_backend("iam")[account]["global"].get_instance_profile(profile)
    except NotFoundException:
        return profile
    return None


@contextlib.contextmanager
def embedded_aws(world: World | str | Path | None = None, *, server: EmbeddedServer | None = None) -> Iterator[EmbeddedAWS]:
    """Seed ``world`` (default: the packaged default world) into moto and point the AWS environment at it."""
    world = world if isinstance(world, World) else load_world(world)
    if not _ONE_WORLD.acquire(blocking=False):
        raise RuntimeError("an embedded AWS world is already active in this process (moto's state is global)")
    own_server = server is None
    try:
        server = server or EmbeddedServer().start()
        environment = {
            **DUMMY_CREDENTIALS,
            "AWS_ENDPOINT_URL": server.endpoint_url,
            "AWS_REGION": world.region,
            "AWS_DEFAULT_REGION": world.region,
            "AWS_CONFIG_FILE": os.devnull,  # nothing from the user's AWS config or credentials leaks in
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "MOTO_ACCOUNT_ID": world.account_id,
            "MOTO_EC2_LOAD_DEFAULT_AMIS": "false",  # only the world's images: "newest" stays deterministic
        }
        with _patched_environment(environment, _CLEARED_ENV):
            seed(world, server.endpoint_url)
            server.prices.world = world
            yield EmbeddedAWS(server.endpoint_url, world, environment)
    finally:
        if server is not None:
            server.prices.world = None
        if own_server and server is not None:
            server.stop()
        _ONE_WORLD.release()


@contextlib.contextmanager
def _patched_environment(values: dict[str, str], cleared: tuple[str, ...]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in (*values, *cleared)}
    os.environ.update(values)
    for name in cleared:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_against(command: list[str], fixture: str | Path | None = None) -> int:
    """Run ``command`` with the AWS environment pointing at a seeded embedded AWS; its exit code.

    The child inherits the environment ``embedded_aws`` sets (endpoint, region, dummy credentials,
    no user config), so any AWS SDK in it, the Pulumi engine's dynamic providers included, reads the
    world instead of an account."""
    import subprocess

    with embedded_aws(fixture):
        try:
            return subprocess.run(command, check=False).returncode
        except OSError as failure:  # not found, not executable
            raise InputError(
                f"cannot run {command[0]!r}: {failure.strerror}", hint="give a command on PATH, e.g. `-- pulumi preview`"
            ) from None
