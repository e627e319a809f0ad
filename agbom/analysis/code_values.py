"""Values as the Python and JavaScript analysers see them (:mod:`agbom.analysis.python_code`,
:mod:`agbom.analysis.js_code`): a known string where constant folding can tell it, the data
flows that went into it, what kind of object it is (a socket, a file, an HTTP response), and
the helpers both languages share: placing a finding, decoding a constant, handing a command
line to the shell analysis, judging what a network call sends.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import json
import re
import shlex
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from agbom.analysis import indicators
from agbom.analysis import shell_programs as programs
from agbom.analysis.shell_model import Flow, Limits
from agbom.analysis.shell_risks import Risk

MAX_TEXT = 64 * 1024  # of a folded constant
MAX_ITEMS = 4096  # of a list followed element by element
MAX_DECODE_DEPTH = 3  # decoded code decoded again
SECRET_KINDS = frozenset({"secret", "secret-variable"})
SHELL_LIMITS = Limits(max_bytes=64 * 1024, max_nodes=20_000, max_commands=500, max_parse_ms=200)


@dataclass(frozen=True, slots=True)
class V:
    """One value: ``text`` when constant folding knows it, ``template`` the text with each
    unknown part as ``$__hN`` (the part is ``holes[N]``), the flows that went in, and what
    object it is (``kind``: ``socket``, ``connected``, ``listener``, ``file``, ``writer``,
    ``response``, ``environ``, ``module``, ``function``, ``list``, ``dict``, ...)."""

    text: str | None = None
    flows: frozenset[Flow] = frozenset()
    kind: str = ""
    name: str = ""  # a module's or function's qualified name; a writer's or path's path
    items: tuple[V, ...] | None = None
    keys: tuple[tuple[str, V], ...] | None = None
    number: int | None = None
    template: str | None = None
    holes: tuple[V, ...] = ()
    element: V | None = None  # what iterating over it gives, when items are not known
    parent: str = ""  # the variable this object came from (its mutations taint that one)

    def known(self) -> bool:
        return self.text is not None

    def shown(self) -> str:
        if self.text is not None:
            return self.text
        return self.template if self.template is not None else "…"

    def get(self, key: str) -> V | None:
        for name, value in self.keys or ():
            if name == key:
                return value
        return None


UNKNOWN = V()


@dataclass(slots=True)
class CodeReport:
    """What one file's analysis found: risks (offsets into the text), the places where the
    script's own arguments reach the network (for a SKILL.md that passes it a credential),
    and whether the analysis ran over the whole file."""

    risks: list[Risk] = field(default_factory=list)
    argv_sent: list[tuple[int, int]] = field(default_factory=list)
    complete: bool = True
    parsed: bool = True


def merge(*values: V) -> V:
    """What a value computed from ``values`` carries when nothing more is known: their
    flows."""
    flows: frozenset[Flow] = frozenset()
    for value in values:
        flows |= value.flows
    return V(flows=flows)


def flows_of(values: Iterable[V]) -> frozenset[Flow]:
    out: frozenset[Flow] = frozenset()
    for value in values:
        out |= deep_flows(value)
    return out


def deep_flows(value: V, depth: int = 0) -> frozenset[Flow]:
    """The flows of a value and of everything it holds (list items, dict values)."""
    flows = value.flows
    if depth > 6:
        return flows
    for item in value.items or ():
        flows |= deep_flows(item, depth + 1)
    for _, item in value.keys or ():
        flows |= deep_flows(item, depth + 1)
    if value.element is not None:
        flows |= deep_flows(value.element, depth + 1)
    for hole in value.holes:
        flows |= deep_flows(hole, depth + 1)
    return flows


_RUN_WHAT = {"download": ("download-exec", "downloads"), "decoded": ("decode-exec", "decodes")}


def executed_flow(code: V) -> tuple[str, str, Flow] | None:
    """What running ``code`` runs that was fetched or decoded: ``(check, verb, flow)`` for
    the first such flow in the order of the source (``download-exec``/``downloads``, or
    ``decode-exec``/``decodes``), else None. Shared by the Python and JavaScript analysers."""
    for flow in sorted(deep_flows(code), key=lambda f: (f.start, f.kind, f.what)):
        if flow.kind in _RUN_WHAT:
            check, verb = _RUN_WHAT[flow.kind]
            return check, verb, flow
    return None


def concat(parts: Sequence[V]) -> V:
    """Strings joined: known when every part is, else a template with holes."""
    flows = flows_of(parts)
    if all(p.text is not None for p in parts):
        text = "".join(p.text or "" for p in parts)[:MAX_TEXT]
        return V(text=text, flows=flows, template=text)
    pieces: list[str] = []
    holes: list[V] = []
    for part in parts:
        if part.text is not None:
            pieces.append(part.text)
        elif part.template is not None and len(holes) + len(part.holes) < 64:
            shift = len(holes)
            pieces.append(
                re.sub(r"\$__h(\d+)", lambda m: f"$__h{int(m.group(1)) + shift}", part.template)
            )
            holes.extend(part.holes)
        else:
            pieces.append(f"$__h{len(holes)}")
            holes.append(part)
    return V(flows=flows, template="".join(pieces)[:MAX_TEXT], holes=tuple(holes))


def json_text(value: V) -> V:
    """``json.dumps`` / ``JSON.stringify`` of a value: the JSON text where its parts are
    known, each unknown part a hole (a template), so that what a message says is still read
    when one of its fields is not (a wallet passed as an argument)."""
    holes: list[V] = []

    def dump(item: V, depth: int) -> str:
        if item.text is not None:
            return json.dumps(item.text)
        if item.number is not None:
            return str(item.number)
        if depth < 8 and item.kind == "list" and item.items is not None:
            return "[" + ", ".join(dump(i, depth + 1) for i in item.items[:256]) + "]"
        if depth < 8 and item.keys is not None:
            pairs = (f"{json.dumps(k)}: {dump(v, depth + 1)}" for k, v in item.keys[:256])
            return "{" + ", ".join(pairs) + "}"
        holes.append(item)
        return f"$__h{len(holes) - 1}"

    text = dump(value, 0)[:MAX_TEXT]
    flows = deep_flows(value)
    if not holes:
        return V(text=text, template=text, flows=flows)
    return V(template=text, holes=tuple(holes[:64]), flows=flows)


def with_flow(value: V, flow: Flow) -> V:
    return replace(value, flows=value.flows | {flow})


# -- positions ------------------------------------------------------------------------------------


class Lines:
    """Character offsets of (1-based line, 0-based UTF-8 byte column) positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(index + 1)
        self._ascii = text.isascii()

    def offset(self, line: int, byte_col: int) -> int:
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        start = self.starts[line - 1]
        if self._ascii:
            return min(start + byte_col, len(self.text))
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        raw = self.text[start:end].encode("utf-8", "surrogatepass")[:byte_col]
        return start + len(raw.decode("utf-8", "ignore"))

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


# -- decoding -------------------------------------------------------------------------------------


def decode(function: str, text: str, argument: str = "") -> str | None:
    """What a decoder gives for a constant input, or ``None`` (not a decoder it knows, not
    decodable, not text)."""
    text = text[:MAX_TEXT]
    name = function.rsplit(".", 1)[-1].lower()
    try:
        if name in (
            "b64decode",
            "standard_b64decode",
            "decodebytes",
            "a2b_base64",
            "atob",
            "frombase64string",
            "decodestring",
        ):
            raw = re.sub(r"\s+", "", text)
            data = base64.b64decode(raw + "=" * (-len(raw) % 4))
        elif name == "urlsafe_b64decode":
            raw = re.sub(r"\s+", "", text)
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        elif name == "b32decode":
            data = base64.b32decode(text + "=" * (-len(text) % 8), casefold=True)
        elif name in ("b16decode", "unhexlify", "a2b_hex", "fromhex"):
            data = binascii.unhexlify(re.sub(r"\s+", "", text))
        elif name in ("b85decode",):
            data = base64.b85decode(text)
        elif name in ("a85decode",):
            data = base64.a85decode(text)
        elif name == "decode" and argument:
            codec = argument.lower().replace("-", "_")
            if codec in ("rot13", "rot_13"):
                return codecs.decode(text, "rot13")
            if codec in ("hex", "hex_codec"):
                data = binascii.unhexlify(text)
            elif codec in ("base64", "base64_codec"):
                data = base64.b64decode(text + "=" * (-len(text) % 4))
            else:
                return None
        elif name in ("decompress",):
            data = zlib.decompressobj(wbits=47).decompress(text.encode("latin-1"), MAX_TEXT)
        else:
            return None
    except (ValueError, binascii.Error, zlib.error, UnicodeEncodeError):
        return None
    return as_text(data[:MAX_TEXT])


def as_text(data: bytes) -> str:
    """Bytes as the analysers keep them: UTF-8 where it decodes, else one character per byte
    (so that bytes can be decoded again, e.g. zlib of base64)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def looks_like_code(text: str) -> bool:
    """Decoded text that reads as code or a command (letters, spaces, punctuation), not as
    binary or data."""
    if not text or len(text) < 4:
        return False
    printable = sum(1 for ch in text[:4096] if ch.isprintable() or ch in "\n\t\r")
    return printable / min(len(text), 4096) > 0.95


# -- commands handed to the shell ---------------------------------------------------------------


def shell_text(value: V, variables: dict[str, tuple[str, frozenset[Flow]]]) -> str | None:
    """A command-line string as shell text, each unknown part a variable set in
    ``variables``; ``None`` when nothing of it is known."""
    if value.text is not None:
        return value.text
    if value.template is None:
        if value.flows:
            name = f"__v{len(variables)}"
            variables[name] = ("$" + name, deep_flows(value))
            return f'"${name}"'
        return None
    text = value.template
    for index, hole in enumerate(value.holes):
        name = f"__v{len(variables)}"
        variables[name] = ("$" + name, deep_flows(hole))
        text = text.replace(f"$__h{index}", "${" + name + "}", 1)
    return text


def saved_file(files: dict[str, frozenset[Flow]], value: V) -> V:
    """``value`` carrying what was written to the file it names (``files``: path -> flows of
    what an analysis saw written there), if anything: a script argument run after a download
    was saved to it."""
    written = files.get(value.text or "") if value.text else None
    if not written:
        return value
    return V(flows=value.flows | written, kind="saved-file", name=value.text or "")


def argv_text(items: Sequence[V], variables: dict[str, tuple[str, frozenset[Flow]]]) -> str:
    """A list of arguments (``subprocess.run([...])``) as one shell command line."""
    words: list[str] = []
    for item in items[:256]:
        if item.text is not None:
            words.append(shlex.quote(item.text))
        elif item.template is not None:
            inner = shell_text(item, variables) or ""
            words.append('"' + inner.replace('"', '\\"') + '"')
        else:
            name = f"__v{len(variables)}"
            shown = item.name if item.kind == "saved-file" else "$" + name
            variables[name] = (shown, deep_flows(item))
            words.append(f'"${name}"')
    return " ".join(words)


def judge_shell(
    text: str,
    variables: dict[str, tuple[str, frozenset[Flow]]],
    files: dict[str, frozenset[Flow]] | None = None,
    at: tuple[int, int] = (0, 0),
) -> tuple[list[Risk], frozenset[Flow]]:
    """The risks and behaviours the shell analysis finds in a command line an analyser
    built (``variables``: see :func:`shell_text`), and the flows of what it prints.
    ``files`` (path: flows of what was written there) is read, and updated with what the
    command line writes: one ``curl -o F`` and a later ``bash F`` meet. Flows that start in
    the command line are placed ``at`` the call that runs it (their offsets are the command
    line's, not the file's)."""
    from agbom.analysis.shell import analyse_with
    from agbom.analysis.shell_behaviours import behaviours
    from agbom.analysis.shell_risks import risks

    analysis = analyse_with(text, variables, SHELL_LIMITS, files)
    given: set[Flow] = set()
    for _, flows in variables.values():
        given |= flows
    for flows in (files or {}).values():
        given |= flows

    def placed(flows: frozenset[Flow]) -> frozenset[Flow]:
        return frozenset(f if f in given else Flow(f.kind, *at, f.what) for f in flows)

    if files is not None:
        files.update((path, placed(flows)) for path, flows in analysis.files if path[:1] != "\0")
    return [*risks(analysis), *behaviours(analysis)], placed(analysis.output)


# -- what a network call sends -------------------------------------------------------------------


@dataclass(slots=True)
class Sent:
    """A network call: where to (``url`` or a host), the values sent as data, the values of
    its headers or credentials."""

    how: str
    url: V = UNKNOWN
    body: list[V] = field(default_factory=list)
    headers: list[V] = field(default_factory=list)
    dns: bool = False  # a look-up: the name itself is what is sent


def judge_sent(sent: Sent, start: int, end: int) -> Risk | None:
    """``secret-exfiltration`` when a credential's content, the environment, or a secret
    variable meant for another host is sent; ``data-exfiltration`` for the user's own files
    or a look-up of a name built from data; else ``None``."""
    host = _host(sent.url)
    if host is not None and indicators.is_loopback(host):
        return None
    url_flows = deep_flows(sent.url)
    body_flows = flows_of(sent.body) | url_flows
    header_flows = flows_of(sent.headers)
    for flow in sorted(body_flows, key=lambda f: (f.start, f.what)):
        if flow.kind == "secret":
            return Risk(
                "exfiltration",
                start,
                end,
                f"{sent.how} sends {_what(flow)}",
                flow.what,
                _place(flow),
            )
    for flow in sorted(body_flows | header_flows, key=lambda f: (f.start, f.what)):
        if flow.kind != "secret-variable":
            continue
        vendor = indicators.vendor_of(flow.what)
        in_body = flow in body_flows
        if host is not None and vendor is not None and indicators.host_serves(vendor, host):
            continue
        if in_body and (host is None or vendor is not None):
            where = f" to {host}" if host else ""
            return Risk(
                "exfiltration",
                start,
                end,
                f"{sent.how} sends {_what(flow)}{where}",
                flow.what,
                _place(flow),
            )
        if not in_body and host is not None and vendor is not None:
            return Risk(
                "exfiltration",
                start,
                end,
                f"{sent.how} sends {_what(flow)} to {host}, not {vendor}'s host",
                flow.what,
                _place(flow),
            )
    for flow in sorted(body_flows, key=lambda f: (f.start, f.what)):
        if flow.kind in ("user-data", "user-path"):
            return Risk(
                "data-exfiltration",
                start,
                end,
                f"{sent.how} sends the user's files ({flow.what})",
                flow.what,
                _place(flow),
            )
    if sent.dns:
        name = sent.url
        if (
            name.text is None
            and (name.flows or name.template)
            and re.search(r"\.[a-z0-9-]+\.[a-z]{2,}\.?$", name.shown(), re.IGNORECASE)
        ):
            return Risk(
                "data-exfiltration",
                start,
                end,
                f"{sent.how} looks up a name built from data: {name.shown()[:60]}",
            )
    return None


def judge_message(sent: Sent) -> str | None:
    """What a message sent on a plain socket says it is: the stratum mining protocol."""
    for value in sent.body:
        said = value.text if value.text is not None else value.template
        method = indicators.stratum_method(said) if said else None
        if method is not None:
            where = sent.url.text or "a pool"
            return f"speaks the stratum mining protocol ({method}) to {where}"
    return None


def record_send(
    sent: Sent,
    start: int,
    end: int,
    report: CodeReport,
    found: dict[tuple[str, int, int], Risk],
    said_by_miner: Callable[[str], None],
) -> None:
    """One network call judged the same way in Python and JavaScript: a stratum message is
    passed to ``said_by_miner`` (the caller places it on its node), the call's risk is kept
    in ``found`` once per place, and an argument sent is noted in ``report``."""
    said = judge_message(sent) if sent.how == "a socket" else None
    if said is not None:
        said_by_miner(said)
    risk = judge_sent(sent, start, end)
    if risk is not None:
        found.setdefault((risk.check, risk.start, risk.end), risk)
    if any(f.kind == "argument" for f in flows_of(sent.body) | deep_flows(sent.url)):
        report.argv_sent.append((start, end))


def _place(flow: Flow) -> int:
    return flow.start if flow.end > flow.start else -1


def _what(flow: Flow) -> str:
    if flow.kind == "secret-variable":
        return f"the secret {flow.what}"
    if flow.what == "the environment":
        return "the environment"
    return f"the content of {flow.what}"


def _host(url: V) -> str | None:
    text = url.text if url.text is not None else url.template
    if not text:
        return None
    host = indicators.host_of(text)
    if host is None or "$" in host:
        if "://" not in text and re.match(r"^[a-z0-9.-]+\.[a-z]{2,}$", text, re.IGNORECASE):
            return text.lower()  # a bare host name (http.client, socket)
        return None
    return host


def credential_flow(path: V, start: int, end: int, *, content: bool = True) -> Flow | None:
    """The flow a read of ``path`` brings in: ``secret`` for a credential store (or a path
    that came from one), ``user-data`` for the user's documents; ``None`` otherwise."""
    for flow in sorted(path.flows, key=lambda f: (f.start, f.what)):
        if flow.kind == "secret-path":
            return Flow("secret", start, end, flow.what)
        if flow.kind == "user-path":
            return Flow("user-data", start, end, flow.what)
    text = path.text
    if text is None:
        return None
    if programs.is_credential_path(text) or indicators.is_credential_store(text):
        return Flow("secret", start, end, text)
    if indicators.is_user_data(text) or any(
        text.startswith(p) for p in ("~/Documents/", "~/Desktop/", "~/Downloads/")
    ):
        return Flow("user-data", start, end, text)
    del content
    return None


_WALKED = ("secret-path", "user-path", "home-path")


def path_flows(path: V, start: int, end: int) -> frozenset[Flow]:
    """Flows a path listing (glob, walk) gives each path it lists: ``secret-path`` under a
    credential store, ``user-path`` under the home folder itself or its documents,
    ``home-path`` under another of the user's own folders (``~/projects``) or the root."""
    text = path.text
    if text is None:
        return frozenset(f for f in path.flows if f.kind in _WALKED)
    if programs.is_credential_path(text.rstrip("*/")) or indicators.is_credential_store(text):
        return frozenset({Flow("secret-path", start, end, text)})
    if indicators.is_user_data(text) or indicators.is_user_data(text.rsplit("/", 1)[0]):
        return frozenset({Flow("user-path", start, end, text)})
    if _users_tree(text):
        return frozenset({Flow("home-path", start, end, text)})
    return frozenset()


def _users_tree(text: str) -> bool:
    """A folder of the user's own under the home folder (not a hidden one: tools keep their
    caches and settings there), or the file system's root."""
    text = text.replace("\\", "/")
    if text.rstrip("*") in ("/", "/**/"):
        return True
    if not text.startswith("~/"):
        return False
    first = text[2:].split("/", 1)[0]
    return bool(first) and not first.startswith(".")


# Build output and caches: a walk that removes these is cleaning, wherever it walks.
_ARTEFACTS = re.compile(
    r"(?:^|/|\*)(?:node_modules|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.tox"
    r"|\.cache|build|dist|target|coverage|\.next|\.turbo|\.gradle|\.DS_Store|Thumbs\.db)(?:/|$)"
    r"|\.(?:pyc|pyo|o|obj|class|log|tmp|bak|swp)$|~$",
    re.IGNORECASE,
)


def _walked(path: V) -> Flow | None:
    return next(
        (f for f in sorted(path.flows, key=lambda f: (f.start, f.what)) if f.kind in _WALKED),
        None,
    )


def judge_overwrite(path: V, content: V) -> str | None:
    """Writing one constant (most often nothing) over each file a walk of the user's folders
    lists: every file's content destroyed. A rewrite computed from each file (a formatter)
    is not constant, and not judged here."""
    walked = _walked(path)
    if walked is None or walked.kind == "secret-path" or content.text is None:
        return None
    what = "empties" if not content.text.strip() else "overwrites with the same text"
    return f"{what} every file it walks under {walked.what}"


# -- what a write, a removal or a mode change does -----------------------------------------------


def judge_write(path: str, content: V, source_text: str) -> list[tuple[str, str]]:
    """(check, detail) for writing ``content`` to ``path``: a place that runs again by itself,
    a privileged file, a system file, the agent's instructions or settings."""
    if not path:
        return []
    out: list[tuple[str, str]] = []
    text = content.text or content.template or ""
    flows = deep_flows(content)
    if indicators.is_persistence_path(path):
        out.append(("persistence", f"writes {path}, which runs again by itself"))
    elif indicators.is_startup_file(path) and (
        indicators.risky_startup_line(text) or any(f.kind == "download" for f in flows)
    ):
        out.append(("persistence", f"adds a line that fetches or sends to {path}"))
    if indicators.is_privileged_path(path):
        out.append(("privilege-escalation", f"writes {path}"))
    elif indicators.is_system_file(path):
        out.append(("file-tampering", f"rewrites the system file {path}"))
    if indicators.is_agent_file(path):
        if indicators.is_agent_settings(path) and (
            indicators.AGENT_BYPASS.search(text)
            or (content.text is None and indicators.AGENT_BYPASS.search(source_text))
        ):  # what is written, or, where it is not all known, what the file says
            out.append(
                ("privilege-escalation", f"writes {path} so that the agent acts without asking")
            )
        else:
            out.append(("file-tampering", f"rewrites {path}, the agent's instructions or settings"))
    return out


def judge_removal(path: V, *, whole: bool) -> str | None:
    """What removing ``path`` destroys, when it is the home, a system, a credential or an
    agent folder, the user's documents, or a file walked from them."""
    text = path.text or ""
    walked = any(f.kind == "user-path" for f in path.flows) or any(
        f.kind == "home-path" and _ARTEFACTS.search(f.what) is None for f in path.flows
    )
    place = text.rstrip("/")
    if place.startswith("~/") and place.count("/") == 1 and place[2:].startswith(".") and whole:
        if indicators.is_credential_store(place) or place[2:] in (".ssh", ".gnupg", ".config"):
            return f"removes {text}"
    dangerous = (
        place in ("~", "/", "/home", "/Users", "/etc", "/usr", "/var")
        or (indicators.is_credential_store(place) and place.startswith(("~", "/")))
        or indicators.is_user_data(place)
        or (indicators.is_agent_file(place) and whole)
    )
    if dangerous or walked:
        return f"removes {text or 'the user files it walked'}"
    return None


def judge_mode(path: str, mode: int | None) -> str | None:
    if mode is None:
        return None
    if mode & 0o6000:
        return f"chmod {oct(mode)} sets setuid or setgid"
    if mode & 0o002 and (indicators.is_privileged_path(path) or indicators.is_system_file(path)):
        return f"chmod {oct(mode)} makes {path} writable by every user"
    return None
