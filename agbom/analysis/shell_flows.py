"""What flows out of a command: its stdin and arguments, and what it brings in itself (a
download, decoded data, text written as escapes and decoded by ``echo -e`` or ``printf``, a
credential file's content, the environment)."""

from __future__ import annotations

import re

from agbom.analysis import indicators
from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_model import Command, Flow, Word
from agbom.analysis.shell_words import escape_encoded, literal_output, split_options

# Commands that print a credential: a keychain dump, a browser's password item, a CLI's token.
_KEYCHAIN_DUMPS = frozenset({"dump-keychain", "find-internet-password"})
_BROWSER_ITEMS = ("chrome", "chromium", "brave", "edge", "opera", "vivaldi", "firefox",
                  "safe storage", "slack", "discord", "1password", "keychain")  # fmt: skip
_TOKEN_COMMANDS = {
    "gh": (("auth", "token"),),
    "gcloud": (("auth", "print-access-token"), ("auth", "print-identity-token")),
    "az": (("account", "get-access-token"),),
    "doctl": (("auth", "token"),),
    "heroku": (("auth:token",),),
    "vault": (("print", "token"),),
    "op": (("read",), ("item", "get")),
}


def output_flows(command: Command) -> frozenset[Flow]:
    """What flows out of a command: its stdin and arguments, plus what it fetches, decodes
    or reads from a credential file."""
    flows = set(command.stdin)
    for word in command.words[1:]:
        flows |= word.flows
    for redirect in command.redirects:
        if redirect.op in ("<", "<>", "<<<"):
            flows |= redirect.target.flows
    flows |= command_sources(command)
    return frozenset(flows)


def _shown(command: Command) -> str:
    return " ".join(w.text for w in command.words)[:120]


def credential_in(word: Word) -> str | None:
    """The credential path a word names: as itself, or after ``@`` / ``<`` / ``=`` (curl's
    ``-d @FILE``, ``-F name=@FILE``, ``--post-file=FILE``)."""
    value = word.bare
    if not value:
        return None
    candidates = [value]
    candidates.extend(value.rsplit(mark, 1)[-1] for mark in ("@", "<", "=") if mark in value)
    return next(
        (
            c
            for c in candidates
            if programs.is_credential_path(c) or indicators.is_credential_store(c)
        ),
        None,
    )


def command_sources(command: Command) -> frozenset[Flow]:
    """What a command brings in: a download (a fetcher's output), decoded data, a
    credential file's content, the whole environment, a secret-named variable."""
    program = command.program
    words = command.words
    values = [w.bare for w in words[1:]]
    found: set[Flow] = set()
    start, end = command.start, command.end
    if program in programs.FETCHERS and (program != "openssl" or "s_client" in values):
        found.add(Flow("download", start, end, _shown(command)))
    decode = programs.DECODERS.get(program)
    if decode is not None and (
        not decode
        or any(v in decode for v in values)
        or (
            program in ("base64", "base32", "basenc")
            and any(v.startswith("-") and not v.startswith("--") and "d" in v for v in values)
        )
    ):
        if program != "openssl" or any(v in ("base64", "enc", "-base64", "-a") for v in values):
            found.add(Flow("decoded", start, end, _shown(command)))
    if program in ("echo", "printf") and any("\\" in v for v in values):
        written = literal_output(command)  # echo -e, printf: escapes decoded
        raw = " ".join(values)
        if (
            written is not None
            and escape_encoded(raw, written)
            and not escape_encoded(written, written)  # decoded, not written as they were
        ):
            found.add(Flow("decoded", start, end, _shown(command)))
    if program not in programs.NAMES_ONLY:
        for word in words[1:]:
            path = credential_in(word)
            if path is not None:
                found.add(Flow("secret", word.start, word.end, path))
    for redirect in command.redirects:
        if redirect.op in ("<", "<>") and programs.is_credential_path(redirect.target.bare):
            found.add(Flow("secret", redirect.target.start, redirect.target.end,
                           redirect.target.bare))  # fmt: skip
    operands = [v for v in values if not v.startswith("-")]
    if (
        program in ("env", "printenv")
        and not operands
        or (program == "set" and not values)
        or (
            program in ("export", "declare", "typeset")
            and values
            and all(v.startswith("-") and ("p" in v or "x" in v) for v in values)
        )
    ):
        found.add(Flow("secret", start, end, "the environment"))
    if program == "printenv":
        for name in operands:
            if programs.is_secret_name(name):
                found.add(Flow("secret-variable", start, end, "$" + name))
    found |= _credential_commands(command, values)
    if program not in programs.NAMES_ONLY and program not in ("cd", "ls"):
        for word in words[1:]:
            if word.known and indicators.is_user_data(word.bare):
                found.add(Flow("user-data", word.start, word.end, word.bare))
    if programs.kind_of(program) == "shell" and (
        "-i" in values or (not operands and not any(v in ("-c", "--command") for v in values))
    ):
        found.add(Flow("shell", start, end, f"{program} -i"))  # its output: a shell session
    return frozenset(found)


def _credential_commands(command: Command, values: list[str]) -> frozenset[Flow]:
    """Credentials a command prints: ``security dump-keychain``, a browser's keychain item,
    ``gh auth token`` and other CLIs' tokens, ``kubectl config view --raw``, ``aws
    configure get aws_secret_access_key``."""
    program = command.program
    start, end = command.start, command.end
    shown = _shown(command)
    if program == "security" and values:
        verb = values[0]
        named = " ".join(values[1:]).lower()
        if verb in _KEYCHAIN_DUMPS or (
            verb.startswith("find-") and any(item in named for item in _BROWSER_ITEMS)
        ):
            return frozenset({Flow("secret", start, end, shown)})
        if verb.startswith("find-") and ("-w" in values or "-g" in values):
            return frozenset({Flow("secret-variable", start, end, shown)})
    if program == "kubectl" and "view" in values and "--raw" in values:
        return frozenset({Flow("secret", start, end, shown)})
    if (
        program == "aws"
        and values[:2] == ["configure", "get"]
        and any("secret" in v or "token" in v for v in values[2:])
    ):
        return frozenset({Flow("secret-variable", start, end, shown)})
    if program == "aws" and values[:2] == ["configure", "export-credentials"]:
        return frozenset({Flow("secret", start, end, shown)})
    if program.startswith("docker-credential-") and "get" in values:
        return frozenset({Flow("secret", start, end, shown)})
    for verbs in _TOKEN_COMMANDS.get(program, ()):
        if tuple(values[: len(verbs)]) == verbs:
            return frozenset({Flow("secret-variable", start, end, shown)})
    if program in ("sqlite3", "sqlite") and any(indicators.is_credential_store(v) for v in values):
        return frozenset({Flow("secret", start, end, shown)})
    return frozenset()


# -- files a fetcher saves, files a checksum pins ---------------------------------------------


def saved_files(command: Command) -> list[Word]:
    """The files a fetcher writes what it downloads to: ``curl -o F`` (also in a bundle of
    short options, ``-fsSLo F``), ``curl -O URL`` / ``--remote-name`` (the URL's last path
    part, under ``--output-dir``), ``wget -O F``, and ``wget URL`` (the URL's last path part,
    under ``-P DIR``). ``-`` (stdout) is not a file."""
    program = command.program
    words = command.words
    if program == "curl":
        found, operands = split_options(words, programs.CURL_VALUED)
        out = [v for o, v in found if o in ("-o", "--output") and v.bare != "-"]
        if _flag(words, "O", ("--remote-name", "--remote-name-all"), programs.CURL_VALUED):
            folder = next((v for o, v in found if o == "--output-dir"), None)
            out += _named_after(operands, folder)
        return out
    if program in ("wget", "wget2"):
        found, operands = split_options(words, programs.WGET_VALUED)
        named = [v for o, v in found if o in ("-O", "--output-document")]
        if named:
            return [v for v in named if v.bare != "-"]
        folder = next((v for o, v in found if o in ("-P", "--directory-prefix")), None)
        return _named_after(operands, folder)
    return []


def _flag(
    words: tuple[Word, ...], short: str, long: tuple[str, ...], valued: frozenset[str]
) -> bool:
    """The option ``-SHORT`` is given, alone or in a bundle before any option taking a value."""
    for word in words[1:]:
        value = word.bare
        if value in long:
            return True
        if value.startswith("-") and not value.startswith("--"):
            for letter in value[1:]:
                if letter == short:
                    return True
                if "-" + letter in valued:
                    break
    return False


def _named_after(urls: list[Word], folder: Word | None) -> list[Word]:
    """Files named after the last path part of each URL, in ``folder`` if given."""
    out: list[Word] = []
    for url in urls[:16]:
        if "://" not in url.bare:
            continue
        path = url.bare.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        name = path.rsplit("/", 1)[-1] if "/" in path else ""
        if not name:
            continue
        text = f"{folder.bare.rstrip('/')}/{name}" if folder is not None else name
        out.append(Word(text, text, url.known and (folder is None or folder.known),
                        url.start, url.end))  # fmt: skip
    return out


_CHECKSUMS = frozenset(
    {"sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "shasum"}
)
_LISTED = re.compile(r"^\s*(?:\\)?[0-9A-Fa-f]{40,128}\s+\*?(\S.*?)\s*$", re.MULTILINE)


def verified_files(command: Command) -> list[str]:
    """The files a checksum tool checks against digests written in the text itself (``echo
    "DIGEST  FILE" | sha256sum -c``, a here-string or here-document): their content is
    pinned to what the author saw. A list of sums read from a file (downloaded beside the
    file, perhaps) pins nothing that can be told here."""
    if command.program not in _CHECKSUMS or command.stdin_text is None:
        return []
    values = [w.bare for w in command.words[1:]]
    if not any(v == "--check" or (v.startswith("-") and not v.startswith("--") and "c" in v)
               for v in values):  # fmt: skip
        return []
    if any(not v.startswith("-") and v != "-" for v in values if v not in ("256", "512")):
        return []  # a sums file operand: not the literal listing
    return [m.group(1) for m in _LISTED.finditer(command.stdin_text[:65536])][:64]
