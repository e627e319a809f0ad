"""JavaScript and TypeScript read on a parse (tree-sitter's ``javascript`` and ``typescript``
grammars), for what a skill's script does: the same sources and sinks as the Python analysis
(:mod:`agbom.analysis.python_code`) in Node's words.

- sources: ``fs.readFileSync`` and friends of a credential file, ``process.env`` whole or a
  secret-named variable, ``process.argv``, responses of ``fetch``/``https.get``/``axios``,
  decoders (``Buffer.from(…, 'base64')``, ``atob``, ``String.fromCharCode``, reversed strings);
- sinks: ``fetch``, ``https.request``, ``axios``, sockets and DNS look-ups; ``eval``,
  ``Function``, ``vm``, ``child_process`` (command lines go on to the shell analysis); files
  written where they persist, raise privileges or tamper; a socket piped into a shell.

Modules are followed through ``require`` and ``import`` (also ``require(x)[y](z)`` with
constant strings from an array), values through variables, objects, template strings,
concatenation and callbacks (a callback's parameters carry what the object it is registered
on carries: ``res.on('data', c => body += c)``). Bounded in nodes and text sizes; the parse
is bounded in time.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from agbom.analysis import shell_programs as programs
from agbom.analysis.code_values import (
    MAX_DECODE_DEPTH,
    MAX_ITEMS,
    MAX_TEXT,
    UNKNOWN,
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
    saved_file,
    shell_text,
)
from agbom.analysis.python_code import CodeReport, _shell
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

MAX_NODES = 200_000
MAX_PARSE_MS = 1000
MAX_SOURCE = 1024 * 1024
_LOCAL = threading.local()
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "cmd.exe", "cmd", "powershell", "pwsh"})
_NETWORK = frozenset({"get", "post", "put", "patch", "delete", "request", "head"})


def _parser(language: str) -> Any:
    parsers = getattr(_LOCAL, "parsers", None)
    if parsers is None:
        parsers = _LOCAL.parsers = {}
    if language not in parsers:
        import tree_sitter

        if language == "javascript":
            import tree_sitter_javascript as grammar

            lang = tree_sitter.Language(grammar.language())
        else:
            import tree_sitter_typescript as ts_grammar

            lang = tree_sitter.Language(
                ts_grammar.language_tsx() if language == "tsx" else ts_grammar.language_typescript()
            )
        parsers[language] = tree_sitter.Parser(lang)
    return parsers[language]


def analyse_js(text: str, language: str = "javascript", depth: int = 0) -> CodeReport:
    """The risks of a JavaScript (``javascript``), TypeScript (``typescript``) or TSX
    (``tsx``) source text."""
    data = text.encode("utf-8", "surrogatepass")[:MAX_SOURCE]
    deadline = time.monotonic() + MAX_PARSE_MS / 1000
    parser = _parser(language)
    try:
        tree = parser.parse(
            lambda offset, _point: data[offset : offset + 65536],
            progress_callback=lambda _o, _e: time.monotonic() > deadline,
        )
    except ValueError:
        parser.reset()
        return CodeReport(parsed=False, complete=False)
    walker = _Walker(text, data, language, depth)
    try:
        walker.statements(tree.root_node.named_children)
    except (_Stop, RecursionError):
        walker.report.complete = False
    walker.report.risks = sorted(walker.found.values(), key=lambda r: (r.start, r.check))
    walker.report.parsed = not tree.root_node.has_error or bool(walker.found)
    return walker.report


class _Stop(Exception):
    pass


_TRANSPARENT = frozenset(
    {"parenthesized_expression", "as_expression", "non_null_expression", "satisfies_expression",
     "type_assertion", "await_expression"}
)  # fmt: skip


class _Walker:
    def __init__(self, text: str, data: bytes, language: str, depth: int) -> None:
        self.text = text
        self.data = data
        self.language = language
        self.depth = depth
        self.ascii = len(data) == len(text)
        self.report = CodeReport()
        self.found: dict[tuple[str, int, int], Risk] = {}
        self.scopes: list[dict[str, V]] = [{}]
        self.nodes = 0
        self.files: dict[str, frozenset[Flow]] = {}
        self.connected = False
        self.shell_spawned = False
        self.functions: dict[str, Any] = {}
        self.returns: list[V] = []
        self.depth_calls = 0

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

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Stop

    def lookup(self, name: str) -> V | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def set(self, name: str, value: V) -> None:
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name] = value
                return
        self.scopes[-1][name] = value

    # -- statements

    def statements(self, nodes: list[Any]) -> None:
        functions = [n for n in nodes if n.type == "function_declaration"]
        for node in functions:  # hoisted
            name = node.child_by_field_name("name")
            if name is not None:
                self.scopes[-1][self.raw(name)] = V(
                    kind="function",
                    name=self.raw(name),
                    items=(V(kind="node", name=str(id(node))),),
                )
                self.functions[self.raw(name)] = node
        for node in nodes:
            self.statement(node)

    def statement(self, node: Any) -> None:
        self.tick()
        kind = node.type
        if kind in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                if declarator.type == "variable_declarator":
                    value_node = declarator.child_by_field_name("value")
                    value = self.expr(value_node) if value_node is not None else UNKNOWN
                    target = declarator.child_by_field_name("name")
                    if target is not None:
                        self.bind(target, value, declare=True)
        elif kind == "expression_statement":
            for child in node.named_children:
                self.expr(child)
        elif kind == "import_statement":
            self.import_(node)
        elif kind == "function_declaration":
            self.function_body(node, [])
        elif kind in ("class_declaration", "class"):
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else []:
                if member.type == "method_definition":
                    self.function_body(member, [])
        elif kind == "return_statement":
            for child in node.named_children:
                self.returns.append(self.expr(child))
        elif kind in ("for_in_statement", "for_of_statement"):
            right = node.child_by_field_name("right")
            left = node.child_by_field_name("left")
            iterated = self.expr(right) if right is not None else UNKNOWN
            element = iterated.element or (
                merge(*iterated.items) if iterated.items else V(flows=iterated.flows)
            )
            body = node.child_by_field_name("body")
            if iterated.items is not None and len(iterated.items) <= 16 and left is not None:
                for item in iterated.items:
                    self.bind(left, item, declare=True)
                    if body is not None:
                        self.statement(body)
            if left is not None:
                self.bind(left, element, declare=True)
            if body is not None:
                self.statement(body)
        elif kind in (
            "comment",
            "empty_statement",
            "debugger_statement",
            "break_statement",
            "continue_statement",
            "type_alias_declaration",
            "interface_declaration",
            "enum_declaration",
            "ambient_declaration",
        ):
            return
        else:
            for child in node.named_children:
                if child.type.endswith(("statement", "declaration", "block", "clause")) or (
                    child.type
                    in (
                        "statement_block",
                        "else_clause",
                        "switch_body",
                        "switch_case",
                        "switch_default",
                        "finally_clause",
                        "catch_clause",
                        "export_statement",
                    )
                ):
                    self.statement(child)
                else:
                    self.expr(child)

    def import_(self, node: Any) -> None:
        source = node.child_by_field_name("source")
        module = self.module_name(self.expr(source).text or "") if source is not None else ""
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.scopes[0][self.raw(part)] = V(kind="module", name=module)
                elif part.type == "namespace_import":
                    for name in part.named_children:
                        self.scopes[0][self.raw(name)] = V(kind="module", name=module)
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        name = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or name
                        if name is not None and alias is not None:
                            self.scopes[0][self.raw(alias)] = V(
                                kind="module", name=f"{module}.{self.raw(name)}"
                            )

    @staticmethod
    def module_name(text: str) -> str:
        return text.removeprefix("node:").replace("/", ".")

    def bind(self, target: Any, value: V, *, declare: bool = False) -> None:
        if target.type in ("identifier", "shorthand_property_identifier_pattern"):
            name = self.raw(target)
            if not value.parent and value.kind not in ("module", "function"):
                value = replace(value, parent=name)
            if declare:
                self.scopes[-1][name] = value
            else:
                self.set(name, value)
        elif target.type == "object_pattern":
            for part in target.named_children:
                if part.type == "shorthand_property_identifier_pattern":
                    key = self.raw(part)
                    self.bind(part, self.member(value, key), declare=declare)
                elif part.type == "pair_pattern":
                    key_node = part.child_by_field_name("key")
                    inner = part.child_by_field_name("value")
                    key = self.raw(key_node).strip("'\"") if key_node is not None else ""
                    if inner is not None:
                        self.bind(inner, self.member(value, key), declare=declare)
        elif target.type == "array_pattern":
            for index, part in enumerate(target.named_children):
                item = (
                    value.items[index]
                    if value.items and index < len(value.items)
                    else (V(flows=value.flows))
                )
                self.bind(part, item, declare=declare)
        elif target.type in ("member_expression", "subscript_expression"):
            obj = target.child_by_field_name("object")
            if obj is not None:
                self.taint(obj, deep_flows(value))
        elif target.type in ("variable_declarator", "assignment_pattern"):
            left = target.child_by_field_name("left") or target.child_by_field_name("name")
            if left is not None:
                self.bind(left, value, declare=declare)

    def taint(self, node: Any, flows: frozenset[Flow]) -> None:
        if not flows:
            return
        while node is not None and node.type in ("member_expression", "subscript_expression"):
            node = node.child_by_field_name("object")
        if node is None or node.type != "identifier":
            return
        name = self.raw(node)
        for _ in range(8):
            value = self.lookup(name)
            if value is None:
                return
            self.set(name, replace(value, flows=value.flows | flows))
            if not value.parent or value.parent == name:
                return
            name = value.parent

    def member(self, value: V, key: str) -> V:
        if value.kind == "module" and value.name:
            return V(kind="module", name=f"{value.name}.{key}")
        found = value.get(key)
        if found is not None:
            return found
        return V(flows=value.flows)

    def function_body(
        self,
        node: Any,
        args: list[V],
        receiver_flows: frozenset[Flow] = frozenset(),
        this: V | None = None,
    ) -> V:
        if self.depth_calls > 48:
            return UNKNOWN
        self.depth_calls += 1
        parameters = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        scope: dict[str, V] = {}
        self.scopes.append(scope)
        saved, self.returns = self.returns, []
        try:
            params = (
                []
                if parameters is None
                else (
                    [parameters] if parameters.type == "identifier" else parameters.named_children
                )
            )
            for index, param in enumerate(params):
                value = args[index] if index < len(args) else V(flows=receiver_flows)
                if param.type in ("required_parameter", "optional_parameter"):
                    param = param.child_by_field_name("pattern") or param
                if param.type == "assignment_pattern":
                    param = param.child_by_field_name("left") or param
                self.bind(param, replace(value, parent=""), declare=True)
            body = node.child_by_field_name("body")
            if body is None:
                return UNKNOWN
            if body.type == "statement_block":
                self.statements(body.named_children)
                returns = self.returns
                return returns[0] if len(returns) == 1 else merge(*returns)
            return self.expr(body)
        finally:
            self.returns = saved
            self.scopes.pop()
            self.depth_calls -= 1

    # -- expressions

    def expr(self, node: Any) -> V:
        if node is None:
            return UNKNOWN
        self.tick()
        kind = node.type
        if kind in _TRANSPARENT:
            named = [c for c in node.named_children if not c.type.startswith("type")]
            return self.expr(named[0]) if named else UNKNOWN
        if kind == "string":
            text = self.string(node)
            return V(text=text, template=text)
        if kind == "template_string":
            parts: list[V] = []
            for child in node.named_children:
                if child.type == "template_substitution":
                    inner = list(child.named_children)
                    parts.append(self.expr(inner[0]) if inner else UNKNOWN)
                elif child.type == "string_fragment":
                    parts.append(V(text=self.raw(child), template=self.raw(child)))
                elif child.type == "escape_sequence":
                    text = _unescape(self.raw(child))
                    parts.append(V(text=text, template=text))
            return concat(parts)
        if kind == "number":
            try:
                return V(number=int(self.raw(node), 0))
            except ValueError:
                return UNKNOWN
        if kind == "identifier":
            found = self.lookup(self.raw(node))
            if found is not None:
                return found
            return V(kind="global", name=self.raw(node))
        if kind == "member_expression":
            return self.member_expression(node)
        if kind == "subscript_expression":
            obj = self.expr(node.child_by_field_name("object"))
            index = self.expr(node.child_by_field_name("index"))
            if obj.kind == "environ":
                return self.env_variable(index.text or "", node) if index.text else obj
            if obj.kind in ("module", "global") and index.text is not None:
                return V(
                    kind=obj.kind if obj.kind == "module" else "global",
                    name=f"{obj.name}.{index.text}",
                )
            if obj.items is not None and index.number is not None:
                if 0 <= index.number < len(obj.items):
                    return obj.items[index.number]
            if index.text is not None and obj.keys is not None:
                found = obj.get(index.text)
                if found is not None:
                    return found
            return V(flows=deep_flows(obj))
        if kind == "call_expression":
            return self.call(node)
        if kind == "new_expression":
            return self.call(node, new=True)
        if kind == "binary_expression":
            left = self.expr(node.child_by_field_name("left"))
            right = self.expr(node.child_by_field_name("right"))
            operator = node.child_by_field_name("operator")
            if operator is not None and self.raw(operator) == "+":
                return concat([left, right])
            if operator is not None and self.raw(operator) in ("||", "??"):
                chosen = left if left.text is not None or left.kind else right
                return replace(chosen, flows=left.flows | right.flows)
            return merge(left, right)
        if kind in ("assignment_expression", "augmented_assignment_expression"):
            left = node.child_by_field_name("left")
            value = self.expr(node.child_by_field_name("right"))
            if kind == "augmented_assignment_expression" and left is not None:
                value = concat([self.expr(left), value])
            if left is not None:
                self.bind(left, value)
            return value
        if kind == "array":
            items = tuple(self.expr(c) for c in node.named_children[:MAX_ITEMS])
            return V(kind="list", items=items, flows=flows_of(items))
        if kind == "object":
            keys: list[tuple[str, V]] = []
            for pair in node.named_children:
                if pair.type == "pair":
                    key_node = pair.child_by_field_name("key")
                    key = self.raw(key_node).strip("'\"`") if key_node is not None else ""
                    keys.append((key, self.expr(pair.child_by_field_name("value"))))
                elif pair.type == "shorthand_property_identifier":
                    keys.append((self.raw(pair), self.lookup(self.raw(pair)) or UNKNOWN))
                elif pair.type == "spread_element":
                    spread = self.expr(pair.named_children[0]) if pair.named_children else UNKNOWN
                    keys.extend(spread.keys or ())
                    if spread.flows:
                        keys.append(("...", spread))
            return V(kind="object", keys=tuple(keys), flows=flows_of(v for _, v in keys))
        if kind in ("arrow_function", "function_expression", "function"):
            return V(kind="callback", name=f"{node.start_byte}:{node.end_byte}")
        if kind == "ternary_expression":
            self.expr(node.child_by_field_name("condition"))
            left = self.expr(node.child_by_field_name("consequence"))
            right = self.expr(node.child_by_field_name("alternative"))
            chosen = left if left.text is not None else right
            return replace(chosen, flows=left.flows | right.flows)
        if kind == "spread_element":
            return self.expr(node.named_children[0]) if node.named_children else UNKNOWN
        values = [self.expr(c) for c in node.named_children]
        return merge(*values)

    def string(self, node: Any) -> str:
        out: list[str] = []
        for child in node.named_children:
            if child.type == "string_fragment":
                out.append(self.raw(child))
            elif child.type == "escape_sequence":
                out.append(_unescape(self.raw(child)))
        return "".join(out)[:MAX_TEXT]

    def member_expression(self, node: Any) -> V:
        obj_node = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        key = self.raw(prop) if prop is not None else ""
        obj = self.expr(obj_node)
        if obj.kind == "global" and obj.name == "process":
            if key == "env":
                return V(
                    kind="environ",
                    flows=frozenset({Flow("secret", *self.span(node), "the environment")}),
                )
            if key == "argv":
                return V(
                    kind="argv",
                    flows=frozenset({Flow("argument", *self.span(node), "process.argv")}),
                )
        if obj.kind == "environ":
            return self.env_variable(key, node)
        if obj.kind in ("module", "global"):
            return V(kind=obj.kind, name=f"{obj.name}.{key}")
        if obj.kind == "process" and key in ("stdin", "stdout", "stderr"):
            return V(kind="process-stream", parent=obj.parent)
        found = obj.get(key)
        if found is not None:
            return found
        return V(
            flows=obj.flows,
            kind=obj.kind if key in ("body",) else "",
            name=f"{obj.kind}.{key}",
            parent=obj.parent,
        )

    def env_variable(self, name: str, node: Any) -> V:
        if name in ("HOME", "USERPROFILE"):
            return V(text="~", template="~")
        if programs.is_secret_name(name):
            return V(flows=frozenset({Flow("secret-variable", *self.span(node), "$" + name)}))
        return UNKNOWN

    # -- calls

    def callee(self, node: Any) -> tuple[str, V | None]:
        if node.type in _TRANSPARENT and node.named_children:
            return self.callee(node.named_children[0])
        if node.type == "identifier":
            value = self.lookup(self.raw(node))
            if value is not None and value.kind in ("module", "function", "callback"):
                return (value.name if value.kind != "callback" else "callback:" + value.name, value)
            return self.raw(node), value
        if node.type in ("member_expression", "subscript_expression"):
            obj_node = node.child_by_field_name("object")
            if node.type == "member_expression":
                prop = node.child_by_field_name("property")
                key = self.raw(prop) if prop is not None else ""
            else:
                key = self.expr(node.child_by_field_name("index")).text or "?"
            obj = self.expr(obj_node)
            if obj.kind in ("module", "global"):
                return f"{obj.name}.{key}", None
            return f"<{obj.kind}>.{key}", obj
        return "", self.expr(node)

    def looked_up(self, function: Any) -> bool:
        """Whether a callee's module or method name is computed (``require(t[0])[t[1]]``,
        ``cp[name]``) rather than written: how a string table hides what is called."""
        node = function
        while node is not None and node.type in ("member_expression", "subscript_expression"):
            if node.type == "subscript_expression":
                index = node.child_by_field_name("index")
                if index is not None and index.type != "string":
                    return True
            node = node.child_by_field_name("object")
        if node is not None and node.type == "call_expression":
            callee = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if (
                callee is not None
                and self.raw(callee) == "require"
                and arguments is not None
                and arguments.named_children
                and arguments.named_children[0].type != "string"
            ):
                return True
        return False

    def call(self, node: Any, *, new: bool = False) -> V:
        function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
        arguments = node.child_by_field_name("arguments")
        arg_nodes = arguments.named_children if arguments is not None else []
        if function is None:
            return UNKNOWN
        name, receiver = self.callee(function)
        if function.type == "identifier" and self.raw(function) == "require" and arg_nodes:
            module = self.expr(arg_nodes[0])
            if module.text is not None:
                return V(kind="module", name=self.module_name(module.text))
        args = [self.expr(a) for a in arg_nodes if a.type != "comment"]
        if _runs_code(name) and self.looked_up(function):
            self.add(
                "obfuscated-code",
                node,
                f"{name} is called through names looked up at run time, not written out",
            )
        result = self.known(name, receiver, args, node, new)
        receiver_flows = receiver.flows if receiver is not None else frozenset()
        callbacks = [(a, n) for a, n in zip(args, arg_nodes, strict=False) if a.kind == "callback"]
        for _value, callback in callbacks:  # run callbacks with what their host carries
            given = (
                [result]
                if result is not None and result.kind in ("response", "connected", "socket")
                else []
            )
            self.function_body(
                callback,
                given,
                receiver_flows | (result.flows if result is not None else frozenset()),
            )
        if function.type == "identifier" and name in self.functions:
            return self.function_body(self.functions[name], args)
        called = function
        while called.type in _TRANSPARENT and called.named_children:
            called = called.named_children[0]
        if called.type in ("arrow_function", "function_expression", "function"):
            return self.function_body(called, args)  # (async () => { … })()
        if name.startswith("callback:") or (receiver is not None and receiver.kind == "function"):
            return UNKNOWN
        if result is not None:
            return result
        flows = flows_of(args) | receiver_flows
        return V(flows=flows, parent=receiver.parent if receiver is not None else "")

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
        if name in (
            "JSON.stringify",
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
        if base in ("writeFile", "appendFile", "createWriteStream", "copyFile", "cp"):
            content = args[1] if len(args) > 1 else UNKNOWN
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
            risks, output = _shell(text, variables)
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
            inner = analyse_js(code.text, "javascript", self.depth + 1)
            for risk in inner.risks:
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
        risk = judge_sent(sent, start, end)
        if risk is not None:
            self.found.setdefault((risk.check, risk.start, risk.end), risk)
        if any(f.kind == "argument" for f in flows_of(sent.body) | deep_flows(sent.url)):
            self.report.argv_sent.append((start, end))
        if response:
            return V(
                kind="response",
                flows=frozenset({Flow("download", start, end, sent.url.shown()[:120])}),
            )
        return UNKNOWN


def _runs_code(name: str) -> bool:
    """A callee that runs a command or code: ``child_process``'s functions, ``eval``,
    ``Function`` and the ``vm`` module."""
    module, _, method = name.rpartition(".")
    return (
        module == "child_process"
        or name in ("eval", "Function", "global.eval", "globalThis.eval", "window.eval")
        or (module == "vm" and method.startswith(("run", "compile", "Script")))
    )


def _unescape(raw: str) -> str:
    try:
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return raw
