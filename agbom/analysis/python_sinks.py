"""What a Python script does to the world outside it, as :mod:`agbom.analysis.python_code`
judges it: the base of that module's syntax-tree walker, holding the findings and the sinks
a call can reach.

- the network: ``requests``/``httpx``/``aiohttp``/``urllib3`` calls and sessions,
  ``urllib.request`` requests and ``urlopen``, ``http.client``, sockets, SMTP, FTP/SSH
  uploads and DNS look-ups, each judged by :func:`~agbom.analysis.code_values.judge_sent`;
- execution: ``exec``/``eval`` of code (built code analysed again), command lines handed to
  the shell analysis (``os.system``, ``subprocess``, with what was written to a file they
  run), a shell run on a socket (a reverse shell);
- files: credential files read, files written, removed or made executable, judged by
  :mod:`agbom.analysis.code_values`.

Apart from the walker (statements, expressions, scopes) and from the table of the calls it
knows (:mod:`agbom.analysis.python_calls`), so that each stays readable: that table decides
*which* sink a call is, this module what reaching it means.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from agbom.analysis import shell_programs as programs
from agbom.analysis.code_values import (
    MAX_DECODE_DEPTH,
    UNKNOWN,
    CodeReport,
    Lines,
    Sent,
    V,
    argv_text,
    credential_flow,
    deep_flows,
    executed_flow,
    flows_of,
    judge_mode,
    judge_overwrite,
    judge_removal,
    judge_sent,
    judge_shell,
    judge_write,
    looks_like_code,
    record_send,
    saved_file,
    shell_text,
)
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

_NETWORK_METHODS = frozenset(
    {"post", "put", "patch", "get", "delete", "head", "request", "options", "send", "stream"}
)
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib3", "niquests", "grequests")
_DNS = frozenset(
    {"socket.gethostbyname", "socket.gethostbyname_ex", "socket.getaddrinfo",
     "socket.gethostbyaddr", "dns.resolver.resolve", "dns.resolver.query",
     "dns.resolver.Resolver.resolve", "dns.resolver.Resolver.query"}
)  # fmt: skip
_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "cmd.exe", "powershell", "pwsh")


class PythonSinks:
    """The findings of one file's analysis, and the sinks a call reaches. The walker of
    :mod:`agbom.analysis.python_code` supplies :meth:`nested_python`."""

    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.lines = Lines(text)
        self.depth = depth
        self.report = CodeReport()
        self.found: dict[tuple[str, int, int], Risk] = {}
        self.files: dict[str, frozenset[Flow]] = {}  # paths written, with what went in
        self.temp_files = 0
        self.socket_dup = False  # a socket was dup2()ed onto a standard stream
        self.credential_reads: list[Risk] = []
        self.last_output: frozenset[Flow] = frozenset()  # of the last command run

    def nested_python(self, text: str) -> list[Risk]:
        """The risks of Python code built at run time (the walker's, one level deeper)."""
        raise NotImplementedError

    # -- bookkeeping

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.lines.offset(getattr(node, "lineno", 1), getattr(node, "col_offset", 0))
        end_lineno: int | None = getattr(node, "end_lineno", None)
        end_line: int = end_lineno if end_lineno is not None else getattr(node, "lineno", 1)
        end_col: int | None = getattr(node, "end_col_offset", None)
        end = self.lines.offset(end_line, end_col) if end_col is not None else start + 1
        return start, max(end, start + 1)

    def add(
        self, check: str, node: ast.AST, detail: str, source: int = -1, origin: str = ""
    ) -> None:
        start, end = self.span(node)
        key = (check, start, end)
        if key not in self.found:
            self.found[key] = Risk(check, start, end, detail, origin, source)

    # -- reads, writes, removals

    def temp_file(self, name: str, args: list[V], kwargs: dict[str, V]) -> V:
        """A temporary file's path, made up but fixed for this call, so that what is
        written to it and what runs it meet (``mktemp()`` then ``open(p, "w")`` then
        ``subprocess.run(["bash", p])``)."""
        self.temp_files += 1
        suffix = kwargs.get("suffix", UNKNOWN).text or ""
        path = f"/tmp/tmp{self.temp_files:08d}{suffix}"[:256]
        if name.endswith("NamedTemporaryFile"):
            return V(kind="writer", name=path)
        if name.endswith("mkstemp"):
            return V(kind="list", items=(UNKNOWN, V(text=path)))
        return V(text=path)

    def read(self, path: V, node: ast.AST, *, kind: str) -> V:
        start, end = self.span(node)
        flow = credential_flow(path, start, end)
        flows = set(self.files.get(path.text or "", frozenset()))
        flows.update(f for f in path.flows if f.kind in ("secret", "user-data", "download"))
        if flow is not None:
            flows.add(flow)
            if flow.kind == "secret" and not (path.text or "").rstrip("/").endswith(
                (".env", ".env.local")
            ):
                self.credential_reads.append(
                    Risk("credential-access", start, end, f"reads {flow.what}", "", start)
                )
        return V(kind=kind, flows=frozenset(flows), name=path.text or "")

    def wrote(
        self, path: str, content: V, node: ast.AST, *, copy: bool = False, target: V | None = None
    ) -> None:
        """``content`` written to ``path`` (``target``: the path's value, with the walk it
        came from)."""
        if path:
            self.files[path] = self.files.get(path, frozenset()) | deep_flows(content)
        for check, detail in judge_write(path, content, self.text):
            self.add(check, node, detail)
        overwrite = judge_overwrite(target, content) if target is not None else None
        if overwrite is not None:
            self.add("file-tampering", node, overwrite)
        del copy

    def removed(self, path: V, node: ast.AST, *, whole: bool) -> None:
        detail = judge_removal(path, whole=whole)
        if detail is not None:
            self.add("file-tampering", node, detail)

    def chmod(self, path: V, mode: int | None, node: ast.AST) -> None:
        detail = judge_mode(path.text or "", mode)
        if detail is not None:
            self.add("privilege-escalation", node, detail)

    # -- network

    def network(
        self,
        name: str,
        method: str,
        receiver: V | None,
        first: V,
        args: list[V],
        kwargs: dict[str, V],
        node: ast.Call,
    ) -> V | None:
        module = name.split(".", 1)[0]
        sent: Sent | None = None
        response = False
        if (
            module in _HTTP_MODULES
            and method in _NETWORK_METHODS | {"urlopen"}
            or (receiver is not None and receiver.kind == "session" and method in _NETWORK_METHODS)
        ):
            url = first
            if method == "request" and len(args) > 1:
                url = args[1]
            body = [
                kwargs[k]
                for k in ("data", "json", "files", "params", "content", "body", "fields")
                if k in kwargs
            ]
            body += args[2:] if method == "request" else args[1:]
            headers = [kwargs[k] for k in ("headers", "auth", "cookies") if k in kwargs]
            sent = Sent(f"{module}.{method}", url, body, headers)
            response = True
        elif name in (
            "requests.Session",
            "httpx.Client",
            "httpx.AsyncClient",
            "aiohttp.ClientSession",
            "urllib3.PoolManager",
            "requests.session",
        ):
            return V(kind="session")
        elif name in (
            "urllib.request.Request",
            "urllib.request.urlopen.Request",
            "Request",
        ) or name.endswith("request.Request"):
            data = args[1] if len(args) > 1 else kwargs.get("data", UNKNOWN)
            given = args[2] if len(args) > 2 else kwargs.get("headers", UNKNOWN)
            return V(
                kind="request",
                text=first.text,
                template=first.template,
                holes=first.holes,
                items=(first, data, given),
                flows=first.flows,
            )
        elif name in ("urllib.request.urlretrieve", "urlretrieve", "urllib.urlretrieve"):
            saved = args[1] if len(args) > 1 else kwargs.get("filename", UNKNOWN)
            start, end = self.span(node)
            download = Flow("download", start, end, first.shown()[:120])
            self.wrote(saved.text or "", V(flows=frozenset({download})), node)
            judged = judge_sent(Sent("urlretrieve", first, [], []), start, end)
            if judged is not None:
                self.found.setdefault((judged.check, judged.start, judged.end), judged)
            return V(kind="list", items=(V(text=saved.text, flows=frozenset({download})), UNKNOWN))
        elif name in ("urllib.request.urlopen", "urlopen", "urllib2.urlopen") or name.endswith(
            "request.urlopen"
        ):
            data = args[1] if len(args) > 1 else kwargs.get("data", UNKNOWN)
            if first.kind == "request" and first.items:
                target, payload, given = first.items
                sent = Sent("urlopen", target, [payload, data], [given])
            else:
                sent = Sent("urlopen", first, [data], [])
            response = True
        elif name.startswith("http.client.HTTP") or name in ("HTTPSConnection", "HTTPConnection"):
            return V(kind="http", text=first.text, template=first.template)
        elif receiver is not None and receiver.kind == "http" and method == "request":
            payload = args[2] if len(args) > 2 else kwargs.get("body", UNKNOWN)
            given = args[3] if len(args) > 3 else kwargs.get("headers", UNKNOWN)
            sent = Sent(
                "http.client request",
                replace(receiver, kind=""),
                [payload, args[1] if len(args) > 1 else UNKNOWN],
                [given],
            )
            response = True
        elif (
            receiver is not None
            and receiver.kind == "connected"
            and method in ("send", "sendall", "sendto", "write")
        ):
            sent = Sent("a socket", V(text=receiver.text), list(args), [])
        elif name in _DNS or (method in ("resolve", "query") and "dns" in name):
            sent = Sent(name.rsplit(".", 1)[-1], first, [first], [], dns=True)
        elif name.startswith("smtplib.SMTP"):
            return V(kind="smtp")
        elif (
            receiver is not None
            and receiver.kind == "smtp"
            and method in ("sendmail", "send_message")
        ):
            sent = Sent("SMTP", UNKNOWN, list(args[1:] if method == "sendmail" else args), [])
        elif name.startswith(("ftplib.FTP", "paramiko.SSHClient")):
            return V(kind="session")
        elif receiver is not None and method in ("storbinary", "storlines", "put", "putfo"):
            sent = Sent(method, UNKNOWN, list(args), [])
        if sent is None:
            return None
        start, end = self.span(node)
        record_send(
            sent,
            start,
            end,
            self.report,
            self.found,
            lambda said: self.add("cryptominer", node, said),
        )
        if response:
            shown = sent.url.shown()[:120]
            return V(kind="response", flows=frozenset({Flow("download", start, end, shown)}))
        return UNKNOWN

    # -- execution

    def executes(self, code: V, node: ast.AST, language: str, how: str) -> None:
        start, _ = self.span(node)
        ran = executed_flow(code)
        if ran is not None:
            check, verb, flow = ran
            self.add(check, node, f"{how} runs what {flow.what} {verb}", flow.start, flow.what)
        if code.text is not None and self.depth < MAX_DECODE_DEPTH and looks_like_code(code.text):
            risks = (
                self.nested_python(code.text)
                if language == "python"
                else judge_shell(code.text, {})[0]
            )
            for risk in risks:
                self.add(
                    risk.check, node, f"{how} of code built here: {risk.detail}", start, risk.origin
                )

    def run_shell(
        self, command: V, node: ast.AST, how: str, kwargs: dict[str, V], argv: list[V] | None = None
    ) -> None:
        variables: dict[str, tuple[str, frozenset[Flow]]] = {}
        text = argv_text(argv, variables) if argv is not None else shell_text(command, variables)
        self.last_output = frozenset()
        if not text:
            return
        stdin = kwargs.get("input")
        if stdin is not None and stdin.text is not None:
            text = f"{text} <<'__AGBOM_INPUT__'\n{stdin.text}\n__AGBOM_INPUT__"
        elif stdin is not None and (stdin.flows or stdin.template):
            inner = shell_text(stdin, variables) or ""
            text = f'printf %s "{inner}" | {text}'
        obfuscated = sorted(
            (f for f in deep_flows(command) | flows_of(argv or []) if f.kind == "decoded"),
            key=lambda f: (f.start, f.what),
        )
        if obfuscated:
            self.add(
                "decode-exec",
                node,
                f"{how} runs a command built by {obfuscated[0].what}",
                obfuscated[0].start,
                obfuscated[0].what,
            )
        risks, output = judge_shell(text, variables, self.files, self.span(node))
        self.last_output = output
        own = deep_flows(command) | flows_of(argv or [])
        for risk in risks:
            source = risk.source_start if any(f.start == risk.source_start for f in own) else -1
            self.add(risk.check, node, f"{how}: {risk.detail}", source, risk.origin)

    def subprocess(self, name: str, args: list[V], kwargs: dict[str, V], node: ast.Call) -> V:
        command = args[0] if args else kwargs.get("args", UNKNOWN)
        shell = kwargs.get("shell")
        socket_io = [
            k
            for k in ("stdin", "stdout", "stderr")
            if kwargs.get(k, UNKNOWN).kind in ("connected", "fd-socket")
        ]
        argv: list[V] | None = None
        if command.items is not None:
            argv = list(command.items)
        elif name.startswith(("os.exec", "os.spawn")):
            argv = list(args[1:]) if name.startswith("os.exec") else list(args[2:])
        if argv is not None:
            argv = [saved_file(self.files, item) for item in argv]
        program = (argv[0].text or "") if argv else (command.text or "").split(" ", 1)[0]
        program_name = programs.program_name(program)
        if (socket_io or self.socket_dup) and (
            program_name in _SHELLS
            or programs.kind_of(program_name) == "shell"
            or name == "pty.spawn"
        ):
            self.add(
                "reverse-shell", node, f"{name} runs {program or 'a shell'} on a network socket"
            )
        if (
            shell is not None
            and shell.number is None
            and command.items is None
            or (name == "asyncio.create_subprocess_shell")
        ):
            self.run_shell(command, node, name, kwargs)
        elif argv is not None:
            self.run_shell(command, node, name, kwargs, argv)
        else:
            self.run_shell(command, node, name, kwargs)
        return V(kind="process", flows=self.last_output)
