"""The one door to AWS for a reconcile run: retries, call counts, one answer per identical query.

An :class:`AwsSession` belongs to one run. It creates its botocore clients lazily from the standard
credential chain and region (``AWS_ENDPOINT_URL`` is honoured by botocore itself), retries them
until the run's deadline (:mod:`karpenter_gitops.adapters.aws.retries`), counts every API call
per operation for the plan, and answers a repeated identical query from memory. It is
safe to share between the threads of one run; it is never pickled (it holds live clients).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import botocore.session
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ConfigParseError, HTTPClientError, ProfileNotFound
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.loaders import create_loader
from botocore.parsers import ResponseParserError
from botocore.utils import validate_region_name

from karpenter_gitops.adapters.aws import retries
from karpenter_gitops.adapters.aws.error_kinds import AWSError, AwsUnreachable, PersistentAWSError, classify
from karpenter_gitops.core.errors import InputError

# Service models are large JSON files (EC2's takes ~0.3 s to parse); every run shares one loader.
_MODEL_LOADER = create_loader()

# How long the connectivity probe waits to connect, and then for an answer: a dead or black-holed
# endpoint is named within seconds instead of after the run's retries (minutes).
PROBE_TIMEOUT = 5.0
# What AWS answers when the credentials themselves are refused: reachable, but nothing will work.
_REFUSED_CREDENTIALS = frozenset(
    {
        "AuthFailure",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "RequestExpired",
        "InvalidAccessKeyId",
    }
)

# Host suffixes of AWS's own endpoints, every partition; anything else is an emulator or a proxy.
_AWS_DOMAINS = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws", ".c2s.ic.gov", ".sc2s.sgov.gov")


@dataclass(frozen=True)
class AwsSettings:
    """Explicit AWS settings, e.g. a Pulumi stack's ``aws:`` provider config; unset ones fall back to the
    environment and the shared config, as they do for the pulumi-aws provider (explicit settings win)."""

    region: str | None = None
    profile: str | None = None
    shared_config_file: str | None = None
    shared_credentials_file: str | None = None
    access_key: str | None = None
    secret_key: str | None = None
    token: str | None = None
    role_arn: str | None = None  # assumed on top of the base credentials
    role_session_name: str | None = None
    role_external_id: str | None = None
    endpoints: Mapping[str, str] = field(default_factory=dict)  # service (ec2, iam, ssm, sts...) -> URL

    @classmethod
    def from_stack_config(cls, config: Any) -> AwsSettings:
        """A stack's ``aws:`` config as the pulumi-aws provider reads it (region, profile, shared files, static
        keys, ``assumeRoles`` (or the older ``assumeRole``), ``endpoints``); structured values may arrive as
        JSON text. ``config`` is anything with ``get(key)``: a stack file's config, or the dynamic provider's."""

        def value(key: str) -> Any:
            raw = config.get(f"aws:{key}")
            if isinstance(raw, str) and raw[:1] in "[{":
                try:
                    return json.loads(raw)
                except ValueError:
                    raise InputError(
                        f"aws:{key} is not valid JSON", "stack config", hint="see pulumi-aws's configuration docs"
                    ) from None
            return raw

        def checked(key: str, found: Any) -> str | None:
            if found is None or isinstance(found, str):
                return found or None
            raise InputError(
                f"aws:{key} is {type(found).__name__}, not text", "stack config", hint="see pulumi-aws's configuration docs"
            )

        def text(key: str) -> str | None:
            return checked(key, value(key))

        def first(key: str) -> str | None:
            listed = value(key)
            return checked(key, listed[0]) if isinstance(listed, list) and listed else None

        roles = value("assumeRoles") or ([value("assumeRole")] if value("assumeRole") else [])
        role = roles[0] if isinstance(roles, list) and roles and isinstance(roles[0], Mapping) else {}
        endpoints: dict[str, str] = {}
        for entry in value("endpoints") or ():
            if isinstance(entry, Mapping):
                endpoints.update({str(service): str(url) for service, url in entry.items() if url})
        return cls(
            region=text("region"),
            profile=text("profile"),
            shared_config_file=first("sharedConfigFiles"),
            shared_credentials_file=first("sharedCredentialsFiles"),
            access_key=text("accessKey"),
            secret_key=text("secretKey"),
            token=text("token"),
            role_arn=checked("assumeRoles.roleArn", role.get("roleArn")),
            role_session_name=checked("assumeRoles.sessionName", role.get("sessionName")),
            role_external_id=checked("assumeRoles.externalId", role.get("externalId")),
            endpoints=endpoints,
        )


class AwsSession:
    """AWS clients for one reconcile run, with per-operation call counts and a per-run memo."""

    def __init__(
        self,
        region: str | None = None,
        *,
        endpoint_url: str | None = None,
        max_attempts: int | None = None,
        deadline: float | None = None,
        connect_timeout: float = 5,
        read_timeout: float = 30,
        cache_namespace: str | None = None,
        settings: AwsSettings | None = None,
    ):
        settings = settings or AwsSettings()
        self._botocore = botocore.session.Session(profile=settings.profile)
        self._botocore.register_component("data_loader", _MODEL_LOADER)
        for variable, value in (
            ("config_file", settings.shared_config_file),
            ("credentials_file", settings.shared_credentials_file),
        ):
            if value:
                self._botocore.set_config_variable(variable, value)
        if settings.access_key and settings.secret_key:
            self._botocore.set_credentials(settings.access_key, settings.secret_key, settings.token)
        try:
            # The shared files are read here, so a profile they lack or a file that does not parse is one line
            # before any call, not a traceback from inside the first client.
            self._botocore.get_scoped_config()
        except BotoCoreError as error:
            raise PersistentAWSError("configuration", type(error).__name__, _setup_problem(error)) from None
        # botocore reads AWS_DEFAULT_REGION and the profile; AWS_REGION (what the other SDKs read) wins, as there.
        region = settings.region or region
        self.region: str = region or os.environ.get("AWS_REGION") or self._botocore.get_config_variable("region")
        if not self.region:
            raise PersistentAWSError(
                "configuration", "NoRegion", "no AWS region: set AWS_REGION, a profile's region or the stack's aws:region"
            )
        try:
            validate_region_name(self.region)
        except BotoCoreError:
            raise PersistentAWSError(
                "configuration",
                "InvalidRegion",
                f"the AWS region {self.region!r} is not a region name "
                "(AWS_REGION, AWS_DEFAULT_REGION, a profile's region or the stack's aws:region sets it)",
            ) from None
        self._endpoint_url = endpoint_url
        self._endpoints = dict(settings.endpoints)
        self._role = settings if settings.role_arn else None
        # Attempts are bounded by the run's deadline (env or ``deadline`` seconds), else by ``max_attempts``.
        self._deadline = retries.Deadline.after(deadline if deadline is not None else retries.deadline_from_environment())
        self._max_attempts = max_attempts
        self._config = Config(
            region_name=self.region,
            retries={"mode": "standard", "total_max_attempts": max_attempts or retries.UNBOUNDED_ATTEMPTS},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        )
        self._cache_namespace = cache_namespace
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self._hooks: list[tuple[str, Callable[..., Any]]] = []
        self._calls: Counter[str] = Counter()
        self._memo: dict[Hashable, Future] = {}

    def __repr__(self) -> str:
        return f"AwsSession(region={self.region!r}, namespace={self._cache_namespace!r})"

    def __reduce__(self):
        raise TypeError("AwsSession holds live AWS clients and belongs to one run; create a new one instead of pickling")

    @property
    def cache_namespace(self) -> str:
        """What names this session's caches (on disk and per process): the AWS account, or the emulator.

        Zone names map to different physical zones in each account, so the catalogue's offerings
        (and every IAM answer) of one account must never answer for another: real AWS is keyed by
        the account (one STS call, which needs no permission). Any other endpoint is keyed by its
        URL as EC2 is actually reached, so ``AWS_ENDPOINT_URL_EC2`` or a profile's
        ``endpoint_url`` counts as well as ``AWS_ENDPOINT_URL``.
        """
        if self._cache_namespace is None:
            endpoint = self.client("ec2").meta.endpoint_url
            if (urlsplit(endpoint).hostname or "").endswith(_AWS_DOMAINS):
                self._cache_namespace = "aws-" + self._account()
            else:
                self._cache_namespace = "endpoint-" + hashlib.sha256(endpoint.encode()).hexdigest()[:12]
        return self._cache_namespace

    def _account(self) -> str:
        """The caller's account id; if STS cannot say (e.g. no STS endpoint in an isolated VPC), a
        digest of the access key, which is as specific, only rotates with temporary credentials."""
        try:
            return self.call("sts", "GetCallerIdentity")["Account"]
        except AWSError:
            credentials = self._botocore.get_credentials()
            key = credentials.access_key if credentials else ""
            return "key-" + hashlib.sha256(key.encode()).hexdigest()[:12]

    def require_credentials(self) -> None:
        """PersistentAWSError unless the credential chain yields credentials (no API call is made).

        Without this check every call of a run fails alike and the plan drowns the one cause in
        a condition per resolution.
        """
        try:
            credentials = self._botocore.get_credentials()
            if credentials is not None:
                credentials.get_frozen_credentials()  # an expired SSO login fails here, not later
        except BotoCoreError as error:
            raise PersistentAWSError("configuration", type(error).__name__, str(error)) from None
        if credentials is None:
            raise PersistentAWSError(
                "configuration",
                "NoCredentials",
                "no AWS credentials: run `aws configure` (or `aws sso login`) and set AWS_PROFILE, or set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with an instance or pod role",
            )

    def probe(self, timeout: float = PROBE_TIMEOUT) -> None:
        """One EC2 call, not retried, with a short timeout, before the run's first real one.

        Any answer shows the endpoint is reachable, an error included (the caller may lack
        ec2:DescribeAvailabilityZones; the run's own calls will say so), except refused
        credentials, which fail every call alike (PersistentAWSError). No answer at all (refused
        connection, unknown host, a silent endpoint) raises AwsUnreachable naming the endpoint
        and the region. The probe is not counted among the run's calls.
        """
        config = self._config.merge(
            Config(connect_timeout=timeout, read_timeout=timeout, retries={"mode": "standard", "total_max_attempts": 1})
        )
        ec2 = self._botocore.create_client("ec2", config=config, endpoint_url=self._endpoints.get("ec2", self._endpoint_url))
        try:
            ec2.describe_availability_zones()
        except ClientError as error:
            answer = error.response.get("Error", {})
            code = str(answer.get("Code") or "")
            if code in _REFUSED_CREDENTIALS:
                refused = f"AWS refused the credentials ({code}): {answer.get('Message') or error}"
                raise PersistentAWSError("ec2:DescribeAvailabilityZones", code, refused) from None
        except (BotoConnectionError, HTTPClientError) as error:
            raise AwsUnreachable(ec2.meta.endpoint_url, self.region, timeout, str(error)) from None
        except (BotoCoreError, ResponseParserError):
            pass  # an answer botocore could not read is still an answer; the run's calls classify it

    # --- clients and hooks -------------------------------------------------------------

    def client(self, service: str, region: str | None = None) -> Any:
        """The client for ``service``, created once (botocore sessions are not thread-safe; clients are);
        ``region`` for a service answering elsewhere than the run's region (the Pricing API)."""
        key = service if region is None or region == self.region else f"{service}@{region}"
        with self._lock:
            if self._role is not None:  # assume the role once, before the first client that needs it
                role, self._role = self._role, None
                self._assume(role)
            if key not in self._clients:
                endpoint = self._endpoints.get(service, self._endpoint_url)
                config = self._config if key == service else self._config.merge(Config(region_name=region))
                client = self._botocore.create_client(service, config=config, endpoint_url=endpoint)
                retries.install(client, self._deadline, self._max_attempts)
                client.meta.events.register("before-call", self._count_call)
                for event, handler in self._hooks:
                    client.meta.events.register(event, handler)
                self._clients[key] = client
            return self._clients[key]

    def _assume(self, role: AwsSettings) -> None:
        """Swap the base credentials for the role's, as the pulumi-aws provider's assumeRoles does."""
        sts = self._botocore.create_client(
            "sts", config=self._config, endpoint_url=self._endpoints.get("sts", self._endpoint_url)
        )
        params = {"RoleArn": role.role_arn, "RoleSessionName": role.role_session_name or "karpenter-gitops"}
        if role.role_external_id:
            params["ExternalId"] = role.role_external_id
        try:
            credentials = sts.assume_role(**params)["Credentials"]
        except (BotoCoreError, ClientError) as error:
            raise classify(error, "AssumeRole") from None
        self._botocore.set_credentials(credentials["AccessKeyId"], credentials["SecretAccessKey"], credentials["SessionToken"])

    def register(self, event: str, handler: Callable[..., Any]) -> None:
        """Register a botocore event handler (e.g. ``before-send.ec2``) on every client of this run."""
        with self._lock:
            self._hooks.append((event, handler))
            for client in self._clients.values():
                client.meta.events.register(event, handler)

    def _count_call(self, model: Any, **_: Any) -> None:
        with self._lock:
            self._calls[model.name] += 1

    def call_counts(self) -> dict[str, int]:
        """API calls made so far, per operation (retries of one call count once; memo hits not at all)."""
        with self._lock:
            return dict(sorted(self._calls.items()))

    # --- memoised calls ----------------------------------------------------------------

    def call(self, service: str, operation: str, **params: Any) -> dict:
        """``operation`` (e.g. ``"GetParameter"``) with ``params``; failures raise Transient/PersistentAWSError."""

        def run() -> dict:
            response = getattr(self.client(service), xform_name(operation))(**params)
            response.pop("ResponseMetadata", None)
            return response

        return self._once((service, operation, "call", _canonical(params)), f"{service}:{operation}", run)

    def paginate(self, service: str, operation: str, result_key: str, *, region: str | None = None, **params: Any) -> list:
        """Every item under ``result_key`` across all pages of a paginated ``operation`` (``region``: as for ``client``)."""

        def run() -> list:
            pages = self.client(service, region).get_paginator(xform_name(operation)).paginate(**params)
            return [item for page in pages for item in page.get(result_key, [])]

        return self._once((service, region, operation, result_key, _canonical(params)), f"{service}:{operation}", run)

    def remember(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """What ``compute`` derives from this session's AWS (the catalogue, its labelled form), made once
        per session: the stacks of a fleet that share the session share it, failures included."""
        return self._once(("derived", key), "derived", compute)

    def _once(self, key: Hashable, operation: str, run: Callable[[], Any]) -> Any:
        """Run ``run`` once per key in this session; concurrent askers wait for the first answer (or error)."""
        with self._lock:
            future = self._memo.get(key)
            owner = future is None
            if owner:
                future = self._memo[key] = Future()
        if owner:
            try:
                future.set_result(run())
            except (ClientError, BotoCoreError, ResponseParserError) as error:
                future.set_exception(classify(error, operation))
            except BaseException as error:  # a bug, not AWS: waiters must not hang on it
                future.set_exception(error)
        failure = future.exception()
        if isinstance(failure, AWSError):
            # Each asker gets its own copy: raising the memo's object would chain every asker's frames
            # (and their locals: a whole stack's catalogue and mapping) onto its traceback for the run.
            raise copy.copy(failure)
        return future.result()


def _setup_problem(error: BotoCoreError) -> str:
    """What is wrong with the AWS set-up, naming the setting it comes from (botocore's words do not)."""
    if isinstance(error, ProfileNotFound):
        return (
            f"the AWS profile {error.kwargs.get('profile')!r} is in neither the AWS config nor the credentials file "
            "(AWS_PROFILE or the stack's aws:profile names it)"
        )
    if isinstance(error, ConfigParseError):
        return (
            f"the AWS config file {error.kwargs.get('path')} does not parse (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE "
            "or the stack's aws:sharedConfigFiles names it; by default ~/.aws/config and ~/.aws/credentials)"
        )
    return str(error)


def _canonical(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=str, separators=(",", ":"))


def tag_filters(tags: dict[str, str] | None) -> list[dict]:
    """EC2 filters for a selector's tags: ``tag:K=V``, or ``tag-key=K`` when the value is ``*`` (Karpenter's rule)."""
    return [
        {"Name": "tag-key", "Values": [key]} if value == "*" else {"Name": f"tag:{key}", "Values": [value]}
        for key, value in sorted((tags or {}).items())
    ]
