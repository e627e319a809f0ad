"""Shell command lines and scripts read as the shell reads them, for the checks that judge
what a command does (the Guardian's runtime packs, the scanner's content checks).

The text is parsed with tree-sitter's bash grammar (error-tolerant: a line it cannot read
whole still gives the commands around the problem). Each simple command is then evaluated
the way the shell would before running it, as far as that can be told without running
anything:

- line continuations joined first, as the shell's reader joins them (``cu\\<newline>rl``:
  :mod:`agbom.analysis.shell_source`);
- quotes and escapes removed (``'rm'``, ``r\\m``, ``$'\\x2f'``, ``"cu"rl``);
- variables assigned earlier in the same text resolved (``x=rm; $x -rf /``), ``$IFS``
  splitting a word, ``$HOME`` read as ``~`` and ``$PWD`` as ``.``; a variable whose value
  is not known stays a hole, shown as ``$NAME``;
- wrappers seen through (``env``, ``command``, ``exec``, ``nohup``, ``sudo``, ``doas``,
  ``timeout``, ``nice``, ``stdbuf``, ``xargs``, ``busybox``, …: see
  :mod:`agbom.analysis.shell_programs`), so the command is the one that runs;
- text run by another shell parsed again: ``bash -c STRING``, ``eval``, ``su -c``, ``env
  -S``, ``find -exec``, ``ssh -o ProxyCommand=``, and literal text piped into a shell
  (``echo 'rm -rf /' | sh``, a here-document or here-string read by one);
- the commands inside ``$(…)``, backquotes and ``<(…)`` analysed too.

Data flows are followed through pipes, variables, command substitutions and files written
then read in the same text: each word carries the :class:`Flow` of what went into it (a
download, decoded data, a credential file's content, a secret-named variable). What a
command *means* (is it destructive, does it run a download) is judged by
:mod:`agbom.analysis.shell_risks` on the commands this module gives.

Bounded: the text in bytes, nesting depth, syntax nodes walked, commands and values kept
(:class:`Limits`). The bounds count work, not time, so the same text always gives the same
answer; where a bound stops the analysis, :attr:`Analysis.complete` is false and
:attr:`Analysis.problems` says why, so a caller can fail closed. Where the grammar reports
an error, the text is also tokenised conservatively (quotes removed, split on operators)
and those commands are added: a misparse cannot hide a command.

No agbom layer is imported: the scanner, the Guardian and later checks share this module.

The work is in three parts (after :mod:`agbom.analysis.shell_source`): this module parses the
text and walks its statements (lists, pipelines, redirects, assignments, functions, loops,
and which commands stop the script when they fail); :mod:`agbom.analysis.shell_expand`
evaluates the words; :mod:`agbom.analysis.shell_commands` takes each simple command
(wrappers, nested shells, files written and checked).
"""

from __future__ import annotations

import re
import threading
import time
from functools import lru_cache
from typing import Any

from agbom.analysis.shell_commands import CommandRunner
from agbom.analysis.shell_expand import (
    WORD_NODES,
    Offsets,
    Run,
    Scope,
    State,
    Stop,
)
from agbom.analysis.shell_flows import output_flows
from agbom.analysis.shell_model import (
    DEFAULT_LIMITS,
    Analysis,
    Assignment,
    Command,
    Flow,
    Limits,
    Redirect,
    Word,
)
from agbom.analysis.shell_source import join_continuations
from agbom.analysis.shell_words import (
    Value,
    exports,
    literal_output,
    tokenise,
)

__all__ = [
    "DEFAULT_LIMITS",
    "analyse_with",
    "Analysis",
    "Assignment",
    "Command",
    "Flow",
    "Limits",
    "Redirect",
    "Word",
    "analyse",
]

MAX_CACHED_CHARS = 8192  # analyses of texts up to this size are kept (least recently used)


def analyse(text: str, limits: Limits = DEFAULT_LIMITS) -> Analysis:
    """The commands of ``text`` (a command line or a whole script), evaluated."""
    if len(text) <= MAX_CACHED_CHARS:
        return _cached(text, limits)
    return _analyse(text, limits)


@lru_cache(maxsize=1024)
def _cached(text: str, limits: Limits) -> Analysis:
    return _analyse(text, limits)


# -- parsing -----------------------------------------------------------------------------------

_LOCAL = threading.local()


def _parser() -> Any:
    """One tree-sitter parser per thread (a parser is not safe to share)."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _LOCAL.parser = parser
    return parser


def analyse_with(
    text: str,
    variables: dict[str, tuple[str, frozenset[Flow]]],
    limits: Limits = DEFAULT_LIMITS,
    files: dict[str, frozenset[Flow]] | None = None,
) -> Analysis:
    """:func:`analyse` with variables set beforehand: ``{name: (shown text, flows)}``, each
    of an unknown value that carries ``flows`` (how another language's analysis hands a
    command line it built, with the data that went into it, to this one); and ``files``
    written before, ``{path: flows}`` (a download one command line saved, another runs)."""
    extra = {
        name: Value(shown, "", False, flows)
        for name, (shown, flows) in list(variables.items())[:256]
    }
    return _analyse(text, limits, extra, dict(list((files or {}).items())[:1024]))


def _default_variables() -> dict[str, Value]:
    return {
        "IFS": Value(" \t\n", " \t\n", True),
        "HOME": Value("~", "~", True),
        "PWD": Value(".", ".", True),
        "SHELL": Value("sh", "sh", True),
    }


def _analyse(
    text: str,
    limits: Limits,
    extra: dict[str, Value] | None = None,
    files: dict[str, frozenset[Flow]] | None = None,
) -> Analysis:
    data = text.encode("utf-8", "surrogatepass")
    state = State(text, limits, Scope({**_default_variables(), **(extra or {})}, files or {}))
    output: frozenset[Flow] = frozenset()
    state.deadline = time.monotonic() + limits.max_parse_ms / 1000
    complete = True
    if len(data) > limits.max_bytes:
        state.problems.append(f"{len(data)} bytes, over the {limits.max_bytes} byte limit")
        complete = False
        data = data[: limits.max_bytes]
    try:
        output = _walk_source(state, data, Offsets(text, data), None, 0, "")
    except Stop as stop:
        state.problems.append(str(stop))
        complete = False
    except RecursionError:
        state.problems.append("nested too deeply to analyse")
        complete = False
    return Analysis(
        text=text,
        commands=tuple(state.commands),
        assignments=tuple(state.assignments),
        fork_bombs=tuple(state.fork_bombs),
        complete=complete,
        problems=tuple(state.problems),
        fallback=state.fallback,
        output=output,
        files=tuple(state.scope.files.items()),
    )


def _parse(state: State, data: bytes) -> Any:
    """The syntax tree of ``data``, or :class:`Stop` once the analysis's parse time is spent
    (tree-sitter calls back as it goes, and stops when told to)."""
    deadline = state.deadline

    def read(offset: int, _point: Any) -> bytes:
        return data[offset : offset + 65536]

    def over(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    try:
        return _parser().parse(read, progress_callback=over)
    except ValueError:  # cancelled
        _parser().reset()
        raise Stop(f"parsing took over {state.limits.max_parse_ms} ms") from None


def _walk_source(
    state: State,
    data: bytes,
    offsets: Offsets | None,
    span: tuple[int, int] | None,
    depth: int,
    via: str,
    stdin: frozenset[Flow] = frozenset(),
    stdin_text: str | None = None,
) -> frozenset[Flow]:
    if depth > state.limits.max_depth:
        raise Stop(f"shells nested more than {state.limits.max_depth} deep")
    data, cuts = join_continuations(data)  # "cu\<newline>rl" is the word "curl"
    if cuts and offsets is not None:
        offsets = offsets.after_cuts(cuts)
    tree = _parse(state, data)
    run = Run(data, offsets, span, depth, via, stdin, stdin_text)
    walker = _Walker(state, run)
    out = walker.statement(tree.root_node, 0)
    if tree.root_node.has_error:
        state.fallback = True
        text = data.decode("utf-8", "replace")
        out |= _fallback(state, text, run)
    return out


# -- the walker ------------------------------------------------------------------------------------


class _Walker(CommandRunner):
    """Statements: lists, pipelines, redirects, assignments, functions and loops; each
    simple command goes on to :class:`~agbom.analysis.shell_commands.CommandRunner`."""

    def statement(
        self,
        node: Any,
        level: int,
        stdin: frozenset[Flow] | None = None,
        stdin_text: str | None = None,
    ) -> frozenset[Flow]:
        """Run one statement node; its output's flows."""
        self.tick(level)
        if stdin is None:
            stdin, stdin_text = self.run.stdin, self.run.stdin_text
        kind = node.type
        if kind == "command":
            return self.command(node, level, stdin, stdin_text, ())
        if kind == "pipeline":
            return self.pipeline(node, level, stdin, stdin_text)
        if kind == "redirected_statement":
            return self.redirected(node, level, stdin, stdin_text)
        if kind == "variable_assignment":
            self.assign(node, level, exported=False)
            return frozenset()
        if kind == "variable_assignments":
            for child in node.named_children:
                self.assign(child, level + 1, exported=False)
            return frozenset()
        if kind == "declaration_command":
            return self.declaration(node, level, stdin)
        if kind == "unset_command":
            for child in node.named_children:
                self.state.scope.variables.pop(self.raw(child), None)
            return frozenset()
        if kind == "function_definition":
            return self.function(node, level)
        if kind == "for_statement":
            return self.for_loop(node, level, stdin)
        if kind in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            return frozenset()
        if kind in WORD_NODES or kind == "test_command":
            for _ in self.fields(node, level, split=False):
                pass
            return frozenset()
        if kind == "list":
            return self.and_or(node, level, stdin, stdin_text)
        conditions = (
            {c.start_byte for c in node.children_by_field_name("condition")}
            if kind in _CONDITIONAL
            else ()
        )
        out: frozenset[Flow] = frozenset()
        for child in node.named_children:
            if child.type in WORD_NODES and node.type in ("case_statement", "case_item"):
                self.fields(child, level + 1, split=False)
                continue
            gating, self.gating = self.gating, self.gating or child.start_byte in conditions
            try:  # an if's or while's condition stops its body when it fails
                out |= self.statement(child, level + 1, stdin, stdin_text)
            finally:
                self.gating = gating
        return out

    def and_or(
        self, node: Any, level: int, stdin: frozenset[Flow], stdin_text: str | None
    ) -> frozenset[Flow]:
        """``a && b``, ``a || exit``: ``a`` failing stops what follows (its checks count)."""
        children = node.children
        out: frozenset[Flow] = frozenset()
        for index, child in enumerate(children):
            if not child.is_named or child.type == "comment":
                continue
            after = children[index + 1].type if index + 1 < len(children) else ""
            stops = after == "&&" or (
                after == "||" and index + 2 < len(children) and _ends(self.raw(children[index + 2]))
            )
            gating, self.gating = self.gating, self.gating or stops
            try:
                out |= self.statement(child, level + 1, stdin, stdin_text)
            finally:
                self.gating = gating
        return out

    def pipeline(
        self, node: Any, level: int, stdin: frozenset[Flow], stdin_text: str | None
    ) -> frozenset[Flow]:
        out, text = stdin, stdin_text
        for child in node.named_children:
            if child.type == "comment":
                continue
            out, text = self.stage(child, level + 1, out, text)
        return out

    def stage(
        self, node: Any, level: int, stdin: frozenset[Flow], stdin_text: str | None
    ) -> tuple[frozenset[Flow], str | None]:
        """One stage of a pipeline: its output's flows and, when known, its literal text."""
        before = len(self.state.commands)
        out = self.statement(node, level, stdin, stdin_text)
        made = self.state.commands[before:]
        text = literal_output(made[-1]) if len(made) == 1 else None
        return out, text

    def redirected(
        self, node: Any, level: int, stdin: frozenset[Flow], stdin_text: str | None
    ) -> frozenset[Flow]:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        after: list[Any] = []  # a pipeline written after a here-document's start
        for child in node.children_by_field_name("redirect"):
            made = self.redirect(child, level + 1)
            if made is not None:
                redirects.append(made[0])
                if made[1] is not None:
                    stdin_text = made[1]
                after.extend(c for c in child.named_children if c.type in ("pipeline", "command"))
        for redirect in redirects:
            if redirect.op in ("<", "<>", "<<<", "<<"):
                stdin = stdin | redirect.target.flows | self.file_flows(redirect.target)
        if body is None:
            return frozenset()
        if body.type == "command":
            out = self.command(body, level + 1, stdin, stdin_text, tuple(redirects))
        else:
            out = self.statement(body, level + 1, stdin, stdin_text)
        self.written(redirects, out)
        text = None
        if body.type == "command" and self.state.commands:
            text = literal_output(self.state.commands[-1])
        for stage in after:
            out, text = self.stage(stage, level + 1, out, text)
        return out

    def redirect(self, node: Any, level: int) -> tuple[Redirect, str | None] | None:
        """A redirect, and the literal text it feeds to stdin (here-string, here-document)."""
        self.tick(level)
        if node.type == "heredoc_redirect":
            body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
            text = self.raw(body) if body is not None else ""
            start, end = self.span(node)
            return Redirect("<<", Word(text, text, True, start, end)), text
        op = ""
        target: Word | None = None
        for child in node.children:
            if not child.is_named:
                op += child.type
            elif target is None and (
                child.type in WORD_NODES
                and child.type != "number"
                or (child.type == "number" and op)
            ):
                words = self.fields(child, level + 1, split=False)
                target = words[0] if words else None
        if target is None:
            return None
        if node.type == "herestring_redirect":
            return Redirect("<<<", target), target.text + "\n"
        return Redirect(op or ">", target), None

    # -- assignments

    def assign(self, node: Any, level: int, *, exported: bool) -> tuple[str, Word] | None:
        self.tick(level)
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return None
        name = self.raw(name_node)
        start, end = self.span(node)
        if value_node is None:
            value = Word("", "", True, start, end)
        else:
            words = self.fields(value_node, level + 1, split=False)
            value = words[0] if words else Word("", "", True, start, end)
        appending = any(not c.is_named and c.type == "+=" for c in node.children)
        variables = self.state.scope.variables
        if appending and name in variables:
            old = variables[name]
            value = Word(
                old.text + value.text, old.bare + value.bare, old.known and value.known,
                start, end, old.flows | value.flows,
            )  # fmt: skip
        limit = self.state.limits.max_value_chars
        if len(variables) < 4096 or name in variables:
            variables[name] = Value(
                value.text[:limit], value.bare[:limit], value.known, value.flows
            )
        self.state.assignments.append(Assignment(name, value, exported))
        return name, value

    def declaration(self, node: Any, level: int, stdin: frozenset[Flow]) -> frozenset[Flow]:
        keyword = node.children[0].type if node.children else "declare"
        words: list[Word] = []
        exported = keyword == "export"
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child, level + 1, exported=exported or exports(words))
            elif child.type in WORD_NODES:
                words.extend(self.fields(child, level + 1, split=True))
        start, end = self.span(node)
        program_word = Word(keyword, keyword, True, start, start + len(keyword))
        command = Command(
            (program_word, *words), keyword, start, end, stdin=stdin,
            depth=self.run.depth, via=self.run.via,
        )  # fmt: skip
        self.record(command)
        return output_flows(command)

    def function(self, node: Any, level: int) -> frozenset[Flow]:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:
            return frozenset()
        before = len(self.state.commands)
        self.statement(body, level + 1, frozenset(), None)
        name = self.raw(name_node) if name_node is not None else ""
        calls = sum(1 for c in self.state.commands[before:] if c.words and c.words[0].text == name)
        if name and calls >= 2:  # it starts itself twice: every call doubles the processes
            self.state.fork_bombs.append(self.span(node))
        return frozenset()

    def for_loop(self, node: Any, level: int, stdin: frozenset[Flow]) -> frozenset[Flow]:
        variable = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values: list[Word] = []
        for child in node.children_by_field_name("value"):
            values.extend(self.fields(child, level + 1, split=True))
        if body is None:
            return frozenset()
        name = self.raw(variable) if variable is not None else ""
        limit = self.state.limits.max_loop_values
        if len(values) > limit:
            raise Stop(f"a for loop over more than {limit} values")
        out: frozenset[Flow] = frozenset()
        variables = self.state.scope.variables
        loop: list[Word | None] = list(values) or [None]
        for value in loop:
            if name:
                if value is None:
                    variables.pop(name, None)
                else:
                    variables[name] = Value(value.text, value.bare, value.known, value.flows)
            out |= self.statement(body, level + 1, stdin, None)
        return out

    # -- commands

    def command(
        self,
        node: Any,
        level: int,
        stdin: frozenset[Flow],
        stdin_text: str | None,
        redirects: tuple[Redirect, ...],
    ) -> frozenset[Flow]:
        self.tick(level)
        env: list[tuple[str, Word]] = []
        parts: list[Any] = []
        extra = list(redirects)
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                start, end = self.span(child)
                value = Word("", "", True, start, end)
                if value_node is not None:
                    found = self.fields(value_node, level + 1, split=False, stdin=stdin)
                    value = found[0] if found else value
                env.append((self.raw(name_node) if name_node is not None else "", value))
            elif kind == "command_name":
                parts.extend(child.named_children)
            elif kind in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                made = self.redirect(child, level + 1)
                if made is not None:
                    extra.append(made[0])
                    if made[1] is not None:
                        stdin_text = made[1]
                    if made[0].op in ("<", "<>", "<<<"):
                        stdin = stdin | made[0].target.flows | self.file_flows(made[0].target)
            elif kind in WORD_NODES:
                parts.append(child)
        words = self.adjacent_fields(parts, level + 1, stdin)
        start, end = self.span(node)
        if not words:
            for name, value in env:  # NAME=value alone sets the variable
                self.store(name, value, exported=False)
            return frozenset()
        for name, value in env:
            self.state.assignments.append(Assignment(name, value, True))
        return self.simple(words, env, tuple(extra), stdin, stdin_text, start, end)

    def nested_text(
        self,
        word: Word,
        via: str,
        stdin: frozenset[Flow] = frozenset(),
        stdin_text: str | None = None,
    ) -> None:
        """Parse and walk text another shell will run, every command placed on ``word``."""
        if not word.bare.strip():
            return
        data = word.bare.encode("utf-8", "surrogatepass")[: self.state.limits.max_bytes]
        _walk_source(
            self.state, data, None, (word.start, word.end), self.run.depth + 1, via,
            stdin, stdin_text,
        )  # fmt: skip


_CONDITIONAL = frozenset({"if_statement", "elif_clause", "while_statement"})
_ENDS = re.compile(r"^[({\s]*(?:exit|return|false|die|fatal|abort)\b|[;{\s](?:exit|return)\b")


def _ends(text: str) -> bool:
    """The text ends the script or function (``exit 1``, ``{ echo bad; exit 1; }``)."""
    return _ENDS.search(text[:400]) is not None


def _fallback(state: State, text: str, run: Run) -> frozenset[Flow]:
    """Commands of a text the grammar could not read whole: quotes and escapes removed,
    split on every operator (also those inside quotes would be, had the quotes not been
    closed), each run of ``|`` a pipeline. Variables are not expanded here; the tree
    walk's values are used where the name is known."""
    walker = _Walker(state, run)
    out: frozenset[Flow] = frozenset()
    offsets = run.offsets
    for pipeline in tokenise(text, state.limits.max_commands):
        flows: frozenset[Flow] = run.stdin
        literal: str | None = None
        for words, redirects, start, end in pipeline:
            state.nodes += len(words) + 1
            if state.nodes > state.limits.max_nodes:
                raise Stop(f"more than {state.limits.max_nodes} syntax nodes")
            if run.span is not None:
                start, end = run.span
            elif offsets is not None:
                start, end = offsets.char(start), offsets.char(end)
            made = [_fallback_word(walker, w, start, end) for w in words]
            made_redirects = tuple(
                Redirect(op, _fallback_word(walker, target, start, end)) for op, target in redirects
            )
            stdin = flows
            for redirect in made_redirects:
                if redirect.op in ("<", "<<<"):
                    stdin = stdin | walker.file_flows(redirect.target)
            before = len(state.commands)
            flows = walker.simple(made, [], made_redirects, stdin, literal, start, end,
                                  via=run.via or "unparsed")  # fmt: skip
            new = state.commands[before:]
            literal = literal_output(new[-1]) if len(new) == 1 else None
        out |= flows
    return out


def _fallback_word(walker: _Walker, raw: str, start: int, end: int) -> Word:
    if raw.startswith("$") and raw[1:].replace("{", "").replace("}", "").isidentifier():
        value = walker.lookup(raw[1:].strip("{}"))
        return Word(value.text, value.bare, value.known, start, end, value.flows)
    return Word(raw, raw, "$" not in raw, start, end)
