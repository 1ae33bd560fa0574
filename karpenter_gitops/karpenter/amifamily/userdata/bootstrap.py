"""bootstrap.sh and kubelet calls in a shell script, read as the shell and bootstrap.sh read them.

Kubelet flags pass two rounds of unquoting on their way from a bootstrap.sh line to kubelet:
the shell splits the line into words, and the ``--kubelet-extra-args`` word is split again
(systemd expands ``$KUBELET_EXTRA_ARGS`` with quote removal). ``shlex`` does both rounds here.
bootstrap.sh only knows ``--kubelet-extra-args VALUE``; anything else that looks like a kubelet
flag is taken as a positional argument and dropped. AL2 runs such scripts; AL2023 has no
bootstrap.sh, and a Custom image may run either.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from karpenter_gitops.karpenter.amifamily.userdata import taints
from karpenter_gitops.karpenter.amifamily.userdata.problems import BOOTSTRAP_ARGS, Problem
from karpenter_gitops.karpenter.amifamily.userdata.taints import Taint

EXTRA_ARGS = "--kubelet-extra-args"
_PROGRAMS = ("bootstrap.sh", "kubelet")
_CONTINUATION = re.compile(r"\\\r?\n")
_WRAPPERS = frozenset({"sudo", "exec", "nohup", "env", "time", "command", "bash", "sh"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
_KUBELET_ONLY = (taints.FLAG, "--node-labels")  # kubelet flags bootstrap.sh does not accept itself


@dataclass(frozen=True)
class Invocation:
    """One call of bootstrap.sh or kubelet, as the words the program receives."""

    head: tuple[str, ...]  # wrappers, program and bootstrap.sh's own args; empty when the call is unreadable
    kubelet_args: tuple[str, ...]  # the flags kubelet receives
    via_bootstrap: bool
    problems: tuple[str, ...] = ()  # why bootstrap.sh loses some of the flags

    @property
    def taints(self) -> tuple[Taint, ...]:
        return taints.from_kubelet_args(self.kubelet_args)

    def line(self, wanted: tuple[Taint, ...] | None = None) -> str | None:
        """The call written correctly, registering ``wanted`` (default: its own taints, repaired)."""
        if not self.head:
            return None
        if wanted is None:
            wanted = tuple(t.repaired() for t in self.taints)
        args = taints.with_taints(self.kubelet_args, wanted)
        if not self.via_bootstrap:
            return shlex.join(self.head + tuple(args))
        flags = shlex.join(args)
        quoted = f"'{flags}'" if "'" not in flags else shlex.quote(flags)  # quote even one flag, as Karpenter does
        return " ".join([shlex.join(self.head)] + ([EXTRA_ARGS, quoted] if args else []))


def invocations(script: str) -> Iterator[Invocation]:
    """Every bootstrap.sh and kubelet call of a shell script, tokenised as the shell would."""
    if not any(p in script for p in _PROGRAMS):
        return  # the common case: nothing to tokenise
    lines = _CONTINUATION.sub("", script).splitlines()
    i = 0
    while i < len(lines):
        chunk, i = lines[i], i + 1
        if not any(p in chunk for p in _PROGRAMS):
            continue
        while True:  # a quoted word may span lines
            try:
                words = _words(chunk)
                break
            except ValueError:
                if i == len(lines):
                    if "bootstrap.sh" in chunk:
                        yield Invocation((), (), True, ("a quote on the bootstrap.sh line is never closed",))
                    return
                chunk, i = f"{chunk}\n{lines[i]}", i + 1
        for command in _commands(words):
            found = _invocation(command)
            if found is not None:
                yield found


def review(calls: Iterable[Invocation], *, managed: bool) -> list[Problem]:
    """Problems of bootstrap.sh / kubelet calls; the hint is the corrected call."""
    problems: list[Problem] = []
    for call in calls:
        hint = call.line()
        problems.extend(Problem(BOOTSTRAP_ARGS, message, hint) for message in call.problems)
        problems.extend(taints.review(call.taints, managed=managed, hint=hint))
    return problems


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _commands(words: list[str]) -> Iterator[list[str]]:
    """Split words at control operators and redirections (shlex returns them as punctuation runs)."""
    command: list[str] = []
    for word in words:
        if word and all(c in "();<>|&" for c in word):
            yield command
            command = []
        else:
            command.append(word)
    yield command


def _invocation(command: list[str]) -> Invocation | None:
    for at, word in enumerate(command):
        program = os.path.basename(word)
        if program == "kubelet":
            return Invocation(tuple(command[: at + 1]), tuple(command[at + 1 :]), False)
        if program in _PROGRAMS:
            return _bootstrap(command[: at + 1], command[at + 1 :])
        if not (word in _WRAPPERS or word.startswith("-") or _ASSIGNMENT.match(word)):
            return None
    return None


def _bootstrap(head: list[str], args: list[str]) -> Invocation:
    own: list[str] = []
    extra: list[str] = []  # --kubelet-extra-args values, in order
    stray: list[str] = []  # kubelet flags given to bootstrap.sh directly
    problems = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == EXTRA_ARGS:
            if i + 1 == len(args):
                problems.append(f"{EXTRA_ARGS} is the last word and has no value")
            extra.extend(args[i + 1 : i + 2])
            i += 2
            continue
        if arg.startswith(EXTRA_ARGS + "="):
            problems.append(
                f"bootstrap.sh does not understand {EXTRA_ARGS}=...: it takes the word as a positional "
                "argument, so the kubelet flags in it (taints included) are dropped; separate the value with a space"
            )
            extra.append(arg.partition("=")[2])
        elif arg.partition("=")[0] in _KUBELET_ONLY:
            flag = arg.partition("=")[0]
            problems.append(f"{flag} is a kubelet flag; bootstrap.sh drops it unless it is inside {EXTRA_ARGS}")
            takes_next = "=" not in arg and i + 1 < len(args) and not args[i + 1].startswith("-")
            stray.extend(args[i : i + 1 + takes_next])
            i += takes_next
        else:
            own.append(arg)
        i += 1
    if len(extra) > 1:
        problems.append(f"{EXTRA_ARGS} is given {len(extra)} times; bootstrap.sh keeps only the last one")
    kubelet: list[str] = []
    for value in extra:
        try:
            kubelet.extend(shlex.split(value))
        except ValueError:
            problems.append(f"a quote inside the {EXTRA_ARGS} value is never closed: {value}")
    return Invocation(tuple(head + own), tuple(kubelet + stray), True, tuple(problems))
