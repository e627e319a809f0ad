"""Reading rule packs: bounded YAML, JSON Schema validation with located errors, compiling.

A pack is validated as a whole against ``schemas/rule-pack.json`` first, then each rule is
compiled (globs, version ranges, purls, hosts) into the objects in :mod:`agbom.rules.engine`.
Every error names the file, its line where known, the rule id and the key path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import yaml

from agbom._schema import compiled_validator, describe_failure
from agbom.rules.interface import RuleError

MAX_PACK_BYTES = 2 * 1024 * 1024
MAX_PACKS = 500
TEST_SUFFIXES = ("_test.yaml", "_test.yml")

_PATH_TOKEN = re.compile(r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[['\"]([^'\"]+)['\"]\]")


def default_pack_path() -> Path:
    """The packaged default pack."""
    return Path(str(resources.files("agbom.rules").joinpath("packs", "default.yaml")))


RULES_KIND = "rules"
RUNTIME_KIND = "runtime"


def shipped_packs() -> dict[str, tuple[str, Path]]:
    """Every rule pack shipped with agbom, by name: ``(kind, file)``.

    One layout (docs/rules.md, "Shipped packs"): component and flow packs are
    ``agbom/rules/packs/NAME.yaml`` (kind ``rules``: ``default``, ``flow-strict``), runtime
    packs ``agbom/rules/packs/runtime/NAME.yaml`` (kind ``runtime``: ``baseline``); each
    pack's unit tests are ``NAME_test.yaml`` (and ``NAME_*_test.yaml``) beside it, shipped
    too, so ``agbom rules test`` runs them on an installed copy. Nothing else holds a copy.
    """
    root = Path(str(resources.files("agbom.rules").joinpath("packs")))
    found: dict[str, tuple[str, Path]] = {}
    for kind, folder in ((RULES_KIND, root), (RUNTIME_KIND, root / "runtime")):
        for path in sorted(folder.glob("*.yaml")):
            if not path.name.endswith(TEST_SUFFIXES):
                found.setdefault(path.stem, (kind, path))
    return found


def shipped_pack(name: str, kind: str | None = None) -> Path:
    """The file of the shipped pack ``name`` (of ``kind``, when given); a located
    :class:`RuleError` naming the shipped packs otherwise."""
    entry = shipped_packs().get(name)
    if entry is None or (kind is not None and entry[0] != kind):
        known = ", ".join(n for n, (k, _) in shipped_packs().items() if kind in (None, k))
        raise RuleError(f"no shipped rule pack {name!r} (shipped: {known})", file=name)
    return entry[1]


def pack_files(path: Path) -> list[Path]:
    """The pack files at ``path``: the file itself, or every ``*.yaml``/``*.yml`` in a folder
    that is not a rule test (``*_test.yaml``)."""
    if path.is_dir():
        found = sorted(
            p
            for p in path.iterdir()
            if p.suffix in (".yaml", ".yml") and not p.name.endswith(TEST_SUFFIXES) and p.is_file()
        )
        if len(found) > MAX_PACKS:
            raise RuleError(f"more than {MAX_PACKS} rule packs", file=str(path))
        return found
    if path.is_file():
        return [path]
    raise RuleError("no such rule pack file or folder", file=str(path))


_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available


def read_yaml(path: Path) -> tuple[Any, str]:
    """Parse one bounded YAML file; also return its text, for locating errors later."""
    try:
        size = path.stat().st_size
        if size > MAX_PACK_BYTES:
            raise RuleError(f"larger than the {MAX_PACK_BYTES} byte limit", file=str(path))
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise RuleError(f"cannot read: {exc.strerror or exc}", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise RuleError(f"not UTF-8 text: {exc.reason}", file=str(path)) from exc
    try:
        if "&" in text:  # no anchor, no alias: skip the event scan on ordinary packs
            _reject_aliases(text, path)
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise RuleError(f"not valid YAML: {exc.problem}", file=str(path), line=line) from exc
    except yaml.YAMLError as exc:
        raise RuleError(f"not valid YAML: {exc}", file=str(path)) from exc
    return data, text


def _reject_aliases(text: str, path: Path) -> None:
    # Anchors and aliases let a small file expand into a huge document; packs don't need them.
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise RuleError(
                "YAML anchors and aliases are not allowed in rule packs",
                file=str(path),
                line=event.start_mark.line + 1 if event.start_mark is not None else None,
            )


def compose(text: str) -> yaml.Node | None:
    """The YAML node tree of ``text`` (only built when an error needs a line number)."""
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None


def split_key_path(name: str) -> list[str | int]:
    """``data.rules[3].match.name`` -> ``["rules", 3, "match", "name"]``."""
    text = name.removeprefix("data")
    parts: list[str | int] = []
    for attr, index, quoted in _PATH_TOKEN.findall(text):
        if index:
            parts.append(int(index))
        else:
            parts.append(attr or quoted)
    return parts


def line_of(node: yaml.Node | None, parts: list[str | int]) -> int | None:
    """The 1-based line of the YAML node at ``parts``, or of its closest existing parent."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in parts:
        nxt: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            for key, value in node.value:
                if getattr(key, "value", None) == part:
                    nxt = value
                    line = key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if 0 <= part < len(node.value):
                nxt = node.value[part]
                line = nxt.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line


def format_key_path(parts: list[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def rule_id_at(data: Any, parts: list[str | int]) -> str | None:
    if len(parts) >= 2 and parts[0] == "rules" and isinstance(parts[1], int):
        rules = data.get("rules") if isinstance(data, Mapping) else None
        if (
            isinstance(rules, list)
            and parts[1] < len(rules)
            and isinstance(rules[parts[1]], Mapping)
        ):
            rid = rules[parts[1]].get("id")
            return rid if isinstance(rid, str) else None
    return None


def validate_pack(data: Any, text: str, path: Path) -> None:
    """Check ``data`` against the published rule-pack schema; raise a located RuleError."""
    if data is None:
        raise RuleError("the pack is empty (a pack needs at least one rule)", file=str(path))
    validator = compiled_validator("rule-pack.json")
    try:
        validator(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        parts = split_key_path(exc.name or "data")
        message = describe_failure(exc)
        # describe_failure names the field itself; keep only the rule text when we locate it.
        message = re.sub(r"^field '[^']*' ", "", message)
        if exc.rule == "additionalProperties" and isinstance(exc.value, Mapping):
            allowed = (
                set(exc.rule_definition) if isinstance(exc.rule_definition, Mapping) else set()
            )
            extra = sorted(k for k in exc.value if k not in allowed)
            schema_props = _schema_properties(parts)
            extra = [k for k in exc.value if schema_props and k not in schema_props] or extra
            if extra:
                parts = [*parts, extra[0]]
                message = "unknown key"
        raise RuleError(
            message,
            file=str(path),
            line=line_of(compose(text), parts),
            rule_id=rule_id_at(data, parts),
            key_path=format_key_path(parts) or None,
        ) from exc


def _schema_properties(parts: list[str | int]) -> set[str]:
    # Which keys the schema allows at ``parts`` (used to name an unknown key precisely).
    from agbom._schema import load_schema

    schema = load_schema("rule-pack.json")
    defs = schema["definitions"]
    if not parts:
        return set(schema["properties"])
    if parts[0] == "rules" and len(parts) == 2:
        return set(defs["rule"]["properties"])
    last = next((p for p in reversed(parts) if isinstance(p, str)), "")
    if last == "endpoint":
        return set(defs["match"]["properties"]["endpoint"]["properties"])
    if last == "exceptions":
        return set(defs["exception"]["properties"])
    if last in ("sink", "source"):
        return set(defs["rule"]["properties"][last]["properties"])
    if last == "trust":
        return set(defs["trust_override"]["properties"])
    return set(defs["match"]["properties"])


def iter_pack_sources(
    path: Path | None, *, with_default: bool = False, extra: tuple[Path, ...] = ()
) -> Iterator[Path]:
    """Pack files for ``load_rules(path)``: the packaged default pack when ``path`` is
    ``None`` or ``with_default`` is set (first, so its rules keep their place), then the
    ``extra`` packs (shipped packs chosen by name), then the packs at ``path``. The default
    pack found again in ``path`` (the same file, or a copy of it) is read once."""
    default = default_pack_path()
    if path is None or with_default:
        yield default
    yield from extra
    if path is None:
        return
    for file in pack_files(Path(path)):
        if not (with_default and _same_pack(file, default)):
            yield file


def _same_pack(file: Path, default: Path) -> bool:
    try:
        if file.resolve() == default.resolve():
            return True
        return file.stat().st_size == default.stat().st_size and (
            file.read_bytes() == default.read_bytes()
        )
    except OSError:
        return False  # read_yaml reports it
