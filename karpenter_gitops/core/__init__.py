"""What every layer shares: the data (findings, inputs, the CRD models, what AWS resolved, the cluster's nodes,
releases and feature gates, a run's outcome as its exit code: :mod:`.outcome`) and the logic the data itself
needs, which depends on no other layer: the models' fields as the CRDs declare them and their loading
(:mod:`.schema_fields`, :mod:`.typed_schema`), Karpenter's requirement algebra and instance-type labels
(:mod:`.requirements`, :mod:`.labels`), Kubernetes' name checks (:mod:`.name_validation`), cel-go's behaviour over the native CEL runtime (:mod:`.cel_go`), text helpers, and the one YAML
reader every layer parses with (:mod:`.yaml_reader`, in C where built). Karpenter's behaviour that puts these
together (AMI families, scheduling, status, drift) lives in :mod:`karpenter_gitops.karpenter`.

Layer: the bottom; imports nothing of the project. Opens no file and asks no service; decides no severity.
"""
