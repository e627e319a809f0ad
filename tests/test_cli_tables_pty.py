"""``agbom scan`` tables on a real pseudo-terminal at 80, 100 and 160 columns: no line is wider
than the terminal, every file name in FOUND IN and in a finding's ``at:`` line is whole, the
place is shortened from the left only, and the ID column does not take most of the width."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from rich.cells import cell_len

REPO = Path(__file__).resolve().parents[1]


def _on_terminal(columns: int, *args: str) -> str:
    """stdout of ``agbom ARGS`` written to a pty of ``columns`` (stderr to a pipe)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1", "AGBOM_DEBUG": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agbom", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError("agbom wrote nothing for 120 s")
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) in (0, 1), proc.stderr.read() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return b"".join(chunks).decode().replace("\r\n", "\n")


def _components() -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", "samples/", "-f", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    report = json.loads(out.stdout)
    return sorted(report["agbom"]["components"], key=lambda c: (c["type"], c["id"]))


def _where(component: dict[str, Any]) -> str:
    found = component.get("found_in") or []
    where = str(found[0]["path"]) if found else "-"
    return where + (f" (+{len(found) - 1})" if len(found) > 1 else "")


def _file_name(where: str) -> str:
    path, _, _ = where.partition(" (+")
    return PurePosixPath(path).name


@pytest.fixture(scope="module")
def components() -> list[dict[str, Any]]:
    return _components()


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_scan_tables_fit_and_keep_file_names_whole(
    columns: int, components: list[dict[str, Any]]
) -> None:
    out = _on_terminal(columns, "scan", "samples/")
    lines = out.split("\n")
    too_wide = [line for line in lines if cell_len(line) > columns]
    assert too_wide == [], too_wide[:3]

    header_at = next(i for i, line in enumerate(lines) if line.startswith("TYPE "))
    header = lines[header_at]
    place_at = header.index("FOUND IN")
    id_width = header.index("VERSION") - header.index("ID")
    assert id_width <= columns // 2, header  # the ids do not take most of the width
    rows: list[str] = []
    for line in lines[header_at + 1 :]:
        if not line.strip():
            break
        if not line.startswith(" "):  # a row's first line (folds and details are indented)
            rows.append(line)
    assert len(rows) == len(components)
    for row, component in zip(rows, components, strict=True):
        assert row.startswith(component["type"])
        shown = row[place_at:].rstrip()
        where = _where(component)
        if shown != where:
            assert shown.startswith("…") and where.endswith(shown[1:]), (shown, where)
        assert _file_name(where) in shown, (shown, where)
    if columns >= 160:
        assert "DETAIL" in header
    else:  # too narrow for a useful detail column: it moves under the row, whole
        assert "DETAIL" not in header
        mcp = next(c for c in components if c["type"] == "mcp_server" and c.get("endpoint"))
        assert any(line.strip() == f"detail: {_detail_text(mcp)}" for line in lines)

    at_lines = [line.strip() for line in lines if line.strip().startswith("at: ")]
    assert at_lines, "the findings table shows where each finding is"
    for line in at_lines:
        place = line.removeprefix("at: ").split(" (+", 1)[0]
        assert (REPO / place.rsplit(":", 2)[0]).is_file(), line  # whole, never wrapped


def _detail_text(component: dict[str, Any]) -> str:
    flags = " (disabled)" if component.get("disabled") else ""
    return f"{component.get('transport')} {component['endpoint']}{flags}"


def test_pipe_output_is_unchanged_by_the_terminal_width(components: list[dict[str, Any]]) -> None:
    env = {**os.environ, "COLUMNS": "60"}
    out = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", "samples/"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
    ).stdout
    rows = out.splitlines()[1 : len(components) + 1]
    for row, component in zip(rows, components, strict=True):
        assert row.rstrip().endswith(_where(component)), row  # nothing cut on a pipe
