"""The CLI contract a script and a newcomer rely on (issue 15), through the real ``agbom``.

Bad option values are usage errors (exit 2, one line); a bare group prints its help; ``-h``
works everywhere and the help shows conventional metavars; messages say what is wrong; tables
fit a terminal and keep versions whole; ``-o NAME`` picks the format its name says; ``--rules``
adds to the default pack.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agbom.cli import main
from tests.transports.served import agbom_command, run_cli

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
AGBOM = SAMPLES / "agboms" / "coding-agent.json"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

TEAM_PACK = """\
pack: team
rules:
  - id: TEAM-001
    kind: hygiene
    severity: high
    action: deny
    message: "no postgres: {component.name}"
    description: Postgres servers are not allowed here.
    match:
      type: mcp_server
      name: "*postgres*"
"""


def _in(
    tmp: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*agbom_command(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "AGBOM_DEBUG": "0", **(env or {})},
    )


def _main(
    capsys: pytest.CaptureFixture[str], *args: str, columns: str = "100"
) -> tuple[int, str, str]:
    """The CLI entry point in this process (what the console script calls): the sweeps below
    run dozens of commands, too many for a process each on a loaded machine."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = columns
    try:
        code = main(list(args))
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. bad option values -------------------------------------------------------------------

A = str(AGBOM)
S = str(SAMPLES)
BAD_VALUES = [
    ("scan", S, "--fail-on", "bogus"),
    ("scan", S, "--spec-version", "1.3"),
    ("scan", S, "-f", "cyclonedx-json", "--spec-version", "1.3"),
    ("scan", S, "--format", "yaml"),
    ("check", A, "--fail-on", "bogus"),
    ("check", A, "--format", "xml"),
    ("export", A, "--format", "spdx"),
    ("export", A, "--format", "cyclonedx-json", "--spec-version", "1.3"),
    ("graph", A, "--format", "png"),
    ("diff", A, A, "--format", "yaml"),
    ("explain", A, "--format", "yaml"),
    ("serve", "--mode", "strict"),
    ("serve", "--ask-fallback", "maybe"),
    ("serve", "--port", "99999"),
    ("replay", "x.jsonl", "--mode", "strict"),
    ("replay", "x.jsonl", "--format", "json"),
    ("hook", "nope"),
    ("skills", "list", "--format", "yaml"),
    ("skills", "list", "--status", "maybe"),
    ("skills", "export", "--format", "toml"),
    ("skills", "digest", ".", "--format", "yaml"),
    ("inventory", "agents", "--format", "yaml"),
    ("inventory", "sessions", "--format", "yaml"),
    ("inventory", "components", "--format", "yaml"),
    ("inventory", "components", "--type", "gadget"),
    ("inventory", "export", "s1", "--format", "spdx"),
    ("inventory", "export", "s1", "--format", "cyclonedx-json", "--spec-version", "9"),
]


@pytest.mark.parametrize("args", BAD_VALUES, ids=lambda a: " ".join(a[:1] + a[2:]))
def test_a_bad_option_value_is_a_usage_error_on_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGBOM_DB", raising=False)
    code, out, err = _main(capsys, *args)
    assert code == 2, (code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("agbom: error: "), err
    assert "Traceback" not in err and out == ""
    # Refused before anything is read or written: no store appears for the commands that
    # would open one.
    assert not (tmp_path / "agbom.db").exists()


# -- 4. bare groups print their help ----------------------------------------------------------


@pytest.mark.parametrize("group", [(), ("skills",), ("rules",), ("audit",), ("inventory",)])
def test_a_bare_group_prints_its_whole_help(tmp_path: Path, group: tuple[str, ...]) -> None:
    proc = _in(tmp_path, *group)
    # As click does for a missing command: the normal help, on stderr, exit 2 (usage error).
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"Usage: agbom {' '.join(group)}".rstrip() + " [OPTIONS] COMMAND")
    # The root lists its commands in panels (agbom/cli/app.py PANELS), scan's first.
    listed = "\nInventory and CI:\n  scan " if not group else "\nCommands:\n"
    assert listed in proc.stderr and "agbom: error" not in proc.stderr
    assert len(proc.stderr.splitlines()) > 5


@pytest.mark.parametrize("columns", ["60", "80"])
def test_every_group_lists_its_commands_whole(
    capsys: pytest.CaptureFixture[str], columns: str
) -> None:
    """A group's help gives each command's whole summary, wrapped, never cut with "..."
    (issue 42 item 6), as the root help does."""
    from agbom.cli.app import COMMANDS, build_command

    groups = [name for name in COMMANDS if hasattr(build_command(name), "commands")]
    assert {"skills", "audit", "reviewers", "inventory"} <= set(groups)
    for group in groups:
        code, text, err = _main(capsys, group, "--help", columns=columns)
        assert code == 0, err
        listed = text.split("\nCommands:\n", 1)[1]
        assert "..." not in listed, (group, listed)
        command: Any = build_command(group)
        flat = "".join(listed.split())  # wrapping may break at a space or after a hyphen
        for name, sub in command.commands.items():
            summary = sub.get_short_help_str(10_000)
            assert name + "".join(summary.split()) in flat, (group, name)
            assert not summary.endswith("...")


# -- 11. help text -------------------------------------------------------------------------------

COMMANDS = [
    ("scan",), ("check",), ("export",), ("graph",), ("diff",), ("explain",), ("serve",),
    ("replay",), ("hook",), ("rules", "check"), ("rules", "test"), ("skills", "list"),
    ("skills", "approve"), ("skills", "digest"), ("audit", "verify"), ("audit", "export"),
    ("inventory", "components"), ("inventory", "export"),
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_has_conventional_metavars_and_h(
    capsys: pytest.CaptureFixture[str], command: tuple[str, ...]
) -> None:
    short = _main(capsys, *command, "-h")
    long = _main(capsys, *command, "--help")
    assert short[0] == long[0] == 0, short[2]
    assert short[1] == long[1]
    text = short[1]
    assert text.startswith(f"Usage: agbom {' '.join(command)} [OPTIONS]")
    assert "-h, --help" in text
    # No typer type labels or braces: <list[Path]>, <str>, {AGBOM.json}, [agbom_file]
    assert not re.search(r"<[a-z][\w\[\] ]*>|\{[^}]*\}|\[[a-z_]+\]", text.split("\n\n")[0]), text
    assert "<str>" not in text and "<path>" not in text and "list[" not in text


def test_help_names_arguments_and_documents_replay_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    usage = {
        ("scan",): "[PATH...]",
        ("check",): "AGBOM.json",
        ("explain",): "[AGBOM.json]",
        ("replay",): "FILE.jsonl",
        ("diff",): "OLD NEW",
    }
    for command, shown in usage.items():
        first = _main(capsys, *command, "-h")[1].splitlines()[0]
        assert first == f"Usage: agbom {' '.join(command)} [OPTIONS] {shown}"
    assert _in(tmp_path, "replay", "-h").stdout.startswith("Usage: agbom replay")  # for real
    replay = " ".join(_main(capsys, "replay", "-h", columns="200")[1].split())
    for option, words in (
        ("--secret-file FILE", "signatures"),
        ("--mode [enforce|observe]", "observe"),
        ("--strict", "missing from the session's AgBOM"),
    ):
        assert option in replay
        assert words in replay.split(option, 1)[1].split(" --", 1)[0]


# -- 5. messages -----------------------------------------------------------------------------------


def test_messages_say_what_is_wrong(tmp_path: Path) -> None:
    folder = _in(tmp_path, "check", str(SAMPLES))
    assert folder.returncode == 1
    assert folder.stderr.strip() == f"agbom: error: {SAMPLES}: is a directory, not a file"
    nothing = _in(tmp_path, "explain")
    assert (
        nothing.returncode == 2 and "missing an AGBOM.json file or --session ID" in nothing.stderr
    )
    assert "not both" not in nothing.stderr
    both = _in(tmp_path, "explain", A, "--session", "s1")
    assert both.returncode == 2 and "not both" in both.stderr
    export = _in(tmp_path, "export", str(SAMPLES))
    assert export.returncode == 1 and "is a directory" in export.stderr


# -- 7. tables -------------------------------------------------------------------------------------


def _on_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run agbom with stdout on a pseudo-terminal; its output with CRLF made LF."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*agbom_command(), *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0", **env},
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    code = proc.wait(timeout=120)
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


def test_scan_tables_fit_a_terminal_and_keep_versions_whole(tmp_path: Path) -> None:
    code, raw = _on_terminal(["scan", S], tmp_path, {"COLUMNS": "80"})
    assert code == 0
    text = ANSI.sub("", raw)
    lines = text.splitlines()
    assert len(lines) > 40
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert "\x1b[" in raw  # a bold header on a terminal
    rows = [line.split() for line in lines]
    versions = {row[2] for row in rows if len(row) > 2 and row[0] == "mcp_server"}
    assert {"2025.8.21", "2025.9.12", "0.6.2", "1.4.2"} <= versions
    assert "SEVERITY" in text and "AGB-HYG-001" in text

    code, raw = _on_terminal(["scan", S], tmp_path, {"COLUMNS": "80", "NO_COLOR": "1"})
    assert code == 0 and "\x1b[" not in raw

    piped = _in(tmp_path, "scan", S, env={"COLUMNS": "80"})
    assert piped.returncode == 0 and "\x1b" not in piped.stdout
    # On a pipe: one line per row, nothing cut (scripts read columns by position).
    ids = [line.split()[1] for line in piped.stdout.split("\n\n")[0].splitlines()[1:]]
    assert "mcp:npm/@modelcontextprotocol/server-filesystem@2025.8.21" in ids
    table_rows = [line.split() for line in piped.stdout.split("\n\n")[0].splitlines()[1:]]
    assert not any("…" in row[1] + row[2] for row in table_rows)  # (skill digests abbreviate)
    assert piped.stdout == _in(tmp_path, "scan", S, env={"COLUMNS": "300"}).stdout


def test_other_tables_fit_a_terminal(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    long_id = "team/" + "very-long-skill-name-" * 5 + "end"
    approve = _in(
        tmp_path, "skills", "approve", long_id, "--digest", "sha256:" + "ab" * 32, "--db", str(db),
        "--reason", "reviewed",
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr
    for args in (
        ["skills", "list", "--db", str(db)],
        ["skills", "history", long_id, "--db", str(db)],
    ):
        code, raw = _on_terminal(args, tmp_path, {"COLUMNS": "60"})
        text = ANSI.sub("", raw)
        assert code == 0 and max(len(line) for line in text.splitlines()) <= 60, text
        assert "sha256" in text and "…" not in text  # folded, not cut
    old, new = json.loads(AGBOM.read_text()), json.loads(AGBOM.read_text())
    new["components"] = new["components"][:1]
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    code, raw = _on_terminal(["diff", "old.json", "new.json"], tmp_path, {"COLUMNS": "50"})
    assert code == 1 and max(len(line) for line in ANSI.sub("", raw).splitlines()) <= 50


# -- 8. the format from the output name ----------------------------------------------------------


def test_scan_writes_what_the_output_name_says(tmp_path: Path) -> None:
    checks = {
        "x.cdx.json": lambda t: json.loads(t)["bomFormat"] == "CycloneDX",
        "x.cdx.xml": lambda t: t.startswith("<?xml") and "cyclonedx" in t[:300],
        "x.sarif": lambda t: json.loads(t)["version"] == "2.1.0",
        "x.sarif.json": lambda t: "runs" in json.loads(t),
        "x.spdx.json": lambda t: "@context" in json.loads(t),
        "x.json": lambda t: {"files", "findings"} <= set(json.loads(t)),
        "x.txt": lambda t: t.startswith("TYPE "),
    }
    for name, holds in checks.items():
        proc = _in(tmp_path, "scan", str(SAMPLES / "manifests" / "cursor"), "-o", name)
        assert proc.returncode == 0, proc.stderr
        assert holds((tmp_path / name).read_text()), name


def test_a_format_that_contradicts_the_output_name_is_refused(tmp_path: Path) -> None:
    cases = [
        ("scan", S, "-f", "table", "-o", "x.cdx.json"),
        ("scan", S, "-f", "cyclonedx-json", "-o", "x.cdx.xml"),
        ("scan", S, "-f", "cyclonedx-xml", "-o", "x.json"),
        ("check", A, "-o", "x.cdx.json"),
        ("check", A, "-f", "json", "-o", "x.sarif"),
        ("export", A, "-f", "spdx-json", "-o", "x.cdx.json"),
        ("export", A, "-o", "x.sarif"),
        ("graph", A, "-f", "mermaid", "-o", "x.dot"),
        ("inventory", "export", "s1", "-o", "x.sarif"),
    ]
    for args in cases:
        proc = _in(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert "output name" in proc.stderr or "this command does not write" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written, no store


def test_export_check_and_graph_follow_the_output_name(tmp_path: Path) -> None:
    assert _in(tmp_path, "export", A, "-o", "b.cdx.xml").returncode == 0
    assert (tmp_path / "b.cdx.xml").read_text().startswith("<?xml")
    assert _in(tmp_path, "export", A, "-o", "b.spdx.json").returncode == 0
    assert "@context" in json.loads((tmp_path / "b.spdx.json").read_text())
    assert _in(tmp_path, "export", A, "-f", "cyclonedx-json@1.7", "-o", "b.json").returncode == 0
    assert json.loads((tmp_path / "b.json").read_text())["specVersion"] == "1.7"
    assert _in(tmp_path, "check", A, "-o", "c.sarif").returncode == 0
    assert json.loads((tmp_path / "c.sarif").read_text())["version"] == "2.1.0"
    assert _in(tmp_path, "check", A, "-o", "c.json").returncode == 0
    assert "findings" in json.loads((tmp_path / "c.json").read_text())
    assert _in(tmp_path, "graph", A, "-o", "g.dot").returncode == 0
    assert (tmp_path / "g.dot").read_text().lstrip().startswith(("digraph", "strict digraph"))


# -- 9. --rules adds to the default pack -----------------------------------------------------------


def test_rules_dir_adds_to_the_default_pack(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "team.yaml").write_text(TEAM_PACK)
    args = ("scan", S, "-f", "json", "--rules", str(team))
    both = _in(tmp_path, *args)
    assert both.returncode == 0, both.stderr
    packs = {f["pack"] for f in json.loads(both.stdout)["findings"]}
    assert {"default", "team"} <= packs
    assert "; rule packs: default, team" in both.stderr
    only = _in(tmp_path, *args, "--no-default-rules")
    packs = {f["pack"] for f in json.loads(only.stdout)["findings"]}
    assert "team" in packs and "default" not in packs
    assert "; rule packs: team" in only.stderr
    alone = _in(tmp_path, "scan", S, "--no-default-rules")
    assert alone.returncode == 2 and "needs --rules" in alone.stderr
    check = _in(tmp_path, "check", A, "--rules", str(team))
    assert "rule packs: default, team" in check.stderr
    # rules check validates the folder only
    assert "ok: 1 pack(s), 1 rule(s)" in _in(tmp_path, "rules", "check", str(team)).stdout
    # A copy of the default pack next to it is read once; a changed copy clashes, and the
    # message says how to use it instead.
    default = (REPO / "agbom" / "rules" / "packs" / "default.yaml").read_text()
    (team / "default.yaml").write_text(default)
    assert _in(tmp_path, *args).returncode == 0
    (team / "default.yaml").write_text(default.replace("pack: default", "pack: mine"))
    clash = _in(tmp_path, *args)
    assert clash.returncode != 0 and "--no-default-rules" in clash.stderr
    assert _in(tmp_path, *args, "--no-default-rules").returncode == 0


def test_the_guardian_commands_compose_rules_the_same_way(tmp_path: Path) -> None:
    from agbom.guardian import build_guardian
    from agbom.transports.decision_wire import WorkerSpec
    from agbom.transports.interface import Limits

    team = tmp_path / "team"
    team.mkdir()
    (team / "team.yaml").write_text(TEAM_PACK)
    guardian = build_guardian(tmp_path / "g.db", team, with_default_rules=True)
    try:
        ids = set(guardian.rules.rule_ids)
    finally:
        guardian.store.close()
    assert "TEAM-001" in ids and "AGB-HYG-001" in ids
    # serve's decision process gets the same choice through its spec
    spec = WorkerSpec.of(
        tmp_path / "g.db", team, mode="enforce", secret_file=None,
        config=guardian.config, limits=Limits(), with_default_rules=True,
    )  # fmt: skip
    rebuilt = WorkerSpec.from_json(spec.to_json()).build()
    try:
        assert set(rebuilt.rules.rule_ids) == ids
    finally:
        rebuilt.store.close()
    # the standalone hook and replay refuse --no-default-rules without --rules
    for args in (
        ["hook", "oscova", "--no-default-rules"],
        ["replay", "x.jsonl", "--no-default-rules"],
    ):
        proc = run_cli(*args, stdin=b"{}")
        assert proc.returncode == 2 and b"needs --rules" in proc.stderr
