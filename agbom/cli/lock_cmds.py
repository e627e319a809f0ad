"""``agbom lock``: pin server packages, tool sets and skill digests for CI; the drift report
used by ``agbom check --locked`` and ``agbom diff LOCK NEW``.

Exit codes: ``lock`` 0 written, 2 usage error (a bad PATH or ``--tools-from`` file);
``diff LOCK NEW`` 0 no drift, 1 drift, 2 trouble (as diff(1)).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import output_option, write_output
from agbom.display import table, to_terminal, visible

EXIT_USAGE = 2
DEFAULT_LOCK = Path("agbom.lock.json")


def tools_from_option() -> Any:
    """``--tools-from FILE`` (repeatable): offline ``tools/list`` snapshots."""
    return typer.Option(
        None,
        "--tools-from",
        metavar="FILE",
        help='An offline tools/list snapshot (a JSON-RPC response, its result, or {"server": '
        'ID, "tools": [...]}); the server is the file\'s "server", else the file name. '
        "Repeatable.",
    )


def read_snapshots(paths: Sequence[Path] | None) -> list[Any]:
    """Every snapshot, or exit 2 with one line naming the bad file."""
    from agbom.scan.lock import LockError, read_snapshot

    try:
        return [read_snapshot(path) for path in paths or ()]
    except LockError as exc:
        _usage(exc.diagnostics())
        raise  # pragma: no cover - _usage exits


def attach(agbom: Any, snapshots: Sequence[Any]) -> Any:
    """The AgBOM with the snapshots' tools on their servers, or exit 2."""
    from agbom.scan.lock import LockError, attach_snapshots

    try:
        return attach_snapshots(agbom, snapshots)
    except LockError as exc:
        _usage(exc.diagnostics())
        raise  # pragma: no cover - _usage exits


def read_lock_or_exit(path: Path) -> dict[str, Any]:
    from agbom.scan.lock import LockError, read_lock

    try:
        return read_lock(path)
    except LockError as exc:
        _usage(exc.diagnostics())
        raise  # pragma: no cover - _usage exits


def is_installer_lock(path: Path) -> bool:
    """Whether ``path`` is a lock file of the ``skills`` installer (by its name, else by a
    first look at its content: ``version`` and ``skills`` without ``lock_version``)."""
    from agbom.scan.lock import is_lock_file
    from agbom.scan.skills_lock import is_skills_lock

    if is_skills_lock(path):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b'"skills"' in head and b'"version"' in head and not is_lock_file(path)


def read_any_lock_or_exit(path: Path) -> Any:
    """An agbom lock (a dict) or a skills installer lock (:class:`SkillsLock`), or exit 2."""
    if not is_installer_lock(path):
        return read_lock_or_exit(path)
    from agbom.scan.skills_lock import SkillsLockError, read_skills_lock

    try:
        return read_skills_lock(path)
    except SkillsLockError as exc:
        _usage(f"--locked {exc.diagnostics()}")
        raise  # pragma: no cover - _usage exits


def skills_lock_changes(lock: Any) -> list[Any]:
    """The drift of the installed skills from a skills installer lock, as :class:`Change`
    objects (``check --locked`` reports them as the lock pack's findings)."""
    from agbom.scan.lock import Change

    out = []
    for check in _verify(lock):
        cid = f"skill:{check.name}"
        if check.status == "mismatch":
            detail = (f"skill {check.name} at {check.folder}: {check.algorithm} "
                      f"{str(check.locked)[:12]} in the lock, {str(check.computed)[:12]} "
                      "installed")  # fmt: skip
            out.append(Change("skills-lock-mismatch", cid, detail))
        elif check.status == "unlocked":
            out.append(Change("skills-lock-unlocked", cid, f"skill {check.name}: {check.reason}"))
        elif check.status == "unverifiable":
            detail = f"skill {check.name} at {check.folder}: cannot be verified ({check.reason})"
            out.append(Change("skills-lock-unverifiable", cid, detail))
        elif check.status == "missing":
            out.append(Change("skill-removed", cid, f"skill {check.name} of the lock is not "
                              f"installed under {lock.root}"))  # fmt: skip
    return out


def _verify(lock: Any) -> list[Any]:
    from agbom.scan.skills_lock import verify_lock

    return verify_lock(lock)


def _usage(message: str) -> None:
    typer.echo(f"agbom: error: {visible(message)}", err=True)
    raise typer.Exit(EXIT_USAGE)


def drift_table(changes: Sequence[Any], *, tty: bool) -> str:
    if not changes:
        return "no drift\n"
    rows: list[tuple[str, str, str]] = []
    for change in changes:
        rows.append((change.kind, change.component, change.detail))
        # under it, which class each change is and why, then what a changed tool said
        # before and says now
        rows.extend(
            ("", "", f"  {c['tool']} {c['change']}: {c['class']}: {'; '.join(c['reasons'])}")
            for c in change.tools.get("classified", ())
        )
        rows.extend(("", "", f"  {line}") for line in change.tools.get("differences", ()))
    return table(("DRIFT", "COMPONENT", "DETAIL"), rows, tty=tty) + "\n"


def drift_json(changes: Sequence[Any]) -> bytes:
    return orjson.dumps({"drift": [c.to_json() for c in changes]}, option=orjson.OPT_INDENT_2)


def lock_cmd(
    paths: list[Path] = typer.Argument(
        None, metavar="PATH...", help="Files and folders to scan, or AgBOM files."
    ),
    home: Path | None = typer.Option(
        None, "--home", help="Also read each client's configuration under this home folder."
    ),
    tools_from: list[Path] | None = tools_from_option(),
    output: Path | None = output_option(),
) -> None:
    """Write a lock file of MCP server packages (purl, version), tool-set pins and skill
    digests, for `agbom check --locked` and `agbom diff` in CI."""
    from agbom.scan import ScanError, scan_paths
    from agbom.scan.lock import build_lock

    if not paths and home is None:
        raise typer.BadParameter("give at least one PATH or --home", param_hint="PATH")
    snapshots = read_snapshots(tools_from)
    try:
        result = scan_paths(list(paths or []), home=home)
    except ScanError as exc:
        _usage(exc.diagnostics())
    agbom = attach(result.agbom, snapshots)
    lock = build_lock(agbom)
    body = orjson.dumps(lock, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    target = output if output is not None else DEFAULT_LOCK
    write_output(body, target)
    pinned = sum(1 for s in lock["servers"].values() if "tools" in s)
    typer.echo(
        f"agbom: locked {len(lock['servers'])} server(s) ({pinned} with a tool-set pin) and "
        f"{len(lock['skills'])} skill(s)"
        + (f"; wrote {visible(target)}" if str(target) != "-" else ""),
        err=True,
    )
    if result.error_files:
        typer.echo(
            f"agbom: {len(result.error_files)} file(s) had errors; the lock covers what was read",
            err=True,
        )


def lock_diff(lock_file: Path, new: Path, fmt: str, output: Path | None) -> None:
    """``agbom diff LOCK NEW``: the drift of an AgBOM (or a scan report) from a lock."""
    from agbom.cli.common import load_agbom_input
    from agbom.scan.lock import drift

    lock = read_lock_or_exit(lock_file)
    changes = drift(lock, load_agbom_input(new))
    if fmt == "json":
        write_output(drift_json(changes), output)
    else:
        write_output(drift_table(changes, tty=to_terminal(output)), output)
    if changes:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``agbom lock`` to ``app``."""
    app.command("lock")(lock_cmd)


def drift_findings(changes: Sequence[Any], found: Sequence[Any], lock_name: str) -> list[Any]:
    """Each drift of ``agbom check --locked`` as a finding (pack ``lock``, rules
    AGB-LOCK-001 to 009), so that it is in the table, the JSON and the SARIF like any other.
    A drift the rule packs already reported (AGB-LOCK-001 or 009 in ``found``) is not
    repeated."""
    from agbom.rules import Action, Finding, Severity
    from agbom.scan.lock import lock_rule

    reported = {(f.rule_id, c) for f in found for c in f.components}
    out = []
    for change in changes:
        rule = lock_rule(change)
        if (rule.id, change.component) in reported:
            continue
        previous = f" (locked as {change.previous})" if change.previous else ""
        out.append(
            Finding(
                rule_id=rule.id,
                severity=Severity.parse(rule.severity),
                action=Action(rule.action),
                message=f"{change.detail}{previous}",
                components=(change.component,),
                explanation=f"{rule.title} Compared with the lock file {lock_name}.",
                pack="lock",
                remediation=rule.remediation,
            )
        )
    return out


def lock_rule_infos() -> dict[str, Any]:
    """SARIF rule descriptors of the ``lock`` pack's rules."""
    from agbom.rules import Severity
    from agbom.rules.report import RuleInfo, rule_help_uri
    from agbom.scan.lock import LOCK_RULES

    return {
        rule.id: RuleInfo(rule.id, Severity.parse(rule.severity), rule.title, "lock",
                          "lock", rule_help_uri(rule.id, "lock"),
                          remediation=rule.remediation)
        for rule in LOCK_RULES.values()
    }  # fmt: skip
