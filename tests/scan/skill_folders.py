"""Skill folders the scan tests write: a SKILL.md with a body, and the files beside it."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path, name: str, files: dict[str, str], body: str = "See scripts/.\n"
) -> Path:
    """``root/name`` holding a SKILL.md named ``name`` with ``body``, and ``files`` (paths
    relative to the folder, their parents made)."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: A skill.\n---\n\n{body}")
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder
