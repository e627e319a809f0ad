"""Links and entries the scan cannot follow are per-file errors; the scan always reports
(issue 13, item 7).

Before the fix one ``ln -s self self`` in a scanned folder ended ``agbom scan`` with exit 1, an
``agbom: error:`` line and no report. The tests run as root, so they build entries that fail
for root too: link loops, a chain longer than the kernel follows, a name too long to stat, and
a FIFO where a manifest is expected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from agbom.scan import FileStatus, scan_paths

GOOD = {"mcpServers": {"ok": {"url": "https://ok.example/mcp"}}}


def _hostile_tree(root: Path, write: Callable[..., Path]) -> dict[str, str]:
    """Entries that cannot be followed, each with the start of its expected error."""
    write("tree/good/.mcp.json", GOOD)
    tree = root / "tree"
    os.symlink("self", tree / "self")
    os.symlink("loop-b", tree / "loop-a")
    os.symlink("loop-a", tree / "loop-b")
    # A chain of 50 links: longer than the 40 the kernel follows (ELOOP without a cycle).
    for i in range(50):
        os.symlink(f"chain-{i + 1}", tree / f"chain-{i}")
    (tree / "chain-50").write_text("end")
    os.symlink("x" * 300, tree / "too-long")  # ENAMETOOLONG
    (tree / "manifest").mkdir()
    os.symlink(".mcp.json", tree / "manifest" / ".mcp.json")  # a manifest name that loops
    os.mkfifo(tree / "fifo")  # a FIFO no reader claims: not a manifest
    (tree / "pipe").mkdir()
    os.mkfifo(tree / "pipe" / ".mcp.json")  # a FIFO where a manifest is expected
    return {
        "tree/self": "cannot follow symbolic link: Too many levels of symbolic links",
        "tree/loop-a": "cannot follow symbolic link: Too many levels of symbolic links",
        "tree/loop-b": "cannot follow symbolic link: Too many levels of symbolic links",
        "tree/chain-0": "cannot follow symbolic link: Too many levels of symbolic links",
        "tree/too-long": "cannot follow symbolic link: File name too long",
        "tree/manifest/.mcp.json": "cannot read: Too many levels of symbolic links",
        "tree/pipe/.mcp.json": "not a regular file",
    }


def test_cli_scan_reports_every_unfollowable_entry_and_exits_3(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    expected = _hostile_tree(tmp_path, write)
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", "tree", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    report = json.loads(proc.stdout)
    errors = {e["path"]: e["reason"] for e in report["errors"]}
    # The links near the head of the chain are too far from its end (Linux follows 40).
    chain = {path: errors.pop(path) for path in list(errors) if path.startswith("tree/chain-")}
    assert "tree/chain-0" in chain and "tree/chain-49" not in chain
    assert set(chain.values()) == {expected.pop("tree/chain-0")}
    assert errors == expected
    ok = [f["path"] for f in report["files"] if f["status"] == "ok"]
    assert ok == ["tree/good/.mcp.json"]
    assert [c["id"] for c in report["agbom"]["components"]] == ["mcp:https://ok.example/mcp"]
    for path in [*expected, *chain]:  # every error is also on stderr, one line each
        assert f"agbom: {path}: " in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_link_loop_named_on_the_command_line_does_not_stop_the_others(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("good/.mcp.json", GOOD)
    os.symlink("self", tmp_path / "self")
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", "self", "good", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == [
        {
            "path": "self",
            "reason": "cannot read: Too many levels of symbolic links",
            "line": None,
            "column": None,
        }
    ]
    assert report["summary"]["ok"] == 1 and report["summary"]["components"] == 1


def test_a_path_that_does_not_exist_is_still_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("agbom: error: ") and "No such file" in proc.stderr


def test_a_dangling_link_is_nothing_to_report(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    os.symlink("nowhere", tmp_path / "t" / "gone")
    result = scan_paths([tmp_path / "t"])
    assert result.files == []


def test_loops_in_a_skill_folder_and_in_home_places(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("home/.claude/skills/sk/SKILL.md", "---\nname: sk\ndescription: d\n---\n")
    os.symlink("loop", tmp_path / "home" / ".claude" / "skills" / "sk" / "loop")
    os.makedirs(tmp_path / "home" / ".cursor")
    os.symlink("mcp.json", tmp_path / "home" / ".cursor" / "mcp.json")
    result = scan_paths([], home=tmp_path / "home")
    statuses = {r.path: (r.status, r.errors[0].reason) for r in result.files}
    assert statuses == {
        "~/.claude/skills/sk/SKILL.md": (
            FileStatus.ERROR,
            "skill folder refused: loop: symbolic link loops",
        ),
        "~/.claude/skills/sk/loop": (
            FileStatus.ERROR,
            "cannot follow symbolic link: Too many levels of symbolic links",
        ),
        "~/.cursor/mcp.json": (
            FileStatus.ERROR,
            "cannot read: Too many levels of symbolic links",
        ),
    }
