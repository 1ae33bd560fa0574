"""The components as the Pulumi package ``karpenter-gitops``, for programs in any language Pulumi runs.

``pulumi-resource-karpenter-gitops`` (a console script of the wheel) is an executable resource plugin: the
engine starts it from PATH or from the path a program's ``packages:`` names, and it serves the components
over Pulumi's ``Construct`` call through the Python SDK's component provider host, which infers the schema
from the components' ``args`` annotations. An executable needs no language host to start it, where a
plugin directory (``PulumiPlugin.yaml``, ``runtime: python``) would need the Python one to run plugins.

The components served are the Python components themselves, so a YAML or TypeScript program runs the
same reconciliation and the same checks as a Python one. Two things a schema cannot say the Python way
are bridged here, and only here:

* ``NodePool`` takes its ``NodeClass`` as an object. Across languages that is a resource reference to a
  ``NodeClass`` of the same program; the engine constructs both in this one process, so the reference is
  resolved to the very component built earlier (:class:`BuiltNodeClasses`).
* A refusal (a class that would never become Ready) is one line in Python. The SDK's provider server
  would add its own stack trace to any exception from a constructor, so the refusal is handed to the
  engine as an input error of the property it names, which the CLI prints as the line alone.
"""

import importlib.metadata
import json
import sys
from typing import Any, NotRequired, TypedDict, cast

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.provider import main as serve
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.provider import ConstructResult
from pulumi.provider.server import ComponentInitError

from karpenter_gitops.core.text import visible
from karpenter_gitops_pulumi import controller, fleet, nodeclass, nodepool, scheduling
from karpenter_gitops_pulumi.errors import StackInputError

PACKAGE = "karpenter-gitops"
NODE_CLASS_TYPE = f"{PACKAGE}:index:NodeClass"


class BuiltNodeClasses(pulumi.runtime.ResourceModule):
    """The NodeClass components this process built, by name: what a resource reference to one resolves to.

    Registered as the package's resource module, so the SDK hands a ``NodePool`` the component itself
    (its reconciled outputs, and the dependency that makes the pool wait for its class)."""

    def __init__(self) -> None:
        self.built: dict[str, nodeclass.NodeClass] = {}

    def version(self) -> None:
        return None

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        if typ == NODE_CLASS_TYPE and name in self.built:
            return self.built[name]
        raise InputPropertyError("nodeClass", f"{urn} is not a NodeClass of this program: {NODE_CLASS_HINT}")

    def node_class(
        self, name: str, args: nodeclass.NodeClassArgs, opts: pulumi.ResourceOptions | None = None
    ) -> nodeclass.NodeClass:
        """Build a NodeClass and keep it for the NodePools that name it."""
        self.built[name] = nodeclass.NodeClass(name, args, opts)
        return self.built[name]


NODE_CLASS_HINT = "pass a karpenter-gitops NodeClass declared in the same program (the resource, not its name)"


class PackageNodePoolArgs(TypedDict):
    """One NodePool; the component's resource name is its ``metadata.name``. Its class is a reference to a
    component (the Python ``NodePoolArgs`` holds the object itself)."""

    spec: dict[str, Any]
    """The NodePool spec, spelled as the CRD; ``template.spec.nodeClassRef`` is set from ``nodeClass``."""
    node_class: Any
    """The NodeClass of this program the pool launches with (a reference to the component, not a name)."""
    secret: NotRequired[bool]
    """The spec comes from secret config: the NodePool's spec stays secret."""


class NodePool(nodepool.NodePool):
    """A NodePool applied after its class (and therefore after the class's reconciliation), a NodeClass of
    the same program."""

    def __init__(self, name: str, args: PackageNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        node_class = args["node_class"]
        if not isinstance(node_class, nodeclass.NodeClass):
            raise InputPropertyError("nodeClass", f"must be a NodeClass: {NODE_CLASS_HINT}")
        pool = nodepool.NodePoolArgs(spec=args["spec"], node_class=node_class, secret=bool(args.get("secret")))
        super().__init__(name, pool, opts)


COMPONENTS: list[type[pulumi.ComponentResource]] = [
    nodeclass.NodeClass,
    NodePool,
    scheduling.NodeOverlay,
    scheduling.CapacityBuffer,
    fleet.Fleet,
    controller.KarpenterController,
]


class Provider(ComponentProvider):
    """The component provider of the package, with the two bridges the module docstring describes."""

    def __init__(self, version: str, built: BuiltNodeClasses) -> None:
        super().__init__(COMPONENTS, PACKAGE, version=version)
        # The provider calls the constructor by the component's name; this one keeps what it built.
        self._components["NodeClass"] = cast(type[pulumi.ComponentResource], built.node_class)
        schema = json.loads(cast(str, self.schema))
        pool = schema["resources"][f"{PACKAGE}:index:NodePool"]
        pool["inputProperties"]["nodeClass"] = {
            "$ref": f"#/resources/{NODE_CLASS_TYPE}",
            "description": pool["inputProperties"]["nodeClass"]["description"],
        }
        # The analyzer reads an output's description from the class that declares it: NodePool's are its base's.
        analyzer, python_names = Analyzer(PACKAGE), self._component_defs["NodePool"].outputs_mapping
        for key, output in pool["properties"].items():
            output.setdefault("description", analyzer.get_docstring(nodepool.NodePool, python_names[key]))
        self.schema = json.dumps(schema)

    def construct(
        self, name: str, resource_type: str, inputs: pulumi.Inputs, options: pulumi.ResourceOptions | None = None
    ) -> ConstructResult:
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as failure:
            if isinstance(failure.inner, InputPropertyError):
                raise failure.inner from None
            if isinstance(failure.inner, StackInputError):  # one line (str of an InputError shows a newline as \n)
                raise InputPropertyError(_property(visible(failure.inner.message)), str(failure.inner)) from None
            raise


def _property(message: str) -> str:
    """The input a refusal is about: the first field path its line names (``EC2NodeClass x: spec.role: ...``)."""
    parts = message.split(": ")
    return parts[1] if len(parts) > 2 and parts[1].split(".")[0].isidentifier() else ""


def version() -> str:
    """The package's version: the installed wheel's, which the schema and the generated SDKs carry."""
    return importlib.metadata.version(PACKAGE)


def main() -> None:
    """``pulumi-resource-karpenter-gitops``: serve the components to the engine that started the plugin (what
    ``component_provider_host`` does, with this package's provider)."""
    built = BuiltNodeClasses()
    pulumi.runtime.register_resource_module(PACKAGE, "index", built)
    serve(Provider(version(), built), sys.argv[1:])
