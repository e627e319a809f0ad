"""Stage 2, authenticate: the request's HMAC signature (-32004), never for ``system/ping``.

Guarantees to the next stage: a signed request's signature verified with a key of the ring
(``context.signed_by``); an unsigned one is allowed to be (no signature required by the
Guardian, nor by a signed handshake of its session); ``context.key_id`` names the key an
error answer is signed with, as soon as one is known; a session on the Guardian's own
acs-crypto keys has its key (else it is refused, never answered with another key); a
pipelined request's late error answer is signed like its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agbom.guardian.stages.request import RequestContext
from agbom.protocol import AcsError, KeyRing
from agbom.protocol import errors as codes

if TYPE_CHECKING:
    from agbom.guardian.session import SessionState
    from agbom.guardian.signing import WireSigner
    from agbom.store import Store


class Authenticate:
    """Stage 2 (see the module docstring), over the Guardian's keys and sessions."""

    def __init__(
        self,
        *,
        keyring: KeyRing | None,
        require_signatures: bool,
        signer: WireSigner | None,
        store: Store,
        held: Callable[[str], SessionState | None],
    ) -> None:
        self._keyring = keyring
        self._require_signatures = require_signatures
        self._signer = signer
        self._store = store
        self._held = held  # the session if memory holds it (SessionMemory.held)

    def __call__(self, context: RequestContext) -> None:
        method = context.method
        session_id = context.session_id
        assert session_id is not None
        key_id = self._verify(context.request, method, session_id, context)
        context.signed_by = key_id
        pipelined = context.pipelined
        if key_id is not None and pipelined is not None:
            # An error found only at commit (a replay the store caught, a failed append)
            # is signed like the answer it replaces.
            keyring = self._keyring
            assert keyring is not None
            signed_key = key_id
            pipelined.signer = lambda response: keyring.sign(response, session_id, signed_key)
        if self._signer is not None and method != "handshake/hello":
            # An acs-crypto session whose key this Guardian was not started with (a restart
            # without it) is refused, never answered with another key (issue 39 D4).
            self._signer.require_key(session_id)

    def _verify(
        self, request: dict[str, Any], method: str, session_id: str, context: RequestContext
    ) -> str | None:
        """Verify the request's signature; return the key id that signed it, or None when it
        is unsigned and may be. Sets the key that signs the error answer as soon as one is
        known: the key the request names, else the key of the session's signed handshake."""
        params = request["params"]
        keyring = self._keyring
        if "signature" not in params:
            signed_key = self._signed_key_of(session_id) if keyring is not None else None
            if keyring is not None and signed_key is not None:
                context.key_id = signed_key if signed_key in keyring.key_ids else None
                raise AcsError(
                    codes.SIGNATURE_INVALID,
                    "signature_required",
                    "this session's handshake was signed: every request in it must be",
                )
            if self._require_signatures:
                raise AcsError(
                    codes.SIGNATURE_INVALID,
                    "signature_required",
                    "this Guardian requires signed requests",
                )
            return None
        if keyring is None:
            if method == "handshake/hello":
                return None  # answered, unsigned, with signature_algorithms_supported: []
            raise AcsError(
                codes.SIGNATURE_INVALID,
                "signing_not_configured",
                "the request is signed, but this Guardian has no key and its ServerHello "
                "advertises no signature algorithm; send requests unsigned",
                data={"signature_algorithms_supported": []},
            )
        named = params["signature"].get("key_id") if isinstance(params["signature"], dict) else None
        if isinstance(named, str) and named in keyring.key_ids:
            context.key_id = named
        else:
            signed_key = self._signed_key_of(session_id)
            context.key_id = signed_key if signed_key in keyring.key_ids else None
        # SignatureInvalid is an AcsError (-32004) carrying the precise reason.
        return keyring.verify(request, session_id)

    def _signed_key_of(self, session_id: str) -> str | None:
        """The key id of the session's signed handshake, if it had one (without creating or
        restoring the session)."""
        session = self._held(session_id)
        if session is not None:
            return session.signed_key
        stored = self._store.get_session(session_id)
        negotiated = stored.get("negotiated") if stored is not None else None
        if isinstance(negotiated, Mapping) and isinstance(negotiated.get("signed_key"), str):
            return str(negotiated["signed_key"])
        return None
