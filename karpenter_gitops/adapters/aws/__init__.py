"""Everything that talks to AWS: one AwsSession per reconcile run, and a resolver per concern.

``client`` (retries, call counts, memo), ``error_kinds`` (transient vs persistent), ``amis``,
``instance_profiles``, ``network_lookup``, ``instance_types`` (the catalogue), ``pricing``; ``embedded`` (moto seeded from a world:
``embedded_world``, ``embedded_seeding``, ``embedded_prices``) and ``throttling`` (injected throttling for tests).
"""
