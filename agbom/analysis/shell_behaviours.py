"""What a shell script's commands do beyond running downloads and sending secrets
(:mod:`agbom.analysis.shell_risks`), judged on the evaluated words of the parse:

- ``reverse-shell``: a shell whose input or output is a network socket (``bash -i >&
  /dev/tcp/…``), netcat or socat running a program on a socket (``nc -e``, ``EXEC:``), a
  shell session piped into a socket, commands read from a socket run by a shell, an
  interpreter's one-liner that opens a socket and starts a shell;
- ``persistence``: what makes code run again by itself: a crontab installed, a systemd
  unit or launchd agent written (and enabled or loaded), an autostart entry, a key added to
  ``authorized_keys``, global git hooks, Windows Run keys and scheduled tasks, and a line
  that fetches, sends or shadows a command added to a shell's start-up file;
- ``privilege-escalation``: sudoers and account files written, setuid and setgid bits,
  capabilities that grant root, world-writable system files, a uid-0 or sudo-group account,
  the host's root mounted into a container, the agent's permission prompts switched off;
- ``file-tampering``: destruction (:func:`shell_risks` ``destructive``), credential and agent
  folders removed, system files rewritten, shell history and logs wiped, the agent's own
  instructions or other skills rewritten, files across the home folder edited in place;
- ``credential-access``: a credential file, keychain or browser store copied, archived or
  written out (when it is also sent, ``exfiltration`` says so instead);
- ``data-exfiltration``: the user's own files (the home folder, its documents) sent, and a
  DNS look-up of a name built from command output;
- ``cryptominer``: a miner run or fetched, a pool or stratum address, a miner's options;
- ``untrusted-install`` and ``typosquat-package``: what ``pip``/``npm``/... install
  (:mod:`agbom.analysis.packages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextvars import ContextVar

from agbom.analysis import indicators, packages
from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_model import Analysis, Command, Flow, Word
from agbom.analysis.shell_risks import Risk
from agbom.analysis.shell_words import code_option, literal_output

BEHAVIOURS = (
    "obfuscated-code", "reverse-shell", "persistence", "privilege-escalation", "file-tampering",
    "credential-access", "data-exfiltration", "cryptominer", "untrusted-install",
    "typosquat-package",
)  # fmt: skip
_WRITES = (">", ">>", "&>", "&>>", ">|")
_RAW: ContextVar[str | None] = ContextVar("shell_text", default=None)  # the analysed text
_SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})
_SOCKET_CODE = re.compile(
    r"(?i)\bsocket\b|fsockopen|TCPSocket|IO::Socket|stream_socket_client|/dev/tcp/|net\.connect"
    r"|createConnection|Net::TCP"
)
_SHELL_CODE = re.compile(
    r"(?i)\bexec\s*\(|\bsystem\s*\(|\bpopen|proc_open|\bspawn|/bin/(?:ba|z|da)?sh\b|cmd\.exe"
    r"|\bdup2\b|open\s*\(\s*STDIN"
)
_SETID_MODE = re.compile(r"^(?:[ugoa]*[+=][rwxXt]*s[rwxXts]*(?:,.*)?|0*[2467][0-7]{3})$")
_OPEN_MODE = re.compile(r"^(?:0*[0-7]?[0-7][67][67]|a\+w|o\+w|[ugoa]*\+[rwx]*w[rwx]*)$")
_ROOT_CAPS = re.compile(
    r"(?i)cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module"
    r"|chown|fowner)|^=ep$|\ball\b"
)
_ADMIN_GROUPS = frozenset({"sudo", "wheel", "admin", "root", "adm", "administrators"})
_HISTORY = re.compile(r"(?:^|/|~)\.(?:bash|zsh|sh|python|mysql|psql)_history$|\.zhistory$")
_INTERPRETER_SHELLS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php"})


def behaviours(analysis: Analysis) -> list[Risk]:
    """Every behaviour of :data:`BEHAVIOURS` the analysed commands show, each once per
    command, in text order."""
    found: dict[tuple[str, int, int], Risk] = {}
    written = _written_files(analysis)
    token = _RAW.set(analysis.text)
    exfiltrated = any(
        f.kind in ("secret", "secret-variable")
        for c in analysis.commands
        if c.program in programs.SENDERS
        for f in _all_flows(c)
    )
    try:
        for command in analysis.commands:
            for risk in _judge(command, written, exfiltrated):
                found.setdefault((risk.check, risk.start, risk.end), risk)
    finally:
        _RAW.reset(token)
    return sorted(found.values(), key=lambda r: (r.start, BEHAVIOURS.index(r.check), r.end))


def _judge(command: Command, written: dict[str, str], exfiltrated: bool) -> Iterator[Risk]:
    yield from _assembled_name(command)
    yield from _reverse_shell(command)
    yield from _persistence(command, written)
    yield from _privilege(command)
    yield from _tampering(command)
    if not exfiltrated:
        yield from _credential_access(command)
    yield from _data_exfiltration(command)
    yield from _miner(command)
    yield from _installs(command)


def _risk(check: str, command: Command, detail: str, source: int = -1) -> Risk:
    return Risk(check, command.start, command.end, detail, "", source)


def _all_flows(command: Command) -> frozenset[Flow]:
    flows = set(command.stdin)
    for word in command.words:
        flows |= word.flows
    return frozenset(flows)


def _operands(words: tuple[Word, ...]) -> list[Word]:
    return [w for w in words[1:] if not (w.bare.startswith("-") and len(w.bare) > 1)]


def _written_files(analysis: Analysis) -> dict[str, str]:
    """Files the text writes, with what it writes when that is known: redirects of echo,
    printf and here-documents, tee, cp and install targets."""
    out: dict[str, str] = {}
    for command in analysis.commands:
        for path, content in _writes(command):
            if len(out) < 1024:
                out[path] = out.get(path, "") + content
    return out


def _writes(command: Command) -> Iterator[tuple[str, str]]:
    """(path, what is written, "" when unknown) for each file a command writes."""
    content = literal_output(command) or command.stdin_text or ""
    for redirect in command.redirects:
        if redirect.op in _WRITES and redirect.target.known:
            yield redirect.target.bare, content
    program = command.program
    operands = _operands(command.words)
    if program == "tee":
        for word in operands:
            yield word.bare, command.stdin_text or ""
    elif program in ("cp", "mv", "install", "ln", "rsync", "ditto") and len(operands) >= 2:
        yield operands[-1].bare, ""
    elif program == "sed" and any(w.bare.startswith("-i") for w in command.words[1:]):
        for word in operands[1:]:
            yield word.bare, ""
    elif program in ("truncate", "shred") and operands:
        for word in operands:
            yield word.bare, ""


# -- obfuscation ----------------------------------------------------------------------------------

_PIECES = re.compile(r"\$\{?\w+\}?|\\.|'[^']*'|\"[^\"]*\"")
_HIDDEN_PROGRAMS = frozenset(
    {"curl", "wget", "bash", "sh", "zsh", "nc", "ncat", "netcat", "socat", "python", "python3",
     "perl", "ruby", "node", "eval", "base64", "xxd", "openssl", "chmod", "rm", "crontab",
     "sudo", "telnet", "php", "dd", "mkfifo"}
)  # fmt: skip


def _assembled_name(command: Command) -> Iterator[Risk]:
    """A program whose name is assembled from pieces (``$a$b`` for ``curl``, ``c''url``, a
    backslash before each letter): written that way only to hide it from a reader."""
    if not command.words or command.program not in _HIDDEN_PROGRAMS:
        return
    if command.via:
        return  # the name was given by another shell's text: judged there
    word = command.words[0]
    if word.text != word.bare or not word.known:
        return
    raw = _RAW.get()
    if raw is None or word.end > len(raw):
        return
    source = raw[word.start : word.end]
    if source == word.bare or source.startswith(("/", "./")) or len(source) > 200:
        return
    pieces = _PIECES.findall(source)
    if len(pieces) >= 2 or (pieces and any(p.startswith("\\") for p in pieces)):
        yield _risk(
            "obfuscated-code",
            command,
            f"the program name {command.program} is assembled from pieces: {source}",
        )


# -- reverse shells -------------------------------------------------------------------------------


def _reverse_shell(command: Command) -> Iterator[Risk]:
    program = command.program
    words = command.words
    values = [w.bare for w in words[1:]]
    kind = programs.kind_of(program)
    if kind == "shell":
        for redirect in command.redirects:
            if re.match(r"^/dev/(?:tcp|udp)/", redirect.target.bare) and (
                redirect.op in (">&", "&>", "<>", ">", "<") and reads_or_interactive(values)
            ):
                yield _risk(
                    "reverse-shell",
                    command,
                    f"{program} with its input or output on {redirect.target.bare}",
                )
                return
    if program in ("nc", "ncat", "netcat"):
        for index, value in enumerate(values):
            option = value.split("=", 1)[0]
            if option in programs.NC_EXEC or (
                value.startswith("-")
                and not value.startswith("--")
                and re.search(r"[ec]", value)
                and index + 1 < len(values)
                and programs.kind_of(programs.program_name(values[index + 1])) == "shell"
            ):
                listens = (
                    any(v.startswith("-") and "l" in v and not v.startswith("--") for v in values)
                    or "--listen" in values
                )
                what = "a bind shell" if listens else "a reverse shell"
                yield _risk(
                    "reverse-shell",
                    command,
                    f"{program} {value} runs a program on a network socket ({what})",
                )
                return
    if program == "socat":
        runs = [v for v in values if re.match(r"(?i)^(?:exec|system):", v)]
        nets = [v for v in values if re.match(r"(?i)^(?:tcp|udp|ssl|openssl|sctp)", v)]
        if runs and nets:
            yield _risk(
                "reverse-shell",
                command,
                f"socat connects {nets[0][:40]} to the program {runs[0][:40]}",
            )
            return
    if program in _SOCKETS and any(f.kind == "shell" for f in command.stdin):
        yield _risk("reverse-shell", command, f"a shell session piped into {program}")
        return
    if kind == "shell" and reads_or_interactive(values):
        for flow in sorted(command.stdin, key=lambda f: (f.start, f.what)):
            if flow.kind == "download" and flow.what.split(" ", 1)[0] in _SOCKETS:
                yield _risk(
                    "reverse-shell",
                    command,
                    f"{program} runs commands read from `{flow.what[:60]}`",
                    flow.start,
                )
                return
    if kind == "interpreter" or program in _INTERPRETER_SHELLS:
        family = programs.interpreter_family(program)
        code = code_option(words, programs.CODE_OPTIONS.get(family, ()))
        if code is not None and code.known and family not in ("python", "node", "nodejs"):
            if _SOCKET_CODE.search(code.bare) and _SHELL_CODE.search(code.bare):
                yield _risk(
                    "reverse-shell",
                    command,
                    f"{program} code opens a socket and runs a shell on it",
                )


def reads_or_interactive(values: list[str]) -> bool:
    """A shell run interactively or reading commands from its input (not ``-c STRING``
    or a script)."""
    if "-c" in values:
        return False
    if any(
        v == "-i" or (v.startswith("-") and not v.startswith("--") and "i" in v) for v in values
    ):
        return True
    return not [v for v in values if not v.startswith("-")]


# -- persistence ----------------------------------------------------------------------------------


def _persistence(command: Command, written: dict[str, str]) -> Iterator[Risk]:
    program = command.program
    values = [w.bare for w in command.words[1:]]
    if program == "crontab":
        operands = [v for v in values if not v.startswith("-") or v == "-"]
        listing = any(v in ("-l", "-e", "-r", "-v") for v in values) and not operands
        if operands and not listing:
            yield _risk("persistence", command, "crontab installs a scheduled job")
            return
    if (
        program == "systemctl"
        and "enable" in values
        or program == "systemctl"
        and ("start" in values and "--user" in values)
    ):
        units = [v for v in values if not v.startswith("-") and v not in ("enable", "start")]
        for unit in units:
            name = unit if "." in unit else unit + ".service"
            if any(p.endswith("/" + name) and indicators.is_persistence_path(p) for p in written):
                yield _risk(
                    "persistence", command, f"systemctl enables the unit {name} the script wrote"
                )
                return
    if program == "launchctl" and values[:1] and values[0] in ("load", "bootstrap", "submit"):
        yield _risk("persistence", command, f"launchctl {values[0]} starts an agent at login")
        return
    if (
        program == "git"
        and "config" in values
        and any(v.lower() in ("core.hookspath", "init.templatedir") for v in values)
    ):
        if "--global" in values or "--system" in values:
            yield _risk("persistence", command, "git hooks set for every repository")
            return
    if program in ("schtasks", "schtasks.exe") and any(v.lower() == "/create" for v in values):
        yield _risk("persistence", command, "a Windows scheduled task is created")
        return
    if (
        program in ("reg", "reg.exe")
        and values[:1]
        and values[0].lower() == "add"
        and any(re.search(r"(?i)\\(?:Run|RunOnce|Winlogon)\b", v) for v in values)
    ):
        yield _risk("persistence", command, "a Windows Run key is set")
        return
    for path, content in _writes(command):
        if indicators.is_persistence_path(path):
            yield _risk("persistence", command, f"writes {path}, which runs again by itself")
            return
        if indicators.is_startup_file(path) and (
            indicators.risky_startup_line(content) or not content and command.stdin
        ):
            yield _risk(
                "persistence",
                command,
                f"adds a line that fetches, sends or shadows a command to {path}",
            )
            return


# -- privileges -----------------------------------------------------------------------------------


def _privilege(command: Command) -> Iterator[Risk]:
    program = command.program
    words = command.words
    values = [w.bare for w in words[1:]]
    operands = [w.bare for w in _operands(words)]
    for path, content in _writes(command):
        if indicators.is_privileged_path(path):
            yield _risk("privilege-escalation", command, f"writes {path}")
            return
        if indicators.is_agent_file(path) and indicators.AGENT_BYPASS.search(content):
            yield _risk(
                "privilege-escalation",
                command,
                f"writes {path} so that the agent acts without asking",
            )
            return
    if program == "chmod" and len(operands) >= 2:
        mode, targets = operands[0], operands[1:]
        if _SETID_MODE.match(mode):
            yield _risk(
                "privilege-escalation", command, f"chmod {mode} sets the setuid or setgid bit"
            )
            return
        if _OPEN_MODE.match(mode) and any(
            indicators.is_privileged_path(t)
            or indicators.is_system_file(t)
            or t.rstrip("/") in ("/etc", "/usr", "/usr/local/bin", "/bin", "/sbin", "/var")
            for t in targets
        ):
            yield _risk(
                "privilege-escalation",
                command,
                f"chmod {mode} makes {targets[0]} writable by every user",
            )
            return
    if program in ("chown", "chgrp") and len(operands) >= 2:
        owner, targets = operands[0], operands[1:]
        system = [t for t in targets if indicators.is_system_file(t) or t.startswith("/etc")]
        if system and not owner.startswith("root"):
            yield _risk("privilege-escalation", command, f"{program} gives {system[0]} to {owner}")
            return
        if owner.split(":", 1)[0] in ("root", "0") and any(
            t.startswith(("/tmp", "~", "./", "/dev/shm", "/var/tmp")) for t in targets
        ):
            yield _risk(
                "privilege-escalation",
                command,
                f"{program} {owner} of {targets[0]} (a root-owned file where anyone can reach it)",
            )
            return
    if program == "setcap" and operands:
        caps = operands[0]
        target = programs.program_name(operands[-1]) if len(operands) > 1 else ""
        if _ROOT_CAPS.search(caps) or programs.kind_of(target):
            yield _risk("privilege-escalation", command, f"setcap {caps} grants root's powers")
            return
    if program in ("useradd", "usermod", "adduser", "gpasswd"):
        joined = " ".join(values)
        groups: set[str] = set()
        for index, value in enumerate(values):
            if value in ("-G", "-aG", "-Ga", "--groups", "-g", "-a") and index + 1 < len(values):
                groups.update(values[index + 1].split(","))
        if program == "adduser" and len(operands) == 2:
            groups.add(operands[1])
        if (
            re.search(r"(?:^|\s)(?:-u|--uid)\s*0\b", joined)
            or "-o" in values
            or (groups & _ADMIN_GROUPS)
        ):
            yield _risk(
                "privilege-escalation", command, f"{program} makes an account with root's rights"
            )
            return
    if (
        program == "chpasswd"
        and command.stdin_text
        and re.search(r"(?m)^root:", command.stdin_text)
    ):
        yield _risk("privilege-escalation", command, "chpasswd sets root's password")
        return
    if program in ("docker", "podman") and "run" in values:
        mounts = [values[i + 1] for i, v in enumerate(values[:-1]) if v in ("-v", "--volume")]
        mounts += [v.split("=", 1)[1] for v in values if v.startswith("--volume=")]
        if any(m.split(":", 1)[0] == "/" for m in mounts) or (
            "--privileged" in values and "--pid=host" in values
        ):
            yield _risk(
                "privilege-escalation",
                command,
                f"{program} run mounts the host's root into a container",
            )
            return
    if (
        program in ("net", "net.exe")
        and [v.lower() for v in values[:2]] == ["localgroup", "administrators"]
        and "/add" in [v.lower() for v in values]
    ):
        yield _risk("privilege-escalation", command, "adds an account to Administrators")


# -- tampering ------------------------------------------------------------------------------------


def _tampering(command: Command) -> Iterator[Risk]:
    program = command.program
    words = command.words
    values = [w.bare for w in words[1:]]
    operands = [w.bare for w in _operands(words)]
    if program == "history" and "-c" in values or program == "unset" and "HISTFILE" in values:
        yield _risk("file-tampering", command, "clears the shell's history")
        return
    if (
        program in ("rm", "shred", "unlink", "truncate")
        or program == "find"
        and ("-delete" in values)
    ):
        for target in operands:
            if _HISTORY.search(target) or target.rstrip("/*").startswith("/var/log"):
                yield _risk("file-tampering", command, f"{program} wipes {target}")
                return
            if (
                program == "rm"
                and (indicators.is_credential_store(target) or indicators.is_agent_file(target))
                and target.startswith(("~", "/"))
            ):
                yield _risk("file-tampering", command, f"rm removes {target}")
                return
    for path, _content in _writes(command):
        if _HISTORY.search(path) or path.startswith("/var/log/"):
            yield _risk("file-tampering", command, f"overwrites {path}")
            return
        if indicators.is_system_file(path):
            yield _risk("file-tampering", command, f"rewrites the system file {path}")
            return
        if indicators.is_agent_file(path) and program not in ("cp", "mv", "ln"):
            yield _risk(
                "file-tampering", command, f"rewrites {path}, the agent's instructions or settings"
            )
            return
    if program == "chattr" and any(indicators.is_system_file(t) for t in operands[1:]):
        yield _risk("file-tampering", command, "chattr locks or unlocks a system file")
        return
    if program == "find" and operands and operands[0].rstrip("/") in ("~", "", "/home", "/Users"):
        expression = values
        for index, token in enumerate(expression):
            if token in ("-exec", "-execdir") and index + 2 < len(expression):
                runs = programs.program_name(expression[index + 1])
                edits = runs in ("tee", "cp", "mv", "chmod", "chown", "truncate") or (
                    runs == "sed" and any(t.startswith("-i") for t in expression[index + 2 :])
                )
                if edits:
                    yield _risk(
                        "file-tampering",
                        command,
                        f"find edits files across {operands[0] or '/'} with {runs}",
                    )
                    return
    if program in ("wevtutil",) and values[:1] and values[0].lower() in ("cl", "clear-log"):
        yield _risk("file-tampering", command, "clears a Windows event log")


# -- credential access, data sent -----------------------------------------------------------------


def _credential_access(command: Command) -> Iterator[Risk]:
    program = command.program
    flows = sorted(
        (f for f in _all_flows(command) if f.kind == "secret" and f.what != "the environment"),
        key=lambda f: (f.start, f.what),
    )
    copies = program in (
        "cp",
        "tar",
        "zip",
        "7z",
        "ditto",
        "dd",
        "sqlite3",
        "sqlite",
        "security",
    ) or any(r.op in _WRITES for r in command.redirects)
    from agbom.analysis.shell_flows import command_sources

    own = sorted(
        (f for f in command_sources(command) if f.kind == "secret"), key=lambda f: (f.start, f.what)
    )
    if program == "security" and own:
        yield _risk("credential-access", command, f"reads the keychain: {own[0].what[:60]}")
        return
    if copies and (flows or own):
        what = (own or flows)[0].what
        yield _risk(
            "credential-access",
            command,
            f"{program} copies {what} out of its place",
            (own or flows)[0].start,
        )


_DNS = frozenset({"dig", "nslookup", "host", "drill", "ping", "getent", "resolvectl"})


def _data_exfiltration(command: Command) -> Iterator[Risk]:
    program = command.program
    if program in programs.SENDERS:
        for flow in sorted(_all_flows(command), key=lambda f: (f.start, f.what)):
            if flow.kind == "user-data":
                yield _risk(
                    "data-exfiltration",
                    command,
                    f"{program} sends the user's files ({flow.what})",
                    flow.start,
                )
                return
    if program in _DNS:
        for word in _operands(command.words):
            text = word.text
            built = "$(" in text or "`" in text or (not word.known and word.flows)
            if built and re.search(r"\.[a-z0-9-]+\.[a-z]{2,}\.?$", text, re.IGNORECASE):
                yield _risk(
                    "data-exfiltration",
                    command,
                    f"{program} looks up a name built from data: {text[:60]}",
                )
                return


# -- miners, installs -----------------------------------------------------------------------------


def _miner(command: Command) -> Iterator[Risk]:
    program = command.program
    if indicators.is_miner_program(program):
        yield _risk("cryptominer", command, f"runs the miner {program}")
        return
    for word in command.words[1:]:
        if indicators.miner_indicator(word.bare) is not None or (
            program in ("docker", "podman", "kubectl") and re.search(r"(?i)xmrig|miner", word.bare)
        ):
            yield _risk("cryptominer", command, f"{program} with {word.bare[:60]}")
            return


def _installs(command: Command) -> Iterator[Risk]:
    if not command.words or command.program not in _INSTALLERS:
        return
    for found in packages.installs([w.bare for w in command.words]):
        yield _risk(found.problem, command, found.detail)


_INSTALLERS = frozenset(
    {"pip", "pip3", "pipx", "uv", "poetry", "pdm", "rye", "npm", "pnpm", "yarn", "bun", "cnpm",
     "gem", "python", "python3"}
) | frozenset(f"pip3.{n}" for n in range(6, 15)) | frozenset(
    f"python3.{n}" for n in range(6, 15)
)  # fmt: skip
