"""Rule commands: ``agbom check``, ``agbom explain`` and ``agbom rules check|test``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import (
    choice,
    db_option,
    load_agbom_input,
    no_default_rules_option,
    output_format,
    output_option,
    packs_used,
    parse_severity,
    rules_option,
    with_default_rules,
    write_output,
)
from agbom.cli.lock_cmds import (
    attach,
    is_installer_lock,
    read_any_lock_or_exit,
    read_snapshots,
    skills_lock_changes,
    tools_from_option,
)
from agbom.cli.scan_cmds import load_advisories, osv_option
from agbom.cli.vex_options import apply_statements, load_vex, suppressed_findings, vex_option
from agbom.display import to_terminal, visible

MAX_DRIFT_SHOWN = 20

rules_app = typer.Typer(
    name="rules",
    help="Validate rule packs, run their unit tests, and show the shipped ones.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

_AGBOM_ARG = typer.Argument(
    ..., metavar="AGBOM.json", help="AgBOM document, snapshot payload or JSON-RPC request."
)


def check_cmd(
    agbom_file: Path = _AGBOM_ARG,
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="[table|json|sarif]",
        help="Output format. Default: what the -o name says (x.sarif, x.json), else table.",
        show_default=False,
    ),
    output: Path | None = output_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    fail_on: str | None = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when any finding is at or above this severity "
        "(info, low, medium, high, critical).",
    ),
    sarif_root: Path | None = typer.Option(
        None,
        "--sarif-root",
        help="sarif: the folder result URIs are relative to (%SRCROOT%; default: the current "
        "folder). Files outside it keep absolute file:// URIs.",
    ),
    osv: Path | None = osv_option(),
    locked: list[Path] | None = typer.Option(
        None,
        "--locked",
        metavar="LOCK",
        help="Fail (exit 1) on any drift from this lock file (agbom lock): server packages "
        "and versions, tool sets, skill digests; each drift is a finding (AGB-LOCK-001 to "
        "008) in every format. Also a skills installer lock (skills-lock.json, "
        "~/.agents/.skill-lock.json): installed skills against their recorded hash, skills "
        "installed but not locked, locked but not installed. Repeatable.",
    ),
    tools_from: list[Path] | None = tools_from_option(),
    vex: list[Path] | None = vex_option(),
) -> None:
    """Evaluate rules against an AgBOM (for CI); exit 1 with --fail-on when findings reach it,
    or with --locked on any drift."""
    from agbom.cli.lock_cmds import drift_findings, lock_rule_infos
    from agbom.rules import Finding, load_rules
    from agbom.rules.report import FORMATS, describe_rules, render_json, render_table
    from agbom.scan.places import place_json

    fmt = choice(
        output_format(
            fmt, output, default="table", formats=FORMATS, json_formats=("json", "sarif")
        ),
        FORMATS,
        "--format",
    )
    threshold = parse_severity(fail_on)
    with_default = with_default_rules(rules, no_default_rules)
    from agbom.inventory import ComponentGraph

    advisories = load_advisories(osv)
    statements = load_vex(vex, osv)
    locks = [read_any_lock_or_exit(path) for path in locked or ()]
    snapshots = read_snapshots(tools_from)
    ruleset = load_rules(rules, with_default=with_default)
    agbom = attach(load_agbom_input(agbom_file), snapshots)
    if advisories is not None:
        from agbom.advisories import annotate

        agbom = apply_statements(annotate(agbom, advisories), statements)
    changes: list[Any] = []
    for lock in locks:
        if isinstance(lock, dict):
            from agbom.scan.lock import drift, mark_drift

            drifted = drift(lock, agbom)
            agbom = mark_drift(agbom, drifted)  # rules see tools_drift (AGB-LOCK-001)
        else:
            drifted = skills_lock_changes(lock)
        changes.extend(drifted)
    findings = list(ruleset.evaluate(ComponentGraph(agbom)))
    if statements is not None:  # listed, as suppressed, with who said so
        findings.extend(suppressed_findings(ruleset, agbom, findings))
        findings.sort(key=Finding.sort_key)
    infos = dict(describe_rules(ruleset))
    if locked:
        # Drift is findings too (pack lock), in every format, not only lines on stderr.
        names = ", ".join(str(path) for path in locked)
        findings = sorted(
            [*findings, *drift_findings(changes, findings, names)], key=Finding.sort_key
        )
        infos.update(lock_rule_infos())
    locate = _check_places(agbom_file, locked)
    if fmt == "sarif":
        text = _check_sarif(findings, infos, agbom_file, sarif_root, locate)
    elif fmt == "json":
        text = render_json(
            findings,
            source_uri=str(agbom_file),
            locations=lambda f: [place_json(p) for p in _first_places(f, locate)],
        )
    else:
        places = [_shown(_first_places(f, locate)) for f in findings]
        text = render_table(findings, tty=to_terminal(output), places=places)
    write_output(text, output)
    failing = [
        f
        for f in findings
        if threshold is not None and f.severity >= threshold and f.suppression is None
    ]
    typer.echo(
        f"agbom: {len(findings)} finding(s) from {len(ruleset)} rule(s) on {len(agbom)} "
        f"component(s)"
        + (f"; {len(failing)} at or above {threshold}" if threshold else "")
        + f"; rule packs: {packs_used(ruleset)}"
        + (
            f"; {len(changes)} drift(s) from {', '.join(visible(p) for p in locked)}"
            if locked
            else ""
        ),
        err=True,
    )
    for change in changes[:MAX_DRIFT_SHOWN]:
        typer.echo(f"agbom: drift: {visible(change.component)}: {visible(change.detail)}", err=True)
    if len(changes) > MAX_DRIFT_SHOWN:
        typer.echo(f"agbom: ... and {len(changes) - MAX_DRIFT_SHOWN} more (agbom diff)", err=True)
    from agbom.scan.lock import unexpanded

    # Any drift fails, except a tool set that changed without expanding (AGB-LOCK-009).
    if failing or [c for c in changes if not unexpanded(c)]:
        raise typer.Exit(1)


def _check_places(agbom_file: Path, locked: list[Path] | None) -> Any:
    """``locate(finding, component_id)`` for ``check``: a component's entry in the AgBOM file
    (or scan report), and for the lock pack's findings, else the entry in the lock file (a
    server or skill the inventory no longer has)."""
    import os

    from agbom.cli.common import read_bytes
    from agbom.scan import agbom_component_locations

    located: dict[str, Any] = {}
    if str(agbom_file) != "-":
        located = agbom_component_locations(
            read_bytes(agbom_file), str(agbom_file), os.path.realpath(agbom_file)
        )
    in_lock: dict[str, Any] = {}
    for path in reversed(locked or []):  # the first lock naming an entry wins
        from agbom.scan.lock import lock_locations

        in_lock.update(
            lock_locations(read_bytes(path), str(path), os.path.realpath(path),
                           skill_prefix="skill:" if is_installer_lock(path) else "")
        )  # fmt: skip

    def locate(finding: Any, component_id: str) -> Any:
        here = located.get(component_id, ())
        if finding.pack == "lock" and (finding.rule_id == "AGB-LOCK-003" or not here):
            return in_lock.get(component_id, ())
        return here

    return locate


def _first_places(finding: Any, locate: Any) -> Any:
    return locate(finding, finding.components[0]) if finding.components else ()


def _shown(places: Any) -> str:
    """The first place as ``path:line:column`` (the table's ``at:``), or ``""``."""
    if not places:
        return ""
    return f"{places[0].path}:{places[0].span.line}:{places[0].span.column}"


def _check_sarif(
    findings: Any, infos: Any, agbom_file: Path, root: Path | None, locate: Any
) -> str:
    """SARIF whose results point at each component's entry in the AgBOM file (at the lock
    file's entry for what the inventory no longer has)."""
    from agbom.rules import render_findings

    return render_findings(
        findings,
        "sarif",
        source_uri=str(agbom_file),
        rules=infos,
        locate=locate,
        root=root,
        category="agbom/check/",
    )


def _stored_decision(
    db: str, session_id: str, entry_id: str | None
) -> tuple[dict[str, Any], Any | None]:
    """A recorded chain entry and the AgBOM the session had when it was decided."""
    from agbom.errors import InputError
    from agbom.inventory import AgBOM
    from agbom.store import open_store, redact_location

    with open_store(db, create=False) as store:
        entries = store.chain_entries(session_id)
        if not entries:
            raise InputError(f"no audit chain for session {session_id} in {redact_location(db)}")
        index = len(entries) - 1
        if entry_id is not None:
            found = [i for i, e in enumerate(entries) if e.get("entry_id") == entry_id]
            if not found:
                raise InputError(f"session {session_id} has no entry {entry_id}")
            index = found[0]
        hashes = [e["agbom_hash"] for e in entries[: index + 1] if e.get("agbom_hash")]
        document = None
        if hashes:
            version = 1
            while (record := store.agbom_version(session_id, version)) is not None:
                if record.get("agbom_hash") == hashes[-1]:
                    document = record["document"]
                version += 1
        if document is None:
            # Runtimes without an AgBOM: the inventory observed in use, as last stored.
            latest = store.agbom_version(session_id)
            document = latest["document"] if latest else None
    agbom = AgBOM.from_document(document, source="stored AgBOM") if document else None
    return entries[index], agbom


def explain_cmd(
    agbom_file: Path | None = typer.Argument(
        None,
        metavar="AGBOM.json",
        help="AgBOM document or agbom/snapshot request (or use --session).",
    ),
    rule: str | None = typer.Option(None, "--rule", help="Only this rule id."),
    component: str | None = typer.Option(None, "--component", help="Only this component id."),
    session: str | None = typer.Option(
        None, "--session", help="Explain a recorded decision of this session (needs --db)."
    ),
    entry: str | None = typer.Option(
        None, "--entry", help="With --session: the chain entry_id (default: the last one)."
    ),
    db: str = db_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    fmt: str | None = typer.Option(
        None,
        "--format",
        "-f",
        metavar="[text|json]",
        help="Output format. Default: json when the -o name ends in .json, else text.",
        show_default=False,
    ),
    output: Path | None = output_option(),
) -> None:
    """Show which rules matched an AgBOM (or one component, or one recorded decision) and why."""
    from agbom.inventory import ComponentGraph
    from agbom.rules import load_rules

    formats = ("text", "json")
    fmt = choice(
        output_format(fmt, output, default="text", formats=formats, json_formats=("json",)),
        formats,
        "--format",
    )
    if agbom_file is None and session is None:
        raise typer.BadParameter(
            "missing an AGBOM.json file or --session ID: what to explain", param_hint="AGBOM.json"
        )
    if agbom_file is not None and session is not None:
        raise typer.BadParameter("give an AGBOM.json file or --session ID, not both")
    ruleset = load_rules(rules, with_default=with_default_rules(rules, no_default_rules))
    header: list[str] = []
    decision: dict[str, Any] | None = None
    named: set[str] = set()
    if session is not None:
        decision, agbom = _stored_decision(db, session, entry)
        codes = decision.get("reason_codes") or []
        header.append(
            f"entry {decision.get('entry_id')} {decision.get('step_type')}: "
            f"{decision.get('decision')} {' '.join(codes)}".rstrip()
        )
        header.extend(_lineage_lines(decision.get("lineage"), decision.get("provenance")))
        if rule is None:
            # The rules a decision names are the ones worth explaining.
            known = set(ruleset.rule_ids)
            named = {c.removeprefix("warn:") for c in codes} & known
        if agbom is None:
            header.append(
                "no AgBOM is stored for this session up to this entry (a refused snapshot or "
                "change is not stored: run 'agbom explain FILE' on the document the agent sent)"
            )
            graph = None
        else:
            graph = ComponentGraph(agbom)
    else:
        assert agbom_file is not None
        graph = ComponentGraph(load_agbom_input(agbom_file))
    explanations = (
        ruleset.explain(graph, rule_id=rule, component_id=component) if graph is not None else []
    )
    if session is not None and named:
        explanations = [e for e in explanations if e.rule_id in named]
    if fmt == "json":
        document: Any = [e.to_json() for e in explanations]
        if decision is not None:
            document = {"entry": decision, "explanations": document}
        text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
    else:
        lines: list[str] = list(header)
        for e in explanations:
            verdict = "MATCHED" if e.matched else "no match"
            target = f" for {e.component}" if e.component else ""
            lines.append(f"{e.rule_id} ({e.kind}, pack {e.pack}){target}: {verdict}")
            lines.extend(f"  - {reason}" for reason in e.reasons)
            for f in e.findings:
                lines.append(f"  finding [{f.severity}/{f.action}] {f.message}")
                if len(f.path) > 1:
                    lines.append(f"    path: {' -> '.join(f.path)}")
                lines.append(f"    why: {f.explanation}")
                if f.remediation:
                    lines.append(f"    fix: {f.remediation}")
        text = "\n".join(visible(line) for line in lines)  # ids and messages: escaped
    write_output(text, output)


def _lineage_lines(lineage: Any, own: Any) -> list[str]:
    """What a flow decision's entry recorded of the provenance it relied on (issue 33): the
    cited ids, with the facts of those the entry holds (the step's own objects and the
    cited ones of the lineage), in citing order."""
    if not isinstance(lineage, dict):
        return []
    cited = [c for c in lineage.get("cited") or () if isinstance(c, str)]
    lines = [f"lineage cited: {', '.join(cited) or 'nothing'}"]
    facts = {
        f["id"]: f
        for f in [*(own if isinstance(own, list) else ()), *(lineage.get("nodes") or ())]
        if isinstance(f, dict) and isinstance(f.get("id"), str)
    }
    for pid in cited:
        fact = facts.get(pid)
        if fact is None:
            continue
        source = f" ({fact['source_id']})" if fact.get("source_id") else ""
        parents = fact.get("derived_from") or []
        below = f" <- {', '.join(map(str, parents))}" if parents else ""
        where = " ".join(str(fact[k]) for k in ("step_id", "field") if fact.get(k))
        lines.append(
            f"  {fact.get('id')} {fact.get('origin')}{source}{below}"
            + (f" [from {where}]" if where else "")
            + _trust_note(fact)
        )
    overrides = lineage.get("trust_overrides") or []
    if overrides:
        lines.append(f"  trust overrides: {', '.join(map(str, overrides))}")
    return lines


def _trust_note(fact: dict[str, Any]) -> str:
    """`` trust untrusted (claimed trusted; §7.2 says trusted: lineage via p3)``: what agbom
    derived, what the client claimed, and the override of the §7.2 default if there was one
    (entries before issue 42 hold only the claim, as ``trust``)."""
    derived = fact.get("derived_trust")
    claimed = fact.get("claimed_trust", fact.get("trust"))
    parts = [f"claimed {claimed}"] if claimed else []
    override = fact.get("trust_override")
    if isinstance(override, dict):
        via = override.get("via") or override.get("override")
        parts.append(
            f"§7.2 says {override.get('default')}: {override.get('reason')}"
            + (f" via {via}" if via else "")
        )
    if derived is None:
        return f" ({'; '.join(parts)})" if parts else ""
    return f" trust {derived}" + (f" ({'; '.join(parts)})" if parts else "")


@rules_app.command("show")
def rules_show_cmd(
    name: str | None = typer.Argument(
        None, metavar="[NAME]", help="A shipped pack (default, flow-strict, baseline)."
    ),
) -> None:
    """Print a shipped rule pack, to copy and change; without NAME, list the shipped packs.

    A changed copy is used with --rules FILE (component and flow packs) or --pack FILE
    (runtime packs), never by editing the installed package.
    """
    from agbom.rules.loader import shipped_packs

    shipped = shipped_packs()
    if name is None:
        for pack, (kind, _) in shipped.items():
            typer.echo(f"{pack}\t{kind}")
        return
    if name not in shipped:
        known = ", ".join(shipped)
        typer.echo(
            f"agbom: error: no shipped rule pack {visible(name)!r} (shipped: {known})", err=True
        )
        raise typer.Exit(2)
    typer.echo(shipped[name][1].read_text(encoding="utf-8"), nl=False)


@rules_app.command("check")
def rules_check_cmd(
    path: Path = typer.Argument(..., metavar="DIR", help="Rule pack folder or file."),
) -> None:
    """Validate rule packs against the published schema and compile them."""
    from agbom.rules import load_rules

    if _runtime_pack_file(path):
        from agbom.guardian.runtime_pack import load_pack

        pack = load_pack(str(path))
        typer.echo(f"ok: runtime pack {pack.name}, {len(pack.rules)} rule(s)")
        typer.echo(f"  {visible(pack.source)}")
        if not pack.egress_allow:
            typer.echo("  egress allowlist: empty (every network destination is denied)")
        return
    ruleset = load_rules(path)
    typer.echo(f"ok: {len(ruleset.sources)} pack(s), {len(ruleset)} rule(s)")
    for source in ruleset.sources:
        typer.echo(f"  {visible(source)}")
    # A finding should say how to fix it: a rule without a remediation is legal, but flagged.
    for rule in ruleset:
        if not str(getattr(rule, "remediation", "") or "").strip():
            typer.echo(visible(f"warning: rule {rule.id} has no remediation"), err=True)


@rules_app.command("test")
def rules_test_cmd(
    path: Path = typer.Argument(..., metavar="DIR", help="Folder with *_test.yaml files (or one)."),
    rules: Path | None = typer.Option(
        None, "--rules", help="Packs to test (default: the packs next to each test file)."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List passing cases too."),
) -> None:
    """Run rule unit tests: each case's input AgBOM must give exactly the wanted findings
    (runtime pack tests, with a runtime_pack key: each step the wanted verdict and rules)."""
    from agbom.rules.testing import find_test_files, run_tests

    files = find_test_files(path)
    runtime = [f for f in files if _runtime_test_file(f)]
    if not runtime:
        results = run_tests(path, rules)
    else:
        from agbom.guardian.runtime_testing import run_file

        results = []
        for file in files:
            results.extend(run_file(file) if file in runtime else run_tests(file, rules))
    failed = [r for r in results if not r.passed]
    for result in results:
        if result.passed and not verbose:
            continue
        status = "PASS" if result.passed else "FAIL"
        typer.echo(visible(f"{status} {result.file} cases[{result.index}] {result.note}"))
        for problem in result.problems:
            typer.echo(f"    {visible(problem)}")
    typer.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


def _runtime_pack_file(path: Path) -> bool:
    """Whether ``path`` is one runtime pack file (``kind: runtime``), not component packs."""
    if not path.is_file():
        return False
    from agbom.rules.loader import read_yaml

    data, _ = read_yaml(path)
    return isinstance(data, dict) and data.get("kind") == "runtime"


def _runtime_test_file(path: Path) -> bool:
    """Whether a ``*_test.yaml`` tests a runtime pack (it names one in ``runtime_pack``)."""
    from agbom.rules.loader import read_yaml

    data, _ = read_yaml(path)
    return isinstance(data, dict) and "runtime_pack" in data


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("check")(check_cmd)
    app.command("explain")(explain_cmd)
    app.add_typer(rules_app, name="rules")
