"""The approval records as an OPA bundle: what a Guardian that decides with Rego loads.

A bundle is a gzipped tarball (OPA's bundle file format):

- ``.manifest``: ``{"revision": ..., "roots": ["agbom"]}``. The revision is the SHA-256 of
  ``agbom/data.json``, so it changes exactly when the data does, on whichever replica the
  change was made, and two replicas on one store serve the same revision.
- ``agbom/data.json``: ``data.agbom``, with ``skills`` (every decided ``(skill_id, digest)``
  pair: status, scope, expiry, capabilities), ``servers`` (the MCP tool-set pins) and
  ``bans`` (the ban rules of the rule packs, as data).
- ``agbom/skill_load.rego``: the example policy (``data.agbom.skill_load.allow``).

The bytes are reproducible: members in a fixed order, no timestamps or owners, gzip without
a modification time. ``agbom bundle build`` writes them; ``agbom serve`` serves them
(agbom/transports/bundle.py). See docs/opa.md.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agbom.export.interface import ExportError

if TYPE_CHECKING:
    from agbom.store import ServerPin, SkillRecord, Store

BUNDLE_ROOT = "agbom"
DATA_FORMAT = 1
"""``data.agbom.format``: raised when a field changes meaning, so a policy can check it."""

MAX_DATA_BYTES = 32 * 1024 * 1024
"""Largest ``data.json`` built. OPA holds the whole bundle in memory and every replica
rebuilds it on each change; past this the store holds far more decisions than a bundle
should carry, and building fails with a message instead of serving something huge."""

MEDIA_TYPE = "application/gzip"

# Only human decisions go into the bundle. Pending pairs are what agents registered: any
# agent can add them, so they would let agents grow every OPA's memory, and a pending pair
# allows nothing anyway (the example policy answers "unknown" for it, the store "pending").
_DECIDED = ("approved", "denied", "revoked")


def policy_text() -> str:
    """The example Rego policy shipped in the bundle (and shown in docs/opa.md)."""
    path = resources.files("agbom.export").joinpath("opa", "skill_load.rego")
    return path.read_text(encoding="utf-8")


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ns(value: datetime | None) -> int | None:
    """POSIX nanoseconds, in integers throughout (a float loses microseconds)."""
    if value is None:
        return None
    return ((value - _EPOCH) // timedelta(microseconds=1)) * 1_000


def skill_entry(record: SkillRecord) -> dict[str, Any]:
    """One pair's approval record as the bundle holds it."""
    from agbom.store import format_timestamp

    entry: dict[str, Any] = {
        "status": str(record.status),
        "expires_at": format_timestamp(record.expires_at),
        "expires_at_ns": _ns(record.expires_at),
        "scope": {"agents": list(record.scope_agents), "tenants": list(record.scope_tenants)},
        "capabilities": list(record.declared_capabilities),
        "decided_by": record.decided_by,
        "decided_at": format_timestamp(record.decided_at),
    }
    if record.required_signer is not None:
        # A policy cannot verify the skill's signature: the example policy denies the pair.
        entry["required_signer"] = record.required_signer
    return entry


def server_entry(pin: ServerPin) -> dict[str, Any]:
    """One MCP server's tool-set pin: the set's digest and each tool's, not the definitions
    (a policy compares digests; the definitions are the read API's)."""
    from agbom.store import format_timestamp

    tools = pin.pin.get("tools")
    return {
        "status": pin.status,
        "tool_set": {
            "algorithm": str(pin.pin.get("algorithm", "sha256")),
            "value": pin.value,
            "count": pin.pin.get("count"),
            "tools": dict(tools) if isinstance(tools, Mapping) else {},
        },
        "purl": pin.purl,
        "version": pin.version,
        "decided_by": pin.decided_by,
        "decided_at": format_timestamp(pin.decided_at),
    }


def ban_entries(rules: Path | None, *, with_default: bool) -> list[dict[str, Any]]:
    """The ``kind: ban`` rules of the packs ``agbom serve --rules`` would load, as written
    (match, exceptions), each with its pack. Packs are validated as the rules loader does, so
    a broken pack is the same error here as at serve start."""
    from agbom.rules.loader import iter_pack_sources, read_yaml, validate_pack

    bans: list[dict[str, Any]] = []
    for file in iter_pack_sources(rules, with_default=with_default):
        data, text = read_yaml(file)
        validate_pack(data, text, file)
        pack = data.get("pack") or file.stem
        for rule in data["rules"]:
            if rule.get("kind") != "ban":
                continue
            entry = {"pack": pack, "id": rule["id"]}
            for key in ("severity", "action", "message", "description", "match", "exceptions"):
                if key in rule:
                    entry[key] = rule[key]
            bans.append(entry)
    return bans


def bundle_data(store: Store, *, bans: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """``data.agbom``: the store's decided skill pairs and server pins, and ``bans``."""
    skills: dict[str, dict[str, Any]] = {}
    for status in _DECIDED:
        for record in store.list_skills(status):
            skills.setdefault(record.skill_id, {})[str(record.digest)] = skill_entry(record)
    # Names are matched without regard to case (ServerPin): the bundle keys them lower case.
    servers = {pin.server.lower(): server_entry(pin) for pin in store.list_server_pins()}
    return {"format": DATA_FORMAT, "skills": skills, "servers": servers, "bans": list(bans)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Bundle:
    """A built bundle: its bytes and revision (also its HTTP ETag, quoted)."""

    revision: str
    body: bytes
    data_bytes: int

    @property
    def etag(self) -> str:
        return f'"{self.revision}"'


def _member(tar: tarfile.TarFile, name: str, content: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(content)
    info.mode = 0o644
    info.mtime = 0  # reproducible: the same data gives the same bytes
    tar.addfile(info, io.BytesIO(content))


def build_bundle(data: Mapping[str, Any], *, max_data_bytes: int = MAX_DATA_BYTES) -> Bundle:
    """The bundle of ``data`` (``data.agbom``, as :func:`bundle_data` makes it)."""
    try:
        data_json = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:  # a value JSON cannot hold (a rule pack's YAML may have one)
        raise ExportError(f"the bundle data cannot be written as JSON: {exc}") from None
    if len(data_json) > max_data_bytes:
        raise ExportError(
            f"the bundle data is {len(data_json):,} bytes, over the {max_data_bytes:,} byte "
            "limit: the store holds more decisions than one bundle should carry"
        )
    revision = hashlib.sha256(data_json).hexdigest()
    manifest = orjson.dumps({"revision": revision, "roots": [BUNDLE_ROOT]})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        _member(tar, ".manifest", manifest)
        _member(tar, f"{BUNDLE_ROOT}/data.json", data_json)
        _member(tar, f"{BUNDLE_ROOT}/skill_load.rego", policy_text().encode())
    body = gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)
    return Bundle(revision=revision, body=body, data_bytes=len(data_json))


def build_store_bundle(
    store: Store, *, rules: Path | None = None, with_default: bool = False
) -> Bundle:
    """The bundle of ``store``'s approval records and the ban rules of the packs at
    ``rules`` (the default pack when ``rules`` is None, or with ``with_default``)."""
    return build_bundle(bundle_data(store, bans=ban_entries(rules, with_default=with_default)))
