"""The results of the shell analysis (:mod:`agbom.analysis.shell`): evaluated words, the
commands they make, the data flows they carry, and the bounds of one analysis."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    """How much one analysis may do. Every bound but one counts work, so the same text
    gives the same result; the parser's own time is bounded by the clock, because
    tree-sitter's error recovery on some hostile texts grows faster than their length."""

    max_bytes: int = 64 * 1024  # of UTF-8 text
    max_depth: int = 8  # shells in shells: bash -c in eval in $(...)
    max_nodes: int = 60_000  # syntax nodes walked over every nested parse
    max_commands: int = 2_000
    max_parse_ms: int = 250  # tree-sitter's time, over every nested parse
    max_value_chars: int = 4096  # of a variable's value or a word
    max_tree_depth: int = 200  # nesting of the syntax tree
    max_loop_values: int = 64  # values a for loop is followed with


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Flow:
    """Data of one kind that went into a word or a stream, and where it came from."""

    kind: str  # download | decoded | secret | secret-variable
    start: int
    end: int
    what: str


@dataclass(frozen=True, slots=True)
class Word:
    """One argument as the command receives it. ``text`` shows an unknown part as
    ``$NAME`` or ``$(…)``; ``bare`` leaves it out (what the word is when it is empty)."""

    text: str
    bare: str
    known: bool
    start: int
    end: int
    flows: frozenset[Flow] = frozenset()
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # > >> < <> >& &> &>> <<< <<
    target: Word


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command as it runs: ``words[0]`` is the program after every wrapper."""

    words: tuple[Word, ...]
    program: str  # programs.program_name of words[0], "" when it cannot be told
    start: int
    end: int
    wrappers: tuple[str, ...] = ()
    env: tuple[tuple[str, Word], ...] = ()  # NAME=value set for this command
    redirects: tuple[Redirect, ...] = ()
    stdin: frozenset[Flow] = frozenset()
    stdin_text: str | None = None  # literal text on its stdin, when known
    depth: int = 0
    via: str = ""  # how it was reached: "bash -c", "eval", "$(…)", "xargs", ...

    @property
    def args(self) -> tuple[Word, ...]:
        return self.words[1:]

    @property
    def dynamic(self) -> bool:
        """The program's name is not known (``$x`` of an unknown value)."""
        return not self.words or not self.words[0].known or not self.program


@dataclass(frozen=True, slots=True)
class Assignment:
    name: str
    value: Word
    exported: bool = False  # export, declare -x, or NAME=value before a command


@dataclass(frozen=True, slots=True)
class Analysis:
    text: str
    commands: tuple[Command, ...]
    assignments: tuple[Assignment, ...]
    fork_bombs: tuple[tuple[int, int], ...]
    complete: bool
    problems: tuple[str, ...]
    fallback: bool  # the grammar reported an error and the conservative tokenisation ran
    output: frozenset[Flow] = frozenset()  # what the text as a whole writes to its stdout
    files: tuple[tuple[str, frozenset[Flow]], ...] = ()  # files it writes, with what went in
