"""Credential detection for MODIFY redactions and for keeping secrets out of records."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

_SECRET_SHAPES = (
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY(?: BLOCK)?-----",
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{36,}",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
    r"\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
)
_SECRET_PATTERNS = re.compile("|".join(_SECRET_SHAPES))
# The same shapes without word boundaries, searched once over a whole payload's JSON text. A
# credential matched in any string is matched here too: none of the characters these patterns
# match is escaped by JSON, and dropping the boundaries only widens what matches. Most payloads
# hold no credential, and one search is cheaper than walking every string.
_ANYWHERE = re.compile("|".join(shape.replace(r"\b", "") for shape in _SECRET_SHAPES))

MAX_WALK_NODES = 10_000
REDACTED = "[REDACTED]"


def contains_secret(text: str) -> bool:
    """True when ``text`` holds something shaped like a credential."""
    return _SECRET_PATTERNS.search(text) is not None


def may_contain_secret(value: Any) -> bool:
    """False when no string anywhere in ``value`` (plain JSON) holds a credential; True when
    one may (then look closer). One search over the JSON text: a few microseconds where
    :func:`contains_secret` string by string can take hundreds on long text."""
    try:
        return _ANYWHERE.search(orjson.dumps(value).decode()) is not None
    except TypeError:
        return True  # not plain JSON: take it that it may


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def secret_pointers(value: Any, *, skip: frozenset[str] = frozenset()) -> Iterator[str]:
    """JSON pointers (RFC 6901) of every string in ``value`` that holds a credential.

    The walk is iterative and bounded so a hostile payload cannot make it expensive.
    Top-level keys in ``skip`` (for example provenance objects) are not searched.
    """
    try:
        if _ANYWHERE.search(orjson.dumps(value).decode()) is None:
            return
    except TypeError:
        pass  # not plain JSON (a scanned manifest's dates, say): walk it
    stack: list[tuple[str, Any]] = [("", value)]
    seen = 0
    while stack and seen < MAX_WALK_NODES:
        pointer, node = stack.pop()
        seen += 1
        if isinstance(node, str):
            if contains_secret(node):
                yield pointer
        elif isinstance(node, dict):
            for key, child in node.items():
                if pointer == "" and key in skip:
                    continue
                if key == "provenance":
                    continue
                stack.append((f"{pointer}/{_escape(str(key))}", child))
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", child) for i, child in enumerate(node))
