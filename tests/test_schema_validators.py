"""The validators generated into agbom/_validators are what agbom's schemas give, and agree."""

from __future__ import annotations

import fastjsonschema
import pytest

from agbom import _schema

REGENERATE = "regenerate them: python -m agbom._validators"


def test_every_generated_validator_is_current() -> None:
    names = _schema.schema_names()
    assert "rule-pack.json" in names and "request-envelope.json" in names
    folder = _schema.generated_path(names[0]).parent
    assert {p.name for p in folder.glob("gen_*.py")} == {
        _schema.generated_path(n).name for n in names
    }, REGENERATE
    for name in names:
        shipped = _schema.generated_path(name).read_text(encoding="utf-8")
        assert shipped == _schema.generated_source(name), f"{name}: {REGENERATE}"


def _failures(validate: _schema.Validator, docs: list[object]) -> list[str]:
    out = []
    for doc in docs:
        try:
            validate(doc)
        except fastjsonschema.JsonSchemaValueException as exc:
            out.append(_schema.describe_failure(exc))
        else:
            out.append("valid")
    return out


BAD_PACKS: list[object] = [
    {},
    {"version": 1, "rules": "no"},
    {"version": 1, "rules": [{"id": "x"}]},
    {"version": 1, "rules": [{"id": "x", "severity": "loud", "match": {}}]},
    [],
]


def test_generated_and_compiled_validators_fail_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    _schema.compiled_validator.cache_clear()
    shipped = _schema.compiled_validator("rule-pack.json")
    assert shipped is _schema._shipped("rule-pack.json")  # the generated module is used
    # Another fastjsonschema: the generated modules do not match and are not used.
    monkeypatch.setattr(fastjsonschema, "VERSION", "0.0.0-other")
    _schema.compiled_validator.cache_clear()
    try:
        assert _schema._shipped("rule-pack.json") is None
        compiled = _schema.compiled_validator("rule-pack.json")
        assert compiled is not shipped
        assert _failures(compiled, BAD_PACKS) == _failures(shipped, BAD_PACKS)
        assert all(text != "valid" for text in _failures(compiled, BAD_PACKS))
    finally:
        _schema.compiled_validator.cache_clear()


def test_a_changed_schema_set_is_not_validated_by_stale_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_schema, "schemas_sha256", lambda: "0" * 64)
    assert _schema._shipped("request-envelope.json") is None


def test_a_module_from_another_generator_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_schema, "GENERATOR_VERSION", _schema.GENERATOR_VERSION + 1)
    assert _schema._shipped("request-envelope.json") is None


def test_rewritten_member_names_read_as_fastjsonschema_writes_them() -> None:
    # The generated code names object members and array items by concatenation instead of
    # "...{key}".format(**locals()); the message must still name the very member.
    shipped = _schema._shipped("step-tool-call-request.json")
    assert shipped is not None
    compiled = fastjsonschema.compile(
        _schema.load_schema("step-tool-call-request.json"), handlers=_schema._HANDLERS
    )
    bad = [
        {"tool": {"name": "t"}, "arguments": {"path x": {"provenance": {}}}},
        {"tool": {"name": "t"}, "arguments": {}, "capability": ["ok", 3]},
    ]
    assert _failures(shipped, bad) == _failures(compiled, bad)
    assert any("arguments.path x" in text for text in _failures(shipped, bad))
