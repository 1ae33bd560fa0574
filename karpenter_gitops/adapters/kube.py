"""The only Kubernetes I/O: read Karpenter's objects, the NodeClaims and the Nodes they became.

Read-only: list and get through the ``kubernetes`` client, lists paged so a cluster of thousands
of NodeClaims is read a page at a time and only what is compared is kept. An unusable kubeconfig
or context is the user's input error (exit 2), and so is RBAC that forbids a read (the fix is a
role, not a retry); a cluster that cannot be reached is :class:`ClusterUnavailable`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.exceptions import ApiException

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.core.errors import InputError

TIMEOUT_SECONDS = 10
PAGE = 500  # objects per list call: memory stays bounded by a page, not by the cluster

#: What verify and the preview read (resource, group, version), and so the RBAC they need: get/list only.
EC2NODECLASSES = ("ec2nodeclasses", "karpenter.k8s.aws", "v1")
NODEPOOLS = ("nodepools", "karpenter.sh", "v1")
NODECLAIMS = ("nodeclaims", "karpenter.sh", "v1")
NODEOVERLAYS = ("nodeoverlays", "karpenter.sh", "v1alpha1")
NODES = ("nodes", "", "v1")
PODS = ("pods", "", "v1")  # of every namespace: the forecast from the existing nodes reads their load
CRDS = ("customresourcedefinitions", "apiextensions.k8s.io", "v1")


class ClusterUnavailable(Exception):
    """The API server could not be asked (unreachable, refused, or answered with an error)."""


def api_client(kubeconfig: Path | None, context: str | None = None) -> client.ApiClient:
    """A client for the kubeconfig's (or ``context``'s) cluster; with no kubeconfig, the pod's own
    service account when running in a cluster, else ``$KUBECONFIG`` or ``~/.kube/config``."""
    configuration = client.Configuration()
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST") and context is None:
        try:
            kube_config.load_incluster_config(client_configuration=configuration)
        except kube_config.ConfigException as err:
            raise InputError(f"in-cluster configuration unusable: {err}", hint="pass --kubeconfig") from None
    else:
        kubeconfig = kubeconfig or _default_kubeconfig()
        if not kubeconfig.is_file():
            raise InputError("no such kubeconfig file", str(kubeconfig), hint="check --kubeconfig")
        try:
            # kubectl and the client library read a repeated key without complaint (the last one wins): so do we here
            if not isinstance(yaml_reader.document(kubeconfig.read_text(), unique_keys=False), dict):
                raise InputError(
                    "not a kubeconfig: the file is not a YAML mapping of clusters, contexts and users",
                    str(kubeconfig),
                    hint="check --kubeconfig",
                )
            contexts = {entry.get("name") for entry in kube_config.list_kube_config_contexts(str(kubeconfig))[0]}
            if context is not None and context not in contexts:
                known = ", ".join(sorted(str(c) for c in contexts)) or "none"
                raise InputError(
                    f"no context {context!r} in the kubeconfig (it has: {known})", str(kubeconfig), hint="check --context"
                )
            kube_config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=configuration)
        except (
            kube_config.ConfigException,
            yaml_reader.YAMLError,
            OSError,
            UnicodeDecodeError,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
        ) as err:
            message = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise InputError(f"unusable kubeconfig: {message}", str(kubeconfig)) from None
    configuration.retries = 1
    return client.ApiClient(configuration)


def _default_kubeconfig() -> Path:
    first = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    return Path(first) if first else Path.home() / ".kube" / "config"


class Forbidden(InputError):
    """RBAC refused a read: the user needs a role, not a retry."""


def _call(api: client.ApiClient, resource: tuple[str, str, str], read: Callable[[], Any]) -> Any:
    """One request, its failures in the user's terms."""
    plural, group, _version = resource
    what = f"{plural}.{group}" if group else plural
    try:
        return read()
    except ApiException as err:
        if err.status in (401, 403):
            who = "authenticate" if err.status == 401 else "list"
            raise Forbidden(
                f"the API server refused to let us {who} {what} ({err.status} {err.reason})",
                api.configuration.host,
                hint=f"grant get and list on {what} (verify is read-only: get/list is all it needs)",
            ) from None
        raise ClusterUnavailable(f"the API server answered {err.status} {err.reason} to a list of {what}") from None
    except (urllib3.exceptions.HTTPError, OSError) as err:
        raise ClusterUnavailable(f"cannot reach the API server at {_host_and_port(api)}: {_why_unreachable(err)}") from None
    except (ValueError, AttributeError) as err:
        raise ClusterUnavailable(f"the API server sent something that is not a list of {what}: {err}") from None


def _host_and_port(api: client.ApiClient) -> str:
    """``host:port`` of the API server, the port made explicit (what a firewall rule or a tunnel needs)."""
    url = urllib3.util.parse_url(api.configuration.host)
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.host}:{port}"


def _why_unreachable(err: BaseException) -> str:
    """The operating system's reason behind a failed request (``Connection refused``, ``Name or service not
    known``, ``timed out``), not urllib3's wrapper (``MaxRetryError``): the innermost error of the chain that
    says something, without its urllib3 prefix."""
    chain: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in chain:
        chain.append(current)
        reason = getattr(current, "reason", None)
        current = reason if isinstance(reason, BaseException) else current.__cause__ or current.__context__
    for cause in reversed(chain):
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror
        if isinstance(cause, TimeoutError | urllib3.exceptions.TimeoutError):
            return "timed out"
    text = str(chain[-1]).splitlines()[0] if str(chain[-1]) else type(chain[-1]).__name__
    return text.split(": ", 1)[-1] if text.startswith("<") else text


def _pages(api: client.ApiClient, resource: tuple[str, str, str], missing_ok: bool = False) -> Iterator[Mapping[str, Any]]:
    """Every object of a cluster-scoped resource, a page at a time; none when ``missing_ok`` and the
    resource is not served (its CRD is not installed). A server (or a proxy before it) that hands out a
    continue token it gave before would be read forever: that is said, not looped."""
    plural, group, version = resource
    token = None
    given: set[str] = set()
    while True:

        def read(token=token):
            kwargs = {"limit": PAGE, "_request_timeout": TIMEOUT_SECONDS, "_preload_content": False}
            if token:
                kwargs["_continue"] = token
            if group:
                answer = client.CustomObjectsApi(api).list_cluster_custom_object(group, version, plural, **kwargs)
            elif plural == PODS[0]:
                answer = client.CoreV1Api(api).list_pod_for_all_namespaces(**kwargs)
            else:
                answer = client.CoreV1Api(api).list_node(**kwargs)
            return json.loads(answer.data)

        try:
            page = _call(api, resource, read)
        except ClusterUnavailable:
            if missing_ok and _not_served(api, resource):
                return
            raise
        if not isinstance(page, Mapping):
            raise ClusterUnavailable(f"the API server sent something that is not a list of {plural}")
        yield from (item for item in page.get("items") or () if isinstance(item, Mapping))
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return
        if token in given:
            raise ClusterUnavailable(
                f"the API server gave the same continue token twice while listing {plural}: its pages never end"
            )
        given.add(token)


def _not_served(api: client.ApiClient, resource: tuple[str, str, str]) -> bool:
    plural, group, version = resource
    try:
        resources = api.call_api(
            f"/apis/{group}/{version}",
            "GET",
            response_type="object",
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _request_timeout=TIMEOUT_SECONDS,
        )
    except ApiException as err:
        return err.status == 404
    except (urllib3.exceptions.HTTPError, OSError):
        return False
    return plural not in {r.get("name") for r in (resources or {}).get("resources") or ()}


@dataclass(frozen=True)
class LiveCluster:
    """What verify compares: Karpenter's objects as stored, their CRDs' schemas, and the NodeClaims and Nodes."""

    host: str
    objects: Mapping[tuple[str, str], Mapping[str, Any]]  # (kind, name) → the stored object
    schemas: Mapping[str, Mapping[str, Any]]  # kind → the served version's openAPIV3Schema, when readable
    state: ClusterState


_KINDS = {EC2NODECLASSES: "EC2NodeClass", NODEPOOLS: "NodePool", NODEOVERLAYS: "NodeOverlay"}


def read_cluster(kubeconfig: Path | None, context: str | None = None) -> LiveCluster:
    """Karpenter's objects, the CRDs that default them and the NodeClaims with their Nodes' labels."""
    with api_client(kubeconfig, context) as api:
        objects = {}
        for resource, kind in _KINDS.items():
            for item in _pages(api, resource, missing_ok=resource is NODEOVERLAYS):
                metadata = item.get("metadata") if isinstance(item.get("metadata"), Mapping) else {}
                objects[(kind, str(metadata.get("name", "")))] = item
        return LiveCluster(api.configuration.host, objects, _schemas(api), _state(api))


def _read_crd(api: client.ApiClient, name: str) -> Any:
    """The CRD ``name`` as the JSON the API server sends, not the client's models of it."""
    return json.loads(
        client.ApiextensionsV1Api(api)
        .read_custom_resource_definition(name, _request_timeout=TIMEOUT_SECONDS, _preload_content=False)
        .data
    )


def _schemas(api: client.ApiClient) -> dict[str, Mapping[str, Any]]:
    """The served schema of each kind's CRD; a CRD we may not read leaves its kind out (compared without defaults)."""
    found = {}
    for resource, kind in _KINDS.items():
        plural, group, version = resource
        try:
            crd = _call(api, CRDS, partial(_read_crd, api, f"{plural}.{group}"))
        except (Forbidden, ClusterUnavailable):
            continue
        for served in (crd.get("spec") or {}).get("versions") or ():
            schema = (served.get("schema") or {}).get("openAPIV3Schema")
            if served.get("name") == version and isinstance(schema, Mapping):
                found[kind] = schema
    return found


def _state(api: client.ApiClient) -> ClusterState:
    """The NodeClaims, Nodes and Pods, a page at a time: only the fields counted are kept. Pods the
    identity may not list are said in a note (the node counts need none of them)."""
    claims, nodes = list(_pages(api, NODECLAIMS)), list(_pages(api, NODES))
    try:
        return ClusterState.of(claims, nodes, (), _pages(api, PODS))
    except Forbidden as error:
        return ClusterState.of(claims, nodes, (f"pods not read, the forecast starts from nodes without their pods: {error}",))


def read_state(kubeconfig: Path, context: str | None = None) -> ClusterState:
    """Every NodeClaim of the cluster and the Node it became."""
    with api_client(kubeconfig, context) as api:
        return _state(api)
