"""What the validate benchmarks share: the generated Karpenter objects, timing a whole process, kubeconform.

A package beside the scripts (not a script itself, so ``make bench`` does not run it); a script
in ``benchmarks/`` imports it as ``harness`` because Python puts the script's folder on the path.
"""
