"""The Guardian's own asymmetric signatures on the ACS wire (ACS-Crypto, §10; issue 31).

``agbom serve --signing-key FILE`` (repeatable) gives the Guardian private keys from
``agbom keys generate``. With them:

* the ServerHello's ``profiles_accepted`` holds ``acs-crypto`` when the client offered it
  and an ML-DSA-65 key is configured (the profile requires ML-DSA-65), and its extension
  member ``agbom_signatures`` says which algorithm signs the answers. The standard
  ``signature_algorithms_supported`` is left as it is: the handshake schema defines it as
  what the Guardian verifies on requests, which is HMAC-SHA256 only (issue 42 N2, N3);
* responses carry ``{algorithm, value, key_id}`` by that key over the §10 input
  (:func:`agbom.evidence.sign_envelope`), so a third party with the published public key can
  check them; the HMAC baseline cannot give that, since the client holds the same secret;
* at ``sessionEnd`` the chain head is signed and stored (:meth:`WireSigner.seal`).

Which key signs a response: in a session that accepted ``acs-crypto``, the first ML-DSA-65
key. Otherwise a response to an HMAC-signed request stays HMAC-signed (the ACS-Core client
verifies with the secret it shares; an asymmetric signature in its place would fail its
check), and any other response is signed by the first key given. Requests are only ever
verified with HMAC: agbom holds no client public keys.

The key of an ``acs-crypto`` session is recorded in the store at the handshake
(``response_keys``), so that another replica on the same store, or the Guardian after a
restart, signs the session's answers with the same key.

Keys given after the first are published (``GET /v1/keys``) so that evidence they signed
still verifies during a rotation; a later key signs only as the first ML-DSA-65 key.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agbom.errors import InputError
from agbom.evidence import ML_DSA_65, PublicKey, SigningKey, jwks, sign_envelope, sign_head
from agbom.protocol import HMAC_SHA256, AcsError, Disposition
from agbom.protocol import errors as codes
from agbom.store import Store, StoreError

CRYPTO_PROFILE = "acs-crypto"
KEYS_PATH = "/v1/keys"
"""Where the read API publishes the public keys, as a JWKS-like ``{"keys": [...]}``
(agbom/transports/keys.py serves it; the ServerHello's ``agbom_signatures`` names it)."""
SIGN_ALL = "all"
SIGN_NOT_ALLOW = "non-allow"
SCOPES = (SIGN_ALL, SIGN_NOT_ALLOW)
"""``--sign-responses``: every response, or only ServerHellos, errors and decisions other
than ALLOW (an ML-DSA-65 signature costs about a millisecond: docs/performance.md)."""
MAX_KEYS = 16
MAX_CRYPTO_SESSIONS = 1 << 16
"""Sessions remembered as ``acs-crypto`` (oldest forgotten first), so memory stays bounded."""
BINDING = "agbom_binding"
"""The extension member of a signed ServerHello (in ``result``) and of a signed error (in
``error.data``) that names the session and the request it answers, under the signature, so
that a captured one cannot be replayed into another handshake (issue 39 D4). ACS ignores
unknown fields; decisions carry ``request_id`` already."""


class _Unavailable:
    """An acs-crypto session whose recorded key this Guardian does not hold."""

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id


def signing_key_unavailable(key_id: str) -> AcsError:
    return AcsError(
        codes.INTERNAL_ERROR,
        "signing_key_unavailable",
        f"this acs-crypto session's answers are signed with key {key_id}, which this "
        "Guardian was not started with: nothing is decided until it is (give its "
        "--signing-key); no other key answers in its place",
    )


class WireSigner:
    """The Guardian's signing keys and the rule saying which one signs each response."""

    def __init__(
        self, keys: Sequence[SigningKey], *, scope: str = SIGN_ALL, store: Store | None = None
    ) -> None:
        if not keys:
            raise InputError("no signing key")
        if len(keys) > MAX_KEYS:
            raise InputError(f"at most {MAX_KEYS} signing keys")
        if scope not in SCOPES:
            raise InputError(f"--sign-responses must be one of {', '.join(SCOPES)}")
        unique: dict[str, SigningKey] = {}
        for key in keys:
            unique.setdefault(key.key_id, key)
        self.keys = tuple(unique.values())
        self.primary = self.keys[0]
        self.crypto_key = next((k for k in self.keys if k.algorithm == ML_DSA_65), None)
        self.scope = scope
        # Where an acs-crypto session's key is recorded, for other replicas and restarts.
        self.store = store
        # session id -> the key that signs its answers (acs-crypto), or None (it did not
        # accept acs-crypto); what the store said is remembered too, so it is read once.
        self._sessions: OrderedDict[str, SigningKey | _Unavailable | None] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_files(
        cls, files: Iterable[str | Path], *, scope: str = SIGN_ALL, store: Store | None = None
    ) -> WireSigner:
        """Read each private key file (refused when others may read it: see
        :meth:`agbom.evidence.SigningKey.from_file`)."""
        return cls([SigningKey.from_file(f) for f in files], scope=scope, store=store)

    def jwks(self, retired: Iterable[PublicKey] = ()) -> dict[str, Any]:
        """The public keys, for ``GET /v1/keys`` (no private material), then ``retired``
        ones whose private halves are gone but whose signatures must still verify."""
        return published_keys([*(k.public for k in self.keys), *retired])

    # -- the handshake --------------------------------------------------------------------------

    def hello(
        self, session_id: str, offered: Sequence[str], hello: dict[str, Any]
    ) -> dict[str, Any]:
        """The ServerHello with ``acs-crypto`` accepted when the client offered it and an
        ML-DSA-65 key signs, and what signs the answers in ``agbom_signatures``.

        ``signature_algorithms_supported`` is not touched: it lists what this Guardian
        verifies on requests (the handshake schema's definition), and these keys only sign
        answers. A client that read ML-DSA-65 there would sign with it and be refused on
        every step; Ed25519 is not even a registered name (§10.1)."""
        listed = list(hello.get("signature_algorithms_supported") or [])
        crypto = self.crypto_key is not None and CRYPTO_PROFILE in offered
        if crypto:
            accepted = set(hello.get("profiles_accepted") or ()) | {CRYPTO_PROFILE}
            hello["profiles_accepted"] = [p for p in offered if p in accepted]
        if crypto and self.crypto_key is not None and self.store is not None:
            # Before the answer: a replica that gets the session's next request signs it
            # with the same key (a StoreError here refuses the hello, as its session write).
            self.store.save_response_key(session_id, self.crypto_key.key_id)
        self._remember(session_id, self.crypto_key if crypto else None)
        # An extension field (ACS: unknown fields are ignored) saying which direction uses
        # which algorithm, since the spec's one list does not, and where the keys are.
        key = self._key_for(session_id)
        hmac = HMAC_SHA256 in listed
        hello["agbom_signatures"] = {
            "requests": [HMAC_SHA256] if hmac else [],
            # An HMAC-signed request outside acs-crypto is answered with HMAC (see above).
            "responses": [key.algorithm, *([HMAC_SHA256] if hmac and not crypto else [])],
            "response_key_id": key.key_id,
            "public_keys": KEYS_PATH,
        }
        return hello

    # -- responses ------------------------------------------------------------------------------

    def _remember(self, session_id: str, key: SigningKey | _Unavailable | None) -> None:
        with self._lock:
            self._sessions[session_id] = key
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > MAX_CRYPTO_SESSIONS:
                self._sessions.popitem(last=False)

    def _crypto_key_of(self, session_id: str | None) -> SigningKey | _Unavailable | None:
        """The key of an acs-crypto session, or None: from memory, else from the store (the
        handshake was on another replica, or before a restart). :class:`_Unavailable` when
        the store names a key this Guardian does not hold."""
        if session_id is None:
            return None
        with self._lock:
            if session_id in self._sessions:
                return self._sessions[session_id]
        if self.store is None:
            return None
        try:
            key_id = self.store.response_key(session_id)
        except StoreError:
            return None  # not remembered: asked again on the next request
        key: SigningKey | _Unavailable | None = None
        if key_id is not None:
            held = next((k for k in self.keys if k.key_id == key_id), None)
            key = held if held is not None else _Unavailable(key_id)
        self._remember(session_id, key)
        return key

    def require_key(self, session_id: str) -> None:
        """Raise ``signing_key_unavailable`` for an acs-crypto session whose key this
        Guardian does not hold (restarted without it): refused, never answered with another."""
        key = self._crypto_key_of(session_id)
        if isinstance(key, _Unavailable):
            raise signing_key_unavailable(key.key_id)

    def _crypto_session(self, session_id: str | None) -> bool:
        return self._crypto_key_of(session_id) is not None

    def _key_for(self, session_id: str | None) -> SigningKey:
        key = self._crypto_key_of(session_id)
        return key if isinstance(key, SigningKey) else self.primary

    def sign(
        self,
        response: Mapping[str, Any],
        *,
        session_id: str | None,
        hmac_key_id: str | None,
        hello: bool = False,
        request_id: str | None = None,
    ) -> dict[str, Any] | None:
        """``response`` signed by this signer's key for the session, or None when it is to be
        answered as before (HMAC-signed, or unsigned). A ServerHello or an error names the
        session and request it answers (:data:`BINDING`) under the signature."""
        key = self._crypto_key_of(session_id)
        if isinstance(key, _Unavailable):
            return None  # refused (require_key); no other key signs in its place
        if key is None and hmac_key_id is not None:
            return None  # an ACS-Core session that signs with HMAC: answered with HMAC
        if self.scope == SIGN_NOT_ALLOW and not hello and not _worth_signing(response):
            return None
        binding = {"session_id": session_id, "request_id": request_id}
        if hello and isinstance(response.get("result"), Mapping):
            response = {**response, "result": {**response["result"], BINDING: binding}}
        elif isinstance(response.get("error"), Mapping):
            error = dict(response["error"])
            data = error.get("data")
            error["data"] = {**(data if isinstance(data, Mapping) else {}), BINDING: binding}
            response = {**response, "error": error}
        return sign_envelope(response, key or self.primary)

    # -- sealing --------------------------------------------------------------------------------

    def seal(self, session_id: str, *, chain_hash: str, entry_count: int) -> dict[str, Any]:
        """The signed head statement of a session that has just ended, by the key that signs
        its responses (entry ids are the 1-based sequence numbers the Guardian gives)."""
        return sign_head(
            session_id,
            chain_hash=chain_hash,
            entry_count=entry_count,
            last_entry_id=str(entry_count),
            key=self._key_for(session_id),
        )

    def seal_ended(self, store: Store, session_id: str, head: str | None, seq: int) -> None:
        """Sign and store the head of a session whose ``sessionEnd`` entry is committed.

        The answer to ``sessionEnd`` is not changed by a failure here: the step is already
        in the chain. The head can still be sealed later (``agbom audit seal``).
        """
        if head is None or seq < 1:
            return
        statement = self.seal(session_id, chain_hash=head, entry_count=seq)
        try:
            store.save_signed_head(session_id, statement)
            stored = store.signed_head(session_id)
            count = stored.get("entry_count") if stored is not None else None
            if stored is not None and type(count) is int and count < seq:
                # A checkpoint 'agbom audit seal' stored while the session was open: the
                # head of its end takes its place (the first seal of the end stands).
                store.replace_signed_head(session_id, statement, stored)
        except StoreError as exc:
            print(
                f"agbom: could not store the signed head of session {ascii(session_id[:80])}: "
                f"{exc}",
                file=sys.stderr,
            )


def published_keys(keys: Iterable[PublicKey]) -> dict[str, Any]:
    """The JWKS-like document of ``keys`` (each once, in order), each with its ``use``."""
    document = jwks({k.key_id: k for k in keys}.values())
    for jwk in document["keys"]:
        jwk["use"] = "sig"
    return document


def _worth_signing(response: Mapping[str, Any]) -> bool:
    """Under ``--sign-responses non-allow``: errors, and decisions other than ALLOW."""
    result = response.get("result")
    if not isinstance(result, Mapping):
        return True
    return result.get("decision") != Disposition.ALLOW.value
