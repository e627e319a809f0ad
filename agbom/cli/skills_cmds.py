"""``agbom skills ...``: the people's side of skill approvals.

Every command opens the store named by ``--db``, does one thing and closes it, so a running
``agbom serve`` sees each decision on its next lookup. Data goes to stdout (tables for people,
``--format json`` for scripts); notes go to stderr.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.cli.common import (
    checked_identifier,
    db_option,
    output_option,
    read_bytes,
    store_note,
    write_output,
)
from agbom.cli.decisions import by_option, decision_actor, decision_reason, known_actor
from agbom.cli.skill_diff import diff_cmd
from agbom.display import table, to_terminal, visible
from agbom.errors import InputError
from agbom.store import (
    Digest,
    SkillRecord,
    SkillStatus,
    StoreError,
    format_timestamp,
    open_store,
    parse_timestamp,
    redact_location,
)
from agbom.store._approval_logic import undecided_entries
from agbom.store._shared import check_signer
from agbom.store.interface import utc_now

MAX_APPROVALS_FILE = 8 * 1024 * 1024

skills_app = typer.Typer(
    name="skills",
    help="Approve, deny, revoke and query skills, pinned by (skill_id, digest).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Add the ``skills`` group to ``app``."""
    app.add_typer(skills_app, name="skills")


class OutputFormat(StrEnum):
    """How list-like commands print."""

    TABLE = "table"
    JSON = "json"


class ExportFormat(StrEnum):
    """File formats of ``skills export``."""

    YAML = "yaml"
    JSON = "json"


class DigestFormat(StrEnum):
    """Output of ``skills digest``."""

    TEXT = "text"
    JSON = "json"


# -- option parsing --------------------------------------------------------------------------


def _parse_digest(value: str) -> Digest:
    try:
        return Digest.parse(value)
    except StoreError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--digest'") from None


_DURATION = re.compile(r"(\d{1,6})([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_expiry(text: str, *, now: datetime | None = None) -> datetime:
    """``30d`` / ``12h`` / ``2w`` from now, or an ISO 8601 date or date-time (UTC if naive)."""
    now = now or utc_now()
    match = _DURATION.fullmatch(text.strip())
    if match:
        moment = now + timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    else:
        try:
            moment = parse_timestamp(text, what="expiry")
        except StoreError:
            raise typer.BadParameter(
                f"{text!r} is neither a duration (30d, 12h, 2w) nor an ISO 8601 date-time",
                param_hint="'--expires'",
            ) from None
    if moment <= now:
        raise typer.BadParameter(f"{text!r} is in the past", param_hint="'--expires'")
    return moment


def _digest_option() -> Any:
    return typer.Option(..., "--digest", help="The artifact digest, written ALG:HEX (sha256:...).")


def _reason_option() -> Any:
    return typer.Option(
        None,
        "--reason",
        help="Why (required, as on the review page; kept in the history).",
        show_default=False,
    )


def _format_option() -> Any:
    return typer.Option(OutputFormat.TABLE, "--format", help="table for people, json for scripts.")


# -- output ----------------------------------------------------------------------------------


def _scope_text(record: SkillRecord) -> str:
    parts = []
    if record.scope_agents:
        parts.append("agents=" + ",".join(record.scope_agents))
    if record.scope_tenants:
        parts.append("tenants=" + ",".join(record.scope_tenants))
    return " ".join(parts) or "all"


def _table(headers: list[str], rows: list[list[str]], whole: tuple[int, ...] = ()) -> str:
    """Left-aligned columns separated by two spaces on a pipe, stable for ``grep`` and
    ``awk``; on a terminal, folded to its width (:func:`agbom.display.table`).

    Cells hold what agents registered (skill ids, refs, capabilities, agent ids): each is
    escaped, so an ESC, CR or LF in one shows as ``\\x1b``/``\\r``/``\\n`` instead of
    forging or hiding a row.
    """
    return table(headers, rows, tty=to_terminal(), whole=whole) + "\n"


def _caps_text(record: SkillRecord) -> str:
    return ",".join(record.declared_capabilities) or "-"


def _records_table(records: list[SkillRecord]) -> str:
    rows = [
        [
            r.skill_id,
            str(r.digest),
            str(r.status),
            r.decided_by or "-",
            format_timestamp(r.expires_at) or "-",
            # the conditions the approval holds under: who may use it, and whose signature
            _scope_text(r) + (f" signer={r.required_signer}" if r.required_signer else ""),
            format_timestamp(r.last_seen) or "never",
            # Last, so scripts reading the earlier columns by position keep working.
            _caps_text(r),
        ]
        for r in records
    ]
    headers = [
        "SKILL_ID",
        "DIGEST",
        "STATUS",
        "DECIDED_BY",
        "EXPIRES",
        "SCOPE",
        "LAST_SEEN",
        "CAPABILITIES",
    ]
    return _table(headers, rows, whole=(2,))


def _json(data: Any) -> str:
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def _print_records(records: list[SkillRecord], fmt: OutputFormat, empty: str) -> None:
    if fmt is OutputFormat.JSON:
        write_output(_json([r.to_json() for r in records]), None)
    elif records:
        write_output(_records_table(records), None)
    else:
        typer.echo(empty, err=True)


def _history_table(history: list[dict[str, Any]]) -> str:
    rows = [
        [
            h["at"],
            h["digest"],
            f"{h['from_status'] or '-'} -> {h['to_status']}",
            h["actor"],
            h["source"],
            "?" if h["capabilities"] is None else (",".join(h["capabilities"]) or "-"),
            h.get("required_signer") or "-",
            h["reason"] or "",
        ]
        for h in history
    ]
    headers = ["AT", "DIGEST", "CHANGE", "ACTOR", "SOURCE", "CAPABILITIES", "SIGNER", "REASON"]
    return _table(headers, rows)


# -- commands --------------------------------------------------------------------------------


@skills_app.command("pending")
def pending_cmd(db: str = db_option(), fmt: OutputFormat = _format_option()) -> None:
    """List registered skills waiting for a decision."""
    with open_store(db, create=False) as store:
        records = store.list_skills(SkillStatus.PENDING)
    _print_records(records, fmt, "no skills are pending")


@skills_app.command("list")
def list_cmd(
    db: str = db_option(),
    status: SkillStatus | None = typer.Option(None, "--status", help="Only this status."),
    fmt: OutputFormat = _format_option(),
) -> None:
    """List every known (skill_id, digest) pair and its status."""
    with open_store(db, create=False) as store:
        records = store.list_skills(status)
    _print_records(records, fmt, "no skills match" if status else "the store holds no skills")


@skills_app.command("show")
def show_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    db: str = db_option(),
    fmt: OutputFormat = _format_option(),
) -> None:
    """Every digest of one skill with its status, then its decision history."""
    with open_store(db, create=False) as store:
        records = store.skill_records(skill_id)
        history = store.history(skill_id)
    if not records:
        raise StoreError(f"no skill {skill_id!r} in {redact_location(db)}")
    if fmt is OutputFormat.JSON:
        doc = {"skill_id": skill_id, "records": [r.to_json() for r in records]}
        doc["history"] = history
        write_output(_json(doc), None)
        return
    out = [f"skill {visible(skill_id)}\n"]
    for r in records:
        out.append(f"\n  digest        {r.digest}\n")
        out.append(f"  status        {r.status}\n")
        if r.decided_by:
            by = visible(r.decided_by)
            out.append(f"  decided       {format_timestamp(r.decided_at)} by {by}\n")
        if r.reason:
            out.append(f"  reason        {visible(r.reason)}\n")
        out.append(f"  expires       {format_timestamp(r.expires_at) or 'never'}\n")
        out.append(f"  scope         {visible(_scope_text(r))}\n")
        out.append(f"  ref           {visible(r.ref or '-')}\n")
        caps = visible(", ".join(r.declared_capabilities) or "-")
        out.append(f"  capabilities  {caps}\n")
        if r.required_signer:
            signer = visible(r.required_signer)
            out.append(f"  signer        {signer} (required: the approval holds only while "
                       "their signature verifies)\n")  # fmt: skip
        seen = format_timestamp(r.first_seen)
        if seen:
            last = format_timestamp(r.last_seen)
            agent = visible(r.registered_by_agent or "-")
            out.append(f"  seen          {seen} .. {last} (first by {agent})\n")
        else:
            out.append("  seen          never registered\n")
    out.append("\nhistory\n")
    out.append(_history_table(history))
    write_output("".join(out), None)


def _decide(
    status: SkillStatus,
    skill_id: str,
    digest: str,
    db: str,
    by: str | None,
    reason: str | None,
    expires_at: datetime | None = None,
    agents: list[str] | None = None,
    tenants: list[str] | None = None,
    capabilities: list[str] | None = None,
    required_signer: str | None = None,
) -> None:
    pair = _parse_digest(digest)
    checked_identifier(skill_id, "SKILL_ID")
    reason = decision_reason(reason)
    actor = decision_actor(by)
    note = store_note(db)
    with open_store(db) as store:
        before = store.get_skill(skill_id, pair)
        record = store.set_status(
            skill_id,
            pair,
            status,
            actor=actor,
            reason=reason,
            expires_at=expires_at,
            scope_agents=agents or (),
            scope_tenants=tenants or (),
            source="cli",
            capabilities=capabilities,
            required_signer=required_signer,
        )
        others = [d for d in store.approved_digests(skill_id) if d != pair]
    was = before.status if before else "unknown"
    detail = ""
    if status is SkillStatus.APPROVED:
        expiry = format_timestamp(record.expires_at) or "never"
        caps = ", ".join(record.declared_capabilities) or "none"
        signer = f"; required signer: {record.required_signer}" if record.required_signer else ""
        detail = f" (scope: {_scope_text(record)}; expires: {expiry}; capabilities: {caps}{signer})"
    typer.echo(visible(f"{skill_id} {pair}: {was} -> {record.status}{detail}"), err=True)
    typer.echo(note, err=True)
    if before is None or before.first_seen is None:
        typer.echo("note: this pair has not been registered by any agent yet", err=True)
        if status is SkillStatus.APPROVED and not record.declared_capabilities:
            typer.echo(
                "note: approved with no capabilities; a registration declaring any is denied "
                "(name them with --capability)",
                err=True,
            )
    if status is SkillStatus.APPROVED and others:
        listed = ", ".join(str(d) for d in others)
        typer.echo(visible(f"note: other approved digests of {skill_id}: {listed}"), err=True)


@skills_app.command("approve")
def approve_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    digest: str = _digest_option(),
    db: str = db_option(),
    reason: str | None = _reason_option(),
    expires: str | None = typer.Option(
        None, "--expires", help="Expiry: a duration (30d, 12h, 2w) or an ISO 8601 date-time."
    ),
    agent: list[str] | None = typer.Option(
        None, "--agent", help="Limit to agent ids matching this glob (repeatable)."
    ),
    tenant: list[str] | None = typer.Option(
        None, "--tenant", help="Limit to tenant ids matching this glob (repeatable)."
    ),
    capability: list[str] | None = typer.Option(
        None,
        "--capability",
        help=(
            "A capability the approval covers (repeatable); the list replaces the pair's. "
            "Without it, the capabilities the pair was registered with are approved "
            "(none when it was never registered)."
        ),
    ),
    require_signer: str | None = typer.Option(
        None,
        "--require-signer",
        metavar="IDENTITY",
        help=(
            "The approval holds only while a signature by this signer (a name in the signers "
            "file of 'serve --skill-signers') verifies over the skill; the Guardian denies "
            "otherwise, and when it has no signers file."
        ),
        show_default=False,
    ),
    by: str | None = by_option(),
) -> None:
    """Approve a (skill_id, digest) pair, optionally scoped, with an expiry, or tied to a
    signer."""
    _parse_digest(digest)  # usage errors before any store work
    expires_at = parse_expiry(expires) if expires is not None else None
    if capability is not None and any(not c.strip() for c in capability):
        raise typer.BadParameter("a capability cannot be empty", param_hint="'--capability'")
    _decide(
        SkillStatus.APPROVED,
        skill_id,
        digest,
        db,
        by,
        reason,
        expires_at,
        agent,
        tenant,
        [c.strip() for c in capability] if capability else None,
        _required_signer(require_signer),
    )


def _required_signer(value: str | None) -> str | None:
    """``--require-signer``, checked as the store checks it, as a usage error."""
    try:
        return check_signer(value)
    except StoreError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--require-signer'") from None


@skills_app.command("deny")
def deny_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    digest: str = _digest_option(),
    db: str = db_option(),
    reason: str | None = _reason_option(),
    by: str | None = by_option(),
) -> None:
    """Deny a (skill_id, digest) pair: it cannot register or load."""
    _decide(SkillStatus.DENIED, skill_id, digest, db, by, reason)


@skills_app.command("revoke")
def revoke_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    digest: str = _digest_option(),
    db: str = db_option(),
    reason: str | None = _reason_option(),
    by: str | None = by_option(),
) -> None:
    """Withdraw an approval; the next load of the pair is denied."""
    _decide(SkillStatus.REVOKED, skill_id, digest, db, by, reason)


@skills_app.command("history")
def history_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    digest: str | None = typer.Option(None, "--digest", help="Only this digest (ALG:HEX)."),
    db: str = db_option(),
    fmt: OutputFormat = _format_option(),
) -> None:
    """Every status change of a skill, oldest first."""
    pair = _parse_digest(digest) if digest is not None else None
    with open_store(db, create=False) as store:
        history = store.history(skill_id, pair)
    if fmt is OutputFormat.JSON:
        write_output(_json(history), None)
    elif history:
        write_output(_history_table(history), None)
    else:
        typer.echo(f"no history for {skill_id!r}", err=True)


skills_app.command("diff")(diff_cmd)  # two digests compared, as the review page shows them


@functools.cache
def _no_alias_loader() -> type[Any]:
    # PyYAML is imported only by the commands that read or write YAML (not by agbom --help).
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        """SafeLoader that refuses anchors/aliases: a small file cannot expand into a huge one."""

        def fetch_alias(self) -> None:
            raise yaml.YAMLError("aliases (*name) are not allowed in an approvals file")

        def fetch_anchor(self) -> None:
            raise yaml.YAMLError("anchors (&name) are not allowed in an approvals file")

    return NoAliasLoader


def load_approvals_file(path: Path) -> Any:
    """Parse an approvals file (JSON or YAML), bounded in size and without YAML aliases."""
    import yaml

    data = read_bytes(path, limit=MAX_APPROVALS_FILE)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if path.suffix.lower() == ".json" or data.lstrip()[:1] == b"{":
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{path}: not valid JSON: line {exc.lineno}: {exc.msg}") from None
    try:
        return yaml.load(data.decode("utf-8"), Loader=_no_alias_loader())  # noqa: S506 - SafeLoader
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{path}: not valid YAML{line}: {problem}") from None


@skills_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., help="Approvals file (YAML or JSON, as written by export)."),
    db: str = db_option(),
    by: str | None = by_option(),
) -> None:
    """Apply a reviewed approvals file; all entries or none."""
    doc = load_approvals_file(file)
    entries = doc.get("approvals") if isinstance(doc, dict) else None
    # Entries naming who decided are recorded as the file says; only the others need a name.
    actor = decision_actor(by) if undecided_entries(entries) else known_actor(by)
    note = store_note(db)
    with open_store(db) as store:
        changed = store.import_approvals(doc, actor=actor)
    typer.echo(note, err=True)
    total = len(doc.get("approvals", [])) if isinstance(doc, dict) else 0
    typer.echo(
        visible(f"imported {file}: {changed} of {total} entries changed the store"), err=True
    )


def dump_approvals(doc: dict[str, Any], fmt: ExportFormat) -> str:
    """Serialize an export document deterministically."""
    if fmt is ExportFormat.JSON:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    import yaml

    header = "# agbom skill approvals: review changes to this file like code.\n"
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return header + str(body)


@skills_app.command("export")
def export_cmd(
    db: str = db_option(),
    output: Path | None = output_option(),
    fmt: ExportFormat = typer.Option(ExportFormat.YAML, "--format", help="yaml or json."),
) -> None:
    """Write every decision (approved, denied, revoked) as a file to keep in git."""
    with open_store(db, create=False) as store:
        doc = store.export_approvals()
    write_output(dump_approvals(doc, fmt), output)
    if output is not None:
        typer.echo(visible(f"wrote {len(doc['approvals'])} decisions to {output}"), err=True)


@skills_app.command("digest")
def digest_cmd(
    path: Path = typer.Argument(..., help="A skill folder."),
    fmt: DigestFormat = typer.Option(DigestFormat.TEXT, "--format", help="text or json."),
) -> None:
    """Print the agbom-skill-digest/2 digest of a skill folder (ALG:HEX)."""
    from agbom.inventory.skill_digest import digest_skill_folder

    result = digest_skill_folder(path)
    for skipped in result.skipped:
        typer.echo(f"note: skipped {visible(skipped)}", err=True)
    for name in result.hardlinked:
        typer.echo(
            f"note: {name} has other hard links: its content can change through a name "
            "outside this folder (the digest will then change too)",
            err=True,
        )
    if result.v1_value is not None:
        # Approvals of the /1 value pinned link text, not the code the links reach.
        typer.echo(
            f"note: this folder holds symbolic links, so its digest changed in {result.format}; "
            f"its agbom-skill-digest/1 value was {result.algorithm}:{result.v1_value}. "
            "Revoke approvals of that value (agbom skills revoke SKILL_ID --digest "
            f"{result.algorithm}:{result.v1_value}) and approve the new one after review.",
            err=True,
        )
    if fmt is DigestFormat.JSON:
        write_output(_json(result.to_json()), None)
    else:
        write_output(f"{result.algorithm}:{result.value}\n", None)
