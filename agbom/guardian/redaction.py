"""MODIFY redactions that replace only the credential, or a refusal when that is not safe.

A redaction (spec §6.3, ``modifications.redactions``) names a field by JSON pointer and gives
the field's new text. The new text is the field as sent with each credential-shaped span
replaced by :data:`REDACTED`, so ``export K=AKIA…`` still runs as ``export K=[REDACTED]`` and
a three-line tool output keeps its two clean lines.

Some payloads cannot be rewritten that way, and then the step is denied instead of modified
(:attr:`RedactionPlan.refusal` says why):

* a credential in an object key: a pointer addresses a value, never renames its key;
* a credential in the tool's identity (``/tool/...``): rewriting it changes which tool runs;
* a payload too large to search whole (more than :data:`MAX_WALK_NODES` values): a credential
  past the bound would go through unredacted;
* a rewritten field that still holds a credential shape (overlapping or nested shapes).

Short GitHub-style tokens: the shapes of :mod:`agbom.guardian.secrets` want GitHub's real
lengths (``ghp_`` and 36 characters). The reference TypeScript Guardian redacts shorter ones
too: its published cases redact ``ghp_ABCDEF123456`` and ``ghp_abcdefgh1234``, 12 characters
after the prefix, while its rule text is not published with it. agbom does the same for
redaction: ``gh[pousr]_`` followed by at least 12 letters and digits, as a whole word.
docs/decisions.md ("Redaction") records the choice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

# The shapes the Guardian keeps out of its records, as one list: what is redacted is at least
# what is never logged. (Imported, not copied, so the two cannot drift apart.)
from agbom.guardian.secrets import _SECRET_SHAPES, MAX_WALK_NODES, REDACTED

# GitHub tokens shorter than GitHub issues them (see the module docstring).
SHORT_GITHUB_TOKEN = r"\bgh[pousr]_[A-Za-z0-9]{12,}\b"
_SHAPES = (*_SECRET_SHAPES, SHORT_GITHUB_TOKEN)
_SPAN = re.compile("|".join(_SHAPES))
# Without word boundaries, over the payload's JSON text: nothing JSON escapes is in these
# shapes, so every span in any string is found here too (see secrets._ANYWHERE).
_ANYWHERE = re.compile("|".join(shape.replace(r"\b", "") for shape in _SHAPES))
# Top-level fields that name what runs rather than carry content.
_IDENTITY_FIELDS = frozenset({"tool"})
MAX_REDACTIONS = 1_000  # fields rewritten in one payload; past this the step is denied


@dataclass(frozen=True, slots=True)
class RedactionPlan:
    """The rewrites of one payload: ``redactions`` (path and new text, in path order), the
    number of credential spans replaced, or the ``refusal`` that makes the step a denial."""

    redactions: tuple[dict[str, str], ...] = ()
    spans: int = 0
    refusal: str | None = None


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with every credential-shaped span replaced by :data:`REDACTED`, and how many."""
    return _SPAN.subn(REDACTED, text)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _may_hold(value: Any) -> bool:
    try:
        return _ANYWHERE.search(orjson.dumps(value).decode()) is not None
    except TypeError:
        return True  # not plain JSON: look closer


def plan(payload: Any) -> RedactionPlan | None:
    """What redacting ``payload`` takes: ``None`` when nothing in it is credential-shaped."""
    if not _may_hold(payload):
        return None
    rewrites: list[dict[str, str]] = []
    spans = 0
    for pointer, node, is_key in _walk(payload):
        if node is None:
            return RedactionPlan(
                refusal=f"the payload holds more than {MAX_WALK_NODES} values and looks "
                "credential-bearing; it cannot be searched whole, so it cannot be redacted "
                "safely"
            )
        found = _SPAN.search(node)
        if found is None:
            continue
        where = redact_text(pointer)[0] or "/"  # a key on the way may be a credential
        if is_key:
            return RedactionPlan(
                refusal=f"a credential-shaped object key under {where} cannot be rewritten "
                "(a redaction replaces a value, never a key)"
            )
        if pointer.split("/")[1:2] and pointer.split("/")[1] in _IDENTITY_FIELDS:
            return RedactionPlan(
                refusal=f"a credential-shaped value at {where} names the tool; rewriting it "
                "would change what runs"
            )
        new, count = redact_text(node)
        if _SPAN.search(new) is not None:
            return RedactionPlan(
                refusal=f"the value at {where} still holds a credential shape once redacted"
            )
        spans += count
        rewrites.append({"path": pointer, "replacement": new})
        if len(rewrites) > MAX_REDACTIONS:
            return RedactionPlan(
                refusal=f"more than {MAX_REDACTIONS} fields hold credentials; too many to "
                "rewrite safely"
            )
    if not rewrites:
        return None
    rewrites.sort(key=lambda r: r["path"])
    return RedactionPlan(redactions=tuple(rewrites), spans=spans)


def _walk(value: Any) -> Iterator[tuple[str, Any, bool]]:
    """``(pointer, string, is_key)`` for every string value and object key in ``value``; one
    ``(pointer, None, False)`` when the walk stops at :data:`MAX_WALK_NODES` with values left.

    ``provenance`` objects are not searched, as in :func:`agbom.guardian.secrets.
    secret_pointers`: they describe where content came from, are bound to it by hash, and
    are the framework's, not the step's content.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    seen = 0
    while stack:
        if seen >= MAX_WALK_NODES:
            yield "", None, False
            return
        pointer, node = stack.pop()
        seen += 1
        if isinstance(node, str):
            yield pointer, node, False
        elif isinstance(node, dict):
            for key, child in node.items():
                if key == "provenance":
                    continue
                child_pointer = f"{pointer}/{_escape(str(key))}"
                yield child_pointer, str(key), True
                stack.append((child_pointer, child))
        elif isinstance(node, list):
            stack.extend((f"{pointer}/{i}", child) for i, child in enumerate(node))
