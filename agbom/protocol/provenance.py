"""ACS field-level Provenance (spec §7): which payload fields are data-bearing, and the
Provenance objects a step carries on them.

Pure functions over schema-valid payloads. The lineage graph built from these objects, and
trust derived from it, live in :mod:`agbom.rules.lineage`; the Guardian keeps one per session.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

ORIGINS = (
    "user_input",
    "system",
    "tool_output",
    "retrieved",
    "agent_generated",
    "a2a_inbound",
    "external",
)

MAX_ID_CHARS = 256
"""Longest ``provenance_id`` or ``derived_from`` entry kept; a longer one is refused."""
MAX_SOURCE_ID_CHARS = 2048
"""Longest ``source_id`` kept (a URL); longer ones are cut, marked with ``…``."""
MAX_DERIVED_FROM = 256
"""Most lineage edges one Provenance object may carry."""


class ProvenanceProblem(ValueError):
    """A Provenance object the lineage cannot take (the message names the field)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvenanceNode:
    """One Provenance object as received: its facts plus where it came in."""

    provenance_id: str
    origin: str
    source_id: str | None = None
    derived_from: tuple[str, ...] = ()
    trust_hint: str | None = None  # a remote-asserted ``trust``: a hint only (§7.1)
    step_id: str = ""
    method: str = ""
    field: str = ""  # e.g. ``arguments.command`` or ``outputs[0]``

    def describe(self) -> str:
        """``tool_output p3 (web_fetch)``: origin, id and source, for lineage paths."""
        text = f"{self.origin} {self.provenance_id}"
        return f"{text} ({self.source_id})" if self.source_id else text


def _parts(content: Any, where: str) -> Iterator[tuple[str, Any]]:
    if isinstance(content, list):
        for i, part in enumerate(content):
            yield f"{where}[{i}]", part
    else:
        # Plain-text content has no place for a Provenance object: under a deterministic
        # producer that is a data-bearing field without provenance.
        yield where, None


def _items(items: Any, where: str) -> Iterator[tuple[str, Any]]:
    if isinstance(items, list):
        for i, item in enumerate(items):
            yield f"{where}[{i}]", item


def data_bearing_fields(method: str, payload: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(field path, holder)`` for every data-bearing field of a step payload (§7): the
    holder is the object that carries ``provenance`` (``None`` where the field cannot carry
    one). Fields the spec lists: message content, tool arguments and outputs, retrieval
    results, the compaction summary."""
    if method in ("steps/userMessage", "steps/agentResponse"):
        yield from _parts(payload.get("content"), "content")
    elif method == "steps/toolCallRequest":
        arguments = payload.get("arguments")
        if isinstance(arguments, Mapping):
            for name, item in arguments.items():
                yield f"arguments.{name}", item
    elif method == "steps/toolCallResult":
        yield from _items(payload.get("outputs"), "outputs")
    elif method in ("steps/knowledgeRetrieval", "steps/memoryContextRetrieval"):
        yield from _items(payload.get("results"), "results")
    elif method == "steps/postCompact":
        yield "summary", payload.get("summary")


MCP_PROVENANCE_META = "acs/provenance"
"""Where a wrapped MCP ``tools/call`` carries its arguments' Provenance objects:
``params._meta["acs/provenance"]``, a map from argument name to Provenance object. ACS v0.1
carries the MCP message intact and gives it no field of its own for provenance; MCP's
``_meta`` is the message's place for metadata beside its arguments (docs/protocol.md)."""

_WRAPPED_MCP = ("protocols/MCP/", "wrapped:mcp-")


def wrapped_tool_call(method: str, payload: Any) -> dict[str, Any] | None:
    """A wrapped MCP ``tools/call`` request as the toolCallRequest payload it amounts to
    (``{tool: {name}, arguments: {name: {value, provenance?}}}``), or None for anything
    else. Which MCP method it is, is read from the message (what the server will run), as
    the Guardian's tool policy reads it."""
    if not method.startswith(_WRAPPED_MCP) or not isinstance(payload, Mapping):
        return None
    params = payload.get("params")
    if payload.get("method") != "tools/call" or not isinstance(params, Mapping):
        return None
    name = params.get("name")
    if not isinstance(name, str):
        return None
    raw = params.get("arguments")
    meta = params.get("_meta")
    held = meta.get(MCP_PROVENANCE_META) if isinstance(meta, Mapping) else None
    held = held if isinstance(held, Mapping) else {}
    arguments: dict[str, Any] = {}
    for key, value in (raw if isinstance(raw, Mapping) else {}).items():
        item: dict[str, Any] = {"value": value}
        found = held.get(key)
        if isinstance(found, Mapping):
            item["provenance"] = found
        arguments[str(key)] = item
    return {"tool": {"name": name}, "arguments": arguments}


OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "steps/memoryStore": ("content",),
    "steps/turnEnd": ("summary",),
    "steps/subagentStop": ("summary",),
}
"""Fields that may carry provenance but that the all-or-nothing rule does not require."""


UNRESOLVABLE = "~unresolvable"
"""The parent id given in place of lineage edges that could not be kept (too many, or an id
too long): no object has it, so what derives from it is ``unknown``, never trusted."""


def _node(
    raw: Mapping[str, Any], *, step_id: str, method: str, field: str, strict: bool
) -> ProvenanceNode:
    # strict (a client claiming acs-provenance): a defect is a refusal. Otherwise the object
    # is kept as best it can be, never more trusted than it says: no id gets one named after
    # its field (nothing can derive from it), lost edges become one unresolvable parent.
    def problem(message: str) -> None:
        if strict:
            raise ProvenanceProblem(f"{field}.provenance{message}")

    origin = raw.get("origin")
    if origin not in ORIGINS:
        raise ProvenanceProblem(f"{field}.provenance.origin {origin!r} is not an ACS origin")
    pid = raw.get("provenance_id")
    if not isinstance(pid, str) or not pid:
        problem(" has no provenance_id")
        pid = f"~{step_id}/{field}"
    elif len(pid) > MAX_ID_CHARS:
        problem(f".provenance_id is over {MAX_ID_CHARS} characters")
        pid = "~" + pid[: MAX_ID_CHARS - 2] + "…"
    raw_parents = raw.get("derived_from") or ()
    parents = [
        p
        for p in (raw_parents if isinstance(raw_parents, list | tuple) else ())
        if isinstance(p, str) and p and len(p) <= MAX_ID_CHARS
    ]
    if len(parents) != len(raw_parents) or len(parents) > MAX_DERIVED_FROM:
        problem(f".derived_from must be at most {MAX_DERIVED_FROM} ids of 1-{MAX_ID_CHARS} chars")
        parents = [*parents[: MAX_DERIVED_FROM - 1], UNRESOLVABLE]
    source = raw.get("source_id")
    if isinstance(source, str) and len(source) > MAX_SOURCE_ID_CHARS:
        source = source[:MAX_SOURCE_ID_CHARS] + "…"
    hint = raw.get("trust")
    return ProvenanceNode(
        provenance_id=pid,
        origin=str(origin),
        source_id=source if isinstance(source, str) else None,
        derived_from=tuple(dict.fromkeys(parents)),
        trust_hint=hint if hint in ("trusted", "untrusted", "unknown") else None,
        step_id=step_id,
        method=method,
        field=field,
    )


@dataclass(frozen=True, slots=True)
class StepProvenance:
    """The Provenance objects of one step, and the data-bearing fields that lack one."""

    nodes: tuple[ProvenanceNode, ...]
    missing: tuple[str, ...]
    by_field: Mapping[str, str]  # field path -> provenance_id


def step_provenance(
    method: str, payload: Any, *, step_id: str = "", strict: bool = False
) -> StepProvenance:
    """Read the Provenance objects of a (schema-valid) step payload. With ``strict`` (an
    acs-provenance session), raise :class:`ProvenanceProblem` for one without an id or with
    edges that cannot be kept; otherwise such an object is kept conservatively."""
    if not isinstance(payload, Mapping):
        return StepProvenance((), (), {})
    nodes: list[ProvenanceNode] = []
    missing: list[str] = []
    by_field: dict[str, str] = {}
    required = list(data_bearing_fields(method, payload))
    optional = [(f, payload.get(f)) for f in OPTIONAL_FIELDS.get(method, ())]
    call = wrapped_tool_call(method, payload)
    if call is not None:
        # Read where present, never required: no ACS schema gives a wrapped message a place
        # for provenance, so all-or-nothing cannot hold a client to one.
        optional = [(f"arguments.{k}", item) for k, item in call["arguments"].items()]
    for index, (field, holder) in enumerate([*required, *optional]):
        raw = holder.get("provenance") if isinstance(holder, Mapping) else None
        if not isinstance(raw, Mapping):
            if index < len(required):
                missing.append(field)
            continue
        node = _node(raw, step_id=step_id, method=method, field=field, strict=strict)
        nodes.append(node)
        by_field[field] = node.provenance_id
    return StepProvenance(tuple(nodes), tuple(missing), by_field)
