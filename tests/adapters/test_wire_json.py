"""The thin hook's JSON (agbom/adapters/wire_json.py) reads and writes exactly what json does.

Every document of a corpus generated from a fixed seed (hook payloads of each host, then
hostile variants: deep nesting, huge numbers, lone surrogates, NaN and Infinity, duplicate
keys, byte-order marks, control characters, truncations, flipped bytes, trailing data) is
read by both: the same value (compared by ``repr``, so types, key order and NaN count) or
the same kind of error. Every object of a second corpus is written by both: the same bytes or
the same kind of error. A run without the C accelerator checks the fallback.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import host_events as ev
import pytest

from agbom.adapters import wire_json

SEED = 20240611
REPO = Path(__file__).resolve().parents[2]


def _outcome(read: Callable[[], object]) -> tuple[str, str]:
    """``("value", repr)`` or the kind of error: what a caller can tell apart."""
    try:
        return "value", repr(read())
    except RecursionError:
        return "error", "RecursionError"
    except UnicodeError as exc:
        return "error", type(exc).__name__
    except ValueError:
        return "error", "ValueError"
    except TypeError:
        return "error", "TypeError"


def _payloads() -> list[bytes]:
    """One event per host shape the hosts send (tests/adapters/host_events.py)."""
    session = "s-1"
    return [
        ev.cursor_tool(session, "Read", {"file_path": "/etc/hosts"}),
        ev.cursor_shell(session, "git status && rm -rf / ; echo é"),
        ev.cursor_mcp(session, "crm_lookup", "https://crm.example/mcp", {"q": "x" * 50}),
        ev.cursor_prompt(session, "/deploy now"),
        ev.codex_tool(session, "apply_patch", {"command": "*** Begin Patch\n"}),
        ev.codex_prompt(session, "hello\u2028world"),
        ev.gemini_tool(session, "read_file", {"file_path": "/etc/hosts"}),
        ev.gemini_prompt(session, "\U0001f600 emoji"),
        ev.copilot_tool(session, "view", {"path": "/etc/hosts"}),
        ev.windsurf("pre_read_code", session, {"file_path": "/etc/hosts"}),
        ev.opencode_tool(session, "read", {"filePath": "/etc/hosts"}),
        json.dumps(
            {
                "session_id": session,
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls", "timeout": 1.5e3, "n": -0.0, "big": 10**30},
            }
        ).encode(),
        b'{"decision":"allow"}',
        b'{"decision":{"decision":"deny","hook_id":"agbom","reason_code":"timeout"}}',
        b"{}",
    ]


def _hostile() -> list[bytes]:
    limit = sys.getrecursionlimit()
    return [
        b"",
        b" \t\r\n",
        b"\x0c{}",  # form feed: not JSON whitespace
        b"{}\x0b",
        b"[" * 50 + b"]" * 50,
        b"[" * (limit + 50) + b"]" * (limit + 50),  # past the recursion limit
        b'{"a":' * (limit + 50) + b"1" + b"}" * (limit + 50),
        b"[" * 100_000,  # unclosed, deep
        b"1" * 5000,  # past int_max_str_digits
        b"-" + b"9" * 4300,
        b"9" * 4300,
        b"1e400",
        b"-1e400",
        b"1.0e-400",
        b"[NaN, Infinity, -Infinity]",
        b"nan",
        b"[Infinity1]",
        b"[-NaN]",
        b'{"a": 1, "a": 2, "b": {"a": 3}, "b": 4}',
        b'"\\ud800"',
        b'"\\udc00\\ud800"',
        b'"\\ud83d\\ude00"',
        b'"\xed\xa0\x80"',  # a surrogate in UTF-8 bytes
        b'"\xff"',
        b'"\xc3"',
        b'"\x00"',
        b'"a\tb"',  # a control character inside a string: refused (strict)
        b'"\\u00"',
        b'"\\x41"',
        b"\xef\xbb\xbf{}",  # UTF-8 byte-order mark
        b"\xef\xbb\xbf\xef\xbb\xbf{}",
        '{"a":"é"}'.encode("utf-16"),
        '{"a":"é"}'.encode("utf-16-le"),
        '{"a":"é"}'.encode("utf-16-be"),
        '{"a":"é"}'.encode("utf-32"),
        '{"a":"é"}'.encode("utf-32-le"),
        '{"a":"é"}'.encode("utf-32-be"),
        b"\x00{",
        b"{\x00",
        b"[1,]",
        b'{"a":1,}',
        b"{} {}",
        b"{}x",
        b"[1 2]",
        b"tru",
        b"true false",
        b"null",
        b"01",
        b"-",
        b"1.",
        b".5",
        b"+1",
        b"0x10",
        b"'a'",
        b'{"a"}',
        b"{1:2}",
        b"\xff\xfe",
        b"\xfe\xff",
        b"\x00\x00\xfe\xff",
    ]


def _mutations(rng: random.Random, doc: bytes) -> Iterator[bytes]:
    for _ in range(12):
        cut = rng.randrange(len(doc) + 1)
        yield doc[:cut]
        flipped = bytearray(doc)
        if flipped:
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        yield bytes(flipped)
        at = rng.randrange(len(doc) + 1)
        insert = rng.choice([b"\\", b'"', b"\x00", b"\xff", b"[", b"}", b",", b" ", b"\\u", b"1e9"])
        yield doc[:at] + insert + doc[at:]


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randrange(10 if depth < 6 else 7)
    if choice == 0:
        return rng.choice([None, True, False])
    if choice == 1:
        return rng.randrange(-(10**20), 10**20)
    if choice == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e308, 5e-324, float("inf"), float("-inf")])
    if choice == 3:
        return rng.uniform(-1e6, 1e6)
    if choice in (4, 5, 6):
        alphabet = 'abc "\\/\n\t\x00\x1f\x7féß\u2028\u2029\U0001f600\ud800\udfff'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
    if choice in (7, 8):
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys: list[Any] = ["a", "b", "é", "", 1, 2.5, True, None]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def _documents() -> list[bytes]:
    rng = random.Random(SEED)
    docs = [*_payloads(), *_hostile()]
    for doc in list(docs):
        docs.extend(_mutations(rng, doc))
    for _ in range(400):
        value = _random_value(rng)
        try:
            text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        except ValueError:
            continue
        docs.append(text.encode("utf-8", "surrogatepass"))
    return docs


def test_every_document_is_read_as_json_reads_it() -> None:
    documents = _documents()
    assert len(documents) > 2000
    differ = [
        (doc[:80], theirs, ours)
        for doc in documents
        if (theirs := _outcome(lambda d=doc: json.loads(d)))  # type: ignore[misc]
        != (ours := _outcome(lambda d=doc: wire_json.loads(d)))  # type: ignore[misc]
    ]
    assert differ == []
    # The corpus reaches both sides of each line: documents read and documents refused.
    kinds = {_outcome(lambda d=doc: json.loads(d))[1] for doc in documents}  # type: ignore[misc]
    assert {"ValueError", "RecursionError", "UnicodeDecodeError"} <= kinds


def test_a_refusal_is_jsons_own_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="Expecting ',' delimiter"):
        wire_json.loads(b"[1 2]")
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        wire_json.loads(b"{} {}")
    with pytest.raises(json.JSONDecodeError, match="Invalid control character"):
        wire_json.loads(b'"a\tb"')


def _objects() -> list[Any]:
    rng = random.Random(SEED + 1)
    cycle: list[Any] = []
    cycle.append(cycle)
    deep: Any = "x"
    for _ in range(sys.getrecursionlimit() + 50):
        deep = [deep]
    fixed: list[Any] = [
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}},
        {"decision": "deny", "reason": 'agbom: \u2028 é \U0001f600 \x00 \x1f "q" \\'},
        {"continue": False, "stopReason": "x" * 10_000},
        "a bare string é",
        "\ud800",  # a lone surrogate cannot be written as UTF-8
        {"k": "\udfff"},
        [float("nan"), float("inf"), float("-inf"), -0.0, 1e308, 5e-324],
        {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
        {(1, 2): "tuple key"},
        (1, 2, 3),
        {"set": {1, 2}},
        {"bytes": b"x"},
        cycle,
        deep,
        10**400,
    ]
    return fixed + [_random_value(rng) for _ in range(1500)]


def test_every_object_is_written_as_json_writes_it() -> None:
    differ = []
    for value in _objects():
        theirs = _outcome(
            lambda v=value: json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()
        )
        ours = _outcome(lambda v=value: wire_json.dumps(v))
        if theirs != ours:
            differ.append((repr(value)[:80], theirs, ours))
    assert differ == []


def test_without_the_c_accelerator_it_is_json() -> None:
    probe = (
        "import sys\n"
        "sys.modules['_json'] = None\n"  # import _json now fails, as on an interpreter without it
        "from agbom.adapters import wire_json\n"
        "assert wire_json._scan_once is None and wire_json._make_encoder is None\n"
        "print(wire_json.dumps(wire_json.loads(sys.stdin.buffer.read())).decode())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=b' {"a": [1, 2.5, NaN, "\\u00e9"], "a": {"b": null}} ',
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == '{"a":{"b":null}}\n'
