"""What the userData analysis reports: a problem names the rule it belongs to.

The ids are the rule ids registered in :mod:`karpenter_gitops.rules.userdata`; the analysis is
pure text in, problems out, so renderers and the Pulumi layer can call it without the registry.
"""

from __future__ import annotations

from dataclasses import dataclass

SIZE = "userdata/size"
SIZE_NEAR_LIMIT = "userdata/size-near-limit"
SIZE_LIMIT = "userdata/size-limit"  # the same limit, judged on the userData Karpenter merges and sends
FOLDED_YAML = "userdata/folded-yaml"
MIME = "userdata/mime"
MIME_IGNORED = "userdata/mime-part-ignored"
BOOTSTRAP_ARGS = "userdata/bootstrap-args"
TAINT = "userdata/taint"
TAINT_QUOTES = "userdata/taint-quotes"
AL2023_BOOTSTRAP = "userdata/al2023-bootstrap-sh"
NODECONFIG = "userdata/nodeconfig"
TOML = "userdata/toml"
TOML_DOTTED_KEY = "userdata/toml-dotted-key"
BOTTLEROCKET_NODE_TAINTS = "userdata/bottlerocket-node-taints"
BOTTLEROCKET_UNKNOWN_SETTING = "userdata/bottlerocket-unknown-setting"
POWERSHELL_TAGS = "userdata/powershell-tags"
REGISTRATION_TAINT = "userdata/registration-taint"
REGISTRATION_TAINT_LOGGED = "userdata/registration-taint-logged"  # the same problem, judged on releases that let it pass
MANAGED_REGISTRATION_TAINT = "userdata/managed-registration-taint"
UNKNOWN_KARPENTER_TAINT = "userdata/unknown-karpenter-taint"
OWN_BOOTSTRAP = "userdata/own-bootstrap"
REGISTER_TAINTS_FLAG = "userdata/register-with-taints-flag"
FORMAT_MISMATCH = "userdata/format-mismatch"
BOTTLEROCKET_OVERRIDDEN_SETTING = "userdata/bottlerocket-overridden-setting"
BOTTLEROCKET_SETTING_TYPE = "userdata/bottlerocket-setting-type"
BOTTLEROCKET_RELEASE_SETTING = "userdata/bottlerocket-release-setting"
BOTTLEROCKET_LATEST_SETTING = "userdata/bottlerocket-latest-setting"  # the same, judged for @latest or a newer release


@dataclass(frozen=True)
class Problem:
    """A userData problem a family's check found: its rule, message and hint."""

    rule: str
    message: str
    hint: str | None = None
