"""Hostile input: property-based and fuzz tests of every parser on the Guardian's doorstep.

Promise under test: whatever arrives, the JSON-RPC entry point answers with a well-formed
JSON-RPC response (an error with a stable code and reason for bad input, never -32603
``internal_error``), in bounded time and memory, and no refused request leaves a chain entry.
The AgBOM, rule-pack and manifest parsers answer with their structured error or a skipped /
errored file report, never another exception.
"""

from __future__ import annotations

import copy
import json
import os
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agbom.errors import AgbomError
from agbom.guardian import Guardian, build_guardian
from agbom.inventory import AgBOM, InvalidAgBOM
from agbom.protocol import METHODS
from agbom.scan import FileStatus
from agbom.transports.interface import Limits, handle_body
from tests.guardian.acs import ALL_METHODS, hello, request

LIMITS = Limits(max_body_bytes=256 * 1024, max_depth=64, max_batch=50)
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Codes a bad request may earn (JSON-RPC and ACS); -32603 (internal error) is a bug.
KNOWN_CODES = {-32700, -32600, -32601, -32602, *range(-32006, -31999)}


@pytest.fixture(scope="module")
def guardian(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guardian]:
    g = build_guardian(tmp_path_factory.mktemp("fuzz") / "fuzz.db")
    yield g
    g.store.close()


@pytest.fixture(scope="module")
def session(guardian: Guardian) -> str:
    sid = f"fuzz-{uuid.uuid4()}"
    assert "result" in guardian.handle(hello(sid))
    assert guardian.handle(request("steps/sessionStart", {}, session_id=sid))["result"]
    return sid


def encode(value: Any) -> bytes:
    """JSON bytes of any generated value (stdlib json: integers of any size)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def check_response(raw: bytes) -> list[dict[str, Any]]:
    """``raw`` is one JSON-RPC response (or a batch of them) in the 2.0 shape."""
    parsed = orjson.loads(raw)
    items = parsed if isinstance(parsed, list) else [parsed]
    for item in items:
        assert item["jsonrpc"] == "2.0"
        assert ("result" in item) != ("error" in item), item
        assert "id" in item
        if "error" in item:
            error = item["error"]
            assert isinstance(error["code"], int) and isinstance(error["message"], str)
            assert error["code"] in KNOWN_CODES, item
            assert isinstance(error["data"]["reason"], str)
    return items


# -- JSON values with every awkward type --------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)


@FUZZ
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_get_a_jsonrpc_answer(guardian: Guardian, data: bytes) -> None:
    check_response(handle_body(guardian, data, LIMITS))


@FUZZ
@given(json_values)
def test_arbitrary_json_gets_a_jsonrpc_answer(guardian: Guardian, value: Any) -> None:
    check_response(handle_body(guardian, encode(value), LIMITS))


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


def _replace(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return doc


def _valid_examples(session_id: str) -> list[dict[str, Any]]:
    return [
        request(
            "steps/toolCallRequest",
            {"tool": {"name": "read_file", "version": "1"}, "arguments": {"p": {"value": "x"}}},
            session_id=session_id,
        ),
        request(
            "steps/skillLoad",
            {
                "skill_id": "s",
                "digest": {"algorithm": "sha256", "value": "a" * 64},
                "load_trigger": "user",
                "load_path": [{"skill_id": "s"}],
            },
            session_id=session_id,
        ),
        request(
            "agbom/snapshot",
            {"agbom": {"components": [{"id": "m", "type": "model", "name": "m", "version": None}]}},
            session_id=session_id,
        ),
    ]


@FUZZ
@given(st.data())
def test_every_field_replaced_by_an_unexpected_type(
    guardian: Guardian, session: str, data: st.DataObject
) -> None:
    """Take a valid request, replace any node (envelope, metadata or payload) with junk."""
    base = data.draw(st.sampled_from(_valid_examples(session)))
    doc = copy.deepcopy(base)
    doc["params"]["request_id"] = str(uuid.uuid4())
    path = data.draw(st.sampled_from(list(_paths(doc))))
    junk = data.draw(json_values)
    mutated = _replace(doc, path, junk)
    before = guardian.store.chain_tip(session)
    replies = check_response(handle_body(guardian, encode(mutated), LIMITS))
    if all("error" in reply for reply in replies):
        assert guardian.store.chain_tip(session) == before  # a refusal writes nothing


@FUZZ
@given(method=st.sampled_from(sorted(set(ALL_METHODS) | set(METHODS))), payload=json_values)
def test_every_hook_with_an_arbitrary_payload(
    guardian: Guardian, session: str, method: str, payload: Any
) -> None:
    reply = guardian.handle(request(method, payload, session_id=session))
    check_response(orjson.dumps(reply))


@FUZZ
@given(
    method=st.sampled_from(sorted(METHODS)),
    payload=st.dictionaries(st.text(max_size=20), json_values, max_size=8),
)
def test_every_hook_with_an_arbitrary_object_payload(
    guardian: Guardian, session: str, method: str, payload: dict[str, Any]
) -> None:
    reply = guardian.handle(request(method, payload, session_id=session))
    check_response(orjson.dumps(reply))


# -- hand-picked hostile bodies ----------------------------------------------------------------


def _envelope_bytes(session: str, payload_json: bytes) -> bytes:
    req = request("steps/userMessage", {"content": "PLACEHOLDER"}, session_id=session)
    req["params"]["payload"] = "__PAYLOAD__"
    return orjson.dumps(req).replace(b'"__PAYLOAD__"', payload_json)


HOSTILE = {
    "nan_literal": b'{"content": NaN}',
    "infinity_literal": b'{"content": Infinity}',
    "number_beyond_ieee": b'{"content": "x", "n": 1e400}',
    "negative_beyond_ieee": b'{"content": "x", "n": -1e400}',
    "integer_beyond_64_bits": b'{"content": "x", "n": 123456789012345678901234567890}',
    "integer_beyond_2_53": b'{"content": "x", "n": 9007199254740993}',
    "duplicate_keys": b'{"content": "a", "content": {"x": 1}}',
    "invalid_utf8": b'{"content": "\xff\xfe\xc3"}',
    "lone_surrogate_escape": b'{"content": "\\ud800"}',
    "nul_in_key": b'{"content": "x", "\\u0000": 1}',
    "deep_arrays": b'{"content": "x", "d": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
    "deep_objects": b'{"content": "x", "d": ' + b'{"a":' * 5_000 + b"1" + b"}" * 5_000 + b"}",
    "unbalanced_deep": b'{"content": "x", "d": ' + b"[" * 100_000,
    "huge_string": b'{"content": "' + b"A" * 200_000 + b'"}',
    "many_keys": b"{" + b",".join(b'"k%d": %d' % (i, i) for i in range(15_000)) + b"}",
    "truncated": b'{"content": "x',
    "empty": b"",
}


# Valid JSON that is merely awkward: big integers (orjson reads those beyond 64 bits as
# doubles, which is what IEEE-based JSON peers see too), NUL in a key, a long string.
AWKWARD_BUT_VALID = {"integer_beyond_2_53", "integer_beyond_64_bits", "nul_in_key", "huge_string"}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_payloads_are_refused_cleanly(guardian: Guardian, session: str, name: str) -> None:
    body = _envelope_bytes(session, HOSTILE[name])
    before = guardian.store.chain_entries(session)[-1]["entry_hash"]
    tracemalloc.start()
    started = time.perf_counter()
    raw = handle_body(guardian, body, LIMITS)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    (reply,) = check_response(raw)
    assert elapsed < 2.0, f"{name} took {elapsed:.2f} s"
    # Memory is bounded by a small multiple of the (bounded) body size.
    assert peak < 20 * LIMITS.max_body_bytes + 8_000_000, f"{name} peaked at {peak} bytes"
    if name == "duplicate_keys":
        # orjson keeps the last value: an object, which the userMessage schema refuses.
        assert reply["error"]["code"] == -32602
    elif name in AWKWARD_BUT_VALID:
        pass  # valid JSON: decided or refused, and check_response already ruled out -32603
    else:
        assert "error" in reply, (name, reply)
    if "error" in reply:
        assert guardian.store.chain_entries(session)[-1]["entry_hash"] == before


def test_body_over_the_limit_is_refused_without_parsing(guardian: Guardian) -> None:
    body = b'{"x": "' + b"y" * (LIMITS.max_body_bytes + 10) + b'"}'
    (reply,) = check_response(handle_body(guardian, body, LIMITS))
    assert reply["error"]["data"]["reason"] == "payload_too_large"


def test_batches_of_junk_answer_every_item(guardian: Guardian, session: str) -> None:
    batch = [
        1,
        "x",
        None,
        [],
        {},
        {"jsonrpc": "2.0"},
        request("system/ping", {}, session_id=session),
    ]
    items = check_response(handle_body(guardian, orjson.dumps(batch), LIMITS))
    assert len(items) == len(batch)
    assert "result" in items[-1]
    too_big = check_response(handle_body(guardian, orjson.dumps([1] * 51), LIMITS))
    assert too_big[0]["error"]["data"]["reason"] == "batch_too_large"


# -- the AgBOM, rule-pack and manifest parsers ---------------------------------------------------

component_types = st.sampled_from(
    [
        "model",
        "mcp_server",
        "a2a_peer",
        "tool",
        "knowledge_source",
        "memory_store",
        "agent_capability",
        "skill",
        "nonsense",
        "",
    ]
)
components = st.fixed_dictionaries(
    {"id": st.text(max_size=8) | st.integers(), "type": component_types},
    optional={
        "name": json_values,
        "version": json_values,
        "tools": st.lists(st.text(max_size=8), max_size=3) | json_values,
        "definition": json_values,
        "composed_skills": st.lists(st.text(max_size=8), max_size=3),
    },
)
agbom_documents = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"components": st.lists(components, max_size=6) | json_values},
        optional={"agent": json_values},
    ),
)


@FUZZ
@given(agbom_documents)
def test_agbom_parser_returns_a_model_or_invalid_agbom(document: Any) -> None:
    try:
        AgBOM.from_document(document, source="fuzz")
    except InvalidAgBOM:
        pass


def test_agbom_parser_bounds_depth_and_size() -> None:
    deep: Any = "x"
    for _ in range(5_000):
        deep = {"n": deep}
    with pytest.raises(InvalidAgBOM):
        AgBOM.from_document(
            {"components": [{"id": "m", "type": "model", "name": "m", "version": None, "x": deep}]}
        )


yaml_texts = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
    st.sampled_from(
        [
            "pack: p\nversion: 1\nrules: []\n",
            "pack: p\nversion: 1\nrules:\n  - id: r\n    kind: ban\n",
            "pack: p\nversion: 1\nrules:\n  - id: r\n    kind: ban\n    match: {type: [1, 2]}\n",
            "a: &a [*a]\n",
            "a: &a\n  b: *a\n",
            "!!python/object/apply:os.system ['echo pwned']\n",
            "- " * 2_000 + "x\n",
            "[" * 5_000 + "]" * 5_000 + "\n",
            "x: " + "y" * 100_000 + "\n",
            "lol: &l [" + ",".join(["*l"] * 9) + "]\n",
        ]
    ),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_texts)
def test_rule_pack_parser_returns_rules_or_a_rule_error(text: str) -> None:
    import tempfile

    from agbom.rules import load_rules

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pack.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
        started = time.perf_counter()
        try:
            load_rules(Path(tmp))
        except AgbomError:
            pass
        assert time.perf_counter() - started < 5


MANIFEST_NAMES = [
    "claude_desktop_config.json",
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/settings.json",
    ".codex/config.toml",
    "opencode.jsonc",
    "mcp.json",
    "pdf/SKILL.md",
    "agent-card.json",
    "server.json",
    "agbom.json",
    "trace.jsonl",
    ".config/goose/config.yaml",
    ".config/zed/settings.json",
    ".continue/mcpServers/x.yaml",
    "bundle/manifest.json",
    "tool.mcpb",
    "agent.py",
]
YAML_NAMES = ["pdf/SKILL.md", ".config/goose/config.yaml", ".continue/mcpServers/x.yaml"]

# Manifest strings reach past the limits that matter for them: 512 characters for a component
# id (a server name, URL or command becomes one), 64 for a skill name, 1,024 for a description.
# (The JSON-RPC fuzzers above keep their short strings.)
manifest_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.text(
    st.characters(blacklist_categories=("Cs",)), min_size=500, max_size=1100
)
manifest_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | manifest_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(manifest_text, inner, max_size=4),
    max_leaves=12,
)
server_entries = st.fixed_dictionaries(
    {},
    optional={
        "command": manifest_text,
        "args": st.lists(manifest_text, max_size=3),
        "url": manifest_text.map(lambda s: "https://h.example/" + s),
        "env": st.dictionaries(manifest_text, manifest_text, max_size=2),
    },
)
mcp_configs = st.dictionaries(manifest_text, server_entries, max_size=3).map(
    lambda servers: encode({"mcpServers": servers})
)


def billion_laughs(indent: str = "") -> bytes:
    """Nine levels of ten aliases: 10^9 strings once expanded, a few hundred bytes as text."""
    lines = [f'{indent}l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{indent}l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 9)]
    return ("\n".join(lines) + "\n").encode()


ALIAS_BOMBS = {
    "pdf/SKILL.md": b"---\nname: pdf\ndescription: d\n"
    + billion_laughs()
    + b"allowed-tools: *l8\n---\n",
    ".config/goose/config.yaml": billion_laughs()
    + b"extensions:\n  x:\n    cmd: npx\n    args: *l8\n",
    ".continue/mcpServers/x.yaml": billion_laughs() + b"mcpServers:\n  - name: x\n    args: *l8\n",
}
manifest_bodies = st.one_of(
    st.binary(max_size=400),
    manifest_json.map(encode),
    mcp_configs,
    st.sampled_from(
        [
            b'{"mcpServers": {"x": {"command": 1, "args": {"a": 1}, "env": [1]}}}',
            b'{"mcpServers": []}',
            b'{"mcpServers": {"x": null}}',
            b"---\nname: [1\n---\n",
            b"---\n" + b"a: b\n" * 5_000 + b"---\n",
            b"\xef\xbb\xbf{}",
            b"[" * 50_000,
            b'{"a": 1e400, "b": NaN}',
            b'[mcp_servers.x]\ncommand = 1\nargs = "x"\n',
            b"extensions:\n  x:\n    cmd: [1]\n    type: stdio\n",
            b"mcpServers:\n  - 1\n  - name: {a: b}\n",
            b'{"manifest_version": "0.2", "server": {"type": "node"}, "tools": [1]}',
            b"PK\x03\x04" + b"\x00" * 100,
            b"MCPServerStdio(params={**x})\nHostedMCPTool(tool_config=1)\n",
            b"MCPServerStdio(" + b"[" * 5_000 + b")\n",
            *ALIAS_BOMBS.values(),
        ]
    ),
)

LOOP = "cannot read: Too many levels of symbolic links"
# Links at a manifest's name, and what the scan must say about each.
LINK_KINDS = {
    "self": LOOP,
    "loop": LOOP,
    "dangling": "cannot read: No such file or directory",
    "escape": "symbolic link leaves the scanned tree; not followed",
    "into-git": None,  # read like the file it reaches: whatever that file earns
}


def _make_link(kind: str, target: Path, outside: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "self":
        os.symlink(target.name, target)
    elif kind == "loop":
        os.symlink(target.name + ".b", target)
        os.symlink(target.name, target.parent / (target.name + ".b"))
    elif kind == "dangling":
        os.symlink("missing-" + target.name, target)
    elif kind == "escape":
        os.symlink(os.path.relpath(outside, target.parent), target)
    else:
        git = target.parent / ".git"
        git.mkdir(exist_ok=True)
        (git / target.name).write_bytes(b'{"mcpServers": {}}')
        os.symlink(f".git/{target.name}", target)


def _yaml_quoted(text: str) -> str:
    """A YAML double-quoted scalar for any text: printable ASCII as is, the rest escaped."""
    return (
        '"'
        + "".join(c if " " <= c <= "~" and c not in '"\\' else f"\\U{ord(c):08x}" for c in text)
        + '"'
    )


def _skill_frontmatter(name: str, description: str) -> bytes:
    return (
        f"---\nname: {_yaml_quoted(name)}\ndescription: {_yaml_quoted(description)}\n---\n"
    ).encode()


manifest_cases = st.fixed_dictionaries(
    {
        "bodies": st.lists(
            st.tuples(st.sampled_from(MANIFEST_NAMES), manifest_bodies), min_size=1, max_size=4
        ),
        "links": st.lists(
            st.tuples(st.sampled_from(sorted(LINK_KINDS)), st.sampled_from(MANIFEST_NAMES)),
            max_size=3,
        ),
        "bombs": st.lists(st.sampled_from(YAML_NAMES), max_size=2),
        "skills": st.lists(
            st.tuples(st.sampled_from(["pdf"]) | manifest_text, manifest_text), max_size=2
        ),
        "skill_links": st.lists(st.sampled_from(["into-git", "loop", "escape"]), max_size=2),
        "url_lengths": st.lists(st.integers(min_value=400, max_value=620), max_size=2),
    }
)


def _check_located(report: Any, root: Path) -> None:
    """A report names an entry that exists, and an error line is a line of that file."""
    display = report.path
    path = root / display[2:] if display.startswith("~/") else Path(display)
    assert os.path.lexists(path), display
    assert isinstance(report.status, FileStatus)
    if report.status is FileStatus.OK:
        assert report.errors == ()
    elif report.status is FileStatus.ERROR:
        assert report.errors, display
    else:
        assert report.errors == () and report.skip_reason
    for error in report.errors:
        assert isinstance(error.reason, str) and error.reason
        assert not error.reason.startswith("internal error"), (display, error.reason)
        if error.line is not None and path.is_file() and not path.is_symlink():
            lines = path.read_bytes().count(b"\n") + 1
            assert 1 <= error.line <= lines, (display, error.line, lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifest_cases)
def test_manifest_parsers_report_instead_of_raising(case: dict[str, Any]) -> None:
    import tempfile

    from agbom.scan import scan_paths

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        outside = Path(tmp) / "outside.json"
        outside.write_bytes(b'{"mcpServers": {"o": {"url": "https://outside.example/mcp"}}}')
        for name, body in case["bodies"]:
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        # Each exact expectation: display path -> (status, reason prefix or None).
        expected: dict[str, tuple[FileStatus, str | None]] = {}
        spec_deviations: dict[str, bool] = {}
        for i, (kind, name) in enumerate(case["links"]):
            target = root / "links" / str(i) / name
            _make_link(kind, target, outside)
            if LINK_KINDS[kind] is not None:
                expected[str(target)] = (FileStatus.ERROR, LINK_KINDS[kind])
        for i, name in enumerate(case["bombs"]):
            target = root / "bombs" / str(i) / name
            target.parent.mkdir(parents=True)
            target.write_bytes(ALIAS_BOMBS[name])
            expected[str(target)] = (FileStatus.ERROR, "YAML anchors and aliases are not allowed")
        for i, (name, description) in enumerate(case["skills"]):
            target = root / "skills" / str(i) / "pdf" / "SKILL.md"
            target.parent.mkdir(parents=True)
            target.write_bytes(_skill_frontmatter(name, description))
            valid = name == "pdf" and bool(description.strip()) and len(description) <= 1024
            # Read and inventoried either way; a deviation from the Agent Skills specification
            # is a scan.skill-spec finding, not a file error (issue 41 item 5).
            # A name too long for a component id leaves the skill out of the AgBOM: an error.
            fits = len(f"skill:{name.strip()}") <= 512
            expected[str(target)] = (FileStatus.OK, None) if fits else (FileStatus.ERROR, None)
            if fits:
                spec_deviations[str(target)] = not valid
        for i, kind in enumerate(case["skill_links"]):
            folder = root / "skill-links" / str(i) / "pdf"
            (folder / "scripts").mkdir(parents=True)
            (folder / "SKILL.md").write_bytes(_skill_frontmatter("pdf", "Reads PDFs."))
            if kind == "into-git":
                (folder / ".git").mkdir()
                (folder / ".git" / "impl.sh").write_bytes(b"echo " * (i + 1))
                os.symlink("../.git/impl.sh", folder / "scripts" / "run.sh")
                expected[str(folder / "SKILL.md")] = (FileStatus.OK, None)
            elif kind == "loop":
                os.symlink("run.sh", folder / "scripts" / "run.sh")
                expected[str(folder / "SKILL.md")] = (
                    FileStatus.ERROR,
                    "skill folder refused: scripts/run.sh: symbolic link loops",
                )
            else:
                os.symlink("../../../../../outside.json", folder / "scripts" / "run.sh")
                expected[str(folder / "SKILL.md")] = (
                    FileStatus.ERROR,
                    "skill folder refused: scripts/run.sh: symbolic link leaves the skill folder",
                )
        for i, length in enumerate(case["url_lengths"]):
            target = root / "urls" / str(i) / ".mcp.json"
            target.parent.mkdir(parents=True)
            url = "https://h.example/" + "p" * length
            target.write_bytes(encode({"mcpServers": {"s": {"url": url}}}))
            fits = len("mcp:" + url) <= 512
            expected[str(target)] = (
                (FileStatus.OK, None) if fits else (FileStatus.ERROR, f"component 'mcp:{url[:76]}")
            )

        started = time.perf_counter()
        outcome = scan_paths([root], home=root)
        assert time.perf_counter() - started < 10
        by_path = {report.path: report for report in outcome.files}
        for report in outcome.files:
            _check_located(report, root)
        for display, (status, reason) in expected.items():
            report = by_path[display]
            assert report.status is status, (display, report.errors)
            if reason is not None:
                assert report.errors[0].reason.startswith(reason), (display, report.errors)
        flagged = {f.path for f in outcome.findings if f.rule_id == "scan.skill-spec"}
        for display, deviates in spec_deviations.items():
            shown = os.path.relpath(display, root)
            assert (display in flagged or shown in flagged) is deviates, (display, flagged)
        for component in outcome.agbom:
            assert len(component.id) <= 512
        for i, kind in enumerate(case["skill_links"]):
            if kind == "into-git":  # the link's target content is what the digest covers
                skill = next(
                    c for c in outcome.agbom
                    if c.get("definition", {}).get("ref", "").endswith(f"skill-links/{i}/pdf")
                )  # fmt: skip
                impl = len(b"echo " * (i + 1))
                assert skill.get("size") == len(_skill_frontmatter("pdf", "Reads PDFs.")) + impl
                assert "digest_v1" in skill.data


def test_the_fuzzed_session_chain_still_verifies(guardian: Guardian, session: str) -> None:
    """Whatever the fuzzers got accepted was hashed and chained correctly."""
    from agbom.protocol import verify_chain

    entries = [
        {k: v for k, v in e.items() if k != "seq"} for e in guardian.store.chain_entries(session)
    ]
    assert len(entries) >= 1
    assert verify_chain(entries) is None


# -- the stdio framing parser ------------------------------------------------------------------

frames = st.lists(
    st.one_of(
        st.binary(max_size=64),
        st.builds(
            lambda body: b"Content-Length: %d\r\n\r\n" % len(body) + body,
            st.binary(max_size=64) | json_values.map(encode),
        ),
        st.sampled_from(
            [
                b"Content-Length: 99999999\r\n\r\n{}",
                b"Content-Length: -1\r\n\r\n",
                b"Content-Length: \xb2\r\n\r\n",
                b"X" * 9000 + b"\r\n",
                b"\r\n\r\n\r\n",
                b"Content-Type: application/json\r\n\r\n",
            ]
        ),
    ),
    max_size=6,
)


@FUZZ
@given(frames)
def test_stdio_framing_answers_or_stops_cleanly(guardian: Guardian, chunks: list[bytes]) -> None:
    import io

    from agbom.transports.stdio import serve_stdio

    out = io.BytesIO()
    serve_stdio(guardian, io.BytesIO(b"".join(chunks)), out, LIMITS)
    data = out.getvalue()
    while data:  # every output frame is well formed and holds a JSON-RPC response
        header, separator, rest = data.partition(b"\r\n\r\n")
        assert separator and header.startswith(b"Content-Length: ")
        length = int(header.split(b":")[1])
        check_response(rest[:length])
        data = rest[length:]
