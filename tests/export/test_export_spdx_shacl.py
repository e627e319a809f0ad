"""SPDX 3.0.1 exports conform to the official model's SHACL shapes (pySHACL, offline).

The model (``spdx-model.ttl``: the ontology and its shapes) and the JSON-LD context are the
files the SPDX project publishes for 3.0.1, kept unchanged in ``tests/export/spdx-3.0.1/``
(source, hashes and licence in its README.md). The document's ``@context`` URL is replaced by
the local context before parsing, so nothing is fetched. This is the third check of the export,
next to spdx-python-model (tests/export/test_export_spdx.py) and the SPDX JSON schema: the
shapes see what the JSON-LD means after expansion, which neither of the other two does (the
``extension`` profile once expanded to the wrong IRI and only SHACL noticed).
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyshacl
import pytest
import rdflib
from export_samples import SAMPLES, every_type_document

from agbom.export.spdx import PROFILE_EXTENSION, SpdxJsonExporter
from agbom.inventory import AgBOM

REPO = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(__file__).resolve().parent / "spdx-3.0.1"
MODEL_SHA256 = {
    "spdx-model.ttl": "1e6df676d5a4108de90362170b0933da53f929ae8147453cea0dffadb804fae5",
    "spdx-context.jsonld": "c72b0928f094c83e5c127784edb1ebca2af74a104fcacc007c332b23cbc788bd",
}
EPOCH = "1767225600"


class Shapes:
    """The 3.0.1 model graph and context, loaded once; ``check`` validates one document."""

    def __init__(self, folder: Path) -> None:
        self.graph = rdflib.Graph().parse(folder / "spdx-model.ttl", format="turtle")
        self.context = json.loads((folder / "spdx-context.jsonld").read_text("utf-8"))["@context"]

    def check(self, doc: dict[str, Any]) -> tuple[bool, str, int]:
        """(conforms, pySHACL's report text, number of triples in the document)."""
        assert doc["@context"] == "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"
        local = {**doc, "@context": self.context}  # the same context, read from disk
        data = rdflib.Graph().parse(data=json.dumps(local), format="json-ld")
        conforms, _, text = pyshacl.validate(
            data,
            shacl_graph=self.graph,
            ont_graph=self.graph,  # class hierarchy: a software_Package is an Element
            inference="none",
            allow_warnings=False,
        )
        return bool(conforms), str(text), len(data)


@pytest.fixture(scope="module")
def shapes() -> Shapes:
    return Shapes(MODEL_DIR)


def test_the_model_files_are_the_published_ones() -> None:
    for name, digest in MODEL_SHA256.items():
        assert hashlib.sha256((MODEL_DIR / name).read_bytes()).hexdigest() == digest, name


def _export(agbom: AgBOM) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        SpdxJsonExporter(timestamp="2026-01-01T00:00:00Z").export(agbom)
    )
    return doc


def _assert_conforms(shapes: Shapes, doc: dict[str, Any]) -> int:
    conforms, text, triples = shapes.check(doc)
    assert conforms, text
    return triples


def _rich_document() -> dict[str, Any]:
    """Every type, plus a licensed skill (simpleLicensing) with a declared version and pinned
    packages, a Hugging Face model (derived purl) and an MCP bundle with bundled packages."""
    document = every_type_document()
    skill = document["components"][-1]
    skill.update(license="mit or apache-2.0", metadata={"version": "1.2"})
    skill["packages"] = ["pkg:pypi/requests@2.32.3", "pkg:npm/%40acme/fs@1.4.1"]
    document["components"].append(
        {
            "id": "model-hf",
            "type": "model",
            "name": "meta-llama/Llama-3.1-8B",
            "version": None,
            "provider": "huggingface",
            "endpoint": None,
            "context_window": None,
        }
    )
    document["components"].append(
        {
            "id": "mcp:mcpb/w@1.4.2",
            "type": "mcp_server",
            "name": "weather",
            "version": "1.4.2",
            "endpoint": None,
            "tools": [],
            "bundle": {"server_type": "node"},
            "packages": ["pkg:npm/left-pad@1.3.0", "pkg:npm/%40acme/fs@1.4.1"],
        }
    )
    return document


def _generated(count: int) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("gen_agbom", REPO / "benchmarks" / "gen_agbom.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    generated: dict[str, Any] = module.generate_agbom(count, seed=29)
    return generated


# -- the shapes can fail --------------------------------------------------------------------


def _document(doc: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in doc["@graph"] if n["type"] == "SpdxDocument")


def _first_package(doc: dict[str, Any]) -> dict[str, Any]:
    return next(n for n in doc["@graph"] if "/component/" in n.get("spdxId", ""))


def test_the_bare_extension_profile_is_the_reported_violation(shapes, rich):
    # What the export wrote before: the context's `extension` term wins over the property's
    # scoped @vocab, so the value becomes Core/extension. Exactly those two constraints fail.
    doc = copy.deepcopy(rich)
    profiles = _document(doc)["profileConformance"]
    assert PROFILE_EXTENSION in profiles and "extension" not in profiles
    profiles[profiles.index(PROFILE_EXTENSION)] = "extension"
    conforms, text, _ = shapes.check(doc)
    assert not conforms
    assert "Results (2):" in text, text
    assert "ClassConstraintComponent" in text and "InConstraintComponent" in text
    assert text.count("Result Path: ") == 2 and "profileConformance" in text


BREAKAGES = {
    "unknown purpose": lambda d: _first_package(d).update(software_primaryPurpose="service"),
    "two names": lambda d: _first_package(d).update(name=["a", "b"]),
    "creationInfo not a CreationInfo": lambda d: _first_package(d).update(
        creationInfo=_first_package(d)["spdxId"]
    ),
    "hash algorithm unknown": lambda d: next(n for n in d["@graph"] if n.get("verifiedUsing"))[
        "verifiedUsing"
    ][0].update(algorithm="crc32"),
    "relationship without from": lambda d: next(
        n for n in d["@graph"] if n["type"] == "LifecycleScopedRelationship"
    ).pop("from"),
}


@pytest.fixture(scope="module")
def rich(shapes) -> dict[str, Any]:
    doc = _export(AgBOM.from_document(_rich_document()))
    _assert_conforms(shapes, doc)  # so that each breakage below is the only fault
    return doc


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_shapes_reject_a_broken_document(shapes, rich, breakage):
    broken = copy.deepcopy(rich)
    BREAKAGES[breakage](broken)
    conforms, _, _ = shapes.check(broken)
    assert not conforms


# -- what is exported conforms --------------------------------------------------------------


def test_scan_of_the_samples_conforms(shapes, tmp_path):
    target = tmp_path / "samples.spdx.json"
    cmd = [sys.executable, "-m", "agbom", "scan", str(SAMPLES), "-f", "spdx-json"]
    run = subprocess.run(
        [*cmd, "-o", str(target)],
        env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH},
        capture_output=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr.decode()
    doc = json.loads(target.read_text("utf-8"))
    assert _assert_conforms(shapes, doc) > 1000  # the whole document was read, not a stub


@pytest.mark.parametrize("name", sorted(p.name for p in (SAMPLES / "agboms").glob("*.json")))
def test_sample_agboms_conform(shapes, name):
    agbom = AgBOM.from_document(json.loads((SAMPLES / "agboms" / name).read_text("utf-8")))
    _assert_conforms(shapes, _export(agbom))


def test_every_type_with_a_license_and_derived_identities_conforms(rich):
    # conformance is checked by the fixture; this names it as a result of its own
    assert "simpleLicensing" in _document(rich)["profileConformance"]
    purls = {n.get("software_packageUrl") for n in rich["@graph"]}
    assert {"pkg:huggingface/meta-llama/Llama-3.1-8B", "pkg:npm/left-pad@1.3.0"} <= purls


def test_a_generated_fleet_inventory_conforms(shapes):
    doc = _export(AgBOM.from_document(_generated(400)))
    types = {n["type"] for n in doc["@graph"]}
    assert {"ai_AIPackage", "dataset_DatasetPackage", "software_Package"} <= types
    _assert_conforms(shapes, doc)


def test_empty_agbom_conforms(shapes):
    _assert_conforms(shapes, _export(AgBOM.from_document({"components": []})))
