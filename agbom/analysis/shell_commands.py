"""What the shell analysis does with one simple command once its words are evaluated: the
part of :mod:`agbom.analysis.shell`'s walker between the words
(:mod:`agbom.analysis.shell_expand`) and the statements (pipelines, redirects, loops).

- wrappers seen through (``env``, ``sudo``, ``timeout``, ``xargs``, ``busybox``, ...: see
  :data:`agbom.analysis.shell_programs.WRAPPERS`), so the command recorded is the one that
  runs;
- text another shell will run found and handed back to the walker: ``sh -c``, ``eval``,
  literal text on a shell's stdin, ``find -exec``, ssh's ``ProxyCommand``, rsync's ``-e``,
  a command line that came out of decoding;
- files the command writes, with what goes into them (``curl -o``, ``wget -O``, ``tee``,
  ``cp``, archives), so that a later command reading or running them carries it.

Kept apart from the statement walker so that each reads on its own; the walker supplies
:meth:`CommandRunner.nested_text` (parsing text again is its job).
"""

from __future__ import annotations

from collections.abc import Iterable

from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_expand import Evaluator, Stop
from agbom.analysis.shell_flows import output_flows, saved_files, verified_files
from agbom.analysis.shell_model import Assignment, Command, Flow, Redirect, Word
from agbom.analysis.shell_words import (
    Value,
    code_option,
    joined,
    numeric_option,
    options,
    path_key,
    reads_stdin,
    replaced,
    split_words,
)

_OPERATORS = frozenset({"|", "||", "&&", ";", "|&", "&"})


class CommandRunner(Evaluator):
    """Simple commands recorded, unwrapped and followed into the shells they start."""

    def nested_text(
        self,
        word: Word,
        via: str,
        stdin: frozenset[Flow] = frozenset(),
        stdin_text: str | None = None,
    ) -> None:
        """Parse and walk text another shell will run, every command placed on ``word``."""
        raise NotImplementedError  # the statement walker's

    # -- files

    gating = False  # the command walked now stops what follows when it fails (a && b)

    def written(self, redirects: Iterable[Redirect], flows: frozenset[Flow]) -> None:
        if not flows:
            return
        for redirect in redirects:
            if redirect.op in (">", ">>", "&>", "&>>", ">|", ">&"):
                self.write_word(redirect.target, flows)

    def write_file(self, path: str, flows: frozenset[Flow]) -> None:
        files = self.state.scope.files
        if path and len(files) < 1024:
            files[path_key(path)] = files.get(path_key(path), frozenset()) | flows

    def write_word(self, word: Word, flows: frozenset[Flow]) -> None:
        """A file named by ``word`` written with ``flows``; a path not fully known
        (``"$TMP/x.sh"``, ``TMP=$(mktemp -d)``) is named by how it is written, so that the
        same words elsewhere name the same file (two ``$(mktemp)`` results read as one: a
        download into one and a run of the other would be taken for a download run)."""
        if word.known:
            self.write_file(word.bare, flows)
        elif word.text and len(self.state.scope.files) < 1024:
            key = _UNKNOWN_PATH + word.text
            self.state.scope.files[key] = self.state.scope.files.get(key, frozenset()) | flows

    def file_flows(self, word: Word) -> frozenset[Flow]:
        files = self.state.scope.files
        if not files:
            return frozenset()
        if not word.known:
            return files.get(_UNKNOWN_PATH + word.text, frozenset())
        if not word.bare:
            return frozenset()
        found = files.get(path_key(word.bare), frozenset())
        if not found and "@" in word.bare:  # curl -F name=@FILE, -d @FILE
            found = files.get(path_key(word.bare.rsplit("@", 1)[-1].split(";", 1)[0]), found)
        return found

    def verified(self, command: Command) -> None:
        """Files a checksum pins (see :func:`~agbom.analysis.shell_flows.verified_files`) no
        longer carry what was downloaded into them, when a failed check stops the script
        (``set -e``, ``check && run``, ``check || exit``, ``if check; then``)."""
        if not (self.state.errexit or self.gating):
            return
        files = self.state.scope.files
        for name in verified_files(command):
            for key in (path_key(name), _UNKNOWN_PATH + name):
                if key in files:
                    files[key] = frozenset(f for f in files[key] if f.kind != "download")

    # -- commands

    def record(self, command: Command) -> None:
        if len(self.state.commands) >= self.state.limits.max_commands:
            raise Stop(f"more than {self.state.limits.max_commands} commands")
        self.state.commands.append(command)

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
        if program == "set":
            self.errexit(words)
        self.verified(command)
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

    def track_files(self, command: Command, out: frozenset[Flow]) -> None:
        """Files the command writes, and what goes into them: ``curl -o F``, ``curl -O URL``,
        ``wget -O F``, ``wget URL``, ``tee F``, ``cp SRC F``, ``tar -cf F SRC``."""
        program = command.program
        words = command.words
        if program in ("curl", "wget", "wget2"):
            for saved in saved_files(command):
                self.write_word(saved, out)
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

    def errexit(self, words: list[Word]) -> None:
        """``set -e``, ``set -o errexit`` (``+`` turns it off): a failed command ends the
        script."""
        for index, word in enumerate(words[1:], 1):
            value = word.bare
            named = words[index + 1].bare if index + 1 < len(words) else ""
            if value in ("-o", "+o") and named == "errexit":
                self.state.errexit = value == "-o"
            elif value[:1] in "-+" and not value.startswith(("--", "++")) and "e" in value[1:]:
                self.state.errexit = value[0] == "-"


_UNKNOWN_PATH = "\0"  # before the written form of a path not fully known
