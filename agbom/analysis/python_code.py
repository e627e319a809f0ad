"""Python source read on its syntax tree (the standard library's :mod:`ast`), for what a
skill's script does rather than what its lines look like.

Values are followed from where they come from to where they go, across lines, through
variables, containers, f-strings, function calls (each local function analysed with the
values it is called with) and files written then read:

- sources: credential files and stores (``open``, ``Path.read_text``, ``shutil.copy``,
  ``sqlite3.connect``, ``glob`` of wallets and browser profiles), ``os.environ`` whole or a
  secret-named variable, ``sys.argv``, downloads (``requests``, ``urllib``), decoders
  (``base64``, ``bytes.fromhex``, ``codecs`` rot13, ``zlib``), ``chr`` chains and reversed
  strings, the user's documents walked;
- sinks: the network (``requests``/``httpx``/``urllib``/``http.client``/sockets/SMTP/DNS
  look-ups), execution (``exec``/``eval``/``compile``, ``os.system``, ``subprocess``: command
  lines go on to the shell analysis, with what was written to a file they run, also a
  ``tempfile`` path), files that persist, raise privileges or tamper, and a socket handed to
  a shell (a reverse shell); a function that runs code called through names looked up at run
  time (``getattr(__import__(t[0]), t[1])``) is obfuscation.

Constant strings are folded (concatenation, ``join``, ``chr``, ``%``, f-strings, slices,
decoders): decoded code is analysed again, as Python or as shell, up to
:data:`~agbom.analysis.code_values.MAX_DECODE_DEPTH` times. Bounded in syntax nodes visited,
function analyses and text sizes; a file that does not parse gives nothing here (the
content checks' patterns still read it).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from agbom.analysis import shell_programs as programs
from agbom.analysis.code_values import (
    MAX_DECODE_DEPTH,
    MAX_ITEMS,
    MAX_TEXT,
    SHELL_LIMITS,
    UNKNOWN,
    Lines,
    Sent,
    V,
    argv_text,
    concat,
    credential_flow,
    decode,
    deep_flows,
    executed_flow,
    flows_of,
    judge_mode,
    judge_removal,
    judge_sent,
    judge_write,
    looks_like_code,
    merge,
    path_flows,
    saved_file,
    shell_text,
)
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

MAX_NODES = 200_000
MAX_CALL_ANALYSES = 200  # local functions analysed with the values of a call
MAX_SOURCE = 1024 * 1024

_NETWORK_METHODS = frozenset(
    {"post", "put", "patch", "get", "delete", "head", "request", "options", "send", "stream"}
)
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib3", "niquests", "grequests")
_DNS = frozenset(
    {"socket.gethostbyname", "socket.gethostbyname_ex", "socket.getaddrinfo",
     "socket.gethostbyaddr", "dns.resolver.resolve", "dns.resolver.query",
     "dns.resolver.Resolver.resolve", "dns.resolver.Resolver.query"}
)  # fmt: skip
_DECODERS = frozenset(
    {"base64.b64decode", "base64.standard_b64decode", "base64.urlsafe_b64decode",
     "base64.b32decode", "base64.b16decode", "base64.b85decode", "base64.a85decode",
     "base64.decodebytes", "base64.decodestring", "binascii.unhexlify", "binascii.a2b_hex",
     "binascii.a2b_base64", "bytes.fromhex", "bytearray.fromhex", "codecs.decode",
     "zlib.decompress", "gzip.decompress", "bz2.decompress", "lzma.decompress",
     "marshal.loads", "pickle.loads"}
)  # fmt: skip
_EXEC = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "builtins.exec",
        "builtins.eval",
        "execfile",
        "runpy.run_path",
        "runpy.run_module",
    }
)
_SHELL_STRING = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "commands.getoutput",
    }
)
_SUBPROCESS = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "os.spawnl",
        "os.spawnlp",
        "os.spawnv",
        "os.spawnvp",
        "os.execv",
        "os.execvp",
        "os.execl",
        "os.execlp",
        "os.execve",
        "os.execvpe",
        "pty.spawn",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
    }
)
_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "cmd.exe", "powershell", "pwsh")


@dataclass(slots=True)
class CodeReport:
    """What one file's analysis found: risks (offsets into the text), the places where the
    script's own arguments reach the network (for a SKILL.md that passes it a credential),
    and whether the analysis ran over the whole file."""

    risks: list[Risk] = field(default_factory=list)
    argv_sent: list[tuple[int, int]] = field(default_factory=list)
    complete: bool = True
    parsed: bool = True


class _Stop(Exception):
    pass


@dataclass(slots=True)
class _Function:
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    analysed: int = 0


class _Scope:
    def __init__(self, parent: _Scope | None = None) -> None:
        self.vars: dict[str, V] = {}
        self.parent = parent
        self.returns: list[V] = []

    def lookup(self, name: str) -> V | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None

    def set(self, name: str, value: V) -> None:
        self.vars[name] = value


_TEMP_FILES = frozenset(
    {"tempfile.mktemp", "tempfile.mkstemp", "tempfile.NamedTemporaryFile", "os.tempnam"}
)


def _written_out(nodes: list[ast.expr]) -> bool:
    """The name arguments are string literals in the source (``__import__("os")``)."""
    return all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes)


def _runs_code(name: str) -> bool:
    """A callee that runs a command or code."""
    return name in ("eval", "exec", "compile", "os.system", "os.popen", "builtins.eval",
                    "builtins.exec") or name.startswith(
        ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "pty.spawn", "commands.")
    )  # fmt: skip


def analyse_python(text: str, depth: int = 0) -> CodeReport:
    """The risks of a Python source text (see the module's description)."""
    if len(text) > MAX_SOURCE:
        text = text[:MAX_SOURCE]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return CodeReport(parsed=False, complete=False)
    walker = _Walker(text, depth)
    try:
        walker.module(tree)
    except (_Stop, RecursionError):
        walker.report.complete = False
    walker.finish()
    return walker.report


class _Walker:
    def __init__(self, text: str, depth: int) -> None:
        self.text = text
        self.lines = Lines(text)
        self.depth = depth
        self.report = CodeReport()
        self.found: dict[tuple[str, int, int], Risk] = {}
        self.imports: dict[str, str] = {}
        self.functions: dict[str, _Function] = {}
        self.files: dict[str, frozenset[Flow]] = {}
        self.temp_files = 0
        self.looked_up: set[str] = set()  # module and function names computed, not written
        self.nodes = 0
        self.calls = 0
        self.socket_dup = False
        self.credential_reads: list[Risk] = []
        self.globals = _Scope()
        self.scope = self.globals
        self.calling: set[str] = set()

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

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Stop

    def finish(self) -> None:
        for name, function in self.functions.items():
            if not function.analysed and self.calls < MAX_CALL_ANALYSES:
                try:
                    self.call_local(name, function, [], {}, None)
                except (_Stop, RecursionError):
                    self.report.complete = False
                    break
        exfiltrated = any(r.check == "exfiltration" for r in self.found.values())
        if not exfiltrated:
            for risk in self.credential_reads:
                self.found.setdefault((risk.check, risk.start, risk.end), risk)
        self.report.risks = sorted(self.found.values(), key=lambda r: (r.start, r.check))

    # -- statements

    def module(self, tree: ast.Module) -> None:
        self.body(tree.body)

    def body(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        self.tick()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.import_(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions[node.name] = _Function(node)
            self.scope.set(node.name, V(kind="local", name=node.name))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions[f"{node.name}.{item.name}"] = _Function(item)
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.expr(node.value))
        elif isinstance(node, ast.AugAssign):
            old = self.expr(node.target) if isinstance(node.target, ast.Name) else UNKNOWN
            new = self.expr(node.value)
            value = concat([old, new]) if isinstance(node.op, ast.Add) else merge(old, new)
            self.assign(node.target, value)
        elif isinstance(node, ast.Expr):
            self.expr(node.value)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.scope.returns.append(self.expr(node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            iterated = self.expr(node.iter)
            if iterated.items is not None and 0 < len(iterated.items) <= 16:
                for each in iterated.items:  # a short known list: each value in turn
                    self.assign(node.target, each)
                    self.body(node.body)
            element = self.element(iterated)
            for _ in range(2):  # twice: what one pass leaves in a variable reaches the next
                self.assign(node.target, element)
                self.body(node.body)
            self.body(node.orelse)
        elif isinstance(node, ast.While):
            self.expr(node.test)
            self.body(node.body)
            self.body(node.body)
            self.body(node.orelse)
        elif isinstance(node, ast.If):
            self.expr(node.test)
            self.body(node.body)
            self.body(node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for with_item in node.items:
                entered = self.expr(with_item.context_expr)
                if with_item.optional_vars is not None:
                    self.assign(with_item.optional_vars, entered)
            self.body(node.body)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self.body(node.body)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                self.body(handler.body)
            self.body(node.orelse)  # type: ignore[attr-defined]
            self.body(node.finalbody)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Match):
            self.expr(node.subject)
            for case in node.cases:
                self.body(case.body)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child)

    def import_(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                self.imports[local] = alias.name if alias.asname else alias.name.split(".")[0]
                self.scope.set(local, V(kind="module", name=self.imports[local]))
        else:
            module = node.module or ""
            for alias in node.names:
                qualified = f"{module}.{alias.name}" if module else alias.name
                local = alias.asname or alias.name
                self.imports[local] = qualified
                self.scope.set(local, V(kind="module", name=qualified))

    def assign(self, target: ast.expr, value: V) -> None:
        if isinstance(target, ast.Name):
            if not value.parent and value.kind not in ("module", "builtin", "local"):
                value = replace(value, parent=target.id)  # its mutations taint this name
            self.scope.set(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items
            for index, element in enumerate(target.elts):
                if items is not None and index < len(items):
                    self.assign(element, items[index])
                else:
                    self.assign(element, merge(value) if value.flows else UNKNOWN)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.expr(target.value) if isinstance(target, ast.Subscript) else None
            self.taint(target.value, deep_flows(value))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value)

    def taint(self, node: ast.expr, flows: frozenset[Flow]) -> None:
        """A value stored into an object: the object, and what it came from, carry it."""
        if not flows:
            return
        seen = 0
        name = node.id if isinstance(node, ast.Name) else ""
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            self.taint(node.value, flows)
            return
        while name and seen < 8:
            value = self.scope.lookup(name)
            if value is None:
                return
            self.scope.set(name, replace(value, flows=value.flows | flows))
            if value.kind == "writer" and value.name:
                self.wrote(value.name, V(flows=flows), node)
            name = value.parent if value.parent != name else ""
            seen += 1

    def element(self, iterated: V) -> V:
        if iterated.element is not None:
            return iterated.element
        if iterated.items:
            return (
                merge(*iterated.items[:MAX_ITEMS]) if len(iterated.items) > 1 else iterated.items[0]
            )
        return V(flows=iterated.flows)

    # -- expressions

    def exprs(self, nodes: list[ast.expr]) -> list[V]:
        return [self.expr(n) for n in nodes]

    def expr(self, node: ast.expr | None) -> V:
        if node is None:
            return UNKNOWN
        self.tick()
        if isinstance(node, ast.Constant):
            constant = node.value
            if isinstance(constant, str):
                return V(text=constant[:MAX_TEXT], template=constant[:MAX_TEXT])
            if isinstance(constant, bytes):
                text = constant[:MAX_TEXT].decode("latin-1")
                return V(text=text, template=text)
            if isinstance(constant, bool) or constant is None:
                return UNKNOWN
            if isinstance(constant, int):
                return V(number=constant)
            return UNKNOWN
        if isinstance(node, ast.Name):
            found = self.scope.lookup(node.id)
            if found is not None:
                return found
            if node.id in self.imports:
                return V(kind="module", name=self.imports[node.id])
            return V(kind="builtin", name=node.id)
        if isinstance(node, ast.JoinedStr):
            parts = [
                self.expr(part.value) if isinstance(part, ast.FormattedValue) else self.expr(part)
                for part in node.values
            ]
            return concat(parts)
        if isinstance(node, ast.FormattedValue):
            return self.expr(node.value)
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = tuple(self.exprs(node.elts[:MAX_ITEMS]))
            return V(kind="list", items=items, flows=flows_of(items))
        if isinstance(node, ast.Dict):
            keys: list[tuple[str, V]] = []
            values: list[V] = []
            for key_node, value_node in zip(node.keys, node.values, strict=False):
                value = self.expr(value_node)
                values.append(value)
                if key_node is None:
                    keys.extend(value.keys or ())
                    continue
                key = self.expr(key_node)
                keys.append((key.text or "", value))
            return V(kind="dict", keys=tuple(keys[:MAX_ITEMS]), flows=flows_of(values))
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.comprehension(node.elt, node.generators)
        if isinstance(node, ast.DictComp):
            value = self.comprehension(node.value, node.generators)
            return V(kind="dict", flows=deep_flows(value))
        if isinstance(node, ast.Await):
            return self.expr(node.value)
        if isinstance(node, ast.IfExp):
            self.expr(node.test)
            left, right = self.expr(node.body), self.expr(node.orelse)
            chosen = left if left.text is not None else right
            return replace(chosen, flows=left.flows | right.flows)
        if isinstance(node, ast.BoolOp):
            values = self.exprs(node.values)
            chosen = next((v for v in values if v.text is not None or v.kind), values[-1])
            return replace(chosen, flows=flows_of(values))
        if isinstance(node, ast.NamedExpr):
            value = self.expr(node.value)
            self.assign(node.target, value)
            return value
        if isinstance(node, ast.Lambda):
            return V(kind="lambda")
        if isinstance(node, ast.Starred):
            return self.expr(node.value)
        if isinstance(node, (ast.Compare, ast.UnaryOp)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.expr(child)
            return UNKNOWN
        values = [self.expr(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        return merge(*values)

    def comprehension(self, element: ast.expr, generators: list[ast.comprehension]) -> V:
        scope = _Scope(self.scope)
        outer, self.scope = self.scope, scope
        try:
            first = generators[0]
            iterated = self.expr(first.iter)
            if iterated.items is not None and len(generators) == 1 and len(iterated.items) <= 512:
                items = []
                for item in iterated.items:
                    self.assign(first.target, item)
                    items.append(self.expr(element))
                return V(kind="list", items=tuple(items), flows=flows_of(items))
            self.assign(first.target, self.element(iterated))
            for generator in generators[1:]:
                self.assign(generator.target, self.element(self.expr(generator.iter)))
            value = self.expr(element)
            return V(kind="list", element=value, flows=deep_flows(value))
        finally:
            self.scope = outer

    def binop(self, node: ast.BinOp) -> V:
        left, right = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, ast.Add):
            if left.items is not None and right.items is not None:
                items = left.items + right.items
                return V(kind="list", items=items, flows=flows_of(items))
            if left.number is not None and right.number is not None:
                return V(number=left.number + right.number)
            return concat([left, right])
        if isinstance(node.op, ast.Div) and (left.kind == "path" or right.kind == "path"):
            return self.joined_path([left, right])
        if isinstance(node.op, ast.Mod) and left.text is not None:
            args = right.items if right.items is not None else (right,)
            if all(a.text is not None or a.number is not None for a in args):
                try:
                    text = left.text % tuple(
                        a.text if a.text is not None else a.number for a in args
                    )
                    return V(
                        text=text[:MAX_TEXT],
                        template=text[:MAX_TEXT],
                        flows=left.flows | flows_of(args),
                    )
                except (TypeError, ValueError):
                    pass
            return V(flows=left.flows | flows_of(args), template=None)
        if left.number is not None and right.number is not None:
            try:
                ops = {
                    ast.Sub: operator.sub,
                    ast.Mult: operator.mul,
                    ast.BitOr: operator.or_,
                    ast.BitAnd: operator.and_,
                    ast.BitXor: operator.xor,
                }
                function = ops.get(type(node.op))
                if function is not None:
                    return V(number=function(left.number, right.number))
            except (OverflowError, ValueError):
                pass
        if isinstance(node.op, ast.Mult) and left.text is not None and right.number is not None:
            return V(text=(left.text * max(0, min(right.number, 64)))[:MAX_TEXT])
        return merge(left, right)

    def joined_path(self, parts: list[V]) -> V:
        texts = [p.text for p in parts]
        flows = flows_of(parts)
        if all(t is not None for t in texts):
            text = "/".join(
                str(t).rstrip("/") if i < len(texts) - 1 else str(t) for i, t in enumerate(texts)
            )
            if texts and str(texts[-1]).startswith("/"):
                text = str(texts[-1])
            return V(text=text, kind="path", flows=flows, template=text)
        return V(kind="path", flows=flows)

    def attribute(self, node: ast.Attribute) -> V:
        base = self.expr(node.value)
        if base.kind in ("module", "builtin") and base.name:
            qualified = f"{base.name}.{node.attr}"
            if qualified == "os.environ":
                return V(
                    kind="environ",
                    name=qualified,
                    flows=frozenset({Flow("secret", *self.span(node), "the environment")}),
                )
            if qualified == "sys.argv":
                return V(
                    kind="argv", flows=frozenset({Flow("argument", *self.span(node), "sys.argv")})
                )
            if qualified == "sys.executable":
                return V(text="python3")
            return V(kind="module", name=qualified)
        if node.attr in ("text", "content", "body", "data", "stdout", "raw", "buffer"):
            return replace(
                base, kind="value" if base.kind != "path" else "path", items=None, keys=None
            )
        if node.attr == "name" and base.kind == "writer" and base.name:
            return V(text=base.name)
        if node.attr in ("parent", "stem", "name", "suffix") and base.kind == "path":
            return V(kind="path", flows=base.flows)
        return V(kind="attr", name=f"{base.kind}.{node.attr}", flows=base.flows, parent=base.parent)

    def subscript(self, node: ast.Subscript) -> V:
        base = self.expr(node.value)
        index = self.expr(node.slice) if not isinstance(node.slice, ast.Slice) else UNKNOWN
        if base.kind == "environ":
            if index.text is not None:
                return self.env_variable(index.text, node)
            return V(flows=base.flows)
        if base.kind == "argv":
            return V(flows=base.flows)
        if base.items is not None and index.number is not None:
            if -len(base.items) <= index.number < len(base.items):
                return base.items[index.number]
        if base.keys is not None and index.text is not None:
            found = base.get(index.text)
            if found is not None:
                return found
        if isinstance(node.slice, ast.Slice) and base.text is not None:
            lower = self.expr(node.slice.lower).number if node.slice.lower else None
            upper = self.expr(node.slice.upper).number if node.slice.upper else None
            step = self.expr(node.slice.step).number if node.slice.step else None
            try:
                text = base.text[lower:upper:step]
            except ValueError:
                return V(flows=base.flows)
            flows = base.flows
            if step == -1 and len(text) > 8:
                flows = flows | {Flow("decoded", *self.span(node), "a reversed string")}
            return V(text=text, template=text, flows=flows)
        return V(flows=deep_flows(base), kind=base.element.kind if base.element else "")

    def env_variable(self, name: str, node: ast.AST, default: V | None = None) -> V:
        if name in ("HOME", "USERPROFILE"):
            return V(text="~", template="~")
        if programs.is_secret_name(name):
            flow = Flow("secret-variable", *self.span(node), "$" + name)
            return V(flows=frozenset({flow}))
        if default is not None:
            return default
        return UNKNOWN

    # -- calls

    def qualified(self, node: ast.expr) -> tuple[str, V | None]:
        """The callee's qualified name (``os.system``) or, for a method of a value, the
        value's kind and the method (``socket.connect``), with the receiver."""
        if isinstance(node, ast.Name):
            value = self.scope.lookup(node.id)
            if value is not None and value.kind in ("module", "builtin"):
                return value.name, None
            if value is not None and value.kind == "local":
                return "local:" + value.name, None
            if node.id in self.imports:
                return self.imports[node.id], None
            return node.id, None
        if isinstance(node, ast.Attribute):
            receiver = self.expr(node.value)
            if receiver.kind in ("module", "builtin") and receiver.name:
                if receiver.name in self.looked_up:
                    self.looked_up.add(f"{receiver.name}.{node.attr}")
                return f"{receiver.name}.{node.attr}", None
            return f"<{receiver.kind}>.{node.attr}", receiver
        value = self.expr(node)
        if value.kind == "module" and value.name:  # getattr(__import__("os"), "system")(…)
            return value.name, None
        return "", value

    def call(self, node: ast.Call) -> V:
        name, receiver = self.qualified(node.func)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg}
        for extra in (k for k in node.keywords if k.arg is None):
            kwargs.update((key, value) for key, value in self.expr(extra.value).keys or ())
        if name.startswith("local:"):
            function = self.functions.get(name[6:])
            if function is not None:
                return self.call_local(name[6:], function, args, kwargs, node)
        if name in self.looked_up and _runs_code(name):
            self.add(
                "obfuscated-code",
                node,
                f"{name} is called through names looked up at run time, not written out",
            )
        result = self.known_call(name, receiver, args, kwargs, node)
        if result is not None:
            return result
        # Anything else: its result carries what went in.
        flows = flows_of([*args, *kwargs.values()])
        if receiver is not None:
            flows |= receiver.flows
            if name.rsplit(".", 1)[-1] in (
                "get_credentials",
                "get_frozen_credentials",
                "get_password",
                "get_credential",
                "CryptUnprotectData",
            ):
                flows |= {Flow("secret", *self.span(node), name.rsplit(".", 1)[-1] + "()")}
            if (
                args
                and receiver.parent
                and name.rsplit(".", 1)[-1]
                in (
                    "write",
                    "writestr",
                    "add",
                    "append",
                    "update",
                    "extend",
                    "insert",
                    "put",
                    "paste",
                    "putdata",
                    "putpixel",
                    "setdefault",
                )
            ):
                self.taint(ast.Name(id=receiver.parent), flows_of(args))
        if name in (
            "keyring.get_password",
            "win32crypt.CryptUnprotectData",
            "browser_cookie3.load",
            "browser_cookie3.chrome",
        ):
            flows |= {Flow("secret", *self.span(node), name)}
        return V(flows=flows, parent=receiver.parent if receiver is not None else "")

    def call_local(
        self,
        name: str,
        function: _Function,
        args: list[V],
        kwargs: dict[str, V],
        node: ast.Call | None,
    ) -> V:
        if name in self.calling or self.calls >= MAX_CALL_ANALYSES:
            return merge(*args, *kwargs.values())
        self.calls += 1
        function.analysed += 1
        scope = _Scope(self.globals)
        definition = function.node
        parameters = definition.args
        positional = [*parameters.posonlyargs, *parameters.args]
        defaults = [None] * (len(positional) - len(parameters.defaults)) + list(parameters.defaults)
        offset = 1 if positional and positional[0].arg in ("self", "cls") else 0
        for index, parameter in enumerate(positional):
            given = index - offset
            if 0 <= given < len(args):
                value = args[given]
            elif parameter.arg in kwargs:
                value = kwargs[parameter.arg]
            elif defaults[index] is not None:
                value = self.expr(defaults[index])
            else:
                value = UNKNOWN
            scope.set(parameter.arg, replace(value, parent=parameter.arg))
        if parameters.vararg is not None:
            scope.set(parameters.vararg.arg, V(kind="list", items=tuple(args[len(positional) :])))
        outer, self.scope = self.scope, scope
        self.calling.add(name)
        try:
            if isinstance(definition, ast.Lambda):
                return self.expr(definition.body)
            self.body(definition.body)
        finally:
            self.calling.discard(name)
            self.scope = outer
        returns = scope.returns
        if len(returns) == 1:
            return returns[0]
        return merge(*returns) if returns else UNKNOWN

    def known_call(
        self, name: str, receiver: V | None, args: list[V], kwargs: dict[str, V], node: ast.Call
    ) -> V | None:
        method = name.rsplit(".", 1)[-1]
        first = args[0] if args else kwargs.get("url") or kwargs.get("args") or UNKNOWN
        # -- strings and constants
        if name == "chr" and first.number is not None and 0 <= first.number < 0x110000:
            return V(text=chr(first.number), template=chr(first.number), kind="chr")
        if (
            name in ("str", "bytes", "bytearray")
            and first.items is not None
            and all(i.number is not None and 0 <= i.number < 256 for i in first.items)
        ):
            text = "".join(chr(i.number or 0) for i in first.items)
            return V(
                text=text,
                template=text,
                flows=frozenset({Flow("decoded", *self.span(node), "bytes from numbers")}),
            )
        if (
            name in ("str", "repr", "bytes", "list", "tuple", "dict", "sorted", "set", "frozenset")
            and args
        ):
            return replace(first, kind=first.kind if name in ("list", "tuple", "sorted") else "")
        if receiver is not None and receiver.kind not in ("socket", "connected", "listener"):
            folded = self.string_method(method, receiver, args, node)
            if folded is not None:
                return folded
        if name == "len" or name == "ord":
            return UNKNOWN
        if name in _TEMP_FILES:
            return self.temp_file(name, args, kwargs)
        if name in ("__import__", "importlib.import_module") and first.text:
            if not _written_out(node.args[:1]):
                self.looked_up.add(first.text)
            return V(kind="module", name=first.text)
        if name == "getattr" and len(args) >= 2 and first.kind == "module" and args[1].text:
            qualified = f"{first.name}.{args[1].text}"
            if first.name in self.looked_up or not _written_out(node.args[1:2]):
                self.looked_up.add(qualified)
            return V(kind="module", name=qualified)
        if name == "int" and first.text is not None:
            try:
                return V(
                    number=int(
                        first.text, args[1].number if len(args) > 1 and args[1].number else 10
                    )
                )
            except ValueError:
                return UNKNOWN
        if name in _DECODERS or (receiver is not None and method in ("b64decode", "fromhex")):
            return self.decoded(name, first, args, kwargs, node)
        # -- paths, environment, arguments
        if name in (
            "os.path.expanduser",
            "os.path.expandvars",
            "os.path.abspath",
            "os.path.realpath",
            "os.path.normpath",
            "pathlib.Path",
            "pathlib.PurePath",
            "pathlib.PosixPath",
            "Path",
            "os.fspath",
        ):
            if not args:
                return V(kind="path", text=".")
            return self.joined_path(args) if len(args) > 1 else replace(first, kind="path")
        if name in ("pathlib.Path.home", "Path.home", "os.path.expanduser") or (
            name.endswith("Path.home")
        ):
            return V(kind="path", text="~", template="~")
        if name in ("os.path.join", "posixpath.join", "ntpath.join") or (
            receiver is not None and receiver.kind == "path" and method == "joinpath"
        ):
            parts = ([receiver] if receiver is not None and method == "joinpath" else []) + args
            return self.joined_path(parts)
        if name in (
            "os.getenv",
            "os.environ.get",
            "<environ>.get",
            "os.environ.setdefault",
            "<environ>.setdefault",
        ):
            default = args[1] if len(args) > 1 else kwargs.get("default")
            if first.text is not None:
                return self.env_variable(first.text, node, default)
            return UNKNOWN
        if name in (
            "<environ>.copy",
            "<environ>.items",
            "<environ>.values",
            "os.environ.copy",
            "os.environ.items",
        ):
            return V(
                flows=receiver.flows
                if receiver
                else frozenset({Flow("secret", *self.span(node), "the environment")})
            )
        if name in ("getpass.getuser", "os.getlogin", "socket.gethostname", "platform.node"):
            return UNKNOWN
        # -- listing and reading files
        if name in ("glob.glob", "glob.iglob") or (
            receiver is not None
            and receiver.kind == "path"
            and method in ("glob", "rglob", "iterdir")
        ):
            pattern = first
            if receiver is not None and receiver.kind == "path":
                pattern = self.joined_path([receiver, first]) if args else receiver
            flows = path_flows(pattern, *self.span(node))
            element = V(kind="path", text=pattern.text, flows=flows | pattern.flows)
            return V(kind="list", element=element, flows=flows)
        if name in ("os.walk", "os.listdir", "os.scandir"):
            flows = path_flows(first, *self.span(node))
            path = V(kind="path", flows=flows | first.flows, text=None)
            if name == "os.walk":
                element = V(
                    kind="list",
                    items=(path, V(kind="list", element=path), V(kind="list", element=path)),
                    flows=flows,
                )
                return V(kind="list", element=element, flows=flows)
            return V(kind="list", element=path, flows=flows)
        if name in ("open", "io.open", "codecs.open", "builtins.open") or (
            receiver is not None and receiver.kind == "path" and method == "open"
        ):
            path = receiver if receiver is not None and method == "open" else first
            mode_v = (
                args[0]
                if receiver is not None and args
                else args[1]
                if len(args) > 1
                else kwargs.get("mode", V(text="r"))
            )
            mode = mode_v.text or "r"
            if any(m in mode for m in "wax"):
                return V(kind="writer", name=path.text or "", flows=path.flows)
            return self.read(path, node, kind="file")
        if (
            receiver is not None
            and receiver.kind == "path"
            and method in ("read_text", "read_bytes")
        ):
            return self.read(receiver, node, kind="value")
        if (
            receiver is not None
            and receiver.kind == "path"
            and method in ("write_text", "write_bytes")
        ):
            self.wrote(receiver.text or "", first, node)
            return UNKNOWN
        if receiver is not None and receiver.kind == "writer" and method in ("write", "writelines"):
            self.wrote(receiver.name, first, node)
            return UNKNOWN
        if (
            receiver is not None
            and receiver.kind == "file"
            and method in ("read", "readlines", "readline", "read_bytes")
        ):
            return V(flows=receiver.flows)
        if name in (
            "shutil.copy",
            "shutil.copy2",
            "shutil.copyfile",
            "shutil.copytree",
            "shutil.move",
            "os.rename",
            "os.replace",
        ):
            source = self.read(first, node, kind="value")
            if len(args) > 1:
                self.wrote(args[1].text or "", source, node, copy=True)
                if args[1].parent and source.flows:
                    self.taint(ast.Name(id=args[1].parent), source.flows)
            return V(kind="path", text=args[1].text if len(args) > 1 else None)
        if name in ("sqlite3.connect",):
            return replace(self.read(first, node, kind="value"), kind="object")
        if name in ("zipfile.ZipFile", "tarfile.open", "tarfile.TarFile", "gzip.open"):
            mode = (args[1] if len(args) > 1 else kwargs.get("mode", V(text="r"))).text or "r"
            if any(m in mode for m in "wax"):
                return V(kind="writer", name=first.text or "", flows=first.flows)
            return self.read(first, node, kind="file")
        if (
            receiver is not None
            and receiver.kind == "writer"
            and method in ("write", "add", "writestr")
        ):
            content = self.read(first, node, kind="value") if method != "writestr" else merge(*args)
            self.wrote(receiver.name, replace(content, flows=content.flows | first.flows), node)
            return UNKNOWN
        if (
            receiver is not None
            and receiver.flows
            and method in ("save", "to_file", "dump", "write_to", "export")
        ):
            target = first if first.text is not None else kwargs.get("fp", UNKNOWN)
            if target.text:
                self.wrote(target.text, receiver, node)
            return UNKNOWN
        # -- removing, permissions
        if name in ("shutil.rmtree", "os.removedirs", "os.remove", "os.unlink", "os.rmdir") or (
            receiver is not None and receiver.kind == "path" and method in ("unlink", "rmdir")
        ):
            self.removed(
                receiver if receiver is not None and receiver.kind == "path" else first,
                node,
                whole=name == "shutil.rmtree",
            )
            return UNKNOWN
        if name in ("os.chmod",) or (
            receiver is not None and receiver.kind == "path" and method == "chmod"
        ):
            path = receiver if receiver is not None and method == "chmod" else first
            bits = (
                args[0]
                if receiver is not None and method == "chmod"
                else args[1]
                if len(args) > 1
                else UNKNOWN
            ).number
            self.chmod(path, bits, node)
            return UNKNOWN
        if name in ("os.chown", "shutil.chown") and len(args) > 1:
            if args[1].number == 0 or args[1].text == "root":
                owned = first.text or ""
                if owned.startswith(("/tmp", "~", "/dev/shm", "/var/tmp")):
                    self.add("privilege-escalation", node, f"chown to root of {owned}")
            return UNKNOWN
        if name in ("os.setuid", "os.setgid", "os.seteuid") and first.number == 0:
            return UNKNOWN
        if name.startswith("winreg.") and method in ("SetValueEx", "SetValue"):
            key = first
            if (
                key.text
                and "\\run" in key.text.lower()
                or any("\\run" in (f.what.lower()) for f in key.flows)
            ):
                self.add("persistence", node, "a Windows Run key is set")
            return UNKNOWN
        if (
            name.startswith("winreg.")
            and method in ("OpenKey", "CreateKey", "CreateKeyEx", "OpenKeyEx")
            and len(args) > 1
        ):
            return V(
                text=args[1].text,
                flows=frozenset({Flow("registry", *self.span(node), args[1].text or "")}),
            )
        # -- the network
        result = self.network(name, method, receiver, first, args, kwargs, node)
        if result is not None:
            return result
        # -- execution
        if name in _EXEC:
            code = first
            self.executes(code, node, "python", name)
            return UNKNOWN
        if name in _SHELL_STRING:
            self.run_shell(first, node, name, kwargs)
            return V(flows=self.last_output)
        if name in _SUBPROCESS:
            return self.subprocess(name, args, kwargs, node)
        if name == "os.dup2" and first.kind in ("connected", "fd-socket"):
            self.socket_dup = True
            return UNKNOWN
        if (
            receiver is not None
            and receiver.kind in ("connected", "socket", "listener")
            and method == "fileno"
        ):
            return V(kind="fd-socket", flows=receiver.flows)
        # -- sockets
        if name in ("socket.socket", "socket.socketpair") or name.endswith("socket.socket"):
            return V(kind="socket")
        if name in ("socket.create_connection",):
            host = first.items[0] if first.items else UNKNOWN
            return V(kind="connected", text=host.text)
        if (
            receiver is not None
            and receiver.kind in ("socket", "connected")
            and method in ("connect", "connect_ex")
        ):
            host = first.items[0] if first.items else first
            if receiver.parent:
                self.scope.set(receiver.parent, replace(receiver, kind="connected", text=host.text))
            return UNKNOWN
        if receiver is not None and receiver.kind == "socket" and method in ("bind", "listen"):
            if receiver.parent:
                self.scope.set(receiver.parent, replace(receiver, kind="listener"))
            return UNKNOWN
        if receiver is not None and receiver.kind == "listener" and method == "accept":
            return V(kind="list", items=(V(kind="connected", text="(accepted)"), UNKNOWN))
        if receiver is not None and receiver.kind == "connected" and method == "makefile":
            return V(kind="connected", text=receiver.text)
        if receiver is not None and receiver.kind == "connected" and method in ("recv", "read"):
            return V(flows=frozenset({Flow("download", *self.span(node), "a socket")}))
        return None

    # -- strings

    def string_method(self, method: str, receiver: V, args: list[V], node: ast.Call) -> V | None:
        text = receiver.text
        if method == "join" and args:
            iterated = args[0]
            items = iterated.items
            if text is not None and items is not None and all(i.text is not None for i in items):
                joined = text.join(i.text or "" for i in items)[:MAX_TEXT]
                flows = flows_of(items) | receiver.flows
                if sum(1 for i in items if i.kind == "chr") >= 4:
                    flows |= {Flow("decoded", *self.span(node), "a chr() chain")}
                return V(text=joined, template=joined, flows=flows)
            return V(flows=deep_flows(iterated) | receiver.flows)
        if text is None:
            if method in ("encode", "decode", "strip", "lower", "upper", "rstrip", "lstrip"):
                return replace(receiver, kind="")
            return None
        if method in ("encode", "decode"):
            if (
                method == "decode"
                and args
                and args[0].text
                and args[0].text.lower().replace("-", "_") in ("rot13", "rot_13", "hex", "base64")
            ):
                return self.decoded("codecs.decode", receiver, [receiver, args[0]], {}, node)
            return replace(receiver, kind="")
        try:
            if method in ("strip", "lstrip", "rstrip", "lower", "upper", "title", "casefold"):
                out = getattr(text, method)(*(a.text for a in args if a.text is not None))
            elif (
                method == "replace"
                and len(args) >= 2
                and args[0].text is not None
                and (args[1].text is not None)
            ):
                out = text.replace(args[0].text, args[1].text)
            elif method == "format" and all(
                a.text is not None or a.number is not None for a in args
            ):
                out = text.format(*(a.text if a.text is not None else a.number for a in args))
            elif method == "format":
                return concat([receiver, *args])
            elif method in ("split", "splitlines"):
                parts = text.split(args[0].text) if args and args[0].text else text.split()
                items = tuple(V(text=p, template=p) for p in parts[:MAX_ITEMS])
                return V(kind="list", items=items, flows=receiver.flows)
            else:
                return None
        except (ValueError, IndexError, KeyError):
            return None
        return V(text=out[:MAX_TEXT], template=out[:MAX_TEXT], flows=receiver.flows)

    def decoded(
        self, name: str, first: V, args: list[V], kwargs: dict[str, V], node: ast.Call
    ) -> V:
        argument = args[1].text if len(args) > 1 and args[1].text else ""
        if name == "codecs.decode" and not argument and "encoding" in kwargs:
            argument = kwargs["encoding"].text or ""
        flow = Flow("decoded", *self.span(node), name)
        if name in ("codecs.decode",) and argument.lower().replace("-", "_") in (
            "utf_8",
            "utf8",
            "latin_1",
            "ascii",
        ):
            return first
        text = decode(name, first.text, argument) if first.text is not None else None
        return V(text=text, template=text, flows=first.flows | {flow})

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

    def wrote(self, path: str, content: V, node: ast.AST, *, copy: bool = False) -> None:
        if path:
            self.files[path] = self.files.get(path, frozenset()) | deep_flows(content)
        for check, detail in judge_write(path, content, self.text):
            self.add(check, node, detail)
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
        risk = judge_sent(sent, start, end)
        if risk is not None:
            self.found.setdefault((risk.check, risk.start, risk.end), risk)
        if any(f.kind == "argument" for f in flows_of(sent.body) | deep_flows(sent.url)):
            self.report.argv_sent.append((start, end))
        if response:
            shown = sent.url.shown()[:120]
            return V(kind="response", flows=frozenset({Flow("download", start, end, shown)}))
        return UNKNOWN

    # -- execution

    last_output: frozenset[Flow] = frozenset()

    def executes(self, code: V, node: ast.AST, language: str, how: str) -> None:
        start, _ = self.span(node)
        ran = executed_flow(code)
        if ran is not None:
            check, verb, flow = ran
            self.add(check, node, f"{how} runs what {flow.what} {verb}", flow.start, flow.what)
        if code.text is not None and self.depth < MAX_DECODE_DEPTH and looks_like_code(code.text):
            inner = (
                analyse_python(code.text, self.depth + 1)
                if language == "python"
                else _shell_risks(code.text, {})
            )
            risks = inner.risks if isinstance(inner, CodeReport) else inner
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
        risks, output = _shell(text, variables)
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


def _shell(
    text: str, variables: dict[str, tuple[str, frozenset[Flow]]]
) -> tuple[list[Risk], frozenset[Flow]]:
    from agbom.analysis.shell import analyse_with
    from agbom.analysis.shell_behaviours import behaviours
    from agbom.analysis.shell_risks import risks

    analysis = analyse_with(text, variables, SHELL_LIMITS)
    return [*risks(analysis), *behaviours(analysis)], analysis.output


def _shell_risks(text: str, variables: dict[str, tuple[str, frozenset[Flow]]]) -> list[Risk]:
    return _shell(text, variables)[0]


def risky_python(text: str) -> Iterator[Risk]:
    """The risks of :func:`analyse_python` one by one."""
    yield from analyse_python(text).risks
