"""Bounded, located parsing of JSON, JSONC, TOML and YAML for the readers.

Every failure becomes a :class:`ParseFailure` carrying a :class:`FileError` with the line and
column where the parser knows them. Messages never quote file content: a broken line of a
config may hold a token.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

import orjson
import yaml

from agbom.scan._positions import EMPTY as EMPTY_POSITIONS
from agbom.scan._positions import Positions, json_positions, toml_positions, yaml_positions
from agbom.scan.interface import FileError, ReadResult

BOM = b"\xef\xbb\xbf"
_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_EOD = re.compile(r"\s*\(at end of document\)\s*$")
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A config or a frontmatter needs a few hundred values and a handful of levels.
YAML_MAX_NODES = 100_000
YAML_MAX_DEPTH = 64


class ParseFailure(Exception):
    """Internal: a file (or part of one) could not be parsed. Carries the located error."""

    def __init__(self, error: FileError) -> None:
        super().__init__(str(error))
        self.error = error


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, column


def decode_text(data: bytes) -> str:
    """UTF-8 text without a leading byte-order mark; a bad byte is located, not guessed."""
    if data.startswith(BOM):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _line_col(data, exc.start)
        raise ParseFailure(FileError("not valid UTF-8", line, column)) from None


def strip_jsonc(text: str) -> str:
    """Blank out ``//`` and ``/* */`` comments and trailing commas, keeping every position.

    Replacing with spaces (newlines kept) means a later JSON error still points at the right
    line and column of the original file.
    """
    if "/" not in text and "," not in text:
        return text
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1  # index of a comma that may turn out to be trailing
    while i < n:
        ch = text[i]
        if ch == '"':
            last_comma = -1
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if ch == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        if ch == ",":
            last_comma = i
        elif ch in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif not ch.isspace():
            last_comma = -1
        i += 1
    return "".join(out)


def load_json(data: bytes, *, jsonc: bool = False) -> Any:
    """Parse JSON (or JSONC when ``jsonc``); an empty file or a syntax error is located."""
    if data.startswith(BOM):
        data = data[3:]
    if not data.strip():
        raise ParseFailure(FileError("empty file"))
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if not jsonc:
            raise ParseFailure(
                FileError(f"not valid JSON: {exc.msg}", exc.lineno, exc.colno)
            ) from None
        first = exc
    text = decode_text(data)
    try:
        return orjson.loads(strip_jsonc(text))
    except orjson.JSONDecodeError as exc:
        raise ParseFailure(
            FileError(f"not valid JSONC: {exc.msg}", exc.lineno, exc.colno)
        ) from first


def positions_of(data: bytes, kind: str = "json") -> Positions:
    """Where each key of an already parsed ``data`` is: ``kind`` is ``json`` (JSONC too),
    ``toml`` or ``yaml``. Never raises: a file that cannot be decoded has no positions."""
    try:
        text = decode_text(data)
    except ParseFailure:
        return EMPTY_POSITIONS
    if kind == "toml":
        return toml_positions(text)
    if kind == "yaml":
        try:
            return load_yaml_located(text)[1]
        except ParseFailure:
            return EMPTY_POSITIONS
    return json_positions(text)


def recognized_json(
    data: bytes,
    result: ReadResult,
    recognize: Callable[[Any], bool],
    not_this: str,
    *,
    unwrap: Callable[[Any], Any] | None = None,
) -> Any:
    """The parsed document when ``recognize`` accepts it; else ``None`` with ``result`` filled.

    A parse failure becomes the located error of ``result``; a document of another kind makes
    ``result`` skipped with the reason ``not_this``. ``unwrap`` (applied before recognition)
    digs the document out of an envelope.
    """
    try:
        doc = load_json(data)
        if unwrap is not None:
            doc = unwrap(doc)
    except ParseFailure as exc:
        result.errors.append(exc.error)
        return None
    if not recognize(doc):
        result.skipped = not_this
        return None
    return doc


def load_toml(data: bytes) -> dict[str, Any]:
    """Parse TOML; the error keeps tomllib's line and column."""
    text = decode_text(data)
    if not text.strip():
        raise ParseFailure(FileError("empty file"))
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _TOML_AT.search(message)
        if match:
            reason = message[: match.start()]
            raise ParseFailure(
                FileError(f"not valid TOML: {reason}", int(match.group(1)), int(match.group(2)))
            ) from None
        reason = _TOML_EOD.sub("", message)
        lines = text.count("\n") + 1
        raise ParseFailure(FileError(f"not valid TOML: {reason}", lines, None)) from None
    except RecursionError:
        raise ParseFailure(FileError("not valid TOML: nested too deeply")) from None


def _check_yaml_tree(root: Any, line_offset: int, max_nodes: int, max_depth: int) -> None:
    """Refuse aliases and bound the node graph *before* anything is constructed from it.

    The composer turns an alias into a second reference to the anchored node, so a billion
    laughs document is a tiny graph here; it only explodes later, when the values are walked
    or serialized. A node reached twice is therefore an alias, and it is refused at once.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            mark = node.start_mark
            raise ParseFailure(
                FileError(
                    "YAML anchors and aliases are not allowed (the anchored value is here)",
                    mark.line + 1 + line_offset,
                    mark.column + 1,
                )
            )
        seen.add(id(node))
        if len(seen) > max_nodes:
            raise ParseFailure(FileError(f"YAML document has more than {max_nodes} values"))
        if depth > max_depth:
            mark = node.start_mark
            raise ParseFailure(
                FileError(
                    f"YAML document is nested deeper than {max_depth} levels",
                    mark.line + 1 + line_offset,
                    mark.column + 1,
                )
            )
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)


def load_yaml(
    text: str,
    *,
    line_offset: int = 0,
    max_nodes: int = YAML_MAX_NODES,
    max_depth: int = YAML_MAX_DEPTH,
) -> Any:
    """Parse one YAML document with the safe loader; ``line_offset`` shifts reported lines.

    Anchors and aliases are refused and the document is bounded to ``max_nodes`` values and
    ``max_depth`` levels of nesting, all checked on the composed graph before construction,
    so an alias bomb costs what its text costs.
    """
    return _load_yaml(text, line_offset, max_nodes, max_depth, None)


def load_yaml_located(text: str, *, line_offset: int = 0) -> tuple[Any, Positions]:
    """:func:`load_yaml`, plus where each key and item is (from the composed nodes)."""
    found: list[Positions] = []
    doc = _load_yaml(text, line_offset, YAML_MAX_NODES, YAML_MAX_DEPTH, found)
    return doc, found[0] if found else EMPTY_POSITIONS


def _load_yaml(
    text: str,
    line_offset: int,
    max_nodes: int,
    max_depth: int,
    positions: list[Positions] | None,
) -> Any:
    loader = _YAML_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_yaml_tree(node, line_offset, max_nodes, max_depth)
        if positions is not None:
            positions.append(yaml_positions(node, line_offset=line_offset))
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "syntax error"
        if mark is None:
            raise ParseFailure(FileError(f"not valid YAML: {problem}")) from None
        raise ParseFailure(
            FileError(f"not valid YAML: {problem}", mark.line + 1 + line_offset, mark.column + 1)
        ) from None
    except yaml.YAMLError as exc:
        raise ParseFailure(FileError(f"not valid YAML: {type(exc).__name__}")) from None
    except RecursionError:
        raise ParseFailure(FileError("not valid YAML: nested too deeply")) from None
    finally:
        loader.dispose()
