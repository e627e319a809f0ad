"""Shell command lines and scripts read as the shell reads them, for the checks that judge
what a command does (the Guardian's runtime packs, the scanner's content checks).

The text is parsed with tree-sitter's bash grammar (error-tolerant: a line it cannot read
whole still gives the commands around the problem). Each simple command is then evaluated
the way the shell would before running it, as far as that can be told without running
anything:

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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_expand import (
    WORD_NODES,
    Evaluator,
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
from agbom.analysis.shell_words import (
    Value,
    code_option,
    exports,
    joined,
    literal_output,
    numeric_option,
    options,
    path_key,
    reads_stdin,
    replaced,
    split_words,
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

_OPERATORS = frozenset({"|", "||", "&&", ";", "|&", "&"})
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
    text: str, variables: dict[str, tuple[str, frozenset[Flow]]], limits: Limits = DEFAULT_LIMITS
) -> Analysis:
    """:func:`analyse` with variables set beforehand: ``{name: (shown text, flows)}``, each
    of an unknown value that carries ``flows`` (how another language's analysis hands a
    command line it built, with the data that went into it, to this one)."""
    extra = {
        name: Value(shown, "", False, flows)
        for name, (shown, flows) in list(variables.items())[:256]
    }
    return _analyse(text, limits, extra)


def _default_variables() -> dict[str, Value]:
    return {
        "IFS": Value(" \t\n", " \t\n", True),
        "HOME": Value("~", "~", True),
        "PWD": Value(".", ".", True),
        "SHELL": Value("sh", "sh", True),
    }


def _analyse(text: str, limits: Limits, extra: dict[str, Value] | None = None) -> Analysis:
    data = text.encode("utf-8", "surrogatepass")
    state = State(text, limits, Scope({**_default_variables(), **(extra or {})}, {}))
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


class _Walker(Evaluator):
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
        out: frozenset[Flow] = frozenset()
        for child in node.named_children:
            if child.type in WORD_NODES and node.type in ("case_statement", "case_item"):
                self.fields(child, level + 1, split=False)
                continue
            out |= self.statement(child, level + 1, stdin, stdin_text)
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

    def written(self, redirects: Iterable[Redirect], flows: frozenset[Flow]) -> None:
        if not flows:
            return
        for redirect in redirects:
            if redirect.op in (">", ">>", "&>", "&>>", ">|", ">&") and redirect.target.known:
                self.write_file(redirect.target.bare, flows)

    def write_file(self, path: str, flows: frozenset[Flow]) -> None:
        files = self.state.scope.files
        if path and len(files) < 1024:
            files[path_key(path)] = files.get(path_key(path), frozenset()) | flows

    def file_flows(self, word: Word) -> frozenset[Flow]:
        if not word.bare:
            return frozenset()
        files = self.state.scope.files
        found = files.get(path_key(word.bare), frozenset())
        if not found and "@" in word.bare:  # curl -F name=@FILE, -d @FILE
            found = files.get(path_key(word.bare.rsplit("@", 1)[-1].split(";", 1)[0]), found)
        return found

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

    def record(self, command: Command) -> None:
        if len(self.state.commands) >= self.state.limits.max_commands:
            raise Stop(f"more than {self.state.limits.max_commands} commands")
        self.state.commands.append(command)

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

    def store(self, name: str, value: Word, *, exported: bool) -> None:
        limit = self.state.limits.max_value_chars
        self.state.scope.variables[name] = Value(
            value.text[:limit], value.bare[:limit], value.known, value.flows
        )
        self.state.assignments.append(Assignment(name, value, exported))

    def simple(
        self,
        words: list[Word],
        env: list[tuple[str, Word]],
        redirects: tuple[Redirect, ...],
        stdin: frozenset[Flow],
        stdin_text: str | None,
        start: int,
        end: int,
        via: str = "",
    ) -> frozenset[Flow]:
        """A simple command from its evaluated words: wrappers unwrapped, nested text parsed,
        recorded; the flows of its output."""
        words = [self.with_file(w) for w in words]
        wrappers: list[str] = []
        env = list(env)
        while words:
            unwrapped = self.unwrap(words, env, wrappers, stdin, stdin_text, start, end)
            if unwrapped is None:
                break
            if not unwrapped:
                words = []
                break
            words = unwrapped
        if not words:
            return frozenset()
        program = programs.program_name(words[0].bare) if words[0].bare else ""
        command = Command(
            tuple(words), program, start, end, tuple(wrappers), tuple(env), redirects,
            stdin, stdin_text, self.run.depth, via or self.run.via,
        )  # fmt: skip
        self.record(command)
        out = output_flows(command)
        self.nested(command)
        self.decoded_line(command)
        self.track_files(command, out)
        self.written(redirects, out)
        if program == "read":
            for word in words[1:]:
                if word.known and not word.bare.startswith("-") and word.bare.isidentifier():
                    self.store(word.bare, Word("$" + word.bare, "", False, start, end, out),
                               exported=False)  # fmt: skip
        return out

    def with_file(self, word: Word) -> Word:
        flows = self.file_flows(word)
        if not flows or flows <= word.flows:
            return word
        return Word(word.text, word.bare, word.known, word.start, word.end, word.flows | flows,
                    word.quoted)  # fmt: skip

    def unwrap(
        self,
        words: list[Word],
        env: list[tuple[str, Word]],
        wrappers: list[str],
        stdin: frozenset[Flow],
        stdin_text: str | None,
        start: int,
        end: int,
    ) -> list[Word] | None:
        """The wrapped command's words, ``[]`` when the wrapper runs nothing that can be
        seen here, or ``None`` when ``words`` is not a wrapper."""
        if not words[0].known:
            return None
        name = programs.program_name(words[0].bare)
        if name in ("busybox", "toybox"):
            if len(words) > 1 and not words[1].bare.startswith("-"):
                wrappers.append(name)
                return words[1:]
            return None
        spec = programs.WRAPPERS.get(name)
        if spec is None:
            return None
        index = 1
        operands = spec.operands
        shell_text: Word | None = None
        while index < len(words):
            word = words[index]
            value = word.bare
            if value == "--":
                index += 1
                break
            if spec.assignments and "=" in value and value.split("=", 1)[0].isidentifier():
                key, _, setting = value.partition("=")
                assigned = Word(setting, setting, word.known, word.start, word.end, word.flows)
                env.append((key, assigned))
                self.state.assignments.append(Assignment(key, assigned, True))
                index += 1
                continue
            if (
                value.startswith("-")
                and len(value) > 1
                and not (name == "nice" and numeric_option(value))
            ):
                option, eq, attached = value.partition("=")
                if option in spec.no_command:
                    return []
                if option in spec.command_options or (
                    option[:2] in spec.command_options and len(option) > 2 and not eq
                ):
                    if eq:
                        shell_text = Word(attached, attached, word.known, word.start, word.end,
                                          word.flows)  # fmt: skip
                    elif len(option) > 2 and option[:2] in spec.command_options:
                        text = option[2:]
                        shell_text = Word(text, text, word.known, word.start, word.end, word.flows)
                    elif index + 1 < len(words):
                        shell_text = words[index + 1]
                        index += 1
                    index += 1
                    continue
                if option in spec.shell_options:
                    wrappers.append(name)
                    sh = Word("sh", "sh", True, word.start, word.end)
                    return [sh, *words[index + 1 :]] if index + 1 < len(words) else [sh]
                if option in spec.valued and not eq:
                    index += 2
                    continue
                if not option.startswith("--") and len(option) > 2 and option[:2] in spec.valued:
                    index += 1  # -oL: the value attached
                    continue
                index += 1
                continue
            if name == "nice" and numeric_option(value):
                index += 1
                continue
            if operands:
                operands -= 1
                index += 1
                continue
            break
        rest = words[index:]
        if not rest and shell_text is None:
            return None  # the wrapper alone: env prints the environment, sudo -v, ...
        wrappers.append(name)
        if shell_text is not None:
            self.nested_text(shell_text, f"{name} {'-S' if name == 'env' else '-c'}", stdin)
            if name == "env":  # env -S splits the string into the command's words
                return [*split_words(shell_text), *rest] if shell_text.known else []
            return []
        if name in programs.JOINS_AS_SHELL and rest:
            self.nested_text(joined(rest), name, stdin)
            return []
        if name == "xargs":
            if not rest:
                rest = [Word("echo", "echo", True, start, end)]
            if stdin_text is not None:
                items = stdin_text.split()[:64]
                rest = [*rest, *(Word(i, i, True, start, end, stdin) for i in items)]
            elif stdin:
                rest = [*rest, Word("$(xargs)", "", False, start, end, stdin)]
        return rest

    def nested(self, command: Command) -> None:
        """Text the command hands to a shell: ``sh -c``, ``eval``, literal text on the stdin
        of a shell reading it, ``find -exec``, ssh's ProxyCommand, rsync's -e."""
        program = command.program
        words = command.words
        kind = programs.kind_of(program)
        if kind == "shell":
            string = code_option(words, programs.CODE_OPTIONS["shell"])
            if string is not None:
                self.nested_text(string, f"{program} -c", command.stdin, command.stdin_text)
            elif command.stdin_text is not None and reads_stdin(words):
                text = command.stdin_text
                word = Word(text, text, True, command.start, command.end)
                self.nested_text(word, f"… | {program}", frozenset())
        elif program == "eval" and len(words) > 1:
            self.nested_text(joined(words[1:]), "eval", command.stdin, command.stdin_text)
        elif program in ("find",):
            self.find_exec(command)
        elif program == "ssh" or program == "scp" or program == "sftp":
            for option, value in options(words, programs.SSH_VALUED):
                if option == "-o" and value.bare.lower().startswith("proxycommand"):
                    text = value.bare.split("=", 1)[-1] if "=" in value.bare else value.bare[12:]
                    self.nested_text(replaced(value, text.strip()), f"{program} ProxyCommand")
        elif program == "rsync":
            for option, value in options(words, programs.RSYNC_VALUED):
                if option in ("-e", "--rsh"):
                    self.nested_text(value, "rsync -e")

    def decoded_line(self, command: Command) -> None:
        """A command line that came out of decoding (``$(printf '\\x77…')``): the shell
        would not see the pipes and lists in it, but whoever wrote it meant them; it is
        read again as a script."""
        words = command.words
        if not any(f.kind == "decoded" for f in words[0].flows):
            return
        if any(w.bare in _OPERATORS for w in words[1:]):
            self.nested_text(joined(words), "a decoded command line")

    def find_exec(self, command: Command) -> None:
        words = command.words
        index = 1
        while index < len(words):
            if words[index].bare in ("-exec", "-execdir", "-ok", "-okdir"):
                end = index + 1
                while end < len(words) and words[end].bare not in (";", "+", "\\;"):
                    end += 1
                inner = list(words[index + 1 : end])
                if inner:
                    self.simple(inner, [], (), frozenset(), None, command.start, command.end,
                                via="find -exec")  # fmt: skip
                index = end
            index += 1

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

    def track_files(self, command: Command, out: frozenset[Flow]) -> None:
        """Files the command writes, and what goes into them: ``curl -o F``, ``wget -O F``,
        ``tee F``, ``cp SRC F``, ``tar -cf F SRC``."""
        program = command.program
        words = command.words
        if program == "curl":
            for option, value in options(words, programs.CURL_VALUED):
                if option in ("-o", "--output") and value.known and value.bare != "-":
                    self.write_file(value.bare, out)
        elif program in ("wget", "wget2"):
            for option, value in options(words, programs.WGET_VALUED):
                if option in ("-O", "--output-document") and value.known and value.bare != "-":
                    self.write_file(value.bare, out)
        elif program == "tee":
            for word in words[1:]:
                if word.known and not word.bare.startswith("-"):
                    self.write_file(word.bare, command.stdin)
        elif program in ("cp", "mv", "install", "ln") and len(words) > 2:
            operands = [w for w in words[1:] if not w.bare.startswith("-")]
            if len(operands) >= 2 and operands[-1].known and out:
                self.write_file(operands[-1].bare, out)
        elif program in ("tar", "zip", "7z", "gzip", "openssl", "gpg") and out:
            for word in words[1:]:
                if word.known and not word.bare.startswith("-") and "." in word.bare:
                    self.write_file(word.bare, out)

    # -- words


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
