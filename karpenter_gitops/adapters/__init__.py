"""All I/O with the world: AWS (:mod:`.aws`, with the embedded moto world), Kubernetes (:mod:`.kube`)
and git (:mod:`.git`). The only layer that imports boto3, kubernetes, moto or runs subprocesses.

Layer: imports load and below; never the judge.
"""
