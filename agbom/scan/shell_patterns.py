"""Shell-command patterns shared by the scanner's content checks and the Guardian's runtime
packs (agbom/guardian/runtime_pack.py), so that a command is judged the same way in a
SKILL.md and in a tool call.

The download-to-shell, decode-and-execute and credential-exfiltration patterns live in
:mod:`agbom.scan.content` and are used from there as they are; this module holds what the
content checks do not have: destructive commands, and the URLs a command line reaches.

Every function here returns spans (start and end offsets into the text given), so a caller
can say exactly what matched. Quantifiers are bounded: a hostile command line cannot make a
match quadratic.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_COMMAND_CHARS = 64 * 1024  # a longer command is judged on its first part only

# What a recursive forced rm must not be pointed at: the root, the home folder, the working
# folder or its parent, or everything in one of them. ``rm -rf ./build`` names a folder and
# is not matched.
_TARGET = r"(?:/\*?|\.{1,2}/?\*?|~/?\*?|\$\{?HOME\}?/?\*?|\*)"
_END = r"(?=$|[\s;&|)`'\"])"
_QUOTE = r"[\"']?"
_RM = re.compile(
    rf"(?i)(?<![\w./-])rm\s+((?:-{{1,2}}[a-z][a-z-]{{0,30}}\s+){{1,8}})(?:--\s+)?{_QUOTE}{_TARGET}{_END}"
)
_OTHER_DESTRUCTIVE = re.compile(
    r"(?i)(?<![\w./-])mkfs(?:\.\w{1,10})?\s+(?:-\S{1,20}\s+){0,6}/dev/\S{1,40}"
    r"|(?<![\w./-])dd\s+(?:\S{1,200}\s+){0,6}of=/dev/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)\S{0,20}"
    r"|>\s{0,4}/dev/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)[a-z0-9]{0,10}\b"
    r"|:\(\)\s{0,4}\{\s{0,4}:\s{0,4}\|\s{0,4}:\s{0,4}&\s{0,4}\}\s{0,4};\s{0,4}:"  # fork bomb
    rf"|(?<![\w./-])chmod\s+(?:-\S{{1,20}}\s+){{0,4}}-R\s+0?777\s+/{_END}"
)


@dataclass(frozen=True, slots=True)
class Span:
    """``text[start:end]`` matched ``what``."""

    what: str
    start: int
    end: int


def _recursive_and_forced(options: str) -> bool:
    recursive = forced = False
    for option in options.lower().split():
        if option == "--recursive":
            recursive = True
        elif option == "--force":
            forced = True
        elif not option.startswith("--"):
            recursive = recursive or "r" in option
            forced = forced or "f" in option
    return recursive and forced


def destructive_commands(text: str) -> Iterator[Span]:
    """Destructive commands anywhere in ``text``: ``rm`` recursive and forced (``-rf``,
    ``-fr``, ``-r -f``, ``--recursive --force``, any case) at the root, home, working or
    parent folder; ``mkfs`` or ``dd``/``>`` onto a disk device; a fork bomb; ``chmod -R 777 /``.

    Wherever they stand, also as the words of an ``echo``: a Guardian sees the command line,
    not what the shell will do with each word (``echo rm -rf / | sh`` runs it).
    """
    text = text[:MAX_COMMAND_CHARS]
    for match in _RM.finditer(text):
        if _recursive_and_forced(match.group(1)):
            yield Span("destructive-command", match.start(), match.end())
    for match in _OTHER_DESTRUCTIVE.finditer(text):
        yield Span("destructive-command", match.start(), match.end())


def urls(text: str) -> Iterator[Span]:
    """The URLs of a network scheme (http, https, ftp, ftps, ws, wss, sftp; any case) in
    ``text`` (:func:`agbom.analysis.shell_risks.url_spans`)."""
    from agbom.analysis.shell_risks import url_spans

    for start, end in url_spans(text[:MAX_COMMAND_CHARS]):
        yield Span("url", start, end)
