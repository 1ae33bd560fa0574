"""userData checks every family shares: EC2's size limit, a folded YAML scalar (``userData: >``), the wrong format."""

from __future__ import annotations

import os
import re
import tomllib

from karpenter_gitops.karpenter.amifamily.userdata.problems import (
    FOLDED_YAML,
    FORMAT_MISMATCH,
    SIZE,
    SIZE_NEAR_LIMIT,
    Problem,
)

MAX_BYTES = 16_384  # EC2's limit on decoded userData
NEAR_LIMIT_BYTES = -(-MAX_BYTES * 9 // 10)  # Karpenter logs a warning from 90% on
# What `userData: >` leaves behind: lines that YAML folding joined with spaces.
_RUN_TOGETHER = (
    (
        re.compile(r"\A\s*(MIME-Version|Content-Type):[^\n]*[ \t](MIME-Version|Content-(Type|Transfer-Encoding)):"),
        "MIME headers",
    ),
    (re.compile(r"^\s*\[settings[^\]\n]*\][ \t]*[^\s#]", re.MULTILINE), "a TOML table header and its keys"),
    (re.compile(r"^apiVersion:[^\n]*[ \t]kind:", re.MULTILINE), "NodeConfig fields"),
)


def size(text: str) -> list[Problem]:
    size = len(text.encode("utf-8"))
    if size < NEAR_LIMIT_BYTES:
        return []
    if size > MAX_BYTES:
        message = f"userData is {size:,} bytes; EC2 accepts at most {MAX_BYTES:,}, so the launch template is refused"
        return [Problem(SIZE, message, "move bulky content (scripts, certificates) to S3 or SSM and fetch it at boot")]
    message = (
        f"userData is {size:,} bytes, {size * 100 // MAX_BYTES}% of EC2's {MAX_BYTES:,}-byte limit; "
        "Karpenter adds its own bootstrap on top for every family but Custom"
    )
    return [Problem(SIZE_NEAR_LIMIT, message, "keep userData small: fetch bulky content from S3 or SSM at boot")]


def folded(text: str) -> Problem | None:
    first = text.lstrip().partition("\n")[0]
    joined = (
        "a shebang and the commands after it"
        if _shebang_runs_on(first)
        else next((what for pattern, what in _RUN_TOGETHER if pattern.search(text)), None)
    )
    if joined is None:
        return None
    return Problem(
        FOLDED_YAML,
        f"{joined} stand on one line: the manifest used a folded YAML scalar (userData: >), "
        "which turns newlines into spaces, so the userData no longer does what it says",
        "write userData: | (a literal block scalar) so newlines are kept",
    )


def _shebang_runs_on(line: str) -> bool:
    """True for '#!/bin/bash echo hi', false for '#!/bin/bash -xe' or '#!/usr/bin/env bash'."""
    if not line.startswith("#!"):
        return False
    interpreter, *rest = line[2:].split() or [""]
    words = [w for w in rest if not w.startswith("-")]
    if os.path.basename(interpreter) == "env":
        words = words[1:]
    return bool(words)


def bottlerocket_settings_elsewhere(text: str, family: str) -> list[Problem]:
    """Bottlerocket's TOML settings given to a family that runs userData as a script (or a NodeConfig)."""
    if "[settings" not in text:
        return []
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    if "settings" not in document:
        return []
    return [
        Problem(
            FORMAT_MISMATCH,
            f"this userData is Bottlerocket TOML settings, but {family} images run userData as a shell script, "
            "so the settings are never applied and the script fails at its first line",
            "select a Bottlerocket image (alias bottlerocket@...) for these settings, or write this family's format",
        )
    ]
