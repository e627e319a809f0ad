"""Generate a synthetic tree for the scan benchmark: skill folders plus MCP client configs.

    python benchmarks/gen_scan_tree.py OUT_DIR [--skills 2000] [--configs 300] [--benign]

Each skill folder holds SKILL.md (frontmatter + body), scripts/run.sh (executable) and
references/guide.md. The configs cycle through every client format the scanner reads, with
a mix of pinned and unpinned npm/PyPI/container packages, remote servers and secrets in env.

``--benign`` writes a tree with nothing a rule should flag, shaped like real setups: skills
whose ``allowed-tools`` use every form of the grammar (space- or comma-separated strings,
lists, ``Bash(pattern)``), some nested in other skills; servers pinned to exact versions
(pre-releases included), behind ``cmd /c`` on Windows, from a git tag, as pinned
``mcp-remote`` bridges, as local programs, and remote servers over HTTPS. It is the tree the
false-positive rate in docs/rules.md is measured on.

The output is deterministic for given counts.
"""

# ruff: noqa: E501 - fixture data reads better on one line

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

SKILL = """---
name: {name}
description: Synthetic skill number {i} used to benchmark agbom scan; summarizes files.
license: Apache-2.0
allowed-tools: Read Grep Bash(./scripts/run.sh:*)
metadata:
  team: bench-{team}
---

# {name}

{body}
"""


def _servers(i: int) -> dict[str, dict[str, object]]:
    return {
        f"fs-{i}": {
            "command": "npx",
            "args": ["-y", f"@bench/server-fs-{i % 40}@1.{i % 7}.0", "/data"],
            "env": {"API_TOKEN": f"tok-{i:06d}-secret"},
        },
        f"fetch-{i}": {"command": "uvx", "args": [f"mcp_server_fetch_{i % 25}"]},
        f"gh-{i}": {
            "command": "docker",
            "args": ["run", "-i", "--rm", f"ghcr.io/bench/github-mcp:{i % 9}.0.1"],
        },
        f"remote-{i}": {"type": "http", "url": f"https://mcp{i % 50}.example.com/mcp"},
    }


BENIGN_TOOLS = (
    "Read Grep Glob",
    "Read, Grep, Bash(gh issue list:*), Bash(gh issue view:*)",
    "Read Write Edit Bash(python scripts/build.py:*)",
    ["Read", "Bash(git status:*)", "Bash(git diff:*)", "Bash(git log:*)"],
    "Bash(npm run lint:*) Bash(npm test:*) Read Edit",
    "WebFetch(domain:docs.example.com) WebSearch Read",
    ["Read", "Glob", "Grep", "Write"],
    None,  # many skills name no tools at all
    "Read Bash(./scripts/run.sh:*)",
    "Bash(jq:*) Bash(curl -s https://api.example.com/*:*) Read",
    "Read Grep mcp__github__get_issue mcp__github__list_pull_requests",
    "Task Read Grep Glob",
)
BENIGN_SKILL = """---
name: {name}
description: {description}
license: {license}
{tools}metadata:
  owner: team-{team}
  version: "{version}"
---

# {name}

{body}
"""


def _benign_servers(i: int) -> dict[str, dict[str, object]]:
    """Servers as real configs write them, every one pinned or with nothing to pin, and their
    credentials referenced (``${VAR}``, ``${env:VAR}``, ``{env:VAR}``, ``${input:id}``) or left
    as the placeholder the docs show, never written in plaintext (AGB-SEC-001)."""
    pool: list[tuple[str, dict[str, object]]] = [
        ("github", {"command": "npx", "args": ["-y", f"@modelcontextprotocol/server-github@2025.4.{i % 9}"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}" if i % 2 else "${env:GITHUB_TOKEN}"}}),
        ("fs", {"command": "npx", "args": ["-y", f"@modelcontextprotocol/server-filesystem@2025.8.{i % 28}", "/home/u/src"]}),
        ("git", {"command": "uvx", "args": [f"mcp-server-git=={2025}.7.{i % 5}"]}),
        ("markitdown", {"command": "uvx", "args": [f"markitdown-mcp@0.0.1a{i % 5 + 1}"]}),
        ("beta", {"command": "npx", "args": ["-y", f"@acme/mcp-tools@2.{i % 4}.0-beta.{i % 3 + 1}"]}),
        ("win", {"command": "cmd", "args": ["/c", "npx", "-y", f"@upstash/context7-mcp@1.0.{i % 20}"]}),
        ("fromgit", {"command": "uvx", "args": ["--from", f"git+https://github.com/acme/mcp-{i % 7}.git@v1.{i % 4}.0", "acme-mcp"]}),
        ("docker", {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", f"ghcr.io/github/github-mcp-server:v0.{i % 15}.0"],
                    "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_GITHUB_PAT>" if i % 3 else "{env:GH_PAT}"}}),
        ("pinned-image", {"command": "docker", "args": ["run", "-i", "--rm", "mcp/fetch@sha256:" + f"{i:064x}"]}),
        ("linear", {"command": "npx", "args": ["-y", "mcp-remote@0.1.29", f"https://mcp{i % 30}.linear.example.com/sse"]}),
        ("local", {"command": "node", "args": [f"/opt/mcp/server-{i % 11}.js"]}),
        ("python-local", {"command": "python", "args": ["-m", f"team_mcp_{i % 6}"]}),
        ("remote", {"type": "http", "url": f"https://mcp{i % 50}.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${input:remote-token}"}}),
        ("events", {"type": "sse", "url": f"https://events{i % 20}.example.com/sse"}),
    ]  # fmt: skip
    picked = [pool[(i + k * 5) % len(pool)] for k in range(3)]
    return {f"{name}-{i}": entry for name, entry in picked}


def generate_benign(root: Path, skills: int = 200, configs: int = 60) -> None:
    """Write a realistic tree a rule pack should not flag (see the module docstring)."""
    for i in range(skills):
        name = f"skill-{i:05d}"
        if i % 25 == 24:  # a skill folder inside the previous one
            parent = root / "skills" / f"group-{(i - 1) % 10:02d}" / f"skill-{i - 1:05d}"
            folder = parent / "skills" / name
        else:
            folder = root / "skills" / f"group-{i % 10:02d}" / name
        (folder / "scripts").mkdir(parents=True, exist_ok=True)
        tools = BENIGN_TOOLS[i % len(BENIGN_TOOLS)]
        if tools is None:
            tools_line = ""
        elif isinstance(tools, list):
            tools_line = "allowed-tools:\n" + "".join(f'  - "{t}"\n' for t in tools)
        else:
            tools_line = f'allowed-tools: "{tools}"\n'
        (folder / "SKILL.md").write_text(
            BENIGN_SKILL.format(
                name=name,
                description=f"Summarizes and files reports for project {i}. Use when asked "
                "for a status report.",
                license=("Apache-2.0", "MIT", "Proprietary")[i % 3],
                tools=tools_line,
                team=i % 12,
                version=f"1.{i % 10}",
                body="Read the input, run the script, write the summary.",
            ),
            encoding="utf-8",
        )
        script = folder / "scripts" / "run.sh"
        script.write_text(f"#!/bin/sh\necho report {i}\n", encoding="utf-8")
        os.chmod(script, 0o755)
    for i in range(configs):
        _write_config(root, i, _benign_servers(i))


def _write_config(root: Path, i: int, servers: dict[str, dict[str, object]] | None = None) -> None:
    kind = i % 10
    servers = servers if servers is not None else _servers(i)
    base = root / "repos" / f"repo-{i:04d}"
    if kind == 0:
        path, doc = base / "claude_desktop_config.json", {"mcpServers": servers}
    elif kind == 1:
        path, doc = base / ".mcp.json", {"mcpServers": servers}
    elif kind == 2:
        path, doc = base / ".cursor" / "mcp.json", {"mcpServers": servers}
    elif kind == 3:
        path, doc = base / ".vscode" / "mcp.json", {"servers": servers}
    elif kind == 4:
        path, doc = base / "mcp_config.json", {"mcpServers": servers}
    elif kind == 5:
        path, doc = base / ".gemini" / "settings.json", {"mcpServers": servers}
    elif kind == 6:
        path = base / "opencode.json"
        doc = {
            "mcp": {
                name: (
                    {"type": "local", "command": [e["command"], *e["args"]]}  # type: ignore[list-item]
                    if "command" in e
                    else {"type": "remote", "url": e["url"]}
                )
                for name, e in servers.items()
            }
        }
    elif kind == 7:
        path = base / ".codex" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for name, e in servers.items():
            lines.append(f"[mcp_servers.{name}]")
            if "command" in e:
                lines.append(f'command = "{e["command"]}"')
                lines.append("args = " + json.dumps(e["args"]))
            else:
                lines.append(f'url = "{e["url"]}"')
            lines.append("")
        path.write_text("\n".join(lines), encoding="utf-8")
        return
    elif kind == 8:
        path, doc = (
            base / ".claude-plugin" / "plugin.json",
            {"name": f"p{i}", "mcpServers": servers},
        )
    else:
        path, doc = base / "mcp.json", {"mcpServers": servers}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def generate(root: Path, skills: int = 2000, configs: int = 300) -> None:
    """Write ``skills`` skill folders and ``configs`` config files under ``root``."""
    body = "\n".join(f"Step {n}: read the input and summarize section {n}." for n in range(40))
    for i in range(skills):
        name = f"bench-skill-{i:05d}"
        folder = root / "skills" / f"group-{i % 20:02d}" / name
        (folder / "scripts").mkdir(parents=True, exist_ok=True)
        (folder / "references").mkdir(exist_ok=True)
        (folder / "SKILL.md").write_text(
            SKILL.format(name=name, i=i, team=i % 12, body=body), encoding="utf-8"
        )
        script = folder / "scripts" / "run.sh"
        script.write_text(f"#!/bin/sh\necho skill {i}\n", encoding="utf-8")
        os.chmod(script, 0o755)
        (folder / "references" / "guide.md").write_text(
            f"# Guide {i}\n\n" + "Reference text. " * 200, encoding="utf-8"
        )
    for i in range(configs):
        _write_config(root, i)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--configs", type=int, default=300)
    parser.add_argument("--benign", action="store_true", help="a tree no rule should flag")
    args = parser.parse_args()
    (generate_benign if args.benign else generate)(args.out, args.skills, args.configs)
    print(f"wrote {args.skills} skills and {args.configs} configs under {args.out}")


if __name__ == "__main__":
    main()
