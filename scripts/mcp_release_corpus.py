"""Rebuild the corpus of real ``tools/list`` changes between MCP server releases, and classify
each change as agbom does (cosmetic, narrowing, expansion; agbom/scan/expansion.py).

For each package and version below, the release is installed from the npm registry into a
cache folder (``npm install --ignore-scripts``: no install script runs), started over stdio
with an empty home folder, asked ``initialize`` then ``tools/list`` (every page), and stopped.
Consecutive releases of one package are then compared: the pair's tool-set pin (agbom's, as
``agbom lock`` computes it) either stayed the same, or each change between them is classified.

    python scripts/mcp_release_corpus.py [--cache DIR] [--out results.json]

Prints the share of release pairs in each class and writes, per pair, the classified changes
(tool names, kinds of change, classes and reasons: no description text). The tool definitions
themselves stay in the cache folder and are not kept in this repository; the figures published
in docs/scan.md ("Capability expansion") came from the run noted there.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from agbom.scan.expansion import classify_tools, overall
from agbom.scan.lock import canonical_tool, tool_set_pin

# (package, versions in release order, extra arguments the server needs to start)
RELEASES: list[tuple[str, list[str], list[str]]] = [
    ("@modelcontextprotocol/server-filesystem",
     ["0.5.1", "0.6.2", "2025.1.14", "2025.3.28", "2025.7.1", "2025.7.29", "2025.8.18",
      "2025.8.21", "2025.11.25", "2025.12.18", "2026.1.14", "2026.7.4", "2026.7.10",
      "2026.8.31"], ["{root}"]),
    ("@modelcontextprotocol/server-memory",
     ["0.6.2", "2025.4.25", "2025.8.4", "2025.9.25", "2025.11.25", "2026.1.26", "2026.7.4",
      "2026.8.31"], []),
    ("@modelcontextprotocol/server-everything",
     ["0.6.2", "2025.1.14", "2025.3.19", "2025.4.8", "2025.4.28", "2025.5.12", "2025.7.1",
      "2025.7.29", "2025.8.4", "2025.8.18", "2025.9.12", "2025.9.25", "2025.11.25",
      "2025.12.18", "2026.1.14", "2026.1.26", "2026.7.4", "2026.8.18", "2026.8.31"], []),
    ("@modelcontextprotocol/server-github",
     ["0.6.2", "2025.1.23", "2025.3.19", "2025.3.28", "2025.4.8"], []),
    ("@upstash/context7-mcp",
     ["1.0.0", "1.0.7", "1.0.13", "1.0.17", "1.0.21", "1.0.26", "1.0.31", "1.0.33", "2.0.0",
      "2.0.2", "2.1.0", "2.1.4", "2.2.0", "2.2.5", "2.3.0", "3.0.0", "3.2.0", "3.2.5", "4.0.0",
      "4.0.7", "4.1.1"], []),
]  # fmt: skip
STEP_TIMEOUT_S = 30.0


def install(cache: Path, package: str, version: str) -> Path:
    """The installed release's folder (installed once)."""
    folder = cache / f"{package.replace('/', '+')}@{version}"
    marker = folder / ".installed"
    if not marker.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"private": true}\n')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
             f"{package}@{version}"],
            cwd=folder, check=True, timeout=600,
        )  # fmt: skip
        marker.write_text("")
    return folder


def entry_point(folder: Path, package: str) -> Path:
    manifest = json.loads((folder / "node_modules" / package / "package.json").read_text())
    binary = manifest.get("bin")
    if isinstance(binary, dict):
        binary = next(iter(binary.values()))
    if not isinstance(binary, str):
        binary = manifest.get("main") or "index.js"
    return folder / "node_modules" / package / binary


class _Stdio:
    def __init__(self, argv: list[str], cwd: Path, home: Path) -> None:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "NODE_ENV": "production"}
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
        self.buffer = b""
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.send(message)
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self._line(deadline)
            if line is None:
                break
            try:
                reply = json.loads(line)
            except ValueError:
                continue  # a log line on stdout
            if isinstance(reply, dict) and reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result")
        raise TimeoutError(f"{method}: no answer in {STEP_TIMEOUT_S} s")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _line(self, deadline: float) -> bytes | None:
        assert self.proc.stdout is not None
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def tools_of(folder: Path, package: str, extra: list[str]) -> list[dict[str, Any]]:
    """The release's ``tools/list`` (every page), each tool as agbom pins it."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        argv = ["node", str(entry_point(folder, package))]
        argv += [a.replace("{root}", str(root)) for a in extra]
        server = _Stdio(argv, folder, root)
        try:
            server.call(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "agbom-corpus", "version": "1"},
                },
            )
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            tools: list[dict[str, Any]] = []
            cursor = None
            for _ in range(100):
                result = server.call("tools/list", {"cursor": cursor} if cursor else {})
                tools.extend(result.get("tools") or [])
                cursor = result.get("nextCursor")
                if not cursor:
                    break
        finally:
            server.close()
    return [canonical_tool(t, package) for t in tools]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "agbom-mcp-corpus"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    pairs: list[dict[str, Any]] = []
    changes: Counter[str] = Counter()
    for package, versions, extra in RELEASES:
        listed: list[tuple[str, list[dict[str, Any]]]] = []
        for version in versions:
            try:
                folder = install(args.cache, package, version)
                listed_file = folder / "tools.json"  # what the release listed, kept in the cache
                if listed_file.exists():
                    tools = json.loads(listed_file.read_text())
                else:
                    tools = tools_of(folder, package, extra)
                    listed_file.write_text(json.dumps(tools))
            except (OSError, subprocess.SubprocessError, RuntimeError, TimeoutError,
                    ValueError, KeyError) as exc:  # fmt: skip
                print(f"{package}@{version}: not listed ({exc})", file=sys.stderr)
                continue
            listed.append((version, tools))
            print(f"{package}@{version}: {len(tools)} tools", file=sys.stderr)
        for (was, before), (now, after) in zip(listed, listed[1:], strict=False):
            same = tool_set_pin(before)["value"] == tool_set_pin(after)["value"]
            classified = [] if same else classify_tools(before, after)
            cls = "unchanged" if same else overall(classified)
            changes.update(c.cls for c in classified)
            pairs.append({"package": package, "from": was, "to": now, "class": cls,
                          "changes": [c.to_json() for c in classified]})  # fmt: skip
    by_class = Counter(p["class"] for p in pairs)
    total = len(pairs)
    print(f"{total} release pairs of {len(RELEASES)} servers")
    for cls in ("unchanged", "cosmetic", "narrowing", "expansion"):
        share = 100 * by_class[cls] / total if total else 0.0
        print(f"  {cls:10} {by_class[cls]:3}  {share:5.1f}%")
    print(
        f"{sum(changes.values())} changed tools: "
        + ", ".join(f"{cls} {changes[cls]}" for cls in ("cosmetic", "narrowing", "expansion"))
    )
    if args.out is not None:
        args.out.write_text(json.dumps({"pairs": pairs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
