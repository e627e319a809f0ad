"""Stage 8, sign: the response signed as the request was, the last stage before the wire.

Guarantees to the caller: a response to a request in an acs-crypto session carries the
Guardian's own signature (:mod:`agbom.guardian.signing`); else a response to a request
signed with a key of the ring is signed with that key (a rotation keeps both keys in the
ring); else it is returned as it is. Error answers go through the same stage, with the key
and session the earlier stages had found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agbom.protocol import KeyRing

if TYPE_CHECKING:
    from agbom.guardian.signing import WireSigner


def sign(
    response: dict[str, Any],
    *,
    signer: WireSigner | None,
    keyring: KeyRing | None,
    session_id: str | None,
    key_id: str | None,
    request_id: str | None,
    hello: bool = False,
) -> dict[str, Any]:
    """``response`` signed for ``session_id`` (see the module docstring); ``key_id`` is the
    ring's key the request was signed with, ``request_id`` the request's own."""
    if signer is not None:
        signed = signer.sign(
            response,
            session_id=session_id,
            hmac_key_id=key_id,
            hello=hello,
            request_id=request_id,
        )
        if signed is not None:
            return signed
    if key_id is not None and session_id is not None:
        assert keyring is not None
        return keyring.sign(response, session_id, key_id)
    return response
