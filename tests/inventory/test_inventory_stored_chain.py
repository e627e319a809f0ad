"""AgBOMs derived by diffs, stored one after another: the store compares only the ids the
diff named (``AgBOM.changed_since``), and every version still reads back exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agbom.inventory import AgBOM
from agbom.inventory.diff import apply_changed_payload
from agbom.store import AgbomDocument, open_store

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _tool(index: int, capability: str = "fs.read") -> dict[str, Any]:
    return {
        "id": f"tool-{index:03d}",
        "type": "tool",
        "name": f"tool-{index}",
        "version": "1.0.0",
        "provider": "local",
        "capability": capability,
    }


def test_changed_since_names_the_diff_only_for_the_very_base() -> None:
    base = AgBOM.from_document({"components": [_tool(i) for i in range(5)]})
    new, _ = apply_changed_payload(
        base, {"changed": [_tool(2, "fs.write")], "removed": ["tool-004"]}
    )
    assert new.changed_since(base) == {"tool-002", "tool-004"}
    twin = AgBOM.from_document(base.to_document())
    assert twin == base and new.changed_since(twin) is None  # equal is not the same object
    assert base.changed_since(new) is None
    fresh = AgBOM.from_document(new.to_document())
    assert fresh.changed_since(base) is None


def test_chain_of_diffs_stores_and_reads_back_each_version(tmp_path: Path) -> None:
    # The same versions stored a second time as plain documents (every component compared)
    # must give the same fleet index.
    store = open_store(str(tmp_path / "derived.db"))
    plain = open_store(str(tmp_path / "plain.db"))
    try:
        current = AgBOM.from_document(
            {"agent": {"id": "a"}, "components": [_tool(i) for i in range(30)]}
        )
        payloads: list[dict[str, Any]] = [
            {"changed": [_tool(7, "fs.write")]},
            {"added": [_tool(99)], "removed": ["tool-000", "tool-029"]},
            {"changed": [_tool(7)], "added": [_tool(50)]},
            {"removed": [f"tool-{i:03d}" for i in range(1, 10)]},
            {"header": {"agent": {"id": "a"}, "x-note": "n"}, "changed": [_tool(12, "net")]},
            {"added": [_tool(0), _tool(1)], "changed": [{**_tool(50), "version": "2"}]},
        ]
        held = [current]  # the Guardian holds the previous AgBOM until the next is stored
        for number in range(len(payloads) + 1):
            if number:
                current, _ = apply_changed_payload(current, payloads[number - 1])
                held.append(current)
            at = T0 + timedelta(minutes=number)
            version = store.save_agbom_version(
                "s",
                agent_id="a",
                document=AgbomDocument(current),
                agbom_hash=current.agbom_hash,
                now=at,
            )
            plain.save_agbom_version(
                "s",
                agent_id="a",
                document=current.to_document(),
                agbom_hash=current.agbom_hash,
                now=at,
            )
            assert version == number + 1
        for number, agbom in enumerate(held, start=1):
            stored = store.agbom_version("s", number)
            assert stored is not None
            assert stored["document"] == agbom.to_document()
            assert stored["agbom_hash"] == agbom.agbom_hash
        assert store.list_components() == plain.list_components()
        assert store.list_components(type="tool") != []
    finally:
        store.close()
        plain.close()
