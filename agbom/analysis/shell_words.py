"""Words as the shell makes them: quote removal and escapes (``\\x``, ``$'...'``), splitting
on IFS, reading a command's options, literal output (``echo``, ``printf``, with the escapes
``echo -e`` and ``printf %b`` decode), and the conservative tokenisation used where the
grammar reports an error."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agbom.analysis.shell_model import Command, Flow, Word


@dataclass(slots=True)
class Value:
    text: str
    bare: str
    known: bool
    flows: frozenset[Flow] = frozenset()


@dataclass(slots=True)
class Segment:
    text: str
    bare: str
    known: bool
    quoted: bool
    split: bool  # an unquoted expansion: split on IFS
    flows: frozenset[Flow] = frozenset()
    dangling: bool = False  # a lone "$" the grammar left at a word's end


# -- words and options ----------------------------------------------------------------------------


def numeric_option(value: str) -> bool:
    return value[1:].isdigit()


def exports(words: Sequence[Word]) -> bool:
    return any(w.bare.startswith("-") and "x" in w.bare for w in words)


def strip_affix(value: str, pattern: str, operator: str) -> str:
    if operator.startswith("#"):
        return value[len(pattern) :] if value.startswith(pattern) else value
    return value[: -len(pattern)] if pattern and value.endswith(pattern) else value


def path_key(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path


def replaced(word: Word, text: str) -> Word:
    return Word(text, text, word.known, word.start, word.end, word.flows, word.quoted)


def joined(words: Sequence[Word]) -> Word:
    text = " ".join(w.text for w in words)
    bare = " ".join(w.bare for w in words)
    flows = frozenset().union(*(w.flows for w in words))
    return Word(text, bare, all(w.known for w in words), words[0].start, words[-1].end, flows)


def split_words(word: Word) -> list[Word]:
    return [replaced(word, part) for part in word.bare.split()]


def split_options(
    words: Sequence[Word], valued: frozenset[str]
) -> tuple[list[tuple[str, Word]], list[Word]]:
    """A command's words after the program: the options of ``valued`` with their values
    (``-o VALUE``, ``-oVALUE``, ``-fsSLo VALUE``, ``--opt VALUE``, ``--opt=VALUE``), and the
    operands. Any other option is taken to have no value."""
    found: list[tuple[str, Word]] = []
    operands: list[Word] = []
    index = 1
    while index < len(words):
        word = words[index]
        value = word.bare
        if value == "--":
            operands.extend(words[index + 1 :])
            break
        if not value.startswith("-") or len(value) == 1:
            operands.append(word)
        elif value.startswith("--") or value in valued:
            option, eq, attached = value.partition("=")
            if option in valued:
                if eq:
                    found.append((option, replaced(word, attached)))
                elif index + 1 < len(words):
                    found.append((option, words[index + 1]))
                    index += 1
        else:  # a group of short options: the first that takes a value ends it
            for position in range(1, len(value)):
                option = "-" + value[position]
                if option in valued:
                    attached = value[position + 1 :]
                    if attached:
                        found.append((option, replaced(word, attached)))
                    elif index + 1 < len(words):
                        found.append((option, words[index + 1]))
                        index += 1
                    break
        index += 1
    return found, operands


def options(words: Sequence[Word], valued: frozenset[str]) -> list[tuple[str, Word]]:
    """``(option, value)`` for each option of ``valued`` (see :func:`split_options`)."""
    return split_options(words, valued)[0]


def code_option(words: Sequence[Word], names: Iterable[str]) -> Word | None:
    """The program text after ``-c`` (also inside a group: ``-lc``, ``-xec``)."""
    wanted = tuple(names)
    for index, word in enumerate(words[1:], 1):
        value = word.bare
        if value in wanted or (
            "-c" in wanted
            and value.startswith("-")
            and not value.startswith("--")
            and "c" in value[1:]
            and value[1:].isalpha()
        ):
            return words[index + 1] if index + 1 < len(words) else replaced(word, "")
        if not value.startswith("-") and not value.startswith("+"):
            return None
    return None


def reads_stdin(words: Sequence[Word]) -> bool:
    """A shell or interpreter reads its program from stdin: no script operand, ``-s``, or
    ``-`` / ``/dev/stdin`` as the script."""
    for word in words[1:]:
        value = word.bare
        if value in ("-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
            return True
        if value == "--":
            continue
        if value.startswith("-") or value.startswith("+"):
            if not value.startswith("--") and "s" in value[1:] and value[1:].isalpha():
                return True
            continue
        return False
    return True


def literal_output(command: Command) -> str | None:
    """What ``echo``, ``printf`` or ``cat`` of a here-document writes, when it is all known."""
    program = command.program
    words = command.words
    if program == "echo":
        args = list(words[1:])
        newline = "\n"
        escapes: bool | None = None  # -e, -E, or neither
        while args and _ECHO_OPTIONS.fullmatch(args[0].bare):
            for flag in args[0].bare[1:]:
                newline = "" if flag == "n" else newline
                escapes = flag == "e" if flag in "eE" else escapes
            args.pop(0)
        if not all(w.known for w in args):
            return None
        text = " ".join(w.bare for w in args)
        if "\\" in text and (
            escapes or (escapes is None and escape_encoded(text, echo_escapes(text)[0]))
        ):  # -e, or written as numeric escapes (an XSI echo, sh's, decodes them unasked)
            text, stopped = echo_escapes(text)
            newline = "" if stopped else newline
        return text + newline
    if program == "printf" and len(words) >= 2 and all(w.known for w in words[1:]):
        fmt = words[1].bare
        if "%" not in fmt:
            return ansi_c(fmt)
        if fmt.replace("\\n", "") in ("%s", "%b") and len(words) >= 3:
            text = " ".join(w.bare for w in words[2:])
            if fmt.startswith("%b"):
                text, stopped = echo_escapes(text, bare_octal=True)
                if stopped:
                    return text
            return text + ("\n" if "\\n" in fmt else "")
        return None
    if command.stdin_text is not None and program in _DECODING:
        return decoded_output(program, [w.bare for w in words[1:]], command.stdin_text)
    if (
        program in ("cat", "tee")
        and len(words) == 1
        or program == "cat"
        and len(words) == 2
        and (words[1].bare == "-")
    ):
        return command.stdin_text
    return None


_ECHO_OPTIONS = re.compile(r"-[neE]+")
_DECODING = frozenset({"base64", "base32", "xxd", "rev", "tr"})
MAX_DECODED = 64 * 1024  # of text a decoder's literal output is computed for
_ROT13_SETS = {("a-za-z", "n-za-mn-za-m"), ("a-z", "n-za-m"), ("a-za-z", "n-za-ma-mn-z")}


def decoded_output(program: str, args: list[str], text: str) -> str | None:
    """What ``base64 -d``, ``base32 -d``, ``xxd -r -p``, ``rev`` or a rot13 ``tr`` writes for
    a known input: decoded data is then read again as what it is (a script piped on into a
    shell is parsed like any other)."""
    import base64
    import binascii
    import codecs

    text = text[:MAX_DECODED]
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    try:
        if program in ("base64", "base32") and ("d" in flags or "--decode" in args):
            raw = "".join(text.split())
            data = (
                base64.b64decode(raw + "=" * (-len(raw) % 4))
                if program == "base64"
                else base64.b32decode(raw + "=" * (-len(raw) % 8), casefold=True)
            )
            return data.decode("utf-8")
        if program == "xxd" and "r" in flags and "p" in flags:
            return binascii.unhexlify("".join(text.split())).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if program == "rev" and not args:
        return "\n".join(line[::-1] for line in text.split("\n"))
    if program == "tr" and len(args) == 2 and (args[0].lower(), args[1].lower()) in _ROT13_SETS:
        return codecs.encode(text, "rot13")
    return None


def join_segments(
    segments: Sequence[Segment], start: int, end: int, ifs: str, split: bool, limit: int
) -> list[Word]:
    """Segments into words: unquoted expansions split on the IFS characters."""
    words: list[Word] = []
    text: list[str] = []
    bare: list[str] = []
    known = True
    quoted = False
    flows: set[Flow] = set()
    started = False

    def finish() -> None:
        nonlocal text, bare, known, quoted, flows, started
        if started:
            joined, joined_bare = "".join(text)[:limit], "".join(bare)[:limit]
            words.append(Word(joined, joined_bare, known, start, end, frozenset(flows), quoted))
        text, bare, known, quoted, flows, started = [], [], True, False, set(), False

    for seg in segments:
        if split and seg.split and seg.known and any(c in ifs for c in seg.bare):
            pieces = split_ifs(seg.bare, ifs)
            for index, piece in enumerate(pieces):
                if index > 0:
                    finish()
                if piece:
                    text.append(piece)
                    bare.append(piece)
                    started = True
                flows |= seg.flows
            continue
        if seg.split and not seg.known and not seg.quoted and not seg.bare:
            # an unknown unquoted value: kept as a hole in the current word
            text.append(seg.text)
            known = False
            flows |= seg.flows
            started = True
            continue
        text.append(seg.text)
        bare.append(seg.bare)
        known = known and seg.known
        quoted = quoted or seg.quoted
        flows |= seg.flows
        started = started or bool(seg.text) or seg.quoted
    finish()
    return words


def split_ifs(value: str, ifs: str) -> list[str]:
    """A value split as the shell splits an unquoted expansion: a leading or trailing
    separator ends the word before or starts the one after (kept as an empty piece)."""
    pieces: list[str] = []
    current: list[str] = []
    for ch in value:
        if ch in ifs:
            pieces.append("".join(current))
            current = []
        else:
            current.append(ch)
    pieces.append("".join(current))
    inner = [p for p in pieces[1:-1] if p]
    return [pieces[0], *inner, pieces[-1]] if len(pieces) > 1 else pieces


def unescape_word(raw: str) -> str:
    """An unquoted word's text: a backslash quotes the next character, and a backslash
    before a newline joins the lines."""
    return _unescape(raw, None)


def unescape_double(raw: str) -> str:
    """Text inside double quotes: a backslash quotes only ``"``, ``\\``, ``$``, a backquote
    and a newline; before anything else it is itself."""
    return _unescape(raw, '"\\$`\n')


def _unescape(raw: str, escapable: str | None) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    index = 0
    while index < len(raw):
        ch = raw[index]
        if (
            ch == "\\"
            and index + 1 < len(raw)
            and (escapable is None or raw[index + 1] in escapable)
        ):
            if raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
            continue
        out.append(ch)
        index += 1
    return "".join(out)


SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f",
                   "v": "\v", "e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"',
                   "?": "?"}  # fmt: skip


_NUMERIC_ESCAPE = re.compile(
    r"\\(?:x[0-9A-Fa-f]{1,2}|0?[0-7]{1,3}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"
)
MIN_ENCODED_ESCAPES = 3  # hex, octal or unicode escapes that make a string "written encoded"


def escape_encoded(raw: str, decoded: str) -> bool:
    """Whether ``raw`` spells readable text as numeric escapes (``\\x77\\x67``, ``\\167``):
    what a reader cannot read, written so on purpose. A colour code or a magic number (one
    or two escapes, or control characters) is not."""
    if len(_NUMERIC_ESCAPE.findall(raw)) < MIN_ENCODED_ESCAPES:
        return False
    letters = sum(c.isalnum() for c in decoded)
    return letters >= MIN_ENCODED_ESCAPES and all(c.isprintable() or c in "\n\t" for c in decoded)


def ansi_c(raw: str) -> str:
    """The text of ``$'...'`` (and printf's format): C escapes decoded."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    index = 0
    while index < len(raw):
        ch = raw[index]
        if ch != "\\" or index + 1 >= len(raw):
            out.append(ch)
            index += 1
            continue
        nxt = raw[index + 1]
        if nxt in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[nxt])
            index += 2
        elif nxt in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            digits = ""
            while len(digits) < width and index + 2 + len(digits) < len(raw):
                candidate = raw[index + 2 + len(digits)]
                if candidate not in "0123456789abcdefABCDEF":
                    break
                digits += candidate
            if digits and int(digits, 16) <= 0x10FFFF:
                out.append(chr(int(digits, 16)))
            else:
                out.append("\\" + nxt)
            index += 2 + len(digits)
        elif nxt in "01234567":
            digits = nxt
            while len(digits) < 3 and index + 1 + len(digits) < len(raw):
                candidate = raw[index + 1 + len(digits)]
                if candidate not in "01234567":
                    break
                digits += candidate
            out.append(chr(int(digits, 8) & 0xFF))
            index += 1 + len(digits)
        elif nxt == "c" and index + 2 < len(raw):
            out.append(chr(ord(raw[index + 2]) & 0x1F))
            index += 3
        else:
            out.append("\\" + nxt)
            index += 2
    return "".join(out)


def echo_escapes(raw: str, *, bare_octal: bool = False) -> tuple[str, bool]:
    """The text ``echo -e`` (or printf's ``%b``, with ``bare_octal``) writes for ``raw``:
    ``\\xHH``, ``\\0NNN`` (``\\NNN`` too for ``%b``), ``\\uHHHH``, ``\\UHHHHHHHH`` and the
    letter escapes decoded; and whether ``\\c`` ended the output there."""
    if "\\" not in raw:
        return raw, False
    out: list[str] = []
    index = 0
    while index < len(raw):
        ch = raw[index]
        nxt = raw[index + 1] if index + 1 < len(raw) else ""
        if ch != "\\" or not nxt:
            out.append(ch)
            index += 1
        elif nxt == "c":
            return "".join(out), True
        elif nxt == "0" or (bare_octal and nxt in "1234567"):
            first = index + 2 if nxt == "0" else index + 1
            digits = _leading(raw, first, "01234567", 3)
            out.append(chr(int(digits or "0", 8) & 0xFF))
            index = first + len(digits)
        elif nxt in "xuU":
            digits = _leading(raw, index + 2, "0123456789abcdefABCDEF", _HEX_WIDTH[nxt])
            if digits and int(digits, 16) <= 0x10FFFF:
                out.append(chr(int(digits, 16)))
            else:
                out.append("\\" + nxt)
            index += 2 + len(digits)
        elif nxt in SIMPLE_ESCAPES and nxt not in "'\"?":
            out.append(SIMPLE_ESCAPES[nxt])
            index += 2
        else:
            out.append("\\" + nxt)
            index += 2
    return "".join(out), False


_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}


def _leading(text: str, start: int, allowed: str, limit: int) -> str:
    """The longest run of ``allowed`` characters at ``start``, at most ``limit`` long."""
    end = start
    while end < len(text) and end - start < limit and text[end] in allowed:
        end += 1
    return text[start:end]


# -- the conservative tokenisation ---------------------------------------------------------------

OPERATORS = ("&&", "||", "|&", ";;", "$(", "<(", ">(", "|", ";", "&", "(", ")", "`", "\n",
              "{", "}")  # fmt: skip
REDIRECTS = ("&>>", "&>", ">>", "<<<", "<<", "<>", ">&", ">|", ">", "<")


Token = tuple[list[str], list[tuple[str, str]], int, int]


def tokenise(text: str, max_commands: int) -> list[list[Token]]:
    """Pipelines of (words, redirects, start byte, end byte); quotes removed."""
    data_positions: list[int] = []
    position = 0
    for ch in text:
        data_positions.append(position)
        position += len(ch.encode("utf-8", "surrogatepass"))
    data_positions.append(position)
    pipelines: list[list[Token]] = []
    current: list[Token] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    pending: str | None = None
    word: list[str] = []
    in_word = False
    begin = 0
    index = 0
    count = 0

    def end_word() -> None:
        nonlocal word, in_word, pending
        if in_word:
            value = "".join(word)
            if pending is not None:
                redirects.append((pending, value))
                pending = None
            else:
                words.append(value)
        word, in_word = [], False

    def end_command(at: int) -> None:
        nonlocal words, redirects, begin, count
        end_word()
        if words:
            current.append((words, redirects, data_positions[begin], data_positions[at]))
            count += 1
        words, redirects = [], []
        begin = at

    def end_pipeline(at: int) -> None:
        nonlocal current
        end_command(at)
        if current:
            pipelines.append(current)
        current = []

    while index < len(text) and count < max_commands:
        ch = text[index]
        if ch == "\\" and index + 1 < len(text):
            if text[index + 1] != "\n":
                word.append(text[index + 1])
                in_word = True
            index += 2
            continue
        if ch in "'\"":
            close = text.find(ch, index + 1)
            close = len(text) if close < 0 else close
            inner = text[index + 1 : close]
            word.append(unescape_double(inner) if ch == '"' else inner)
            in_word = True
            index = close + 1
            continue
        if ch in " \t":
            end_word()
            index += 1
            continue
        redirect = next((r for r in REDIRECTS if text.startswith(r, index)), None)
        if (
            redirect is not None
            and not in_word
            or (redirect is not None and "".join(word).isdigit())
        ):
            if in_word:
                word, in_word = [], False  # the descriptor number
            end_word()
            pending = redirect
            index += len(redirect)
            continue
        operator = next((o for o in OPERATORS if text.startswith(o, index)), None)
        if operator is not None and operator in ("{", "}") and in_word:
            operator = None
        if operator is not None:
            if operator in ("|", "|&"):
                end_command(index)
            else:
                end_pipeline(index)
            index += len(operator)
            begin = index
            continue
        word.append(ch)
        in_word = True
        index += 1
    end_pipeline(len(text))
    return pipelines
