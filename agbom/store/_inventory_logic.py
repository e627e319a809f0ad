"""Fleet inventory values both backends share, free of any database driver: the checks of a
stored AgBOM version and the rows of the fleet index as the store interface returns them.

How versions are stored differs (SQLite keeps what changed from the previous version,
PostgreSQL the whole document), so the statements stay in each backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agbom.store._shared import _check_id, _dumps
from agbom.store.interface import StoreValueError, check_text


def check_version(session_id: Any, agent_id: Any, agbom_hash: Any, document: Any) -> None:
    """Refuse what :meth:`save_agbom_version` must not store (its change is checked apart,
    by :func:`change_text`, after a backend that stores the whole document has bounded it)."""
    _check_id(session_id, "session_id")
    _check_id(agent_id, "agent_id")
    check_text(agbom_hash, "agbom_hash", 256)
    if not isinstance(document, Mapping):
        raise StoreValueError("AgBOM document must be an object")


def change_text(change: Any) -> str | None:
    """The change an AgBOM version records, as stored JSON text (``None`` when none)."""
    return None if change is None else _dumps(dict(change), "AgBOM change")


def agent_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One agent of :meth:`list_agents` from (agent, sessions, first seen, last seen)."""
    return {"agent_id": row[0], "sessions": row[1], "first_seen": row[2], "last_seen": row[3]}


def component_entry(row: Sequence[Any]) -> dict[str, Any]:
    """One component of :meth:`list_components` from (type, id, name, version, agents joined
    by commas, sessions, first seen, last seen)."""
    return {
        "component_id": row[1],
        "type": row[0],
        "name": row[2],
        "version": row[3],
        "agents": sorted(row[4].split(",")) if row[4] else [],
        "sessions": row[5],
        "first_seen": row[6],
        "last_seen": row[7],
    }


def agbom_status(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """An agent's latest AgBOM version received (from ``latest_agbom_for_agent(...,
    include_refused=True)``) as fleet columns: ``status`` accepted, refused or none, its
    ``version`` and session, and for a refused one the rule ids that refused it."""
    if record is None:
        return {"status": "none", "agbom_session": None, "agbom_version": None, "findings": []}
    change = record.get("change") if isinstance(record.get("change"), Mapping) else {}
    # an accepted version keeps its warnings too (the fleet's findings): not what refused it
    raw = (
        change.get("findings")
        if isinstance(change, Mapping) and not record.get("accepted")
        else None
    )
    findings = [
        {"rule_id": str(f.get("rule_id")), "severity": str(f.get("severity"))}
        for f in (raw if isinstance(raw, list) else [])
        if isinstance(f, Mapping)
    ]
    return {
        "status": "accepted" if record.get("accepted") else "refused",
        "agbom_session": record.get("session_id"),
        "agbom_version": record.get("version"),
        "findings": findings,
    }


def refused_component_entries(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The components of a refused AgBOM version as :meth:`list_components` rows, marked
    ``status: refused``: they are what the agent tried to run, never counted as in use. Each
    row's ``findings`` are the rule ids that refused that component (a deny naming it), not
    the version's warnings nor what refused its other components; ``-`` when none did, and
    ``?`` for a version stored before findings named their components."""
    from agbom.inventory import AgBOM

    change = record.get("change") if isinstance(record.get("change"), Mapping) else {}
    raw = change.get("findings") if isinstance(change, Mapping) else None
    findings = [f for f in (raw if isinstance(raw, list) else []) if isinstance(f, Mapping)]
    attributed = all(isinstance(f.get("components"), list) for f in findings)
    refusing: dict[str, set[str]] = {}
    for finding in findings if attributed else ():
        if finding.get("action") != "deny":
            continue
        for component in finding["components"]:
            refusing.setdefault(str(component), set()).add(str(finding.get("rule_id")))
    agbom = AgBOM.from_document(record["document"], source="stored AgBOM")
    return [
        {
            "component_id": c.id,
            "type": c.type.value,
            "name": c.name,
            "version": c.version,
            "agents": [record.get("agent_id")],
            "sessions": 1,
            "first_seen": record.get("created_at"),
            "last_seen": record.get("created_at"),
            "status": "refused",
            "findings": (",".join(sorted(refusing.get(c.id, ()))) or "-") if attributed else "?",
        }
        for c in agbom
    ]


MAX_VERSIONS_WALKED = 10_000


def last_agbom_version(store: Any, session_id: str) -> dict[str, Any] | None:
    """The session's last stored AgBOM version, accepted or refused. Meant for a session with
    no accepted version (then every version walked is a refused one, usually one or two)."""
    last = None
    for number in range(1, MAX_VERSIONS_WALKED + 1):
        record = store.agbom_version(session_id, number)
        if record is None:
            break
        last = record
    return last


def refused_note(record: Mapping[str, Any], whose: str) -> dict[str, Any]:
    """What the read API says of ``whose`` (an agent, a session) when its only AgBOM was
    refused: why there is none in use, and where the refused one is kept for review."""
    status = agbom_status(record)
    rules = sorted({f["rule_id"] for f in status["findings"]})
    session, version = record.get("session_id"), record.get("version")
    return {
        "message": f"{whose} has no accepted AgBOM: its latest, version {version} of session "
        f"{session}, was refused by the Guardian"
        + (f" ({', '.join(rules)})" if rules else "")
        + f"; GET /v1/sessions/{session}/agbom?version={version} returns it for review",
        "refused": {"session_id": session, "version": version, "rule_ids": rules},
    }
