"""Package URLs from launcher command lines: the derivation table."""
# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

import pytest

from agbom.scan import package_from_command
from agbom.scan.launchers import normalize_pypi

CASES = [
    # command, args, purl, version
    ("npx", ["-y", "@modelcontextprotocol/server-github@2025.4.8"],
     "pkg:npm/%40modelcontextprotocol/server-github@2025.4.8", "2025.4.8"),
    ("npx", ["@playwright/mcp@latest"], "pkg:npm/%40playwright/mcp", None),
    ("npx", ["-y", "some-server@^1.2.0"], "pkg:npm/some-server", None),
    ("npx", ["--yes", "--package=@scope/tool@0.3.1", "tool-bin"],
     "pkg:npm/%40scope/tool@0.3.1", "0.3.1"),
    ("npx", ["-p", "mcp-remote@0.1.0", "mcp-remote", "https://x"], "pkg:npm/mcp-remote@0.1.0", "0.1.0"),
    ("/usr/local/bin/npx", ["plain-server"], "pkg:npm/plain-server", None),
    ("npx.cmd", ["-y", "win-server@2.0.0"], "pkg:npm/win-server@2.0.0", "2.0.0"),
    ("bunx", ["@scope/bun-server@1.0.0"], "pkg:npm/%40scope/bun-server@1.0.0", "1.0.0"),
    ("pnpm", ["dlx", "pnpm-server@3.1.4"], "pkg:npm/pnpm-server@3.1.4", "3.1.4"),
    ("uvx", ["mcp-server-fetch"], "pkg:pypi/mcp-server-fetch", None),
    ("uvx", ["Mcp_Server.Git==2025.1.14"], "pkg:pypi/mcp-server-git@2025.1.14", "2025.1.14"),
    ("uvx", ["mcp-server-time@1.2.3"], "pkg:pypi/mcp-server-time@1.2.3", "1.2.3"),
    ("uvx", ["mcp-server-time@latest"], "pkg:pypi/mcp-server-time", None),
    ("uvx", ["--from", "awslabs.core-mcp-server>=1.0", "core"], "pkg:pypi/awslabs-core-mcp-server", None),
    ("uvx", ["--python", "3.12", "--from", "pkg[extra]==0.9", "cmd"], "pkg:pypi/pkg@0.9", "0.9"),
    ("uv", ["tool", "run", "mcp-x==1.0"], "pkg:pypi/mcp-x@1.0", "1.0"),
    ("pipx", ["run", "--spec", "My.Package==2.0", "my-cmd"], "pkg:pypi/my-package@2.0", "2.0"),
    ("docker", ["run", "-i", "--rm", "-e", "TOKEN", "mcp/github"], "pkg:docker/mcp/github", None),
    ("docker", ["run", "-i", "--rm", "mcp/github:latest"], "pkg:docker/mcp/github", None),
    ("docker", ["run", "--name", "x", "-v", "/a:/b", "mcp/fetch:1.2"], "pkg:docker/mcp/fetch@1.2", "1.2"),
    ("docker", ["run", "nginx:1.25"], "pkg:docker/nginx@1.25", "1.25"),
    ("docker", ["run", "--env=A=b", "docker.io/mcp/time:0.1"], "pkg:docker/mcp/time@0.1", "0.1"),
    ("docker", ["run", "-i", "ghcr.io/github/github-mcp-server"],
     "pkg:oci/github-mcp-server?repository_url=ghcr.io/github/github-mcp-server", None),
    ("podman", ["run", "quay.io/org/srv:v2"],
     "pkg:oci/srv?repository_url=quay.io/org/srv&tag=v2", "v2"),
    ("docker", ["run", "ghcr.io/o/s@sha256:" + "a" * 64],
     "pkg:oci/s@sha256:" + "a" * 64 + "?repository_url=ghcr.io/o/s", "sha256:" + "a" * 64),
]  # fmt: skip


@pytest.mark.parametrize(("command", "args", "purl", "version"), CASES)
def test_purl_table(command: str, args: list[str], purl: str, version: str | None) -> None:
    package = package_from_command(command, args)
    assert package is not None
    assert package.purl == purl
    assert package.version == version
    assert package.pinned is (version is not None)
    assert "latest" not in package.purl


@pytest.mark.parametrize(
    ("command", "args"),
    [("node", ["server.js"]), ("python", ["-m", "server"]), ("npx", ["./local"]),
     ("docker", ["ps"]), ("uvx", ["https://example.com/pkg.tar.gz"]), ("npx", []), ("", []),
     ("cmd", ["/c", "node", "x.js"]), ("cmd", ["/c"]), ("cmd", ["script.bat"])],
)  # fmt: skip
def test_not_a_package(command: str, args: list[str]) -> None:
    assert package_from_command(command, args) is None


def test_pep503() -> None:
    assert normalize_pypi("Foo__Bar..baz-QUX") == "foo-bar-baz-qux"


def test_two_packages_sharing_a_server_name_stay_two(tmp_path) -> None:
    import json

    from agbom.scan import scan_paths

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@acme/github-mcp@1.0.0"]}}}
        )
    )
    (tmp_path / "b" / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"github": {"command": "npx", "args": ["-y", "@evil/github-mcp@1.0.0"]}}}
        )
    )
    agbom = scan_paths([tmp_path]).agbom
    assert sorted(c.id for c in agbom) == [
        "mcp:npm/@acme/github-mcp@1.0.0",
        "mcp:npm/@evil/github-mcp@1.0.0",
    ]
