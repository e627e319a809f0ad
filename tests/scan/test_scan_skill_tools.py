"""``allowed-tools``: the grammar, the tool -> capability table, and what the least-privilege
rules make of it; nested skills record their parent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agbom.inventory import ComponentGraph
from agbom.rules import load_rules
from agbom.scan import scan_paths
from agbom.scan.allowed_tools import AllowedToolsError, parse_allowed_tools


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Read Grep", [("Read", None), ("Grep", None)]),
        ("Read, Grep,Glob", [("Read", None), ("Grep", None), ("Glob", None)]),
        ("Bash(gh issue list:*) Read", [("Bash", "gh issue list:*"), ("Read", None)]),
        ("Bash(git add, commit:*), Write", [("Bash", "git add, commit:*"), ("Write", None)]),
        (["Bash(python scripts/build.py:*)", " Edit "],
         [("Bash", "python scripts/build.py:*"), ("Edit", None)]),
        ("mcp__github__create_issue WebFetch(domain:docs.example.com)",
         [("mcp__github__create_issue", None), ("WebFetch", "domain:docs.example.com")]),
        ("", []),
        ([], []),
    ],
)  # fmt: skip
def test_grammar(value: Any, expected: list[tuple[str, str | None]]) -> None:
    assert [(t.tool, t.pattern) for t in parse_allowed_tools(value)] == expected


@pytest.mark.parametrize(
    "value", ["Bash(git status", "Bash)x(", "(pattern)", "Read Bash(x)y", 42, ["Read", 3]]
)
def test_grammar_errors(value: Any) -> None:
    with pytest.raises(AllowedToolsError):
        parse_allowed_tools(value)


def _skill(root: Path, rel: str, frontmatter: str) -> None:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    name = folder.name
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A skill for tests.\n{frontmatter}---\n\nBody.\n",
        encoding="utf-8",
    )


def _skills(root: Path) -> dict[str, dict[str, Any]]:
    result = scan_paths([root])
    return {c.id: dict(c.data) for c in result.agbom if c.type.value == "skill"}


def test_tools_map_to_capabilities(tmp_path: Path) -> None:
    _skill(
        tmp_path,
        "triage",
        "allowed-tools: Read, Grep, Bash(gh issue list:*), Bash(gh issue edit:*)\n",
    )
    _skill(
        tmp_path,
        "writer",
        "allowed-tools:\n  - Write\n  - Edit\n  - WebFetch\n  - Task\n  - mcp__github__get_issue\n",
    )
    skills = _skills(tmp_path)
    assert skills["skill:triage"]["declared_capabilities"] == ["fs.read", "process.execute"]
    assert skills["skill:triage"]["allowed_tools"][2] == {
        "tool": "Bash", "pattern": "gh issue list:*", "capability": "process.execute"}  # fmt: skip
    writer = skills["skill:writer"]
    assert writer["declared_capabilities"] == ["agent.delegate", "fs.write", "net.http"]
    # An MCP tool says nothing of what it does: kept as written, no capability.
    assert {"tool": "mcp__github__get_issue"} in writer["allowed_tools"]


def test_a_broken_allowed_tools_is_a_finding_and_grants_nothing(tmp_path: Path) -> None:
    _skill(tmp_path, "broken", "allowed-tools: Bash(git status\n")
    result = scan_paths([tmp_path])
    (report,) = result.files
    assert report.errors == ()  # read and inventoried: a spec finding, not an error
    assert [f.rule_id for f in result.findings] == ["scan.skill-spec"]
    assert "allowed-tools" in result.findings[0].message
    (skill,) = result.agbom
    assert skill.data["declared_capabilities"] == [] and skill.data["valid"] is False


def test_least_privilege_rules_do_not_flag_what_the_tools_grant(tmp_path: Path) -> None:
    _skill(tmp_path, "triage", "allowed-tools: Read Grep Bash(gh issue list:*)\n")
    _skill(tmp_path, "plain", "")
    agbom = scan_paths([tmp_path]).agbom
    findings = load_rules().evaluate(ComponentGraph(agbom))
    assert [f.rule_id for f in findings if f.rule_id.startswith("AGB-LP")] == []


def test_over_broad_still_fires_for_a_capability_no_tool_backs() -> None:
    from agbom.inventory import AgBOM

    skill = {
        "id": "k", "type": "skill", "name": "k", "description": "d",
        "definition": {"ref": "k", "digest": {"algorithm": "sha256", "value": "a" * 64}},
        "registration_provenance": {"origin": "system"},
        "allowed_tools": [{"tool": "Read", "capability": "fs.read"}],
        "declared_capabilities": ["fs.read", "process.execute"],
    }  # fmt: skip
    graph = ComponentGraph(AgBOM.from_document({"agent": {"id": "a"}, "components": [skill]}))
    (finding,) = [f for f in load_rules().evaluate(graph) if f.rule_id == "AGB-LP-002"]
    assert "process.execute" in finding.message and "fs.read" not in finding.message


def test_nested_skills_record_their_parent(tmp_path: Path) -> None:
    _skill(tmp_path, "skills/outer", "")
    _skill(tmp_path, "skills/outer/inner", "")
    _skill(tmp_path, "skills/outer/docs/deep", "")
    _skill(tmp_path, "skills/alone", "")
    skills = _skills(tmp_path)
    outer_ref = skills["skill:outer"]["definition"]["ref"]  # the parent's own folder ref
    assert outer_ref.endswith("skills/outer")
    assert skills["skill:inner"]["parent_skill_ref"] == outer_ref
    assert skills["skill:deep"]["parent_skill_ref"] == outer_ref
    assert "parent_skill_ref" not in skills["skill:outer"]
    assert "parent_skill_ref" not in skills["skill:alone"]


def test_a_parent_outside_the_scanned_tree_is_not_looked_at(tmp_path: Path) -> None:
    _skill(tmp_path, "outer", "")
    _skill(tmp_path, "outer/inner", "")
    skills = _skills(tmp_path / "outer" / "inner")
    assert "parent_skill_ref" not in skills["skill:inner"]


def test_a_linked_skill_md_above_is_not_a_parent(tmp_path: Path) -> None:
    _skill(tmp_path, "real", "")
    (tmp_path / "holder").mkdir()
    (tmp_path / "holder" / "SKILL.md").symlink_to(tmp_path / "real" / "SKILL.md")
    _skill(tmp_path, "holder/inner", "")
    skills = _skills(tmp_path / "holder")
    assert "parent_skill_ref" not in skills["skill:inner"]
