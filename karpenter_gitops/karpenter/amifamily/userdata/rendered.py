"""The userData Karpenter hands EC2 for a class, as small as it can possibly be: what the size limit is judged on.

Karpenter never sends the userData as written. For every family but Custom it merges its own
bootstrap in (``pkg/providers/amifamily/bootstrap`` of the AWS provider: a MIME archive for AL2 and
AL2023, TOML settings re-emitted for Bottlerocket, a PowerShell block for Windows), base64-encodes the
result and puts it in ``ec2:CreateLaunchTemplate``. EC2 counts the userData before base64 (the API
reference of ``RequestLaunchTemplateData.UserData``: base64 text, at most 16 KB; the EC2 user guide,
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-add-user-data.html: the 16 KB are the raw
bytes, base64 makes them ceil(n/3)*4) and refuses more than 16,384 with ``InvalidUserData.Malformed``
"User data is limited to 16384 bytes"; Karpenter measures the same decoded bytes for its
``userdata_bytes`` metric (``launchtemplate/metrics.go``, 1.14.1 and later).

Offline we do not know the cluster's name, endpoint, CA bundle or service CIDR, nor the labels and
taints of the NodePools that launch the class; every family module renders with those empty, and
with the labels and taints Karpenter's validation adds to every launch template (the registration
taint; the ``do-not-sync-taints`` label from 1.5). So a rendering is a lower bound: a real launch
template is this or larger, and one over the limit is refused for certain. Each family's rendering
is checked byte for byte against Karpenter v1.15.0's own ``Script()`` with the same empty inputs.
"""

from __future__ import annotations

from collections.abc import Iterable

from karpenter_gitops.core.name_validation import go_quote
from karpenter_gitops.core.versions import Release

BOUNDARY = "//"  # the boundary of the archive Karpenter writes
SHELL_SCRIPT = 'text/x-shellscript; charset="us-ascii"'
REGISTRATION_TAINT = ("karpenter.sh/unregistered", "NoExecute")
DO_NOT_SYNC_TAINTS = ("karpenter.sh/do-not-sync-taints", "true")
# Karpenter labels every node of a managed family with do-not-sync-taints from this release on.
DO_NOT_SYNC_TAINTS_SINCE = Release((1, 5))


def validation_labels(release: Release) -> dict[str, str]:
    """The labels Karpenter passes to a managed family's bootstrap when no NodePool adds any."""
    return dict([DO_NOT_SYNC_TAINTS]) if release >= DO_NOT_SYNC_TAINTS_SINCE else {}


def node_label_flag(labels: dict[str, str]) -> str | None:
    """kubelet's --node-labels as Karpenter writes it (sorted, Go ``%q``), or None without labels."""
    if not labels:
        return None
    return "--node-labels=" + go_quote(",".join(f"{key}={labels[key]}" for key in sorted(labels)))


def kubelet_extra_args(release: Release) -> str:
    """The kubelet flags the bootstrap scripts (AL2, Windows) pass: the labels, then the registration taint."""
    key, effect = REGISTRATION_TAINT
    flags = [node_label_flag(validation_labels(release)), "--register-with-taints=" + go_quote(f"{key}:{effect}")]
    return " ".join(flag for flag in flags if flag)


def mime_archive(parts: Iterable[tuple[Iterable[tuple[str, str]], str]]) -> str:
    """A MIME archive as Karpenter writes one: its two headers, Go's multipart writer with boundary ``//``
    (headers sorted by name), then every carriage return removed, the user's own included."""
    out = [f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{BOUNDARY}"\n\n']
    for index, (headers, content) in enumerate(parts):
        out.append(("" if index == 0 else "\n") + f"--{BOUNDARY}\n")
        out.extend(f"{name}: {value}\n" for name, value in sorted(headers))
        out.append("\n" + content)
    out.append(f"\n--{BOUNDARY}--\n")
    return "".join(out).replace("\r", "")
