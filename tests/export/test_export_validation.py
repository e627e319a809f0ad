"""The compiled CycloneDX validator agrees with cyclonedx-python-lib's own validator."""

from __future__ import annotations

import copy
import json

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from export_samples import every_type_document
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from agbom.export import SPEC_VERSIONS, ExportError, build_cyclonedx, validate_cyclonedx_json
from agbom.export._iri import is_iri, is_iri_reference, scrub_url
from agbom.inventory import AgBOM

_SV = {"1.6": SchemaVersion.V1_6, "1.7": SchemaVersion.V1_7}


def _breakers() -> dict[str, object]:
    """Each function breaks a valid document in one way the schema forbids."""

    def unknown_type(d):
        d["components"][0]["type"] = "ai-model"  # the ACS text's name, not a CycloneDX type

    def bad_hash(d):
        skill = next(c for c in d["components"] if c.get("hashes"))
        skill["hashes"][0]["content"] = "xyz"

    def duplicate_component(d):
        d["components"].append(copy.deepcopy(d["components"][0]))

    def unknown_property(d):
        d["components"][0]["agbom_extra"] = 1

    def bad_serial(d):
        d["serialNumber"] = "urn:uuid:not-a-uuid"

    def bad_endpoint(d):
        d["services"][0]["endpoints"] = ["npx -y server"]

    def bad_timestamp(d):
        d["metadata"]["timestamp"] = "yesterday"

    def missing_name(d):
        del d["services"][0]["name"]

    def bad_dependency(d):
        d["dependencies"][0]["dependsOn"] = ["x", "x"]

    return {
        f.__name__: f
        for f in (
            unknown_type,
            bad_hash,
            duplicate_component,
            unknown_property,
            bad_serial,
            bad_endpoint,
            bad_timestamp,
            missing_name,
            bad_dependency,
        )
    }


@pytest.mark.parametrize("spec_version", SPEC_VERSIONS)
def test_fast_and_library_validators_agree(spec_version):
    valid = build_cyclonedx(AgBOM.from_document(every_type_document()), spec_version)
    library = JsonStrictValidator(_SV[spec_version])
    validate_cyclonedx_json(valid, spec_version)
    assert library.validate_str(json.dumps(valid)) is None
    for name, breaker in _breakers().items():
        broken = copy.deepcopy(valid)
        breaker(broken)
        assert library.validate_str(json.dumps(broken)) is not None, name
        with pytest.raises(ExportError, match=f"not valid CycloneDX {spec_version}"):
            validate_cyclonedx_json(broken, spec_version)


def test_validation_does_not_modify_the_document():
    doc = build_cyclonedx(AgBOM.from_document(every_type_document()))
    before = json.dumps(doc, sort_keys=True)
    validate_cyclonedx_json(doc, "1.6")
    assert json.dumps(doc, sort_keys=True) == before  # no schema "default" filled in


_CHECKER = Draft7Validator.FORMAT_CHECKER
_IRI_ALPHABET = st.sampled_from(
    list("ab:/?#[]@!$&'()*+,;=%-._~ 09AF<>\"{}|\\^`") + ["é", "\ue000", "\u2028", "%2F", "%zz"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_IRI_ALPHABET, max_size=24).map("".join))
def test_iri_checks_never_laxer_than_the_library(text):
    # Whatever agbom accepts, the library's RFC 3987 checker must accept too.
    if is_iri_reference(text):
        assert _CHECKER.conforms(text, "iri-reference")
    if is_iri(text):
        assert _CHECKER.conforms(text, "iri")
    for prefix in ("https://", "http://host:8080/", "urn:"):
        candidate = prefix + text
        if is_iri(candidate):
            assert _CHECKER.conforms(candidate, "iri")


def test_scrub_url_drops_credentials():
    assert scrub_url("https://u:p@h.example/x?api_key=1&page=2#f") == (
        "https://h.example/x?api_key=REDACTED&page=2#f"
    )
