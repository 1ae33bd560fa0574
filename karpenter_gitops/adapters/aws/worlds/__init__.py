"""World fixtures for the embedded AWS (YAML package data; see karpenter_gitops.adapters.aws.embedded_world)."""
