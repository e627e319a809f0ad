"""The content checks' shell part: a skill's shell scripts, and the shell blocks of its
markdown, read with the shell analysis (:mod:`agbom.analysis.shell`) rather than line by
line, so that data is followed across lines and through variables, wrappers and other
shells: ``K=$(cat ~/.ssh/id_rsa)`` and, any number of lines later, ``curl -d "$K" …``.

The shell analysis's judgments become the content checks the patterns report:
``download-exec`` is ``download-to-shell`` (``vendor-installer`` when the fetch is a vendor's
documented installer), ``decode-exec`` is ``decode-and-execute`` and ``exfiltration`` is
``secret-exfiltration``. The Guardian's runtime packs judge a tool call's command line with
the same analysis, so a command is judged alike in a skill and when an agent runs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from agbom.analysis import Limits, analyse, risks

# Script files by name, or by a shell on their first line.
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".dash", ".ash", ".command")
_SHEBANG = re.compile(
    r"\A#![ \t]*(?:/usr)?(?:/local)?/bin/(?:env[ \t]+(?:-\S+[ \t]+)*)?"
    r"(?:sh|bash|zsh|ksh|ksh93|mksh|dash|ash|busybox[ \t]+sh)\b"
)
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst")
# A fenced block: its info string (language) and its body. An unlabelled block is read as
# shell too: it is how most skills write commands.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_SHELL_INFO = frozenset(
    {"", "sh", "bash", "shell", "zsh", "ksh", "console", "shell-session", "shellsession",
     "terminal", "command", "commands", "cli", "bash-session", "sh-session"}
)  # fmt: skip
_PROMPT = re.compile(r"^([ \t]*)[$%](?=[ \t])", re.MULTILINE)  # console prompts
# A skill's files are up to 1 MiB: read whole, with more work allowed than a tool call gets.
LIMITS = Limits(max_bytes=1024 * 1024, max_nodes=200_000, max_commands=10_000, max_parse_ms=1000)
_CHECK_OF = {
    "download-exec": "download-to-shell",
    "decode-exec": "decode-and-execute",
    "exfiltration": "secret-exfiltration",
}


def shell_regions(text: str, file: str) -> Iterator[tuple[int, str]]:
    """(offset, shell text) for the parts of a file a shell would run: a whole script, or
    each shell block of a markdown file (console prompts blanked, offsets kept)."""
    name = file.rsplit("/", 1)[-1].lower()
    if name.endswith(_SCRIPT_SUFFIXES) or _SHEBANG.match(text):
        yield 0, text
        return
    if not name.endswith(_MARKDOWN_SUFFIXES) or ("```" not in text and "~~~" not in text):
        return
    for block in _FENCE.finditer(text):
        info = block.group("info").strip().lower().split(" ", 1)[0].strip("{}.")
        if info not in _SHELL_INFO:
            continue
        body = _PROMPT.sub(lambda m: m.group(1) + " ", block.group("body"))
        yield block.start("body"), body


def shell_findings(
    text: str, file: str, vendor_installer: Callable[[str], bool]
) -> Iterator[tuple[str, int, int]]:
    """(content check, start, end) in ``text`` for what the shell analysis finds in its
    scripts and shell blocks."""
    for offset, region in shell_regions(text, file):
        if not region.strip():
            continue
        for risk in risks(analyse(region, LIMITS)):
            check = _CHECK_OF.get(risk.check)
            if check is None:
                continue
            if check == "download-to-shell" and risk.origin and vendor_installer(risk.origin):
                check = "vendor-installer"
            start = risk.start if risk.source_start < 0 else min(risk.start, risk.source_start)
            yield check, offset + start, offset + max(risk.end, risk.start + 1)
