"""The only Kubernetes I/O: read Karpenter's NodeClaims and the Nodes they became.

Read-only, two list calls through the ``kubernetes`` client. An unusable kubeconfig is the
user's input error (exit 2); a cluster that cannot be reached is :class:`ClusterUnavailable`, so
the preview can still print without its node-impact counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import urllib3
import yaml
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.exceptions import ApiException

from karpenter_gitops.core.cluster import FleetNode, fleet_from
from karpenter_gitops.core.errors import InputError

TIMEOUT_SECONDS = 10


class ClusterUnavailable(Exception):
    """The API server could not be asked (unreachable, refused, or answered with an error)."""


def api_client(kubeconfig: Path, context: str | None = None) -> client.ApiClient:
    """A client for the kubeconfig's (or ``context``'s) cluster; InputError if the file is unusable."""
    if not kubeconfig.is_file():
        raise InputError("no such kubeconfig file", str(kubeconfig), hint="check --kubeconfig")
    configuration = client.Configuration()
    try:
        kube_config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=configuration)
    except (kube_config.ConfigException, yaml.YAMLError, OSError, ValueError, TypeError, KeyError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"unusable kubeconfig: {message}", str(kubeconfig)) from None
    configuration.retries = 1
    return client.ApiClient(configuration)


def read_fleet(kubeconfig: Path, context: str | None = None) -> tuple[FleetNode, ...]:
    """Every NodeClaim of the cluster with its Node's labels."""
    with api_client(kubeconfig, context) as api:
        try:
            claims = client.CustomObjectsApi(api).list_cluster_custom_object(
                "karpenter.sh", "v1", "nodeclaims", _request_timeout=TIMEOUT_SECONDS, _preload_content=False
            )
            nodes = client.CoreV1Api(api).list_node(_request_timeout=TIMEOUT_SECONDS, _preload_content=False)
            claim_items = json.loads(claims.data).get("items") or []
            node_items = json.loads(nodes.data).get("items") or []
        except ApiException as err:
            raise ClusterUnavailable(f"the API server answered {err.status} {err.reason}") from None
        except (urllib3.exceptions.HTTPError, OSError) as err:
            raise ClusterUnavailable(f"cannot reach the API server at {api.configuration.host}: {type(err).__name__}") from None
        except (ValueError, AttributeError) as err:
            raise ClusterUnavailable(f"the API server sent something that is not a list: {err}") from None
    node_labels = {
        (item.get("metadata") or {}).get("name", ""): (item.get("metadata") or {}).get("labels") or {} for item in node_items
    }
    return fleet_from(claim_items, node_labels)
