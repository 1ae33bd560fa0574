"""verify's PR comment on whatever Git, the cluster and AWS hold: nothing they say becomes markup
(``support.markdown_oracle``), and the comment stays within GitHub's limit however many and long the values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.markdown_oracle import HOSTILE_VALUE, check

from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch
from karpenter_gitops.karpenter.status.verification import CATEGORIES, Difference, Verification
from karpenter_gitops.output import verification_text as shown

GITHUB_LIMIT = 65_536
VALUE = HOSTILE_VALUE | st.sampled_from(["", "x" * 70_000, "`" * 3_000, "a\\|b"])
COUNTS = st.dictionaries(VALUE, st.integers(0, 9), max_size=3)


@st.composite
def verifications(draw) -> Verification:
    differences = draw(
        st.lists(
            st.builds(
                Difference, st.sampled_from(CATEGORIES), VALUE, VALUE, st.none() | VALUE | st.integers(), st.none() | VALUE, VALUE
            ),
            max_size=4,
        )
    )
    launched = draw(st.none() | st.lists(st.builds(PoolLaunch, VALUE, COUNTS, COUNTS, COUNTS, COUNTS, COUNTS), max_size=2))
    return Verification(
        draw(VALUE),
        tuple(differences),
        tuple(draw(st.lists(VALUE, max_size=3))),
        (),
        draw(st.dictionaries(st.sampled_from(["EC2NodeClass", "NodePool"]), st.integers(0, 5))),
        tuple(draw(st.lists(VALUE, max_size=3))),
        None if launched is None else tuple(launched),
    )


@settings(max_examples=60, deadline=None)
@given(verification=verifications())
def test_nothing_the_cluster_says_becomes_markup(verification):
    comment = shown.comment(verification)
    check(comment)
    assert len(comment) <= GITHUB_LIMIT


def test_many_long_differences_fit_with_their_full_text_left_to_the_json():
    differences = tuple(
        Difference("drift", f"EC2NodeClass/c{i}", "spec.tags.x", "v" * 5_000, "w" * 5_000, "n" * 5_000) for i in range(60)
    )
    comment = shown.comment(Verification("prod", differences))
    check(comment)
    assert len(comment) <= GITHUB_LIMIT
    assert "… and 10 more (the JSON output has them all)" in comment
    assert comment.endswith("The values cut above are whole in `--format json`.\n")


def test_the_heading_says_the_verdict_without_the_clusters_name():
    comment = shown.comment(Verification("ctx: **approved** :white_check_mark:", checked={"NodePool": 1}))
    assert comment.startswith(
        "### Karpenter verify: :white_check_mark: the cluster is as the pull request said (0 drift, 0 prediction, "
        "0 node; compared 1 NodePool)\n"
    )


def test_what_would_not_fit_is_written_again_with_fewer_rows_and_less_room():
    differences = tuple(
        Difference(category, f"NodePool/p{i}", "spec.x", "v" * 5_000, "w" * 5_000, "n" * 5_000)
        for category in CATEGORIES
        for i in range(50)
    )
    comment = shown.comment(Verification("prod", differences))
    check(comment)
    assert len(comment) <= GITHUB_LIMIT
    assert comment.count("… and 40 more (the JSON output has them all)") == 3
    assert f"`{'v' * 64}`… (cut, 1 below)" in comment
