"""Shared CLI pieces: options, bounded input reading, atomic output writing."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import typer

from agbom.errors import InputError

MAX_INPUT_BYTES = 64 * 1024 * 1024

DEFAULT_DB = os.environ.get("AGBOM_DB", "agbom.db")


def db_option() -> Any:
    return typer.Option(
        DEFAULT_DB,
        "--db",
        envvar="AGBOM_DB",
        help="SQLite store file. Commands that write create it when missing; commands that "
        "only read refuse a missing one.",
        show_default=True,
    )


def rules_option() -> Any:
    return typer.Option(
        None,
        "--rules",
        envvar="AGBOM_RULES",
        help="Folder of YAML rule packs (default: the packaged default pack).",
    )


def output_option() -> Any:
    return typer.Option(None, "-o", "--output", help="Write to FILE instead of stdout.")


def read_bytes(path: Path, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """Read a user-supplied file, refusing what is missing, not a file, or too large."""
    if str(path) == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
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
