"""The embedded AWS: the world-fixture contract, what seeding makes visible, the environment."""

import errno
import os
import socket

import pytest

from karpenter_gitops.adapters.aws.embedded import EmbeddedServer, embedded_aws
from karpenter_gitops.adapters.aws.embedded_world import load_world, parse_world
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.versions import Kubernetes

MINIMAL = 'region: us-west-2\nkubernetesVersion: "1.32"\n'


def test_default_world_is_packaged_and_valid():
    world = load_world()
    assert (world.region, world.kubernetes, world.instance_types) == ("us-west-2", Kubernetes(1, 32), "all")
    assert {"EmptyProfile", "KarpenterNodeProfile"} <= {p["name"] for p in world.section("instanceProfiles")}


@pytest.mark.parametrize(
    "text, field",
    [
        (MINIMAL + "colour: blue\n", "(top level)"),
        (MINIMAL + "images: [{id: ami-1, name: x, architecture: sparc}]\n", "images[0].architecture"),
        (MINIMAL + "images: [{id: ami-1, name: x, architecture: arm64, sate: pending}]\n", "images[0]"),
        (MINIMAL + "subnets: [{id: subnet-1, availabilityZone: us-west-2a, tags: {a: 1}}]\n", "subnets[0].tags.a"),
        ("region: us-west-2\nkubernetesVersion: 1.30\n", "kubernetesVersion"),
        (MINIMAL + "roles: [{name: r}, {name: r}]\n", "roles[1].name"),
        (MINIMAL + "instanceProfiles: [{name: p, roles: [ghost]}]\n", "instanceProfiles[0].roles[0]"),
    ],
)
def test_bad_fields_are_input_errors_naming_file_and_field(text, field):
    with pytest.raises(InputError) as caught:
        parse_world(text, "worlds/bad.yaml")
    assert str(caught.value).startswith(f"worlds/bad.yaml: world field {field}:")


def test_missing_file_and_bad_yaml_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        load_world(tmp_path / "absent.yaml")
    with pytest.raises(InputError, match="not valid YAML"):
        parse_world("region: [", "x.yaml")


def test_unquoted_yaml_timestamps_are_accepted():
    world = parse_world(
        MINIMAL + "images: [{id: ami-1, name: x, architecture: arm64, creationDate: 2025-02-01T00:00:00Z}]", "t.yaml"
    )
    assert world.section("images")[0]["creationDate"] == "2025-02-01T00:00:00Z"


def test_seeded_images_keep_state_owner_dates_and_deprecation(default_aws):
    ec2 = default_aws.session().client("ec2")
    images = {i["ImageId"]: i for i in ec2.describe_images(Owners=["self", "amazon"], IncludeDeprecated=True)["Images"]}
    assert len(images) == 29
    pending = images["ami-0c9a000000000f005"]
    assert (pending["State"], pending["OwnerId"], pending["CreationDate"]) == (
        "pending",
        "123456789012",
        "2025-02-10T09:30:00.000Z",
    )
    assert images["ami-0c9a000000000f001"]["DeprecationTime"] == "2025-01-15T00:00:00.000Z"
    assert "DeprecationTime" not in images["ami-0c9a000000000f003"]
    eks = ec2.describe_images(Owners=["602401143452"], Filters=[{"Name": "architecture", "Values": ["arm64"]}])["Images"]
    assert len(eks) == 4


def test_environment_points_at_the_emulator_and_is_restored(monkeypatch, embedded_server):
    monkeypatch.setenv("AWS_PROFILE", "real-account")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with embedded_aws(server=embedded_server) as env:
        assert os.environ["AWS_ENDPOINT_URL"] == env.endpoint_url.rstrip("/")
        assert os.environ["AWS_ACCESS_KEY_ID"] == "testing" and "AWS_PROFILE" not in os.environ
        with pytest.raises(RuntimeError, match="already active"):
            with embedded_aws(server=embedded_server):
                pass
    assert os.environ["AWS_PROFILE"] == "real-account" and "AWS_ENDPOINT_URL" not in os.environ


def test_a_standalone_embedded_aws_starts_and_stops_its_own_server():
    with embedded_aws(parse_world(MINIMAL + "roles: [{name: r}]", "t.yaml")) as env:
        assert env.session().call("iam", "GetRole", RoleName="r")["Role"]["RoleName"] == "r"
        assert env.endpoint_url.startswith("http://127.0.0.1:")


def test_the_server_owns_its_port_from_construction_so_no_other_process_can_take_it():
    """A port probed and released before moto bound it could be taken meanwhile; moto's thread then died
    and ``plan --embedded-aws`` waited forever. Another socket now finds the port taken, and the server answers."""
    server = EmbeddedServer()
    try:
        port = int(server.endpoint_url.rsplit(":", 1)[1])
        with socket.socket() as intruder, pytest.raises(OSError) as taken:
            intruder.bind(("127.0.0.1", port))
        assert taken.value.errno == errno.EADDRINUSE
        with embedded_aws(parse_world(MINIMAL + "roles: [{name: r}]", "t.yaml"), server=server.start()) as env:
            assert env.session().call("iam", "GetRole", RoleName="r")["Role"]["RoleName"] == "r"
    finally:
        server.stop()


def test_a_server_that_cannot_listen_is_one_line_not_a_hang(monkeypatch):
    import werkzeug.serving

    def refused(*_args, **_kwargs):
        raise OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address")

    monkeypatch.setattr(werkzeug.serving, "make_server", refused)
    with pytest.raises(InputError) as caught:
        EmbeddedServer()
    assert str(caught.value).startswith("the embedded AWS cannot listen on 127.0.0.1: Cannot assign requested address (hint:")
    assert "\n" not in str(caught.value)


def test_a_clusters_endpoint_is_the_same_in_every_run(default_aws):
    """moto draws EKS endpoints at random per process; the world's clusters keep theirs, so two runs
    of a program (a Helm release's clusterEndpoint) compare equal, as against a real cluster."""
    import hashlib

    token = hashlib.sha256(b"123456789012/us-west-2/demo").hexdigest()[:32].upper()
    assert (
        default_aws.session().call("eks", "DescribeCluster", name="demo")["cluster"]["endpoint"]
        == f"https://{token}.gr7.us-west-2.eks.amazonaws.com"
    )


@pytest.mark.parametrize(("family", "field"), [("ipv4", "serviceIpv4Cidr"), ("ipv6", "serviceIpv6Cidr")])
def test_a_clusters_service_range_is_there_as_in_eks(world, family, field):
    """Karpenter reads it from DescribeCluster before it validates an AL2023 class; moto drops its
    default range when the world gives the IP family, and the class then never became Ready."""
    aws = world(f"region: us-west-2\nkubernetesVersion: '1.32'\nclusters: [{{name: c, ipFamily: {family}}}]\n")
    network = aws.session().call("eks", "DescribeCluster", name="c")["cluster"]["kubernetesNetworkConfig"]
    assert network["ipFamily"] == family and network[field].endswith(("/16", "/108"))


@pytest.mark.parametrize(
    ("profile", "refused"),
    [
        ("KarpenterNodeProfile", False),
        ("NoSuchProfile", True),
        ("arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile", True),
    ],
)
def test_a_launch_with_a_profile_iam_does_not_have_is_refused_as_ec2_refuses_it(default_aws, profile, refused):
    """moto launches any profile; EC2 refuses it, a dry run too, and Karpenter's validation reads that answer."""
    import botocore.exceptions

    ec2 = default_aws.session().client("ec2")
    template = f"lt-{profile.rsplit('/', 1)[-1]}-{refused}"
    ec2.create_launch_template(
        LaunchTemplateName=template,
        LaunchTemplateData={"ImageId": "ami-0a23000000000b001", "IamInstanceProfile": {"Name": profile}},
    )
    with pytest.raises(botocore.exceptions.ClientError) as answer:
        ec2.run_instances(
            DryRun=True,
            MinCount=1,
            MaxCount=1,
            InstanceType="m5.large",
            LaunchTemplate={"LaunchTemplateName": template, "Version": "$Latest"},
        )
    expected = (
        (
            "InvalidParameterValue",
            f"Value ({profile}) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name",
        )
        if refused
        else ("DryRunOperation", answer.value.response["Error"]["Message"])
    )
    assert (answer.value.response["Error"]["Code"], answer.value.response["Error"]["Message"]) == expected


@pytest.mark.parametrize(("size", "refused"), [(16_384, False), (16_385, True)])
def test_launch_template_user_data_over_16_kib_decoded_is_refused_as_ec2_refuses_it(default_aws, size, refused):
    """moto takes any size; EC2 counts the decoded bytes, and Karpenter's validation reads its answer (1.14.1 on)."""
    import base64

    import botocore.exceptions

    ec2 = default_aws.session().client("ec2")
    data = {"ImageId": "ami-0a23000000000b001", "UserData": base64.b64encode(b"#" * size).decode()}
    if not refused:
        ec2.create_launch_template(LaunchTemplateName=f"lt-{size}", LaunchTemplateData=data)
        return
    with pytest.raises(botocore.exceptions.ClientError) as answer:
        ec2.create_launch_template(LaunchTemplateName=f"lt-{size}", LaunchTemplateData=data)
    error = answer.value.response["Error"]
    assert (error["Code"], error["Message"]) == ("InvalidUserData.Malformed", "User data is limited to 16384 bytes")
