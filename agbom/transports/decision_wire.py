"""What the front process and the decision process of ``agbom serve`` say to each other.

Frames on their socket pair (big-endian)::

    request: length u32 | tag u32 | kind u8 | payload      (kind 1: ACS body, 2: hook event)
    reply:   length u32 | tag u32 | payload                (tag 0: control, "ready"/"error: …")

A hook payload is ``u32 length | meta JSON | event body``, its reply ``u32 length | meta JSON |
reply body``. The spec the decision process builds its Guardian from (:class:`WorkerSpec`)
travels as JSON over an inherited pipe, never on a command line (see
agbom/transports/decision_loop.py).
"""

from __future__ import annotations

import os
import struct
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from agbom.adapters.interface import HookReply
from agbom.guardian import Guardian, GuardianConfig
from agbom.guardian.config import Mode
from agbom.transports.interface import Limits

REQUEST = struct.Struct(">IIB")
REPLY = struct.Struct(">II")
META = struct.Struct(">I")
KIND_ACS = 1
KIND_HOOK = 2
KIND_ACS_CHECKED = 3
"""An ACS request the front already checked (agbom/guardian/precheck.py): the payload is its
request hash, 64 hex digits, then the body."""
CONTROL_TAG = 0
READY = b"ready"
STORE_WRITABLE = b"store: writable"
STORE_UNWRITABLE = b"store: unwritable: "
"""Control frames the decision process sends when its store stops or starts taking writes."""
PROBE_INTERVAL_S = 0.25
"""How often a decision process whose store cannot write tries a write of its own."""
IDLE_PROBE_S = 1.0
"""How often a decision process on a database server (PostgreSQL) tries a write of its own
while the store is healthy: the server can go away while no request arrives, and /healthz
must say so (503) within about this (plus the probe's own 2 s connection timeout)."""
FRAME_SLACK = 1 << 20
"""Bytes a frame may carry beyond the body limit (a hook's headers and metadata)."""


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """Everything the decision process needs to build the Guardian the CLI asked for."""

    db: str
    rules: str | None = None
    mode: str = "enforce"
    secret_file: str | None = None
    key_id: str | None = None
    keys_file: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    with_default_rules: bool = False

    @classmethod
    def of(
        cls,
        db: os.PathLike[str] | str,
        rules: os.PathLike[str] | str | None,
        *,
        mode: str,
        secret_file: os.PathLike[str] | str | None,
        config: GuardianConfig,
        limits: Limits,
        key_id: str | None = None,
        keys_file: os.PathLike[str] | str | None = None,
        with_default_rules: bool = False,
    ) -> WorkerSpec:
        settings = asdict(config)
        settings["mode"] = str(config.mode)
        for name, value in settings.items():
            if isinstance(value, tuple):
                settings[name] = list(value)  # JSON has no tuples; guardian_config turns back
        return cls(
            db=os.fspath(db),
            rules=None if rules is None else os.fspath(rules),
            mode=mode,
            secret_file=None if secret_file is None else os.fspath(secret_file),
            key_id=key_id,
            keys_file=None if keys_file is None else os.fspath(keys_file),
            config=settings,
            limits=asdict(limits),
            with_default_rules=with_default_rules,
        )

    def to_json(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_json(cls, text: str) -> WorkerSpec:
        return cls(**orjson.loads(text))

    def guardian_config(self) -> GuardianConfig:
        settings = dict(self.config)
        if "mode" in settings:
            settings["mode"] = Mode(settings["mode"])
        for name, value in settings.items():
            if isinstance(value, list):
                settings[name] = tuple(value)
        return GuardianConfig(**settings)

    def build(self) -> Guardian:
        from agbom.guardian import build_guardian

        return build_guardian(
            self.db,
            self.rules,
            mode=self.mode,
            secret_file=self.secret_file,
            key_id=self.key_id,
            keys_file=self.keys_file,
            config=self.guardian_config(),
            transport="http",  # the decision process answers the HTTP front only
            with_default_rules=self.with_default_rules,
        )


def join_meta(meta: dict[str, Any], body: bytes) -> bytes:
    """A hook frame's payload (either way): ``u32 length | meta JSON | body``."""
    text = orjson.dumps(meta)
    return META.pack(len(text)) + text + body


def split_meta(payload: bytes) -> tuple[dict[str, Any], bytes]:
    """The inverse of :func:`join_meta`."""
    (size,) = META.unpack_from(payload)
    return orjson.loads(payload[META.size : META.size + size]), payload[META.size + size :]


def encode_hook_reply(reply: HookReply) -> bytes:
    status = {
        "exit_code": reply.exit_code,
        "stderr": reply.stderr,
        "http_status": reply.http_status,
    }
    return join_meta(status, reply.body)


def decode_hook_reply(payload: bytes) -> HookReply:
    meta, body = split_meta(payload)
    return HookReply(body=body, **meta)
