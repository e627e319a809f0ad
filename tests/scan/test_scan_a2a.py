"""A2A Agent Cards: every interface an endpoint, a card without security flagged, and a
malformed card an error located at its fields (never "skipped")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agbom.inventory import AgBOM, ComponentGraph
from agbom.rules import load_rules
from agbom.scan import scan_paths

FIXTURES = Path(__file__).parent / "fixtures" / "a2a"

# card -> every (url, binding, protocol version) it offers, the preferred one first
INTERFACES = {
    "v03-three-transports.json": [
        ("https://invoices.example.com/a2a/jsonrpc", "JSONRPC", "0.3.0"),
        ("https://invoices.example.com:8443/a2a.grpc", "GRPC", "0.3.0"),
        ("https://invoices.example.com/a2a/rest", "HTTP+JSON", "0.3.0"),
    ],
    "v10-three-bindings.json": [
        ("https://weather.example.com/a2a/v1", "JSONRPC", "1.0"),
        ("https://grpc.weather.example.com", "GRPC", "1.0"),
        ("https://weather.example.com/a2a/rest/v1", "HTTP+JSON", "1.0"),
    ],
    "v10-with-legacy-03.json": [
        ("https://hr.example.com/a2a/v1", "JSONRPC", "1.0"),
        ("https://hr.example.com/a2a/legacy", "JSONRPC", "0.3"),
    ],
    "v02-single.json": [("https://fx.example.com/", "JSONRPC", "0.2")],
    "v03-single.json": [("https://search.example.com/a2a", "JSONRPC", "0.3.0")],
    "v10-single.json": [("https://translate.example.com/a2a", "JSONRPC", "1.0")],
}


def _peer(tmp_path: Path, name: str, doc: Any | None = None) -> tuple[Any, Any]:
    folder = tmp_path / name.removesuffix(".json")
    folder.mkdir()
    target = folder / ("agent.json" if name.startswith("v02") else "agent-card.json")
    if doc is None:
        shutil.copy(FIXTURES / name, target)
    else:
        target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    result = scan_paths([folder])
    peers = [c for c in result.agbom if c.type.value == "a2a_peer"]
    return result, peers


@pytest.mark.parametrize("name", sorted(INTERFACES))
def test_every_interface_is_an_endpoint(tmp_path: Path, name: str) -> None:
    result, (peer,) = _peer(tmp_path, name)
    assert result.errors == []
    got = [(i["url"], i["binding"], i["protocol_version"]) for i in peer.data["interfaces"]]
    assert got == INTERFACES[name]
    assert peer.data["endpoint"] == INTERFACES[name][0][0]
    assert peer.data["protocol_version"] == INTERFACES[name][0][2]
    assert peer.data["security_schemes"]  # every realistic card here declares one


def _card(**changes: Any) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "v03-single.json").read_text())
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def test_a_card_without_security_schemes_is_a_finding(tmp_path: Path) -> None:
    _, (open_peer,) = _peer(tmp_path, "open.json", _card(securitySchemes=None, security=None))
    _, (empty_peer,) = _peer(tmp_path, "empty.json", _card(securitySchemes={}))
    _, (secured,) = _peer(tmp_path, "secured.json", _card())
    rules = load_rules()
    for peer, expected in ((open_peer, True), (empty_peer, True), (secured, False)):
        document = {"agent": {"id": "a"}, "components": [peer.data]}
        graph = ComponentGraph(AgBOM.from_document(document))
        fired = [f.rule_id for f in rules.evaluate(graph)]
        assert ("AGB-HYG-006" in fired) is expected, (peer.id, fired)


def test_a_malformed_card_is_an_error_at_each_field(tmp_path: Path) -> None:
    doc = _card(name=42, defaultInputModes="text/plain", skills={"id": "x"},
                additionalInterfaces=[{"url": 7, "transport": "GRPC"}])  # fmt: skip
    result, peers = _peer(tmp_path, "bad.json", doc)
    (report,) = result.files
    assert report.status.value == "error"
    text = (tmp_path / "bad" / "agent-card.json").read_text().splitlines()
    reasons = {e.reason: e for e in report.errors}
    expected = {
        "'name' must be a non-empty string, not int": '"name"',
        "'defaultInputModes' must be an array of strings, not str": '"defaultInputModes"',
        "'skills' must be an array, not dict": '"skills"',
        "'additionalInterfaces[0].url' must be a non-empty string, not int": '"url": 7',
    }
    for reason, needle in expected.items():
        error = reasons[reason]
        assert error.line is not None and needle in text[error.line - 1], (reason, error)
    # The card still names an endpoint an agent may call: inventoried, marked invalid.
    (peer,) = peers
    assert peer.data["valid"] is False


@pytest.mark.parametrize(
    "content", ["[1, 2]", '{"name": "x"}', '{"name": "x", "url": 3, "skills": []}']
)
def test_an_unusable_agent_card_json_is_an_error_not_skipped(tmp_path: Path, content: str) -> None:
    (tmp_path / "agent-card.json").write_text(content, encoding="utf-8")
    result = scan_paths([tmp_path])
    (report,) = result.files
    assert report.status.value == "error"
    assert all(e.line is not None for e in report.errors)
    assert list(result.agbom) == []


def test_a_generic_agent_json_that_is_no_card_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "agent.json").write_text('{"model": "x", "tools": []}', encoding="utf-8")
    (report,) = scan_paths([tmp_path]).files
    assert report.status.value == "skipped"


def test_secrets_in_secondary_interface_urls_are_redacted(tmp_path: Path) -> None:
    doc = _card(additionalInterfaces=[{"url": "https://s.example.com/a2a?key=hunter2-secret",
                                       "transport": "HTTP+JSON"}])  # fmt: skip
    _, (peer,) = _peer(tmp_path, "secret.json", doc)
    assert "hunter2" not in json.dumps(peer.data)
    assert "interfaces[1].url" in peer.data["redacted"]
