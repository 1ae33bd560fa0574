"""One use case per command (validate, plan, render, preview, bump, rules, pack-config, policy-pack), shared by the
CLI, the Pulumi components (:mod:`.stack`) and the policy pack (:mod:`.analyze`).

Layer: imports output and below.
"""
