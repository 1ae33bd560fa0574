"""The exit codes as one type: their numbers are the contract, and a fleet's is its worst run's."""

from __future__ import annotations

from karpenter_gitops.core.outcome import Outcome


def test_the_codes_are_the_documented_contract():
    assert {outcome.name: int(outcome) for outcome in Outcome} == {"OK": 0, "FINDINGS": 1, "UNUSABLE_INPUT": 2, "TRANSIENT": 3}


def test_a_run_left_undecided_outranks_findings_which_outrank_a_clean_run():
    assert Outcome.worst([Outcome.OK, Outcome.TRANSIENT, Outcome.FINDINGS]) is Outcome.TRANSIENT
    assert Outcome.worst([Outcome.FINDINGS, Outcome.OK]) is Outcome.FINDINGS
    assert Outcome.worst([Outcome.OK, Outcome.OK]) is Outcome.OK


def test_no_run_at_all_is_clean():
    assert Outcome.worst([]) is Outcome.OK
