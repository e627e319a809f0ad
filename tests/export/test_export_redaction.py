"""`agbom export` hides what `agbom scan` hides: an AgBOM document from elsewhere (a runtime
snapshot, a hand-written file) carrying secrets in its command lines is exported through the
same redaction pass, in a real process, in both CycloneDX encodings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SECRETS = [
    "hunter2",
    "hdrkey-5521",
    "kval-3091",
    "sk-live-4f9Qz81TbXc0LmWv7RkE2uYdPa63Hs",
    "dbpw-6060",
]


@pytest.fixture
def document(tmp_path: Path) -> Path:
    doc = {
        "acs_version": "0.1.0",
        "agent": {"id": "a", "name": "a"},
        "components": [
            {
                "id": "mcp-local",
                "type": "mcp_server",
                "name": "local",
                "version": None,
                "tools": [],
                "transport": "stdio",
                "endpoint": "node --token=hunter2 srv.js",
                "command": "node --api_key:sk-live-4f9Qz81TbXc0LmWv7RkE2uYdPa63Hs srv.js",
                "args": ["--header=X-Api-Key: hdrkey-5521", "-k", "kval-3091",
                         "DATABASE_URL=postgres://u:dbpw-6060@db.example/app"],
            }
        ],
    }  # fmt: skip
    path = tmp_path / "agbom.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("fmt", ["cyclonedx-json", "cyclonedx-xml"])
def test_export_hides_secrets_in_command_lines(document: Path, fmt: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "export", str(document), "--format", fmt],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = proc.stdout + proc.stderr
    for secret in SECRETS:
        assert secret.encode() not in out, f"{secret} leaked in {fmt}"
    for visible in (b"--header=X-Api-Key: &lt;redacted&gt;" if fmt.endswith("xml") else
                    b"--header=X-Api-Key: <redacted>", b"@db.example/app", b"srv.js"):  # fmt: skip
        assert visible in out, visible
