"""One fixture per client format: the right reader, fields and ids."""
# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agbom.inventory import AgBOM
from agbom.scan import FileStatus, reader_for, scan_paths


def _scan(path: Path) -> tuple[AgBOM, list]:
    result = scan_paths([path])
    return result.agbom, result.files


def _one_file(path: Path) -> tuple[AgBOM, str]:
    agbom, files = _scan(path)
    assert len(files) == 1, files
    assert files[0].status is FileStatus.OK, files[0]
    return agbom, files[0].reader or ""


def test_claude_desktop(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/claude-desktop/claude_desktop_config.json"))
    assert reader == "claude-desktop"
    fs = agbom.get("mcp:npm/@modelcontextprotocol/server-filesystem@2025.8.21")
    assert fs is not None and fs.get("transport") == "stdio" and fs.get("endpoint") is None
    assert fs.get("purl") == "pkg:npm/%40modelcontextprotocol/server-filesystem@2025.8.21"
    linear = agbom.get("mcp:https://mcp.linear.app/sse")
    assert linear is not None and linear.get("transport") == "sse"
    assert linear.get("header_keys") == ["Authorization"]
    assert agbom.get("mcp:oci/ghcr.io/github/github-mcp-server@v0.13.0") is not None


def test_claude_code_project_and_plugin(asset: Callable[[str], Path]) -> None:
    agbom, files = _scan(asset("manifests/claude-code"))
    assert {f.reader for f in files} == {"claude-code", "claude-plugin"}
    assert agbom.get("mcp:https://mcp.sentry.dev/mcp").get("transport") == "streamable-http"
    changelog = agbom.get("mcp:pypi/changelog-mcp-server@0.4.2")
    assert changelog.get("found_in")[0]["reader"] == "claude-plugin"


def test_claude_user_file_top_level_and_projects(write: Callable[..., Path]) -> None:
    path = write(
        ".claude.json",
        {
            "numStartups": 4,
            "mcpServers": {"a": {"command": "npx", "args": ["-y", "pkg-a@1.0.0"]}},
            "projects": {
                "/home/u/app": {
                    "mcpServers": {"b": {"type": "http", "url": "https://b.example/mcp"}}
                },
                "/home/u/other": {"allowedTools": []},
            },
        },
    )
    agbom, reader = _one_file(path)
    assert reader == "claude-code-user"
    b = agbom.get("mcp:https://b.example/mcp")
    assert b.get("found_in")[0]["entry"] == "projects./home/u/app.mcpServers.b"
    assert agbom.get("mcp:npm/pkg-a@1.0.0") is not None


def test_managed_mcp(write: Callable[..., Path]) -> None:
    path = write(
        "etc/claude-code/managed-mcp.json",
        {"mcpServers": {"corp": {"url": "https://corp/mcp", "type": "http"}}},
    )
    agbom, reader = _one_file(path)
    assert reader == "claude-code" and "mcp:https://corp/mcp" in agbom


def test_cursor(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/cursor/.cursor/mcp.json"))
    assert reader == "cursor"
    playwright = agbom.get("mcp:npm/@playwright/mcp")
    assert playwright.version is None and playwright.get("pinned") is False
    assert playwright.get("package")["requested"] == "latest"
    assert "@latest" not in playwright.get("purl")


def test_vscode_mcp_json_with_inputs_and_comments(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/vscode/.vscode/mcp.json"))
    assert reader == "vscode"
    assert agbom.get("mcp:npm/server-perplexity-ask@0.1.3").get("env_keys") == [
        "PERPLEXITY_API_KEY"
    ]


def test_vscode_settings_nested_mcp(write: Callable[..., Path]) -> None:
    path = write(
        ".vscode/settings.json",
        '{\n  // editor\n  "editor.tabSize": 2,\n  "mcp": {"servers": {"s": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time==1.0.0"]}}},\n}\n',
    )
    agbom, reader = _one_file(path)
    assert reader == "vscode-settings" and "mcp:pypi/mcp-server-time@1.0.0" in agbom


def test_vscode_settings_without_mcp_is_skipped(write: Callable[..., Path]) -> None:
    path = write(".vscode/settings.json", '{"editor.tabSize": 2}')
    files = scan_paths([path]).files
    assert files[0].status is FileStatus.SKIPPED and "mcp" in (files[0].skip_reason or "")


def test_windsurf_server_url(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/windsurf/mcp_config.json"))
    assert reader == "windsurf"
    assert (
        agbom.get("mcp:https://mcp.context7.com/mcp").get("endpoint")
        == "https://mcp.context7.com/mcp"
    )


def test_gemini_http_url_and_url(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/gemini/.gemini/settings.json"))
    assert reader == "gemini"
    assert agbom.get("mcp:https://docs.example.com/mcp").get("transport") == "streamable-http"
    assert agbom.get("mcp:https://events.example.com/sse").get("transport") == "sse"


def test_codex_toml_disabled_kept(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/codex/.codex/config.toml"))
    assert reader == "codex"
    slack = agbom.get("mcp:docker/mcp/slack")
    assert slack.get("disabled") is True
    assert agbom.get("mcp:npm/@upstash/context7-mcp@1.0.14").get("disabled") is None


def test_opencode_jsonc_local_and_remote(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/opencode/opencode.json"))
    assert reader == "opencode"
    everything = agbom.get("mcp:npm/@modelcontextprotocol/server-everything@2025.9.12")
    assert everything.get("env_keys") == ["DEBUG"]
    assert agbom.get("mcp:https://jira-mcp.example.com/mcp").get("transport") == "streamable-http"


def test_generic_mcp_json(write: Callable[..., Path]) -> None:
    path = write(
        "tools/mcp.json", {"mcpServers": {"x": {"command": "node", "args": ["server.js"]}}}
    )
    agbom, reader = _one_file(path)
    assert reader == "mcp-json"
    (component,) = list(agbom)
    assert component.id.startswith("mcp:cmd/node-") and component.get("purl") is None


def test_reader_globs_prefer_specific() -> None:
    assert reader_for(Path("x/.cursor/mcp.json")).name == "cursor"
    assert reader_for(Path("x/.vscode/mcp.json")).name == "vscode"
    assert reader_for(Path("x/mcp.json")).name == "mcp-json"
    assert reader_for(Path("home/.gemini/antigravity/mcp_config.json")).name == "antigravity"
    assert reader_for(Path("x/settings.json")) is None


def test_skills_validated_and_digested(asset: Callable[[str], Path]) -> None:
    agbom, files = _scan(asset("skills"))
    assert all(f.status is FileStatus.OK for f in files)
    pdf = agbom.get("skill:pdf-report")
    assert pdf.get("declared_capabilities") == ["fs.read", "fs.write", "process.execute"]
    assert [t["tool"] for t in pdf.get("allowed_tools")] == ["Read", "Bash", "Write"]
    assert pdf.get("scripts") == ["scripts/build.py"]
    assert pdf.digest[0] == "sha256" and len(pdf.digest[1]) == 64
    triage = agbom.get("skill:repo-triage")
    assert triage.get("declared_capabilities") == ["fs.read", "process.execute"]
    assert [(t["tool"], t.get("pattern")) for t in triage.get("allowed_tools")] == [
        ("Read", None), ("Grep", None), ("Bash", "gh issue list:*"), ("Bash", "gh issue edit:*"),
    ]  # fmt: skip


def test_skill_rules(write: Callable[..., Path], tmp_path: Path) -> None:
    write("s/Bad_Name/SKILL.md", "---\nname: Bad_Name\ndescription: x\n---\n")
    write("s/other/SKILL.md", "---\nname: mismatch\ndescription: " + "d" * 1100 + "\n---\n")
    write("s/nodesc/SKILL.md", "---\nname: nodesc\n---\n")
    result = scan_paths([tmp_path / "s"])
    # Spec deviations of a file that was read are low findings of scan.skill-spec, never
    # errors: the scan exits 0, not 3 (issue 41 item 5).
    assert all(f.status is FileStatus.OK for f in result.files)
    reasons: dict[str, list[str]] = {}
    for finding in result.findings:
        assert (finding.rule_id, finding.severity) == ("scan.skill-spec", "low")
        reasons.setdefault(finding.path.split("/")[-2], []).append(finding.message)
    assert any("lowercase letters" in r for r in reasons["Bad_Name"])
    assert any("does not match the folder name" in r for r in reasons["other"])
    assert any("at most 1024" in r for r in reasons["other"])
    assert reasons["nodesc"] == ["skill 'nodesc': missing required field 'description'"]
    # Still inventoried: the folder is on disk and an agent may load it.
    assert result.agbom.get("skill:nodesc").get("valid") is False


def test_a2a_cards_v03_and_v10(asset: Callable[[str], Path]) -> None:
    agbom, files = _scan(asset("manifests/a2a"))
    assert {f.reader for f in files} == {"a2a-agent-card"}
    travel = agbom.get("a2a:https://travel.example.com/a2a/v1")
    assert travel.get("protocol_version") == "0.3.0"
    assert travel.get("transports") == ["GRPC", "JSONRPC"]
    assert [s["id"] for s in travel.get("skills")] == ["plan-trip", "book-flight"]
    expenses = agbom.get("a2a:https://expenses.example.com/a2a")
    assert expenses.get("protocol_version") == "1.0"
    assert expenses.get("agent_card_ref").endswith("a2a/agent.json")


def test_agent_json_that_is_not_a_card_is_skipped(write: Callable[..., Path]) -> None:
    path = write("agent.json", {"model": "x"})
    (report,) = scan_paths([path]).files
    assert report.status is FileStatus.SKIPPED and "not an A2A Agent Card" in report.skip_reason


def test_registry_server_json_merges_with_config(asset: Callable[[str], Path]) -> None:
    agbom, _ = _scan(asset("manifests"))
    fs = agbom.get("mcp:npm/@modelcontextprotocol/server-filesystem@2025.8.21")
    readers = sorted(loc["reader"] for loc in fs.get("found_in"))
    assert readers == ["agents-sdk", "claude-code", "claude-desktop", "mcp-registry"]
    remote = agbom.get("mcp:https://fs.example.com/mcp")
    assert remote.version == "2025.8.21" and remote.get("registry_name").endswith("/filesystem")


def test_acs_transcript(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/acs/session.jsonl"))
    assert reader == "acs-transcript"
    skill = agbom.get("refund-policy")
    assert skill.get("observed") == ["skillRegister", "skillLoad"]
    assert skill.get("tools") == ["tool:zendesk.search"]
    assert "mcp:zendesk" in agbom and "model:claude-sonnet-4" in agbom


def test_transcript_load_with_other_digest_is_a_finding(write: Callable[..., Path]) -> None:
    def line(method: str, payload: dict) -> str:
        import json

        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": method,
                "params": {"metadata": {"session_id": "s"}, "payload": payload},
            }
        )

    d1, d2 = {"algorithm": "sha256", "value": "a" * 64}, {"algorithm": "sha256", "value": "b" * 64}
    path = write(
        "t.jsonl",
        "\n".join([
            line("steps/skillRegister", {"skill_id": "k", "definition": {"ref": "k", "digest": d1}}),
            line("steps/skillLoad", {"skill_id": "k", "digest": d2, "load_trigger": "user"}),
        ]),
    )  # fmt: skip
    result = scan_paths([path])
    assert [f.rule_id for f in result.findings] == ["scan.skill-load-digest-mismatch"]


def test_agbom_document_components_merged(write: Callable[..., Path]) -> None:
    path = write(
        "agents/x.agbom.json",
        {"agent": {"id": "x"}, "components": [
            {"id": "m", "type": "model", "name": "m", "version": "1", "provider": "p", "endpoint": None, "context_window": None},
            {"id": "bad", "type": "tool"},
        ]},
    )  # fmt: skip
    result = scan_paths([path])
    (report,) = result.files
    assert report.reader == "acs-agbom" and report.status is FileStatus.ERROR
    assert report.components == 1 and "missing required field" in report.errors[0].reason
    assert "m" in result.agbom and "bad" not in result.agbom


def test_explicit_file_sniffed_by_content(write: Callable[..., Path]) -> None:
    path = write("exports/servers-backup.json", {"mcpServers": {"a": {"url": "https://a/mcp"}}})
    result = scan_paths([path])
    assert result.files[0].reader == "mcp-json" and "mcp:https://a/mcp" in result.agbom
    other = write("exports/notes.txt", "hello")
    (report,) = scan_paths([other]).files
    assert report.status is FileStatus.SKIPPED


def test_home_discovery(write: Callable[..., Path], tmp_path: Path) -> None:
    home = tmp_path / "home"
    write("home/.cursor/mcp.json", {"mcpServers": {"c": {"url": "https://c/mcp"}}})
    write(
        "home/.codeium/windsurf/mcp_config.json",
        {"mcpServers": {"w": {"serverUrl": "https://w/mcp"}}},
    )
    write("home/.codex/config.toml", '[mcp_servers.x]\ncommand = "uvx"\nargs = ["mcp-x==1.0"]\n')
    write(
        "home/.config/Code/User/mcp.json",
        {"servers": {"v": {"type": "http", "url": "https://v/mcp"}}},
    )
    write("home/.claude/skills/hello/SKILL.md", "---\nname: hello\ndescription: Hi.\n---\n")
    write("home/.claude.json", {"mcpServers": {}})
    write(
        "home/.gemini/antigravity/mcp_config.json",
        {"mcpServers": {"g": {"serverUrl": "https://g/mcp"}}},
    )
    result = scan_paths([], home=home)
    by_path = {f.path: f.reader for f in result.files}
    assert by_path == {
        "~/.cursor/mcp.json": "cursor",
        "~/.codeium/windsurf/mcp_config.json": "windsurf",
        "~/.codex/config.toml": "codex",
        "~/.config/Code/User/mcp.json": "vscode",
        "~/.claude/skills/hello/SKILL.md": "agent-skill",
        "~/.claude.json": "claude-code-user",
        "~/.gemini/antigravity/mcp_config.json": "antigravity",
    }
    assert {"mcp:https://c/mcp", "mcp:https://w/mcp", "mcp:pypi/mcp-x@1.0", "mcp:https://v/mcp",
            "skill:hello", "mcp:https://g/mcp"} <= set(result.agbom.components)  # fmt: skip


def test_walk_skips_vendored_and_virtualenv_folders(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("repo/node_modules/pkg/.mcp.json", {"mcpServers": {"n": {"url": "https://n/mcp"}}})
    write("repo/.git/.mcp.json", {"mcpServers": {"g": {"url": "https://g/mcp"}}})
    write("repo/env/pyvenv.cfg", "home = /usr/bin\n")
    write("repo/env/lib/.mcp.json", {"mcpServers": {"v": {"url": "https://v/mcp"}}})
    write("repo/.mcp.json", {"mcpServers": {"ok": {"url": "https://ok/mcp"}}})
    result = scan_paths([tmp_path / "repo"])
    assert [f.path for f in result.files] == [f"{tmp_path / 'repo'}/.mcp.json"]
    assert result.skipped_dirs == 3


def test_goose_extensions_leave_builtins_out(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/goose/.config/goose/config.yaml"))
    assert reader == "goose"
    github = agbom.get("mcp:npm/@modelcontextprotocol/server-github@2025.4.8")
    assert github.get("env_keys") == ["GITHUB_PERSONAL_ACCESS_TOKEN"]  # the value never is
    assert agbom.get("mcp:pypi/mcp-server-fetch").get("disabled") is True
    assert agbom.get("mcp:https://mcp.example.com/docs/mcp").get("transport") == "streamable-http"
    assert not any(c.name == "developer" for c in agbom)  # part of Goose, not a server
    assert "<your token>" not in str(agbom.to_document())


def test_goose_with_only_builtins_is_skipped(write: Callable[..., Path]) -> None:
    path = write(".config/goose/config.yaml", "extensions:\n  developer:\n    type: builtin\n")
    (report,) = scan_paths([path]).files
    assert report.status is FileStatus.SKIPPED and "built-in" in (report.skip_reason or "")


def test_zed_context_servers_old_and_new_shapes(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/zed/.config/zed/settings.json"))
    assert reader == "zed"
    postgres = agbom.get("mcp:npm/@modelcontextprotocol/server-postgres@0.6.2")
    assert postgres is not None and postgres.get("transport") == "stdio"
    assert agbom.get("mcp:pypi/mcp-server-sentry@0.6.2").get("env_keys") == ["SENTRY_TOKEN"]
    # A server provided by a Zed extension says nothing about what runs: not invented.
    assert len(list(agbom)) == 2


def test_continue_mcp_server_blocks(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/continue/.continue/mcpServers/playwright.yaml"))
    assert reader == "continue"
    browser = agbom.get("mcp:npm/@playwright/mcp@0.0.41")
    assert browser is not None and browser.name == "Browser search"
    assert agbom.get("mcp:https://wiki.example.com/mcp").name == "Internal wiki"


def test_continue_entry_errors_are_located(write: Callable[..., Path]) -> None:
    path = write(".continue/config.yaml", "mcpServers:\n  - name: broken\n    args: [1]\n")
    (report,) = scan_paths([path]).files
    assert report.status is FileStatus.ERROR
    assert "broken" in str(report.errors[0])


def test_new_client_globs() -> None:
    assert reader_for(Path("h/.config/goose/config.yaml")).name == "goose"
    assert reader_for(Path("a/Block/goose/config/config.yaml")).name == "goose"
    assert reader_for(Path("h/.config/zed/settings.json")).name == "zed"
    assert reader_for(Path("p/.zed/settings.json")).name == "zed"
    assert reader_for(Path("p/.continue/mcpServers/x.yaml")).name == "continue"
    assert reader_for(Path("h/.continue/config.yaml")).name == "continue"
    assert reader_for(Path("x/config.yaml")) is None


def test_home_discovery_of_goose_zed_and_continue(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write(
        "home/.config/goose/config.yaml",
        "extensions:\n  g:\n    cmd: uvx\n    args: [mcp-g==1.0]\n",
    )
    write("home/.config/zed/settings.json", {"context_servers": {"z": {"url": "https://z/mcp"}}})
    write("home/.continue/mcpServers/c.yaml", "mcpServers:\n  - name: c\n    url: https://c/mcp\n")
    result = scan_paths([], home=tmp_path / "home")
    assert {f.path: f.reader for f in result.files} == {
        "~/.config/goose/config.yaml": "goose",
        "~/.config/zed/settings.json": "zed",
        "~/.continue/mcpServers/c.yaml": "continue",
    }
    assert {"mcp:pypi/mcp-g@1.0", "mcp:https://z/mcp", "mcp:https://c/mcp"} <= set(
        result.agbom.components
    )


def test_mcpb_manifest_becomes_a_server_and_its_tools(asset: Callable[[str], Path]) -> None:
    agbom, reader = _one_file(asset("manifests/mcpb/weather-bundle/manifest.json"))
    assert reader == "mcpb"
    server = agbom.get("mcp:mcpb/weather-forecast@1.4.2")
    assert server.get("version") == "1.4.2" and server.get("publisher") == "Example Tools"
    assert server.get("env_keys") == ["WEATHER_API_KEY"]
    assert server.get("tools") == [
        "tool:mcpb/weather-forecast/get_forecast",
        "tool:mcpb/weather-forecast/get_alerts",
    ]
    assert agbom.get("tool:mcpb/weather-forecast/get_alerts").get("provider") == "weather-forecast"
    assert server.get("digest") is None  # an unpacked folder has no single file to pin


def _bundle(path: Path, manifest: bytes | None, *, extra: dict[str, bytes] | None = None) -> Path:
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if manifest is not None:
            archive.writestr("manifest.json", manifest)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return path


def test_zipped_bundle_is_pinned_by_its_sha256(
    asset: Callable[[str], Path], tmp_path: Path
) -> None:
    import hashlib

    manifest = asset("manifests/mcpb/weather-bundle/manifest.json").read_bytes()
    bundle = _bundle(tmp_path / "weather.mcpb", manifest, extra={"server/index.js": b"//"})
    agbom, reader = _one_file(bundle)
    assert reader == "mcpb"
    server = agbom.get("mcp:mcpb/weather-forecast@1.4.2")
    expected = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert server.get("digest") == {"algorithm": "sha256", "value": expected}


def test_bad_bundles_are_errors_and_other_manifests_are_skipped(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    pwa = write("web/manifest.json", {"name": "App", "start_url": "/", "icons": []})
    (report,) = scan_paths([pwa]).files
    assert report.status is FileStatus.SKIPPED
    not_zip = write("b/broken.mcpb", "plain text")
    no_manifest = _bundle(tmp_path / "c/empty.mcpb", None, extra={"x": b"y"})
    # A manifest that inflates past the bound is refused before it is read.
    bomb = _bundle(tmp_path / "d/bomb.mcpb", b"{" + b" " * (2 << 20) + b"}")
    reports = {Path(f.path).name: f for f in scan_paths([not_zip, no_manifest, bomb]).files}
    assert all(r.status is FileStatus.ERROR for r in reports.values())
    assert "not a zip" in str(reports["broken.mcpb"].error)
    assert "no manifest.json" in str(reports["empty.mcpb"].error)
    assert "over" in str(reports["bomb.mcpb"].error)


def test_agents_sdk_servers_are_read_from_python_without_running_it(
    asset: Callable[[str], Path],
) -> None:
    agbom, reader = _one_file(asset("manifests/agents-sdk/research_agent.py"))
    assert reader == "agents-sdk"
    fs = agbom.get("mcp:npm/@modelcontextprotocol/server-filesystem@2025.8.21")
    assert fs.name == "filesystem" and fs.get("transport") == "stdio"
    # The env value is computed at run time; its name is all an inventory keeps anyway.
    assert fs.get("env_keys") == ["NOTES_TOKEN"]
    assert agbom.get("mcp:https://search.example.com/mcp").name == "search"
    assert agbom.get("mcp:https://mcp.deepwiki.com/mcp").name == "deepwiki"


def test_agents_sdk_params_forms_and_run_time_values(write: Callable[..., Path]) -> None:
    source = (
        "from agents.mcp import MCPServerStdio, MCPServerStdioParams, MCPServerSse\n"
        "a = MCPServerStdio(params=MCPServerStdioParams(command='uvx', args=['mcp-a==1.2']))\n"
        "cmd = pick()\n"
        "b = MCPServerStdio(params={'command': cmd, 'args': []}, name='b')\n"
        "c = MCPServerSse({'url': 'https://c.example/sse'}, name='c')\n"
    )
    path = write("agent/main.py", source)
    result = scan_paths([path])
    (report,) = result.files
    assert report.status is FileStatus.ERROR
    assert report.errors[0].line == 4 and "run time" in report.errors[0].reason
    assert result.agbom.get("mcp:pypi/mcp-a@1.2") is not None
    assert result.agbom.get("mcp:https://c.example/sse").get("transport") == "sse"


def test_python_files_without_sdk_servers_are_passed_over_quietly(
    write: Callable[..., Path], tmp_path: Path
) -> None:
    write("repo/app/util.py", "def f():\n    return 1\n")
    write("repo/app/broken.py", "def (:\n")  # no SDK names: not even parsed
    write("repo/.mcp.json", {"mcpServers": {"x": {"url": "https://x/mcp"}}})
    result = scan_paths([tmp_path / "repo"])
    assert [f.reader for f in result.files] == ["claude-code"]  # the .py files are not listed
    # Named explicitly, such a file is listed as skipped, so nothing is silently ignored.
    (explicit,) = scan_paths([tmp_path / "repo/app/util.py"]).files
    assert explicit.status is FileStatus.SKIPPED


def test_python_that_names_the_sdk_but_does_not_parse_is_an_error(
    write: Callable[..., Path],
) -> None:
    path = write("agent.py", "from agents.mcp import MCPServerStdio\nMCPServerStdio(params={\n")
    (report,) = scan_paths([path]).files
    assert report.status is FileStatus.ERROR and "not valid Python" in report.errors[0].reason
