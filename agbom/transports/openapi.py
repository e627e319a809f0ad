"""``GET /v1/openapi.json``: the OpenAPI 3.1 document of the read API (kept in the repo as
agbom/transports/openapi.json; tests/api checks the routes and responses against it)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

OPENAPI_PATH = "/v1/openapi.json"


@cache
def openapi_bytes() -> bytes:
    """The document as shipped (read once)."""
    return resources.files("agbom.transports").joinpath("openapi.json").read_bytes()


def openapi_route() -> Route:
    # No token: the document describes the API, it holds no data.
    async def openapi(request: Request) -> Response:
        return Response(openapi_bytes(), media_type="application/json")

    return Route(OPENAPI_PATH, openapi, methods=["GET"])
