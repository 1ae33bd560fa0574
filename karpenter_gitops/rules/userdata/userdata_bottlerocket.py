"""userData rules on Bottlerocket's TOML settings: what Karpenter cannot merge, replaces or drops, and what
the release the alias pins does not have.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.karpenter.amifamily.userdata import problems as ids
from karpenter_gitops.rules.userdata.userdata_kit import (
    BOTTLEROCKET,
    MIME,
    example,
    release_problems_of,
    userdata_rule,
)

userdata_rule(
    ids.TOML,
    Severity.ERROR,
    "Bottlerocket userData that is not TOML (or is MIME): Karpenter cannot merge it and fails the launch template.",
    "Write Bottlerocket settings as TOML, e.g. [settings.kubernetes] then max-pods = 110 on the next line.",
    good=(example(BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    bad=(example(BOTTLEROCKET, "[settings.kubernetes]\nmax-pods =\n"), example(BOTTLEROCKET, MIME)),
    origin="karpenter",
)

userdata_rule(
    ids.TOML_DOTTED_KEY,
    Severity.ERROR,
    "A Bottlerocket map key with dots left unquoted (memory.available, fs.inotify.*), read as nested tables.",
    'Quote keys that contain dots: "memory.available" = "10%".',
    good=(example(BOTTLEROCKET, '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"\n'),),
    bad=(
        example(BOTTLEROCKET, '[settings.kubernetes.eviction-hard]\nmemory.available = "12%"\n'),
        example(BOTTLEROCKET, '[settings.kernel.sysctl]\nfs.inotify.max_user_instances = "8192"\n'),
    ),
)

userdata_rule(
    ids.BOTTLEROCKET_NODE_TAINTS,
    Severity.WARNING,
    "Bottlerocket node-taints in userData: Karpenter replaces them with the NodePool's taints.",
    "Declare taints in the NodePool's spec.template.spec.taints.",
    good=(example(BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = "ml"\n'),),
    bad=(example(BOTTLEROCKET, '[settings.kubernetes.node-taints]\ndedicated = ["gpu:NoSchedule"]\n'),),
)

userdata_rule(
    ids.BOTTLEROCKET_UNKNOWN_SETTING,
    Severity.WARNING,
    "A settings.kubernetes key Karpenter does not know: it logs the key and drops it from the merged settings.",
    "Fix the key's spelling or remove it.",
    good=(example(BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    bad=(example(BOTTLEROCKET, "[settings.kubernetes]\nmax-pod = 110\n"),),
    origin="karpenter",
)

_BOTTLEROCKET_AT = {"amiSelectorTerms": [{"alias": "bottlerocket@v1.21.0"}]}

_COMMANDS = '[settings.bootstrap-commands.k8s-ephemeral-storage]\ncommands = [["apiclient", "ephemeral-storage", "init"]]\nmode = "always"\n'

_RELEASE_FIX = (
    "Remove the setting, fix its name (the hint names the closest), or pin a Bottlerocket release that "
    "has it (the hint names the first)."
)

userdata_rule(
    ids.BOTTLEROCKET_RELEASE_SETTING,
    Severity.ERROR,
    "Bottlerocket userData with a setting the release the alias pins does not have (a misspelt or unknown "
    "settings.<name>, or one that first appears in a later release, such as settings.bootstrap-commands before "
    "v1.22.0): Bottlerocket's API refuses the whole userData, so the node keeps none of its settings and never "
    "joins. Judged per release from Bottlerocket's own settings models (v1.0.0 to v1.26.0).",
    _RELEASE_FIX,
    source=release_problems_of,
    good=(example(_BOTTLEROCKET_AT, '[settings.kernel.sysctl]\n"vm.max_map_count" = "262144"\n'),),
    bad=(
        example(_BOTTLEROCKET_AT, _COMMANDS),
        example(_BOTTLEROCKET_AT, '[settings.kernal.sysctl]\n"vm.max_map_count" = "262144"\n'),
    ),
)

userdata_rule(
    ids.BOTTLEROCKET_LATEST_SETTING,
    Severity.WARNING,
    "Bottlerocket userData with a settings.<name> no Bottlerocket release up to v1.26.0 has, under an alias "
    "(bottlerocket@latest, or a release newer than karpenter-gitops knows) judged as v1.26.0: a later release may "
    "have added it, otherwise Bottlerocket refuses the whole userData and the node never joins.",
    _RELEASE_FIX,
    source=release_problems_of,
    good=(example({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, _COMMANDS),),
    bad=(
        example(
            {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, '[settings.kernal.sysctl]\n"vm.max_map_count" = "262144"\n'
        ),
    ),
)

userdata_rule(
    ids.BOTTLEROCKET_OVERRIDDEN_SETTING,
    Severity.WARNING,
    "A Bottlerocket setting Karpenter always sets itself (cluster-name, api-server, cluster-certificate, max-pods, "
    "cluster-dns-ip): the value in userData is replaced.",
    "Remove it; set max-pods and cluster DNS through the EC2NodeClass's spec.kubelet.",
    good=(example(BOTTLEROCKET, '[settings.kubernetes]\nallowed-unsafe-sysctls = ["net.core.somaxconn"]\n'),),
    bad=(example(BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    origin="karpenter",
)

userdata_rule(
    ids.BOTTLEROCKET_SETTING_TYPE,
    Severity.ERROR,
    "A Bottlerocket setting of the wrong type for Karpenter's typed settings (a list where a string is expected, "
    "a string for max-pods): merging the userData fails, so no launch template is made.",
    'Write map settings as tables of strings, e.g. [settings.kubernetes.node-labels] team = "ml".',
    good=(example(BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = "ml"\n'),),
    bad=(
        example(BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = ["ml", "data"]\n'),
        example(BOTTLEROCKET, '[settings.kubernetes]\neviction-max-pod-grace-period = "30"\n'),
    ),
    origin="karpenter",
)
