"""The offline Pulumi runner, as the tests use it (see components/offline.py)."""

from components.offline import RECONCILIATION, Recorder, Registration, run  # noqa: F401
