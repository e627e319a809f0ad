"""Generate a synthetic tree for the scan benchmark: skill folders plus MCP client configs.

    python benchmarks/gen_scan_tree.py OUT_DIR [--skills 2000] [--configs 300]

Each skill folder holds SKILL.md (frontmatter + body), scripts/run.sh (executable) and
references/guide.md. The configs cycle through every client format the scanner reads, with
a mix of pinned and unpinned npm/PyPI/container packages, remote servers and secrets in env.
The output is deterministic for given counts.
"""

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


def _write_config(root: Path, i: int) -> None:
    kind = i % 10
    servers = _servers(i)
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
    args = parser.parse_args()
    generate(args.out, args.skills, args.configs)
    print(f"wrote {args.skills} skills and {args.configs} configs under {args.out}")


if __name__ == "__main__":
    main()
