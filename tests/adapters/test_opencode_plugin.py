"""agbom's opencode plugin, as installed: type-checked against opencode's published plugin API
(@opencode-ai/plugin, strict TypeScript), compiled, and its ``tool.execute.before`` run in node
against a real ``agbom serve`` through the real ``agbom hook opencode`` command.

``.ci/run`` installs the types and TypeScript into .ci/node/opencode (scripts/
test-prerequisites); under CI=true their absence is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hook_helpers import Server, agbom_command

from agbom.hostconfig import install

pytestmark = pytest.mark.network

ROOT = Path(__file__).resolve().parents[2]
TYPES = ROOT / ".ci" / "node" / "opencode" / "node_modules"

RUNNER = """
import { AgbomPlugin } from "./agbom.js";
const cases = JSON.parse(process.argv[2]);
const client = { config: { get: async () => ({ data: { mcp: { "evil-crm": {}, evil: {} } } }) } };
const hooks = await AgbomPlugin({ client, directory: process.argv[3], worktree: process.argv[3] });
const results = [];
for (const [tool, args] of cases) {
  try {
    const input = { tool, sessionID: "ses_plugin", callID: "call_1" };
    await hooks["tool.execute.before"](input, { args });
    results.push({ tool, ran: true });
  } catch (error) {
    results.push({ tool, ran: false, message: String(error.message) });
  }
}
console.log(JSON.stringify(results));
"""


def _require_types() -> tuple[str, Path]:
    node = shutil.which("node")
    tsc = TYPES / ".bin" / "tsc"
    missing = None
    if node is None:
        missing = "node is not installed"
    elif not (TYPES / "@opencode-ai" / "plugin").is_dir() or not tsc.exists():
        missing = f"opencode's plugin types are not installed in {TYPES} (run .ci/run)"
    if missing is not None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but {missing}")
        pytest.skip(missing)
    assert node is not None
    return node, tsc


def _build(tmp_path: Path, command: list[str]) -> Path:
    node, tsc = _require_types()
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "node_modules").symlink_to(TYPES)
    (folder / "package.json").write_text('{"type": "module"}\n')
    (folder / "agbom.ts").write_text(install.plugin_text(command, 20_000))
    tsconfig = {
        "compilerOptions": {
            "strict": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "types": ["node"],
            "skipLibCheck": False,
            "outDir": ".",
        },
        "files": ["agbom.ts"],
    }
    (folder / "tsconfig.json").write_text(json.dumps(tsconfig))
    built = subprocess.run(
        [node, str(tsc), "-p", str(folder)], capture_output=True, text=True, timeout=300
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (folder / "run.mjs").write_text(RUNNER)
    return folder


def _run(folder: Path, cases: list[list[object]], cwd: Path) -> list[dict[str, object]]:
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "run.mjs", json.dumps(cases), str(cwd)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_the_shipped_plugin_type_checks_and_gates_tools_and_skills(
    server: Server, tmp_path: Path
) -> None:
    command = [*agbom_command(), "hook", "opencode", "--server", server.url, "--timeout", "15"]
    folder = _build(tmp_path, command)
    project = tmp_path / "project"
    skill = project / ".opencode" / "skills" / "pdf-tools"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: PDFs\n---\nUse it.\n")
    results = _run(
        folder,
        [
            ["bash", {"command": "ls"}],
            ["evil-crm_lookup", {"q": 1}],
            ["read", {"filePath": "/etc/hosts"}],
            ["skill", {"name": "pdf-tools"}],
        ],
        project,
    )
    by_tool = {r["tool"]: r for r in results}
    assert by_tool["bash"]["ran"] is False and "no-shell" in str(by_tool["bash"]["message"])
    assert by_tool["evil-crm_lookup"]["ran"] is False
    assert "no-evil-crm" in str(by_tool["evil-crm_lookup"]["message"])
    assert by_tool["read"] == {"tool": "read", "ran": True}
    assert by_tool["skill"]["ran"] is False
    assert "agbom skills approve skill:pdf-tools --digest sha256:" in str(
        by_tool["skill"]["message"]
    )


def test_the_plugin_fails_closed_when_agbom_cannot_run(tmp_path: Path) -> None:
    folder = _build(tmp_path, [str(tmp_path / "no-such-agbom"), "hook", "opencode"])
    results = _run(folder, [["read", {}]], tmp_path)
    assert results[0]["ran"] is False and "cannot run" in str(results[0]["message"])
