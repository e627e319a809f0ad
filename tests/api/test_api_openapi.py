"""The read API against its OpenAPI 3.1 document, on a real ``agbom serve`` over 127.0.0.1.

- The document is valid OpenAPI 3.1 (schemathesis loads it; its schemas are Draft 2020-12),
  is what ``/v1/openapi.json`` serves, and names exactly the app's GET routes.
- schemathesis fuzzes every operation, bounded in examples, against a store holding sample
  data (approvals, a stored AgBOM): no 5xx, every status, content type, header and body as
  documented, and auth enforced (its ``ignored_auth`` check sends each call without the
  token too).
- Every operation that needs the token answers 401 without it, and says nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.routing import Route

from agbom.store import open_store
from agbom.transports.http import InProcessDecisions, create_app
from agbom.transports.interface import Limits
from agbom.transports.openapi import openapi_bytes
from tests.api.live import AUTH, TOKEN, schemathesis_run, seeded_server
from tests.transports.served import Served

DOC = orjson.loads(openapi_bytes())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = seeded_server(tmp_path_factory.mktemp("api"))
    try:
        yield server
    finally:
        server.stop()


FUZZ_EXAMPLES = 100
"""Examples per operation and phase. No time budget: with one, how far a run gets depends
on the machine's speed, and two runs would not send the same requests."""
FUZZ_SEED = 32


def test_schemathesis_finds_no_failure_on_a_live_server(served: Served, tmp_path: Path) -> None:
    """schemathesis, every check (no 5xx, status codes, content types, headers, bodies,
    negative data rejected, auth enforced), examples then coverage, fuzzing and stateful
    links; a fixed seed, derandomized, one worker: a failure here is a failure on every run
    (benchmarks/fuzz_api.py is the longer random run, docs/api.md)."""
    done = schemathesis_run(
        served.url,
        tmp_path,
        max_examples=FUZZ_EXAMPLES,
        seed=FUZZ_SEED,
        deterministic=True,
        timeout=600,
    )
    report = done.stdout[-20000:] + done.stderr[-4000:]
    assert done.returncode == 0, report
    assert "No issues found" in done.stdout, report
    for phase in ("Examples", "Coverage", "Fuzzing", "Stateful"):
        assert f"✅ {phase}" in done.stdout, report  # every phase ran, none failed


def test_the_served_document_is_the_one_in_the_repo(served: Served) -> None:
    answer = httpx.get(served.url + "/v1/openapi.json", timeout=30)
    assert answer.status_code == 200
    assert answer.content == openapi_bytes()
    assert DOC["openapi"].startswith("3.1.")


def test_the_document_is_valid_openapi_3_1() -> None:
    # An independent validator: the 3.1 meta-schema and its extra rules (unique operation
    # ids, every path parameter declared, every $ref resolving).
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.validators import OpenAPIV31SpecValidator

    validate(DOC, cls=OpenAPIV31SpecValidator)
    broken = orjson.loads(openapi_bytes())
    broken["paths"]["/v1/skills/{skill_id}"]["get"]["parameters"] = []
    with pytest.raises(Exception, match="skill_id"):
        validate(broken, cls=OpenAPIV31SpecValidator)


def _route_template(route: Route) -> str:
    # starlette's converters ({skill_id:path}) are plain parameters in OpenAPI.
    return route.path.replace(":path", "")


def test_the_document_names_exactly_the_apps_get_routes(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db"):
        pass
    app = create_app(
        InProcessDecisions(lambda: None, Limits()),  # type: ignore[arg-type,return-value]
        api_token=TOKEN,
    )
    routes = _starlette_routes(app)
    served_paths = {
        _route_template(r)
        for r in routes
        if isinstance(r, Route) and r.methods and "GET" in r.methods
    }
    assert served_paths == set(DOC["paths"])
    for path, item in DOC["paths"].items():
        assert set(item) == {"get"}, path


def _starlette_routes(app: Any) -> list[Any]:
    """The routes of the starlette app inside the front's closures."""
    seen: set[int] = set()
    todo = [app]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        routes = getattr(fn, "routes", None)
        if isinstance(routes, list):
            return routes
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:
                continue
    raise AssertionError("no starlette app found under the front")


def test_without_the_token_every_protected_operation_is_401(served: Served) -> None:
    examples = {
        "skill_id": "acme/pdf-tools",
        "digest": "sha256:" + "ab" * 32,
        "session_id": "session-example",
        "agent_id": "travel-orchestrator",
    }
    protected = [p for p, item in DOC["paths"].items() if item["get"].get("security") != []]
    assert len(protected) >= 5
    for path in protected:
        required = [  # a required query parameter takes the document's example
            f"{q['name']}={q['example']}"
            for q in DOC["paths"][path]["get"].get("parameters", [])
            if q["in"] == "query" and q.get("required")
        ]
        url = served.url + path.format(**examples) + ("?" + "&".join(required) if required else "")
        for headers in (
            {},
            {"Authorization": "Bearer not-the-token-00000"},
            {"Authorization": TOKEN},
        ):
            answer = httpx.get(url, headers=headers, timeout=30)
            assert answer.status_code == 401, (path, answer.status_code)
            assert answer.json()["error"] == "unauthorized"
            assert b"acme" not in answer.content and b"travel" not in answer.content
        assert httpx.get(url, headers=AUTH, timeout=30).status_code == 200, path
