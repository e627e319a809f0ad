"""Stage 3, session: resolve the request's session, or restore it from the store (-32003).

Guarantees to the next stage: ``context.session`` is the session the request names, as
memory holds it or as the store has it (another replica may have negotiated it since this
one last saw it); it was negotiated by an ACS handshake (not opened by a runtime hook);
``context.request_id`` is the request's id. Nothing about the request's method, replay or
clock has been checked against the session yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agbom.guardian.stages.request import RequestContext
from agbom.protocol import AcsError
from agbom.protocol import errors as codes

if TYPE_CHECKING:
    from agbom.guardian.memory import SessionMemory


def resolve_session(context: RequestContext, memory: SessionMemory) -> None:
    """Find the session in ``memory`` (restoring it when needed); raises -32003
    ``no_handshake`` or -32000 ``hook_session``."""
    params = context.checked_params
    metadata = params["metadata"]
    session_id = context.session_id
    assert session_id is not None
    method = context.method
    session = memory.session(session_id, metadata.get("agent_id"), params.get("tenant_id"))
    if session.negotiated is None:
        # Held from a request before any handshake: the handshake may since have been
        # answered by another replica. Ask the store before refusing.
        session = memory.reloaded(session, metadata.get("agent_id"), params.get("tenant_id"))
    if session.negotiated is None:
        raise AcsError(
            codes.CAPABILITY_NOT_NEGOTIATED,
            "no_handshake",
            "no handshake/hello for this session",
            data={"method": method},
        )
    if session.origin == "hook":
        raise AcsError(
            codes.SESSION_REFUSED,
            "hook_session",
            "this session belongs to a runtime hook; it cannot be driven over ACS",
        )
    context.session, context.request_id = session, params["request_id"]
