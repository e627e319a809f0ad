"""Shared CLI pieces: options, bounded input reading, atomic output writing."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from agbom._store_location import LEGACY, default_store, prepare_folder
from agbom.display import visible
from agbom.errors import AgbomError, InputError

MAX_INPUT_BYTES = 64 * 1024 * 1024

# One default for every command and the hook (docs/store.md): $AGBOM_DB, else the user's data
# folder, never the working folder.
DEFAULT_DB = default_store()


def db_option() -> Any:
    return typer.Option(
        DEFAULT_DB,
        "--db",
        envvar="AGBOM_DB",
        help="The store: a SQLite file (or sqlite:///PATH) or a postgresql:// URL. Default: "
        "$AGBOM_DB, else $XDG_DATA_HOME/agbom/agbom.db (~/.local/share/agbom/agbom.db), the "
        "store 'agbom hook' uses. Commands that write create it when missing and say so; "
        "commands that only read refuse a missing one.",
        show_default=True,
    )


def store_note(db: str) -> str:
    """Before a command writes to ``db``: the line saying which store it is, and that it is
    created when it does not exist yet (the command prints it once it has written), so a
    mistyped or defaulted path is never a silent second store. A ``./agbom.db`` left from the
    old default is named when it is not the store used."""
    from agbom.store import redact_location

    shown = visible(redact_location(db))
    path = None if "://" in db else Path(db)
    if path is not None and not path.exists():
        prepare_folder(db)
        note = f"agbom: created a new store at {shown}"
    else:
        note = f"agbom: store {shown}"
    legacy = Path(LEGACY)
    if db == DEFAULT_DB and legacy.is_file() and legacy.resolve() != Path(db).resolve():
        note += (
            f"\nagbom: note: ./{LEGACY} is not the default store any more; pass --db {LEGACY} "
            "to use it (docs/store.md)"
        )
    return note


def checked_identifier(value: str, param_hint: str) -> str:
    """``value`` when it is an acceptable identifier; a usage error (exit 2) naming the
    invisible or control character otherwise (:mod:`agbom._identifiers`)."""
    from agbom._identifiers import identifier_problem

    problem = identifier_problem(value)
    if problem is not None:
        raise typer.BadParameter(
            f"{visible(value)!s} {problem}; identifiers may not hold control, line-break, "
            "bidi or other invisible characters",
            param_hint=param_hint,
        )
    return value


def rules_option() -> Any:
    return typer.Option(
        None,
        "--rules",
        envvar="AGBOM_RULES",
        metavar="DIR",
        help="Folder (or file) of YAML rule packs, used with the packaged default pack "
        "(--no-default-rules: instead of it).",
    )


def no_default_rules_option() -> Any:
    return typer.Option(
        False,
        "--no-default-rules",
        help="Leave out the packaged default pack: only the --rules packs apply.",
    )


def with_default_rules(rules: Path | None, no_default_rules: bool) -> bool:
    """Whether the default pack joins ``--rules``; ``--no-default-rules`` alone leaves no
    rule at all, which is refused rather than taken as a policy that allows everything."""
    if no_default_rules and rules is None:
        raise typer.BadParameter(
            "needs --rules DIR (no rules at all)", param_hint="--no-default-rules"
        )
    return not no_default_rules


def packs_used(ruleset: Any) -> str:
    """The packs a rule set came from, as summaries name them: ``default, team``."""
    names = dict.fromkeys(str(getattr(rule, "pack", "") or "?") for rule in ruleset)
    return ", ".join(visible(name) for name in names) or "none"


def parse_severity(value: str | None, param_hint: str = "--fail-on") -> Any:
    """``--fail-on``'s severity (a usage error when unknown), or ``None``."""
    if value is None:
        return None
    from agbom.rules import Severity

    try:
        return Severity.parse(value)
    except AgbomError:
        known = ", ".join(s.value for s in Severity)
        raise typer.BadParameter(
            f"{value!r} is not one of {known}", param_hint=param_hint
        ) from None


def choice(value: str, choices: Sequence[str], param_hint: str) -> str:
    """``value`` when it is one of ``choices`` (case-insensitive), else a usage error."""
    folded = value.strip().lower()
    if folded not in choices:
        raise typer.BadParameter(
            f"{value!r} is not one of {', '.join(choices)}", param_hint=param_hint
        )
    return folded


def exporter_for(fmt: str, spec_version: str | None, **options: Any) -> Any:
    """The exporter for ``--format``/``--spec-version``; an unknown one is a usage error."""
    from agbom.export import ExportError, get_exporter

    try:
        return get_exporter(fmt, spec_version, **options)
    except ExportError as exc:
        # the message names the format, version or timestamp at fault
        raise typer.BadParameter(visible(exc.diagnostics())) from None


# What an output file's name says it holds; the longest suffix first.
NAMED_FORMATS: tuple[tuple[str, str], ...] = (
    (".cdx.json", "cyclonedx-json"),
    (".cdx.xml", "cyclonedx-xml"),
    (".spdx.json", "spdx-json"),
    (".sarif.json", "sarif"),
    (".sarif", "sarif"),
    (".dot", "dot"),
    (".gv", "dot"),
    (".mmd", "mermaid"),
    (".json", "json"),
)


def format_named_by(output: Path | None) -> str | None:
    """The format ``output``'s name says (``x.cdx.json``: cyclonedx-json), or ``None``."""
    if output is None or str(output) == "-":
        return None
    name = output.name.lower()
    return next((fmt for suffix, fmt in NAMED_FORMATS if name.endswith(suffix)), None)


def output_format(
    given: str | None,
    output: Path | None,
    *,
    default: str,
    formats: Sequence[str],
    json_formats: Sequence[str] = (),
    plain_json: str = "json",
) -> str:
    """The format to write: ``--format`` when given, else the one ``-o``'s name says, else
    ``default``. A name that says another format than ``--format`` (``-f table -o
    x.cdx.json``), or one the command cannot write, is a usage error: the file would not
    hold what its name says. A plain ``.json`` name goes with any of ``json_formats`` and,
    without ``--format``, means ``plain_json``."""
    named = format_named_by(output)
    if given is None:
        if named is None:
            return default
        chosen = plain_json if named == "json" else named
        if chosen not in formats:
            raise typer.BadParameter(
                f"the name {visible(output)} says {named}, which this command does not write "
                f"({', '.join(formats)}): give --format or another name",
                param_hint="--output",
            )
        return chosen
    base = given.strip().lower().partition("@")[0]
    fits = base in json_formats if named == "json" else base == named
    if named is not None and not fits:
        raise typer.BadParameter(
            f"--format {visible(given)} does not match the output name {visible(output)} "
            f"(which says {named})",
            param_hint="--output",
        )
    return given


def output_option() -> Any:
    return typer.Option(
        None, "-o", "--output", metavar="FILE", help="Write to FILE instead of stdout."
    )


def read_bytes(path: Path, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """Read a user-supplied file, refusing what is missing, not a file, or too large."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
            if path.is_dir():
                raise InputError(f"{path}: is a directory, not a file")
            if not path.is_file():
                raise InputError(f"{path}: no such file")
            if path.stat().st_size > limit:
                raise InputError(f"{path}: larger than the {limit} byte limit")
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputError(f"{path}: larger than the {limit} byte limit")
    return data


def read_json(path: Path, *, limit: int = MAX_INPUT_BYTES) -> Any:
    """Parse a JSON file; a syntax error names the line and column."""
    data = read_bytes(path, limit=limit)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    import orjson  # here, not at import: `agbom --help` reads no JSON

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise InputError(f"{path}: not valid JSON: {where}: {exc.msg}") from exc


def load_agbom_input(path: Path) -> Any:
    """An AgBOM document from a file holding a document, a snapshot payload or a request."""
    from agbom.inventory import AgBOM

    raw = read_json(path)
    if isinstance(raw, dict) and isinstance(raw.get("params"), dict):
        params = raw["params"]
        raw = params.get("payload", params)
    return AgBOM.from_payload(raw, source=str(path))


def write_output(data: str | bytes, output: Path | None) -> None:
    """Write to stdout, or atomically to ``output`` (the file appears only when complete)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if output is None or str(output) == "-":
        sys.stdout.buffer.write(payload)
        if not payload.endswith(b"\n"):
            sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
        return
    target = output.resolve()
    if target.exists() and not target.is_file():
        # A device, pipe or socket (``-o /dev/null``, ``-o /dev/stdout``): write into it.
        # Replacing it atomically would put a regular file in its place (as root, in /dev).
        if target.is_dir():
            raise InputError(f"cannot write {output}: is a directory")
        try:
            with target.open("wb") as handle:
                handle.write(payload if payload.endswith(b"\n") else payload + b"\n")
        except OSError as exc:
            raise InputError(f"cannot write {output}: {exc.strerror or exc}") from exc
        return
    import tempfile  # with random and shutil: only for a file written atomically

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            if not payload.endswith(b"\n"):
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file normal permissions
        os.replace(tmp, target)
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from exc
