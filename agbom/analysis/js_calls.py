"""The Node calls the JavaScript analysis knows by name, and what each does: the base of
:mod:`agbom.analysis.js_code`'s walker, holding the findings and judging the sinks.

- strings folded through calls: ``String.fromCharCode``, ``atob``, ``Buffer.from(…,
  'base64'|'hex')``, ``join``/``split``/``reverse``/``replace``/``concat``;
- ``path`` and ``os`` paths, ``fs`` reads (a credential file is a source), writes, removals
  and ``chmod``, judged by :mod:`agbom.analysis.code_values`;
- execution: ``eval``, ``Function``, the ``vm`` module (built code analysed again) and
  ``child_process`` (command lines handed to the shell analysis; a shell spawned beside a
  socket is a reverse shell);
- the network: ``fetch``, ``http``/``https``/``axios``/``got``/... requests, sockets and DNS
  look-ups, judged by :func:`~agbom.analysis.code_values.judge_sent`.

A table of names, kept apart from the walker (statements, expressions, scopes, callbacks)
so that adding a library's call does not touch how the syntax tree is followed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agbom.analysis import shell_programs as programs
from agbom.analysis.code_values import (
    MAX_DECODE_DEPTH,
    MAX_ITEMS,
    UNKNOWN,
    CodeReport,
    Sent,
    V,
    argv_text,
    concat,
    credential_flow,
    decode,
    deep_flows,
    executed_flow,
    flows_of,
    json_text,
    judge_mode,
    judge_overwrite,
    judge_removal,
    judge_shell,
    judge_write,
    looks_like_code,
    path_flows,
    record_send,
    saved_file,
    shell_text,
)
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "cmd.exe", "cmd", "powershell", "pwsh"})
_NETWORK = frozenset({"get", "post", "put", "patch", "delete", "request", "head"})


def runs_code(name: str) -> bool:
    """A callee that runs a command or code: ``child_process``'s functions, ``eval``,
    ``Function`` and the ``vm`` module."""
    module, _, method = name.rpartition(".")
    return (
        module == "child_process"
        or name in ("eval", "Function", "global.eval", "globalThis.eval", "window.eval")
        or (module == "vm" and method.startswith(("run", "compile", "Script")))
    )


class JsCalls:
    """The findings of one file's analysis and the calls known by name (:meth:`known`).
    The walker of :mod:`agbom.analysis.js_code` supplies :meth:`set` and
    :meth:`nested_js`."""

    def __init__(self, text: str, data: bytes, language: str, depth: int) -> None:
        self.text = text
        self.data = data
        self.language = language
        self.depth = depth
        self.ascii = len(data) == len(text)
        self.report = CodeReport()
        self.found: dict[tuple[str, int, int], Risk] = {}
        self.files: dict[str, frozenset[Flow]] = {}  # paths written, with what went in
        self.connected = False  # a socket was connected
        self.shell_spawned = False

    def set(self, name: str, value: V) -> None:
        """The variable ``name`` now holds ``value`` (a socket once connected)."""
        raise NotImplementedError

    def nested_js(self, text: str) -> list[Risk]:
        """The risks of JavaScript built at run time (the walker's, one level deeper)."""
        raise NotImplementedError

    # -- bookkeeping

    def offset(self, byte: int) -> int:
        if self.ascii:
            return byte
        return len(self.data[:byte].decode("utf-8", "ignore"))

    def span(self, node: Any) -> tuple[int, int]:
        return self.offset(node.start_byte), max(
            self.offset(node.end_byte), self.offset(node.start_byte) + 1
        )

    def raw(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def add(self, check: str, node: Any, detail: str, source: int = -1, origin: str = "") -> None:
        start, end = self.span(node)
        self.found.setdefault((check, start, end), Risk(check, start, end, detail, origin, source))

    # -- calls known by name

    def known(self, name: str, receiver: V | None, args: list[V], node: Any, new: bool) -> V | None:
        method = name.rsplit(".", 1)[-1]
        first = args[0] if args else UNKNOWN
        base = name.split(".", 1)[0]
        # strings
        if name == "String.fromCharCode" and args and all(a.number is not None for a in args):
            text = "".join(chr(a.number or 0) for a in args if 0 <= (a.number or 0) < 0x110000)
            return V(
                text=text,
                template=text,
                flows=frozenset({Flow("decoded", *self.span(node), "String.fromCharCode")}),
            )
        if name in ("String.fromCharCode", "String.fromCodePoint") and args:
            # codes computed at run time (a shift, a xor, a table): a hand-written decoder
            made = Flow("decoded", *self.span(node), f"{name} of computed codes")
            return V(flows=flows_of(args) | {made})
        if name in ("atob", "window.atob", "globalThis.atob"):
            decoded = decode("atob", first.text) if first.text is not None else None
            return V(
                text=decoded,
                template=decoded,
                flows=first.flows | {Flow("decoded", *self.span(node), "atob")},
            )
        if (
            name == "Buffer.from"
            and len(args) > 1
            and args[1].text in ("base64", "hex", "base64url")
        ):
            function = "b64decode" if args[1].text != "hex" else "unhexlify"
            buffer = decode(function, first.text) if first.text is not None else None
            return V(
                text=buffer,
                template=buffer,
                flows=first.flows
                | {Flow("decoded", *self.span(node), f"Buffer.from(…, '{args[1].text}')")},
            )
        if (
            receiver is not None
            and method
            in (
                "toString",
                "trim",
                "toLowerCase",
                "toUpperCase",
                "valueOf",
                "text",
                "json",
                "arrayBuffer",
                "blob",
                "concat",
                "join",
                "split",
                "reverse",
                "replace",
                "slice",
            )
            and not new
        ):
            folded = self.string_method(method, receiver, args, node)
            if folded is not None:
                return folded
        if name == "JSON.stringify" and args:
            return json_text(first)
        if name in (
            "JSON.parse",
            "String",
            "encodeURIComponent",
            "encodeURI",
            "Object.assign",
            "Object.entries",
            "Object.values",
        ):
            return V(flows=flows_of(args), text=first.text if name == "String" else None)
        # modules: paths, files
        module = name.rsplit(".", 1)[0] if "." in name else ""
        if name in ("os.homedir",):
            return V(text="~", template="~", kind="path")
        if name in ("os.tmpdir",):
            return V(text="/tmp", template="/tmp", kind="path")
        if module == "path" and method in ("join", "resolve", "normalize"):
            texts = [a.text for a in args]
            if all(t is not None for t in texts):
                text = "/".join(str(t).rstrip("/") for t in texts)
                return V(text=text, template=text, flows=flows_of(args), kind="path")
            return V(flows=flows_of(args), kind="path")
        if module in ("fs", "fs.promises", "fs-extra", "fs/promises") or name.startswith(
            "fs.promises."
        ):
            return self.fs(method, args, node)
        # execution
        if name in (
            "eval",
            "global.eval",
            "globalThis.eval",
            "window.eval",
            "Function",
            "vm.runInNewContext",
            "vm.runInThisContext",
            "vm.runInContext",
            "vm.Script",
            "vm.compileFunction",
        ):
            code = args[-1] if name == "Function" and args else first
            self.executes(code, node, name)
            return V(kind="function") if name == "Function" else UNKNOWN
        if module == "child_process" or base == "child_process":
            return self.child_process(method, args, node)
        # network
        return self.network(name, method, receiver, args, node, new)

    def string_method(self, method: str, receiver: V, args: list[V], node: Any) -> V | None:
        first = args[0] if args else UNKNOWN
        if method in ("text", "json", "arrayBuffer", "blob", "valueOf"):
            return replace(receiver, kind="", parent=receiver.parent)
        text = receiver.text
        if method == "toString" and receiver.kind != "callback":
            return replace(receiver, kind="")
        if method == "join" and receiver.items is not None:
            separator = first.text if first.text is not None else ","
            if all(i.text is not None for i in receiver.items):
                joined = separator.join(i.text or "" for i in receiver.items)
                return V(text=joined, template=joined, flows=flows_of(receiver.items))
            return V(flows=flows_of(receiver.items))
        if method == "reverse" and receiver.items is not None:
            items = tuple(reversed(receiver.items))
            flows = flows_of(items) | {Flow("decoded", *self.span(node), "a reversed string")}
            return V(
                kind="list",
                items=tuple(replace(i, flows=i.flows | flows) for i in items[:1]) + items[1:],
                flows=flows,
            )
        if text is None:
            return None
        if method == "split":
            parts = list(text) if first.text == "" else text.split(first.text or ",")
            items = tuple(V(text=p, template=p) for p in parts[:MAX_ITEMS])
            return V(kind="list", items=items, flows=receiver.flows)
        if method in ("trim", "toLowerCase", "toUpperCase"):
            out = {"trim": text.strip(), "toLowerCase": text.lower(), "toUpperCase": text.upper()}[
                method
            ]
            return V(text=out, template=out, flows=receiver.flows)
        if (
            method == "replace"
            and len(args) > 1
            and first.text is not None
            and args[1].text is not None
        ):
            out = text.replace(first.text, args[1].text, 1)
            return V(text=out, template=out, flows=receiver.flows)
        if method == "concat":
            return concat([receiver, *args])
        return None

    def fs(self, method: str, args: list[V], node: Any) -> V | None:
        first = args[0] if args else UNKNOWN
        base = method.removesuffix("Sync")
        if base in ("readFile", "createReadStream"):
            start, end = self.span(node)
            flow = credential_flow(first, start, end)
            flows = set(self.files.get(first.text or "", frozenset()))
            if flow is not None:
                flows.add(flow)
            return V(flows=frozenset(flows))
        if base in ("readdir", "opendir", "glob"):  # a listing: each entry carries the walk
            start, end = self.span(node)
            listed = path_flows(first, start, end)
            entry = V(kind="path", flows=listed | first.flows)
            return V(kind="list", element=entry, flows=listed)
        if base in ("writeFile", "appendFile", "createWriteStream", "copyFile", "cp", "truncate"):
            content = args[1] if len(args) > 1 else UNKNOWN
            if base == "truncate":
                content = V(text="")
            path = first.text or ""
            if base in ("copyFile", "cp"):
                start, end = self.span(node)
                flow = credential_flow(first, start, end)
                content = V(flows=frozenset({flow}) if flow is not None else frozenset())
                path = (args[1].text or "") if len(args) > 1 else ""
            if path:
                self.files[path] = self.files.get(path, frozenset()) | deep_flows(content)
            for check, detail in judge_write(path, content, self.text):
                self.add(check, node, detail)
            overwrite = judge_overwrite(first, content) if base != "appendFile" else None
            if overwrite is not None and base not in ("copyFile", "cp"):
                self.add("file-tampering", node, overwrite)
            return UNKNOWN
        if base in ("rm", "rmdir", "unlink", "remove", "emptyDir"):
            removal = judge_removal(first, whole=base in ("rm", "rmdir", "remove", "emptyDir"))
            if removal is not None:
                self.add("file-tampering", node, removal)
            return UNKNOWN
        if base == "chmod" and len(args) > 1:
            mode = args[1].number
            if mode is None and args[1].text is not None:
                try:
                    mode = int(args[1].text, 8)
                except ValueError:
                    mode = None
            change = judge_mode(first.text or "", mode)
            if change is not None:
                self.add("privilege-escalation", node, change)
            return UNKNOWN
        return None

    def child_process(self, method: str, args: list[V], node: Any) -> V:
        first = args[0] if args else UNKNOWN
        variables: dict[str, tuple[str, frozenset[Flow]]] = {}
        if method in ("exec", "execSync"):
            text = shell_text(first, variables)
        else:
            argv = [first, *(args[1].items or ())] if len(args) > 1 and args[1].items else [first]
            argv = [saved_file(self.files, item) for item in argv]
            options = next((a for a in args[1:] if a.kind == "object"), None)
            if options is not None and options.get("shell") is not None and len(argv) == 1:
                text = shell_text(first, variables)
            else:
                text = argv_text(argv, variables)
            program = programs.program_name(first.text or "")
            if program in _SHELLS and not any(
                (a.text or "").startswith("-c") for a in (args[1].items or ()) if len(args) > 1
            ):
                self.shell_spawned = True
                if self.connected:
                    self.add(
                        "reverse-shell", node, f"{program} spawned beside a socket it is piped to"
                    )
        decoded = sorted(
            (f for f in deep_flows(first) if f.kind == "decoded"), key=lambda f: (f.start, f.what)
        )
        if decoded:
            self.add(
                "decode-exec",
                node,
                f"child_process.{method} runs a command built by {decoded[0].what}",
                decoded[0].start,
                decoded[0].what,
            )
        output: frozenset[Flow] = frozenset()
        if text:
            risks, output = judge_shell(text, variables, self.files, self.span(node))
            own = deep_flows(first)
            for risk in risks:
                source = risk.source_start if any(f.start == risk.source_start for f in own) else -1
                self.add(
                    risk.check, node, f"child_process.{method}: {risk.detail}", source, risk.origin
                )
        return V(kind="process", flows=output)

    def executes(self, code: V, node: Any, how: str) -> None:
        start, _ = self.span(node)
        ran = executed_flow(code)
        if ran is not None:
            check, verb, flow = ran
            self.add(check, node, f"{how} runs what {flow.what} {verb}", flow.start, flow.what)
        if code.text is not None and self.depth < MAX_DECODE_DEPTH and looks_like_code(code.text):
            for risk in self.nested_js(code.text):
                self.add(
                    risk.check, node, f"{how} of code built here: {risk.detail}", start, risk.origin
                )

    def network(
        self, name: str, method: str, receiver: V | None, args: list[V], node: Any, new: bool
    ) -> V | None:
        first = args[0] if args else UNKNOWN
        start, end = self.span(node)
        sent: Sent | None = None
        response = False
        module = name.split(".", 1)[0]
        if (
            name in ("fetch", "globalThis.fetch", "window.fetch", "undici.fetch", "node-fetch")
            or name == "node-fetch.default"
        ):
            init = args[1] if len(args) > 1 else UNKNOWN
            body = [init.get("body") or UNKNOWN]
            headers = [init.get("headers") or UNKNOWN]
            sent = Sent("fetch", first, body, headers)
            response = True
        elif module in (
            "https",
            "http",
            "axios",
            "got",
            "superagent",
            "needle",
            "request",
        ) and method in _NETWORK | {module}:
            if method == "request" and module in ("https", "http") and first.kind == "object":
                host = first.get("hostname") or first.get("host") or UNKNOWN
                return V(
                    kind="clientrequest",
                    text=host.text,
                    template=host.template,
                    keys=first.keys,
                    flows=flows_of([first]),
                )
            if method == "request" and module in ("https", "http"):
                return V(kind="clientrequest", text=first.text, template=first.template)
            config = first if first.kind == "object" else (args[2] if len(args) > 2 else UNKNOWN)
            url = first if first.kind != "object" else (first.get("url") or UNKNOWN)
            body = [args[1]] if len(args) > 1 and method not in ("get",) else []
            body += [
                config.get("data") or UNKNOWN,
                config.get("body") or UNKNOWN,
                config.get("json") or UNKNOWN,
                config.get("params") or UNKNOWN,
            ]
            sent = Sent(f"{module}.{method}", url, body, [config.get("headers") or UNKNOWN])
            response = True
        elif (
            receiver is not None and receiver.kind == "clientrequest" and method in ("write", "end")
        ):
            sent = Sent(
                "http request",
                V(text=receiver.text, template=receiver.template),
                list(args),
                [receiver.get("headers") or UNKNOWN],
            )
        elif name in ("net.Socket", "net.Stream", "tls.TLSSocket") or (new and method == "Socket"):
            return V(kind="socket")
        elif name in ("net.connect", "net.createConnection", "tls.connect"):
            self.connected = True
            host = args[1] if len(args) > 1 and args[1].text else first.get("host") or UNKNOWN
            return V(kind="connected", text=host.text)
        elif (
            receiver is not None
            and receiver.kind in ("socket", "connected")
            and method == "connect"
        ):
            self.connected = True
            host = args[1] if len(args) > 1 else UNKNOWN
            if receiver.parent:
                self.set(receiver.parent, replace(receiver, kind="connected", text=host.text))
            return V(kind="connected", text=host.text)
        elif receiver is not None and receiver.kind == "connected" and method == "write":
            sent = Sent("a socket", V(text=receiver.text), list(args), [])
        elif (
            receiver is not None
            and method == "pipe"
            and (
                {receiver.kind, first.kind} == {"connected", "process-stream"}
                or receiver.kind in ("connected", "socket")
                and first.kind == "process-stream"
                or receiver.kind == "process-stream"
                and first.kind in ("connected", "socket")
            )
        ):
            self.add("reverse-shell", node, "a socket piped into a process's input or output")
            return UNKNOWN
        elif module == "dns" and method in (
            "lookup",
            "resolve",
            "resolve4",
            "resolve6",
            "resolveTxt",
            "resolveAny",
        ):
            sent = Sent(f"dns.{method}", first, [first], [], dns=True)
        if sent is None:
            return None
        record_send(
            sent,
            start,
            end,
            self.report,
            self.found,
            lambda said: self.add("cryptominer", node, said),
        )
        if response:
            return V(
                kind="response",
                flows=frozenset({Flow("download", start, end, sent.url.shown()[:120])}),
            )
        return UNKNOWN
