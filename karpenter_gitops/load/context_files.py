"""Files read only for what they define (``validate --context``): the rest of a repository.

A pull request that touches one NodePool file is validated on that file, but its EC2NodeClass
lives elsewhere in the repository. Given the repository (or any part of it) as context, a
reference that resolves there is sound, and one that resolves nowhere is a real error. Nothing in
the context is judged, and files that are not Karpenter manifests (Helm templates, CI settings,
YAML that does not parse) are passed over: a repository holds many.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.model import AWS_GROUP, EC2NODECLASS
from karpenter_gitops.load import files


def node_class_names(paths: Iterable[str | Path]) -> frozenset[str]:
    """The names of the EC2NodeClass manifests under ``paths``; a named path that does not exist is an InputError."""
    names: set[str] = set()
    for path in files.expand(paths):
        try:
            (read,) = files.read_files([path])  # loaded as the judged files are (`-` is standard input)
        except InputError:  # not YAML, too big, binary: not a manifest either
            continue
        for doc in read.documents:
            if not isinstance(doc, Mapping) or doc.get("kind") != EC2NODECLASS:
                continue
            api, metadata = doc.get("apiVersion"), doc.get("metadata")
            name = metadata.get("name") if isinstance(metadata, Mapping) else None
            if isinstance(api, str) and api.startswith(AWS_GROUP + "/") and isinstance(name, str) and name:
                names.add(name)
    return frozenset(names)
