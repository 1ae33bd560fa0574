"""status.amis from amiSelectorTerms against the embedded default world, as ``pkg/providers/amifamily/ami.go`` of
github.com/aws/karpenter-provider-aws resolves them."""

from datetime import UTC, datetime

from karpenter_gitops.adapters.aws.amis import AMIOutcome, resolve_amis, select_amis
from karpenter_gitops.core.model import AMISelectorTerm
from karpenter_gitops.core.requirements import IN, Requirement
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.karpenter.amifamily.protocol import ARCH, NEURON, NVIDIA, STANDARD

NOW = datetime(2025, 2, 15, tzinfo=UTC)


def resolve(env, *terms, k8s="1.32", **options):
    return resolve_amis(env.session(), terms, Kubernetes.parse(k8s), now=NOW, **options)


def describe_images_params(aws):
    """Record the parameters of every DescribeImages call the session makes."""
    seen = []
    aws.register("before-parameter-build.ec2.DescribeImages", lambda params, **_: seen.append(dict(params)))
    return seen


def entries(result):
    return [(ami.id, set(ami.requirements)) for ami in result.amis]


def with_arch(requirements, arch):
    return {*requirements, Requirement(ARCH, IN, (arch,))}


def test_bottlerocket_alias_gives_five_entries_from_one_describe_images(default_aws):
    aws = default_aws.session()
    seen = describe_images_params(aws)
    result = resolve_amis(aws, [AMISelectorTerm(alias="bottlerocket@1.32.0")], Kubernetes(1, 32), now=NOW)
    assert result.outcome is AMIOutcome.READY
    assert sorted(entries(result), key=str) == sorted(
        [
            ("ami-0b0c000000000d001", with_arch(STANDARD, "amd64")),
            ("ami-0b0c000000000d001", with_arch(NEURON, "amd64")),
            ("ami-0b0c000000000d002", with_arch(STANDARD, "arm64")),
            ("ami-0b0c000000000d003", with_arch(NVIDIA, "amd64")),
            ("ami-0b0c000000000d004", with_arch(NVIDIA, "arm64")),
        ],
        key=str,
    )
    assert [ami.creation_date for ami in result.amis] == sorted((a.creation_date for a in result.amis), reverse=True)
    [params] = seen
    assert "Owners" not in params and params["IncludeDeprecated"] is True
    assert params["Filters"] == [
        {
            "Name": "image-id",
            "Values": ["ami-0b0c000000000d001", "ami-0b0c000000000d002", "ami-0b0c000000000d003", "ami-0b0c000000000d004"],
        }
    ]
    assert aws.call_counts() == {"DescribeImages": 1, "GetParameter": 4}


def test_al2023_latest_follows_recommended_and_serves_arm64_nvidia(default_aws):
    result = resolve(default_aws, AMISelectorTerm(alias="al2023@latest"))
    assert {ami.id for ami in result.amis} == {f"ami-0a23000000000c00{n}" for n in range(1, 6)}
    assert ("ami-0a23000000000c005", with_arch(NVIDIA, "arm64")) in entries(result)
    older = resolve(default_aws, AMISelectorTerm(alias="al2023@latest"), release=(1, 3))
    assert "ami-0a23000000000c005" not in {ami.id for ami in older.amis}


def test_missing_alias_parameters_are_skipped_and_reported(default_aws):
    result = resolve(default_aws, AMISelectorTerm(alias="al2023@v20240807"))
    assert result.outcome is AMIOutcome.READY
    [ami] = result.amis
    assert ami.id == "ami-0a23000000000a001" and ami.deprecated
    assert len(result.missing_parameters) == 4 and all("ParameterNotFound" in m for m in result.missing_parameters)


def test_alias_with_no_published_parameter_is_not_discovered(default_aws):
    result = resolve(default_aws, AMISelectorTerm(alias="bottlerocket@1.99.0"))
    assert result.outcome is AMIOutcome.ALIAS_NOT_DISCOVERED
    assert result.message == "failed to discover any AMIs for alias (alias=bottlerocket@1.99.0)"
    assert result.amis == ()


def test_unsupported_aliases(default_aws):
    assert resolve(default_aws, AMISelectorTerm(alias="al2@latest"), k8s="1.33").outcome is AMIOutcome.UNSUPPORTED_ALIAS
    assert resolve(default_aws, AMISelectorTerm(alias="windows2025@latest")).outcome is AMIOutcome.UNSUPPORTED_ALIAS


def test_alias_with_a_second_at_stops_the_controller_before_any_aws_call(default_aws):
    aws = default_aws.session()
    result = resolve_amis(aws, [AMISelectorTerm(alias="al2023@v20240807@x")], Kubernetes(1, 32), now=NOW)
    assert result.outcome is AMIOutcome.CONTROLLER_EXITS
    assert result.message == "failed to parse AMI alias 'al2023@v20240807@x', invalid format"
    assert aws.call_counts() == {}


def test_pending_and_failed_newest_builds_are_skipped_with_reasons(default_aws):
    result = resolve(default_aws, AMISelectorTerm(tags={"team": "payments"}))
    assert entries(result) == [
        ("ami-0c9a000000000f002", {Requirement(ARCH, IN, ("arm64",))}),
        ("ami-0c9a000000000f003", {Requirement(ARCH, IN, ("amd64",))}),
    ]
    assert {(s.id, s.reason.split(";")[0]) for s in result.skipped} == {
        ("ami-0c9a000000000f005", "state is pending"),
        ("ami-0c9a000000000f004", "state is failed"),
    }


def test_name_without_owner_defaults_to_self_and_amazon_and_tags_only_has_no_owners(default_aws):
    aws = default_aws.session()
    seen = describe_images_params(aws)
    resolve_amis(
        aws, [AMISelectorTerm(name="payments-node-*"), AMISelectorTerm(tags={"pipeline": "*"})], Kubernetes(1, 32), now=NOW
    )
    resolve_amis(aws, [AMISelectorTerm(name="payments-node-*", owner="123456789012")], Kubernetes(1, 32), now=NOW)
    assert [(p.get("Owners"), p["Filters"]) for p in seen] == [
        (["self", "amazon"], [{"Name": "name", "Values": ["payments-node-*"]}]),
        (None, [{"Name": "tag-key", "Values": ["pipeline"]}]),
        (["123456789012"], [{"Name": "name", "Values": ["payments-node-*"]}]),
    ]


def test_id_and_ssm_parameter_terms_share_one_image_id_query(default_aws):
    aws = default_aws.session()
    seen = describe_images_params(aws)
    result = resolve_amis(
        aws,
        [
            AMISelectorTerm(id="ami-0c9a000000000f003"),
            AMISelectorTerm(ssm_parameter="/aws/service/bottlerocket/aws-k8s-1.32/arm64/latest/image_id"),
            AMISelectorTerm(ssm_parameter="/not/published"),
        ],
        "1.32",
        now=NOW,
    )
    assert {ami.id for ami in result.amis} == {"ami-0c9a000000000f003", "ami-0b0c000000000e002"}
    assert len(seen) == 1 and result.missing_parameters == ("/not/published (ParameterNotFound)",)


def test_only_unusable_matches_is_not_found_and_says_why(default_aws):
    result = resolve(default_aws, AMISelectorTerm(name="payments-node-2025-02-10"))
    assert result.outcome is AMIOutcome.NOT_FOUND
    assert result.message.startswith("AMISelector did not match any AMIs")
    assert "ami-0c9a000000000f005 state is pending" in result.message


def test_deprecated_image_only_when_nothing_newer_is_usable(default_aws):
    result = resolve(default_aws, AMISelectorTerm(name="payments-node-2024-*"))
    assert [(ami.id, ami.deprecated) for ami in result.amis] == [("ami-0c9a000000000f001", True)]
    both = resolve(default_aws, AMISelectorTerm(name="payments-node-202*"))
    assert [ami.id for ami in both.amis] == ["ami-0c9a000000000f003"]


def image(image_id, date, name="n", arch="x86_64", deprecation=None, state="available"):
    raw = {"ImageId": image_id, "Name": name, "Architecture": arch, "CreationDate": date, "State": state}
    if deprecation:
        raw["DeprecationTime"] = deprecation
    return raw


def test_selection_prefers_non_deprecated_then_newer_then_greater_name():
    amis, _ = select_amis(
        [
            image("ami-new-deprecated", "2025-02-10T00:00:00.000Z", deprecation="2025-02-11T00:00:00Z"),
            image("ami-old", "2025-01-01T00:00:00.000Z"),
        ],
        {},
        NOW,
    )
    assert [ami.id for ami in amis] == ["ami-old"]
    amis, _ = select_amis(
        [image("ami-b", "2025-01-01T00:00:00Z", name="a"), image("ami-a", "2025-01-01T00:00:00Z", name="b")], {}, NOW
    )
    assert [ami.id for ami in amis] == ["ami-a"]


def test_future_deprecation_is_not_deprecated_and_other_architectures_are_skipped():
    amis, skipped = select_amis(
        [
            image("ami-1", "2025-01-01T00:00:00Z", deprecation="2030-01-01T00:00:00Z"),
            image("ami-2", "2025-01-01T00:00:00Z", arch="i386"),
        ],
        {},
        NOW,
    )
    assert [(ami.id, ami.deprecated) for ami in amis] == [("ami-1", False)]
    assert [s.id for s in skipped] == ["ami-2"] and "i386" in skipped[0].reason


def test_final_order_is_creation_date_descending_then_id():
    amis, _ = select_amis(
        [
            image("ami-b", "2025-01-01T00:00:00Z", arch="arm64"),
            image("ami-a", "2025-01-01T00:00:00Z"),
            image("ami-c", "2025-01-02T00:00:00Z"),
        ],
        {"ami-a": (STANDARD,), "ami-c": (NVIDIA,)},
        NOW,
    )
    assert [ami.id for ami in amis] == ["ami-c", "ami-a", "ami-b"]


_STATES_WORLD = (
    """\
region: us-west-2
accountId: "123456789012"
kubernetesVersion: "1.32"
instanceTypes: [m5.large]
images:
"""
    + "".join(
        f"  - {{id: ami-0e00000000000000{index}, name: team-node-{state}, architecture: x86_64, state: {state}, "
        f'creationDate: "2025-02-1{index}T00:00:00Z", tags: {{team: ml}}}}\n'
        for index, state in enumerate(
            ("available", "pending", "invalid", "deregistered", "transient", "failed", "error", "disabled")
        )
    )
    + """\
  - {id: ami-0f000000000000001, name: shared-node-v2, architecture: x86_64, creationDate: "2025-02-14T00:00:00Z", ownerId: "111122223333", ownerAlias: null, tags: {team: ml}}
  - {id: ami-0f000000000000002, name: shared-node-v1, architecture: x86_64, creationDate: "2025-01-01T00:00:00Z"}
"""
)


def test_every_image_state_but_available_is_skipped_with_its_state(world):
    env = world(_STATES_WORLD)
    result = resolve(env, AMISelectorTerm(name="team-node-*"))
    assert [ami.id for ami in result.amis] == ["ami-0e000000000000000"]
    assert sorted(s.reason.split(";")[0] for s in result.skipped) == sorted(
        f"state is {state}" for state in ("pending", "invalid", "deregistered", "transient", "failed", "error", "disabled")
    )


def test_a_name_term_without_owner_never_picks_another_accounts_newer_image(world):
    """EC2 is asked for self and amazon only: a third party's image of the same name does not count."""
    env = world(_STATES_WORLD)
    assert [ami.id for ami in resolve(env, AMISelectorTerm(name="shared-node-*")).amis] == ["ami-0f000000000000002"]
    named = resolve(env, AMISelectorTerm(name="shared-node-*", owner="111122223333"))
    assert [ami.id for ami in named.amis] == ["ami-0f000000000000001"]


def test_another_accounts_tags_are_invisible_to_a_tags_term(world):
    env = world(_STATES_WORLD)
    assert "ami-0f000000000000001" not in {ami.id for ami in resolve(env, AMISelectorTerm(tags={"team": "ml"})).amis}


def test_an_image_the_code_cannot_read_is_one_clear_persistent_error(default_aws, monkeypatch):
    from karpenter_gitops.adapters.aws import amis

    odd = [{"ImageId": "ami-0odd", "Name": "odd", "Architecture": "x86_64", "State": "available", "CreationDate": "last tuesday"}]
    monkeypatch.setattr(amis, "_describe", lambda aws, query: odd)
    result = resolve(default_aws, AMISelectorTerm(name="odd"))
    assert result.outcome is AMIOutcome.AWS_ERROR
    assert (
        result.message
        == "DescribeImages returned an image this tool cannot read: CreationDate or DeprecationTime 'last tuesday' is not an ISO 8601 time"
    )
    monkeypatch.setattr(amis, "_describe", lambda aws, query: [{"Name": "no id"}])
    assert resolve(default_aws, AMISelectorTerm(name="odd")).message.endswith("field ImageId is missing")
