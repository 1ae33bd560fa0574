"""MIME userData: the layouts Go's reader refuses, and the ones it accepts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.upstream import userdata

from karpenter_gitops.karpenter.amifamily.userdata import go_multipart, mime
from karpenter_gitops.karpenter.amifamily.userdata.problems import MIME, MIME_IGNORED

GOOD = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n'
    '--BOUNDARY\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho hi\n--BOUNDARY--\n'
)


def _messages(text: str) -> str:
    return " ".join(p.message for p in mime.read(text).problems)


@pytest.mark.parametrize(
    "text",
    [GOOD, GOOD.replace("\n", "\r\n"), GOOD.replace('"BOUNDARY"', "BOUNDARY"), GOOD.rstrip("\n")],
    ids=["lf", "crlf", "unquoted-parameter", "no-final-newline"],
)
def test_well_formed_archives_have_one_shell_part(text):
    archive = mime.read(text)
    assert archive.problems == ()
    assert [p.content_type for p in archive.parts] == ["text/x-shellscript"]
    assert archive.parts[0].body.replace("\r", "").startswith("#!/bin/bash\necho hi")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace('"BOUNDARY"\n\n', '"BOUNDARY"\n'), "not followed by an empty line"),
        (GOOD.replace("\n--BOUNDARY", '\n--"BOUNDARY"'), 'written as --"BOUNDARY"'),
        (GOOD.replace("--BOUNDARY--\n", ""), "without a closing --BOUNDARY-- line"),
        (GOOD.replace("MIME-Version: 1.0\n", ""), "no MIME-Version header"),
        (GOOD.replace('us-ascii"\n\n', 'us-ascii"\n'), "part 1 has no empty line"),
        (GOOD.replace('; boundary="BOUNDARY"', ""), "no boundary parameter"),
        (GOOD.replace("\n--BOUNDARY\n", "\n-- BOUNDARY\n"), "no line --BOUNDARY starts a part"),
        ("MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n", "only reads multipart"),
    ],
    ids=[
        "no-blank-line",
        "quoted-delimiter",
        "no-closing",
        "no-version",
        "part-blank-line",
        "no-boundary",
        "no-start",
        "single-part",
    ],
)
def test_broken_archives_are_explained(text, expected):
    assert expected in _messages(text)


def test_plain_text_is_one_part_without_content_type():
    assert mime.read("#!/bin/bash\necho hi\n") == mime.Archive((mime.Part(None, "#!/bin/bash\necho hi\n"),))


def test_base64_parts_are_decoded():
    text = GOOD.replace('us-ascii"\n', 'us-ascii"\nContent-Transfer-Encoding: base64\n').replace(
        "#!/bin/bash\necho hi\n", "IyEvYmluL2Jhc2gKZWNobyBoaQo=\n"
    )
    assert mime.read(text).parts[0].body == "#!/bin/bash\necho hi\n"


# --- Karpenter's own reader (AL2, AL2023), in its words ----------------------------------------------
# The expected errors are what karpenter-provider-aws v1.14.1's two readers (bootstrap/mime.NewArchive for
# AL2023, eksbootstrap's copyCustomUserDataParts for AL2) return, run with Go 1.26 on the same text.

ISSUE_2098 = GOOD.replace('"BOUNDARY"\n\n', '"BOUNDARY"\n')  # karpenter-provider-aws#2098 / #3212: no empty line
EKS_AMI_2318 = (  # awslabs/amazon-eks-ami#2318: a part's header runs straight into the script
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\n'
    'Content-Type: text/x-shellscript; charset="us-ascii"\n#!/bin/bash\nset -ex\n\n\n--//--\n'
)


@pytest.mark.parametrize(
    ("text", "al2", "al2023"),
    [
        (
            ISSUE_2098,
            "parsing custom user data input unreadable user data malformed header line: --BOUNDARY",
            "parsing custom UserData, malformed header line: --BOUNDARY",
        ),
        (
            EKS_AMI_2318,
            'parsing custom user data input malformed MIME header: missing colon: "#!/bin/bash"',
            'parsing custom UserData, parsing content, malformed MIME header: missing colon: "#!/bin/bash"',
        ),
        (
            GOOD.replace("--BOUNDARY--\n", ""),
            "parsing custom user data input unexpected EOF",
            "parsing custom UserData, parsing content, #!/bin/bash…, unexpected EOF",
        ),  # the quoted content shortened
        (
            GOOD.replace('Content-Type: multipart/mixed; boundary="BOUNDARY"\n', ""),
            "parsing custom user data input user data does not define a content-type header mime: no media type",
            "parsing custom UserData, archive doesn't have Content-Type header, mime: no media type",
        ),
        (
            GOOD.replace('multipart/mixed; boundary="BOUNDARY"', "text/x-shellscript"),
            "parsing custom user data input user data is not in multipart MIME format",
            "parsing custom UserData, archive is not in multipart format, %!w(<nil>)",
        ),
        (
            GOOD.replace('; boundary="BOUNDARY"', ""),
            "parsing custom user data input multipart: boundary is empty",
            "parsing custom UserData, parsing content, multipart: boundary is empty",
        ),
        (
            GOOD.replace("multipart/mixed;", "multipart/mixed"),
            "parsing custom user data input user data does not define a content-type header mime: unexpected content after media subtype",
            "parsing custom UserData, archive doesn't have Content-Type header, mime: unexpected content after media subtype",
        ),
        (
            GOOD.replace("\nContent-Type: text/x", "\n Content-Type: text/x"),
            'parsing custom user data input malformed MIME header initial line: " Content-Type: text/x-shellscript; charset=\\"us-ascii\\""',
            'parsing custom UserData, parsing content, malformed MIME header initial line: " Content-Type: text/x-shellscript; charset=\\"us-ascii\\""',
        ),
    ],
    ids=[
        "issue-2098-no-blank-line",
        "eks-ami-2318-part-blank-line",
        "no-closing",
        "no-content-type",
        "single-part",
        "no-boundary",
        "bad-media-type",
        "indented-part-header",
    ],
)
def test_refusals_carry_karpenters_words_per_family(text, al2, al2023):
    for family, words in (("AL2", al2), ("AL2023", al2023)):
        problem = mime.karpenter_refusal(text, family)
        assert problem.message == "creating launch template, " + words
        assert "no node launches" in problem.hint


def test_archives_karpenter_reads_are_not_refused():
    for text in (GOOD, GOOD.replace("\n", "\r\n"), GOOD.replace("MIME-Version: 1.0\n", ""), GOOD.rstrip("\n")):
        for family in ("AL2", "AL2023"):
            assert mime.karpenter_problems(text, family) == []


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("al2023_mime_userdata_input.golden", "AL2023"),
        ("al2_userdata_input.golden", "AL2"),
        ("al2_userdata_content_type_first_input.golden", "AL2"),
    ],
)
def test_karpenters_own_fixtures_are_read_whole(name, family):
    text = (userdata() / name).read_text()
    assert mime.karpenter_problems(text, family) == []
    assert [p.content_type.split(";")[0] for p in go_multipart.karpenter_read(text)] == [
        p.content_type for p in mime.read(text).parts
    ]


def test_quoted_delimiters_lose_every_part_without_a_refusal():
    text = GOOD.replace("\n--BOUNDARY", '\n--"BOUNDARY"')
    assert mime.karpenter_refusal(text, "AL2023") is None
    (problem,) = mime.karpenter_problems(text, "AL2023")
    assert problem.rule == MIME_IGNORED and 'written as --"BOUNDARY"' in problem.message


@pytest.mark.parametrize(
    ("old", "new", "family", "expected"),
    [
        ("text/x-shellscript", "text/x-shell-script", "AL2023", "did you mean text/x-shellscript?"),
        ('Content-Type: text/x-shellscript; charset="us-ascii"\n', "", "AL2", None),  # '#!' runs untyped
        ('text/x-shellscript; charset="us-ascii"', "application/node.eks.aws", "AL2", "use one of"),
        ("#!/bin/bash\necho hi", "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig", "AL2023", "application/node.eks.aws"),
    ],
    ids=["typo", "untyped-script", "nodeconfig-on-al2", "mistyped-nodeconfig"],
)
def test_parts_nothing_on_the_node_reads(old, new, family, expected):
    text = GOOD.replace(old, new)
    if "NodeConfig" in new:
        text = text.replace('text/x-shellscript; charset="us-ascii"', "text/plain")
    found = mime.karpenter_problems(text, family)
    if expected is None:
        assert found == []
    else:
        assert [p.rule for p in found] == [MIME_IGNORED] and expected in found[0].hint


@given(st.text(alphabet='MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\r\t-#!é', max_size=300))
def test_any_text_gets_an_answer_and_never_an_exception(text):
    for family in ("AL2", "AL2023"):
        for problem in mime.karpenter_problems(text, family):
            assert problem.rule in (MIME, MIME_IGNORED) and problem.message


def test_a_nested_multipart_part_is_walked_into_not_warned_about():
    nested = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="OUTER"\n\n--OUTER\n'
        'Content-Type: multipart/alternative; boundary="INNER"\n\n--INNER\nContent-Type: text/x-shellscript\n\n'
        "#!/bin/sh\necho hi\n--INNER--\n\n--OUTER--\n"
    )
    assert mime.karpenter_problems(nested, "AL2023") == []


def test_a_part_type_nodeadm_cannot_parse_stops_nodeadm_on_al2023_only():
    """nodeadm parses every non-empty part Content-Type (configprovider parseMultipart) and fails on the first bad one."""
    text = GOOD.replace('text/x-shellscript; charset="us-ascii"', "text/x-shellscript charset=us-ascii")
    (problem,) = mime.karpenter_problems(text, "AL2023")
    assert problem.rule == MIME
    assert 'nodeadm init stops with "mime: unexpected content after media subtype"' in problem.message
    assert [p.rule for p in mime.karpenter_problems(text, "AL2")] == [MIME_IGNORED]  # cloud-init skips the part
