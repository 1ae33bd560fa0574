"""What Karpenter will report: each EC2NodeClass's status conditions (:mod:`.nodeclass_conditions`), the
predicted status of every class and pool as one value (:mod:`.prediction`), and that prediction held against what a
cluster reports after the merge (:mod:`.verification`)."""
