"""The two version types: a Kubernetes minor parsed once where it enters, compared as its pair, written back as AWS writes it."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.core.versions import Kubernetes


@pytest.mark.parametrize("text", ["1.33", "v1.33", "v1.33.2", " 1.33 "])
def test_a_kubernetes_version_parses_as_users_write_it(text):
    assert Kubernetes.parse(text) == Kubernetes(1, 33)


@pytest.mark.parametrize("text", ["1.x", "133", "", "one.33", "1."])
def test_a_malformed_kubernetes_version_is_refused(text):
    with pytest.raises(ValueError, match="is not a Kubernetes version"):
        Kubernetes.parse(text)


def test_it_is_written_back_as_aws_names_it():
    """SSM parameter paths and AMI names carry ``1.33``, whatever the user wrote."""
    assert str(Kubernetes.parse("v1.33.2")) == "1.33" and f"aws-k8s-{Kubernetes(1, 9)}" == "aws-k8s-1.9"


def test_it_compares_as_its_pair():
    assert Kubernetes(1, 9) < Kubernetes(1, 10) < Kubernetes(2, 0)  # not as text, where "1.10" < "1.9"
    assert Kubernetes(1, 33) >= (1, 33) and Kubernetes(1, 32) < (1, 33)  # the families' literal gates


@given(st.text())
def test_any_text_parses_or_is_refused_with_a_value_error(text):
    try:
        parsed = Kubernetes.parse(text)
    except ValueError:
        return
    assert Kubernetes.parse(str(parsed)) == parsed


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_written_back_it_parses_to_itself(major, minor):
    assert Kubernetes.parse(str(Kubernetes(major, minor))) == Kubernetes(major, minor)
