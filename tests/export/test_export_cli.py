"""agbom export / graph / diff through the real entry point (main) and a real subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cyclonedx.schema import OutputFormat, SchemaVersion
from cyclonedx.validation import make_schemabased_validator
from export_samples import SAMPLES, every_type_document

from agbom.cli import main

CODING = SAMPLES / "agboms" / "coding-agent.json"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_json_to_stdout_is_valid(capsys):
    code, out, err = _run(capsys, "export", str(CODING))
    assert (code, err) == (0, "")
    assert json.loads(out)["specVersion"] == "1.6"


def test_export_xml_17_to_file_validates(capsys, tmp_path):
    target = tmp_path / "bom.xml"
    code, out, err = _run(
        capsys,
        "export",
        str(CODING),
        "--format",
        "cyclonedx-xml",
        "--spec-version",
        "1.7",
        "-o",
        str(target),
    )
    assert (code, out) == (0, "")
    assert err == f"agbom: wrote cyclonedx-xml@1.7 (12 components) to {target}\n"
    validator = make_schemabased_validator(OutputFormat.XML, SchemaVersion.V1_7)
    assert validator.validate_str(target.read_text()) is None


def test_export_accepts_a_snapshot_request(capsys, tmp_path):
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "agbom/snapshot",
        "params": {"payload": {"agbom": json.loads(CODING.read_text())}},
    }
    path = tmp_path / "req.json"
    path.write_text(json.dumps(request))
    code, out, _ = _run(capsys, "export", str(path))
    direct = main(["export", str(CODING)])
    direct_out, _ = capsys.readouterr()
    assert code == direct == 0
    assert out == direct_out


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (["export", "samples/invalid/duplicate_id.json"], "duplicate component id 'tool-read'", 1),
        (["export", "samples/invalid/unknown_type.json"], "unknown component type 'plugin'", 1),
        (["export", "/nonexistent.json"], "/nonexistent.json: no such file", 1),
        # bad option values are usage errors (README: exit 2)
        (["export", str(CODING), "--format", "spdx"], "unknown export format 'spdx'", 2),
        (["export", str(CODING), "--spec-version", "1.5"], "no version '1.5'", 2),
    ],
)
def test_bad_input_is_one_line(capsys, args, message, status):
    args = [str(SAMPLES.parent / a) if a.startswith("samples/") else a for a in args]
    code, out, err = _run(capsys, *args)
    assert code == status and out == ""
    assert err.count("\n") == 1 and err.startswith("agbom: error: ") and message in err


def test_graph_formats(capsys):
    code, out, err = _run(capsys, "graph", str(CODING))
    assert (code, err) == (0, "") and out.startswith("flowchart LR\n")
    code, out, _ = _run(capsys, "graph", str(CODING), "--format", "dot")
    assert code == 0 and out.startswith("digraph agbom {")
    code, out, _ = _run(capsys, "graph", str(CODING), "--format", "json")
    assert code == 0 and len(json.loads(out)["nodes"]) == 13
    code, out, err = _run(capsys, "graph", str(CODING), "--format", "svg")
    assert code == 2 and "'svg' is not one of mermaid, dot, json" in err


def test_diff_exit_codes_and_artifact_changes(capsys, tmp_path):
    old = tmp_path / "old.json"
    new = tmp_path / "new.json"
    doc = every_type_document()
    old.write_text(json.dumps(doc))
    assert _run(capsys, "diff", str(old), str(old))[:2] == (0, "no differences\n")

    doc["components"][7]["definition"]["digest"]["value"] = "0" * 64  # skill-1 rug pull
    doc["components"][2]["version"] = "2.0.0"  # mcp-1
    del doc["components"][5]  # mem-1
    new.write_text(json.dumps(doc))
    code, out, err = _run(capsys, "diff", str(old), str(new), "--format", "json")
    assert (code, err) == (1, "")
    result = json.loads(out)
    assert result["removed"] == ["mem-1"]
    flagged = {(a["component_id"], a["field"]) for a in result["artifact_changes"]}
    assert flagged == {("skill-1", "digest"), ("mcp-1", "version")}
    code, table, _ = _run(capsys, "diff", str(old), str(new))
    assert code == 1
    flag_line = r"^digest changed +skill +skill-1 +sha256:9f86.* -> sha256:0{64}$"
    assert re.search(flag_line, table, re.M)
    assert re.search(r"^removed +mem-1$", table, re.M)

    code, out, err = _run(capsys, "diff", str(old), str(tmp_path / "missing.json"))
    assert code == 2 and out == "" and err.startswith("agbom: error: ")


def test_export_subprocess_is_reproducible(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(every_type_document()))
    cmd = [sys.executable, "-m", "agbom", "export", str(path), "-f", "cyclonedx-json@1.7"]
    first = subprocess.run(cmd, capture_output=True, check=True, timeout=60)
    second = subprocess.run(cmd, capture_output=True, check=True, timeout=60)
    assert first.stdout == second.stdout and first.stdout.startswith(b"{")
    bad = subprocess.run(
        [sys.executable, "-m", "agbom", "export", str(Path(tmp_path, "nope.json"))],
        capture_output=True,
        timeout=60,
    )
    assert bad.returncode == 1 and bad.stderr.decode().count("\n") == 1


def test_timestamp_option_fixes_the_creation_time(tmp_path: Path) -> None:
    agbom = Path(sys.executable).parent / "agbom"
    samples = Path(__file__).resolve().parents[2] / "samples"
    outputs = []
    for name in ("a.cdx.json", "b.cdx.json"):
        out = tmp_path / name
        done = subprocess.run(
            [
                str(agbom),
                "scan",
                str(samples),
                "--timestamp",
                "2026-01-02T03:04:05Z",
                "-o",
                str(out),
            ],
            capture_output=True,
            check=False,
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stderr  # 1: findings at or above --fail-on
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["metadata"]["timestamp"] == "2026-01-02T03:04:05Z"
    bad = subprocess.run(
        [
            str(agbom),
            "scan",
            str(samples),
            "--timestamp",
            "yesterday",
            "-o",
            str(tmp_path / "c.cdx.json"),
        ],
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert bad.returncode == 2 and not (tmp_path / "c.cdx.json").exists()
