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

from agbom.analysis import Limits, Risk, analyse, risks
from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_behaviours import BEHAVIOURS, behaviours
from agbom.analysis.shell_model import Analysis
from agbom.analysis.shell_words import code_option

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
    "destructive": "file-tampering",
    **{name: name for name in BEHAVIOURS},
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


def _inline_code(analysis: Analysis) -> Iterator[Risk]:
    """What the code a command hands to Python or Node (``python -c``, ``node -e``) does,
    placed on the command."""
    from agbom.analysis.js_code import analyse_js
    from agbom.analysis.python_code import analyse_python

    for command in analysis.commands[:200]:
        family = programs.interpreter_family(command.program)
        if family not in ("python", "node", "nodejs", "deno", "bun"):
            continue
        code = code_option(command.words, programs.CODE_OPTIONS.get(family, ()))
        if code is None or not code.known or not code.bare.strip():
            continue
        report = analyse_python(code.bare) if family == "python" else analyse_js(code.bare)
        for risk in report.risks:
            yield Risk(risk.check, command.start, command.end,
                       f"{command.program} code: {risk.detail}", risk.origin)  # fmt: skip


def shell_findings(
    text: str, file: str, vendor_installer: Callable[[str], bool]
) -> Iterator[tuple[str, int, int]]:
    """(content check, start, end) in ``text`` for what the shell analysis finds in its
    scripts and shell blocks."""
    for offset, region in shell_regions(text, file):
        if not region.strip():
            continue
        analysis = analyse(region, LIMITS)
        for risk in [*risks(analysis), *behaviours(analysis), *_inline_code(analysis)]:
            check = _CHECK_OF.get(risk.check)
            if check is None:
                continue
            if check == "download-to-shell" and risk.origin and vendor_installer(risk.origin):
                check = "vendor-installer"
            start = risk.start if risk.source_start < 0 else min(risk.start, risk.source_start)
            yield check, offset + start, offset + max(risk.end, risk.start + 1)


_SCRIPT_RUNNERS = frozenset({"python", "python3", "node", "bash", "sh", "zsh", "deno", "bun",
                             "tsx", "ts-node", "uv", "npx"})  # fmt: skip


def script_calls(text: str, file: str) -> Iterator[tuple[str, int, int, str]]:
    """(script path in the skill, start, end, the credential given or "") for each command of
    the file's shell blocks that runs one of the skill's own scripts (``python scripts/x.py
    ARGS``, ``./scripts/x.sh ARGS``, ``uv run scripts/x.py``)."""
    from agbom.analysis.shell_flows import credential_in

    for offset, region in shell_regions(text, file):
        if "scripts/" not in region and "./" not in region:
            continue
        for command in analyse(region, LIMITS).commands:
            words = list(command.words)
            if command.program in _SCRIPT_RUNNERS:
                words = [w for w in words[1:] if w.bare not in ("run", "-u", "-B")]
                while words and words[0].bare.startswith("-"):
                    words = words[1:]
            if not words:
                continue
            script = words[0].bare.removeprefix("./")
            if not script or "/" not in script or script.startswith(("/", "~", "$")):
                continue
            credential = ""
            for word in words[1:]:
                found = credential_in(word)
                secret = next((f for f in sorted(word.flows, key=lambda f: (f.start, f.what))
                               if f.kind in ("secret", "secret-variable")), None)  # fmt: skip
                if found is not None or secret is not None:
                    credential = found or (secret.what if secret is not None else "")
                    break
            yield script, offset + command.start, offset + command.end, credential
