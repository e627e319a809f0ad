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

This module holds the parse and the walker (statements, expressions, scopes, callbacks); the
calls known by name, and what reaching a sink means, are in :mod:`agbom.analysis.js_calls`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from agbom.analysis import shell_programs as programs
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
from agbom.analysis.js_calls import JsCalls, runs_code
from agbom.analysis.shell_model import Flow
from agbom.analysis.shell_risks import Risk

MAX_NODES = 200_000
MAX_PARSE_MS = 1000
MAX_SOURCE = 1024 * 1024
_LOCAL = threading.local()


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


_EVENTFUL = frozenset({"response", "connected", "socket", "clientrequest"})
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "as_expression", "non_null_expression", "satisfies_expression",
     "type_assertion", "await_expression"}
)  # fmt: skip


class _Walker(JsCalls):
    """Statements and expressions followed, with scopes, hoisted functions and callbacks;
    the calls it meets are looked up in :class:`~agbom.analysis.js_calls.JsCalls`."""

    def __init__(self, text: str, data: bytes, language: str, depth: int) -> None:
        super().__init__(text, data, language, depth)
        self.scopes: list[dict[str, V]] = [{}]
        self.nodes = 0
        self.functions: dict[str, Any] = {}
        self.returns: list[V] = []
        self.depth_calls = 0
        self.statement_depth = 0
        # event handlers registered in the statement being walked: (node, given, flows, depth)
        self.pending: list[tuple[Any, list[V], frozenset[Flow], int]] = []

    def nested_js(self, text: str) -> list[Risk]:
        return analyse_js(text, "javascript", self.depth + 1).risks

    # -- bookkeeping

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
        """One statement, then the event handlers it registered."""
        self.statement_depth += 1
        try:
            self.walk_statement(node)
        finally:
            self.statement_depth -= 1
        while self.pending and self.pending[-1][3] > self.statement_depth:
            callback, given, carried, _ = self.pending.pop()
            self.function_body(callback, given, carried)

    def walk_statement(self, node: Any) -> None:
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
        if runs_code(name) and self.looked_up(function):
            self.add(
                "obfuscated-code",
                node,
                f"{name} is called through names looked up at run time, not written out",
            )
        result = self.known(name, receiver, args, node, new)
        receiver_flows = receiver.flows if receiver is not None else frozenset()
        callbacks = [(a, n) for a, n in zip(args, arg_nodes, strict=False) if a.kind == "callback"]
        returned: frozenset[Flow] = frozenset()  # what the callbacks give back (map, reduce)
        for _value, callback in callbacks:  # run callbacks with what their host carries
            carried = receiver_flows | (result.flows if result is not None else frozenset())
            if result is not None and result.kind in _EVENTFUL:
                # an event's handler runs later: once the statement has bound the connection
                # it names (const s = net.connect(…, () => s.write(…)))
                given = [result] if result.kind != "clientrequest" else []
                self.pending.append((callback, given, carried, self.statement_depth))
                continue
            returned |= deep_flows(self.function_body(callback, [], carried))
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
        flows = flows_of(args) | receiver_flows | returned
        return V(flows=flows, parent=receiver.parent if receiver is not None else "")


def _unescape(raw: str) -> str:
    try:
        return raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (UnicodeDecodeError, UnicodeEncodeError):
        return raw
