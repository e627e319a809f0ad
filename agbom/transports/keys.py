"""``GET /v1/keys``: the Guardian's public signing keys, for anyone who checks its signatures.

The document is JWKS-like (``{"keys": [JWK, ...]}``, docs/evidence.md): Ed25519 keys as
RFC 8037 OKP JWKs, ML-DSA-65 keys in the IETF JOSE ML-DSA draft's AKP shape, each with its
``kid`` (the key id responses name in ``signature.key_id``). It is public by design, so it is
served without the read API's bearer token; without ``--signing-key`` it is ``{"keys": []}``.
It is built once at start-up: the keys do not change while the server runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

KEYS_PATH = "/v1/keys"
MEDIA_TYPE = "application/jwk-set+json"


def keys_route(document: Mapping[str, Any] | None) -> Route:
    body = orjson.dumps(dict(document) if document is not None else {"keys": []})
    headers = {"Cache-Control": "public, max-age=300"}

    async def keys(request: Request) -> Response:
        return Response(body, media_type=MEDIA_TYPE, headers=headers)

    return Route(KEYS_PATH, keys, methods=["GET"])
