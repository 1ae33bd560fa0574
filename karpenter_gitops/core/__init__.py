"""Pure data every layer shares: findings, inputs, the CRD models and their schema, requirements,
labels, what AWS resolved, conditions, the mapping, the plan, versions and small text helpers.

Layer: the bottom; imports nothing of the project. No I/O, no decisions about severity.
"""
