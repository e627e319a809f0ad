"""docs/agbom-format.md: its worked agbom_hash example must match the code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import rfc8785

from agbom.inventory import AgBOM, ComponentType

DOC = Path(__file__).resolve().parents[2] / "docs" / "agbom-format.md"


def _blocks_after(text: str, marker: str) -> list[str]:
    return re.findall(r"```(?:json)?\n(.*?)```", text[text.index(marker) :], re.DOTALL)


def test_worked_hash_example_matches_the_code() -> None:
    text = DOC.read_text(encoding="utf-8")
    document_text, canonical_text, hash_text = _blocks_after(text, "<!-- agbom-hash-example -->")[
        :3
    ]
    agbom = AgBOM.from_document(json.loads(document_text))
    canonical = dict(agbom.header)
    canonical["components"] = [dict(c.data) for c in agbom]
    assert rfc8785.dumps(canonical).decode() == canonical_text.strip()
    assert agbom.agbom_hash == hash_text.strip()


def test_every_component_type_has_a_row() -> None:
    text = DOC.read_text(encoding="utf-8")
    for ctype in ComponentType:
        assert f"\n| `{ctype.value}` |" in text, ctype
