"""Shipped rule packs: one copy of each, chosen by name, printed to copy (issue 44 item 4,
issue 40 item 5)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.transports.served import run_cli

REPO = Path(__file__).resolve().parents[2]
PACKS = REPO / "agbom" / "rules" / "packs"
# The layout docs/rules.md ("Shipped packs") states: name -> (kind, file).
SHIPPED = {
    "default": ("rules", PACKS / "default.yaml"),
    "flow-strict": ("rules", PACKS / "flow-strict.yaml"),
    "baseline": ("runtime", PACKS / "runtime" / "baseline.yaml"),
}


def shipped_packs() -> dict[str, tuple[str, Path]]:
    from agbom.rules.loader import shipped_packs as listed

    assert listed() == SHIPPED
    return SHIPPED


def _tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    return [REPO / name.decode() for name in listed if name.endswith((b".yaml", b".yml"))]


def test_every_shipped_pack_is_in_the_repository_once() -> None:
    shipped = {path.resolve(): name for name, (_, path) in SHIPPED.items()}
    assert {"default", "flow-strict", "baseline"} <= set(shipped.values())
    copies = []
    for path in _tracked():
        if path.resolve() in shipped or not path.is_file():
            continue
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and doc.get("pack") in shipped.values():
            copies.append(str(path.relative_to(REPO)))
    assert copies == [], f"copies of shipped packs: {copies}"


def test_every_shipped_pack_has_its_tests_beside_it() -> None:
    for name, (_, path) in shipped_packs().items():
        tests = sorted(path.parent.glob(f"{name}*_test.yaml"))
        assert tests, f"{name}: no {name}_test.yaml beside {path}"
    done = run_cli("rules", "test", str(REPO / "agbom" / "rules" / "packs"), timeout=300)
    assert done.returncode == 0, done.stdout.decode()[-2000:]


def test_rules_show_prints_each_shipped_pack_to_copy() -> None:
    listed = run_cli("rules", "show")
    assert listed.returncode == 0, listed.stderr
    names = [line.split("\t")[0] for line in listed.stdout.decode().splitlines()]
    assert names == list(shipped_packs())
    for name, (_, path) in shipped_packs().items():
        shown = run_cli("rules", "show", name)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.decode() == path.read_text(encoding="utf-8")
    unknown = run_cli("rules", "show", "nope")
    assert unknown.returncode == 2
    assert b"no shipped rule pack 'nope' (shipped: default, flow-strict, baseline)" in (
        unknown.stderr
    )


def test_a_printed_pack_changed_is_loaded_by_its_path(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    text = run_cli("rules", "show", "baseline").stdout.decode()
    mine.write_text(text.replace("pack: baseline", "pack: mine"))
    assert run_cli("rules", "check", str(mine)).returncode == 0


def test_serve_refuses_an_unknown_pack_naming_the_shipped_ones(tmp_path: Path) -> None:
    done = run_cli("serve", "--db", str(tmp_path / "s.db"), "--port", "0", "--pack", "strict")
    assert done.returncode == 2
    assert b"'strict' is neither a shipped pack (none, default, flow-strict, baseline)" in (
        done.stderr
    )
