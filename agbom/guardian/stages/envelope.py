"""Stage 1, envelope: parse and validate the JSON-RPC envelope (-32600) and its ACS version.

Guarantees to the next stage: the request is an object whose ``params`` hold a string
``request_id``, an RFC 3339 ``timestamp``, ``metadata`` with a ``session_id`` and
``agent_id``, within the depth bound; its ACS version is one this Guardian speaks; the
context holds its method, params, metadata, session id and method spec (None for a method
the protocol does not know, refused -32601 after authentication).
"""

from __future__ import annotations

from typing import Any

from agbom.guardian.stages.request import RequestContext
from agbom.protocol import (
    ACS_VERSION,
    AcsError,
    lookup,
    validate_envelope,
    version_supported,
)
from agbom.protocol import errors as codes


def read_envelope(context: RequestContext, *, max_json_depth: int) -> None:
    """Check the envelope of ``context.request`` (unless the HTTP front has) and read it into
    the context; raises :class:`AcsError` -32600 or -32000 ``unsupported_version``."""
    request = context.request
    if context.prechecked is None:
        validate_envelope(unsigned_ping(request), max_depth=max_json_depth)
    params: dict[str, Any] = request["params"]
    if not version_supported(params["acs_version"]):
        raise AcsError(
            codes.UNSUPPORTED_VERSION,
            "unsupported_version",
            f"ACS version {params['acs_version']} is not supported",
            data={"supported_versions": [ACS_VERSION]},
        )
    context.method = request["method"]
    context.params = params
    context.metadata = params["metadata"]
    context.spec = lookup(context.method)
    context.session_id = params["metadata"]["session_id"]


def unsigned_ping(request: Any) -> Any:
    """A ``system/ping`` as its envelope is checked: without its signature, whatever that
    holds (an unregistered algorithm, a string). §13: a ping is answered allow regardless of
    signature, so that liveness can be probed during a key or algorithm mismatch; its
    signature is never read. Any other request is returned as it is."""
    if not isinstance(request, dict) or request.get("method") != "system/ping":
        return request
    params = request.get("params")
    if not isinstance(params, dict) or "signature" not in params:
        return request
    return {**request, "params": {k: v for k, v in params.items() if k != "signature"}}
