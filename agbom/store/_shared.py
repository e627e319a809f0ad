"""Input checks and stored-value forms every backend shares: bounds, JSON text, the
checked row of an audit entry, the fleet index rows of an AgBOM, the approvals file.

Backends must refuse the same inputs with the same messages and store the same text, so these
live in one place, free of any database driver.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from agbom.store.interface import (
    MAX_ACTOR,
    MAX_REASON,
    MAX_SKILL_ID,
    ChainAppend,
    Digest,
    SkillStatus,
    StoreError,
    StoreValueError,
    as_utc,
    check_patterns,
    check_text,
    format_timestamp,
    parse_timestamp,
    utc_now,
    utc_timestamp,
)

MAX_REF = 4096
MAX_CAPABILITIES = 1024
MAX_JSON_BYTES = 1 << 20  # composition, provenance, negotiated, change
MAX_ENTRY_BYTES = 32 << 20  # one audit entry or one AgBOM document
MAX_ID = 512

IMPORT_FORMAT = "agbom-skill-approvals"
IMPORT_VERSION = 1
_DECIDED = (SkillStatus.APPROVED, SkillStatus.DENIED, SkillStatus.REVOKED)
_IMPORT_KEYS = frozenset(
    {"skill_id", "digest", "status", "decided_by", "decided_at", "reason", "expires_at"}
    | {"scope", "ref", "capabilities", "required_signer"}
)


def _dumps(value: Any, what: str, limit: int = MAX_JSON_BYTES) -> str:
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise StoreValueError(f"{what} is not JSON-serializable: {exc}") from None
    if len(data) > limit:
        raise StoreValueError(f"{what} is larger than {limit} bytes")
    return data.decode("utf-8")


def _ts(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _now(now: datetime | None) -> datetime:
    return utc_now() if now is None else as_utc(now)


def _stamp(now: datetime | None) -> str:
    """The stored text form of ``now`` (the current time when None)."""
    return format_timestamp(_now(now)) or ""


def _check_id(value: Any, what: str, *, optional: bool = False) -> str | None:
    return check_text(value, what, MAX_ID, optional=optional)


def _capabilities_text(value: Any, what: str) -> str:
    """A checked capability list (strings, at most MAX_CAPABILITIES) as stored JSON text."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise StoreValueError(f"{what} must be a list of strings")
    if not all(isinstance(c, str) for c in value):
        raise StoreValueError(f"{what} must be a list of strings")
    if len(value) > MAX_CAPABILITIES:
        raise StoreValueError(f"{what}: more than {MAX_CAPABILITIES} entries")
    return _dumps(list(value), what)


def _in_scope(patterns: tuple[str, ...], value: str | None) -> bool:
    if not patterns:
        return True
    if value is None:
        # A scoped approval cannot be matched by a caller that does not say who it is.
        return False
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def _append_row(append: ChainAppend) -> tuple[Any, ...]:
    """Checked parameters of :data:`_APPEND_SQL` for one entry."""
    _check_id(append.session_id, "session_id")
    check_text(append.entry_hash, "entry_hash", 256)
    check_text(append.previous_hash, "previous_hash", 256, optional=True)
    _check_id(append.request_id, "request_id", optional=True)
    _check_id(append.nonce, "nonce", optional=True)
    return (
        append.session_id,
        _entry_text(append.entry),
        append.entry_hash,
        append.previous_hash,
        append.request_id,
        append.nonce,
        utc_timestamp(),
    )


def _entry_text(entry: Mapping[str, Any] | bytes | str) -> str:
    if isinstance(entry, bytes | str):
        raw = entry.encode("utf-8") if isinstance(entry, str) else entry
        if len(raw) > MAX_ENTRY_BYTES:
            raise StoreValueError(f"audit entry is larger than {MAX_ENTRY_BYTES} bytes")
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise StoreValueError(f"audit entry is not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise StoreValueError("audit entry must be a JSON object")
        return raw.decode("utf-8")
    if not isinstance(entry, Mapping):
        raise StoreValueError("audit entry must be a mapping or JSON text")
    try:
        data = orjson.dumps(dict(entry))
    except TypeError as exc:
        raise StoreValueError(f"audit entry is not JSON-serializable: {exc}") from None
    if len(data) > MAX_ENTRY_BYTES:
        raise StoreValueError(f"audit entry is larger than {MAX_ENTRY_BYTES} bytes")
    return data.decode("utf-8")


def _component_rows(document: Mapping[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(id, type, name, version) of each well-formed component; others are not indexed."""
    raw = document.get("components")
    if not isinstance(raw, list):
        return []
    seen: dict[str, tuple[str, str, str, str | None]] = {}
    for comp in raw:
        if not isinstance(comp, Mapping):
            continue
        cid, ctype = comp.get("id"), comp.get("type")
        if not isinstance(cid, str) or not isinstance(ctype, str) or cid in seen:
            continue
        name = comp.get("name")
        version = comp.get("version")
        seen[cid] = (
            cid,
            ctype,
            name if isinstance(name, str) and name else cid,
            None if version is None else str(version),
        )
    return list(seen.values())


def check_signer(signer: Any) -> str | None:
    """A required signer's identity (a signers file's ``name``: an e-mail, URI or name), or
    ``None``; refuses an empty, unbounded or control-character one."""
    if signer is None:
        return None
    check_text(signer, "required signer", MAX_ACTOR)
    if signer != signer.strip() or any(ord(c) < 32 or ord(c) == 127 for c in signer):
        raise StoreValueError(
            "required signer must be a signer's name, without surrounding spaces or control "
            "characters"
        )
    return str(signer)


def _validate_import(doc: Any) -> list[dict[str, Any]]:
    """Check a whole approvals document; raise one StoreError naming every bad entry."""
    if not isinstance(doc, Mapping):
        raise StoreValueError("approvals file must hold an object with an 'approvals' list")
    unknown = sorted(set(doc) - {"format", "version", "approvals"})
    if unknown:
        raise StoreValueError(f"approvals file: unknown top-level key {unknown[0]!r}")
    if doc.get("format", IMPORT_FORMAT) != IMPORT_FORMAT:
        raise StoreValueError(f"approvals file: format must be {IMPORT_FORMAT!r}")
    if doc.get("version", IMPORT_VERSION) != IMPORT_VERSION:
        raise StoreValueError(
            f"approvals file: version {doc.get('version')!r} is not supported "
            f"(this agbom reads version {IMPORT_VERSION})"
        )
    approvals = doc.get("approvals")
    if not isinstance(approvals, list):
        raise StoreValueError("approvals file: 'approvals' must be a list")
    problems: list[str] = []
    entries: list[dict[str, Any]] = []
    seen: set[tuple[str, Digest]] = set()
    for index, raw in enumerate(approvals):
        where = f"approvals[{index}]"
        try:
            entry = _validate_import_entry(raw, where)
        except StoreError as exc:
            problems.append(str(exc))
            continue
        key = (entry["skill_id"], entry["digest"])
        if key in seen:
            problems.append(f"{where}: {key[0]} {key[1]} appears more than once")
            continue
        seen.add(key)
        entries.append(entry)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise StoreValueError(f"approvals file not imported: {problems[0]}{more}")
    return entries


def _validate_import_entry(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise StoreValueError(f"{where}: must be an object")
    unknown = sorted(set(raw) - _IMPORT_KEYS)
    if unknown:
        raise StoreValueError(f"{where}: unknown key {unknown[0]!r}")
    try:
        skill_id = check_text(raw.get("skill_id"), "skill_id", MAX_SKILL_ID)
        digest_raw = raw.get("digest")
        if digest_raw is None:
            raise StoreValueError("digest is required (ALG:HEX)")
        digest = (
            Digest.from_wire(digest_raw)
            if isinstance(digest_raw, Mapping)
            else Digest.parse(str(digest_raw))
        )
        status_raw = raw.get("status")
        if status_raw not in {s.value for s in _DECIDED}:
            raise StoreValueError(f"status must be approved, denied or revoked, not {status_raw!r}")
        decided_by = check_text(raw.get("decided_by"), "decided_by", MAX_ACTOR, optional=True)
        decided_at = raw.get("decided_at")
        if decided_at is not None:
            decided_at = format_timestamp(parse_timestamp(decided_at, what="decided_at"))
        reason = check_text(raw.get("reason"), "reason", MAX_REASON, optional=True)
        expires = raw.get("expires_at")
        if expires is not None:
            expires = format_timestamp(parse_timestamp(expires, what="expires_at"))
        ref = check_text(raw.get("ref"), "ref", MAX_REF, optional=True)
        scope = raw.get("scope") or {}
        if not isinstance(scope, Mapping) or set(scope) - {"agents", "tenants"}:
            raise StoreValueError("scope must be an object with 'agents' and/or 'tenants' lists")
        agents = check_patterns(scope.get("agents"), "scope.agents")
        tenants = check_patterns(scope.get("tenants"), "scope.tenants")
        capabilities = raw.get("capabilities")
        caps = _capabilities_text([] if capabilities is None else capabilities, "capabilities")
        signer = check_signer(raw.get("required_signer"))
        if signer is not None and status_raw != SkillStatus.APPROVED.value:
            raise StoreValueError("only an approval can require a signer (required_signer)")
    except StoreError as exc:
        raise StoreValueError(f"{where}: {exc}") from None
    return {
        "skill_id": skill_id,
        "digest": digest,
        "status": SkillStatus(status_raw),
        "decided_by": decided_by,
        "decided_at": decided_at,
        "reason": reason,
        "expires_at": expires,
        "agents": _dumps(list(agents), "scope"),
        "tenants": _dumps(list(tenants), "scope"),
        "ref": ref,
        "capabilities": caps,
        "required_signer": signer,
    }


def pyformat_sql(sql: str) -> str:
    """``sql`` written with ``?`` placeholders (sqlite3) in psycopg's ``%s`` style.

    A literal ``%`` is doubled first, or psycopg would read it as a placeholder. Only for
    statements without ``?`` or ``%`` inside string literals: call it once, at definition time.
    """
    return sql.replace("%", "%%").replace("?", "%s")
