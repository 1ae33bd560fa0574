"""Planning AMI pin bumps against the embedded default world: which release or images a pin moves to, and why not."""

from __future__ import annotations

import pytest

from karpenter_gitops.adapters.aws.ami_catalog import AwsAmiCatalog, AwsUnavailable
from karpenter_gitops.adapters.aws.throttling import Throttler
from karpenter_gitops.app.bump import (
    PinChange,
    Problem,
    Releases,
    Unchanged,
    plan_bump,
)
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.load import into_inputs

NETWORK = {
    "role": "KarpenterNodeRole-demo",
    "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
}


def inputs(classes: dict, sources: dict | None = None) -> Inputs:
    settings = {"karpenter-gitops:nodeClasses": {name: {**NETWORK, **spec} for name, spec in classes.items()}}
    if sources is not None:
        settings["karpenter-gitops:amiSources"] = sources
    return into_inputs.load_documents([("Pulumi.test.yaml", [{"config": settings}])])


def alias(text: str) -> dict:
    return {"amiSelectorTerms": [{"alias": text}]}


def custom(*ids: str) -> dict:
    return {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": i} for i in ids]}


def plan(env, specs: dict, sources: dict | None = None, **options):
    return plan_bump(inputs(specs, sources), AwsAmiCatalog(env.session(), Kubernetes(1, 32)), **options)


def only(result, kind):
    [entry] = [*result.changes, *result.unchanged, *result.problems]
    assert isinstance(entry, kind), entry
    return entry


def test_alias_moves_to_the_newest_complete_release_and_notes_the_incomplete_one(default_aws):
    result = plan(default_aws, {"default": alias("al2023@v20250201")})
    change = only(result, PinChange)
    assert (change.old, change.new) == (({"alias": "al2023@v20250201"},), ({"alias": "al2023@v20250212"},))
    assert set(change.images) == {f"ami-0a23000000000c00{n}" for n in range(1, 6)}
    [note] = result.notes
    assert "al2023@v20250214" in note and "4 of 5 variant parameters not yet published" in note


def test_a_release_with_a_pending_image_is_never_taken(default_aws):
    result = plan(default_aws, {"gpu": alias("bottlerocket@v1.32.0")})
    assert only(result, PinChange).new == ({"alias": "bottlerocket@1.33.0"},)
    [note] = result.notes
    assert "bottlerocket@1.34.0" in note and "ami-0b0c000000000f004" in note and "pending" in note


def test_the_newest_usable_release_is_left_alone(default_aws):
    result = plan(default_aws, {"default": alias("al2023@v20250212")})
    assert "newest usable release" in only(result, Unchanged).reason


def test_latest_is_pinned_only_when_asked_to_the_release_it_resolves_to_today(default_aws):
    left = plan(default_aws, {"edge": alias("al2023@latest")})
    assert "--pin-latest" in only(left, Unchanged).reason
    pinned = plan(default_aws, {"edge": alias("bottlerocket@latest")}, pin_latest=True)
    assert only(pinned, PinChange).new == ({"alias": "bottlerocket@1.33.0"},)


def test_windows_aliases_are_skipped_with_a_note(default_aws):
    result = plan(default_aws, {"win": {"amiFamily": "Windows2022", **alias("windows2022@latest")}}, pin_latest=True)
    only(result, Unchanged)
    assert any("Windows" in note for note in result.notes)


def test_custom_pin_follows_its_source_to_available_images_only(default_aws):
    result = plan(
        default_aws, {"payments": custom("ami-0c9a000000000f001")}, {"payments": [{"name": "payments-node-*", "owner": "self"}]}
    )
    change = only(result, PinChange)
    # one id per distinct image in status.amis order (newest first): arm64 09:41, then x86_64 09:30
    assert change.new == ({"id": "ami-0c9a000000000f002"}, {"id": "ami-0c9a000000000f003"})
    assert any("ami-0c9a000000000f005" in n and "pending" in n for n in result.notes)
    assert any("ami-0c9a000000000f004" in n and "failed" in n for n in result.notes)


def test_a_current_custom_pin_is_unchanged(default_aws):
    result = plan(
        default_aws, {"payments": custom("ami-0c9a000000000f003")}, {"payments": [{"name": "payments-node-20*", "owner": "self"}]}
    )
    assert "newest available" in only(result, Unchanged).reason


def test_pins_that_cannot_resolve_are_problems(default_aws):
    nothing = plan(
        default_aws, {"payments": custom("ami-0c9a000000000f003")}, {"payments": [{"name": "no-such-build-*", "owner": "self"}]}
    )
    assert "did not match any AMIs" in only(nothing, Problem).message
    unpublished = plan(default_aws, {"gpu": alias("bottlerocket@1.99.0")})
    assert "failed to discover any AMIs" in only(unpublished, Problem).message


def test_classes_with_nothing_to_bump_from_are_left_alone_and_class_filter_applies(default_aws):
    result = plan(
        default_aws,
        {
            "ids": custom("ami-0c9a000000000f003"),
            "tags": {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": {"team": "payments"}}]},
            "default": alias("al2023@v20250201"),
        },
        classes={"ids", "tags"},
    )
    assert result.changes == () and {u.node_class for u in result.unchanged} == {"ids", "tags"}
    assert "amiSources" in result.unchanged[0].reason and "not pinned" in result.unchanged[1].reason


def test_throttled_aws_stops_the_plan_instead_of_deciding(default_aws, monkeypatch):
    from botocore.retries.standard import ExponentialBackoff

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0)
    aws = default_aws.session(max_attempts=2)
    Throttler(1.0).install(aws)
    with pytest.raises(AwsUnavailable):
        plan_bump(inputs({"default": alias("al2023@v20250201")}), AwsAmiCatalog(aws, Kubernetes(1, 32)))


def test_alias_pins_need_a_kubernetes_version(default_aws):
    with pytest.raises(InputError, match="Kubernetes version"):
        plan_bump(inputs({"default": alias("al2023@v20250201")}), AwsAmiCatalog(default_aws.session(), None))


def test_release_discovery_orders_versions_and_ignores_moving_names():
    root = "/aws/service/bottlerocket/aws-k8s-1.32/x86_64/"
    templates = [root + "0VERSION0/image_id", root.replace("x86_64", "arm64") + "0VERSION0/image_id"]
    listing = {
        root + v + "/image_id": f"ami-{n}"
        for n, v in enumerate(["1.9.0", "1.10.0", "1.10.0-abc", "latest", "recommended", "1.11.0"])
    }
    listing.update({templates[1].replace("0VERSION0", v): "ami-a" for v in ("1.9.0", "1.10.0", "1.10.0-abc")})
    releases = Releases.from_listing(templates, [root + "latest/image_id", templates[1].replace("0VERSION0", "latest")], listing)
    assert set(releases.images) == {"1.9.0", "1.10.0", "1.10.0-abc", "1.11.0"}
    assert releases.newer_than("v1.9.0") == ["1.11.0", "1.10.0", "1.10.0-abc"]
    assert releases.unpublished("1.11.0") == [templates[1].replace("0VERSION0", "1.11.0")]
    assert releases.unpublished("1.10.0") == []


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ({"paymnts": [{"name": "x-*", "owner": "self"}]}, "no such class"),
        ({"payments": []}, "non-empty list"),
        ({"payments": [{"nmae": "x-*"}]}, "amiSources.payments[0]"),
        ({"payments": [{"id": "ami-0c9a000000000f003"}]}, "cannot select by id"),
        ({"payments": [{"alias": "al2023@latest"}]}, "cannot select by alias"),
        ({"payments": [{"owner": "self"}]}, "expected one of name, tags or ssmParameter"),
        ({"default": [{"name": "x-*", "owner": "self"}]}, "selects by alias"),
    ],
)
def test_ami_sources_are_validated_strictly(sources, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        inputs({"payments": custom("ami-0c9a000000000f003"), "default": alias("al2023@v20250201")}, sources)
