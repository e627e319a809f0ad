"""Launchers behind ``cmd /c``, pre-release versions, git sources and remote bridges."""
# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agbom.scan import scan_paths
from agbom.scan.launchers import resolve_launch

SHA = "0123456789abcdef0123456789abcdef01234567"

PINNED = [
    # command, args, purl, version
    ("cmd", ["/c", "npx", "-y", "@scope/pkg@1.2.3"], "pkg:npm/%40scope/pkg@1.2.3", "1.2.3"),
    ("cmd.exe", ["/C", "npx -y @scope/pkg@1.2.3"], "pkg:npm/%40scope/pkg@1.2.3", "1.2.3"),
    ("C:\\Windows\\System32\\cmd.exe", ["/d", "/s", "/c", '"C:\\Program Files\\nodejs\\npx.cmd" -y srv@2.0.0'], "pkg:npm/srv@2.0.0", "2.0.0"),
    ("cmd", ["/c", "uvx", "mcp-server-git==2025.7.1"], "pkg:pypi/mcp-server-git@2025.7.1", "2025.7.1"),
    ("uvx", ["markitdown-mcp@0.0.1a4"], "pkg:pypi/markitdown-mcp@0.0.1a4", "0.0.1a4"),
    ("uvx", ["markitdown-mcp==0.0.1rc2"], "pkg:pypi/markitdown-mcp@0.0.1rc2", "0.0.1rc2"),
    ("uvx", ["foo-mcp==1.0.dev3"], "pkg:pypi/foo-mcp@1.0.dev3", "1.0.dev3"),
    ("pipx", ["run", "--spec", "tool[cli]==2.0b1; python_version>'3.9'", "tool"], "pkg:pypi/tool@2.0b1", "2.0b1"),
    ("npx", ["-y", "@scope/pkg@1.2.3-beta.1"], "pkg:npm/%40scope/pkg@1.2.3-beta.1", "1.2.3-beta.1"),
    ("npx", ["-y", "pkg@2.0.0-rc.1+build.5"], "pkg:npm/pkg@2.0.0-rc.1%2Bbuild.5", "2.0.0-rc.1+build.5"),
    ("uvx", ["--from", "git+https://github.com/org/repo.git@v1.2", "repo-mcp"], "pkg:github/org/repo@v1.2", "v1.2"),
    ("uvx", ["--from", f"git+https://github.com/Org/Repo@{SHA}", "repo-mcp"], f"pkg:github/org/repo@{SHA}", SHA),
    ("uvx", ["--from", "repo-mcp @ git+https://gitlab.com/team/repo.git@v3.0.0", "repo-mcp"], "pkg:gitlab/team/repo@v3.0.0", "v3.0.0"),
    ("pipx", ["run", "--spec", "git+https://git.example.com/team/srv.git@v1#egg=srv", "srv"], "pkg:generic/srv@v1?vcs_url=git%2Bhttps://git.example.com/team/srv", "v1"),
    ("npx", ["-y", "github:org/repo#v2.0.0"], "pkg:github/org/repo@v2.0.0", "v2.0.0"),
]  # fmt: skip

UNPINNED = [
    # command, args, purl, requested
    ("uvx", ["--from", "git+https://github.com/org/repo.git", "repo-mcp"], "pkg:github/org/repo", None),
    ("uvx", ["--from", "git+https://github.com/org/repo.git@main", "repo-mcp"], "pkg:github/org/repo", "main"),
    ("uvx", ["markitdown-mcp@latest"], "pkg:pypi/markitdown-mcp", "latest"),
    ("uvx", ["markitdown-mcp==0.0.*"], "pkg:pypi/markitdown-mcp", "==0.0.*"),
    ("npx", ["-y", "pkg@1.2"], "pkg:npm/pkg", "1.2"),  # npm reads 1.2 as the range 1.2.x
    ("cmd", ["/c", "npx", "-y", "@scope/pkg"], "pkg:npm/%40scope/pkg", None),
]  # fmt: skip


@pytest.mark.parametrize(("command", "args", "purl", "version"), PINNED)
def test_pinned_launches(command: str, args: list[str], purl: str, version: str) -> None:
    package = resolve_launch(command, args).package
    assert package is not None
    assert (package.purl, package.version, package.pinned) == (purl, version, True)


@pytest.mark.parametrize(("command", "args", "purl", "requested"), UNPINNED)
def test_unpinned_launches(command: str, args: list[str], purl: str, requested: str | None) -> None:
    package = resolve_launch(command, args).package
    assert package is not None
    assert (package.purl, package.version, package.requested) == (purl, None, requested)


def test_cmd_wrapper_is_named_in_the_launcher() -> None:
    package = resolve_launch("cmd", ["/c", "npx", "-y", "@scope/pkg@1.2.3"]).package
    assert package is not None and package.launcher == "cmd /c npx"


def test_credentials_in_a_git_url_never_reach_the_purl() -> None:
    package = resolve_launch(
        "uvx", ["--from", "git+https://bob:hunter2@git.example.com/t/srv.git@v1", "srv"]
    ).package
    assert package is not None
    assert "hunter2" not in package.purl and "bob" not in package.purl


BRIDGES = [
    # command, args, bridge, url, transport
    ("npx", ["-y", "mcp-remote@0.1.29", "https://mcp.linear.app/sse"], "mcp-remote", "https://mcp.linear.app/sse", None),
    ("npx", ["mcp-remote", "https://mcp.example.com/mcp", "9696", "--transport", "http-only"], "mcp-remote", "https://mcp.example.com/mcp", "streamable-http"),
    ("npx", ["-y", "supergateway@3.4.0", "--sse", "https://gw.example.com/sse"], "supergateway", "https://gw.example.com/sse", "sse"),
    ("npx", ["-y", "supergateway", "--streamableHttp=https://gw.example.com/mcp"], "supergateway", "https://gw.example.com/mcp", "streamable-http"),
    ("uvx", ["mcp-proxy==0.8.2", "--transport", "streamablehttp", "https://h.example.com/mcp"], "mcp-proxy", "https://h.example.com/mcp", "streamable-http"),
    ("mcp-proxy", ["--headers", "X-Team", "a", "https://h.example.com/sse"], "mcp-proxy", "https://h.example.com/sse", "sse"),
    ("cmd", ["/c", "npx", "-y", "mcp-remote@0.1.29", "https://mcp.atlassian.com/v1/sse"], "mcp-remote", "https://mcp.atlassian.com/v1/sse", None),
]  # fmt: skip


@pytest.mark.parametrize(("command", "args", "name", "url", "transport"), BRIDGES)
def test_bridges(command: str, args: list[str], name: str, url: str, transport: str | None) -> None:
    bridge = resolve_launch(command, args).bridge
    assert bridge is not None
    assert (bridge.name, bridge.url, bridge.transport) == (name, url, transport)


@pytest.mark.parametrize(
    ("command", "args"),
    [("npx", ["-y", "supergateway", "--stdio", "uvx mcp-server-git"]),  # serves a local command
     ("npx", ["-y", "mcp-remote"]), ("npx", ["-y", "@scope/pkg@1.0.0", "https://x.example.com"]),
     ("npx", ["--registry", "https://registry.example.com", "-y", "srv@1.0.0"])],
)  # fmt: skip
def test_not_bridges(command: str, args: list[str]) -> None:
    assert resolve_launch(command, args).bridge is None


def _config(path: Path, servers: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def test_two_bridges_in_two_files_stay_two_servers_with_their_endpoints(tmp_path: Path) -> None:
    _config(tmp_path / "a" / "claude_desktop_config.json",
            {"linear": {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", "https://mcp.linear.app/sse"]}})  # fmt: skip
    _config(tmp_path / "b" / ".mcp.json",
            {"atlassian": {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", "https://mcp.atlassian.com/v1/sse"]}})  # fmt: skip
    result = scan_paths([tmp_path / "a", tmp_path / "b"])
    servers = {c.id: c for c in result.agbom if c.type.value == "mcp_server"}
    assert sorted(servers) == [
        "mcp:npm/mcp-remote@0.1.29+https://mcp.atlassian.com/v1/sse",
        "mcp:npm/mcp-remote@0.1.29+https://mcp.linear.app/sse",
    ]
    linear = servers["mcp:npm/mcp-remote@0.1.29+https://mcp.linear.app/sse"].data
    assert linear["endpoint"] == "https://mcp.linear.app/sse"
    assert (linear["bridge"], linear["remote_transport"], linear["transport"]) == (
        "mcp-remote",
        "sse",
        "stdio",
    )
    assert linear["purl"] == "pkg:npm/mcp-remote@0.1.29"
    assert result.findings == []  # both bridges are pinned


def test_a_bridge_url_with_a_secret_is_redacted_in_id_and_endpoint(tmp_path: Path) -> None:
    _config(tmp_path / ".mcp.json",
            {"r": {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", "https://mcp.example.com/sse?token=s3cr3t-value"]}})  # fmt: skip
    (server,) = scan_paths([tmp_path]).agbom
    assert "s3cr3t" not in json.dumps(server.data)
    assert server.id == "mcp:npm/mcp-remote@0.1.29+https://mcp.example.com/sse"


def test_plain_http_behind_a_bridge_is_flagged_by_the_default_pack(tmp_path: Path) -> None:
    from agbom.inventory import ComponentGraph
    from agbom.rules import load_rules

    _config(tmp_path / ".mcp.json",
            {"r": {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", "http://mcp.example.com/sse", "--allow-http"]}})  # fmt: skip
    agbom = scan_paths([tmp_path]).agbom
    found = {f.rule_id for f in load_rules().evaluate(ComponentGraph(agbom))}
    assert "AGB-HYG-002" in found
