"""Pure data every layer shares: findings, inputs, the CRD models and their schema, requirements,
labels, what AWS resolved, conditions, the mapping, the plan, versions, small text helpers, and
the one YAML reader every layer parses with (:mod:`.yaml_reader`: text in, values or nodes out).

Layer: the bottom; imports nothing of the project. No I/O, no decisions about severity.
"""
