"""AL2023 userData: NodeConfig parts, plain YAML, and the AL2 habits nodeadm ignores."""

from __future__ import annotations

import yaml

from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata import problems

NODECONFIG = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 20\n"


def _rules(text: str) -> list[str]:
    return [p.rule for p in amifamily.analyse_userdata(text, "AL2023")]


def _with_taints(*entries: str, flags: str = "") -> str:
    taints = "".join(f"      - {e}\n" for e in entries)
    return f"{NODECONFIG}      registerWithTaints:\n{taints}{flags}"


def _mime(*parts: tuple[str, str]) -> str:
    body = "".join(f"--B\nContent-Type: {kind}\n\n{content}" for kind, content in parts)
    return f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n{body}--B--\n'


def test_plain_nodeconfig_and_plain_script_are_accepted():
    """Karpenter wraps plain YAML maps as NodeConfig parts and anything else as a script."""
    assert _rules(NODECONFIG) == []
    assert _rules("#!/bin/bash\necho hi\n") == []


def test_valid_registered_taints_pass():
    assert _rules(_with_taints("{key: dedicated, value: gpu, effect: NoSchedule}", "{key: spot, effect: NoExecute}")) == []


def test_invalid_registered_taint_hint_is_the_corrected_nodeconfig():
    (problem,) = amifamily.analyse_userdata(_with_taints("{key: dedicated, value: gpu, effect: noschedule}"), "AL2023")
    assert problem.rule == problems.TAINT
    hint = yaml.safe_load(problem.hint)
    assert hint["spec"]["kubelet"]["config"]["registerWithTaints"] == [
        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    ]


def test_taints_in_nodeconfig_kubelet_flags_are_checked_too():
    flags = "    flags:\n    - --register-with-taints=dedicated=gpu\n"
    assert _rules(_with_taints("{key: a, effect: NoSchedule}", flags=flags)) == [problems.REGISTER_TAINTS_FLAG, problems.TAINT]


def test_entries_that_are_not_taints_are_reported():
    assert _rules(_with_taints("dedicated=gpu:NoSchedule")) == [problems.NODECONFIG]


def test_registration_taint_is_karpenters_job():
    assert _rules(_with_taints("{key: karpenter.sh/unregistered, effect: NoExecute}")) == [problems.MANAGED_REGISTRATION_TAINT]


def test_nodeconfig_parts_must_be_yaml_of_the_right_kind():
    broken = _mime(("application/node.eks.aws", "spec: [unclosed\n"))
    (problem,) = amifamily.analyse_userdata(broken, "AL2023")
    assert problem.rule == problems.NODECONFIG and "(line 2 of the part)" in problem.message
    wrong_kind = _mime(("application/node.eks.aws", NODECONFIG.replace("v1alpha1", "v1")))
    assert _rules(wrong_kind) == [problems.NODECONFIG]


def test_mime_with_script_and_nodeconfig_parts_passes():
    assert _rules(_mime(("text/x-shellscript", "#!/bin/bash\necho hi\n"), ("application/node.eks.aws", NODECONFIG))) == []


def test_bootstrap_sh_is_an_error_and_the_hint_is_the_nodeconfig_equivalent():
    script = "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels=team=ml --register-with-taints=gpu:NoSchedule'\n"
    (problem,) = amifamily.analyse_userdata(script, "AL2023")
    assert problem.rule == problems.AL2023_BOOTSTRAP
    kubelet = yaml.safe_load(problem.hint.partition("\n")[2])["spec"]["kubelet"]
    assert kubelet == {
        "config": {"registerWithTaints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "flags": ["--node-labels=team=ml"],
    }


def test_kubelet_extra_args_in_a_script_part_is_an_error_but_a_comment_is_not():
    assert _rules(_mime(("text/x-shellscript", "#!/bin/bash\nKUBELET_EXTRA_ARGS=1 --kubelet-extra-args x\n"))) == [
        problems.AL2023_BOOTSTRAP
    ]
    assert _rules("#!/bin/bash\n# we used to call /etc/eks/bootstrap.sh here\n") == []
