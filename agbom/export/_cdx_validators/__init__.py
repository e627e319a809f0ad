"""CycloneDX validators generated from ``agbom/export/schemas`` by fastjsonschema: do not edit.

Regenerate with ``python -m agbom.export._cdx_validators`` after changing a schema, the rewriting
in :mod:`agbom.export._cdx_schema` or the fastjsonschema version (a test says when).
"""
