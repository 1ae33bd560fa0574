"""Data every layer shares: findings, inputs, the CRD models and their schema, requirements, labels,
what AWS resolved, the cluster's nodes, versions and feature gates, small text helpers, and the one YAML
reader every layer parses with (:mod:`.yaml_reader`: text in, values or nodes out). Karpenter's behaviour
over this data lives in :mod:`karpenter_gitops.karpenter`.

Layer: the bottom; imports nothing of the project. No I/O, no decisions about severity.
"""
