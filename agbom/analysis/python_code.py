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

This module holds the walker: statements, expressions, scopes and local functions. The calls
it meets are looked up by name in :mod:`agbom.analysis.python_calls`, and what reaching the
network, a shell or a file means is judged in :mod:`agbom.analysis.python_sinks`: three
parts, each to be read (and grown) on its own.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator
from dataclasses import dataclass, replace

from agbom.analysis.code_values import (
    MAX_ITEMS,
    MAX_TEXT,
    UNKNOWN,
    CodeReport,
    V,
    concat,
    deep_flows,
    flows_of,
    merge,
)
from agbom.analysis.python_calls import PythonCalls, runs_code
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

__all__ = ["CodeReport", "analyse_python", "risky_python"]

MAX_NODES = 200_000
MAX_CALL_ANALYSES = 200  # local functions analysed with the values of a call
MAX_SOURCE = 1024 * 1024


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


class _Walker(PythonCalls):
    """Statements and expressions followed, with their scopes and local functions; the
    calls it meets are looked up in :class:`~agbom.analysis.python_calls.PythonCalls`."""

    def __init__(self, text: str, depth: int) -> None:
        super().__init__(text, depth)
        self.imports: dict[str, str] = {}
        self.functions: dict[str, _Function] = {}
        self.nodes = 0
        self.calls = 0
        self.globals = _Scope()
        self.scope = self.globals
        self.calling: set[str] = set()

    def nested_python(self, text: str) -> list[Risk]:
        return analyse_python(text, self.depth + 1).risks

    def rebind(self, name: str, value: V) -> None:
        self.scope.set(name, value)

    # -- bookkeeping

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
        if name in self.looked_up and runs_code(name):
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


def risky_python(text: str) -> Iterator[Risk]:
    """The risks of :func:`analyse_python` one by one."""
    yield from analyse_python(text).risks
