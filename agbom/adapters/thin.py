"""Thin hook mode: ``agbom hook RUNTIME --server URL [options]``.

A command hook starts one process per tool call, so this path imports nothing but the standard
library: it reads the event from stdin, POSTs it to ``URL/hooks/RUNTIME`` on a running
``agbom serve`` and prints the server's answer, exiting with the code the server chose
(``X-Agbom-Exit-Code``). When the server is down, slow, answers an error or answers something
that is not an agbom hook reply, it answers the way the runtime expects a failure to be
answered, fail-closed unless ``--fail-open`` is given. An event over the size limit the server
applies (:data:`~agbom.adapters.headers.MAX_EVENT_BYTES`) is denied here, in both modes.

Options: ``--server URL`` (required), ``--fail-open`` / ``--fail-closed`` (default closed),
``--timeout SECONDS`` (default 3, the whole exchange: reading the skill a Claude Code Skill
call loads, then the request), ``--agent-id ID``, ``--hook-id ID``, ``--token-file FILE`` (the
bearer token of ``serve --hook-token-file``; also ``$AGBOM_HOOK_TOKEN_FILE``).

The skill folder is read here, as the user, with at most half of ``--timeout``
(agbom/adapters/skill_files.py); a read that does not finish in time, or a folder past the
read bounds, is a deny whatever the failure mode: fail-open is for a server that cannot
answer, and a skill must not buy an allow by being slow to read.
"""

import os
import sys
import time

from agbom.adapters import headers as _headers
from agbom.adapters import host_replies, replies, wire_json
from agbom.adapters import identity as _identity

MAX_STDIN_BYTES = _headers.MAX_EVENT_BYTES
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
# The exit codes each runtime's replies use (see replies.py); any other is not an agbom answer.
EXIT_CODES = {
    replies.OSCOVA: frozenset(
        {
            replies.OSCOVA_EXIT_ALLOW,
            replies.OSCOVA_EXIT_DENY,
            replies.OSCOVA_EXIT_DEFERRAL_UNSUPPORTED,
        }
    ),
    replies.MEERKAT: frozenset({0}),
    replies.CLAUDE_CODE: frozenset({0, 2}),
    **host_replies.EXIT_CODES,
}
DEFAULT_TIMEOUT = 3.0
READ_SHARE = 0.5
"""The part of ``--timeout`` the skill folder's read may take; the rest is the request's."""
TOKEN_FILE_ENV = "AGBOM_HOOK_TOKEN_FILE"
MAX_TOKEN_BYTES = 4096
USAGE = (
    f"usage: agbom hook {{{','.join(replies.RUNTIMES)}}} --server URL [--fail-open|--fail-closed] "
    "[--timeout SECONDS] [--agent-id ID] [--hook-id ID] [--token-file FILE]"
)


class _Usage(Exception):
    pass


class _Deadline(Exception):
    pass


def _parse(args: list[str]) -> dict[str, object]:
    opts: dict[str, object] = {
        "runtime": None,
        "server": None,
        "fail_open": False,
        "timeout": DEFAULT_TIMEOUT,
        "agent_id": None,
        "hook_id": None,
        "token_file": None,
    }
    valued = {
        "--server": "server",
        "--timeout": "timeout",
        "--agent-id": "agent_id",
        "--hook-id": "hook_id",
        "--token-file": "token_file",
    }
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if name in valued:
            if eq:
                value = inline
            else:
                i += 1
                if i >= len(args):
                    raise _Usage(f"option {name} needs a value")
                value = args[i]
            opts[valued[name]] = value
        elif arg == "--fail-open":
            opts["fail_open"] = True
        elif arg == "--fail-closed":
            opts["fail_open"] = False
        elif arg in ("-h", "--help"):
            raise _Usage("")
        elif arg.startswith("-"):
            raise _Usage(f"no such option in thin mode: {arg} (the server has its own store)")
        elif opts["runtime"] is None:
            opts["runtime"] = arg
        else:
            raise _Usage(f"unexpected argument: {arg}")
        i += 1
    if opts["runtime"] not in replies.RUNTIMES:
        raise _Usage(f"unknown runtime {opts['runtime']!r} (known: {', '.join(replies.RUNTIMES)})")
    if not opts["server"]:
        raise _Usage("--server URL is required")
    opts["address"] = _split_server(str(opts["server"]))
    try:
        timeout = float(opts["timeout"])  # type: ignore[arg-type]
    except ValueError:
        raise _Usage(f"--timeout: not a number: {opts['timeout']!r}") from None
    if not 0 < timeout <= 600:
        raise _Usage("--timeout must be between 0 and 600 seconds")
    opts["timeout"] = timeout
    if opts["token_file"] is None and os.environ.get(TOKEN_FILE_ENV):
        opts["token_file"] = os.environ[TOKEN_FILE_ENV]
    return opts


def _token(path: str) -> str:
    """The bearer token in ``path``: a private regular file (agbom/_private_files.py), one
    line of at least 16 characters."""
    from agbom._private_files import read_private_file

    data = read_private_file(path, "hook token file", MAX_TOKEN_BYTES, _Usage)
    try:
        token = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise _Usage(f"hook token file {path} is not UTF-8 text") from None
    if len(token) < 16 or any(ord(c) < 33 or ord(c) == 127 for c in token):
        raise _Usage(
            f"hook token file {path}: the token is shorter than 16 characters or "
            "holds spaces or control characters"
        )
    return token


class _BadResponse(Exception):
    pass


_Answer = tuple[int, bytes, dict[str, str]]


MAX_URL = 2048
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-_")
_PATH_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/%"
)
"""What a URL's path may hold (RFC 3986 ``pchar`` and ``/``): no space, control character,
query or fragment, so that nothing but a path reaches the request line."""


_Server = tuple[str, str, int, str]
"""``(scheme, host, port, path)`` of ``--server``: the host in lower case, without the
brackets of an IPv6 address; the path without its trailing ``/``."""


def _split_server(url: str) -> _Server:
    """``--server``: ``http[s]://HOST[:PORT][/PATH]`` and nothing else (no user, query or
    fragment), at most :data:`MAX_URL` characters; a usage error otherwise.

    By hand rather than with :mod:`urllib.parse`, which costs the hook about 2.5 ms on every
    event and accepts more than a server address needs (it drops tabs and newlines, and a
    user part, a query or a fragment, without a word).
    """
    bad = _Usage(
        f"--server must be an http(s) URL: http[s]://HOST[:PORT][/PATH], got {url[:200]!r}"
    )
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()
    if len(url) > MAX_URL or not sep or scheme not in ("http", "https"):
        raise bad
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    if not set(path) <= _PATH_CHARS:
        raise bad
    if authority.startswith("["):
        host, bracket, tail = authority[1:].partition("]")
        if not bracket or not _is_ipv6(host):
            raise bad
    else:
        host, colon, port_text = authority.partition(":")
        tail = colon + port_text
        if not set(host.lower()) <= _HOST_CHARS:  # no user part, no name needing IDNA
            raise bad
    port = 443 if scheme == "https" else 80
    if tail:
        digits = tail[1:]
        if tail[0] != ":" or not (digits == "" or digits.isascii() and digits.isdigit()):
            raise bad
        if digits:
            port = int(digits) if len(digits) <= 5 else 0
            if not 0 < port < 65536:
                raise _Usage(f"--server has a bad port: {url[:200]!r}")
    if not host:
        raise bad
    return scheme, host.lower(), port, path.rstrip("/")


def _is_ipv6(text: str) -> bool:
    import _socket

    try:
        _socket.inet_pton(_socket.AF_INET6, text)
    except (OSError, ValueError):
        return False
    return True


def _post(
    server: _Server, runtime: str, body: bytes, head: dict[str, str], timeout: float
) -> _Answer:
    """POST the event; returns ``(status, body, header fields)`` (names in lower case).

    A minimal HTTP/1.1 exchange on a socket (one request, ``Connection: close``, read to EOF)
    rather than :mod:`http.client`: importing that pulls in :mod:`email` and :mod:`ssl` and
    alone costs about as much as starting the interpreter, on every tool call.
    """
    scheme, host, port, prefix = server
    path = f"{prefix}/hooks/{runtime}"
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {authority}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        "User-Agent: agbom-hook",
    ]
    lines += [f"{k}: {v}" for k, v in head.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    # The host name as bytes (it is ASCII): getaddrinfo then needs no IDNA codec, an import.
    address = host.encode("ascii")
    if scheme == "https":
        import socket
        import ssl

        plain = socket.create_connection((address, port), timeout=timeout)  # type: ignore[arg-type]
        sock: _Connection = ssl.create_default_context().wrap_socket(plain, server_hostname=host)
    else:
        sock = _connect(address, port, timeout)
    try:
        sock.sendall(request)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise _BadResponse("answer larger than the limit")
    finally:
        sock.close()
    return _parse_response(b"".join(chunks))


# Not typing.TYPE_CHECKING: importing typing costs a few ms per event (mypy honours the name).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class _Connection(Protocol):
        def sendall(self, data: bytes, /) -> None: ...
        def recv(self, size: int, /) -> bytes: ...
        def close(self) -> None: ...


def _connect(address: str | bytes, port: int, timeout: float) -> "_Connection":
    """A TCP connection to the first address of ``address`` that accepts, like
    :func:`socket.create_connection`, on the C module: :mod:`socket` imports :mod:`selectors`,
    :mod:`enum` tables and :mod:`array`, about 2.5 ms on every event for nothing used here.
    """
    import _socket

    last: OSError = OSError(f"no address for {address!r}")
    for family, kind, proto, _name, sockaddr in _socket.getaddrinfo(
        address, port, 0, _socket.SOCK_STREAM
    ):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            last = exc
            continue
        return sock
    raise last


def _parse_response(data: bytes) -> _Answer:
    head, sep, payload = data.partition(b"\r\n\r\n")
    if not sep:
        raise _BadResponse("incomplete HTTP answer")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    proto, _, rest = status_line.partition(" ")
    if not proto.startswith("HTTP/1.") or not rest[:3].isdigit():
        raise _BadResponse("not an HTTP/1.x answer")
    fields: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if "chunked" in fields.get("transfer-encoding", "").lower():
        payload = _dechunk(payload)
    elif "content-length" in fields:
        length = int(fields["content-length"]) if fields["content-length"].isdigit() else -1
        if length < 0 or len(payload) < length:
            raise _BadResponse("truncated HTTP answer")
        payload = payload[:length]
    return int(rest[:3]), payload, fields


def _not_agbom(runtime: str, fields: dict[str, str], payload: bytes) -> str | None:
    """Why an HTTP 200 answer is not agbom's reply for ``runtime`` (None when it is).

    Only an answer of the server's ``/hooks`` endpoint is a decision; anything else that says
    200 (a proxy page, another service on the port, a server answering ``{}``) is a failure.
    """
    if fields.get(_headers.RUNTIME_HEADER) != runtime:
        return f"no {_headers.RUNTIME_HEADER}: {runtime} header"
    code = fields.get(_headers.EXIT_CODE_HEADER, "")
    if not (code.isdigit() and int(code) in EXIT_CODES[runtime]):
        return f"no valid {_headers.EXIT_CODE_HEADER} header"
    if fields.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return "not JSON"
    if not payload.strip():
        # Claude Code's blocking failure is an empty body with exit code 2; several hosts
        # read an empty stdout as "no objection" (Codex requires it) or block on exit 2 alone.
        if runtime == replies.CLAUDE_CODE and code == "2":
            return None
        return None if runtime in host_replies.HOSTS else "empty body"
    try:
        doc = wire_json.loads(payload)
    except (ValueError, RecursionError):
        return "body is not JSON"
    if not isinstance(doc, dict):
        return "body is not a JSON object"
    if runtime == replies.OSCOVA and doc.get("decision") not in ("allow", "deny"):
        return "no Oscova decision in the body"
    if runtime == replies.MEERKAT and doc and not isinstance(doc.get("decision"), dict):
        return "no Meerkat decision in the body"
    return host_replies.answer_problem(runtime, doc)


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, sep, data = data.partition(b"\r\n")
        if not sep:
            raise _BadResponse("truncated chunked answer")
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError:
            raise _BadResponse("bad chunk size") from None
        if size == 0:
            return bytes(out)
        if len(data) < size + 2:
            raise _BadResponse("truncated chunked answer")
        out += data[:size]
        data = data[size + 2 :]


def main(args: list[str]) -> int:
    """Run thin mode on ``args`` (everything after ``hook``); returns the process exit code."""
    try:
        opts = _parse(args)
    except _Usage as exc:
        if str(exc):
            sys.stderr.write(f"agbom: error: {exc}\n")
        sys.stderr.write(USAGE + "\n")
        return 2
    runtime = str(opts["runtime"])
    fail_open = bool(opts["fail_open"])
    timeout = float(opts["timeout"])  # type: ignore[arg-type]
    raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)

    def fail(reason: str, code: str, *, open_on_failure: bool = fail_open) -> int:
        body, exit_code = replies.failure(
            runtime,
            reason,
            fail_open=open_on_failure,
            event=replies.event_name(runtime, raw[:MAX_STDIN_BYTES]),
            code=code,
            hook_id=str(opts["hook_id"] or replies.DEFAULT_HOOK_ID),
        )
        mode = "fail-open" if open_on_failure else "fail-closed"
        sys.stderr.write(f"agbom: {runtime} hook: {reason} ({mode})\n")
        _emit(body)
        return exit_code

    if len(raw) > MAX_STDIN_BYTES:
        # The server would refuse it: denied here, never sent, so that it cannot end up as a
        # transport failure that --fail-open allows.
        return fail(_headers.too_large_reason(), _headers.TOO_LARGE_CODE, open_on_failure=False)
    env = dict(os.environ)
    if opts["agent_id"]:
        env["AGBOM_AGENT_ID"] = str(opts["agent_id"])
    if opts["hook_id"]:
        env["AGBOM_HOOK_ID"] = str(opts["hook_id"])
    head = _headers.headers_from_env(env)
    head.update(_identity.identity_headers(_identity.local_identity()))
    head[_headers.FAIL_OPEN_HEADER] = "true" if fail_open else "false"
    try:
        if opts["token_file"]:
            head["Authorization"] = f"Bearer {_token(str(opts['token_file']))}"
    except _Usage as exc:
        sys.stderr.write(f"agbom: error: {exc}\n")
        return 2

    # One deadline for the skill's read and for connect, send and receive: a folder that is
    # slow to read, or a server that accepts and then stalls, must not hold the runtime past
    # --timeout (socket timeouts alone apply per operation).
    # The C module: signal.py wraps it in enum tables, half a millisecond on every event.
    import _signal as signal  # type: ignore[import-not-found,unused-ignore]

    def _expired(signum: int, frame: object) -> None:
        raise _Deadline

    started = time.monotonic()
    stage = "read"
    has_alarm = hasattr(signal, "setitimer")
    if has_alarm:
        previous = signal.signal(signal.SIGALRM, _expired)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            if runtime == replies.CLAUDE_CODE:
                raw = _with_local_skill(raw, started + timeout * READ_SHARE)
            elif runtime in host_replies.SKILL_HOSTS:
                raw = _with_host_skill(runtime, raw, started + timeout * READ_SHARE)
            stage = "request"
            left = max(timeout - (time.monotonic() - started), 0.001)
            status, body, fields = _post(opts["address"], runtime, raw, head, left)  # type: ignore[arg-type]
        finally:
            # Cancelled before any failure reply is written, so it cannot interrupt that.
            if has_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    except _Usage as exc:
        sys.stderr.write(f"agbom: error: {exc}\n")
        return 2
    except (_Deadline, TimeoutError):
        if stage == "read":
            # The skill's own folder held the hook up: a deny in both failure modes.
            reason = f"reading the skill's folder took longer than --timeout {timeout:g} s"
            return fail(reason, "skill_unreadable", open_on_failure=False)
        return fail(f"no answer from {opts['server']} within {timeout:g} s", "timeout")
    except OSError as exc:
        if stage == "read":  # never the server's fault: no fail-open for it
            reason = f"cannot read the skill's folder: {exc.strerror or exc}"
            return fail(reason, "skill_unreadable", open_on_failure=False)
        return fail(
            f"server {opts['server']} unreachable: {exc.strerror or exc}; is 'agbom serve' "
            "running there? (or drop --server to decide in this process)",
            "server_down",
        )
    except _BadResponse as exc:
        return fail(f"bad answer from {opts['server']}: {exc}", "server_error")
    if status == 413:
        # A server (or a proxy before it) with a lower limit: still the event's fault, a deny.
        reason = f"{opts['server']} refused the event as too large (HTTP 413)"
        return fail(reason, _headers.TOO_LARGE_CODE, open_on_failure=False)
    if status != 200:
        return fail(f"server answered HTTP {status}", "server_error")
    problem = _not_agbom(runtime, fields, body)
    if problem is not None:
        return fail(f"not an agbom hook answer from {opts['server']}: {problem}", "server_error")
    diagnostic = fields.get("x-agbom-diagnostic", "")
    if diagnostic:
        sys.stderr.write(diagnostic.replace("\n", " ") + "\n")
    _emit(body)
    return int(fields[_headers.EXIT_CODE_HEADER])


def _with_local_skill(raw: bytes, deadline: float) -> bytes:
    """The event, with what it names read here: the skill a Skill call, a typed ``/name`` or
    a ``ConfigChange`` names, the session's inventory at ``SessionStart``
    (:mod:`agbom.adapters.claude_inventory`, :mod:`agbom.adapters.skill_files`).

    The server runs elsewhere or as another user: its disk and its HOME are not where the
    user's skills are, and it reads no folder a client names.
    """
    if not replies.claude_needs_local_read(raw):
        return raw
    from agbom.adapters import claude_inventory, skill_files

    limits = skill_files.ReadLimits(deadline=deadline)
    return claude_inventory.enrich(
        raw, home=os.environ.get("HOME"), environ=os.environ, limits=limits, limit=MAX_STDIN_BYTES
    )


def _with_host_skill(runtime: str, raw: bytes, deadline: float) -> bytes:
    """The event of a host with a skill gate (Gemini CLI, opencode), with the skill it loads
    read here, as for Claude Code (agbom/adapters/host_skills.py)."""
    if host_replies.SKILL_MARKERS[runtime] not in raw:
        return raw
    from agbom.adapters import host_skills, skill_files

    limits = skill_files.ReadLimits(deadline=deadline)
    home = os.environ.get("HOME")
    return host_skills.with_local_skill(
        runtime, raw, home=home, limits=limits, limit=MAX_STDIN_BYTES
    )


def _emit(body: bytes) -> None:
    if body:
        out = sys.stdout.buffer
        out.write(body if body.endswith(b"\n") else body + b"\n")
        out.flush()
