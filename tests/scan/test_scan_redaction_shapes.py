"""Every secret shape of issue 13 item 6, end to end: a real config, `agbom scan` in a real
process in each format, and the secret bytes nowhere in what it writes, while the parts that
are not secret (hosts, flag and header names) stay visible."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agbom.cli.app import app

FORMATS = ("table", "json", "cyclonedx-json", "cyclonedx-xml", "sarif")

LONG = "sk-live-4f9Qz81TbXc0LmWv7RkE2uYdPa63Hs"  # token-shaped: caught by shape as well
# Short, shapeless values: only the position can tell they are secrets.
SHORT = {
    "url_password": "hunter2",
    "sh_bearer": "Xy7-shbearer",
    "docker_env": "dockr-8811",
    "header": "hdrkey-5521",
    "short_flag": "kval-3091",
    "colon_flag": "colon-7272",
    "name_colon": "tokspace-66",
    "slash_flag": "winkey-4040",
    "whole_command": "cmdtok-1177",
}

# name -> (server entry, parts that must stay visible in the json report)
SHAPES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "url_password": (
        {
            "command": "pgsrv",
            "args": [f"DATABASE_URL=postgres://dbuser:{SHORT['url_password']}@db.example/app"],
        },
        ["DATABASE_URL=postgres://dbuser:", "@db.example/app"],
    ),
    "url_password_long": (
        {"command": "pgsrv", "args": [f"DATABASE_URL=postgres://dbuser:{LONG}@db2.example/app"]},
        ["@db2.example/app"],
    ),
    "sh_bearer": (
        {
            "command": "sh",
            "args": [
                "-c",
                f"curl -H 'Authorization: Bearer {SHORT['sh_bearer']}' https://api.example/x",
            ],
        },
        ["curl -H", "Authorization: Bearer", "https://api.example/x"],
    ),
    "docker_env": (
        {
            "command": "docker",
            "args": ["run", "-i", f"--env=API_KEY={SHORT['docker_env']}", "mcp/gh:1.0"],
        },
        ["--env=API_KEY=", "mcp/gh:1.0"],
    ),
    "header": (
        {"command": "hsrv", "args": [f"--header=X-Api-Key: {SHORT['header']}"]},
        ["--header=X-Api-Key:"],
    ),
    "short_flag": ({"command": "ksrv", "args": ["-k", SHORT["short_flag"]]}, ["-k"]),
    "colon_flag": (
        {"command": "csrv", "args": [f"--api_key:{SHORT['colon_flag']}"]},
        ["--api_key:"],
    ),
    "name_colon": ({"command": "tsrv", "args": [f"token: {SHORT['name_colon']}"]}, ["token:"]),
    "slash_flag": ({"command": "wsrv", "args": [f"/apikey:{SHORT['slash_flag']}"]}, ["/apikey:"]),
    "whole_command": (
        {"command": f"node --token={SHORT['whole_command']} srv.js"},
        ["node --token=", "srv.js"],
    ),
    "whole_command_long": ({"command": f"node --token={LONG} other.js"}, ["other.js"]),
}
SECRETS = [*SHORT.values(), LONG]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".mcp.json").write_text(
        json.dumps({"mcpServers": {name: entry for name, (entry, _) in SHAPES.items()}})
    )
    return root


# A pack with a finding on every server, so SARIF (findings only) carries every id too.
EVERY_SERVER = """\
pack: every-server
rules:
  - id: T-ALL
    kind: hygiene
    severity: low
    action: warn
    message: "{component.id} {component.name} {component.endpoint}"
    match: {type: mcp_server}
"""


def _scan(tree: Path, fmt: str) -> bytes:
    """`agbom scan` in its own process; stdout and stderr together."""
    env = {**os.environ, "AGBOM_DEBUG": "0"}
    rules = tree.parent / "rules"
    rules.mkdir(exist_ok=True)
    (rules / "every.yaml").write_text(EVERY_SERVER, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", "scan", str(tree), "--format", fmt, "--rules", str(rules)],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    return proc.stdout + proc.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_secret_shape_reaches_any_format(tree: Path, fmt: str) -> None:
    out = _scan(tree, fmt)
    assert out.count(b"mcp:cmd/") >= len(SHAPES) - 1, out[:2000]  # docker is a package
    for secret in SECRETS:
        assert secret.encode() not in out, f"{secret!r} leaked in {fmt}"


def test_the_parts_that_are_not_secret_stay_visible(tree: Path) -> None:
    report = json.loads(_scan_json(tree))
    servers = {c["name"]: c for c in report["agbom"]["components"] if c["type"] == "mcp_server"}
    for name, (_, visible) in SHAPES.items():
        command = servers[name]["command"]
        for part in visible:
            assert part in command, f"{name}: {part!r} missing from {command!r}"
        assert "<redacted>" in command, name
        assert servers[name]["redacted"], name


def _scan_json(tree: Path) -> str:
    text = _scan(tree, "json").decode()
    return text[: text.rindex("}") + 1]


def test_a_whole_command_line_is_redacted_in_the_id_too(tree: Path) -> None:
    report = json.loads(_scan_json(tree))
    whole = next(c for c in report["agbom"]["components"] if c["name"] == "whole_command")
    assert whole["id"].startswith("mcp:cmd/node-")
    assert whole["redacted"] == ["command"]
    # The id hashes the redacted text, so another password gives the same component.
    other = tree.parent / "other"
    other.mkdir()
    (other / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"w": {"command": "node --token=different-pw9 srv.js"}}})
    )
    again = json.loads(_scan_json(other))
    assert again["agbom"]["components"][0]["id"] == whole["id"]


# -- property: any secret, in any of the positions, never reaches an output ------------------

_NAMES = st.sampled_from(
    ["token", "api-key", "api_key", "apiKey", "password", "access_token", "client-secret", "auth"]
)
_HEADER_NAMES = st.sampled_from(["Authorization", "X-Api-Key", "X-Auth-Token", "Cookie"])
_HARMLESS = st.lists(
    st.sampled_from(["--verbose", "/data", "--port", "3000", "mode=fast", "srv.js", "-y"]),
    max_size=3,
)
# Realistic secret bodies: long random strings with a known prefix, and short passwords. A
# letter outside a-f keeps a body from matching inside a hex digest by chance.
_SECRET = st.one_of(
    st.from_regex(r"\Ask-live-[A-Za-z0-9]{24,40}\Z"),
    st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_-]{5,14}\Z"),
).filter(lambda s: any(c in "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ" for c in s))


@st.composite
def _positions(draw: st.DrawFn, secret: str) -> tuple[str, list[str]]:
    """(command, args) with ``secret`` in one of the positions of item 6."""
    name = draw(_NAMES)
    header = draw(_HEADER_NAMES)
    forms: list[list[str]] = [
        [f"--{name}={secret}"],
        [f"--{name}:{secret}"],
        [f"--{name}", secret],
        [f"/{name}:{secret}"],
        [f"{name}: {secret}"],
        [f"{name.upper().replace('-', '_')}={secret}"],
        [f"--header={header}: {secret}"],
        ["-H", f"{header}: Bearer {secret}"],
        ["-k", secret],
        ["-e", f"ANY_NAME={secret}"],
        [f"--env=ANY_NAME={secret}"],
        [f"DATABASE_URL=postgres://u:{secret}@db.example/app"],
        [f"https://u:{secret}@h.example/mcp"],
        [f"https://h.example/mcp?k={secret}"],
        ["Authorization: Bearer " + secret],
    ]
    form = draw(st.sampled_from(forms))
    before, after = draw(_HARMLESS), draw(_HARMLESS)
    wrap = draw(st.sampled_from(["args", "sh -c", "whole command"]))
    if wrap == "sh -c":
        return "sh", ["-c", shlex.join(["curl", *before, *form, *after])]
    if wrap == "whole command":
        return shlex.join(["srv", *before, *form]), after
    return "srv", [*before, *form, *after]


@settings(
    max_examples=int(os.environ.get("AGBOM_REDACTION_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_property_secrets_never_reach_serialized_outputs(
    tmp_path: Path, data: st.DataObject
) -> None:
    secrets = [data.draw(_SECRET) for _ in range(4)]
    entries = {}
    for index, secret in enumerate(secrets):
        command, args = data.draw(_positions(secret))
        entries[f"s{index}"] = {"command": command, "args": args}
    root = tmp_path / "p"
    root.mkdir(exist_ok=True)
    assume(not any(secret in str(root) for secret in secrets))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": entries}))
    rules = tmp_path / "rules"
    rules.mkdir(exist_ok=True)
    (rules / "every.yaml").write_text(EVERY_SERVER, encoding="utf-8")
    runner = CliRunner()
    for fmt in FORMATS:
        result = runner.invoke(app, ["scan", str(root), "--format", fmt, "--rules", str(rules)])
        assert result.exit_code in (0, 1), result.output
        assert "s0" in result.output
        for secret in secrets:
            assert secret not in result.output, (fmt, secret, entries)


def test_hostile_arguments_are_bounded_and_fail_closed(tmp_path: Path) -> None:
    """A long word without separators once made the inline pair search retry every suffix
    (hours for 60 KiB); an argument over the bound is hidden whole. Run in a child with a
    generous limit, so a regression fails instead of hanging the suite."""
    long_word = "x" * 60_000
    over = "a b " * 20_000 + "--token=" + SHORT["header"]
    script = (
        "import json, sys\n"
        "from agbom.scan.redact import redact_args\n"
        "print(json.dumps(redact_args(json.load(sys.stdin))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps([long_word, "a=" * 30_000, over]).encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    out, hits = json.loads(proc.stdout)
    assert out[0] == long_word
    assert out[1].endswith("<redacted>")  # nested past MAX_DEPTH: hidden, never a crash
    assert out[2] == "<redacted>" and hits == [1, 2]
