"""Every corruption from the issue becomes a located error; the scan never stops or crashes."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agbom.scan import FileStatus, scan_paths
from agbom.scan.clients import CONFIG_MAX_BYTES


def _only(path: Path):
    result = scan_paths([path.parent])
    reports = [f for f in result.files if f.path.endswith(path.name)]
    assert len(reports) == 1, result.files
    return reports[0], result


def test_broken_json_keeps_scanning_other_files(write: Callable[..., Path], tmp_path: Path) -> None:
    write("a/.mcp.json", '{"mcpServers": {"x": {"command": "npx",, }}}')
    write("b/.mcp.json", {"mcpServers": {"ok": {"url": "https://ok/mcp"}}})
    result = scan_paths([tmp_path])
    bad, good = result.files
    assert bad.status is FileStatus.ERROR and good.status is FileStatus.OK
    assert bad.error.line == 1 and bad.error.column == 40
    assert bad.error.reason.startswith("not valid JSON")
    assert "mcp:https://ok/mcp" in result.agbom


def test_toml_error_has_line_and_column(write: Callable[..., Path]) -> None:
    path = write(".codex/config.toml", '[mcp_servers.a]\ncommand = "npx"\nargs = [\n"x",\n= 3\n')
    report, _ = _only(path)
    assert report.status is FileStatus.ERROR
    assert report.error.reason.startswith("not valid TOML")
    assert (report.error.line, report.error.column) == (5, 1)


def test_yaml_frontmatter_error_located_in_file_lines(write: Callable[..., Path]) -> None:
    path = write("s/x/SKILL.md", "---\nname: x\ndescription: [unclosed\n---\nbody\n")
    report, result = _only(path)
    assert report.status is FileStatus.ERROR and report.error.reason.startswith("not valid YAML")
    assert report.error.line == 4  # the closing fence where the flow sequence breaks
    assert "skill:x" in result.agbom  # inventoried under its folder name


def test_wrong_types_keep_valid_entries(write: Callable[..., Path]) -> None:
    path = write(
        "claude_desktop_config.json",
        json.dumps({"mcpServers": {
            "good": {"command": "uvx", "args": ["mcp-server-time==2025.1.1"]},
            "args-not-list": {"command": "npx", "args": "-y pkg"},
            "string-entry": "npx pkg",
            "nothing": {"env": {"A": "b"}},
            "bad-type": {"type": 7, "url": "https://x"},
        }}, indent=1),
    )  # fmt: skip
    report, result = _only(path)
    assert report.status is FileStatus.ERROR and report.components == 1
    reasons = sorted(e.reason for e in report.errors)
    assert reasons == [
        "mcpServers.args-not-list: 'args' must be an array of strings, not str",
        "mcpServers.bad-type: 'type' must be a string, not int",
        "mcpServers.nothing: has neither 'command' nor a URL",
        "mcpServers.string-entry: must be an object, not str",
    ]
    assert all(e.line is not None for e in report.errors)
    assert "mcp:pypi/mcp-server-time@2025.1.1" in result.agbom


def test_servers_map_of_wrong_type(write: Callable[..., Path]) -> None:
    report, _ = _only(write(".mcp.json", {"mcpServers": ["a", "b"]}))
    assert report.error.reason == "'mcpServers' must be an object, not list"


@pytest.mark.parametrize("content", [b"", b"   \n", b"\xef\xbb\xbf"])
def test_empty_file(write: Callable[..., Path], content: bytes) -> None:
    report, _ = _only(write(".mcp.json", None, raw=content))
    assert report.status is FileStatus.ERROR and report.error.reason == "empty file"


def test_utf8_bom_and_crlf_are_fine(write: Callable[..., Path], tmp_path: Path) -> None:
    body = '{\r\n  "mcpServers": {\r\n    "a": {"url": "https://a/mcp"}\r\n  }\r\n}\r\n'
    write("j/.mcp.json", None, raw=b"\xef\xbb\xbf" + body.encode())
    toml = '[mcp_servers.t]\r\ncommand = "uvx"\r\nargs = ["mcp-t==1.0"]\r\n'
    write("t/.codex/config.toml", None, raw=b"\xef\xbb\xbf" + toml.encode())
    skill = "---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\nBody\r\n"
    write("s/crlf/SKILL.md", None, raw=b"\xef\xbb\xbf" + skill.encode())
    result = scan_paths([tmp_path])
    assert [f.status for f in result.files] == [FileStatus.OK] * 3, result.files
    assert {"mcp:https://a/mcp", "mcp:pypi/mcp-t@1.0", "skill:crlf"} <= set(result.agbom.components)
    assert result.agbom.get("skill:crlf").get("description") == "Windows line ends."


def test_invalid_utf8_located(write: Callable[..., Path]) -> None:
    report, _ = _only(write(".codex/config.toml", None, raw=b'a = "x"\nb = "\xff"\n'))
    assert report.error.reason == "not valid UTF-8" and report.error.line == 2


def test_over_size_limit(write: Callable[..., Path]) -> None:
    path = write(".mcp.json", None, raw=b" " * (CONFIG_MAX_BYTES + 1))
    report, _ = _only(path)
    assert report.status is FileStatus.ERROR
    assert f"over the {CONFIG_MAX_BYTES} byte limit" in report.error.reason


def test_symlink_out_of_tree_not_followed(write: Callable[..., Path], tmp_path: Path) -> None:
    outside = write("outside/secret.json", {"mcpServers": {"s": {"url": "https://s/mcp"}}})
    (tmp_path / "repo").mkdir()
    os.symlink(outside, tmp_path / "repo" / ".mcp.json")
    result = scan_paths([tmp_path / "repo"])
    (report,) = result.files
    assert report.status is FileStatus.ERROR
    assert report.error.reason == "symbolic link leaves the scanned tree; not followed"
    assert "mcp:https://s/mcp" not in result.agbom


def test_symlink_inside_tree_is_read(write: Callable[..., Path], tmp_path: Path) -> None:
    write("repo/shared/servers.json", {"mcpServers": {"s": {"url": "https://s/mcp"}}})
    os.symlink("shared/servers.json", tmp_path / "repo" / ".mcp.json")
    result = scan_paths([tmp_path / "repo"])
    assert "mcp:https://s/mcp" in result.agbom


def test_skill_with_escaping_symlink_is_refused(write: Callable[..., Path], tmp_path: Path) -> None:
    write("home-secrets/id_rsa", "KEY")
    path = write("skills/leaky/SKILL.md", "---\nname: leaky\ndescription: x\n---\n")
    os.symlink("../../home-secrets/id_rsa", path.parent / "key")
    report, result = _only(path)
    assert report.status is FileStatus.ERROR
    assert report.error.reason == "skill folder refused: key: symbolic link leaves the skill folder"
    assert "skill:leaky" not in result.agbom


def test_fifo_named_like_a_config_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".mcp.json")
    (report,) = scan_paths([tmp_path]).files
    assert report.error.reason == "not a regular file"


def test_100k_blank_lines_before_frontmatter_is_fast(write: Callable[..., Path]) -> None:
    path = write("s/slow/SKILL.md", "\n" * 100_000 + "---\nname: slow\ndescription: x\n---\n")
    start = time.perf_counter()
    result = scan_paths([path])
    assert time.perf_counter() - start < 1.0
    # Read and inventoried: a finding of the scanner's spec rule, not an error (issue 41).
    (report,) = result.files
    assert report.status is FileStatus.OK
    (finding,) = result.findings
    assert finding.rule_id == "scan.skill-spec" and finding.severity == "low"
    assert "frontmatter must start on the first line of SKILL.md (line 100001)" in finding.message


def test_frontmatter_not_closed_in_huge_skill_md(write: Callable[..., Path]) -> None:
    path = write("s/huge/SKILL.md", "---\nname: huge\n" + "x: y\n" * 200_000)
    start = time.perf_counter()
    report, _ = _only(path)
    assert time.perf_counter() - start < 2.0
    assert "not closed" in report.error.reason and "262144" in report.error.reason


def test_skill_md_without_frontmatter(write: Callable[..., Path]) -> None:
    result = scan_paths([write("s/plain/SKILL.md", "# Just markdown\n")])
    assert [r.status for r in result.files] == [FileStatus.OK]
    assert [(f.rule_id, f.component_id) for f in result.findings] == [
        ("scan.skill-spec", "skill:plain")
    ]
    assert "no YAML frontmatter" in result.findings[0].message
    assert result.agbom.get("skill:plain").get("valid") is False


def test_deeply_nested_json_is_an_error_not_a_crash(write: Callable[..., Path]) -> None:
    report, _ = _only(write(".mcp.json", "[" * 5000 + "]" * 5000))
    assert report.status is FileStatus.ERROR


def test_jsonl_without_acs_messages_is_skipped(write: Callable[..., Path]) -> None:
    report, _ = _only(write("logs/app.jsonl", '{"level": "info"}\nnot json\n'))
    assert report.status is FileStatus.SKIPPED and "1 lines are not JSON" in report.skip_reason


def test_transcript_bad_line_located_rest_kept(write: Callable[..., Path]) -> None:
    good = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "agbom/snapshot",
        "params": {
            "metadata": {"session_id": "s"},
            "payload": {
                "agbom": {
                    "components": [
                        {
                            "id": "t",
                            "type": "tool",
                            "name": "t",
                            "version": None,
                            "provider": None,
                            "capability": "x",
                        }
                    ]
                }
            },
        },
    }
    report, result = _only(write("t.jsonl", json.dumps(good) + "\n{broken\n"))
    assert report.status is FileStatus.ERROR and report.error.line == 2
    assert "t" in result.agbom


def test_missing_path_is_a_scan_error(tmp_path: Path) -> None:
    from agbom.scan import ScanError

    with pytest.raises(ScanError, match="No such file"):
        scan_paths([tmp_path / "nope"])


_names = st.sampled_from(
    [".mcp.json", "claude_desktop_config.json", "opencode.json", ".codex/config.toml",
     "s/x/SKILL.md", "agent-card.json", "server.json", "x.agbom.json", "t.jsonl",
     ".vscode/settings.json"]
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=_names, data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_any_bytes_give_a_report_never_an_exception(tmp_path: Path, name: str, data: bytes) -> None:
    root = tmp_path / "fuzz"
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        result = scan_paths([root])
        (report,) = result.files
        assert report.status in set(FileStatus)
        assert all(not e.reason.startswith("internal error") for e in report.errors), report
    finally:
        path.unlink()


def test_an_id_over_512_characters_is_an_error_of_its_file(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    """A 600-character URL used to end the scan with 'scan result is not a valid AgBOM'."""
    long_url = "https://a.example/" + "p" * 600
    path = write(
        ".mcp.json",
        {"mcpServers": {"long": {"url": long_url}, "ok": {"url": "https://ok.example/mcp"}}},
    )
    report, result = _only(path)
    assert report.status is FileStatus.ERROR
    (error,) = report.errors
    assert error.reason.startswith("component 'mcp:https://a.example/ppp")
    assert error.reason.endswith(
        "left out of the AgBOM: field 'id' must be shorter than or equal to 512 characters"
    )
    assert [c.id for c in result.agbom] == ["mcp:https://ok.example/mcp"]


def test_a_left_out_component_is_an_error_of_every_file_it_came_from(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    config = {"mcpServers": {"long": {"url": "https://a.example/" + "p" * 600}}}
    write("a/.mcp.json", config)
    write("b/.cursor/mcp.json", config)
    result = scan_paths([tmp_path])
    assert [(f.status, len(f.errors)) for f in result.files] == [(FileStatus.ERROR, 1)] * 2
    assert len(result.agbom) == 0


@pytest.mark.parametrize(
    ("name", "config", "syntax"),
    [
        (".mcp.json", '{"mcpServers": {\n  "broken": {\n    "command": "npx",\n'
                      '    "args": "-y @scope/pkg@1.2.3",\n    "env": ["A=1"],\n'
                      '    "headers": 5\n  }\n}}', "json"),
        (".codex/config.toml", '[mcp_servers.broken]\ncommand = "npx"\n'
                               'args = "-y @scope/pkg@1.2.3"\nenv = ["A=1"]\n'
                               'headers = 5\n', "toml"),
    ],
)  # fmt: skip
def test_every_type_error_of_an_entry_is_reported_at_its_field(
    write: Callable[..., Path], name: str, config: str, syntax: str
) -> None:
    path = write(name, config)
    result = scan_paths([path.parent])
    (report,) = [f for f in result.files if f.path.endswith(name.rsplit("/", 1)[-1])]
    lines = config.splitlines()
    found = {e.reason.split(": ", 1)[1]: e for e in report.errors}
    expected = {
        "'args' must be an array of strings, not str": "args",
        "'env' must be an object, not list": "env",
        "'headers' must be an object, not int": "headers",
    }
    assert set(found) == set(expected), [e.reason for e in report.errors]
    for reason, field in expected.items():
        line = found[reason].line
        assert line is not None and lines[line - 1].lstrip().startswith((f'"{field}"', field))
