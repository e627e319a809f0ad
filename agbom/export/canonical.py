"""The canonical AgBOM JSON: header, components sorted by id, and the ``agbom_hash``."""

from __future__ import annotations

import orjson

from agbom.inventory import AgBOM


class CanonicalJsonExporter:
    """The AgBOM itself, normalized: keys sorted, components in id order, hash included.

    The bytes are a pure function of the AgBOM, so two exports of equal inventories are
    byte-identical (``agbom_hash`` is computed over the RFC 8785 form without itself).
    """

    name = "agbom-json"
    media_type = "application/json"

    def export(self, agbom: AgBOM) -> bytes:
        document = agbom.to_document(with_hash=True)
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
