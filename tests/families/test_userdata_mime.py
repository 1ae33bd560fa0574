"""MIME userData: the layouts Go's reader refuses, and the ones it accepts."""

from __future__ import annotations

import pytest

from karpenter_gitops.families.userdata import mime

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
    ids=["no-blank-line", "quoted-delimiter", "no-closing", "no-version", "part-blank-line", "no-boundary", "no-start", "single-part"],
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
