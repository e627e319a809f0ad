"""The default pack on a generated benign tree (benchmarks/gen_scan_tree.py --benign): realistic
skills and servers, every one pinned or with nothing to pin, flag no more than 2% of them.

The tree exercises what used to be false positives: allowed-tools in every form of the grammar,
pinned pre-releases, launchers behind ``cmd /c``, git sources at a tag, ``mcp-remote`` bridges,
local programs, nested skills."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from agbom.inventory import ComponentGraph
from agbom.rules import load_rules
from agbom.scan import scan_paths

REPO = Path(__file__).resolve().parents[2]
MAX_RATE = 0.02


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_scan_tree", REPO / "benchmarks" / "gen_scan_tree.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flagged(root: Path) -> tuple[set[str], set[str], list[dict[str, object]]]:
    """(skill and server ids, the ids any finding is about, the components)."""
    result = scan_paths([root], workers=1)
    assert result.errors == []
    components = [dict(c.data) for c in result.agbom]
    subjects = {str(c["id"]) for c in components if c["type"] in ("skill", "mcp_server")}
    findings = load_rules().evaluate(ComponentGraph(result.agbom))
    hit = {f.components[0] for f in findings} | {f.component_id for f in result.findings}
    return subjects, hit & subjects, components


def test_default_pack_flags_at_most_2_percent_of_benign_skills_and_servers(tmp_path: Path) -> None:
    _generator().generate_benign(tmp_path, skills=200, configs=60)
    subjects, flagged, components = _flagged(tmp_path)
    skills = [c for c in components if c["type"] == "skill"]
    servers = [c for c in components if c["type"] == "mcp_server"]
    # The tree holds the shapes that used to be flagged, so the figure means something.
    assert len(skills) == 200 and len(servers) >= 60
    assert sum(1 for s in skills if s.get("declared_capabilities")) >= 150
    assert any(s.get("parent_skill_ref") for s in skills)
    assert any(s.get("bridge") == "mcp-remote" for s in servers)
    assert any(str(s.get("purl", "")).startswith("pkg:github/") for s in servers)
    assert any(
        "a" in str(s.get("version")) and str(s.get("purl", "")).startswith("pkg:pypi/")
        for s in servers
    )
    assert any(str(s.get("command", "")).startswith("cmd /c") and s.get("purl") for s in servers)
    assert any(not s.get("purl") and not s.get("endpoint") for s in servers)  # local programs
    rate = len(flagged) / len(subjects)
    assert rate <= MAX_RATE, (f"{len(flagged)} of {len(subjects)} flagged", sorted(flagged)[:20])


def test_the_measurement_sees_a_real_problem(tmp_path: Path) -> None:
    """The same count on the same tree with one unpinned server flags exactly that server."""
    gen = _generator()
    gen.generate_benign(tmp_path, skills=5, configs=3)
    extra = tmp_path / "extra" / ".mcp.json"
    extra.parent.mkdir()
    extra.write_text('{"mcpServers": {"u": {"command": "npx", "args": ["-y", "unpinned-srv"]}}}')
    _, flagged, _ = _flagged(tmp_path)
    assert flagged == {"mcp:npm/unpinned-srv"}
