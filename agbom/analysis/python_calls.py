"""The calls the Python analysis knows by name, and what each gives back: the table
between :mod:`agbom.analysis.python_code`'s walker, which evaluates the callee and the
arguments, and :mod:`agbom.analysis.python_sinks`, which judges what reaches the outside.

- constants folded through calls: ``chr``, ``bytes`` of numbers, ``str`` methods
  (``join``, ``replace``, ``format``, ``split``, ...), decoders (``base64``, ``bytes.fromhex``,
  ``codecs`` rot13, ``zlib``), ``int(s, base)``;
- names looked up at run time: ``__import__``, ``importlib.import_module``, ``getattr``;
- paths, the environment and the user's files: ``pathlib``/``os.path``, ``os.environ``,
  ``glob``/``os.walk``/``rglob`` listings, ``open`` for reading or writing, copies, archives,
  removals, ``chmod``/``chown``, Windows Run keys;
- the network, execution and sockets, handed on to the sinks.

A table of names, kept apart from the walker so that adding a library's call does not
touch how statements and expressions are followed.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from agbom.analysis import shell_programs as programs
from agbom.analysis.code_values import (
    MAX_ITEMS,
    MAX_TEXT,
    UNKNOWN,
    V,
    concat,
    decode,
    deep_flows,
    flows_of,
    json_text,
    merge,
    path_flows,
)
from agbom.analysis.python_sinks import PythonSinks
from agbom.analysis.shell_model import Flow

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
_TEMP_FILES = frozenset(
    {"tempfile.mktemp", "tempfile.mkstemp", "tempfile.NamedTemporaryFile", "os.tempnam"}
)


def _written_out(nodes: list[ast.expr]) -> bool:
    """The name arguments are string literals in the source (``__import__("os")``)."""
    return all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in nodes)


def runs_code(name: str) -> bool:
    """A callee that runs a command or code."""
    return name in ("eval", "exec", "compile", "os.system", "os.popen", "builtins.eval",
                    "builtins.exec") or name.startswith(
        ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "pty.spawn", "commands.")
    )  # fmt: skip


class PythonCalls(PythonSinks):
    """The calls known by name (:meth:`known_call`). The walker of
    :mod:`agbom.analysis.python_code` supplies :meth:`taint` and :meth:`rebind`."""

    def __init__(self, text: str, depth: int) -> None:
        super().__init__(text, depth)
        self.looked_up: set[str] = set()  # module and function names computed, not written

    def taint(self, node: ast.expr, flows: frozenset[Flow]) -> None:
        """A value stored into an object: the object, and what it came from, carry it."""
        raise NotImplementedError

    def rebind(self, name: str, value: V) -> None:
        """The variable ``name`` now holds ``value`` (a socket once connected)."""
        raise NotImplementedError

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

    def env_variable(self, name: str, node: ast.AST, default: V | None = None) -> V:
        if name in ("HOME", "USERPROFILE"):
            return V(text="~", template="~")
        if programs.is_secret_name(name):
            flow = Flow("secret-variable", *self.span(node), "$" + name)
            return V(flows=frozenset({flow}))
        if default is not None:
            return default
        return UNKNOWN

    def known_call(
        self, name: str, receiver: V | None, args: list[V], kwargs: dict[str, V], node: ast.Call
    ) -> V | None:
        method = name.rsplit(".", 1)[-1]
        first = args[0] if args else kwargs.get("url") or kwargs.get("args") or UNKNOWN
        # -- strings and constants
        if name == "chr" and first.number is not None and 0 <= first.number < 0x110000:
            return V(text=chr(first.number), template=chr(first.number), kind="chr")
        if name == "chr" and args:  # a code computed at run time: a hand-written decoder
            made = Flow("decoded", *self.span(node), "chr() of computed codes")
            return V(kind="chr", flows=first.flows | {made})
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
        if name in ("json.dumps", "simplejson.dumps", "ujson.dumps", "orjson.dumps") and args:
            return json_text(first)
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
            self.wrote(receiver.text or "", first, node, target=receiver)
            return UNKNOWN
        if receiver is not None and receiver.kind == "writer" and method in ("write", "writelines"):
            self.wrote(receiver.name, first, node, target=receiver)
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
                self.rebind(receiver.parent, replace(receiver, kind="connected", text=host.text))
            return UNKNOWN
        if receiver is not None and receiver.kind == "socket" and method in ("bind", "listen"):
            if receiver.parent:
                self.rebind(receiver.parent, replace(receiver, kind="listener"))
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
