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

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.routing import Route

from agbom.inventory import AgBOM
from agbom.store import Digest, SkillStatus, open_store
from agbom.transports.bundle import MAX_WAIT_S
from agbom.transports.http import InProcessDecisions, create_app
from agbom.transports.interface import Limits
from agbom.transports.openapi import openapi_bytes
from tests.transports.served import Served

REPO = Path(__file__).resolve().parents[2]
TOKEN = "api-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DOC = orjson.loads(openapi_bytes())


def _seed(db: Path) -> None:
    """The examples the document names exist, so the fuzzer reaches 200s, not only 404s."""
    sample = orjson.loads((REPO / "samples" / "agboms" / "coding-agent.json").read_bytes())
    agbom = AgBOM.from_document(sample, source="sample")
    document = agbom.to_document()
    agent_id = str(document["agent"]["id"])
    with open_store(db) as store:
        store.set_status(
            "acme/pdf-tools",
            Digest.parse("sha256:" + "ab" * 32),
            SkillStatus.APPROVED,
            actor="seed",
            scope_agents=["travel-*"],
        )
        store.set_status(
            "acme/old", Digest.parse("sha256:" + "cd" * 32), SkillStatus.REVOKED, actor="seed"
        )
        for session, agent in (("session-example", "travel-orchestrator"), ("s2", agent_id)):
            store.save_agbom_version(
                session, agent_id=agent, document=document, agbom_hash=agbom.agbom_hash
            )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("api")
    _seed(folder / "s.db")
    (folder / "token").write_text(TOKEN + "\n")
    server = Served(
        db=folder / "s.db",
        log=folder / "serve.log",
        extra=["--api-token-file", str(folder / "token")],
    ).start()
    try:
        yield server
    finally:
        server.stop()


FUZZ_EXAMPLES = 25
"""Examples per operation and phase: the run is bounded by this and by --max-time (a
whole run of all four phases takes about 100 s on the 2-core development machine)."""
FUZZ_SECONDS = 100


def test_schemathesis_finds_no_failure_on_a_live_server(served: Served, tmp_path: Path) -> None:
    """schemathesis, every check (no 5xx, status codes, content types, headers, bodies,
    negative data rejected, auth enforced), examples then fuzzing then stateful links."""
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "run",
        served.url + "/v1/openapi.json",
        "--checks",
        "all",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--max-examples",
        str(FUZZ_EXAMPLES),
        "--max-time",
        str(FUZZ_SECONDS),
        "--seed",
        "32",
        "--workers",
        "2",
        # Over the longest long poll: a generated If-None-Match: * with Prefer: wait=N is a
        # legitimate poll that is answered after up to MAX_WAIT_S. With 30 s, one run in four
        # ended in a schemathesis "Runtime Error" (a client time-out, most likely that).
        "--request-timeout",
        str(MAX_WAIT_S + 15),
        "--report-dir",
        str(tmp_path),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=FUZZ_SECONDS + 120, check=False,
        cwd=tmp_path,  # its crash cache (.schemathesis/) goes there, not into the work tree
        env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"},
    )  # fmt: skip
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
        url = served.url + path.format(**examples)
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
