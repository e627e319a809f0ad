"""Word evaluation for the shell analysis: quotes, variables, ``${…}`` operators, command
and process substitutions (whose commands are walked), and the state one analysis keeps."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_model import Assignment, Command, Flow, Limits, Word
from agbom.analysis.shell_words import (
    Segment,
    Value,
    ansi_c,
    escape_encoded,
    join_segments,
    literal_output,
    strip_affix,
    unescape_double,
    unescape_word,
)

WORD_NODES = frozenset(
    {"word", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
     "simple_expansion", "expansion", "command_substitution", "process_substitution",
     "arithmetic_expansion", "number", "string_content", "brace_expression"}
)  # fmt: skip


class Offsets:
    """Byte offsets of the UTF-8 text to character offsets of the string."""

    def __init__(self, text: str, data: bytes) -> None:
        self._ascii = len(data) == len(text)
        self._bytes: list[int] = []
        self._chars: list[int] = []
        self._cuts: list[int] = []
        if not self._ascii:
            position = 0
            for index, ch in enumerate(text):
                width = len(ch.encode("utf-8", "surrogatepass"))
                if width > 1:
                    self._bytes.append(position + width)
                    self._chars.append(index + 1)
                position += width

    def after_cuts(self, cuts: list[int]) -> Offsets:
        """These offsets for the text with two-byte pairs removed at ``cuts`` (positions in
        the joined bytes: see :func:`agbom.analysis.shell_source.join_continuations`)."""
        shifted = Offsets.__new__(Offsets)
        shifted._ascii, shifted._bytes, shifted._chars = self._ascii, self._bytes, self._chars
        shifted._cuts = cuts
        return shifted

    def char(self, byte: int) -> int:
        if self._cuts:
            byte += 2 * bisect.bisect_right(self._cuts, byte)
        if self._ascii:
            return byte
        index = bisect.bisect_right(self._bytes, byte) - 1
        if index < 0:
            return byte
        return self._chars[index] + (byte - self._bytes[index])


class Stop(Exception):
    """A bound was reached: the analysis ends, marked incomplete."""


@dataclass(slots=True)
class Scope:
    variables: dict[str, Value]
    files: dict[str, frozenset[Flow]]  # paths written in the text, with what went in


@dataclass(slots=True)
class Run:
    """Where the walker is: the text being walked, its offsets, and how nested."""

    source: bytes
    offsets: Offsets | None
    span: tuple[int, int] | None  # a nested text: every command takes the outer word's span
    depth: int
    via: str
    stdin: frozenset[Flow] = frozenset()
    stdin_text: str | None = None


@dataclass(slots=True)
class State:
    text: str
    limits: Limits
    scope: Scope
    commands: list[Command] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    fork_bombs: list[tuple[int, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    nodes: int = 0
    fallback: bool = False
    deadline: float = 0.0  # time.monotonic() by which every parse is done
    errexit: bool = False  # set -e: a failed command ends the script


class Evaluator:
    """Evaluates words (expansions, substitutions) for the statement walker of
    :mod:`agbom.analysis.shell`, which supplies :meth:`statement`."""

    def __init__(self, state: State, run: Run) -> None:
        self.state = state
        self.run = run

    # -- positions and bounds

    def span(self, node: Any) -> tuple[int, int]:
        if self.run.span is not None:
            return self.run.span
        offsets = self.run.offsets
        assert offsets is not None
        return offsets.char(node.start_byte), offsets.char(node.end_byte)

    def raw(self, node: Any) -> str:
        return self.run.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def tick(self, tree_depth: int) -> None:
        state = self.state
        state.nodes += 1
        if state.nodes > state.limits.max_nodes:
            raise Stop(f"more than {state.limits.max_nodes} syntax nodes")
        if tree_depth > state.limits.max_tree_depth:
            raise Stop(f"syntax nested more than {state.limits.max_tree_depth} deep")

    # -- statements

    def statement(
        self,
        node: Any,
        level: int,
        stdin: frozenset[Flow] | None = None,
        stdin_text: str | None = None,
    ) -> frozenset[Flow]:
        raise NotImplementedError  # the statement walker's

    def fields(
        self, node: Any, level: int, *, split: bool, stdin: frozenset[Flow] = frozenset()
    ) -> list[Word]:
        """The words one argument node becomes (more than one where an unquoted expansion
        splits, none where it is empty)."""
        segments = self.segments(node, level, False, stdin)
        start, end = self.span(node)
        return join_segments(
            segments, start, end, self.ifs(), split, self.state.limits.max_value_chars
        )

    def adjacent_fields(
        self, nodes: Sequence[Any], level: int, stdin: frozenset[Flow]
    ) -> list[Word]:
        """The words of a command's argument nodes. Nodes with nothing between them are one
        word to the shell; the grammar splits a few (``-rf$IFS/`` ends in a lone ``$``,
        then ``IFS/``), so they are joined here and the lone ``$`` expands what follows."""
        words: list[Word] = []
        group: list[Any] = []
        for node in [*nodes, None]:
            if group and (node is None or node.start_byte != group[-1].end_byte):
                if len(group) == 1 and group[0].type in ("word", "number"):
                    self.tick(level)  # a plain word, the common case: no expansion to do
                    text = unescape_word(self.raw(group[0]))
                    start, end = self.span(group[0])
                    words.append(Word(text, text, True, start, end))
                    group = [] if node is None else [node]
                    continue
                segments: list[Segment] = []
                for part in group:
                    segments.extend(self.segments(part, level, False, stdin, dangling=True))
                segments = self.expand_dangling(segments)
                start, end = self.span(group[0])[0], self.span(group[-1])[1]
                words.extend(join_segments(
                    segments, start, end, self.ifs(), True, self.state.limits.max_value_chars
                ))  # fmt: skip
                group = []
            if node is not None:
                group.append(node)
        return words

    def expand_dangling(self, segments: list[Segment]) -> list[Segment]:
        out: list[Segment] = []
        index = 0
        while index < len(segments):
            seg = segments[index]
            following = segments[index + 1] if index + 1 < len(segments) else None
            if seg.dangling and following is not None and following.known:
                text = following.bare
                length = 0
                while length < len(text) and (text[length].isalnum() or text[length] == "_"):
                    length += 1
                if length and not text[0].isdigit():
                    value = self.lookup(text[:length])
                    out.append(Segment(value.text, value.bare, value.known, seg.quoted, True,
                                    value.flows))  # fmt: skip
                    rest = text[length:]
                    out.append(Segment(rest, rest, True, following.quoted, False, following.flows))
                    index += 2
                    continue
            out.append(seg)
            index += 1
        return out

    def ifs(self) -> str:
        value = self.state.scope.variables.get("IFS")
        return value.bare if value is not None and value.known else " \t\n"

    def segments(
        self, node: Any, level: int, quoted: bool, stdin: frozenset[Flow], dangling: bool = False
    ) -> list[Segment]:
        self.tick(level)
        kind = node.type
        if kind == "word" or kind == "number" or kind == "brace_expression":
            text = unescape_word(self.raw(node))
            return [Segment(text, text, True, quoted, False)]
        if kind == "raw_string":
            text = self.raw(node)[1:-1]
            return [Segment(text, text, True, True, False)]
        if kind == "ansi_c_string":
            raw = self.raw(node)[2:-1]
            text = ansi_c(raw)
            return [Segment(text, text, True, True, False, self.encoded(node, raw, text))]
        if kind == "string_content":
            text = unescape_double(self.raw(node))
            return [Segment(text, text, True, True, False)]
        if kind in ("string", "translated_string"):
            out: list[Segment] = []
            for child in node.named_children:
                out.extend(self.segments(child, level + 1, True, stdin))
            if not out:
                out.append(Segment("", "", True, True, False))
            return out
        if kind == "concatenation":
            out = []
            for child in node.children:
                if child.is_named:
                    out.extend(self.segments(child, level + 1, quoted, stdin))
                elif dangling and child.type == "$":
                    out.append(Segment("$", "$", True, quoted, False, dangling=True))
            return out
        if kind == "simple_expansion" or kind == "expansion":
            value = self.expansion(node, level)
            return [Segment(value.text, value.bare, value.known, quoted, not quoted, value.flows)]
        if kind == "command_substitution":
            return [self.substitution(node, level, quoted)]
        if kind == "process_substitution":
            inner_stdin = stdin if self.raw(node).startswith(">") else frozenset()
            flows = self.inner(node, level, "<(…)", inner_stdin)
            return [Segment("/dev/fd/63", "/dev/fd/63", False, True, False, flows)]
        if kind == "arithmetic_expansion":
            for child in node.named_children:
                self.segments(child, level + 1, True, stdin)
            return [Segment("$((…))", "0", False, quoted, False)]
        text = self.raw(node)
        return [Segment(text, text, True, quoted, False)]

    def inner(
        self, node: Any, level: int, via: str, stdin: frozenset[Flow] = frozenset()
    ) -> frozenset[Flow]:
        walker = type(self)(self.state, Run(
            self.run.source, self.run.offsets, self.run.span, self.run.depth, via, stdin, None,
        ))  # fmt: skip
        out: frozenset[Flow] = frozenset()
        for child in node.named_children:
            out |= walker.statement(child, level + 1, stdin, None)
        return out

    def substitution(self, node: Any, level: int, quoted: bool) -> Segment:
        before = len(self.state.commands)
        flows = self.inner(node, level, "$(…)")
        made = self.state.commands[before:]
        if len(made) == 1:
            literal = literal_output(made[0])
            if made[0].program == "pwd" and len(made[0].words) == 1:
                literal = "."
            if literal is not None:
                literal = literal.rstrip("\n")
                if made[0].program in ("printf", "echo"):
                    raw = " ".join(w.bare for w in made[0].words[1:])
                    flows = flows | self.encoded(node, raw, literal)
                return Segment(literal, literal, True, quoted, not quoted, flows)
        return Segment("$(…)", "", False, quoted, not quoted, flows)

    def encoded(self, node: Any, raw: str, decoded: str) -> frozenset[Flow]:
        """A ``decoded`` flow for text written as numeric escapes (``$'\\x63…'``, ``printf
        '\\143…'``): run as a command, it is a decoded payload run."""
        if not escape_encoded(raw, decoded):
            return frozenset()
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        return frozenset({Flow("decoded", *self.span(node), f"escapes {shown}")})

    def expansion(self, node: Any, level: int) -> Value:
        name_node = next((c for c in node.named_children if c.type in ("variable_name",
                          "special_variable_name")), None)  # fmt: skip
        name = self.raw(name_node) if name_node is not None else ""
        if node.type == "simple_expansion" and not name:
            name = self.raw(node)[1:]
        value = self.lookup(name)
        if node.type == "simple_expansion":
            return value
        operator = ""
        operand: list[Any] = []
        seen_name = False
        for child in node.children:
            if child is name_node:
                seen_name = True
                continue
            if not child.is_named and child.type not in ("${", "}"):
                if not seen_name:
                    if child.type in ("#", "!"):
                        return Value("$" + name, "", False, value.flows)  # ${#x}, ${!x}
                    continue
                operator = operator or child.type
            elif child.is_named and seen_name:
                operand.append(child)
        if not operator:
            return value
        words = [s for c in operand for s in self.segments(c, level + 1, True, frozenset())]
        arg = Value(
            "".join(s.text for s in words),
            "".join(s.bare for s in words),
            all(s.known for s in words),
            frozenset().union(*(s.flows for s in words)) if words else frozenset(),
        )
        if operator in (":-", "-", ":=", "="):
            if value.known and (value.bare or operator in ("-", "=")):
                return value
            if not value.known:
                return (
                    arg
                    if not value.flows
                    else Value(arg.text, arg.bare, False, arg.flows | value.flows)
                )
            return arg
        if operator in (":+", "+"):
            return arg if value.known and value.bare else Value("", "", value.known)
        if operator in (":?", "?"):
            return value
        if value.known and arg.known and operator in ("#", "##", "%", "%%"):
            return Value(*(2 * (strip_affix(value.bare, arg.bare, operator),)), True, value.flows)
        if value.known and arg.known and operator in ("/", "//"):
            pattern, _, replacement = arg.bare.partition("/")
            count = -1 if operator == "//" else 1
            done = value.bare.replace(pattern, replacement, count) if pattern else value.bare
            return Value(done, done, True, value.flows)
        return Value("$" + name, "", False, value.flows | arg.flows)

    def lookup(self, name: str) -> Value:
        value = self.state.scope.variables.get(name)
        if value is not None:
            return value
        flows: frozenset[Flow] = frozenset()
        if programs.is_secret_name(name):
            flows = frozenset({Flow("secret-variable", 0, 0, "$" + name)})
        return Value("$" + name, "", False, flows)
