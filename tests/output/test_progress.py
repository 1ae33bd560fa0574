"""The progress line of a long run: on a terminal only, out of the way of the lines the run prints."""

from __future__ import annotations

import io

from karpenter_gitops.output.progress import ProgressLine


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_line_is_rewritten_in_place_and_steps_aside_for_the_findings():
    stream = Terminal()
    line = ProgressLine(stream)
    line.say("read 1 of 3 parts (2 objects)")
    line.say("read 2 of 3 parts (4 objects)")
    with line.aside():
        stream.write("<finding>\n")  # stands for stdout on the same terminal
    line.close()
    assert stream.getvalue() == (
        "\r\x1b[Kread 1 of 3 parts (2 objects)"
        "\r\x1b[Kread 2 of 3 parts (4 objects)"
        "\r\x1b[K<finding>\n"
        "\r\x1b[Kread 2 of 3 parts (4 objects)"
        "\r\x1b[K"
    )


def test_a_log_or_a_pipe_gets_nothing():
    stream = io.StringIO()
    line = ProgressLine(stream)
    line.say("read 1 of 3 parts (2 objects)")
    with line.aside():
        pass
    line.close()
    assert stream.getvalue() == ""
