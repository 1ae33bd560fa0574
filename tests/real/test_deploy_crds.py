"""deploy/'s objects created (server-side dry run, strict field validation) on the real API server,
with Argo CD's and Flux's CRDs read from their verified Go module zips: a field renamed upstream fails here.

The Pulumi Kubernetes Operator's module is not served by the module proxy here (403), so its Stacks
stay checked against deploy/pulumi-operator/stack-schema.json (tests/deploy/test_pulumi_operator.py).
ConfigManagementPlugin is no API object: the Argo CD sidecar reads it as a file.
"""

from __future__ import annotations

import re
import time
import zipfile

import pytest
import yaml
from conftest import PROJECT
from support.api_server import kube_client, wait_established
from support.real_tools import downloaded

pytestmark = pytest.mark.real
ARGO_CD = "github.com/argoproj/argo-cd/v3@v3.6.1"
# deploy/ files that are strategic-merge patches onto an upstream object, not objects of their own
PATCHES = {"deploy/argocd/repo-server-sidecar.yaml": (ARGO_CD, "/manifests/base/repo-server/argocd-repo-server-deployment.yaml")}
# module → the CRD files deploy/ needs from it
MODULES = {
    ARGO_CD: r"/manifests/crds/application-crd\.yaml$",
    "github.com/fluxcd/kustomize-controller@v1.10.1": r"/config/crd/bases/kustomize\.toolkit\.fluxcd\.io_kustomizations\.yaml$",
}
NOT_API_OBJECTS = {"ConfigManagementPlugin"}
UNSERVED = {"pulumi.com/v1"}  # no CRD to judge them by (see the module docstring)


def _documents() -> list[tuple[str, dict]]:
    found = []
    for path in sorted((PROJECT / "deploy").rglob("*.yaml")):
        if str(path.relative_to(PROJECT)) in PATCHES:
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") not in NOT_API_OBJECTS and doc.get("apiVersion") not in UNSERVED:
                found.append((f"{path.relative_to(PROJECT)}:{doc['kind']}/{doc['metadata']['name']}", doc))
    return found


DOCUMENTS = _documents()


@pytest.fixture(scope="module")
def upstream_crds(api_server):
    """Argo CD's and Flux's CRDs and the namespaces deploy/ uses, removed again when the module ends."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = kube_client(api_server)
    extensions, core = client.ApiextensionsV1Api(api), client.CoreV1Api(api)
    names = []
    for module, pattern in MODULES.items():
        with zipfile.ZipFile(downloaded(module)["Zip"]) as archive:
            for member in archive.namelist():
                if re.search(pattern, member):
                    crd = yaml.safe_load(archive.read(member))
                    extensions.create_custom_resource_definition(crd)
                    names.append(crd["metadata"]["name"])
    namespaces = sorted({doc["metadata"]["namespace"] for _, doc in DOCUMENTS if doc["metadata"].get("namespace")} | {"argocd"})
    for namespace in namespaces:
        try:
            core.create_namespace({"metadata": {"name": namespace}})
        except ApiException as error:
            if error.status != 409:
                raise
    wait_established(extensions, names)
    yield api
    for name in names:
        extensions.delete_custom_resource_definition(name)


@pytest.mark.parametrize("doc", [doc for _, doc in DOCUMENTS], ids=[what for what, _ in DOCUMENTS])
def test_deploy_objects_are_served_as_written(upstream_crds, doc):
    from kubernetes import dynamic

    resources = dynamic.DynamicClient(upstream_crds).resources
    for _attempt in range(50):  # discovery learns a new CRD's kind shortly after it is established
        try:
            resource = resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
            break
        except dynamic.exceptions.ResourceNotFoundError:
            resources.invalidate_cache()
            time.sleep(0.1)
    else:
        pytest.fail(f"the API server serves no {doc['apiVersion']} {doc['kind']}")
    applied = _apply(resource, doc)
    assert applied.metadata.name == doc["metadata"]["name"]


def _apply(resource, doc: dict):
    """Server-side apply, dry run: a field the schema does not declare is an error (the dynamic client
    cannot send fieldValidation=Strict with a create), and an object the fixture already made (a
    namespace) is applied over rather than refused as existing."""
    namespace = doc["metadata"].get("namespace") if resource.namespaced else None
    return resource.server_side_apply(body=doc, namespace=namespace, field_manager="karpenter-gitops-tests", dry_run="All")


def test_a_field_renamed_upstream_is_refused(upstream_crds):
    """The check above can fail: the Flux Kustomization with a field its CRD does not have."""
    from kubernetes import dynamic

    (doc,) = [doc for what, doc in DOCUMENTS if doc["kind"] == "Kustomization"][:1]
    resource = dynamic.DynamicClient(upstream_crds).resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    renamed = {**doc, "spec": {**doc["spec"], "healthCheck": []}}
    with pytest.raises(dynamic.exceptions.DynamicApiError, match="field not declared in schema"):
        _apply(resource, renamed)


def _upstream(module: str, suffix: str) -> dict:
    with zipfile.ZipFile(downloaded(module)["Zip"]) as archive:
        (member,) = [name for name in archive.namelist() if name.endswith(suffix)]
        return yaml.safe_load(archive.read(member))


@pytest.mark.parametrize("patch_file", sorted(PATCHES))
def test_deploy_patches_apply_to_the_upstream_objects(upstream_crds, patch_file):
    """The sidecar patch merged (strategic merge, dry run) into Argo CD's own repo-server Deployment: the
    server refuses a mount of a volume the result lacks, or a field the Deployment does not have."""
    from kubernetes import client

    module, suffix = PATCHES[patch_file]
    target = _upstream(module, suffix)
    patch = yaml.safe_load((PROJECT / patch_file).read_text())
    apps = client.AppsV1Api(upstream_crds)
    namespace = patch["metadata"]["namespace"]
    apps.create_namespaced_deployment(namespace, target)
    try:
        merged = apps.patch_namespaced_deployment(
            target["metadata"]["name"], namespace, patch, dry_run="All", field_validation="Strict"
        )
    finally:
        apps.delete_namespaced_deployment(target["metadata"]["name"], namespace)
    containers = {c.name for c in merged.spec.template.spec.containers}
    assert {"karpenter-gitops", *(c["name"] for c in target["spec"]["template"]["spec"]["containers"])} <= containers
