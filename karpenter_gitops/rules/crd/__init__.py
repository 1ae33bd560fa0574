"""``crd/`` rules: the user's own CRDs (``validate --crd``) judge the objects, as the API server would.

Importing the package declares the three rules (:mod:`.declared`) and nothing heavier; the check itself
(:mod:`.engine`, with :mod:`.openapi` and :mod:`.validation_rules`) brings in jsonschema and a CEL
interpreter, which a plain ``validate`` never needs, so it is imported only when a run is given CRDs.
"""

from karpenter_gitops.rules.crd.declared import CEL, ENGINE, SCHEMA

__all__ = ["CEL", "ENGINE", "SCHEMA"]
