"""EC2's instance families and sizes, known offline: what a NodePool requirement can name at all.

An ``In`` requirement on ``karpenter.k8s.aws/instance-family`` (or ``-category``, ``-size``, or
``node.kubernetes.io/instance-type``) that names a family no instance type has selects nothing:
beside valid values the typo is dead weight, alone it empties the pool. Offline we know the names
EC2 has, taken from the EC2 API's ``InstanceType`` enum (botocore 1.44.8, 1437 types); ``plan``
checks against the region's own catalogue. A family newer than this list is reported as unknown
by a warning only, never an error.
"""

from __future__ import annotations

import re

FAMILIES = frozenset({
    "a1", "c1", "c3", "c4", "c5", "c5a", "c5ad", "c5d", "c5n", "c6a", "c6g", "c6gd", "c6gn", "c6i", "c6id", "c6in",
    "c7a", "c7g", "c7gd", "c7gn", "c7i", "c7i-flex", "c8a", "c8g", "c8gb", "c8gd", "c8gn", "c8i", "c8i-flex",
    "c8ib", "c8id", "c8in", "c8ine", "c9g", "c9gd", "cc1", "cc2", "cg1", "cr1", "d2", "d3", "d3en", "dl1", "dl2q",
    "f1", "f2", "g2", "g3", "g3s", "g4ad", "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "g7", "g7e", "gr6", "gr6f",
    "h1", "hi1", "hpc6a", "hpc6id", "hpc7a", "hpc7g", "hpc8a", "hs1", "i2", "i3", "i3en", "i4g", "i4i", "i7i",
    "i7ie", "i8g", "i8ge", "im4gn", "inf1", "inf2", "is4gen", "m1", "m2", "m3", "m4", "m5", "m5a", "m5ad", "m5d",
    "m5dn", "m5n", "m5zn", "m6a", "m6g", "m6gd", "m6i", "m6id", "m6idn", "m6in", "m7a", "m7g", "m7gd", "m7i",
    "m7i-flex", "m8a", "m8azn", "m8g", "m8gb", "m8gd", "m8gn", "m8i", "m8i-flex", "m8ib", "m8id", "m8idb", "m8idn",
    "m8in", "m8ine", "m9g", "m9gd", "mac-m3ultra", "mac-m4", "mac-m4max", "mac-m4pro", "mac1", "mac2",
    "mac2-m1ultra", "mac2-m2", "mac2-m2pro", "p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200",
    "p6-b300", "p6e-gb200", "r3", "r4", "r5", "r5a", "r5ad", "r5b", "r5d", "r5dn", "r5n", "r6a", "r6g", "r6gd",
    "r6i", "r6id", "r6idn", "r6in", "r7a", "r7g", "r7gd", "r7i", "r7iz", "r8a", "r8g", "r8gb", "r8gd", "r8gn",
    "r8i", "r8i-flex", "r8ib", "r8id", "r8idb", "r8idn", "r8in", "r9g", "r9gd", "t1", "t2", "t3", "t3a", "t4g",
    "t8i", "trn1", "trn1n", "trn2", "trn2u", "u-12tb1", "u-18tb1", "u-24tb1", "u-3tb1", "u-6tb1", "u-9tb1",
    "u7i-12tb", "u7i-6tb", "u7i-8tb", "u7ib-12tb", "u7in-16tb", "u7in-24tb", "u7in-32tb", "u7inh-32tb", "vt1", "x1",
    "x1e", "x2gd", "x2idn", "x2iedn", "x2iezn", "x8aedz", "x8g", "x8i", "z1d",
})
SIZES = frozenset({
    "nano", "large", "metal", "micro", "small", "medium", "xlarge", "2xlarge", "3xlarge", "4xlarge", "6xlarge",
    "8xlarge", "9xlarge", "10xlarge", "12xlarge", "16xlarge", "18xlarge", "24xlarge", "32xlarge", "36xlarge",
    "48xlarge", "56xlarge", "64xlarge", "96xlarge", "112xlarge", "224xlarge", "480xlarge", "metal-12xl",
    "metal-16xl", "metal-24xl", "metal-32xl", "metal-48xl", "metal-96xl",
})
# An instance family's category is its leading letters (Karpenter's instance-category label: m7i → m).
CATEGORIES = frozenset(re.split(r"[^a-z]", family, maxsplit=1)[0] for family in FAMILIES)


def is_instance_type(name: str) -> bool:
    """Whether ``name`` is a family and a size EC2 has (``m7i.large``), not necessarily the pair itself."""
    family, dot, size = name.partition(".")
    return bool(dot) and family in FAMILIES and size in SIZES
