"""Surgical edits of JSON and JSONC text: add or remove one member or element, keep the rest.

A host's settings file is the user's (Gemini CLI's ``settings.json`` takes ``//`` and ``/* */``
comments, and every file has its own layout and keys agbom knows nothing of), so agbom never
re-serialises one: the text is parsed into spans (where each value, member and element starts
and ends), and an edit replaces exactly one span. Everything outside it, comments included,
stays byte for byte. No maintained Python library round-trips JSONC this way; this module does
only the four edits the hook installer needs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agbom.hostconfig.interface import HostConfigError

MAX_DEPTH = 64
_LINE_TAIL = re.compile(r"[ \t]*,?[ \t]*(//.*)?")
Path = tuple[str | int, ...]


@dataclass
class Node:
    """A value's span ``[start, end)``; objects keep their members, arrays their elements."""

    kind: str  # object, array, or scalar
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)  # (key, key start, value)
    items: list[Node] = field(default_factory=list)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def fail(self, what: str) -> HostConfigError:
        line = self.text.count("\n", 0, self.i) + 1
        column = self.i - (self.text.rfind("\n", 0, self.i) + 1) + 1
        return HostConfigError(f"not valid JSON: {what} at line {line}, column {column}")

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            if ch in " \t\r\n\ufeff":
                self.i += 1
            elif text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.i = end + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        self.skip()
        if self.i >= len(self.text):
            raise self.fail("unexpected end")
        ch = self.text[self.i]
        if ch == "{":
            return self.obj(depth)
        if ch == "[":
            return self.arr(depth)
        start = self.i
        if ch == '"':
            self.string()
        else:
            while self.i < len(self.text) and self.text[self.i] not in ",]}/ \t\r\n":
                self.i += 1
            try:
                json.loads(self.text[start : self.i])
            except ValueError:
                self.i = start
                raise self.fail("unexpected text") from None
        return Node("scalar", start, self.i)

    def string(self) -> str:
        start = self.i
        self.i += 1
        text, n = self.text, len(self.text)
        while self.i < n and text[self.i] != '"':
            if text[self.i] == "\n":
                raise self.fail("line break in a string")
            self.i += 2 if text[self.i] == "\\" else 1
        if self.i >= n:
            raise self.fail("unterminated string")
        self.i += 1
        try:
            value = json.loads(text[start : self.i])
        except ValueError:
            self.i = start
            raise self.fail("bad string") from None
        return str(value)

    def obj(self, depth: int) -> Node:
        node = Node("object", self.i, self.i)
        self.i += 1
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "}":
                break
            if self.i >= len(self.text) or self.text[self.i] != '"':
                raise self.fail("expected a member name")
            key_start = self.i
            key = self.string()
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != ":":
                raise self.fail("expected ':'")
            self.i += 1
            node.members.append((key, key_start, self.value(depth + 1)))
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
                continue
            self.skip()
            if self.i >= len(self.text) or self.text[self.i] != "}":
                raise self.fail("expected ',' or '}'")
            break
        self.i += 1
        node.end = self.i
        return node

    def arr(self, depth: int) -> Node:
        node = Node("array", self.i, self.i)
        self.i += 1
        while True:
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == "]":
                break
            node.items.append(self.value(depth + 1))
            self.skip()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
                continue
            if self.i >= len(self.text) or self.text[self.i] != "]":
                raise self.fail("expected ',' or ']'")
            break
        self.i += 1
        node.end = self.i
        return node


def parse(text: str) -> Node:
    """The spans of ``text`` (JSON, or JSONC: comments and trailing commas)."""
    parser = _Parser(text)
    root = parser.value(0)
    parser.skip()
    if parser.i != len(text):
        raise parser.fail("text after the end of the document")
    return root


def load(text: str) -> Any:
    """The value of ``text`` (comments and trailing commas allowed)."""
    from agbom.scan._parse import strip_jsonc

    try:
        return json.loads(strip_jsonc(text.lstrip("\ufeff")))
    except ValueError as exc:
        raise HostConfigError(f"not valid JSON: {exc}") from None


def find(root: Node, path: Path) -> Node | None:
    """The node at ``path`` (member names and element indexes), or None."""
    node: Node | None = root
    for step in path:
        if node is None:
            return None
        if isinstance(step, int):
            node = (
                node.items[step] if node.kind == "array" and 0 <= step < len(node.items) else None
            )
        else:
            found = [v for k, _, v in node.members if k == step] if node.kind == "object" else []
            node = found[-1] if found else None
    return node


def _indent_of(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    return prefix[: len(prefix) - len(prefix.lstrip(" \t"))]


def _unit(text: str) -> str:
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _render(value: Any, indent: str, unit: str) -> str:
    rendered = json.dumps(value, indent=unit, ensure_ascii=False)
    return rendered.replace("\n", "\n" + indent)


def _insert(text: str, container: Node, piece: str) -> str:
    """``piece`` (a member or an element, already rendered) added at the end of
    ``container``."""
    unit = _unit(text)
    children = (
        [v for _, _, v in container.members] if container.kind == "object" else container.items
    )
    starts = [k for _, k, _ in container.members] if container.kind == "object" else [
        c.start for c in children
    ]  # fmt: skip
    if children:
        indent = _indent_of(text, starts[-1])
        on_own_line = text[text.rfind("\n", 0, starts[-1]) + 1 : starts[-1]].strip() == ""
        sep = ",\n" + indent if on_own_line else ", "
        body = piece.replace("\n", "\n" + (indent if on_own_line else ""))
        at = children[-1].end
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end
        tail = text[at:line_end]
        if on_own_line and _LINE_TAIL.fullmatch(tail):
            # The last child's line ends in a comment (or a trailing comma): the comment stays
            # on its line and the new child goes on the next.
            if tail.lstrip().startswith(","):  # trailing commas: the new last child gets one
                return text[:at] + tail + "\n" + indent + body + "," + text[line_end:]
            return text[:at] + "," + tail + "\n" + indent + body + text[line_end:]
        return text[:at] + sep + body + text[at:]
    outer = _indent_of(text, container.start)
    inner = outer + unit
    at = container.start + 1
    closing = container.end - 1
    between = text[at:closing]
    if between.strip():  # only comments inside: keep them, add after
        return (
            text[:closing]
            + "\n"
            + inner
            + piece.replace("\n", "\n" + inner)
            + "\n"
            + outer
            + text[closing:]
        )
    return (
        text[:at] + "\n" + inner + piece.replace("\n", "\n" + inner) + "\n" + outer + text[closing:]
    )


def add_member(text: str, path: Path, key: str, value: Any) -> str:
    """``text`` with member ``key: value`` added to the object at ``path``."""
    root = parse(text)
    container = find(root, path)
    if container is None or container.kind != "object":
        raise HostConfigError(f"{_where(path)} is not an object")
    unit = _unit(text)
    piece = json.dumps(key) + ": " + _render(value, "", unit)
    return _insert(text, container, piece)


def append(text: str, path: Path, value: Any) -> str:
    """``text`` with ``value`` appended to the array at ``path``."""
    root = parse(text)
    container = find(root, path)
    if container is None or container.kind != "array":
        raise HostConfigError(f"{_where(path)} is not an array")
    return _insert(text, container, _render(value, "", _unit(text)))


def remove(text: str, path: Path) -> str:
    """``text`` without the member or element at ``path`` (and the comma that joined it)."""
    if not path:
        raise HostConfigError("cannot remove the whole document")
    root = parse(text)
    parent = find(root, path[:-1])
    last = path[-1]
    if parent is None:
        raise HostConfigError(f"{_where(path)} is not there")
    if parent.kind == "array" and isinstance(last, int) and 0 <= last < len(parent.items):
        spans = [(c.start, c.end) for c in parent.items]
        index = last
    elif parent.kind == "object" and isinstance(last, str):
        spans = [(k, v.end) for _, k, v in parent.members]
        keys = [k for k, _, _ in parent.members]
        if last not in keys:
            raise HostConfigError(f"{_where(path)} is not there")
        index = len(keys) - 1 - keys[::-1].index(last)
    else:
        raise HostConfigError(f"{_where(path)} is not there")
    start, end = spans[index]
    if len(spans) == 1:
        inner_start, inner_end = parent.start + 1, parent.end - 1
        rest = (text[inner_start:start] + text[end:inner_end]).replace(",", "")
        if not rest.strip():
            return text[:inner_start] + text[inner_end:]
        return text[:start] + text[end:]
    if index + 1 < len(spans):
        return text[:start] + text[spans[index + 1][0] :]
    # The last of several: its comma goes, and its line, but not a comment after the comma.
    prev_end = spans[index - 1][1]
    comma = _comma_at(text, prev_end, start)
    if comma is None:
        raise HostConfigError("no comma between two children")
    trailing = _comma_at(text, end, len(text))
    stop = trailing + 1 if trailing is not None else end  # what goes ends here
    line_start = text.rfind("\n", 0, start) + 1
    if line_start > comma and not text[line_start:start].strip():  # the child has its own line
        line_end = text.find("\n", stop)
        if line_end >= 0 and not text[stop:line_end].strip():
            begin, stop = line_start, line_end + 1  # the whole line goes
        elif _in_line_comment(text, line_start - 1):
            begin = line_start  # the line break ends a comment: it stays
        else:
            begin = line_start - 1
    elif trailing is not None:
        begin = comma + 1
    else:
        begin = comma if not text[comma + 1 : start].strip() else start
    if trailing is not None:  # trailing commas: the one before it stays, its own goes
        return text[:begin] + text[stop:]
    if begin == comma:
        return text[:comma] + text[stop:]
    return text[:comma] + text[comma + 1 : begin] + text[stop:]


def _in_line_comment(text: str, pos: int) -> bool:
    """Whether ``pos`` lies in a ``//`` comment (strings and block comments skipped)."""
    i = 0
    while i < pos:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < len(text) and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            if end < 0 or end >= pos:
                return True
            i = end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        else:
            i += 1
    return False


def _comma_at(text: str, start: int, end: int) -> int | None:
    """Where the next comma after ``start`` is, when only blanks and comments come before it."""
    parser = _Parser(text)
    parser.i = start
    parser.skip()
    if parser.i < end and text[parser.i] == ",":
        return parser.i
    return None


def _where(path: Path) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "the document"
