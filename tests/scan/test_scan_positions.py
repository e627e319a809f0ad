"""Where each key of a manifest is: the position index of JSON, JSONC, YAML and TOML, and the
locations the scanner records for every component (file and line of its entry)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import orjson
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agbom.scan import scan_paths
from agbom.scan._parse import load_json, load_yaml_located, positions_of
from agbom.scan._positions import json_positions, toml_positions


def _line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """The line of the ``occurrence``-th ``needle`` in ``text`` (the test's own answer)."""
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    return text.count("\n", 0, at) + 1


# -- JSON ---------------------------------------------------------------------------------------


def test_json_duplicate_key_is_the_last_one_as_the_parser_keeps() -> None:
    text = (
        '{\n "mcpServers": {\n  "a": {"command": "first"},\n  "b": {},\n'
        '  "a": {"command": "last"}\n }\n}'
    )
    assert orjson.loads(text)["mcpServers"]["a"]["command"] == "last"
    span = json_positions(text).get(("mcpServers", "a"))
    assert span is not None and span.line == 5 and span.column == 3 and span.end_column == 6


def test_json_nested_objects_with_the_same_key_are_told_apart() -> None:
    text = (
        '{"servers": {\n'
        '  "outer": {"env": {"servers": {"outer": 1}}},\n'
        '  "second": {\n'
        '    "args": ["servers", {"outer": 2}]\n'
        "  }\n"
        "}}"
    )
    positions = json_positions(text)
    assert positions.get(("servers", "outer")).line == 2  # type: ignore[union-attr]
    inner = positions.get(("servers", "outer", "env", "servers", "outer"))
    assert inner is not None and inner.line == 2
    assert inner.column == text.split("\n")[1].rindex('"outer"') + 1
    assert positions.get(("servers", "second", "args", 1, "outer")).line == 4  # type: ignore[union-attr]
    assert positions.get(("servers", "second", "args", 0)).line == 4  # type: ignore[union-attr]
    assert positions.get(("outer",)) is None  # never taken from a nested object


def test_json_keys_are_decoded_and_strings_never_read_as_structure() -> None:
    text = '{\n "x": "\\"a\\": {[,",\n "git\\u0068ub": {"u": "https://h/x//y"},\n "é": 1}'
    positions = json_positions(text)
    assert positions.get(("github",)).line == 3  # type: ignore[union-attr]
    assert positions.get(("github", "u")).line == 3  # type: ignore[union-attr]
    span = positions.get(("é",))
    assert span is not None and (span.line, span.column) == (4, 2)  # code points, not bytes


def test_jsonc_comments_and_trailing_commas_are_stepped_over() -> None:
    text = (
        '// "servers": {"fake": 1}\n'
        "{\n"
        '  /* "fake": { */ "servers": {\n'
        '    "real": {"url": "https://a//b"}, // "other": 2\n'
        "  },\n"
        "}\n"
    )
    assert load_json(text.encode(), jsonc=True) == {"servers": {"real": {"url": "https://a//b"}}}
    positions = json_positions(text)
    assert positions.get(("servers",)).line == 3  # type: ignore[union-attr]
    assert positions.get(("servers", "real", "url")).line == 4  # type: ignore[union-attr]
    assert positions.get(("fake",)) is None and positions.get(("servers", "other")) is None


_keys = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=25,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(((*path, key), item))
            out.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append(((*path, index), item))
            out.extend(_paths(item, (*path, index)))
    return out


@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(_keys, _json, max_size=5), indent=st.booleans())
def test_every_json_key_is_found_where_it_is_written(doc: dict[str, Any], indent: bool) -> None:
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    lines = text.split("\n")
    positions = json_positions(text)
    for path, _ in _paths(doc):
        if len(path) > 12:
            continue
        span = positions.get(path)
        assert span is not None, path
        written = lines[span.line - 1][span.column - 1 : span.end_column - 1]
        if isinstance(path[-1], str):
            assert json.loads(written) == path[-1]
        else:
            assert written[0] in '{["-0123456789tfn'


# -- YAML and TOML ------------------------------------------------------------------------------


def test_yaml_duplicates_nesting_and_line_offset() -> None:
    text = (
        "extensions:\n  a:\n    cmd: x\n  b:\n    envs: {a: 1}\n  a:\n    cmd: y\n"
        "list:\n  - name: q\n"
    )
    doc, positions = load_yaml_located(text, line_offset=10)
    assert doc["extensions"]["a"] == {"cmd": "y"} == yaml.safe_load(text)["extensions"]["a"]
    assert positions.get(("extensions", "a")).line == 16  # type: ignore[union-attr]
    assert positions.get(("extensions", "b", "envs", "a")).line == 15  # type: ignore[union-attr]
    assert positions.get(("list", 0, "name")).line == 19  # type: ignore[union-attr]


def test_toml_headers_dotted_keys_inline_tables_and_strings() -> None:
    text = (
        "# [mcp_servers.fake]\n"
        "[mcp_servers.github]\n"
        'command = "npx"\n'
        'args = [\n  "-y", # ] not the end\n  "pkg",\n]\n'
        'env = { A = "1", "B.c" = \'x\' }\n'
        "\n"
        '[mcp_servers."my.server"]\n'
        'command = """\n[mcp_servers.inside_a_string]\n"""\n'
        "[other]\n"
        'mcp_servers.dotted.command = "z"\n'
        "[[arr.t]]\nx = 1\n[[arr.t]]\nx = 2\n"
    )
    doc = tomllib.loads(text)
    assert set(doc["mcp_servers"]) == {"github", "my.server"}
    positions = toml_positions(text)
    assert positions.get(("mcp_servers", "github")).line == 2  # type: ignore[union-attr]
    assert positions.get(("mcp_servers", "github", "args", 1)).line == 6  # type: ignore[union-attr]
    assert positions.get(("mcp_servers", "github", "env", "B.c")).line == 8  # type: ignore[union-attr]
    assert positions.get(("mcp_servers", "my.server")).line == 10  # type: ignore[union-attr]
    assert positions.get(("mcp_servers", "inside_a_string")) is None
    assert positions.get(("mcp_servers", "fake")) is None
    assert positions.get(("other", "mcp_servers", "dotted")).line == 15  # type: ignore[union-attr]
    assert positions.get(("arr", "t", 1, "x")).line == 19  # type: ignore[union-attr]


def test_undecodable_bytes_have_no_positions() -> None:
    assert len(positions_of(b"\xff\xfe{", "json")) == 0


# -- the scanner --------------------------------------------------------------------------------


def _tree(tmp_path: Path) -> dict[str, str]:
    files = {
        ".mcp.json": (
            '{\n  "mcpServers": {\n    "fs": {\n      "command": "npx",\n'
            '      "args": ["-y", "@scope/fs@1.0.0"]\n    },\n'
            '    "remote": {"type": "http", "url": "https://mcp.example.com/mcp"}\n  }\n}\n'
        ),
        ".codex/config.toml": (
            '[mcp_servers.ctx]\ncommand = "npx"\nargs = ["-y", "ctx-mcp@2.0.0"]\n'
        ),
        ".config/goose/config.yaml": (
            "extensions:\n  dev:\n    type: builtin\n  git:\n    type: stdio\n"
            "    cmd: uvx\n    args: [mcp-server-git]\n"
        ),
        ".continue/mcpServers/x.yaml": (
            "name: x\nmcpServers:\n  - name: first\n    command: npx\n    args: [-y, a-mcp@1.0.0]\n"
            "  - name: second\n    command: npx\n    args: [-y, b-mcp@1.0.0]\n"
        ),
        "skills/triage/SKILL.md": (
            "---\nname: triage\ndescription: Triage issues.\nallowed-tools: Bash(gh:*) Read\n---\n"
            "Body.\n"
        ),
    }
    for rel, text in files.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return files


def test_scan_records_file_and_line_of_every_entry(tmp_path: Path) -> None:
    files = _tree(tmp_path)
    result = scan_paths([tmp_path])
    where = {
        cid: [(place.path.removeprefix(str(tmp_path) + "/"), place.line) for place in places]
        for cid, places in result.locations.items()
    }
    mcp = files[".mcp.json"]
    assert where["mcp:npm/@scope/fs@1.0.0"] == [(".mcp.json", _line_of(mcp, '"fs"'))]
    assert where["mcp:https://mcp.example.com/mcp"] == [(".mcp.json", _line_of(mcp, '"remote"'))]
    assert where["mcp:npm/ctx-mcp@2.0.0"] == [(".codex/config.toml", 1)]
    goose = files[".config/goose/config.yaml"]
    assert where["mcp:pypi/mcp-server-git"] == [
        (".config/goose/config.yaml", _line_of(goose, "  git:"))
    ]
    cont = files[".continue/mcpServers/x.yaml"]
    assert where["mcp:npm/b-mcp@1.0.0"] == [
        (".continue/mcpServers/x.yaml", _line_of(cont, "- name: second"))
    ]
    assert where["skill:triage"] == [("skills/triage/SKILL.md", 1)]
    skill = result.locations["skill:triage"][0]
    declared = skill.field("declared_capabilities")
    assert declared is not None and declared.line == 4
    fs = result.locations["mcp:npm/@scope/fs@1.0.0"][0]
    assert fs.field("command").line == _line_of(mcp, '"command"')  # type: ignore[union-attr]
    assert fs.file == str((tmp_path / ".mcp.json").resolve())
    # Beside the AgBOM, never in it: the AgBOM's bytes do not move with lines.
    assert b'"_at"' not in orjson.dumps(result.agbom.to_document())
    assert b"line" not in orjson.dumps([c.data.get("found_in") for c in result.agbom])


def test_each_path_keeps_its_own_file(tmp_path: Path) -> None:
    """With several PATHs, a component is located in its own file, not in the first path's."""
    first, second = tmp_path / "one", tmp_path / "two"
    for folder, package in ((first, "a-mcp@1.0.0"), (second, "b-mcp@1.0.0")):
        folder.mkdir()
        (folder / ".mcp.json").write_text(
            json.dumps({"mcpServers": {"s": {"command": "npx", "args": ["-y", package]}}}, indent=1)
        )
    result = scan_paths([first, second])
    assert result.locations["mcp:npm/a-mcp@1.0.0"][0].file == str((first / ".mcp.json").resolve())
    assert result.locations["mcp:npm/b-mcp@1.0.0"][0].file == str((second / ".mcp.json").resolve())
    assert result.locations["mcp:npm/b-mcp@1.0.0"][0].line == 3


def test_a_component_found_in_two_files_has_both_places(tmp_path: Path) -> None:
    entry = {"command": "npx", "args": ["-y", "same-mcp@1.0.0"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": entry}}))
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"pad": {}, "s": entry}}, indent=2)
    )
    places = scan_paths([tmp_path]).locations["mcp:npm/same-mcp@1.0.0"]
    assert [(Path(p.file).name, p.line) for p in places] == [("mcp.json", 4), (".mcp.json", 1)]


# -- positions only where a finding needs one (issue 41) ------------------------------------------


def _big_claude_json(folder: Path, args: list[str]) -> Path:
    """A ~/.claude.json of about 1 MB (project history) with one server near its end."""
    projects = {
        f"/home/u/p{i}": {"history": [{"display": f"fix module {j} " * 3} for j in range(20)]}
        for i in range(300)
    }
    doc = {
        "numStartups": 3,
        "projects": projects,
        "mcpServers": {"fs": {"command": "npx", "args": args}},
    }
    path = folder / ".claude.json"
    path.write_text(json.dumps(doc, indent=2))
    assert path.stat().st_size > 512 * 1024
    return path


def test_a_large_config_without_findings_indexes_no_positions(
    tmp_path: Path, monkeypatch: Any
) -> None:
    import agbom.scan.clients as clients

    calls: list[int] = []
    real = clients.positions_of

    def counted(data: bytes, syntax: str = "json") -> Any:
        calls.append(len(data))
        return real(data, syntax)

    monkeypatch.setattr(clients, "positions_of", counted)
    _big_claude_json(tmp_path, ["-y", "@modelcontextprotocol/server-filesystem@2025.7.1", "/t"])
    result = scan_paths([tmp_path])
    pinned = "mcp:npm/@modelcontextprotocol/server-filesystem@2025.7.1"
    assert [c.id for c in result.agbom] == [pinned]
    assert calls == []  # read, inventoried, and never indexed
    (place,) = result.locations[pinned]
    assert place.deferred


def test_a_large_config_places_a_finding_where_a_small_one_would(tmp_path: Path) -> None:
    path = _big_claude_json(tmp_path, ["-y", "@modelcontextprotocol/server-filesystem", "/t"])
    result = scan_paths([tmp_path])
    (place,) = result.locations["mcp:npm/@modelcontextprotocol/server-filesystem"]
    assert place.deferred
    text = path.read_text()
    want = _line_of(text, '"fs"')
    assert place.span.line == want and not place.deferred  # computed when asked
    assert text.split("\n")[want - 1][place.span.column - 1 :].startswith('"fs"')
    package = place.field("package")
    assert package is not None
    line = text.split("\n")[package.line - 1]
    assert line[package.column - 1 : package.end_column - 1] == (
        '"@modelcontextprotocol/server-filesystem"'
    )
