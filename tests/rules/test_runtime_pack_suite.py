"""The baseline runtime pack's own test suite, run the way its users run it
(``agbom rules test``), and the pack loader's refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agbom.guardian.runtime_pack import RuntimePacks, builtin_packs, compile_pack, load_pack
from agbom.rules.interface import RuleError
from tests.cli_process import run_agbom

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "agbom" / "rules" / "packs" / "runtime"


def test_the_shipped_suite_passes_through_agbom_rules_test(tmp_path: Path) -> None:
    done = run_agbom("rules", "test", str(SUITE), "-v", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    cases = yaml.safe_load((SUITE / "baseline_test.yaml").read_text())["cases"]
    benign = [c for c in cases if c["want"] == "allow"]
    positive = [c for c in cases if c["want"] != "allow"]
    assert len(benign) >= 20 and len(positive) >= 30
    assert f"{len(done.stdout.splitlines()) - 1} passed, 0 failed" in done.stdout


def test_a_wrong_expectation_fails_the_suite(tmp_path: Path) -> None:
    suite = tmp_path / "wrong_test.yaml"
    suite.write_text(
        "runtime_pack: baseline\n"
        "cases:\n"
        "  - {note: benign but claimed denied, command: 'ls -la', want: deny}\n"
        "  - {note: denied but claimed benign, command: 'rm -rf /', want: allow}\n"
    )
    done = run_agbom("rules", "test", str(suite), cwd=tmp_path)
    assert done.returncode == 1
    assert "0 passed, 2 failed" in done.stdout
    assert "AGB-RUN-001 'rm -rf /'" in done.stdout  # a failure says what fired


def test_rules_check_reads_a_runtime_pack_and_says_the_allowlist_is_empty(tmp_path: Path) -> None:
    done = run_agbom("rules", "check", str(builtin_packs()["baseline"]), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "runtime pack baseline, 8 rule(s)" in done.stdout
    assert "egress allowlist: empty" in done.stdout


def _pack(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "pack": "p",
        "kind": "runtime",
        "rules": [{"id": "R-1", "check": "egress", "message": "m"}],
    }
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"kind": "component"}, "kind: runtime"),
        ({"egress_allow": ["https://docs.example.com/"]}, "not a host name"),
        ({"rules": [{"id": "R-1", "check": "telepathy", "message": "m"}]}, "check must be"),
        ({"rules": [{"id": "R-1", "check": "egress"}]}, "message must be"),
        (
            {"rules": [{"id": "R-1", "check": "egress", "message": "m", "action": "ask"}]},
            "deny or warn",
        ),
        ({"extra": 1}, "unknown key"),
        ({"rules": []}, "needs a list of rules"),
    ],
)
def test_a_bad_pack_is_a_located_error(changes: dict[str, object], said: str) -> None:
    with pytest.raises(RuleError) as caught:
        compile_pack(_pack(**changes), "p.yaml")
    assert said in str(caught.value)


def test_an_unknown_pack_name_lists_the_shipped_ones() -> None:
    with pytest.raises(RuleError, match="baseline"):
        load_pack("no-such-pack")


def test_the_operators_hosts_join_the_shipped_empty_allowlist() -> None:
    assert load_pack("baseline").egress_allow == ()
    packs = RuntimePacks([load_pack("baseline", egress_allow=["Docs.Example.COM"])])
    call = {
        "tool": {"name": "Bash"},
        "arguments": {"command": {"value": "curl https://docs.example.com/"}},
    }
    assert packs.evaluate("steps/toolCallRequest", call) is None
    empty = RuntimePacks([load_pack("baseline")]).evaluate("steps/toolCallRequest", call)
    assert empty is not None and "the egress allowlist is empty" in (empty.reasoning or "")


def test_a_command_naming_thousands_of_urls_gets_a_bounded_answer() -> None:
    from agbom.guardian.runtime_pack import MAX_HITS

    command = " ".join(f"https://h{i}.example.net/" for i in range(2_000))
    call = {"tool": {"name": "Bash"}, "arguments": {"command": {"value": command}}}
    verdict = RuntimePacks([load_pack("baseline")]).evaluate("steps/toolCallRequest", call)
    assert verdict is not None and len(verdict.findings) == MAX_HITS
