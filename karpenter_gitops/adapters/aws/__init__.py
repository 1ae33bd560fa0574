"""Everything that talks to AWS: one AwsSession per reconcile run, and a resolver per concern.

``client`` (retries, call counts, memo), ``errors`` (transient vs persistent), ``amis``,
``instance_profiles``, ``network``, ``catalogue``, and ``embedded`` (moto seeded from a world).
"""
