"""``agbom skills diff ID --from DIGEST --to DIGEST``: what changed between two registered
digests of a skill, as the review page shows it (agbom/review/queries.py): the files added,
removed and changed, each changed text file's unified diff, and the declared capabilities and
composition added and removed. The files are the ones each registration carried for review,
read from the store; nothing is fetched, and the output says when a side's files do not hash
to its digest (they are then only the agent's word).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import orjson
import typer

from agbom.cli.common import db_option, write_output
from agbom.display import visible
from agbom.store import Digest, SkillRecord, StoreError, open_store, redact_location


class DiffFormat(StrEnum):
    """Output of ``skills diff``."""

    TEXT = "text"
    JSON = "json"


def _digest(value: str, option: str) -> Digest:
    try:
        return Digest.parse(value)
    except StoreError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{option}'") from None


def _verified(definition: Any, record: SkillRecord) -> bool | None:
    """Whether the files a registration carried hash to its digest (None: no file list)."""
    from agbom.review.definition import verify

    if definition is None:
        return None
    return verify(definition, record.digest.algorithm, record.digest.value).files_match


def _file_diffs(
    changed: list[Any], old: Any, new: Any, old_digest: Digest, new_digest: Digest
) -> list[dict[str, Any]]:
    """Each added, removed or changed file (``changed``: the review page's list), with its
    unified diff when both sides' texts (one side's, for an added or removed file) were
    carried."""
    from agbom.review.evidence import bounded_diff

    before = {f.path: f for f in old.files}
    after = {f.path: f for f in new.files}
    out = []
    for change in changed:
        a, b = before.get(change.path), after.get(change.path)
        a_text = "" if a is None else a.text
        b_text = "" if b is None else b.text
        entry: dict[str, Any] = {"path": change.path, "change": change.change}
        entry["detail"] = change.detail
        if a_text is not None and b_text is not None and a_text != b_text:
            lines, cut = bounded_diff(
                a_text,
                b_text,
                f"{change.path} ({old_digest})" if a is not None else "/dev/null",
                f"{change.path} ({new_digest})" if b is not None else "/dev/null",
            )
            entry["diff"], entry["diff_cut"] = lines, cut
        else:
            entry["diff"], entry["diff_cut"] = None, False
        out.append(entry)
    return out


def skill_diff(db: str, skill_id: str, old_digest: Digest, new_digest: Digest) -> dict[str, Any]:
    """The difference between two registered digests of ``skill_id``, as a JSON document."""
    from agbom.review.queries import changes, definition_of

    with open_store(db, create=False) as store:
        records = {r.digest: r for r in store.skill_records(skill_id)}
        sides = []
        for digest in (old_digest, new_digest):
            record = records.get(digest)
            if record is None:
                raise StoreError(
                    visible(f"no skill {skill_id!r} at {digest} in {redact_location(db)}")
                )
            definition = definition_of(store, record)
            if definition is None:
                raise StoreError(
                    visible(
                        f"{skill_id} {digest} has no stored files: it was "
                        + (
                            "registered without them"
                            if record.first_seen is not None
                            else "decided before any agent registered it"
                        )
                        + " (the files are what an agent's steps/skillRegister carried)"
                    )
                )
            sides.append((record, definition))
        (old_record, old), (new_record, new) = sides
        summary, _ = changes(store, new_record, old_record)
    doc: dict[str, Any] = {"skill_id": skill_id}
    for key, record, definition in (("from", old_record, old), ("to", new_record, new)):
        doc[key] = {
            "digest": str(record.digest),
            "status": str(record.status),
            "files_verified": _verified(definition, record),
        }
    if summary.files is not None:
        doc["files"] = _file_diffs(summary.files, old, new, old_digest, new_digest)
        doc["skill_md_diff"] = None
    else:  # a side carried only SKILL.md's text: its diff, as the page shows it
        doc["files"] = None
        doc["skill_md_diff"] = summary.skill_md_diff
    from agbom.scan.expansion import classify_capabilities, overall

    # Which class the change of declared capabilities is, and why (agbom/scan/expansion.py).
    classified = classify_capabilities(
        list(old_record.declared_capabilities), list(new_record.declared_capabilities)
    )
    doc["capabilities"] = {
        "added": summary.capabilities_added,
        "removed": summary.capabilities_removed,
        "class": overall(classified),
        "classified": [c.to_json() for c in classified],
    }
    doc["composition"] = {
        "added": summary.composition_added,
        "removed": summary.composition_removed,
    }
    return doc


def _verified_note(side: dict[str, Any]) -> str:
    verified = side["files_verified"]
    if verified is None:
        return "no file list carried"
    return "files match the digest" if verified else "files do NOT match the digest"


def render_text(doc: dict[str, Any]) -> str:
    """The diff for a terminal: a summary, then each file's unified diff."""
    old, new = doc["from"], doc["to"]
    out = [
        f"skill {doc['skill_id']}\n",
        f"from {old['digest']} ({old['status']}; {_verified_note(old)})\n",
        f"to   {new['digest']} ({new['status']}; {_verified_note(new)})\n",
    ]
    for kind in ("capabilities", "composition"):
        added, removed = doc[kind]["added"], doc[kind]["removed"]
        if added or removed:
            listed = [f"+{c}" for c in added] + [f"-{c}" for c in removed]
            out.append(f"{kind}: {', '.join(listed)}\n")
    said = doc["capabilities"]
    why = "; ".join(r for c in said["classified"] for r in c["reasons"])
    out.append(f"declared capabilities: {said['class']}"
               + (f" ({why})" if why else " (unchanged)") + "\n")  # fmt: skip
    files = doc["files"]
    if files is None:
        out.append("files: not compared (a side carried no file list); SKILL.md:\n")
        lines = doc["skill_md_diff"] or []
        out.extend(line + "\n" for line in lines)
        if not lines:
            out.append("  (no SKILL.md text on one side, or no change)\n")
        return visible_lines(out)
    if not files:
        out.append("files: no change\n")
        return visible_lines(out)
    out.append(f"files: {len(files)} changed\n")
    out.extend(f"  {f['change']:<8} {f['path']}  ({f['detail']})\n" for f in files)
    for f in files:
        if f["diff"]:
            out.append("\n")
            out.extend(line + "\n" for line in f["diff"])
            if f["diff_cut"]:
                out.append(f"... (the diff of {f['path']} is cut here)\n")
        elif f["change"] != "changed" or "content" in f["detail"]:
            out.append(f"\n{f['path']}: no text carried to compare\n")
    return visible_lines(out)


def visible_lines(lines: list[str]) -> str:
    """The lines with control characters as escapes, tabs kept (what an agent sent cannot
    forge or hide lines), each line's own newline kept."""
    return "".join("\t".join(map(visible, line[:-1].split("\t"))) + "\n" for line in lines)


def diff_cmd(
    skill_id: str = typer.Argument(..., help="The skill id."),
    old: str = typer.Option(
        ..., "--from", metavar="DIGEST", help="The digest to compare from (ALG:HEX)."
    ),
    new: str = typer.Option(..., "--to", metavar="DIGEST", help="The digest to compare to."),
    db: str = db_option(),
    fmt: DiffFormat = typer.Option(DiffFormat.TEXT, "--format", help="text or json."),
) -> None:
    """Show what changed between two registered digests of a skill: files, diffs,
    capabilities and composition, as the review page shows them."""
    old_digest, new_digest = _digest(old, "--from"), _digest(new, "--to")
    doc = skill_diff(db, skill_id, old_digest, new_digest)
    if fmt is DiffFormat.JSON:
        write_output(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n", None)
    else:
        write_output(render_text(doc), None)
