"""Stage 7, respond: the JSON-RPC response object for a decided request.

Guarantees to the next stage: a ``result`` with the request's id; for a handshake, the
ServerHello; for any other method, the decision as the ACS result (its request id, version,
chain hash and evaluation time). Not signed yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agbom.guardian.stages.request import RequestContext
from agbom.protocol import ACS_VERSION

if TYPE_CHECKING:
    from agbom.guardian.decision import Decision


def respond(
    context: RequestContext,
    decision: Decision,
    *,
    chain_hash: str | None = None,
    elapsed_ms: float | None = None,
) -> dict[str, Any]:
    """The unsigned response to ``context.request`` answering ``decision``."""
    request = context.request
    params = context.checked_params
    if context.method == "handshake/hello":
        result: dict[str, Any] = dict(decision.payload or {})
    else:
        result = decision.to_result(
            request_id=params["request_id"],
            acs_version=ACS_VERSION,
            chain_hash=chain_hash,
            evaluation_duration_ms=elapsed_ms,
        )
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}
