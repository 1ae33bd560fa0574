"""userData rules on its format and size: what EC2, Karpenter's merge or the node's bootstrapper cannot read
(too large, folded YAML, broken MIME, lost bootstrap flags, an invalid NodeConfig, the wrong format for the image).
"""

from __future__ import annotations

from collections.abc import Iterable

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, EC2NodeClass
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import problems as ids
from karpenter_gitops.rules.registry import Context, rule
from karpenter_gitops.rules.userdata.userdata_kit import (
    AL2,
    AL2023,
    BOTTLEROCKET,
    CUSTOM,
    MIME,
    PATH,
    SCRIPT,
    WINDOWS,
    bootstrap_call,
    example,
    node_config,
    userdata_rule,
)

userdata_rule(
    ids.SIZE,
    Severity.ERROR,
    "userData over 16,384 bytes: EC2 refuses the launch template, so no node launches.",
    "Fetch bulky content (scripts, certificates) from S3 or SSM at boot instead of inlining it.",
    good=(example(AL2023, SCRIPT),),
    bad=(example(AL2023, "#!/bin/bash\n# " + "x" * 16_400 + "\n"),),
    origin="karpenter",
)

userdata_rule(
    ids.SIZE_NEAR_LIMIT,
    Severity.WARNING,
    "userData at 90% or more of the 16 KiB limit; Karpenter logs a warning and adds its own bootstrap on top.",
    "Keep userData small: fetch bulky content from S3 or SSM at boot.",
    good=(example(AL2023, SCRIPT),),
    bad=(example(AL2023, "#!/bin/bash\n# " + "x" * 15_000 + "\n"),),
    origin="karpenter",
)


@rule(
    ids.SIZE_LIMIT,
    Severity.ERROR,
    [EC2NODECLASS],
    "userData within 16,384 bytes as written, over once Karpenter merges its bootstrap in for the family: EC2 counts "
    "the decoded userData (RequestLaunchTemplateData.UserData, 'limited to 16 KB', raw before base64), refuses "
    "ec2:CreateLaunchTemplate and no node launches (1.14.1 on: ValidationSucceeded=False, UserDataSizeLimitExceeded). "
    "Measured on the smallest merge possible, so a finding is certain.",
    "Cut the excess the message names: fetch bulky content (scripts, certificates) from S3 or SSM at boot.",
    good=(example(AL2023, SCRIPT), example(CUSTOM, "#" * 16_383 + "\n")),
    bad=(example(AL2023, "#!/bin/bash\n# " + "x" * 16_000 + "\n"), example(WINDOWS, "# " + "x" * 16_100 + "\n")),
)
def size_limit(obj: EC2NodeClass, ctx: Context) -> Iterable[Violation]:
    return [Violation(PATH, p.message, p.hint) for p in amifamily.size_limit(obj, ctx.release)]


userdata_rule(
    ids.FOLDED_YAML,
    Severity.ERROR,
    "userData written as a folded YAML scalar (userData: >): newlines became spaces, so a script is one comment line.",
    "Use a literal block scalar, userData: |, so every line stays a line.",
    good=(example(AL2, SCRIPT),),
    bad=(
        example(AL2, "#!/bin/bash echo hello > /tmp/x sysctl -w vm.max_map_count=262144\n"),
        example(BOTTLEROCKET, "[settings.kubernetes] max-pods = 110\n"),
    ),
)

userdata_rule(
    ids.MIME,
    Severity.ERROR,
    "MIME userData that Karpenter's reader refuses (AL2, AL2023: headers not followed by an empty line, no or an "
    "unparsable Content-Type, not multipart, no boundary, a part's headers running into its content, no closing "
    "delimiter), reported with Karpenter's own error: no launch template is made and no node launches. On AL2023 "
    "also a part Content-Type nodeadm cannot parse (nodeadm init stops, the node never joins). For Custom, which "
    "Karpenter passes on unread, the framing cloud-init cannot read.",
    "Start with MIME-Version and a multipart Content-Type with a boundary, leave an empty line after every block of "
    "headers, write delimiters as --BOUNDARY and close with --BOUNDARY--.",
    good=(example(AL2, MIME), example(AL2023, MIME.replace("MIME-Version: 1.0\n", ""))),
    bad=(
        example(AL2023, MIME.replace('"BOUNDARY"\n\n', '"BOUNDARY"\n')),
        example(AL2, MIME.replace('us-ascii"\n\n', 'us-ascii"\n')),
        example(AL2023, MIME.replace("--BOUNDARY--\n", "")),
        example(CUSTOM, MIME.replace("\n--BOUNDARY", '\n--"BOUNDARY"')),
    ),
    origin="karpenter",
)

userdata_rule(
    ids.MIME_IGNORED,
    Severity.WARNING,
    "MIME userData Karpenter reads, but whose content the node never acts on: no part at all (delimiters quoted or "
    "misspelt), a part typed for no handler (text/x-shell-script, text/x-sh), a NodeConfig part not typed "
    "application/node.eks.aws, or an untyped part that starts with neither '#!' nor '#cloud-config'. The node "
    "joins, but that script or setting silently never happens.",
    "Type each part for what it is: text/x-shellscript for scripts, text/cloud-config for cloud-config, "
    "application/node.eks.aws for a NodeConfig (AL2023); write delimiters as --BOUNDARY.",
    good=(example(AL2023, MIME),),
    bad=(
        example(AL2, MIME.replace("\n--BOUNDARY", '\n--"BOUNDARY"')),
        example(AL2023, MIME.replace("text/x-shellscript", "text/x-shell-script")),
        example(
            AL2023,
            MIME.replace('text/x-shellscript; charset="us-ascii"', "text/plain").replace(
                "#!/bin/bash\necho hello", node_config("example.com/gpu:NoSchedule").rstrip("\n")
            ),
        ),
    ),
)

userdata_rule(
    ids.BOOTSTRAP_ARGS,
    Severity.ERROR,
    "A bootstrap.sh call that loses kubelet flags (--kubelet-extra-args=..., flags outside it, unclosed quotes).",
    "Pass kubelet flags as one word after a space: --kubelet-extra-args '--max-pods=20 --register-with-taints=...'.",
    good=(example(AL2, bootstrap_call("'--max-pods=20'")),),
    bad=(example(AL2, bootstrap_call("'--max-pods=20'", "=")), example(AL2, "/etc/eks/bootstrap.sh demo --node-labels=a=b\n")),
)

userdata_rule(
    ids.AL2023_BOOTSTRAP,
    Severity.ERROR,
    "bootstrap.sh or --kubelet-extra-args on AL2023, whose nodes boot with nodeadm and never read them.",
    "Put kubelet settings in a NodeConfig part: spec.kubelet.config (registerWithTaints, ...) and spec.kubelet.flags.",
    good=(example(AL2023, node_config("{key: dedicated, value: gpu, effect: NoSchedule}")),),
    bad=(example(AL2023, bootstrap_call("'--register-with-taints=dedicated=gpu:NoSchedule'")),),
)

userdata_rule(
    ids.NODECONFIG,
    Severity.ERROR,
    "A NodeConfig for nodeadm that is not valid YAML or not apiVersion node.eks.aws/v1alpha1, kind NodeConfig.",
    "Write apiVersion: node.eks.aws/v1alpha1 and kind: NodeConfig, and check the YAML indentation.",
    good=(example(AL2023, node_config("{key: dedicated, effect: NoSchedule}")),),
    bad=(
        example(AL2023, node_config("{key: a, effect: NoSchedule}").replace("kind: NodeConfig", "kind: NodeConfiguration")),
        example(
            AL2023,
            MIME.replace('text/x-shellscript; charset="us-ascii"', "application/node.eks.aws").replace(
                "#!/bin/bash\necho hello", "spec: [unclosed"
            ),
        ),
    ),
)

userdata_rule(
    ids.POWERSHELL_TAGS,
    Severity.ERROR,
    "Windows userData wrapped in <powershell> tags, which Karpenter adds itself around its bootstrap too.",
    "Remove the <powershell> and </powershell> lines.",
    good=(example(WINDOWS, 'Write-Host "hello"\n'),),
    bad=(example(WINDOWS, '<powershell>\nWrite-Host "hello"\n</powershell>\n'),),
)

userdata_rule(
    ids.OWN_BOOTSTRAP,
    Severity.WARNING,
    "userData of a family Karpenter bootstraps (AL2, AL2023, Windows) that runs the bootstrapper itself "
    "(/etc/eks/bootstrap.sh, nodeadm init, Start-EKSBootstrap.ps1): the node bootstraps twice with different "
    "arguments; it boots, but the settings of the first run do not last.",
    "Remove the bootstrap call: kubelet settings go in spec.kubelet, labels and taints in the NodePool; "
    "to bootstrap yourself, use amiFamily: Custom.",
    good=(example(AL2, SCRIPT), example(CUSTOM, bootstrap_call("'--register-with-taints=karpenter.sh/unregistered:NoExecute'"))),
    bad=(
        example(AL2, bootstrap_call("'--max-pods=20'")),
        example(AL2023, "#!/bin/bash\nnodeadm init --config-source file:///etc/eks/nodeadm.yaml\n"),
        example(WINDOWS, "& $env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1 -EKSClusterName demo\n"),
    ),
)

userdata_rule(
    ids.FORMAT_MISMATCH,
    Severity.ERROR,
    "userData in a format the selected image cannot run: a shell script for Bottlerocket, Bottlerocket TOML "
    "settings for AL2, AL2023 or Windows.",
    "Write the format of the image the class selects, or select the image the userData is written for.",
    good=(example(BOTTLEROCKET, "[settings.kubernetes]\nallowed-unsafe-sysctls = []\n"), example(AL2023, SCRIPT)),
    bad=(example(BOTTLEROCKET, SCRIPT), example(AL2023, "[settings.kubernetes]\nallowed-unsafe-sysctls = []\n")),
    origin="karpenter",
)
