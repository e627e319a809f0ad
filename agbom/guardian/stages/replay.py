"""Stage 4, clock and replay: the request is new (-32005), on time (-32006), and admitted by
its session's state.

In the order the spec fixes the error codes: a request id this session has seen, decided or
refused, is a replay before anything else can refuse it; then the method must have been
negotiated, the session open (or opened by this very step), not ended, not started twice;
then the nonce, the clock skew window and the client's view of the chain head.

Guarantees to the next stage: the request id and nonce are new to this session, its
timestamp within the skew window of ``context.now``, the client's chain head (if it sent
one) the session's; ``context.opens`` says whether the step opens the session implicitly
(then the session is marked started, and must be unmarked if the step is not recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agbom.guardian.config import GuardianConfig
from agbom.guardian.stages.request import RequestContext
from agbom.protocol import AcsError, timestamp_seconds
from agbom.protocol import errors as codes


def check_replay_and_clock(
    context: RequestContext, config: GuardianConfig, clock: Callable[[], float]
) -> None:
    """Refuse a replayed, late or early, or inadmissible request (see the module docstring);
    ``clock`` is read once, after the session's own checks."""
    session = context.checked_session
    params = context.checked_params
    method = context.method
    request_id = context.request_id
    assert request_id is not None and context.spec is not None
    # Older decided ids still fail on the store's unique index when their entry is appended.
    if session.seen_request(request_id):
        raise AcsError(
            codes.REPLAY_DETECTED,
            "duplicate_request_id",
            "request_id was already used in this session",
        )
    assert session.negotiated is not None
    negotiated_name = "protocols/MCP/*" if method.startswith(("protocols/", "wrapped:")) else method
    if negotiated_name not in session.negotiated and method not in session.negotiated:
        raise AcsError(
            codes.CAPABILITY_NOT_NEGOTIATED,
            "method_not_negotiated",
            f"{method} was not negotiated for this session",
            data={"method": method},
        )
    implicit_start = method != "steps/sessionStart" and not session.started
    if implicit_start and config.require_session_start:
        raise AcsError(
            codes.CAPABILITY_NOT_NEGOTIATED,
            "no_session",
            "steps/sessionStart has not opened this session",
            data={"method": method},
        )
    if session.closed:
        raise AcsError(
            codes.SESSION_REFUSED,
            "session_closed",
            "the session has ended; its chain is sealed",
        )
    if method == "steps/sessionStart" and session.started:
        raise AcsError(
            codes.SESSION_REFUSED,
            "session_already_started",
            "sessionStart was already received",
        )
    now = clock()
    nonce = params.get("nonce")
    if (
        nonce is not None
        and nonce in session.nonces
        and now - session.nonces[nonce] <= config.nonce_window_ms / 1000
    ):
        raise AcsError(codes.REPLAY_DETECTED, "duplicate_nonce", "nonce was already used")
    check_clock(params, now, config.skew_window_ms)
    # Chain cross-check: the client's view of the head must be ours.
    metadata = params["metadata"]
    client_head = (
        (metadata.get("session_state") or {}).get("chain_hash")
        if isinstance(metadata.get("session_state"), dict)
        else None
    )
    if client_head is not None and client_head != session.head:
        raise AcsError(
            codes.CHAIN_MISMATCH,
            "chain_mismatch",
            "session_state.chain_hash is not the current chain head",
        )
    context.now, context.nonce = now, nonce
    context.opens = implicit_start and context.spec.audited
    if context.opens:
        # Spec §8: with no sessionStart, the first step opens the session; its entry is the
        # chain root and says so.
        session.started = True
        session.implicit_start = True


def check_clock(params: Mapping[str, Any], now: float, skew_window_ms: int) -> None:
    """-32006 when ``params.timestamp`` is further than the skew window from ``now``.

    A timestamp the RFC 3339 grammar refuses was refused with -32600 by the envelope stage;
    read here again (the HTTP front may have run that stage), it is refused the same way, not
    as skew."""
    sent_at = timestamp_seconds(params["timestamp"])
    if abs(now - sent_at) * 1000 > skew_window_ms:
        raise AcsError(
            codes.TIMESTAMP_OUT_OF_WINDOW,
            "timestamp_out_of_window",
            "timestamp is outside the accepted clock skew window",
            data={"skew_window_ms": skew_window_ms},
        )
