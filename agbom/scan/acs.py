"""ACS inputs: AgBOM documents on disk and JSON-RPC transcripts (``.jsonl``) of ACS sessions.

An AgBOM document contributes its components as declared (each validated on its own, so one
bad component does not hide the others). A transcript is folded line by line: per session,
``agbom/snapshot`` sets the inventory, ``agbom/changed`` replaces or patches it, and
``steps/skillRegister`` / ``steps/skillLoad`` add the skills they name. The union over the
sessions of the file is what the transcript contributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agbom.inventory import InvalidAgBOM, parse_component
from agbom.scan._parse import BOM, ParseFailure, load_json, positions_of, recognized_json
from agbom.scan._positions import KeyPath, Positions
from agbom.scan.interface import (
    FileError,
    Finding,
    ReadContext,
    ReadResult,
    SourceLocation,
)

AGBOM_MAX_BYTES = 16 * 1024 * 1024
TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024
ACS_METHODS = frozenset(
    {"agbom/snapshot", "agbom/changed", "steps/skillRegister", "steps/skillLoad"}
)


def _unwrap(doc: Any) -> Any:
    """A document, an ``{"agbom": DOC}`` payload, or a JSON-RPC request carrying either."""
    if isinstance(doc, Mapping) and isinstance(doc.get("params"), Mapping):
        params = doc["params"]
        doc = params.get("payload", params)
    if (
        isinstance(doc, Mapping)
        and "components" not in doc
        and isinstance(doc.get("agbom"), Mapping)
    ):
        doc = doc["agbom"]
    return doc


def _components(
    raw: Any,
    where: str,
    line: int | None,
    result: ReadResult,
    indexes: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Validate each component alone; report the bad ones, keep the rest (and their index in
    ``raw`` in ``indexes``)."""
    if not isinstance(raw, list):
        result.errors.append(FileError(f"{where}: 'components' must be an array", line))
        return []
    good: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        try:
            component = parse_component(item, f"{where}components[{index}]")
        except InvalidAgBOM as exc:
            for problem in exc.problems:
                result.errors.append(FileError(str(problem), line))
            continue
        good.append(dict(component.data))
        if indexes is not None:
            indexes.append(index)
    return good


def _components_path(positions: Positions) -> KeyPath:
    """Where :func:`_unwrap` finds ``components``, as a key path (for locating them)."""
    prefix: KeyPath = ()
    if positions.get(("params",)) is not None:
        prefix = ("params", "payload") if positions.get(("params", "payload")) else ("params",)
    if positions.get((*prefix, "components")) is None and positions.get((*prefix, "agbom")):
        prefix = (*prefix, "agbom")
    path = (*prefix, "components")
    return path if positions.get(path) is not None else ("components",)


def agbom_component_locations(
    data: bytes, display: str, file: str
) -> dict[str, tuple[SourceLocation, ...]]:
    """Where each component of an AgBOM document (or payload, or request) is: the ``id`` key
    of its entry. Empty when the bytes are not such a document."""
    try:
        doc = _unwrap(load_json(data))
    except ParseFailure:
        return {}
    items = doc.get("components") if isinstance(doc, Mapping) else None
    if not isinstance(items, list):
        return {}
    positions = positions_of(data)
    base = _components_path(positions)
    out: dict[str, tuple[SourceLocation, ...]] = {}
    for index, item in enumerate(items):
        cid = item.get("id") if isinstance(item, Mapping) else None
        span = positions.nearest((*base, index, "id"))
        if isinstance(cid, str) and span is not None:
            out[cid] = (SourceLocation(display, file, span),)  # a later duplicate id wins
    return out


def looks_like_agbom(doc: Any) -> bool:
    """Positive recognition: ``components`` is a list of objects that all carry id and type."""
    doc = _unwrap(doc)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("components"), list):
        return False
    items = doc["components"]
    return all(isinstance(c, Mapping) and "id" in c and "type" in c for c in items[:20])


class AgBOMReader:
    """An ACS AgBOM document (or snapshot payload / request) stored as JSON."""

    name = "acs-agbom"
    globs = ("agbom.json", "*.agbom.json", "agbom-*.json", "agboms/*.json")
    max_bytes = AGBOM_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Keep every valid component of the document."""
        result = ReadResult()
        doc = recognized_json(
            data,
            result,
            lambda d: isinstance(d, Mapping) and "components" in d,
            "not an AgBOM document (no 'components')",
            unwrap=_unwrap,
        )
        if doc is None:
            return result
        indexes: list[int] = []
        result.components.extend(_components(doc["components"], "", None, result, indexes))
        positions = positions_of(data) if result.components else None
        base = _components_path(positions) if positions is not None else ()
        for component, index in zip(result.components, indexes, strict=True):
            component["_key"] = "components"
            at = positions.nearest((*base, index, "id")) if positions is not None else None
            if at is not None:
                component["_at"] = at
        return result


def _skill_from_register(payload: Mapping[str, Any]) -> dict[str, Any]:
    skill_id = payload.get("skill_id")
    if not isinstance(skill_id, str) or not skill_id:
        raise ValueError("skillRegister payload has no 'skill_id'")
    definition = payload.get("definition")
    if not isinstance(definition, Mapping) or not isinstance(definition.get("digest"), Mapping):
        raise ValueError("skillRegister payload has no 'definition.digest'")
    component: dict[str, Any] = {
        "id": skill_id,
        "type": "skill",
        "name": str(payload.get("name") or skill_id),
        "description": str(payload.get("description") or ""),
        # The body is never kept: only ref and digest persist.
        "definition": {
            "ref": str(definition.get("ref") or skill_id),
            "digest": dict(definition["digest"]),
        },
    }
    caps = payload.get("declared_capabilities")
    if isinstance(caps, list):
        component["declared_capabilities"] = [str(c) for c in caps]
    composition = payload.get("composition")
    if isinstance(composition, Mapping):
        for field in ("tools", "mcp_servers", "a2a_peers", "models", "composed_skills"):
            if isinstance(composition.get(field), list):
                component[field] = [str(x) for x in composition[field]]
    provenance = payload.get("registration_provenance")
    if isinstance(provenance, Mapping):
        component["registration_provenance"] = dict(provenance)
    component["observed"] = ["skillRegister"]
    return dict(parse_component(component, f"skill {skill_id!r}").data)


class TranscriptReader:
    """JSON-RPC transcript of ACS traffic, one message per line."""

    name = "acs-transcript"
    globs = ("*.jsonl",)
    max_bytes = TRANSCRIPT_MAX_BYTES

    def read(self, data: bytes, ctx: ReadContext) -> ReadResult:
        """Fold the AgBOM and skill messages of every session in the file."""
        result = ReadResult()
        if data.startswith(BOM):
            data = data[3:]
        sessions: dict[str, dict[str, dict[str, Any]]] = {}
        skills: dict[str, dict[str, Any]] = {}
        seen_acs = False
        bad_lines = 0
        for number, raw_line in enumerate(data.split(b"\n"), start=1):
            if not raw_line.strip():
                continue
            try:
                message = orjson.loads(raw_line)
            except orjson.JSONDecodeError as exc:
                bad_lines += 1
                result.errors.append(FileError(f"not valid JSON: {exc.msg}", number, exc.colno))
                continue
            if not isinstance(message, Mapping):
                continue
            method = message.get("method")
            if method not in ACS_METHODS:
                continue
            seen_acs = True
            params = message.get("params")
            if not isinstance(params, Mapping) or not isinstance(params.get("payload"), Mapping):
                result.errors.append(FileError(f"{method}: no 'params.payload' object", number))
                continue
            payload = params["payload"]
            metadata = params.get("metadata")
            session = str(metadata.get("session_id")) if isinstance(metadata, Mapping) else ""
            state = sessions.setdefault(session, {})
            where = f"{method} "
            if method == "agbom/snapshot" or (method == "agbom/changed" and "agbom" in payload):
                doc = _unwrap(payload)
                if not isinstance(doc, Mapping):
                    result.errors.append(FileError(f"{method}: payload has no AgBOM", number))
                    continue
                state.clear()
                for component in _components(doc.get("components"), where, number, result):
                    component["_line"] = number
                    state[component["id"]] = component
            elif method == "agbom/changed":
                for cid in payload.get("removed") or []:
                    state.pop(str(cid.get("id") if isinstance(cid, Mapping) else cid), None)
                for field in ("added", "changed"):
                    for component in _components(payload.get(field) or [], where, number, result):
                        component["_line"] = number
                        state[component["id"]] = component
            elif method == "steps/skillRegister":
                try:
                    skill = _skill_from_register(payload)
                except (ValueError, InvalidAgBOM) as exc:
                    result.errors.append(FileError(f"{method}: {exc}", number))
                    continue
                skill["_line"] = number
                skills[skill["id"]] = skill
            else:  # steps/skillLoad
                self._load(payload, skills, number, ctx, result)
        if not seen_acs:
            extra = f" ({bad_lines} lines are not JSON)" if bad_lines else ""
            result.errors.clear()
            result.skipped = f"no ACS agbom/skill messages in this file{extra}"
            return result
        merged: dict[str, dict[str, Any]] = {}
        for state in sessions.values():
            merged.update(state)
        merged.update(skills)
        for component in merged.values():
            component["_key"] = "transcript"
        result.components.extend(merged[k] for k in sorted(merged))
        return result

    @staticmethod
    def _load(
        payload: Mapping[str, Any],
        skills: dict[str, dict[str, Any]],
        number: int,
        ctx: ReadContext,
        result: ReadResult,
    ) -> None:
        skill_id = payload.get("skill_id")
        digest = payload.get("digest")
        if not isinstance(skill_id, str) or not skill_id or not isinstance(digest, Mapping):
            result.errors.append(
                FileError("steps/skillLoad: needs 'skill_id' and 'digest'", number)
            )
            return
        known = skills.get(skill_id)
        if known is None:
            try:
                skills[skill_id] = dict(
                    parse_component(
                        {
                            "id": skill_id,
                            "type": "skill",
                            "name": skill_id,
                            "description": "",
                            "definition": {"ref": skill_id, "digest": dict(digest)},
                            "observed": ["skillLoad"],
                        },
                        f"skill {skill_id!r}",
                    ).data
                )
            except InvalidAgBOM as exc:
                result.errors.append(FileError(f"steps/skillLoad: {exc}", number))
            return
        if "skillLoad" not in known["observed"]:
            known["observed"] = [*known["observed"], "skillLoad"]
        registered = known["definition"]["digest"]
        if str(registered.get("value", "")).lower() != str(digest.get("value", "")).lower():
            result.findings.append(
                Finding(
                    rule_id="scan.skill-load-digest-mismatch",
                    severity="high",
                    component_id=skill_id,
                    message=(
                        f"skill {skill_id!r} was loaded with a digest that differs from its "
                        f"registration (line {number})"
                    ),
                    path=ctx.display,
                )
            )
