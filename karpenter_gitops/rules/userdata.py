"""userData rules: thin wrappers over :func:`karpenter_gitops.karpenter.amifamily.analyse_userdata`, one per problem kind.

The family detection and the analysis run once per object (:meth:`Context.derived`), and each rule
picks the problems that carry its id. Objects without userData cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, EC2NodeClass
from karpenter_gitops.core.schema_fields import SecretValue
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import problems as ids
from karpenter_gitops.karpenter.amifamily.userdata.problems import Problem
from karpenter_gitops.rules.registry import Context, rule

PATH = "spec.userData"
_AL2 = {"amiSelectorTerms": [{"alias": "al2@v20240807"}]}
_AL2023 = {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}
_BOTTLEROCKET = {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0"}]}
_WINDOWS = {"amiSelectorTerms": [{"alias": "windows2022@latest"}]}
_CUSTOM = {"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}]}


def _on(family: Mapping[str, Any], user_data: str) -> dict:
    """An example: the base EC2NodeClass with this family's AMI and ``user_data``."""
    return {"spec": {**family, "userData": user_data}}


def _bootstrap(extra_args: str, separator: str = " ") -> str:
    return f"#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args{separator}{extra_args}\n"


def _node_config(taint: str) -> str:
    return (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n"
        f"      registerWithTaints:\n      - {taint}\n"
    )


ByProblem = dict[str, tuple[Violation, ...]]  # problem id -> its violations


def _by_id(problems: Iterable[Problem]) -> ByProblem:
    found: ByProblem = {}
    for p in problems:
        found[p.rule] = (*found.get(p.rule, ()), Violation(PATH, p.message, p.hint))
    return found


def _problems(obj: EC2NodeClass) -> ByProblem:
    spec = obj.spec
    if not spec.user_data or isinstance(spec.user_data, SecretValue):  # a secret is checked at preview
        return {}
    aliases = (t.alias for t in spec.ami_selector_terms or ())
    return _by_id(amifamily.analyse_userdata(spec.user_data, amifamily.userdata_family(spec.ami_family, aliases)))


def _release_problems(obj: EC2NodeClass) -> ByProblem:
    """Bottlerocket settings the release behind the class's bottlerocket alias does not have."""
    spec = obj.spec
    if not spec.user_data or isinstance(spec.user_data, SecretValue):
        return {}
    aliases = (t.alias for t in spec.ami_selector_terms or ())
    return _by_id(amifamily.release_userdata_problems(spec.user_data, spec.ami_family, aliases))


def _userdata_rule(
    id: str,
    severity: Severity,
    doc: str,
    fix: str,
    *,
    good: Iterable[Mapping[str, Any]],
    bad: Iterable[Mapping[str, Any]],
    origin: str = "ours",
    problem: str | None = None,
    since: Release | None = None,
    until: Release | None = None,
    source: Callable[[EC2NodeClass], ByProblem] = _problems,
) -> None:
    """A rule reporting the problems of one id (``problem``, default the rule's own) that ``source`` finds."""
    kind = problem or id

    @rule(id, severity, [EC2NODECLASS], doc, fix, origin=origin, since=since, until=until, good=good, bad=bad)
    def check(obj: EC2NodeClass, ctx: Context) -> Iterable[Violation]:
        return ctx.derived(source, obj).get(kind, ())


_SCRIPT = "#!/bin/bash\necho hello > /tmp/x\n"
_MIME = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n--BOUNDARY\n'
    'Content-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho hello\n--BOUNDARY--\n'
)

_userdata_rule(
    ids.SIZE,
    Severity.ERROR,
    "userData over 16,384 bytes: EC2 refuses the launch template, so no node launches.",
    "Fetch bulky content (scripts, certificates) from S3 or SSM at boot instead of inlining it.",
    good=(_on(_AL2023, _SCRIPT),),
    bad=(_on(_AL2023, "#!/bin/bash\n# " + "x" * 16_400 + "\n"),),
    origin="karpenter",
)
_userdata_rule(
    ids.SIZE_NEAR_LIMIT,
    Severity.WARNING,
    "userData at 90% or more of the 16 KiB limit; Karpenter logs a warning and adds its own bootstrap on top.",
    "Keep userData small: fetch bulky content from S3 or SSM at boot.",
    good=(_on(_AL2023, _SCRIPT),),
    bad=(_on(_AL2023, "#!/bin/bash\n# " + "x" * 15_000 + "\n"),),
    origin="karpenter",
)
@rule(ids.SIZE_LIMIT, Severity.ERROR, [EC2NODECLASS],
      "userData within 16,384 bytes as written, over once Karpenter merges its bootstrap in for the family: EC2 counts "
      "the decoded userData (RequestLaunchTemplateData.UserData, 'limited to 16 KB', raw before base64), refuses "
      "ec2:CreateLaunchTemplate and no node launches (1.14.1 on: ValidationSucceeded=False, UserDataSizeLimitExceeded). "
      "Measured on the smallest merge possible, so a finding is certain.",
      "Cut the excess the message names: fetch bulky content (scripts, certificates) from S3 or SSM at boot.",
      good=(_on(_AL2023, _SCRIPT), _on(_CUSTOM, "#" * 16_383 + "\n")),
      bad=(_on(_AL2023, "#!/bin/bash\n# " + "x" * 16_000 + "\n"), _on(_WINDOWS, "# " + "x" * 16_100 + "\n")))
def size_limit(obj: EC2NodeClass, ctx: Context) -> Iterable[Violation]:
    return [Violation(PATH, p.message, p.hint) for p in amifamily.size_limit(obj, ctx.release)]


_userdata_rule(
    ids.FOLDED_YAML,
    Severity.ERROR,
    "userData written as a folded YAML scalar (userData: >): newlines became spaces, so a script is one comment line.",
    "Use a literal block scalar, userData: |, so every line stays a line.",
    good=(_on(_AL2, _SCRIPT),),
    bad=(
        _on(_AL2, "#!/bin/bash echo hello > /tmp/x sysctl -w vm.max_map_count=262144\n"),
        _on(_BOTTLEROCKET, '[settings.kubernetes] max-pods = 110\n'),
    ),
)
_userdata_rule(
    ids.MIME,
    Severity.ERROR,
    "MIME userData that Karpenter's reader refuses (AL2, AL2023: headers not followed by an empty line, no or an "
    "unparsable Content-Type, not multipart, no boundary, a part's headers running into its content, no closing "
    "delimiter), reported with Karpenter's own error: no launch template is made and no node launches. On AL2023 "
    "also a part Content-Type nodeadm cannot parse (nodeadm init stops, the node never joins). For Custom, which "
    "Karpenter passes on unread, the framing cloud-init cannot read.",
    "Start with MIME-Version and a multipart Content-Type with a boundary, leave an empty line after every block of "
    "headers, write delimiters as --BOUNDARY and close with --BOUNDARY--.",
    good=(_on(_AL2, _MIME), _on(_AL2023, _MIME.replace("MIME-Version: 1.0\n", ""))),
    bad=(
        _on(_AL2023, _MIME.replace('"BOUNDARY"\n\n', '"BOUNDARY"\n')),
        _on(_AL2, _MIME.replace('us-ascii"\n\n', 'us-ascii"\n')),
        _on(_AL2023, _MIME.replace("--BOUNDARY--\n", "")),
        _on(_CUSTOM, _MIME.replace("\n--BOUNDARY", '\n--"BOUNDARY"')),
    ),
    origin="karpenter",
)
_userdata_rule(
    ids.MIME_IGNORED,
    Severity.WARNING,
    "MIME userData Karpenter reads, but whose content the node never acts on: no part at all (delimiters quoted or "
    "misspelt), a part typed for no handler (text/x-shell-script, text/x-sh), a NodeConfig part not typed "
    "application/node.eks.aws, or an untyped part that starts with neither '#!' nor '#cloud-config'. The node "
    "joins, but that script or setting silently never happens.",
    "Type each part for what it is: text/x-shellscript for scripts, text/cloud-config for cloud-config, "
    "application/node.eks.aws for a NodeConfig (AL2023); write delimiters as --BOUNDARY.",
    good=(_on(_AL2023, _MIME),),
    bad=(
        _on(_AL2, _MIME.replace("\n--BOUNDARY", '\n--"BOUNDARY"')),
        _on(_AL2023, _MIME.replace("text/x-shellscript", "text/x-shell-script")),
        _on(_AL2023, _MIME.replace('text/x-shellscript; charset="us-ascii"', "text/plain").replace(
            "#!/bin/bash\necho hello", _node_config("example.com/gpu:NoSchedule").rstrip("\n"))),
    ),
)
_userdata_rule(
    ids.BOOTSTRAP_ARGS,
    Severity.ERROR,
    "A bootstrap.sh call that loses kubelet flags (--kubelet-extra-args=..., flags outside it, unclosed quotes).",
    "Pass kubelet flags as one word after a space: --kubelet-extra-args '--max-pods=20 --register-with-taints=...'.",
    good=(_on(_AL2, _bootstrap("'--max-pods=20'")),),
    bad=(_on(_AL2, _bootstrap("'--max-pods=20'", "=")), _on(_AL2, "/etc/eks/bootstrap.sh demo --node-labels=a=b\n")),
)
_userdata_rule(
    ids.TAINT,
    Severity.ERROR,
    "A taint in --register-with-taints or registerWithTaints that kubelet refuses (bad key, value or effect).",
    "Write taints as key[=value]:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute.",
    good=(_on(_AL2, _bootstrap("'--register-with-taints=dedicated=gpu:NoSchedule'")),),
    bad=(
        _on(_AL2, _bootstrap("'--register-with-taints=dedicated=gpu:Noschedule'")),
        _on(_AL2023, _node_config("{key: dedicated, value: gpu, effect: Schedule}")),
    ),
)
_userdata_rule(
    ids.TAINT_QUOTES,
    Severity.ERROR,
    "Nested quoting leaves literal quote characters in a taint, so kubelet rejects it and the node lacks the taint.",
    "Quote the --kubelet-extra-args value once: --kubelet-extra-args '--register-with-taints=key=value:NoSchedule'.",
    good=(_on(_AL2, _bootstrap("'--register-with-taints=\"dedicated=gpu:NoSchedule\"'")),),
    bad=(_on(_AL2, _bootstrap("\"'--register-with-taints=\\\"dedicated=gpu:NoSchedule\\\"'\"")),),
)
_userdata_rule(
    ids.AL2023_BOOTSTRAP,
    Severity.ERROR,
    "bootstrap.sh or --kubelet-extra-args on AL2023, whose nodes boot with nodeadm and never read them.",
    "Put kubelet settings in a NodeConfig part: spec.kubelet.config (registerWithTaints, ...) and spec.kubelet.flags.",
    good=(_on(_AL2023, _node_config("{key: dedicated, value: gpu, effect: NoSchedule}")),),
    bad=(_on(_AL2023, _bootstrap("'--register-with-taints=dedicated=gpu:NoSchedule'")),),
)
_userdata_rule(
    ids.NODECONFIG,
    Severity.ERROR,
    "A NodeConfig for nodeadm that is not valid YAML or not apiVersion node.eks.aws/v1alpha1, kind NodeConfig.",
    "Write apiVersion: node.eks.aws/v1alpha1 and kind: NodeConfig, and check the YAML indentation.",
    good=(_on(_AL2023, _node_config("{key: dedicated, effect: NoSchedule}")),),
    bad=(
        _on(_AL2023, _node_config("{key: a, effect: NoSchedule}").replace("kind: NodeConfig", "kind: NodeConfiguration")),
        _on(_AL2023, _MIME.replace("text/x-shellscript; charset=\"us-ascii\"", "application/node.eks.aws")
            .replace("#!/bin/bash\necho hello", "spec: [unclosed")),
    ),
)
_userdata_rule(
    ids.TOML,
    Severity.ERROR,
    "Bottlerocket userData that is not TOML (or is MIME): Karpenter cannot merge it and fails the launch template.",
    "Write Bottlerocket settings as TOML, e.g. [settings.kubernetes] then max-pods = 110 on the next line.",
    good=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    bad=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nmax-pods =\n"), _on(_BOTTLEROCKET, _MIME)),
    origin="karpenter",
)
_userdata_rule(
    ids.TOML_DOTTED_KEY,
    Severity.ERROR,
    "A Bottlerocket map key with dots left unquoted (memory.available, fs.inotify.*), read as nested tables.",
    'Quote keys that contain dots: "memory.available" = "10%".',
    good=(_on(_BOTTLEROCKET, '[settings.kubernetes.eviction-hard]\n"memory.available" = "12%"\n'),),
    bad=(
        _on(_BOTTLEROCKET, '[settings.kubernetes.eviction-hard]\nmemory.available = "12%"\n'),
        _on(_BOTTLEROCKET, '[settings.kernel.sysctl]\nfs.inotify.max_user_instances = "8192"\n'),
    ),
)
_userdata_rule(
    ids.BOTTLEROCKET_NODE_TAINTS,
    Severity.WARNING,
    "Bottlerocket node-taints in userData: Karpenter replaces them with the NodePool's taints.",
    "Declare taints in the NodePool's spec.template.spec.taints.",
    good=(_on(_BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = "ml"\n'),),
    bad=(_on(_BOTTLEROCKET, '[settings.kubernetes.node-taints]\ndedicated = ["gpu:NoSchedule"]\n'),),
)
_userdata_rule(
    ids.BOTTLEROCKET_UNKNOWN_SETTING,
    Severity.WARNING,
    "A settings.kubernetes key Karpenter does not know: it logs the key and drops it from the merged settings.",
    "Fix the key's spelling or remove it.",
    good=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    bad=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nmax-pod = 110\n"),),
    origin="karpenter",
)
_BOTTLEROCKET_AT = {"amiSelectorTerms": [{"alias": "bottlerocket@v1.21.0"}]}
_COMMANDS = '[settings.bootstrap-commands.k8s-ephemeral-storage]\ncommands = [["apiclient", "ephemeral-storage", "init"]]\nmode = "always"\n'
_RELEASE_FIX = ("Remove the setting, fix its name (the hint names the closest), or pin a Bottlerocket release that "
                "has it (the hint names the first).")
_userdata_rule(
    ids.BOTTLEROCKET_RELEASE_SETTING,
    Severity.ERROR,
    "Bottlerocket userData with a setting the release the alias pins does not have (a misspelt or unknown "
    "settings.<name>, or one that first appears in a later release, such as settings.bootstrap-commands before "
    "v1.22.0): Bottlerocket's API refuses the whole userData, so the node keeps none of its settings and never "
    "joins. Judged per release from Bottlerocket's own settings models (v1.0.0 to v1.26.0).",
    _RELEASE_FIX,
    source=_release_problems,
    good=(_on(_BOTTLEROCKET_AT, '[settings.kernel.sysctl]\n"vm.max_map_count" = "262144"\n'),),
    bad=(_on(_BOTTLEROCKET_AT, _COMMANDS), _on(_BOTTLEROCKET_AT, '[settings.kernal.sysctl]\n"vm.max_map_count" = "262144"\n')),
)
_userdata_rule(
    ids.BOTTLEROCKET_LATEST_SETTING,
    Severity.WARNING,
    "Bottlerocket userData with a settings.<name> no Bottlerocket release up to v1.26.0 has, under an alias "
    "(bottlerocket@latest, or a release newer than karpenter-gitops knows) judged as v1.26.0: a later release may "
    "have added it, otherwise Bottlerocket refuses the whole userData and the node never joins.",
    _RELEASE_FIX,
    source=_release_problems,
    good=(_on({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, _COMMANDS),),
    bad=(_on({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, '[settings.kernal.sysctl]\n"vm.max_map_count" = "262144"\n'),),
)
_userdata_rule(
    ids.POWERSHELL_TAGS,
    Severity.ERROR,
    "Windows userData wrapped in <powershell> tags, which Karpenter adds itself around its bootstrap too.",
    "Remove the <powershell> and </powershell> lines.",
    good=(_on(_WINDOWS, 'Write-Host "hello"\n'),),
    bad=(_on(_WINDOWS, '<powershell>\nWrite-Host "hello"\n</powershell>\n'),),
)
_REGISTERS = (
    _on(_CUSTOM, _bootstrap("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),
    _on(_CUSTOM, _node_config("{key: karpenter.sh/unregistered, effect: NoExecute}")),
)
_DOES_NOT_REGISTER = (
    _on(_CUSTOM, _bootstrap("'--max-pods=20'")),
    _on(_CUSTOM, _node_config("{key: karpenter.sh/uninitialized, effect: NoExecute}")),
)
_userdata_rule(
    ids.REGISTRATION_TAINT,
    Severity.ERROR,
    "amiFamily Custom userData that does not register the node with karpenter.sh/unregistered:NoExecute, on a "
    "release that fails such nodes (1.0-1.2: some patches of each never register them and relaunch in a loop).",
    "Add karpenter.sh/unregistered:NoExecute to --register-with-taints or to NodeConfig registerWithTaints.",
    until=Release((1, 3)),
    good=tuple({"karpenterVersion": "1.2", **example} for example in _REGISTERS),
    bad=tuple({"karpenterVersion": "1.2", **example} for example in _DOES_NOT_REGISTER),
)
_userdata_rule(
    ids.REGISTRATION_TAINT_LOGGED,
    Severity.WARNING,
    "amiFamily Custom userData that does not register the node with karpenter.sh/unregistered:NoExecute: from 1.3 "
    "Karpenter registers the node anyway, with an error log and an UnregisteredTaintMissing event, and pods can "
    "land before the NodeClaim's taints and labels are synced.",
    "Add karpenter.sh/unregistered:NoExecute to --register-with-taints or to NodeConfig registerWithTaints.",
    problem=ids.REGISTRATION_TAINT,
    since=Release((1, 3)),
    good=_REGISTERS,
    bad=_DOES_NOT_REGISTER,
)
_userdata_rule(
    ids.MANAGED_REGISTRATION_TAINT,
    Severity.WARNING,
    "userData that registers karpenter.sh/unregistered although Karpenter adds it for this AMI family.",
    "Remove karpenter.sh/unregistered from userData; only amiFamily Custom sets it itself.",
    good=(_on(_CUSTOM, _bootstrap("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),),
    bad=(_on(_AL2, _bootstrap("'--register-with-taints=karpenter.sh/unregistered:NoExecute'")),),
)
_userdata_rule(
    ids.UNKNOWN_KARPENTER_TAINT,
    Severity.WARNING,
    "A karpenter.sh/ taint Karpenter does not define (e.g. karpenter.sh/uninitialized): nothing ever removes it.",
    "Use karpenter.sh/unregistered:NoExecute for registration (amiFamily Custom only), or a taint of your own domain.",
    good=(_on(_AL2023, _node_config("{key: example.com/dedicated, effect: NoSchedule}")),),
    bad=(_on(_AL2023, _node_config("{key: karpenter.sh/uninitialized, effect: NoExecute}")),),
)
_userdata_rule(
    ids.OWN_BOOTSTRAP,
    Severity.WARNING,
    "userData of a family Karpenter bootstraps (AL2, AL2023, Windows) that runs the bootstrapper itself "
    "(/etc/eks/bootstrap.sh, nodeadm init, Start-EKSBootstrap.ps1): the node bootstraps twice with different "
    "arguments; it boots, but the settings of the first run do not last.",
    "Remove the bootstrap call: kubelet settings go in spec.kubelet, labels and taints in the NodePool; "
    "to bootstrap yourself, use amiFamily: Custom.",
    good=(_on(_AL2, _SCRIPT), _on(_CUSTOM, _bootstrap("'--register-with-taints=karpenter.sh/unregistered:NoExecute'"))),
    bad=(
        _on(_AL2, _bootstrap("'--max-pods=20'")),
        _on(_AL2023, "#!/bin/bash\nnodeadm init --config-source file:///etc/eks/nodeadm.yaml\n"),
        _on(_WINDOWS, "& $env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1 -EKSClusterName demo\n"),
    ),
)
_userdata_rule(
    ids.REGISTER_TAINTS_FLAG,
    Severity.ERROR,
    "An AL2023 NodeConfig whose spec.kubelet.flags carry --register-with-taints: the flag overrides the "
    "registerWithTaints Karpenter writes, so the NodePool's taints and karpenter.sh/unregistered are lost.",
    "Drop the flag and declare taints in the NodePool (spec.template.spec.taints or startupTaints).",
    good=(_on(_AL2023, _node_config("{key: example.com/dedicated, effect: NoSchedule}")),),
    bad=(_on(_AL2023, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n"
                      "      - --register-with-taints=dedicated=gpu:NoSchedule\n"),),
)
_userdata_rule(
    ids.FORMAT_MISMATCH,
    Severity.ERROR,
    "userData in a format the selected image cannot run: a shell script for Bottlerocket, Bottlerocket TOML "
    "settings for AL2, AL2023 or Windows.",
    "Write the format of the image the class selects, or select the image the userData is written for.",
    good=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nallowed-unsafe-sysctls = []\n"), _on(_AL2023, _SCRIPT)),
    bad=(_on(_BOTTLEROCKET, _SCRIPT), _on(_AL2023, "[settings.kubernetes]\nallowed-unsafe-sysctls = []\n")),
    origin="karpenter",
)
_userdata_rule(
    ids.BOTTLEROCKET_OVERRIDDEN_SETTING,
    Severity.WARNING,
    "A Bottlerocket setting Karpenter always sets itself (cluster-name, api-server, cluster-certificate, max-pods, "
    "cluster-dns-ip): the value in userData is replaced.",
    "Remove it; set max-pods and cluster DNS through the EC2NodeClass's spec.kubelet.",
    good=(_on(_BOTTLEROCKET, '[settings.kubernetes]\nallowed-unsafe-sysctls = ["net.core.somaxconn"]\n'),),
    bad=(_on(_BOTTLEROCKET, "[settings.kubernetes]\nmax-pods = 110\n"),),
    origin="karpenter",
)
_userdata_rule(
    ids.BOTTLEROCKET_SETTING_TYPE,
    Severity.ERROR,
    "A Bottlerocket setting of the wrong type for Karpenter's typed settings (a list where a string is expected, "
    "a string for max-pods): merging the userData fails, so no launch template is made.",
    "Write map settings as tables of strings, e.g. [settings.kubernetes.node-labels] team = \"ml\".",
    good=(_on(_BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = "ml"\n'),),
    bad=(
        _on(_BOTTLEROCKET, '[settings.kubernetes.node-labels]\nteam = ["ml", "data"]\n'),
        _on(_BOTTLEROCKET, '[settings.kubernetes]\neviction-max-pod-grace-period = "30"\n'),
    ),
    origin="karpenter",
)

