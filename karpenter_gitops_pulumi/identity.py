"""One identity per Kubernetes object, whichever way a program declares it.

A Pulumi resource is known by its URN, which holds the types of its parents: a class declared in code
at the top of a program (``NodeClass("gpu", …)``) and the same class from the stack file (a child of
``Fleet``) are two resources to the engine. Moving a class from one form to the other would then create
the "new" one, which takes over the live object, and delete the "old" one, which deletes it: the live
EC2NodeClass and NodePool vanish, and Karpenter drains their nodes. Each component therefore names the
other form's URN as an alias; the engine carries the alias to the component's children, so the move is
a no-op for the EC2NodeClass, the NodePool and the reconciliation alike.

A component nested in a program's own component has a URN of that component's type too; the program
names the alias itself (``aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]`` when it moved the
component in from the top, as docs/guides/pulumi.md shows).
"""

from __future__ import annotations

import copy

import pulumi

from karpenter_gitops.core.errors import InputError

FLEET_TYPE = "karpenter-gitops:index:Fleet"


def with_the_other_forms_alias(opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """``opts`` with the alias of the other form: under a Fleet, the top of the program; at the top, a
    Fleet's child (a URN holds its parents' types, not their names, so any Fleet's will do)."""
    opts = opts or pulumi.ResourceOptions()
    parent = opts.parent
    if parent is not None and getattr(parent, "_type", None) != FLEET_TYPE:
        # nested in the program's own component (its alias is the program's to give), or served by the package's
        # provider to a program in another language (the parent is then a URN alone, of that program's choosing)
        return opts
    if parent is None:
        fleet = f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{FLEET_TYPE}::{pulumi.get_stack()}"
        alias = pulumi.Alias(parent=fleet)
    else:
        alias = pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[alias]))


def taken_import(
    opts: pulumi.ResourceOptions | None, name: str, kind: str, where: str
) -> tuple[pulumi.ResourceOptions | None, str | None]:
    """``opts`` without ``import_``, and the id to import the component's custom resource with.

    A component is no cloud object: the engine has nothing to import for it. ``import_`` on ``NodeClass`` or
    ``NodePool`` means "adopt the live EC2NodeClass / NodePool of this name", so it goes to the custom resource
    (whose id is the object's name: both kinds are cluster-scoped); a different name would adopt another
    object under this one's URN and is refused in one line."""
    if opts is None or not opts.import_:
        return opts, None
    if opts.import_ != name:
        raise InputError(
            f"import_ {opts.import_!r} is not this {kind}'s name",
            where,
            hint=f"import_={name!r} adopts the live {kind} {name!r}; the object to adopt must have the component's name",
        )
    rest = copy.copy(opts)
    rest.import_ = None
    return rest, name
