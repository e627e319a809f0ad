"""What the shell analysis knows about programs: which are shells and interpreters, which
wrap another command (and how to find it in their arguments), which fetch, decode, read or
send data, and which paths hold credentials.

Facts about each program's command line (which options take a value) are from the
programs' own manuals (GNU coreutils, sudo, curl, wget, OpenSSH, rsync, netcat). An option
the table does not know is taken to take no value: the word after it is then read as an
operand, and so judged, rather than skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# -- programs that run code ---------------------------------------------------------------------

SHELLS = frozenset(
    {
        "sh", "bash", "rbash", "dash", "ash", "hush", "ksh", "ksh93", "mksh", "pdksh", "oksh",
        "loksh", "lksh", "zsh", "yash", "posh", "fish", "csh", "tcsh", "bsh", "jsh", "elvish",
        "xonsh", "nu", "pwsh", "powershell",
    }
)  # fmt: skip
# A shell's name may carry a version (bash5.2) or .exe; interpreters usually do (python3.12).
_VERSIONED = re.compile(r"^([a-z]+?)[0-9][0-9.]*$")
INTERPRETERS = frozenset(
    {"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit",
     "tclsh", "wish", "rscript", "osascript", "jshell", "groovy", "ts-node", "tsx"}
)  # fmt: skip
# Options after which a shell or interpreter runs the next word as its program text.
CODE_OPTIONS = {
    "shell": ("-c", "--command", "-command", "-encodedcommand"),
    "python": ("-c",),
    "pypy": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "luajit": ("-e",),
    "rscript": ("-e",),
    "osascript": ("-e",),
}
# Options of an interpreter that run something other than stdin or a script operand (a
# module, a checked file) or only print: ``python -m json.tool`` reads data, not code.
NOT_A_PROGRAM = frozenset({"-m", "-v", "--version", "-h", "--help", "-n", "--check", "-V"})
# Options whose value is not the script: skip it when looking for the script operand.
VALUED_INTERPRETER_OPTIONS = frozenset({"-W", "-X", "-I", "-r", "-O", "-o", "--rcfile",
                                        "--init-file", "-C", "-D", "-x"})  # fmt: skip


def program_name(word: str) -> str:
    """A command word as the program it runs: the last path part, lower case (a case-folding
    file system finds ``RM`` as ``rm``), without ``.exe``."""
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return name.removesuffix(".exe")


def kind_of(name: str) -> str:
    """``shell``, ``interpreter`` or ``""`` for a :func:`program_name`; versioned names
    (``python3.12``, ``bash5``) count as the program they version."""
    if name in SHELLS:
        return "shell"
    if name in INTERPRETERS:
        return "interpreter"
    versioned = _VERSIONED.match(name)
    if versioned is not None:
        return kind_of(versioned.group(1)) if versioned.group(1) != name else ""
    return ""


def interpreter_family(name: str) -> str:
    versioned = _VERSIONED.match(name)
    return versioned.group(1) if versioned is not None else name


# -- wrappers: programs that run the command in their arguments --------------------------------


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper's own words end and the wrapped command's begin."""

    valued: frozenset[str] = frozenset()  # options followed by a value
    operands: int = 0  # words of its own after the options (timeout's duration)
    assignments: bool = False  # NAME=value words before the command (env, sudo)
    command_options: frozenset[str] = frozenset()  # options whose value is a shell string
    no_command: frozenset[str] = frozenset()  # options under which nothing is run (command -v)
    shell_options: frozenset[str] = frozenset()  # options that run a login or interactive shell


def _w(*valued: str, **kw: object) -> Wrapper:
    fields = {k: frozenset(v) if isinstance(v, (tuple, list)) else v for k, v in kw.items()}
    return Wrapper(valued=frozenset(valued), **fields)  # type: ignore[arg-type]


WRAPPERS: dict[str, Wrapper] = {
    "env": _w("-u", "--unset", "-C", "--chdir", "-P", assignments=True,
              command_options=("-S", "--split-string")),
    "command": _w(no_command=("-v", "-V")),
    "builtin": _w(),
    "exec": _w("-a"),
    "nohup": _w(),
    "setsid": _w(),
    "time": _w("-f", "--format", "-o", "--output"),
    "nice": _w("-n", "--adjustment"),
    "ionice": _w("-c", "-n", "-p", "-P", "-u", "--class", "--classdata"),
    "stdbuf": _w("-i", "-o", "-e", "--input", "--output", "--error"),
    "timeout": _w("-k", "--kill-after", "-s", "--signal", operands=1),
    "chroot": _w("--userspec", "--groups", operands=1),
    "chrt": _w(operands=1),
    "taskset": _w(operands=1),
    "unbuffer": _w(),
    "caffeinate": _w("-t", "-w"),
    "nsenter": _w("-t", "--target", "-S", "-G"),
    "unshare": _w(),
    "firejail": _w(),
    "proxychains": _w("-f"),
    "proxychains4": _w("-f"),
    "torsocks": _w("-u", "-p", "-a", "-P"),
    "strace": _w("-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-b", "-I", "-S", "-X"),
    "ltrace": _w("-o", "-e", "-p", "-s", "-u", "-n", "-a"),
    "sudo": _w("-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C",
               "--close-from", "-D", "--chdir", "-r", "--role", "-t", "--type", "-T",
               "--command-timeout", "-U", "--other-user", assignments=True,
               no_command=("-l", "--list", "-v", "--validate", "-k", "-K", "-e", "--edit"),
               shell_options=("-s", "--shell", "-i", "--login")),
    "doas": _w("-u", "-C", shell_options=("-s",)),
    "su": _w("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
             command_options=("-c", "--command"), operands=1, shell_options=("-",)),
    "runuser": _w("-u", "--user", "-s", "--shell", "-g", "-G", "-w",
                  command_options=("-c", "--command")),
    "flock": _w("-w", "--timeout", "-E", "--conflict-exit-code", operands=1,
                command_options=("-c", "--command")),
    "xargs": _w("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines",
                "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars",
                "--process-slot-var"),
    "busybox": _w(),
    "toybox": _w(),
    "watch": _w("-n", "--interval", "-d", "--differences", "-q", "--equexit"),
}  # fmt: skip
# Wrappers that hand the rest of their words to a shell as one string (``watch CMD...``).
JOINS_AS_SHELL = frozenset({"watch"})

# -- data: fetched, decoded, credentials --------------------------------------------------------

FETCHERS = frozenset(
    {"curl", "wget", "wget2", "fetch", "aria2c", "http", "https", "xh", "xhs", "lwp-request",
     "lwp-download", "get", "lynx", "links", "w3m", "ftp", "tftp", "nc", "ncat", "netcat",
     "socat", "telnet", "openssl", "ssh", "iwr", "irm", "invoke-webrequest",
     "invoke-restmethod"}
)  # fmt: skip
# Decoders: (program, options any one of which makes it decode). Empty: always decodes.
DECODERS: dict[str, tuple[str, ...]] = {
    "base64": ("-d", "--decode", "-D"),
    "base32": ("-d", "--decode"),
    "basenc": ("-d", "--decode"),
    "xxd": ("-r", "-revert"),
    "openssl": ("-d", "-base64", "-a"),
    "uudecode": (),
    "gpg": ("-d", "--decrypt"),
}
# Programs that take a credential file's name without reading its content out: listing it,
# changing its mode, using the key to log in.
NAMES_ONLY = frozenset(
    {"ls", "stat", "test", "[", "[[", "chmod", "chown", "chgrp", "mkdir", "touch", "rm", "rmdir",
     "shred", "ssh-keygen", "ssh-add", "file", "realpath", "readlink", "dirname", "basename",
     "du", "find", "echo", "printf", "cd", "pushd", "which", "type", "ln", "mktemp", "code",
     "vim", "vi", "nano", "emacs", "less", "git"}
)  # fmt: skip
_CREDENTIAL = re.compile(
    r"(?:^|/|~)\.ssh(?:/(?:id_[a-z0-9_]+|identity|authorized_keys))?/?$"
    r"|\.ssh/\*"
    r"|(?:^|/|~)\.aws(?:/(?:credentials|config))?/?$"
    r"|(?:^|/|~)\.config/gh(?:/hosts\.ya?ml)?/?$"
    r"|(?:^|/|~)\.config/gcloud(?:/.*)?$|(?:^|/|~)\.azure(?:/.*)?$"
    r"|(?:^|/|~)\.kube/config$|(?:^|/|~)\.docker/config\.json$"
    r"|(?:^|/|~)\.(?:netrc|git-credentials|pypirc|npmrc|yarnrc|pgpass|my\.cnf)$"
    r"|(?:^|/|~)\.gnupg(?:/.*)?$|(?:^|/|~)\.password-store(?:/.*)?$"
    r"|(?:^|/|~)\.vault-token$|(?:^|/|~)\.terraform\.d/credentials\.tfrc\.json$"
    r"|^/etc/(?:shadow|gshadow|sudoers)$|^/proc/(?:self|\d+|\*)/environ$"
    r"|(?:^|/)\.env(?:\.(?!example$|sample$|template$|dist$|defaults?$)[a-z]+)?$",
    re.IGNORECASE,
)
_SECRET_NAME = re.compile(
    r"(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH)$"
    r"|^(?:AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GH_TOKEN|GITHUB_TOKEN|NPM_TOKEN)$",
    re.IGNORECASE,
)


def is_credential_path(path: str) -> bool:
    """A path that holds a credential: ssh keys, cloud and registry credentials, token files
    of CLIs, ``.env`` files, the shadow file, a process environment. ``~``, ``$HOME`` or an
    absolute home both count as the home folder."""
    if not path or len(path) > 4096:
        return False
    return _CREDENTIAL.search(path.rstrip("/") or path) is not None


def is_secret_name(name: str) -> bool:
    """An environment variable whose name says it holds a secret (``*_TOKEN``, ``*_KEY``)."""
    return bool(name) and _SECRET_NAME.search(name) is not None


# -- sending data ----------------------------------------------------------------------------------

SENDERS = frozenset(
    {"curl", "wget", "wget2", "http", "https", "xh", "xhs", "nc", "ncat", "netcat", "socat",
     "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "tftp", "mail", "mailx", "sendmail",
     "mutt", "swaks", "openssl", "aws", "gsutil", "rclone", "dig", "nslookup", "host", "ping",
     "lwp-request", "aria2c"}
)  # fmt: skip
# Senders that send what they read on stdin.
STDIN_SENDERS = frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "ssh", "mail", "mailx", "sendmail", "mutt",
     "openssl", "http", "https", "xh", "xhs", "ftp", "lwp-request"}
)  # fmt: skip
RAW_SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet"})

# curl's options that take a value (curl's manual), and how the value is used.
CURL_VALUED = frozenset(
    {"-A", "--user-agent", "-b", "--cookie", "-c", "--cookie-jar", "-C", "--continue-at",
     "-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode",
     "--json", "-D", "--dump-header", "-e", "--referer", "-E", "--cert", "--cacert",
     "--capath", "--key", "--pass", "-F", "--form", "--form-string", "-H", "--header",
     "--proxy-header", "-K", "--config", "-m", "--max-time", "--connect-timeout",
     "--retry", "--retry-delay", "--retry-max-time", "-o", "--output", "--output-dir",
     "-r", "--range", "-T", "--upload-file", "-u", "--user", "-U", "--proxy-user", "-w",
     "--write-out", "-x", "--proxy", "--preproxy", "-X", "--request", "-y",
     "--speed-time", "-Y", "--speed-limit", "-z", "--time-cond", "--connect-to",
     "--resolve", "--url", "--doh-url", "--socks4", "--socks4a", "--socks5",
     "--socks5-hostname", "--proxy1.0", "--interface", "--local-port", "--limit-rate",
     "--max-filesize", "--max-redirs", "--oauth2-bearer", "--aws-sigv4", "--ciphers",
     "--dns-servers", "--dns-interface", "-Q", "--quote", "-P", "--ftp-port", "--mail-from",
     "--mail-rcpt", "--mail-auth", "--stderr", "--trace", "--trace-ascii", "--variable",
     "--expand-url", "--expand-data", "--url-query", "--hostpubmd5", "--hostpubsha256",
     "--keepalive-time", "-t", "--telnet-option", "--unix-socket", "--abstract-unix-socket",
     "--cert-type", "--key-type", "--engine", "--pinnedpubkey", "--crlfile", "--netrc-file",
     "--parallel-max", "--rate", "--etag-save", "--etag-compare", "--happy-eyeballs-timeout-ms",
     "--create-file-mode", "--noproxy", "--proto", "--proto-redir", "--proto-default",
     "--request-target", "--sasl-authzid", "--service-name", "--tls-max", "--tlsuser",
     "--tlspassword", "--login-options", "--delegation", "--krb", "--ftp-method",
     "--ftp-account", "--ftp-alternative-to-user", "--ftp-ssl-ccc-mode", "--retry-all-errors"}
)  # fmt: skip
# curl options whose value is data sent to the server (@file reads a file, @- stdin).
CURL_DATA = frozenset(
    {"-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode",
     "--json", "-F", "--form", "--form-string", "--url-query", "-T", "--upload-file"}
)  # fmt: skip
CURL_PROXY = frozenset(
    {"-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname",
     "--proxy1.0", "--doh-url"}
)  # fmt: skip
WGET_VALUED = frozenset(
    {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-e",
     "--execute", "-P", "--directory-prefix", "-U", "--user-agent", "-t", "--tries", "-T",
     "--timeout", "-w", "--wait", "-i", "--input-file", "-B", "--base", "--header",
     "--post-data", "--post-file", "--body-data", "--body-file", "--method", "-Q", "--quota",
     "--user", "--password", "--http-user", "--http-password", "--referer", "-l", "--level",
     "-A", "--accept", "-R", "--reject", "-D", "--domains", "--bind-address", "-N"}
)  # fmt: skip
# Environment variables that send a program's traffic through another host.
PROXY_VARIABLES = frozenset(
    {"all_proxy", "http_proxy", "https_proxy", "ftp_proxy", "socks_proxy", "socks5_proxy",
     "rsync_proxy", "git_proxy_command", "grpc_proxy"}
)  # fmt: skip
SSH_VALUED = frozenset(
    {"-b", "-B", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
     "-p", "-P", "-Q", "-R", "-S", "-W", "-w", "-X"}
)  # fmt: skip
RSYNC_VALUED = frozenset(
    {"-e", "--rsh", "--rsync-path", "-f", "--filter", "--exclude", "--include",
     "--exclude-from", "--include-from", "--files-from", "-B", "--block-size", "-T",
     "--temp-dir", "--compare-dest", "--copy-dest", "--link-dest", "--port", "--password-file",
     "--log-file", "--chmod", "--timeout", "--bwlimit", "-M", "--remote-option", "--info",
     "--debug", "--max-size", "--min-size", "--partial-dir", "--backup-dir", "--suffix"}
)  # fmt: skip
NC_VALUED = frozenset(
    {"-c", "-e", "-g", "-G", "-i", "-I", "-m", "-O", "-p", "-q", "-s", "-T", "-V", "-w", "-W",
     "-x", "-X", "--exec", "--sh-exec", "--lua-exec", "--proxy", "--proxy-type",
     "--proxy-auth", "--source-port", "--source", "--wait", "--idle-timeout", "--allow",
     "--deny", "--max-conns", "-o", "--output", "--hex-dump", "--append-output"}
)  # fmt: skip
NC_EXEC = frozenset({"-e", "-c", "--exec", "--sh-exec", "--lua-exec"})
