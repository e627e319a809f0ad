"""The CycloneDX validators shipped in agbom/export/_cdx_validators are built from the schemas.

Each process imports the shipped module instead of compiling the schema; these tests check
that the module is exactly what the bundled schemas and the installed fastjsonschema give,
and that a module that does not match them is never used.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import fastjsonschema
import pytest
from export_samples import every_type_document

import agbom
from agbom.export import (
    SPEC_VERSIONS,
    ExportError,
    _cdx_schema,
    build_cyclonedx,
    validate_cyclonedx_json,
)
from agbom.inventory import AgBOM

REGENERATE = "regenerate it: python -m agbom.export._cdx_validators"


@pytest.mark.parametrize("spec_version", SPEC_VERSIONS)
def test_shipped_validator_is_what_the_schemas_give(spec_version):
    shipped = _cdx_schema.module_path(spec_version).read_text(encoding="utf-8")
    assert f'SCHEMA_SHA256 = "{_cdx_schema.schema_sha256(spec_version)}"' in shipped, (
        f"the shipped {spec_version} validator was built from other schemas; {REGENERATE}"
    )
    assert f'FASTJSONSCHEMA_VERSION = "{fastjsonschema.VERSION}"' in shipped, (
        f"the shipped {spec_version} validator was built by another fastjsonschema; {REGENERATE}"
    )
    assert shipped == _cdx_schema.generated_source(spec_version), REGENERATE


def test_schema_digest_covers_every_file_the_schema_refers_to():
    assert len({_cdx_schema.schema_sha256(v) for v in SPEC_VERSIONS}) == len(SPEC_VERSIONS)
    referred: set[str] = set()
    for version in SPEC_VERSIONS:
        text = json.dumps(_cdx_schema.bom_schema(version))
        found = set(re.findall(r'"\$ref": "http://cyclonedx.org/schema/([^"#]+)', text))
        referred |= found - {f"bom-{version}.schema.json"}  # itself (its own $id)
    assert referred  # the key hashes every file a BOM schema refers to
    assert referred <= set(_cdx_schema._COMPANIONS)


def _rejects_unknown_type(spec_version: str) -> None:
    doc = build_cyclonedx(AgBOM.from_document(every_type_document()), spec_version)
    validate_cyclonedx_json(doc, spec_version)
    broken = copy.deepcopy(doc)
    broken["components"][0]["type"] = "ai-model"
    with pytest.raises(ExportError, match=r"components\[0\]\.type"):
        validate_cyclonedx_json(broken, spec_version)


def test_a_validator_built_by_another_fastjsonschema_is_not_used(monkeypatch):
    # With another fastjsonschema installed, the shipped module's key does not match: the
    # validator is generated from the schema in this process and validates the same way.
    monkeypatch.setattr(fastjsonschema, "VERSION", "0.0.0-other")
    _cdx_schema._compiled.cache_clear()
    try:
        assert _cdx_schema._shipped("1.6") is None
        _rejects_unknown_type("1.6")
    finally:
        _cdx_schema._compiled.cache_clear()
    monkeypatch.undo()
    assert _cdx_schema._shipped("1.6") is not None
    _rejects_unknown_type("1.6")


def test_a_changed_schema_is_validated_by_itself_not_by_the_shipped_module(tmp_path):
    # A copy of the package whose 1.6 schema also allows the component type "ai-model": the
    # shipped module (built from the real schema) no longer matches, so it must not be used.
    package = tmp_path / "agbom"
    shutil.copytree(
        Path(agbom.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__")
    )
    schema_file = package / "export" / "schemas" / "bom-1.6.SNAPSHOT.schema.json"
    text = schema_file.read_text(encoding="utf-8")
    assert text.count('"machine-learning-model",') == 1
    schema_file.write_text(
        text.replace('"machine-learning-model",', '"machine-learning-model", "ai-model",'),
        encoding="utf-8",
    )
    probe = (
        "import sys, json\n"
        "import agbom.export._cdx_schema as s\n"
        "assert s.__file__.startswith(sys.argv[1]), s.__file__\n"
        "doc = json.load(sys.stdin)\n"
        "s.validate_cyclonedx_json(doc, '1.6')\n"
        "print('shipped' if s._shipped('1.6') else 'compiled here')\n"
    )
    doc = build_cyclonedx(AgBOM.from_document(every_type_document()), "1.6")
    doc["components"][0]["type"] = "ai-model"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", probe, str(package)],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,  # '-c' puts the working folder first on sys.path: the copy's parent
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "compiled here"


def test_generated_code_carries_no_schema_in_its_raises():
    # The (sub)schema literal each raise carried was 90% of the code and most of the memory.
    source = _cdx_schema.module_path("1.6").read_text(encoding="utf-8")
    raises = [line for line in source.splitlines() if "JsonSchemaValueException(" in line]
    assert raises
    assert all(", definition=None, rule=" in line for line in raises if "raise" in line)
    assert len(source) < 1_500_000


def test_unexpected_generated_code_is_refused():
    with pytest.raises(ExportError, match="unexpected fastjsonschema code"):
        _cdx_schema._strip_definition('raise JsonSchemaValueException("x", value=data)')
