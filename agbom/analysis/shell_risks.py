"""What the commands of a shell analysis (:mod:`agbom.analysis.shell`) do that a baseline
must stop, judged on the evaluated words rather than on the text:

- ``destructive``: ``rm -r`` of the root, a system folder, the home folder, the working
  folder or its parent, or everything in one of them; ``find … -delete`` or ``-exec rm``
  from one; ``shred`` outside the working folder or of a disk; ``chmod``/``chown -R`` of
  one; ``mkfs``, ``wipefs``, ``dd`` or a redirect onto a disk; a fork bomb;
- ``download-exec`` and ``decode-exec``: a shell or interpreter (or ``eval``, ``source``,
  a program whose name came from the data) runs what a fetcher downloaded or a decoder
  decoded, whichever way it arrives: a pipe (through ``tee``, ``xargs``, wrappers), ``-c
  "$(curl …)"``, ``<(curl …)``, a variable, a file saved then run;
- ``exfiltration``: a program that sends data off the machine (``curl``, ``wget``, ``nc``,
  ``ssh``, ``scp``, mail, DNS look-ups) sends a credential file's content, the environment,
  or a secret-named variable as data (a token in an ``Authorization`` header is how tokens
  are used, and is not counted);

and :func:`destinations`: every network destination a command names, including those that
string matching misses (curl's and wget's default scheme, ``--connect-to``, ``--resolve``,
proxies by option or environment, ssh/scp/rsync/sftp/git addresses, raw sockets: ``nc``,
``socat``, ``telnet``, ``/dev/tcp``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agbom.analysis import shell_programs as programs
from agbom.analysis.shell import MAX_CACHED_CHARS, analyse
from agbom.analysis.shell_flows import credential_in
from agbom.analysis.shell_model import Analysis, Command, Flow, Word
from agbom.analysis.shell_words import code_option, options, reads_stdin, split_options

CHECKS = ("destructive", "download-exec", "decode-exec", "exfiltration")


@dataclass(frozen=True, slots=True)
class Risk:
    check: str  # one of CHECKS
    start: int
    end: int
    detail: str
    origin: str = ""  # the command the data came from (for download-exec: the fetch)
    source_start: int = -1  # where that data came from, when it is a flow (else -1)


@dataclass(frozen=True, slots=True)
class Destination:
    """A network destination: ``url`` is what :func:`urllib.parse.urlsplit` reads (a
    scheme is added where the program has a default)."""

    url: str
    start: int
    end: int
    how: str
    raw: bool = False  # a raw socket: nc, socat, telnet, /dev/tcp
    always: str = ""  # a raw socket denied whatever its host: why (a listener, a shell on it)


# -- destruction -------------------------------------------------------------------------------

_SYSTEM = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
     "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/mnt",
     "/media", "/snap", "/users", "/system", "/library", "/applications", "/private",
     "/volumes", "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/var/lib", "/var/log"}
)  # fmt: skip
_HOME = "/home/~"  # the home folder, placed so that ~/.. is /home
_GLOB = re.compile(r"^[*?.\[\]!^a-z-]*[*?][*?.\[\]!^a-z-]*$", re.IGNORECASE)
_DISK = re.compile(
    r"^/dev/(?:sd|hd|vd|xvd|nvme|disk|rdisk|mmcblk|md|dm-|mapper/|loop|sr)[a-z0-9/_-]*$"
)
_DISK_TOOLS = frozenset(
    {"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "sgdisk", "parted", "blkdiscard"}
)
_NARROWING = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
     "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-user",
     "-group", "-perm", "-empty", "-links", "-inum", "-samefile", "-lname", "-ilname",
     "-uid", "-gid", "-nouser", "-nogroup", "-newermt"}
)  # fmt: skip


def _place(value: str) -> str | None:
    """The folder a path names, normalised (``~`` as :data:`_HOME`, ``.`` for the working
    folder), with a trailing glob segment taken as its folder; ``None`` for an empty word."""
    if not value:
        return None
    value = value.strip()
    if value.startswith("~"):
        head, _, rest = value.partition("/")
        value = _HOME + ("/" + rest if rest else "")
        del head
    absolute = value.startswith("/")
    normal = posixpath.normpath(value)
    if absolute and normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    parts = normal.split("/")
    if (
        len(parts) > 0
        and _GLOB.match(parts[-1])
        and parts[-1] not in (".", "..")
        and not re.sub(r"[*?\[\]!^.]", "", parts[-1])  # *, .*, .??*: everything; *.log is not
    ):
        normal = "/".join(parts[:-1]) or ("/" if absolute else ".")
    return normal


def _danger(value: str, *, strict: bool = False) -> str | None:
    """What a target is, when removing it (or everything in it) is a disaster."""
    place = _place(value)
    if place is None:
        return None
    if place == "/":
        return "the root"
    if place == _HOME or place == "/home/~" or place.startswith(_HOME) and strict:
        return "the home folder"
    if place.lower() in _SYSTEM:
        return f"the system folder {place}"
    if place == "." or place == "":
        return "the working folder"
    if place.strip("./") == "" and ".." in place:
        return "a parent of the working folder"
    return None


def _operands(words: Sequence[Word], skip_first: bool = False) -> list[Word]:
    found: list[Word] = []
    ended = False
    for word in words[1:]:
        if not ended and word.bare == "--":
            ended = True
            continue
        if not ended and word.bare.startswith("-") and len(word.bare) > 1:
            continue
        found.append(word)
    return found[1:] if skip_first else found


def _flag(words: Sequence[Word], short: str, long: str) -> bool:
    for word in words[1:]:
        value = word.bare
        if value == "--":
            return False
        if value == long or (
            value.startswith("-") and not value.startswith("--") and short in value[1:]
        ):
            return True
    return False


def _destructive(command: Command) -> Iterator[Risk]:
    program = command.program
    words = command.words
    like_rm = program in ("rm", "unlink") or command.dynamic
    if like_rm and (_flag(words, "r", "--recursive") or _flag(words, "R", "--recursive")):
        for word in _operands(words):
            what = _danger(word.bare)
            if what is not None:
                yield Risk("destructive", command.start, command.end,
                           f"rm -r of {what} ({word.text})")  # fmt: skip
    if program == "find":
        yield from _find(command)
    if program == "shred":
        for word in _operands(words):
            value = word.bare
            place = _place(value)
            outside = value.startswith(("/", "~")) or (place or "").startswith("..")
            if _DISK.match(value) or outside or _danger(value) is not None:
                yield Risk("destructive", command.start, command.end,
                           f"shred of {word.text}, outside the working folder")  # fmt: skip
    if program in ("chmod", "chown", "chgrp"):
        recursive = _flag(words, "R", "--recursive")
        for word in _operands(words, skip_first=True):
            what = _danger(word.bare)
            system = (_place(word.bare) or "").lower() in _SYSTEM
            if what is not None and (recursive or system):
                yield Risk("destructive", command.start, command.end,
                           f"{program} {'-R ' if recursive else ''}of {what}")  # fmt: skip
    if program.startswith("mkfs") or program in _DISK_TOOLS:
        for word in _operands(words):
            if _DISK.match(word.bare):
                yield Risk("destructive", command.start, command.end,
                           f"{program} on the disk {word.bare}")  # fmt: skip
    if program == "dd":
        for word in words[1:]:
            if word.bare.startswith("of=") and _DISK.match(word.bare[3:]):
                yield Risk("destructive", command.start, command.end,
                           f"dd onto the disk {word.bare[3:]}")  # fmt: skip
    for redirect in command.redirects:
        if redirect.op in (">", ">>", "&>", ">|") and _DISK.match(redirect.target.bare):
            yield Risk("destructive", command.start, command.end,
                       f"output written onto the disk {redirect.target.bare}")  # fmt: skip


def _find(command: Command) -> Iterator[Risk]:
    words = command.words
    starts: list[Word] = []
    index = 1
    while index < len(words) and words[index].bare in ("-H", "-L", "-P", "-O", "-D"):
        index += 1
    while index < len(words) and not words[index].bare.startswith(("-", "(", "!")):
        starts.append(words[index])
        index += 1
    expression = [w.bare for w in words[index:]]
    deletes = "-delete" in expression
    for position, token in enumerate(expression):
        if token in ("-exec", "-execdir", "-ok", "-okdir") and position + 1 < len(expression):
            runs = programs.program_name(expression[position + 1])
            deletes = deletes or runs in ("rm", "shred", "unlink", "rmdir")
    if not deletes:
        return
    narrowed = any(token in _NARROWING for token in expression)
    for word in starts or [Word(".", ".", True, command.start, command.end)]:
        place = _place(word.bare)
        what = _danger(word.bare)
        if what is None:
            continue
        if place == "/" or (place or "").lower() in _SYSTEM or not narrowed:
            yield Risk("destructive", command.start, command.end, f"find deleting from {what}")


# -- running a download -------------------------------------------------------------------------


def _script_word(command: Command) -> Word | None:
    """The script operand of a shell or interpreter (the first word that is not an option
    or an option's value)."""
    words = command.words
    index = 1
    while index < len(words):
        value = words[index].bare
        if value == "--":
            return words[index + 1] if index + 1 < len(words) else None
        if value.startswith(("-", "+")) and len(value) > 1:
            if value in programs.VALUED_INTERPRETER_OPTIONS:
                index += 1
            index += 1
            continue
        return words[index]
    return None


def _runs(command: Command) -> Iterator[tuple[frozenset[Flow], str]]:
    """The data a command runs as a program, with how it runs it."""
    program = command.program
    words = command.words
    kind = programs.kind_of(program)
    if words and words[0].flows:
        yield words[0].flows, "the program itself"
    if kind:
        family = "shell" if kind == "shell" else programs.interpreter_family(program)
        code = code_option(words, programs.CODE_OPTIONS.get(family, ()))
        if code is not None:
            yield code.flows, f"{program} {'-c' if kind == 'shell' else 'code'}"
            return
        if kind == "interpreter" and any(w.bare in programs.NOT_A_PROGRAM for w in words[1:]):
            return
        if reads_stdin(words):
            yield command.stdin, f"{program} reading its stdin"
            return
        script = _script_word(command)
        if script is not None:
            yield script.flows, f"{program} running {script.text}"
            if script.bare in ("/dev/stdin", "-", "/dev/fd/0", "/proc/self/fd/0"):
                yield command.stdin, f"{program} reading its stdin"
        return
    if program == "eval":
        for word in words[1:]:
            yield word.flows, "eval"
        return
    if program in ("source", "."):
        if len(words) > 1:
            yield words[1].flows, program
            if words[1].bare in ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
                yield command.stdin, f"{program} of its stdin"
        return
    if command.dynamic and command.stdin:
        yield command.stdin, "a program whose name cannot be told, reading its stdin"


def _executes(command: Command) -> Iterator[Risk]:
    for flows, how in _runs(command):
        for kind, check in (("download", "download-exec"), ("decoded", "decode-exec")):
            flow = _first(flows, kind)
            if flow is not None:
                yield Risk(check, command.start, command.end, f"{how} runs {_what(flow)}",
                           flow.what, flow.start)  # fmt: skip


def _first(flows: frozenset[Flow], *kinds: str) -> Flow | None:
    matching = sorted((f for f in flows if f.kind in kinds), key=lambda f: (f.start, f.what))
    return matching[0] if matching else None


def _what(flow: Flow) -> str:
    if flow.kind == "download":
        return f"what `{flow.what}` downloads"
    if flow.kind == "decoded":
        return f"what `{flow.what}` decodes"
    if flow.kind == "secret-variable":
        return f"the secret {flow.what}"
    return f"the content of {flow.what}"


# -- exfiltration -----------------------------------------------------------------------------

_SECRET = ("secret", "secret-variable")


def _sent(command: Command) -> Iterator[tuple[Flow, str]]:
    """Secret data a sending program sends, with how."""
    program = command.program
    words = command.words
    if program not in programs.SENDERS:
        return
    reads_stdin = program in programs.STDIN_SENDERS
    if program == "curl":
        positional = _curl_positional(words)
        for word in positional:
            for flow in _ordered(word.flows):
                if flow.kind in _SECRET:
                    yield flow, "in the URL"
        for option, value in _option_values(words, programs.CURL_VALUED):
            data = option in programs.CURL_DATA
            if (
                data
                and value.bare.lstrip("@<").startswith("-")
                and ("@" in value.bare or option in ("-T", "--upload-file"))
            ):
                reads_stdin = True
            if data:
                path = credential_in(value)
                if path is not None:
                    yield Flow("secret", value.start, value.end, path), f"curl {option}"
            for flow in _ordered(value.flows):
                if flow.kind == "secret" or (flow.kind == "secret-variable" and data):
                    yield flow, f"curl {option}"
    elif program in ("wget", "wget2"):
        for option, value in _option_values(words, programs.WGET_VALUED):
            if option in ("--post-file", "--body-file"):
                path = credential_in(value)
                if path is not None:
                    yield Flow("secret", value.start, value.end, path), f"wget {option}"
                if value.bare in ("-", "/dev/stdin"):
                    reads_stdin = True
            if option in ("--post-data", "--body-data", "--header") or option.startswith("--p"):
                for flow in _ordered(value.flows):
                    if flow.kind == "secret" or option != "--header":
                        yield flow, f"wget {option}"
        for word in _operands(words):
            for flow in _ordered(word.flows):
                if flow.kind in _SECRET:
                    yield flow, "in the URL"
    elif program in ("ssh",):
        for word in _after_options(words, programs.SSH_VALUED):
            for flow in _ordered(word.flows):
                if flow.kind in _SECRET:
                    yield flow, "ssh"
    else:
        remote = program in ("scp", "sftp", "rsync") and any(
            _remote_host(w.bare) for w in words[1:]
        )
        valued = programs.SSH_VALUED if program in ("scp", "sftp") else programs.RSYNC_VALUED
        for word in _after_options(words, valued):
            for flow in _ordered(word.flows):
                if flow.kind in _SECRET:
                    yield flow, program
            if remote or program in ("aws", "gsutil", "rclone", "mail", "mailx", "mutt", "swaks"):
                path = credential_in(word)
                if path is not None and not _remote_host(word.bare):
                    yield Flow("secret", word.start, word.end, path), program
    if reads_stdin:
        for flow in _ordered(command.stdin):
            if flow.kind in _SECRET:
                yield flow, f"{program} sending its stdin"
    for redirect in command.redirects:
        if redirect.op == "<" and programs.is_credential_path(redirect.target.bare):
            yield Flow("secret", redirect.target.start, redirect.target.end,
                       redirect.target.bare), f"{program} sending its stdin"  # fmt: skip


def _ordered(flows: frozenset[Flow]) -> list[Flow]:
    """Flows in text order: the same text always names the same one first."""
    return sorted(flows, key=lambda f: (f.start, f.end, f.kind, f.what))


def _exfiltration(command: Command) -> Iterator[Risk]:
    for flow, how in _sent(command):
        source = flow.start if flow.end > flow.start else -1  # a secret variable has no place
        yield Risk("exfiltration", command.start, command.end, f"{how} sends {_what(flow)}",
                   flow.what, source)  # fmt: skip
        return  # one per command


def risks(analysis: Analysis) -> list[Risk]:
    """Every risk the analysed commands carry, each once, in text order."""
    found: dict[tuple[str, int, int], Risk] = {}
    for command in analysis.commands:
        for risk in (*_destructive(command), *_executes(command), *_exfiltration(command)):
            found.setdefault((risk.check, risk.start, risk.end), risk)
    for start, end in analysis.fork_bombs:
        found.setdefault(("destructive", start, end),
                         Risk("destructive", start, end, "a fork bomb"))  # fmt: skip
    return sorted(found.values(), key=lambda r: (r.start, CHECKS.index(r.check), r.end))


# -- destinations --------------------------------------------------------------------------------

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]{0,15}://", re.IGNORECASE)
_REMOTE = re.compile(r"^(?:[^@/:\s]+@)?(\[[0-9a-f:.]+\]|[^@/:\s\[\]]+):(?!//)", re.IGNORECASE)
_DEV_NET = re.compile(r"/dev/(tcp|udp)/([^/\s]+)/(\S*)")
_SOCAT_NET = re.compile(
    r"^(tcp[46]?|tcp-connect|udp[46]?|udp-sendto|udp-connect|sctp[46]?|sctp-connect|openssl"
    r"|openssl-connect|ssl|socks4a?|socks5?|proxy|proxy-connect):(.*)$",
    re.IGNORECASE,
)
_SOCAT_LISTEN = re.compile(r"^(?:tcp|udp|sctp|openssl|ssl)[46]?-(?:listen|l|recv|recvfrom):",
                           re.IGNORECASE)  # fmt: skip
_SOCAT_EXEC = re.compile(r"^(?:exec|system):", re.IGNORECASE)
_HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def _remote_host(value: str) -> str | None:
    """The host of an scp/rsync/git address ``[user@]host:path`` (``host::module`` too)."""
    if _SCHEME.match(value) or value.startswith(("/", "./", "../", "~")):
        return None
    match = _REMOTE.match(value)
    if match is None:
        return None
    host = match.group(1)
    if len(host) == 1 and value[1:2] == ":":
        return None  # C:\path
    return host


def _option_values(words: Sequence[Word], valued: frozenset[str]) -> list[tuple[str, Word]]:
    return options(words, valued)


def _after_options(words: Sequence[Word], valued: frozenset[str]) -> list[Word]:
    """The operands of a command, skipping its options and their values."""
    return split_options(words, valued)[1]


def _curl_positional(words: Sequence[Word]) -> list[Word]:
    return _after_options(words, programs.CURL_VALUED)


def _names_something(value: str) -> bool:
    """An operand that can name a host (a stray ``\\`` or ``-`` cannot)."""
    return any(ch.isalnum() or ch == "$" for ch in value)


def _with_scheme(value: str, scheme: str) -> str:
    return value if _SCHEME.match(value) else f"{scheme}://{value}"


def _command_destinations(command: Command) -> Iterator[Destination]:
    program = command.program
    words = command.words
    start, end = command.start, command.end
    for name, value in command.env:
        if name.lower() in programs.PROXY_VARIABLES and value.text:
            yield Destination(_with_scheme(value.text, "http"), start, end, f"proxy {name}")
    if program == "curl":
        for word in _curl_positional(words):
            if _names_something(word.text):
                yield Destination(_with_scheme(word.text, "http"), start, end, "curl")
        for option, value in _option_values(words, programs.CURL_VALUED):
            if option == "--url":
                yield Destination(_with_scheme(value.text, "http"), start, end, "curl --url")
            elif option in programs.CURL_PROXY:
                yield Destination(_with_scheme(value.text, "http"), start, end, f"curl {option}")
            elif option == "--connect-to":
                parts = value.text.split(":")
                if len(parts) >= 4 and parts[2]:
                    yield Destination(f"http://{parts[2]}", start, end, "curl --connect-to")
            elif option == "--resolve":
                _, _, addresses = value.text.partition(":")
                _, _, addresses = addresses.partition(":")
                for address in addresses.split(","):
                    address = address.strip()
                    if address:
                        host = (
                            address
                            if address.startswith("[") or ":" not in address
                            else (f"[{address}]")
                        )
                        yield Destination(f"http://{host}", start, end, "curl --resolve")
    elif program in ("wget", "wget2", "aria2c", "lwp-request", "lwp-download", "lynx", "w3m",
                     "links"):  # fmt: skip
        for word in _after_options(words, programs.WGET_VALUED):
            if _names_something(word.text):
                yield Destination(_with_scheme(word.text, "http"), start, end, program)
        for option, value in _option_values(words, programs.WGET_VALUED):
            if option in ("-e", "--execute"):
                key, _, setting = value.text.partition("=")
                if key.strip().lower() in programs.PROXY_VARIABLES and setting.strip():
                    yield Destination(_with_scheme(setting.strip(), "http"), start, end,
                                      f"wget -e {key.strip()}")  # fmt: skip
    elif program in ("http", "https", "xh", "xhs"):
        operands = [w for w in _after_options(words, frozenset()) if w.text not in _HTTP_METHODS]
        if operands:
            scheme = "https" if program in ("https", "xhs") else "http"
            yield Destination(_with_scheme(operands[0].text, scheme), start, end, program)
    elif program == "ssh":
        operands = _after_options(words, programs.SSH_VALUED)
        if operands:
            yield Destination(_with_scheme(operands[0].text, "ssh"), start, end, "ssh")
        yield from _ssh_jumps(command)
    elif program in ("scp", "sftp", "rsync"):
        valued = programs.RSYNC_VALUED if program == "rsync" else programs.SSH_VALUED
        operands = _after_options(words, valued)
        for index, word in enumerate(operands):
            remote = _remote_host(word.text)
            if _SCHEME.match(word.text):
                yield Destination(word.text, start, end, program)
            elif remote is not None:
                yield Destination(f"ssh://{remote}", start, end, program)
            elif program == "sftp" and index == 0:
                yield Destination(_with_scheme(word.text, "ssh"), start, end, "sftp")
        yield from _ssh_jumps(command)
    elif program == "git":
        yield from _git(command)
    elif program in ("nc", "ncat", "netcat", "telnet"):
        yield from _netcat(command)
    elif program == "socat":
        yield from _socat(command)
    elif program == "openssl" and any(w.bare == "s_client" for w in words):
        for option, value in _option_values(words, frozenset({"-connect"})):
            yield Destination(f"tcp://{value.text}", start, end, "openssl s_client", raw=True)
    shell = programs.kind_of(program) == "shell"
    for target in (*(r.target for r in command.redirects), *words[1:]):
        for match in _DEV_NET.finditer(target.bare):
            port = match.group(3)
            always = "a shell's input or output on a network socket" if shell else ""
            yield Destination(f"tcp://{match.group(2)}:{port}" if port.isdigit() else
                              f"tcp://{match.group(2)}", start, end,
                              f"/dev/{match.group(1)}", raw=True, always=always)  # fmt: skip
    for word in words[1:]:
        if "://" in word.bare and not word.bare.startswith("-"):
            for url_start, url_end in url_spans(word.bare):
                yield Destination(word.bare[url_start:url_end], start, end, "a URL")


def _ssh_jumps(command: Command) -> Iterator[Destination]:
    for option, value in _option_values(command.words, programs.SSH_VALUED):
        jumps = ""
        if option == "-J":
            jumps = value.text
        elif option == "-o" and value.text.lower().startswith("proxyjump"):
            jumps = value.text.split("=", 1)[-1] if "=" in value.text else value.text[9:]
        for jump in jumps.split(","):
            if jump.strip() and jump.strip().lower() != "none":
                yield Destination(_with_scheme(jump.strip(), "ssh"), command.start, command.end,
                                  "ssh jump host")  # fmt: skip


_GIT_REMOTE_COMMANDS = frozenset({"push", "pull", "fetch", "clone", "ls-remote", "archive"})


def _git(command: Command) -> Iterator[Destination]:
    words = command.words
    start, end = command.start, command.end
    index = 1
    while index < len(words) and words[index].bare.startswith("-"):
        value = words[index].bare
        if value == "-c" and index + 1 < len(words):
            key, _, setting = words[index + 1].text.partition("=")
            if key.lower() in ("http.proxy", "https.proxy") and setting:
                yield Destination(_with_scheme(setting, "http"), start, end, f"git -c {key}")
            index += 1
        elif value in ("-C", "--git-dir", "--work-tree", "--namespace"):
            index += 1
        index += 1
    if index >= len(words):
        return
    sub = words[index].bare
    rest = words[index + 1 :]
    if sub == "remote" and rest and rest[0].bare in ("add", "set-url"):
        rest = rest[1:]
    elif sub == "submodule" and rest and rest[0].bare == "add":
        rest = rest[1:]
    elif sub not in _GIT_REMOTE_COMMANDS:
        return
    for word in rest:
        value = word.text
        if value.startswith("-"):
            continue
        if _SCHEME.match(value) and not value.lower().startswith("file://"):
            yield Destination(value, start, end, f"git {sub}")
        else:
            host = _remote_host(value)
            if host is not None and ("@" in value or "." in host):
                yield Destination(f"ssh://{host}", start, end, f"git {sub}")


def _netcat(command: Command) -> Iterator[Destination]:
    words = command.words
    start, end = command.start, command.end
    listens = _flag(words, "l", "--listen")
    shell = next((o for o, _ in _option_values(words, programs.NC_VALUED) if o in
                  programs.NC_EXEC), "")  # fmt: skip
    operands = _after_options(words, programs.NC_VALUED)
    host = next((w for w in operands if not w.bare.isdigit() and "-" not in w.bare[:1]), None)
    always = ""
    if shell:
        always = f"{command.program} {shell} runs a program on the socket"
    elif listens:
        always = f"{command.program} listens for connections"
    if host is not None and not listens:
        yield Destination(f"tcp://{host.text}", start, end, command.program, raw=True,
                          always=always)  # fmt: skip
    elif always:
        yield Destination("tcp://0.0.0.0", start, end, command.program, raw=True, always=always)


def _socat(command: Command) -> Iterator[Destination]:
    addresses = [w.bare for w in command.words[1:] if not w.bare.startswith("-") or w.bare == "-"]
    shell = any(_SOCAT_EXEC.match(a) for a in addresses)
    for address in addresses:
        if _SOCAT_LISTEN.match(address):
            yield Destination("tcp://0.0.0.0", command.start, command.end, "socat", raw=True,
                              always="socat listens for connections")  # fmt: skip
            continue
        match = _SOCAT_NET.match(address)
        if match is None:
            continue
        target = match.group(2).split(",", 1)[0]
        parts = target.split(":")
        host = (
            parts[-2]
            if match.group(1).lower().startswith(("socks", "proxy")) and len(parts) >= 3
            else parts[0]
        )
        always = "socat runs a program on the socket" if shell else ""
        yield Destination(f"tcp://{host}", command.start, command.end, "socat", raw=True,
                          always=always)  # fmt: skip


# A URL in a command line: scheme, "://", then everything up to a character that ends a
# shell word or a quoted string. A URL inside another's query (?next=https://...) is part
# of the first one: the destination is the first URL's host.
_URL = re.compile(r"(?i)(?<![\w+.-])([a-z][a-z0-9+.-]{0,15})://[^\s'\"<>|;&)`\\]{0,2048}")
NETWORK_SCHEMES = frozenset({"http", "https", "ftp", "ftps", "ws", "wss", "sftp"})


def url_spans(text: str) -> Iterator[tuple[int, int]]:
    """Start and end of each URL of a network scheme (:data:`NETWORK_SCHEMES`, any case)."""
    for match in _URL.finditer(text):
        if match.group(1).lower() in NETWORK_SCHEMES:
            yield match.start(), match.end()


def destinations(analysis: Analysis) -> list[Destination]:
    """Every network destination the analysed commands name, each once, in text order."""
    found: dict[tuple[str, int, int, bool], Destination] = {}
    for command in analysis.commands:
        for destination in _command_destinations(command):
            key = (destination.url, destination.start, destination.end, destination.raw)
            found.setdefault(key, destination)
    for assignment in analysis.assignments:
        if assignment.name.lower() in programs.PROXY_VARIABLES and assignment.value.text:
            value = assignment.value
            found.setdefault(
                (value.text, value.start, value.end, False),
                Destination(_with_scheme(value.text, "http"), value.start, value.end,
                            f"proxy {assignment.name}"),
            )  # fmt: skip
    return sorted(found.values(), key=lambda d: (d.start, d.end, d.url))


@dataclass(frozen=True, slots=True)
class Assessment:
    """A text's analysis with its risks and destinations."""

    analysis: Analysis
    risks: tuple[Risk, ...]
    destinations: tuple[Destination, ...]


def assess(text: str) -> Assessment:
    """:func:`~agbom.analysis.shell.analyse` with :func:`risks` and :func:`destinations`,
    kept for the most recent short texts (an agent repeats its commands)."""
    if len(text) <= MAX_CACHED_CHARS:
        return _assessed(text)
    return _assess(text)


@lru_cache(maxsize=1024)
def _assessed(text: str) -> Assessment:
    return _assess(text)


def _assess(text: str) -> Assessment:
    analysis = analyse(text)
    return Assessment(analysis, tuple(risks(analysis)), tuple(destinations(analysis)))
