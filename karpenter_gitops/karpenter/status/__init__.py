"""What Karpenter will report: each EC2NodeClass's status conditions (:mod:`.conditions`), the predicted
status of every class and pool as one value (:mod:`.plan`), and that prediction held against what a
cluster reports after the merge (:mod:`.verification`)."""
