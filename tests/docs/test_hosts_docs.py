"""Each host page's "tested config" is what ``agbom hook install HOST`` writes, byte for byte
in meaning: the block is regenerated with the real command into an empty HOME and compared.
Every host of the install table has a page, linked from the index."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agbom.hostconfig.specs import HOSTS, Places

DOCS = Path(__file__).resolve().parents[2] / "docs" / "hosts"
SERVER = "http://127.0.0.1:8787"
PAGES = ["cursor", "codex", "gemini-cli", "copilot", "windsurf"]


def config_block(host: str) -> tuple[str, str]:
    text = (DOCS / f"{host}.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- tested-config: {host} -->\n```(\w+)\n(.*?)```", text, flags=re.S)
    assert found, f"docs/hosts/{host}.md has no tested-config block"
    return found.group(1), found.group(2)


@pytest.mark.parametrize("host", PAGES)
def test_the_tested_config_is_what_install_writes(host: str, tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "root"
    env = {**os.environ, "HOME": str(home)}
    for var in ("CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        env.pop(var, None)
    done = subprocess.run(
        [sys.executable, "-m", "agbom", "hook", "install", host, "--agbom",
         "/opt/agbom/bin/agbom", "--server", SERVER, "--root", str(root)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    spec = HOSTS[host]
    path = spec.path(spec.default_scope, Places(home=home, project=tmp_path, root=root))
    kind, block = config_block(host)
    load = tomllib.loads if kind == "toml" else json.loads
    assert load(block) == load(path.read_text())


def test_every_host_has_a_page_linked_from_the_index() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for host in HOSTS:
        if host == "claude-code":
            continue
        assert (DOCS / f"{host}.md").is_file()
        assert f"({host}.md)" in index
    adapters = (DOCS.parent / "adapters.md").read_text(encoding="utf-8")
    assert "hosts/README.md" in adapters
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/hosts/README.md" in readme
