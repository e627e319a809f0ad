"""Thin hook mode: ``agbom hook RUNTIME --server URL [options]``.

A command hook starts one process per tool call, so this path imports nothing but the standard
library: it reads the event from stdin, POSTs it to ``URL/hooks/RUNTIME`` on a running
``agbom serve`` and prints the server's answer, exiting with the code the server chose
(``X-Agbom-Exit-Code``). When the server is down, slow or answers an error, it answers the way
the runtime expects a failure to be answered, fail-closed unless ``--fail-open`` is given.

Options: ``--server URL`` (required), ``--fail-open`` / ``--fail-closed`` (default closed),
``--timeout SECONDS`` (default 3, the whole exchange), ``--agent-id ID``, ``--hook-id ID``.
"""

from __future__ import annotations

import os
import sys

from agbom.adapters import headers as _headers
from agbom.adapters import replies

MAX_STDIN_BYTES = 8 * 1024 * 1024
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
DEFAULT_TIMEOUT = 3.0
USAGE = (
    "usage: agbom hook {oscova,meerkat,claude-code} --server URL [--fail-open|--fail-closed] "
    "[--timeout SECONDS] [--agent-id ID] [--hook-id ID]"
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
    }
    valued = {
        "--server": "server",
        "--timeout": "timeout",
        "--agent-id": "agent_id",
        "--hook-id": "hook_id",
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
    try:
        timeout = float(opts["timeout"])  # type: ignore[arg-type]
    except ValueError:
        raise _Usage(f"--timeout: not a number: {opts['timeout']!r}") from None
    if not 0 < timeout <= 600:
        raise _Usage("--timeout must be between 0 and 600 seconds")
    opts["timeout"] = timeout
    return opts


def _post(url: str, runtime: str, body: bytes, head: dict[str, str], timeout: float) -> tuple:
    """POST the event; returns ``(status, body, exit_code, diagnostic)``."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _Usage(f"--server must be an http(s) URL, got {url!r}")
    import http.client

    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=timeout)
    path = f"{parts.path.rstrip('/')}/hooks/{runtime}"
    head = {**head, "Content-Type": "application/json", "Connection": "close"}
    try:
        conn.request("POST", path, body=body, headers=head)
        resp = conn.getresponse()
        data = resp.read(MAX_RESPONSE_BYTES + 1)
        if len(data) > MAX_RESPONSE_BYTES:
            return 0, b"", 0, "server answer larger than the limit"
        try:
            exit_code = int(resp.getheader(_headers.EXIT_CODE_HEADER) or 0)
        except ValueError:
            exit_code = -1
        diagnostic = resp.getheader("x-agbom-diagnostic") or ""
        return resp.status, data, exit_code, diagnostic
    finally:
        conn.close()


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

    def fail(reason: str, code: str) -> int:
        body, exit_code = replies.failure(
            runtime,
            reason,
            fail_open=fail_open,
            event=replies.event_name(runtime, raw[:MAX_STDIN_BYTES]),
            code=code,
            hook_id=str(opts["hook_id"] or replies.DEFAULT_HOOK_ID),
        )
        mode = "fail-open" if fail_open else "fail-closed"
        sys.stderr.write(f"agbom: {runtime} hook: {reason} ({mode})\n")
        _emit(body)
        return exit_code

    if len(raw) > MAX_STDIN_BYTES:
        return fail(f"event larger than {MAX_STDIN_BYTES} bytes", "malformed_input")
    env = dict(os.environ)
    if opts["agent_id"]:
        env["AGBOM_AGENT_ID"] = str(opts["agent_id"])
    if opts["hook_id"]:
        env["AGBOM_HOOK_ID"] = str(opts["hook_id"])
    head = _headers.headers_from_env(env)
    head[_headers.FAIL_OPEN_HEADER] = "true" if fail_open else "false"

    # One deadline for connect, send and receive: a server that accepts and then stalls must
    # not hold the runtime past --timeout (socket timeouts alone apply per operation).
    import signal

    def _expired(signum: int, frame: object) -> None:
        raise _Deadline

    has_alarm = hasattr(signal, "setitimer")
    if has_alarm:
        previous = signal.signal(signal.SIGALRM, _expired)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            status, body, exit_code, diagnostic = _post(
                str(opts["server"]), runtime, raw, head, timeout
            )
        finally:
            # Cancelled before any failure reply is written, so it cannot interrupt that.
            if has_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    except _Usage as exc:
        sys.stderr.write(f"agbom: error: {exc}\n")
        return 2
    except (_Deadline, TimeoutError):
        return fail(f"no answer from {opts['server']} within {timeout:g} s", "timeout")
    except OSError as exc:
        return fail(f"server {opts['server']} unreachable: {exc.strerror or exc}", "server_down")
    except Exception as exc:  # noqa: BLE001 - http.client protocol errors: still answer the runtime
        return fail(f"bad answer from {opts['server']}: {type(exc).__name__}", "server_error")
    if status != 200 or exit_code < 0:
        return fail(f"server answered HTTP {status}", "server_error")
    if diagnostic:
        sys.stderr.write(diagnostic.replace("\n", " ") + "\n")
    _emit(body)
    return exit_code


def _emit(body: bytes) -> None:
    if body:
        out = sys.stdout.buffer
        out.write(body if body.endswith(b"\n") else body + b"\n")
        out.flush()
