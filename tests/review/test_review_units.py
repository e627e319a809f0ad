"""The review page's parts on their own: definitions checked against real folder digests, the
reviewers file, sessions, the cross-site check, the SVG and the store's kept definitions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agbom.inventory.skill_digest import digest_skill_folder
from agbom.review.auth import Sessions, cross_site
from agbom.review.definition import (
    MAX_FILES,
    MAX_SKILL_MD_CHARS,
    manifest_digest,
    parse_body,
    remember,
    verify,
)
from agbom.review.reviewers import (
    ReviewerDirectory,
    ReviewersError,
    Role,
    add,
    hash_token,
    load,
    remove,
)
from agbom.review.svg import Node, render
from agbom.store import Digest, open_store
from tests.review.reviewing import skill_folder, version_of


def test_a_file_list_verifies_against_the_folder_digest(tmp_path: Path) -> None:
    folder = skill_folder(
        tmp_path / "s",
        {"SKILL.md": "# hi\n", "scripts/run.sh": "#!/bin/sh\n", "a b\nc.txt": "odd name\n"},
        executable=("scripts/run.sh",),
    )
    os.symlink("scripts/run.sh", folder / "run")
    digest = digest_skill_folder(folder)
    version = version_of("s", folder)
    definition = parse_body(version.body)
    assert definition is not None and definition.files is not None
    assert manifest_digest(definition.files) == digest.value  # /2: the folder holds a link
    assert verify(definition, "sha256", digest.value).files_match is True
    assert verify(definition, "sha256", digest.value).skill_md_match is True
    # A body that lies about one byte of one file, or about the SKILL.md text, is caught.
    forged = dict(version.body, files=[dict(f) for f in version.body["files"]])
    forged["files"][0]["size"] += 1
    assert verify(parse_body(forged), "sha256", digest.value).files_match is False  # type: ignore[arg-type]
    other_text = dict(version.body, skill_md="# something else\n")
    check = verify(parse_body(other_text), "sha256", digest.value)  # type: ignore[arg-type]
    assert check.files_match is True and check.skill_md_match is False


def test_bodies_are_bounded_and_malformed_parts_dropped() -> None:
    assert parse_body(None) is None and parse_body(42) is None and parse_body({}) is None
    assert parse_body("x" * (MAX_SKILL_MD_CHARS + 1)) is None
    entry = {"path": "a", "size": 1, "executable": False, "sha256": "0" * 64}
    too_many = {"files": [dict(entry, path=f"f{i}") for i in range(MAX_FILES + 1)]}
    assert parse_body(too_many) is None
    bad = {"skill_md": "ok", "files": [entry, {"path": "b", "size": -1, "sha256": "0" * 64}]}
    parsed = parse_body(bad)
    assert parsed is not None and parsed.skill_md == "ok" and parsed.files is None
    twice = parse_body({"files": [entry, entry]})
    assert twice is None  # the same path twice is no folder


def test_the_store_keeps_the_first_definition_unless_a_verified_one_comes(
    tmp_path: Path,
) -> None:
    folder = skill_folder(tmp_path / "s", {"SKILL.md": "real\n"})
    version = version_of("s", folder)
    pair = Digest("sha256", version.value)
    with open_store(tmp_path / "agbom.db") as store:
        remember(store, "s", pair, "a story the agent tells")
        assert store.skill_definition("s", pair) == {
            "skill_md": "a story the agent tells",
            "files": None,
        }
        remember(store, "s", pair, version.body)  # verified: replaces the unverified text
        kept = store.skill_definition("s", pair)
        assert kept is not None and kept["skill_md"] == "real\n"
        remember(store, "s", pair, {"skill_md": "overwrite attempt", "files": []})
        assert store.skill_definition("s", pair) == kept
        assert store.skill_definition("s", Digest("sha256", "0" * 64)) is None


def test_reviewer_tokens_are_stored_hashed(tmp_path: Path) -> None:
    path = tmp_path / "reviewers.json"
    token = add(path, "alice", Role.APPROVER)
    assert token is not None and token not in path.read_text()
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert load(path)[0].token_sha256 == hash_token(token)
    directory = ReviewerDirectory(path)
    assert directory.by_token(token) is not None and directory.by_token(token + "x") is None
    assert directory.by_token("") is None and directory.by_token("x" * 10_000) is None
    with pytest.raises(ReviewersError, match="reviewer name"):
        add(path, "<script>", Role.VIEWER)
    path.write_text('{"format": "agbom-reviewers/1", "reviewers": [{"name": "x"}]}')
    with pytest.raises(ReviewersError, match="role"):
        load(path)


def test_sessions_end_when_the_reviewer_leaves_or_idles(tmp_path: Path) -> None:
    path = tmp_path / "reviewers.json"
    add(path, "alice", Role.APPROVER)
    add(path, "bob", Role.VIEWER)
    now = [1000.0]
    sessions = Sessions(ReviewerDirectory(path), clock=lambda: now[0])
    alice = sessions.create(ReviewerDirectory(path).by_name("alice"), via_proxy=False)  # type: ignore[arg-type]
    bob = sessions.create(ReviewerDirectory(path).by_name("bob"), via_proxy=False)  # type: ignore[arg-type]
    assert sessions.get(alice.session_id) is not None
    assert remove(path, "alice")
    assert sessions.get(alice.session_id) is None  # removed from the file: session over
    add(path, "bob", Role.VIEWER)  # a new token for bob ends sessions made with the old one
    assert sessions.get(bob.session_id) is None
    carol_token = add(path, "carol", Role.VIEWER)
    assert carol_token
    carol = sessions.create(ReviewerDirectory(path).by_name("carol"), via_proxy=False)  # type: ignore[arg-type]
    now[0] += 3 * 3600
    assert sessions.get(carol.session_id) is None  # idle too long


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({"origin": "http://127.0.0.1:1", "sec-fetch-site": "same-origin"}, False),
        ({"origin": "http://127.0.0.1:1"}, False),
        ({"sec-fetch-site": "same-origin"}, False),
        ({"origin": "http://127.0.0.1:2"}, True),
        ({"origin": "null"}, True),
        ({"sec-fetch-site": "same-site"}, True),
        ({"sec-fetch-site": "cross-site", "origin": "http://127.0.0.1:1"}, True),
        ({"sec-fetch-site": "none"}, True),
        ({}, True),
        ({"origin": "https://proxy.example"}, False),
    ],
)
def test_cross_site_requests_are_refused(headers: dict[str, str], refused: bool) -> None:
    why = cross_site(
        headers.items(),
        own_origin="http://127.0.0.1:1",
        allowed_origins=frozenset({"https://proxy.example"}),
    )
    assert (why is not None) is refused


def test_the_graph_escapes_every_label() -> None:
    hostile = '<script>alert(1)</script>"&'
    svg = render(
        [Node("a", hostile, "skill"), Node(hostile, "b", '"><x'), Node("c", "c", "tool")],
        [("a", hostile), (hostile, "c"), ("c", "a")],
        title=hostile,
    )
    assert svg is not None
    assert "<script>" not in svg and '"><x' not in svg
    assert svg.count("<rect") == 3 and svg.count("<line") == 3
    many = [Node(str(i), str(i), "tool") for i in range(300)]
    assert render(many, [], title="big") is None
