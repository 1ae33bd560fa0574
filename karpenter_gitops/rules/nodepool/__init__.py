"""Our NodePool rules (``nodepool/``): what the CRD admits but Karpenter refuses at run time, or what
silently does not do what it says. The CRD's own rules are :mod:`karpenter_gitops.rules.cel.nodepool`.
The pool's template is judged by :mod:`.template_keys` (its label and taint keys), :mod:`.node_class_ref` (the
class it names) and :mod:`.template_taints`; :mod:`.values` judges the values its requirements name.
"""

from karpenter_gitops.rules.nodepool import node_class_ref, template_keys, template_taints, values  # noqa: F401  (declare on import)
