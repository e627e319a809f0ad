"""Where each value of a parsed manifest sits in its file: one index for every format.

The readers parse with libraries that keep no positions (orjson, tomllib) or keep them on
nodes the constructed values no longer have (PyYAML). :class:`Positions` maps a *key path*
(object keys as text, array items as ints, as the reader walks the parsed document) to the
:class:`Span` of that key in the file, or of the item's first token for an array item.

Each builder runs over text the real parser has already accepted, so it only has to follow
the structure, never to judge it; and it resolves duplicates the way the parsers do (the
last occurrence of a key wins), so the line reported is the line of the value that was read.
Depth is bounded (:data:`MAX_PATH_DEPTH`): a manifest's entries are a few levels down.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from typing import Any

import orjson
import yaml

from agbom.scan.interface import Span

PathPart = str | int
KeyPath = tuple[PathPart, ...]
MAX_PATH_DEPTH = 12


class Positions:
    """Key path -> :class:`Span` for one parsed document."""

    __slots__ = ("_spans",)

    def __init__(self, spans: dict[KeyPath, Span] | None = None) -> None:
        self._spans = spans or {}

    def __len__(self) -> int:
        return len(self._spans)

    def get(self, path: Iterable[PathPart]) -> Span | None:
        """The span of exactly ``path``, or ``None``."""
        return self._spans.get(tuple(path))

    def nearest(self, path: Iterable[PathPart]) -> Span | None:
        """The span of ``path``, else of its closest recorded ancestor, else ``None``."""
        key = tuple(path)
        while key:
            span = self._spans.get(key)
            if span is not None:
                return span
            key = key[:-1]
        return None


class LineText:
    """A file's lines, split only when a value is looked up (readers use it to place a
    value, where :class:`Positions` places its key)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._lines: list[str] | None = None

    def value_after(self, key: Span, value: str) -> Span | None:
        """The span of ``value`` as written after ``key`` on the key's line (quoted, as in
        JSON, YAML and TOML: ``"url": "http://..."``), or ``None`` (on another line, or
        written with escapes)."""
        if self._lines is None:
            self._lines = self._data.decode("utf-8", "replace").split("\n")
        if not value or not 0 < key.line <= len(self._lines):
            return None
        text = self._lines[key.line - 1]
        at = text.find(value, key.end_column - 1)
        if at < 0:
            return None
        mark = text[at - 1] if at > 0 else ""
        quoted = mark in ("'", '"') and text[at + len(value) : at + len(value) + 1] == mark
        start, end = (at - 1, at + len(value) + 1) if quoted else (at, at + len(value))
        return Span(key.line, start + 1, end + 1)


EMPTY = Positions()


class _Lines:
    """Turns increasing offsets into spans, counting newlines once over the whole text."""

    __slots__ = ("_last", "_line", "_text")

    def __init__(self, text: str, first_line: int = 1) -> None:
        self._text = text
        self._line = first_line
        self._last = 0

    def span(self, start: int, end: int) -> Span:
        text = self._text
        if start >= self._last:
            self._line += text.count("\n", self._last, start)
        else:  # never expected (offsets only grow), but stay exact if it happens
            self._line -= text.count("\n", start, self._last)
        self._last = start
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        line_end = text.find("\n", start, end)
        width = (line_end if line_end >= 0 else end) - start
        return Span(self._line, column, column + max(width, 1))


# -- JSON and JSONC ---------------------------------------------------------------------------

# A string, a JSONC comment, one structural character, or a run of anything else (a number
# or a literal). Strings are matched whole first, so a "//" inside one is never a comment.
_JSON_TOKEN = re.compile(
    r'"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|//[^\n]*|/\*(?:[^*]|\*(?!/))*(?:\*/|\Z)"
    r'|[{}\[\]:,]|[^\s{}\[\]:,"/]+|/'
)


def _json_key(token: str) -> str:
    if "\\" not in token:
        return token[1:-1]
    value = orjson.loads(token)  # the exact decoding of escapes (\u0068 is h)
    return value if isinstance(value, str) else token[1:-1]


def json_positions(text: str, *, max_depth: int = MAX_PATH_DEPTH) -> Positions:
    """Positions of keys and array items in JSON or JSONC ``text`` (comments and trailing
    commas are stepped over)."""
    spans: dict[KeyPath, Span] = {}
    lines = _Lines(text)
    # One frame per open container: [is_object, path (None past max_depth), key or index,
    # expecting a key].
    stack: list[list[Any]] = []
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == "/":
            continue  # a comment (JSONC)
        top = stack[-1] if stack else None
        if top is not None and top[0] and top[3]:
            if first == '"':
                key = _json_key(token)
                top[2] = key
                top[3] = False
                if top[1] is not None:
                    spans[(*top[1], key)] = lines.span(match.start(), match.end())
            elif first == "}":
                stack.pop()
            continue
        if first == ":":
            continue
        if first == ",":
            if top is not None:
                if top[0]:
                    top[3] = True
                else:
                    top[2] += 1
            continue
        if first in "}]":
            if stack:
                stack.pop()
            continue
        # A value starts here.
        path: KeyPath | None
        if top is None:
            path = ()
        elif top[1] is None:
            path = None
        elif top[0]:
            path = (*top[1], top[2])
        else:
            path = (*top[1], top[2])
            spans[path] = lines.span(match.start(), match.end())
        if path is not None and len(path) >= max_depth:
            path = None
        if first == "{":
            stack.append([True, path, None, True])
        elif first == "[":
            stack.append([False, path, 0, False])
    return Positions(spans)


# -- YAML -------------------------------------------------------------------------------------


def _yaml_span(node: Any, line_offset: int) -> Span:
    start, end = node.start_mark, node.end_mark
    column = start.column + 1
    end_column = end.column + 1 if end.line == start.line else column + 1
    return Span(start.line + 1 + line_offset, column, max(end_column, column + 1))


def yaml_positions(
    root: Any, *, line_offset: int = 0, max_depth: int = MAX_PATH_DEPTH
) -> Positions:
    """Positions from a composed PyYAML node graph (aliases already refused, size bounded).

    Keys are the key's scalar text, which is what ``str(key)`` gives for the string, integer
    and other plain keys manifests use.
    """
    spans: dict[KeyPath, Span] = {}
    stack: list[tuple[Any, KeyPath]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= max_depth:
            continue
        if isinstance(node, yaml.MappingNode):
            # In document order, so a later duplicate key overwrites (as construction does).
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                child = (*path, str(key_node.value))
                spans[child] = _yaml_span(key_node, line_offset)
                stack.append((value_node, child))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                spans[child] = _yaml_span(item, line_offset)
                stack.append((item, child))
    return Positions(spans)


# -- TOML -------------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""(?:"{1,2})?', re.DOTALL)
_ML_LITERAL = re.compile(r"'''(?:[^']|'(?!''))*'''(?:'{1,2})?", re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}#]+")


class _Toml:
    """A structure-only walk of TOML text that tomllib has already accepted."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.lines = _Lines(text)
        self.spans: dict[KeyPath, Span] = {}
        self.max_depth = max_depth
        self.array_tables: dict[KeyPath, int] = {}  # resolved path -> last index

    def record(self, path: KeyPath, start: int, end: int, *, overwrite: bool = True) -> None:
        if len(path) > self.max_depth:
            return
        if overwrite or path not in self.spans:
            self.spans[path] = self.lines.span(start, end)

    def skip_space(self, newlines: bool = False) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r" or (newlines and ch == "\n"):
                self.pos += 1
            elif ch == "#" and newlines:
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return

    def key_part(self) -> str:
        text, pos = self.text, self.pos
        for pattern in (_BASIC, _LITERAL):
            match = pattern.match(text, pos)
            if match:
                self.pos = match.end()
                token = match.group()
                if token[0] == "'":
                    return token[1:-1]
                value = tomllib.loads(f"k = {token}")["k"]
                return str(value)
        match = _BARE_KEY.match(text, pos)
        if not match:
            raise ValueError("not a TOML key")
        self.pos = match.end()
        return match.group()

    def dotted_key(self) -> tuple[list[str], int, int]:
        start = self.pos
        parts = [self.key_part()]
        end = self.pos
        while True:
            self.skip_space()
            if self.pos < len(self.text) and self.text[self.pos] == ".":
                self.pos += 1
                self.skip_space()
                parts.append(self.key_part())
                end = self.pos
            else:
                return parts, start, end

    def resolve(self, keys: list[str]) -> KeyPath:
        """A header's keys with the current index of every array of tables on the way."""
        path: KeyPath = ()
        for key in keys:
            path = (*path, key)
            if path in self.array_tables:
                path = (*path, self.array_tables[path])
        return path

    def value(self, path: KeyPath) -> None:
        text = self.text
        ch = text[self.pos] if self.pos < len(text) else ""
        if ch == '"' or ch == "'":
            for pattern in (_ML_BASIC, _ML_LITERAL, _BASIC, _LITERAL):
                match = pattern.match(text, self.pos)
                if match:
                    self.pos = match.end()
                    return
            self.pos += 1
            return
        if ch == "[":
            self.pos += 1
            index = 0
            while self.pos < len(text):
                self.skip_space(newlines=True)
                if text[self.pos] == "]":
                    self.pos += 1
                    return
                if text[self.pos] == ",":
                    self.pos += 1
                    index += 1
                    continue
                start = self.pos
                self.value((*path, index))
                # An item on one line spans its whole token (``"@x/server@latest"``, as
                # the JSON and YAML indexes give it); one over lines, its first character.
                one_line = "\n" not in text[start : self.pos] and self.pos > start
                self.record((*path, index), start, self.pos if one_line else start + 1)
            return
        if ch == "{":
            self.pos += 1
            while self.pos < len(text):
                self.skip_space(newlines=True)
                if text[self.pos] == "}":
                    self.pos += 1
                    return
                if text[self.pos] == ",":
                    self.pos += 1
                    continue
                parts, start, end = self.dotted_key()
                self.record_key((*path, *parts), len(parts), start, end)
                self.skip_space()
                self.pos += 1  # "="
                self.skip_space()
                self.value((*path, *parts))
            return
        match = _SCALAR.match(text, self.pos)
        self.pos = match.end() if match else self.pos + 1

    def record_key(self, full: KeyPath, parts: int, start: int, end: int) -> None:
        # Dotted keys define their intermediate tables where they first appear.
        for cut in range(len(full) - parts + 1, len(full)):
            self.record(full[:cut], start, end, overwrite=False)
        self.record(full, start, end)

    def walk(self) -> dict[KeyPath, Span]:
        text = self.text
        table: KeyPath = ()
        while True:
            self.skip_space(newlines=True)
            if self.pos >= len(text):
                return self.spans
            if text.startswith("[[", self.pos):
                self.pos += 2
                self.skip_space()
                keys, start, end = self.dotted_key()
                base = self.resolve(keys[:-1]) + (keys[-1],)
                index = self.array_tables.get(base, -1) + 1
                self.array_tables[base] = index
                table = (*base, index)
                self.record(base, start, end, overwrite=False)
                self.record(table, start, end)
                self.pos = text.find("]]", self.pos) + 2
            elif text[self.pos] == "[":
                self.pos += 1
                self.skip_space()
                keys, start, end = self.dotted_key()
                table = self.resolve(keys)
                self.record_key(table, len(keys), start, end)
                self.pos = text.find("]", self.pos) + 1
            else:
                parts, start, end = self.dotted_key()
                self.record_key((*table, *parts), len(parts), start, end)
                self.skip_space()
                self.pos += 1  # "="
                self.skip_space()
                self.value((*table, *parts))
            end_of_line = text.find("\n", self.pos)
            self.pos = len(text) if end_of_line < 0 else end_of_line


def toml_positions(text: str, *, max_depth: int = MAX_PATH_DEPTH) -> Positions:
    """Positions of tables, keys and array items in TOML ``text`` (already valid TOML)."""
    try:
        return Positions(_Toml(text, max_depth).walk())
    except (ValueError, IndexError, tomllib.TOMLDecodeError):
        return EMPTY  # never expected on valid TOML; positions are a help, not a gate


__all__ = [
    "EMPTY",
    "KeyPath",
    "LineText",
    "PathPart",
    "Positions",
    "Span",
    "json_positions",
    "toml_positions",
    "yaml_positions",
]
