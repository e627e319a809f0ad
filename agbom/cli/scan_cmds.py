"""``agbom scan``: inventory agent manifests on disk, evaluate rules, write a report or a BOM.

Exit codes (documented in docs/scan.md): 0 clean; 1 findings at or above ``--fail-on``;
2 usage error (bad option, a PATH that does not exist, an unusable rule pack); 3 some input
files could not be read (they are listed in the report). When findings reach ``--fail-on``
and files also failed, 1 wins: the policy gate is what CI asks about, and the summary line on
stderr still counts the file errors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import typer

from agbom.cli.bom_signing import bom_signer, sign_format_option, sign_option, signed_bom
from agbom.cli.common import (
    choice,
    exporter_for,
    no_default_rules_option,
    output_format,
    output_option,
    packs_used,
    parse_severity,
    rules_option,
    with_default_rules,
    write_output,
)
from agbom.cli.lock_cmds import attach, read_snapshots, tools_from_option
from agbom.cli.vex_options import (
    apply_statements,
    load_vex,
    openvex_author,
    suppressed_findings,
    vex_option,
)
from agbom.display import table, to_terminal, visible

if TYPE_CHECKING:
    from agbom.advisories import OsvDatabase
    from agbom.inventory import AgBOM, Component
    from agbom.rules import Finding, RuleSet
    from agbom.scan import ScanResult
    from agbom.scan.places import Locator

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_SCAN_ERRORS = 3
PROGRESS_MIN_FILES = 200
MAX_ERRORS_SHOWN = 20


class ScanFormat(StrEnum):
    """Output formats of ``agbom scan``."""

    TABLE = "table"
    JSON = "json"
    CYCLONEDX_JSON = "cyclonedx-json"
    CYCLONEDX_XML = "cyclonedx-xml"
    SPDX_JSON = "spdx-json"
    SARIF = "sarif"
    OPENVEX = "openvex"


def _detail(component: Component) -> str:
    data = component.data
    if component.type.value == "mcp_server":
        where = data.get("endpoint") or data.get("purl") or data.get("command") or ""
        flags = " (disabled)" if data.get("disabled") else ""
        return f"{data.get('transport', '?')} {where}{flags}"
    if component.type.value == "skill":
        digest = component.digest
        scripts = data.get("scripts") or []
        extra = f", {len(scripts)} script(s)" if scripts else ""
        return f"{digest[0]}:{digest[1][:16]}…{extra}" if digest else ""
    if component.type.value == "a2a_peer":
        return f"A2A {data.get('protocol_version', '?')} {data.get('endpoint', '')}"
    for field in ("endpoint", "provider", "capability", "source_type", "scope"):
        value = data.get(field)
        if isinstance(value, str) and value:
            return value
    return ""


def inventory_table(agbom: AgBOM, *, tty: bool = False) -> str:
    """One row per component: type, id, version, what it is, where it was found.

    On a terminal long ids fold onto more lines, the version stays whole and the detail and
    place are cut to one line; on a pipe or in a file nothing is cut and each row is one line
    (see :func:`agbom.display.table`).
    """
    if not len(agbom):
        return "No components found."
    rows = []
    for component in sorted(agbom, key=lambda c: (c.type.value, c.id)):
        found = component.data.get("found_in") or []
        where = str(found[0]["path"]) if found else "-"
        if len(found) > 1:
            where += f" (+{len(found) - 1})"
        rows.append(
            (
                component.type.value,
                component.id,
                component.version or "-",
                " ".join(_detail(component).split()),
                where,
            )
        )
    headers = ("TYPE", "ID", "VERSION", "DETAIL", "FOUND IN")
    return table(headers, rows, tty=tty, whole=(0, 2), cut=(3,), place=4)


def _predicate_keys(predicate: Any, depth: int = 0) -> set[str]:
    keys = {str(getattr(predicate, "key", ""))}
    if depth < 8:
        for part in getattr(predicate, "parts", ()):
            keys |= _predicate_keys(part, depth + 1)
    return keys


def _rule_findings(result: ScanResult, ruleset: RuleSet) -> list[Finding]:
    """Rule findings over the scanned graph plus the scan's own hygiene findings.

    The scanner reports unpinned packages itself (library users get that without rules); when
    the loaded pack has a rule on ``pinned`` that already fired for the component, the
    scanner's copy is dropped so the report does not say the same thing twice.
    """
    from agbom.inventory import ComponentGraph
    from agbom.rules import Action, Finding, Severity
    from agbom.scan.mcp_server import UNPINNED_RULE

    findings = list(ruleset.evaluate(ComponentGraph(result.agbom)))
    pinned_rules = {
        rule.id for rule in ruleset if "pinned" in _predicate_keys(getattr(rule, "predicate", None))
    }
    covered = {c for f in findings if f.rule_id in pinned_rules for c in f.components}
    findings.extend(
        Finding(
            rule_id=hygiene.rule_id,
            severity=Severity.parse(hygiene.severity),
            action=Action.WARN,
            message=hygiene.message,
            components=(hygiene.component_id,),
            explanation=f"Reported by the scanner while reading {hygiene.path}.",
            pack="scan",
            remediation=hygiene.remediation,
        )
        for hygiene in result.findings
        if not (hygiene.rule_id == UNPINNED_RULE and hygiene.component_id in covered)
    )
    return sorted(findings, key=Finding.sort_key)


def _progress_bar() -> tuple[Callable[[int, int, str], None] | None, Callable[[], None]]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    state: dict[str, Any] = {}

    def update(done: int, total: int, path: str) -> None:
        if total < PROGRESS_MIN_FILES:
            return
        if "bar" not in state:
            bar = Progress(
                TextColumn("scanning"),
                BarColumn(),
                MofNCompleteColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            state["bar"] = bar
            state["task"] = bar.add_task("scan", total=total)
        state["bar"].update(state["task"], completed=done)

    def stop() -> None:
        if "bar" in state:
            state["bar"].stop()

    return update, stop


def osv_option() -> Any:
    """``--osv PATH``: an OSV export (``all.zip`` or a folder of OSV JSON), read offline."""
    return typer.Option(
        None,
        "--osv",
        metavar="PATH",
        help="Match packages against this OSV export (an ecosystem all.zip or a folder of "
        "OSV JSON files); nothing is fetched.",
    )


def load_advisories(path: Path | None) -> OsvDatabase | None:
    """The OSV database at ``path``, or ``None``; a bad export is a usage error (exit 2)."""
    if path is None:
        return None
    from agbom.advisories import AdvisoryError, load_osv

    try:
        return load_osv(path)
    except AdvisoryError as exc:
        typer.echo(f"agbom: error: {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def _load_keys(path: Path | None) -> Any:
    """The key set at ``path`` for card signatures, or ``None``; a bad one exits 2."""
    if path is None:
        return None
    from agbom.scan.signatures import KeyFileError, load_keys

    try:
        return load_keys(path)
    except KeyFileError as exc:
        typer.echo(f"agbom: error: {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def _load_signers(path: Path | None, trust_root: Path | None = None) -> Any:
    """The signers file at ``path``, or ``None``; a bad one, or a missing library, exits 2.
    ``trust_root`` (``--sigstore-trust-root``) is loaded now too, so a bad one fails here."""
    if path is None:
        if trust_root is not None:
            typer.echo("agbom: error: --sigstore-trust-root needs --skill-signers", err=True)
            raise typer.Exit(EXIT_USAGE)
        return None
    from agbom.scan.skill_signatures import EXTRA, SignersError, available, load_signers

    try:
        signers = load_signers(path)
    except SignersError as exc:
        typer.echo(f"agbom: error: --skill-signers {visible(exc.diagnostics())}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    if not available():
        typer.echo(f"agbom: error: --skill-signers needs the model-signing library: pip "
                   f"install '{EXTRA}'", err=True)  # fmt: skip
        raise typer.Exit(EXIT_USAGE)
    if trust_root is not None:
        import dataclasses

        from agbom.scan.skill_sigstore import TrustRootError, check_trust_root

        try:
            check_trust_root(trust_root)
        except TrustRootError as exc:
            typer.echo(f"agbom: error: --sigstore-trust-root {visible(exc.diagnostics())}",
                       err=True)  # fmt: skip
            raise typer.Exit(EXIT_USAGE) from None
        signers = dataclasses.replace(signers, sigstore_trust_root=trust_root)
    return signers


def _report_errors(result: ScanResult) -> None:
    errors = result.errors
    for path, error in errors[:MAX_ERRORS_SHOWN]:
        where = path
        if error.line is not None:
            where += f":{error.line}" + (f":{error.column}" if error.column else "")
        typer.echo(f"agbom: {visible(where)}: {visible(error.reason)}", err=True)
    if len(errors) > MAX_ERRORS_SHOWN:
        typer.echo(
            f"agbom: ... and {len(errors) - MAX_ERRORS_SHOWN} more errors (see --format json)",
            err=True,
        )


def scan_cmd(
    paths: list[Path] = typer.Argument(
        None,
        metavar="PATH...",
        help="Files and folders to scan (folders are walked). None: the working folder and the "
        "places in your home folder where agent clients keep configs and skills.",
    ),
    home: Path | None = typer.Option(
        None,
        "--home",
        help="Also read each client's configuration where it keeps it under this home folder.",
    ),
    fmt: ScanFormat | None = typer.Option(
        None,
        "--format",
        "-f",
        help="table (inventory), json (full report), cyclonedx-json (with --osv also a "
        "CycloneDX VEX), cyclonedx-xml, spdx-json (SPDX 3.0.1), sarif, openvex (the --osv "
        "matches as OpenVEX statements). Default: what the -o name says (x.cdx.json, "
        "x.cdx.xml, x.spdx.json, x.sarif, x.json), else table.",
        case_sensitive=False,
        show_default=False,
    ),
    output: Path | None = output_option(),
    rules: Path | None = rules_option(),
    no_default_rules: bool = no_default_rules_option(),
    fail_on: str | None = typer.Option(
        None,
        "--fail-on",
        metavar="SEVERITY",
        help="Exit 1 when a finding is at or above this severity "
        "(info, low, medium, high, critical).",
    ),
    spec_version: str = typer.Option(
        "1.6", "--spec-version", help="CycloneDX spec version for cyclonedx-* (1.6 or 1.7)."
    ),
    sarif_root: Path | None = typer.Option(
        None,
        "--sarif-root",
        help="sarif: the folder result URIs are relative to (%SRCROOT%; default: the current "
        "folder). Files outside it keep absolute file:// URIs.",
    ),
    timestamp: str | None = typer.Option(
        None,
        "--timestamp",
        help="Creation time recorded in the document (ISO 8601 with a timezone). Default: the "
        "AgBOM's generated_at, else $SOURCE_DATE_EPOCH, else now.",
    ),
    osv: Path | None = osv_option(),
    keys: Path | None = typer.Option(
        None,
        "--keys",
        metavar="PATH",
        help="Verify A2A Agent Card signatures against these public keys (a JWKS file or a "
        "folder of JWK/JWKS .json files); each card gets signature valid, invalid, "
        "unknown_key or unsigned.",
    ),
    tools_from: list[Path] | None = tools_from_option(),
    skill_signers: Path | None = typer.Option(
        None,
        "--skill-signers",
        metavar="FILE",
        help="Verify skills' OpenSSF Model Signing signatures (skill.oms.sig) against the "
        "signers in FILE (public keys, certificate roots; docs/skills.md): each skill gets "
        "signed, partial, invalid, unknown_signer, or unsigned when FILE requires signatures. "
        "Needs agbom[signatures].",
    ),
    sigstore_trust_root: Path | None = typer.Option(
        None,
        "--sigstore-trust-root",
        metavar="FILE",
        help="A Sigstore trusted_root.json: verify skills' Sigstore bundles "
        "(skill.sigstore.json, over agbom's digest) offline against it and the sigstore "
        "signers of --skill-signers.",
    ),
    vex: list[Path] | None = vex_option(),
    vex_author: str | None = typer.Option(
        None,
        "--vex-author",
        metavar="NAME",
        help="openvex: who the document says it is from (default: $AGBOM_ACTOR, else git "
        "config user.email, else the login name); cyclonedx-json: its metadata.authors.",
    ),
    sign: Path | None = sign_option(),
    sign_format: str = sign_format_option(),
) -> None:
    """Scan MCP client configs, Agent Skills, A2A cards, server.json and AgBOMs into one
    inventory, with findings and CycloneDX output."""
    from agbom.scan import ScanError, scan_paths

    threshold = parse_severity(fail_on)
    fmt = ScanFormat(
        output_format(
            fmt.value if fmt is not None else None,
            output,
            default=ScanFormat.TABLE.value,
            formats=[f.value for f in ScanFormat],
            json_formats=("json", "cyclonedx-json", "spdx-json", "sarif", "openvex"),
        )
    )
    if fmt is ScanFormat.OPENVEX and osv is None:
        raise typer.BadParameter("openvex states the --osv matches: give --osv",
                                 param_hint="--format")  # fmt: skip
    with_default = with_default_rules(rules, no_default_rules)
    exporter = None
    if fmt in (ScanFormat.CYCLONEDX_JSON, ScanFormat.CYCLONEDX_XML, ScanFormat.SPDX_JSON):
        # a bad version or timestamp fails before scanning
        exporter = exporter_for(fmt.value, spec_version, timestamp=timestamp)
    elif spec_version != "1.6":
        from agbom.export import SPEC_VERSIONS

        choice(spec_version, SPEC_VERSIONS, "--spec-version")

    advisories = load_advisories(osv)  # a bad export fails before scanning
    statements = load_vex(vex, osv)
    key_set = _load_keys(keys)
    signers = _load_signers(skill_signers, sigstore_trust_root)
    signer = bom_signer(sign, fmt.value, sign_format)  # a bad key fails before scanning
    snapshots = read_snapshots(tools_from)
    if not paths and home is None:
        paths, home = _what_the_user_has()
    progress, stop = _progress_bar()
    try:
        result = scan_paths(
            list(paths or []), home=home, progress=progress, background=_warm(exporter)
        )
    except ScanError as exc:
        stop()
        typer.echo(f"agbom: error: {exc.diagnostics()}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    stop()
    if snapshots:
        result.agbom = attach(result.agbom, snapshots)
    if key_set is not None:
        from agbom.scan.signatures import verify_scanned_cards

        verify_scanned_cards(result, key_set)
    if signers is not None:
        from agbom.scan.skill_signatures import verify_scanned_skills

        verify_scanned_skills(result, signers)
    if advisories is not None:
        from agbom.advisories import annotate

        result.agbom = apply_statements(annotate(result.agbom, advisories), statements)
    from agbom.rules import Finding, load_rules

    ruleset = load_rules(rules, with_default=with_default)
    findings = _rule_findings(result, ruleset)
    if statements is not None:  # listed, as suppressed, with who said so
        findings = sorted(
            [*findings, *suppressed_findings(ruleset, result.agbom, findings)],
            key=Finding.sort_key,
        )
    infos = _rule_infos(ruleset)
    locator = _locator(result, infos)

    data: str | bytes
    if fmt is ScanFormat.TABLE:
        tty = to_terminal(output)
        data = inventory_table(result.agbom, tty=tty)
        if findings:
            from agbom.rules.report import render_table

            places = [locator.shown(f) for f in findings]
            data += "\n\n" + render_table(findings, tty=tty, places=places)
    elif fmt is ScanFormat.JSON:
        data = orjson.dumps(
            result.to_json(
                findings=[{**f.to_json(), "locations": locator.to_json(f)} for f in findings]
            ),
            option=orjson.OPT_INDENT_2,
        )
    elif fmt is ScanFormat.SARIF:
        data = _sarif(result, findings, infos, locator, sarif_root, _source_uri(paths, home))
    elif fmt is ScanFormat.OPENVEX:
        data = _openvex(result.agbom, vex_author, timestamp)
    else:
        assert exporter is not None
        if fmt is ScanFormat.CYCLONEDX_JSON and vex_author is not None:
            # A CycloneDX VEX names who states its analyses (docs/vex.md).
            document = exporter.build(result.agbom)
            document["metadata"]["authors"] = [{"name": openvex_author(vex_author)}]
            data = orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
        else:
            data = exporter.export(result.agbom)
        if signer is not None:
            shown = output.name if output is not None and str(output) != "-" else "scan.cdx.json"
            data = signed_bom(data, signer, sign_format, name=shown)
    write_output(data, output)

    _report_errors(result)
    summary = result.summary()
    failing = [
        f
        for f in findings
        if threshold is not None and f.severity >= threshold and f.suppression is None
    ]
    typer.echo(
        f"agbom: scanned {summary['files']} file(s) ({summary['ok']} ok, {summary['error']} "
        f"with errors, {summary['skipped']} skipped): {summary['components']} component(s), "
        f"{sum(1 for f in findings if f.suppression is None)} finding(s)"
        + (
            f" ({suppressed} suppressed by VEX)"
            if (suppressed := sum(1 for f in findings if f.suppression is not None))
            else ""
        )
        + (f", {len(failing)} at or above {threshold}" if threshold else "")
        + f"; rule packs: {packs_used(ruleset)}"
        + (f"; wrote {visible(output)}" if output is not None and str(output) != "-" else ""),
        err=True,
    )
    if failing:
        raise typer.Exit(EXIT_FINDINGS)
    if result.error_files:
        raise typer.Exit(EXIT_SCAN_ERRORS)


def _openvex(agbom: AgBOM, author: str | None, timestamp: str | None) -> bytes:
    """The OSV matches of ``agbom`` as an OpenVEX document (docs/vex.md)."""
    from agbom.advisories.vex import to_openvex
    from agbom.export import ExportError
    from agbom.export.cyclonedx import resolve_timestamp

    try:
        when = resolve_timestamp(agbom, timestamp)
    except ExportError as exc:
        raise typer.BadParameter(visible(exc.diagnostics()), param_hint="--timestamp") from None
    document = to_openvex(agbom, author=openvex_author(author), timestamp=when)
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def _what_the_user_has() -> tuple[list[Path], Path | None]:
    """What a bare ``agbom scan`` reads, said on stderr: the working folder, walked, and the
    places under the user's home folder where agent clients keep their configurations and
    skills (the ``--home`` locations, never the whole home folder). A working folder that is
    the home folder or holds it (``/``) is not walked, so the scan stays bounded."""
    from agbom.scan.scanner import HOME_DIRS, HOME_FILES

    try:
        home: Path | None = Path.home()
    except (KeyError, RuntimeError):  # no $HOME and no password entry
        home = None
    if home is not None and not home.is_dir():
        home = None
    cwd = Path.cwd()
    walk = home is None or not (
        cwd.resolve() == home.resolve() or cwd.resolve() in home.resolve().parents
    )
    said = [f"the working folder {cwd}"] if walk else []
    if home is not None:
        known = len(HOME_FILES) + len(HOME_DIRS)
        said.append(f"the {known} places under {home} where agent clients keep configs and skills")
    skipped = "" if walk else f"; not the working folder {cwd}, which holds the home folder"
    typer.echo(
        visible(
            f"agbom: no PATH given: scanning {' and '.join(said)}{skipped} (name PATHs to scan "
            "others)"
        ),
        err=True,
    )
    return ([Path(".")] if walk else []), home


def _rule_infos(ruleset: RuleSet) -> dict[str, Any]:
    """SARIF rule descriptors' facts for the packs the findings came from and the scanner's
    own rules (its findings about a package point at the argument naming it)."""
    from agbom.rules import Severity
    from agbom.rules.report import RuleInfo, describe_rules, rule_help_uri
    from agbom.scan import SCANNER_REMEDIATIONS, SCANNER_RULES

    infos: dict[str, Any] = dict(describe_rules(ruleset))
    for rule_id, (severity, description) in SCANNER_RULES.items():
        infos.setdefault(
            rule_id,
            RuleInfo(rule_id, Severity.parse(severity), description, "scan", "scanner",
                     rule_help_uri(rule_id, "scan"), ("package", "command"),
                     remediation=SCANNER_REMEDIATIONS.get(rule_id, "")),
        )  # fmt: skip
    return infos


def _locator(result: ScanResult, infos: dict[str, Any]) -> Locator:
    """Where each finding is: the same places for SARIF, the JSON report and the table."""
    from agbom.scan.places import Locator

    return Locator(result, {rule_id: info.fields for rule_id, info in infos.items()})


def _sarif(
    result: ScanResult,
    findings: Sequence[Finding],
    infos: dict[str, Any],
    locator: Locator,
    root: Path | None,
    source_uri: str,
) -> str:
    """SARIF whose results point at the file, line and columns of what each finding is
    about (see :mod:`agbom.scan.places`)."""
    from agbom.rules import render_findings

    return render_findings(
        findings, "sarif", source_uri=source_uri, rules=infos, locate=locator, root=root,
        category="agbom/scan/",
    )  # fmt: skip


def _warm(exporter: Any) -> Callable[[], object] | None:
    """Exporting an empty AgBOM builds the exporter's validator once (its fixed cost); the
    scan runs that while worker processes read files."""
    if exporter is None:
        return None

    def warm() -> object:
        from agbom.inventory import AgBOM

        return exporter.export(AgBOM.from_document({"components": []}))

    return warm


def _source_uri(paths: Sequence[Path] | None, home: Path | None) -> str:
    if paths:
        return str(paths[0])
    return str(home) if home else "."


def register(app: typer.Typer) -> None:
    """Add ``agbom scan`` and ``agbom lock`` (its CI companion) to ``app``."""
    from agbom.cli import lock_cmds

    app.command("scan")(scan_cmd)
    lock_cmds.register(app)
