"""Regenerate the shipped CycloneDX validators: ``python -m agbom.export._cdx_validators``."""

from agbom.export._cdx_schema import SPEC_VERSIONS, generated_source, module_path

for version in SPEC_VERSIONS:
    target = module_path(version)
    target.write_text(generated_source(version), encoding="utf-8")
    print(f"wrote {target}")
