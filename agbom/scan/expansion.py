"""Which changes of a pinned surface widen what it can do: an MCP server's tool set, a skill's
declared capabilities.

Each change gets one of three classes, with the reasons that decided it:

- ``expansion``: a new tool; a tool whose name, description or schema now names a capability
  class it did not (``process.execute``, ``fs.write``, ``net.http``, ...); a new network host
  (a URL or domain name) or a new secret (an environment variable or header named like a
  credential) in what the model is told; a new parameter, or a parameter accepting values it
  did not (a new enum value, a wider type); an instruction to the model that agbom's content
  checks flag (instruction override, hiding from the user, invisible characters); a skill's new
  allowed tool or capability. A change agbom cannot compare (a pin that kept no definitions) is
  an expansion too: fail closed.
- ``narrowing``: a tool removed, a parameter removed or newly required, values no longer
  accepted, a capability no longer declared.
- ``cosmetic``: everything else: whitespace, wording that names nothing new, titles, examples,
  descriptions inside a schema, reordering, the package's version.

The capability words are a fixed, documented table (docs/scan.md, "Capability expansion"); a
change they do not recognise as new is cosmetic, so the table errs towards calling wording
cosmetic only when it names no class, host, secret or instruction that was not there. Pure
functions: nothing is read or written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agbom.inventory.signals import DRIFT_CLASSES

COSMETIC, NARROWING, EXPANSION = DRIFT_CLASSES
CLASSES = DRIFT_CLASSES
_RANK = {COSMETIC: 0, NARROWING: 1, EXPANSION: 2}

# Words that say a tool does something of a capability class (matched as whole words,
# case-insensitively, on the tool's name split at _ - . and case changes, its description and
# its parameters' names and descriptions).
CAPABILITY_WORDS: Mapping[str, tuple[str, ...]] = {
    "process.execute": ("exec", "execute", "executes", "execution", "shell", "bash", "command",
                        "commands", "subprocess", "spawn", "terminal", "eval", "script",
                        "scripts", "run_command", "powershell", "cmd"),
    "fs.write": ("write", "writes", "overwrite", "delete", "deletes", "remove", "removes",
                 "rename", "move", "moves", "mkdir", "create_file", "edit", "edits", "modify",
                 "modifies", "append", "save", "saves", "upload", "uploads", "chmod", "unlink",
                 "truncate"),
    "net.http": ("http", "https", "url", "urls", "fetch", "fetches", "download", "downloads",
                 "webhook", "webhooks", "browse", "crawl", "scrape", "curl"),
    "net.send": ("send", "sends", "email", "emails", "mail", "publish", "publishes", "notify",
                 "sms", "tweet", "slack"),
    "db.write": ("insert", "upsert", "drop", "sql", "migrate", "truncate"),
    "secrets.read": ("secret", "secrets", "credential", "credentials", "password",
                     "passwords", "apikey", "api_key", "keychain", "private_key"),
    "payment": ("pay", "payment", "payments", "charge", "refund", "transfer", "invoice",
                "purchase", "wallet"),
}  # fmt: skip
_WORD_CLASS = {word: cls for cls, words in CAPABILITY_WORDS.items() for word in words}
_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_URL_HOST = re.compile(r"\b[a-z][a-z0-9+.-]*://([^\s/:?#\"'<>`]+)", re.IGNORECASE)
_DOMAIN = re.compile(
    r"\b((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|dev|ai|app|co|cloud|"
    r"xyz|sh|me|info|biz|ru|cn|tk|top|site|online|gg|so|us|uk|de)\b)",
    re.IGNORECASE,
)
_SECRET_NAME = re.compile(
    r"\b([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|"
    r"CREDENTIALS?)[A-Z0-9_]*)\b"
)
# What a schema may change without changing what the tool accepts.
_WORDING_KEYS = frozenset({"description", "title", "examples", "example", "$comment",
                           "default", "markdownDescription", "deprecated", "$schema",
                           "$id"})  # fmt: skip
# Constraints: one that appears narrows what is accepted, one that goes widens it.
_CONSTRAINTS = frozenset({"pattern", "format", "minLength", "maxLength", "minimum", "maximum",
                          "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
                          "uniqueItems", "multipleOf", "const", "minProperties",
                          "maxProperties"})  # fmt: skip
MAX_TEXT = 64 * 1024  # of one tool's text read for words, hosts and secrets


@dataclass(frozen=True, slots=True)
class ClassifiedChange:
    """One change and its class: ``tool`` (or capability) is what changed, ``change`` how
    (``added``, ``removed``, ``renamed``, ``description``, ``schema``, ``capabilities``)."""

    tool: str
    change: str
    cls: str
    reasons: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "change": self.change, "class": self.cls,
                "reasons": list(self.reasons)}  # fmt: skip


def overall(changes: Iterable[ClassifiedChange]) -> str:
    """The class of a set of changes: the widest of them (``cosmetic`` for none)."""
    return max((c.cls for c in changes), key=_RANK.__getitem__, default=COSMETIC)


# -- what a tool's text says --------------------------------------------------------------------


def _words(text: str) -> set[str]:
    spaced = _CAMEL.sub(" ", text)
    out = {w.lower() for w in _SPLIT.split(spaced) if w}
    # snake_case names are also tried whole (run_command, create_file, api_key)
    out.update(w.lower() for w in re.findall(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+", text))
    return out


def _schema_texts(schema: Any, depth: int = 0) -> Iterable[str]:
    if depth > 16:
        return
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            yield from (str(name) for name in properties)
        for key, value in schema.items():
            if key in ("description", "title") and isinstance(value, str):
                yield value
            elif key == "enum" and isinstance(value, list):
                yield from (str(v) for v in value if isinstance(v, str))
            else:
                yield from _schema_texts(value, depth + 1)
    elif isinstance(schema, list):
        for item in schema[:256]:
            yield from _schema_texts(item, depth + 1)


@dataclass(frozen=True, slots=True)
class _Said:
    classes: frozenset[str]
    hosts: frozenset[str]
    secrets: frozenset[str]
    instructions: frozenset[str]


def _said(tool: Mapping[str, Any]) -> _Said:
    name = str(tool.get("name") or "")
    description = tool.get("description") if isinstance(tool.get("description"), str) else ""
    text = "\n".join([name, str(description), *_schema_texts(tool.get("inputSchema"))])
    text = text[:MAX_TEXT]
    classes = {_WORD_CLASS[w] for w in _words(text) if w in _WORD_CLASS}
    hosts = {m.group(1).lower().rstrip(".") for m in _URL_HOST.finditer(text)}
    hosts.update(m.group(1).lower() for m in _DOMAIN.finditer(text))
    secrets = {m.group(1) for m in _SECRET_NAME.finditer(text)}
    return _Said(frozenset(classes), frozenset(hosts), frozenset(secrets),
                 _instructions(str(description)))  # fmt: skip


def _instructions(text: str) -> frozenset[str]:
    """The content checks that flag what a description tells the model."""
    if not text:
        return frozenset()
    from agbom.scan.content import check_text

    wanted = {"instruction-override", "hide-from-user", "invisible-characters",
              "secret-exfiltration", "download-to-shell", "decode-and-execute"}  # fmt: skip
    return frozenset(f.check for f in check_text(text[:MAX_TEXT], "description")
                     if f.check in wanted)  # fmt: skip


def _new_in(before: _Said, after: _Said) -> list[str]:
    reasons = [f"now names capability class {c}" for c in sorted(after.classes - before.classes)]
    reasons += [f"now names network host {h}" for h in sorted(after.hosts - before.hosts)]
    reasons += [f"now names secret {s}" for s in sorted(after.secrets - before.secrets)]
    reasons += [f"now tells the model something the content checks flag ({c})"
                for c in sorted(after.instructions - before.instructions)]  # fmt: skip
    return reasons


# -- schemas -------------------------------------------------------------------------------------


def _structure(schema: Any, depth: int = 0) -> Any:
    """``schema`` without its wording (descriptions, titles, examples, defaults)."""
    if depth > 32:
        return None
    if isinstance(schema, Mapping):
        return {k: _structure(v, depth + 1) for k, v in schema.items() if k not in _WORDING_KEYS}
    if isinstance(schema, list):
        return [_structure(v, depth + 1) for v in schema]
    return schema


def _required(schema: Mapping[str, Any]) -> set[str]:
    listed = schema.get("required")
    return {str(n) for n in listed} if isinstance(listed, list) else set()


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {str(k) for k in kind}
    return set()


def _schema_changes(
    before: Any, after: Any, where: str = "", notes: list[str] | None = None
) -> tuple[list[str], list[str]]:
    """(widening reasons, narrowing reasons) between two input schemas; what changed without
    either goes to ``notes``."""
    notes = [] if notes is None else notes
    wide: list[str] = []
    narrow: list[str] = []
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        if _structure(before) != _structure(after):
            (wide if after is not None else narrow).append(
                f"input schema{where} {'replaced' if after is not None else 'removed'}"
            )
        return wide, narrow
    old_props = before.get("properties") if isinstance(before.get("properties"), Mapping) else {}
    new_props = after.get("properties") if isinstance(after.get("properties"), Mapping) else {}
    assert isinstance(old_props, Mapping) and isinstance(new_props, Mapping)
    wide.extend(f"new parameter {where}{name}" for name in sorted(set(new_props) - set(old_props)))
    narrow.extend(
        f"parameter {where}{name} removed" for name in sorted(set(old_props) - set(new_props))
    )
    for name in sorted(set(old_props) & set(new_props)):
        sub_wide, sub_narrow = _schema_changes(
            old_props[name], new_props[name], f"{where}{name}.", notes
        )
        wide += sub_wide
        narrow += sub_narrow
    old_req = (
        set(before.get("required") or []) if isinstance(before.get("required"), list) else set()
    )
    new_req = set(after.get("required") or []) if isinstance(after.get("required"), list) else set()
    narrow += [f"parameter {where}{n} now required" for n in sorted(new_req - old_req)]
    narrow += [f"parameter {where}{n} now optional" for n in sorted(old_req - new_req)]
    old_enum, new_enum = before.get("enum"), after.get("enum")
    if isinstance(old_enum, list) and isinstance(new_enum, list):
        added = [v for v in new_enum if v not in old_enum]
        if added:
            wide.append(f"{where.rstrip('.') or 'input'} accepts new values {added[:5]}")
        if [v for v in old_enum if v not in new_enum]:
            narrow.append(f"{where.rstrip('.') or 'input'} accepts fewer values")
    elif isinstance(old_enum, list) and new_enum is None:
        wide.append(f"{where.rstrip('.') or 'input'} no longer limited to fixed values")
    old_types, new_types = _types(before), _types(after)
    if old_types and new_types != old_types:
        if not old_types <= new_types and new_types <= old_types:
            narrow.append(f"{where.rstrip('.') or 'input'} accepts fewer types")
        elif new_types - old_types or not new_types:
            wide.append(f"{where.rstrip('.') or 'input'} accepts types "
                        f"{sorted(new_types) or ['any']}")  # fmt: skip
    if (
        before.get("additionalProperties") is False
        and after.get("additionalProperties") is not False
    ):
        # Schema generators drop "additionalProperties: false" between releases (zod 3 to 4)
        # while the server keeps refusing what it does not know: no parameter is named.
        notes.append(f"{where.rstrip('.') or 'input'} no longer says it refuses other "
                     "parameters; names no new one")  # fmt: skip
    elif (
        before.get("additionalProperties") is not False
        and after.get("additionalProperties") is False
    ):
        narrow.append(f"{where.rstrip('.') or 'input'} refuses other parameters now")
    here = where.rstrip(".") or "input"
    old_items, new_items = before.get("items"), after.get("items")
    if isinstance(old_items, Mapping) and isinstance(new_items, Mapping):
        sub_wide, sub_narrow = _schema_changes(old_items, new_items, f"{where}items.", notes)
        wide += sub_wide
        narrow += sub_narrow
    for key in sorted(_CONSTRAINTS & (set(before) | set(after))):
        if key not in after:
            wide.append(f"{here} no longer constrained by {key}")
        elif key not in before:
            narrow.append(f"{here} now constrained by {key}")
        elif _structure(before[key]) != _structure(after[key]):
            wide.append(f"{here} {key} changed")  # which way it goes is not weighed
    covered = {"properties", "required", "enum", "type", "additionalProperties", "items",
               *_CONSTRAINTS}  # fmt: skip
    rest_before = {k: v for k, v in before.items() if k not in covered}
    rest_after = {k: v for k, v in after.items() if k not in covered}
    if _structure(rest_before) != _structure(rest_after):
        # Keywords agbom does not weigh one by one (anyOf, oneOf, $ref, ...): a change among
        # them may widen what is accepted, so it counts as one.
        changed = sorted(
            {
                k
                for k in set(rest_before) | set(rest_after)
                if _structure(rest_before.get(k)) != _structure(rest_after.get(k))
            }
        )
        wide.append(f"{where.rstrip('.') or 'input'} constraints changed: "
                    + ", ".join(changed[:5]))  # fmt: skip
    return wide, narrow


# -- tool sets -----------------------------------------------------------------------------------


def _tool_change(before: Mapping[str, Any], after: Mapping[str, Any], name: str
                 ) -> ClassifiedChange:  # fmt: skip
    notes: list[str] = []
    wide, narrow = _schema_changes(before.get("inputSchema"), after.get("inputSchema"), "", notes)
    wide += _new_in(_said(before), _said(after))
    what = (
        "schema"
        if _structure(before.get("inputSchema")) != _structure(after.get("inputSchema"))
        else "description"
    )
    if wide:
        return ClassifiedChange(name, what, EXPANSION, tuple(wide))
    if narrow:
        return ClassifiedChange(name, what, NARROWING, tuple(narrow))
    return ClassifiedChange(name, what, COSMETIC, (*notes, _wording(before, after)))


def _wording(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    was, now = before.get("description"), after.get("description")
    if (
        isinstance(was, str)
        and isinstance(now, str)
        and " ".join(was.split()) == " ".join(now.split())
    ):
        if was == now:
            return "wording inside the input schema only; names nothing new"
        return "whitespace only"
    return "wording only; names no new capability, host, secret or instruction"


def classify_tools(
    before: Sequence[Mapping[str, Any]] | None, after: Sequence[Mapping[str, Any]] | None
) -> list[ClassifiedChange]:
    """Every change from the tool set ``before`` (``{name, description, inputSchema}``) to
    ``after``, classified. ``before`` is ``None`` when the pin kept no definitions: each tool
    of ``after`` whose pin cannot be compared is then an expansion."""
    new = {str(t.get("name")): t for t in after or ()}
    if before is None:
        return [ClassifiedChange(name, "changed", EXPANSION,
                                 ("the pin keeps no definitions to compare with",))
                for name in sorted(new)]  # fmt: skip
    old = {str(t.get("name")): t for t in before}
    out: list[ClassifiedChange] = []
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    for name in list(removed):
        # Renamed: the same definition under a new name; what the new name says is judged.
        twin = next((a for a in added if _same_definition(old[name], new[a])), None)
        if twin is None:
            continue
        removed.remove(name)
        added.remove(twin)
        reasons = _new_in(_said(old[name]), _said(new[twin]))
        cls = EXPANSION if reasons else COSMETIC
        out.append(
            ClassifiedChange(
                f"{name} -> {twin}",
                "renamed",
                cls,
                tuple(reasons or ["the new name names nothing new"]),
            )
        )
    nothing = _Said(frozenset(), frozenset(), frozenset(), frozenset())
    for name in added:
        said = _said(new[name])
        classes = ", ".join(sorted(said.classes)) or "no class agbom recognises"
        names = [r for r in _new_in(nothing, said) if "capability class" not in r]
        out.append(ClassifiedChange(name, "added", EXPANSION, (f"new tool ({classes})", *names)))
    out.extend(ClassifiedChange(name, "removed", NARROWING, ("tool removed",)) for name in removed)
    out.extend(
        _tool_change(old[name], new[name], name)
        for name in sorted(set(old) & set(new))
        if _canonical(old[name]) != _canonical(new[name])
    )
    return sorted(out, key=lambda c: c.tool)


def _canonical(tool: Mapping[str, Any]) -> tuple[Any, Any]:
    return tool.get("description"), tool.get("inputSchema")


def _same_definition(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return _canonical(a) == _canonical(b)


# -- skills -------------------------------------------------------------------------------------


def classify_capabilities(
    before: Sequence[str] | None,
    after: Sequence[str] | None,
    what: str = "capabilities",
    one: str = "capability",
) -> list[ClassifiedChange]:
    """A skill's declared capabilities (or allowed tools) from ``before`` to ``after``:
    each new one an expansion, each dropped one a narrowing. ``None`` is "nothing declared",
    which the Agent Skills format reads as "no restriction": going from none to some is a
    narrowing, from some to none an expansion."""
    if before is None and after is None:
        return []
    if before is None:
        return [
            ClassifiedChange(
                what,
                "capabilities",
                NARROWING,
                (f"now declares {', '.join(after or []) or 'nothing'}",),
            )
        ]
    if after is None:
        return [ClassifiedChange(what, "capabilities", EXPANSION,
                                 ("no longer declares any: unrestricted",))]  # fmt: skip
    out = [ClassifiedChange(c, "capabilities", EXPANSION, (f"new {one} {c}",))
           for c in sorted(set(after) - set(before))]  # fmt: skip
    out += [ClassifiedChange(c, "capabilities", NARROWING, (f"{one} {c} dropped",))
            for c in sorted(set(before) - set(after))]  # fmt: skip
    return out


__all__ = [
    "CAPABILITY_WORDS",
    "CLASSES",
    "COSMETIC",
    "EXPANSION",
    "NARROWING",
    "ClassifiedChange",
    "classify_capabilities",
    "classify_tools",
    "overall",
]
