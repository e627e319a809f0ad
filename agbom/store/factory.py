"""``open_store``: the one place that turns a store location into a backend.

Entry points (the CLI, the servers, the decision process) call it; every layer below takes
the :class:`~agbom.store.interface.Store` protocol and never names a backend class.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import cast

from agbom.store.interface import Store, StoreError

__all__ = ["POSTGRES_SCHEMES", "open_store", "redact_location"]

POSTGRES_SCHEMES = ("postgresql", "postgres")
MAX_LOCATION = 4096
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^@/?#]*)@")
_QUERY_SECRET = re.compile(r"((?:^|[?&])(?:password|sslpassword)=)[^&#]*", re.IGNORECASE)


def redact_location(location: str) -> str:
    """``location`` fit for a message: a URL's password (after ``user:``, or a ``password=``
    parameter) shown as ``***``."""
    if "://" not in location:
        return location
    location = _QUERY_SECRET.sub(r"\1***", location)
    match = _USERINFO.match(location)
    if match is None or ":" not in match.group(2):
        return location
    user = match.group(2).partition(":")[0]
    return f"{match.group(1)}{user}:***@{location[match.end() :]}"


def open_store(
    location: str | os.PathLike[str], *, create: bool = True, busy_timeout: float | None = None
) -> Store:
    """Open the store at ``location``; create it when missing, unless ``create`` is false.

    - a path, or ``sqlite:///PATH`` (``sqlite:///agbom.db`` is relative,
      ``sqlite:////var/lib/agbom.db`` absolute, as SQLAlchemy spells it): the embedded SQLite
      store;
    - ``postgresql://…`` or ``postgres://…``: the PostgreSQL store (psycopg 3).

    ``busy_timeout`` (SQLite only): how long a write waits for another writer's lock.
    Raises :class:`StoreError` with a one-line reason for anything it cannot open.
    """
    if isinstance(location, os.PathLike):
        return _open_sqlite(Path(location), create=create, busy_timeout=busy_timeout)
    if not isinstance(location, str):
        raise StoreError("store location must be a path or a URL")
    text = location.strip()
    if not text:
        raise StoreError("store location is empty (check --db or $AGBOM_DB)")
    if len(text) > MAX_LOCATION or "\x00" in text:
        raise StoreError("store location is not a usable path or URL")
    scheme = _SCHEME.match(text)
    if scheme is None:
        return _open_sqlite(Path(text), create=create, busy_timeout=busy_timeout)
    name = scheme.group(1).lower()
    if name == "sqlite":
        rest = text[scheme.end() :]
        if not rest.startswith("/") or len(rest) < 2:
            raise StoreError(
                "a SQLite URL is sqlite:///PATH (three slashes; four for an absolute path)"
            )
        return _open_sqlite(Path(rest[1:]), create=create, busy_timeout=busy_timeout)
    if name in POSTGRES_SCHEMES:
        return _open_postgres(text, create=create)
    raise StoreError(
        f"store location {redact_location(text)!r}: unknown scheme {name!r} "
        "(a file path, sqlite:///PATH or postgresql://...)"
    )


def _open_sqlite(path: Path, *, create: bool, busy_timeout: float | None) -> Store:
    from agbom.store.sqlite import SqliteStore

    if busy_timeout is None:
        return SqliteStore.open(path, create=create)
    return SqliteStore.open(path, create=create, busy_timeout=busy_timeout)


def _open_postgres(url: str, *, create: bool) -> Store:
    # Imported only here: a SQLite user never loads psycopg.
    try:
        module = importlib.import_module("agbom.store.postgres")
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.startswith("agbom.store.postgres"):
            raise StoreError(
                "this agbom has no PostgreSQL store backend; use a SQLite file for --db"
            ) from None
        raise StoreError(
            f"the PostgreSQL store needs the Python package {exc.name!r} "
            "(pip install 'agbom[postgres]')"
        ) from None
    store_class = getattr(module, "PostgresStore", None)
    if store_class is None:
        raise StoreError("this agbom's PostgreSQL backend has no PostgresStore")
    return cast(Store, store_class.open(url, create=create))
