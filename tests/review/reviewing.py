"""Helpers for the review page tests: a real skill folder, its registration over ACS, a real
``agbom serve`` with a reviewers file, and Debian's chromium driven by Playwright."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agbom.inventory.skill_digest import digest_skill_folder
from tests.guardian.acs import hello, request
from tests.transports.served import Served, post, run_cli


def hello_as(session_id: str, agent_id: str) -> dict[str, Any]:
    """A ClientHello whose metadata names ``agent_id`` (the session's agent)."""
    message = hello(session_id)
    message["params"]["metadata"]["agent_id"] = agent_id
    return message


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "review"


def need_browser() -> Any:
    """Playwright's sync API, or a skip (a failure under CI=true, where it must be there)."""
    problem = None
    if not CHROMIUM.exists():
        problem = f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        from playwright import sync_api
    except ImportError:
        problem = problem or "playwright is not installed (pip install -e '.[test]')"
        sync_api = None
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests must run in CI: {problem}")
        pytest.skip(problem)
    return sync_api


@dataclass
class SkillVersion:
    skill_id: str
    digest: str  # sha256:HEX
    value: str
    body: dict[str, Any]
    skill_md: str


def skill_folder(root: Path, files: dict[str, str], executable: tuple[str, ...] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755 if name in executable else 0o644)
    return root


def version_of(skill_id: str, folder: Path) -> SkillVersion:
    """What an agent framework would send: the folder digest, its file list, SKILL.md."""
    digest = digest_skill_folder(folder)
    skill_md = (folder / "SKILL.md").read_text(encoding="utf-8")
    body = {"skill_md": skill_md, "files": digest.to_json()["files"]}
    return SkillVersion(skill_id, f"sha256:{digest.value}", digest.value, body, skill_md)


def register(
    url: str,
    version: SkillVersion,
    *,
    agent_id: str,
    capabilities: list[str],
    tools: list[str] | None = None,
    agbom: dict[str, Any] | None = None,
    body: Any = None,
) -> tuple[str, dict[str, Any]]:
    """A session of ``agent_id`` that registers ``version``; returns (session id, answer)."""
    sid = str(uuid.uuid4())
    with httpx.Client() as client:
        assert "result" in post(url, hello_as(sid, agent_id), client=client)
        started = post(
            url, request("steps/sessionStart", {}, session_id=sid, agent_id=agent_id), client=client
        )
        assert started["result"]["decision"] == "allow", started
        if agbom is not None:
            post(
                url,
                request("agbom/snapshot", {"agbom": agbom}, session_id=sid, agent_id=agent_id),
                client=client,
            )
        payload: dict[str, Any] = {
            "skill_id": version.skill_id,
            "definition": {
                "ref": f"file:///skills/{version.skill_id}",
                "digest": {"algorithm": "sha256", "value": version.value},
                "body": version.body if body is None else body,
            },
            "declared_capabilities": capabilities,
        }
        if tools is not None:
            payload["composition"] = {"tools": tools}
        answer = post(
            url,
            request("steps/skillRegister", payload, session_id=sid, agent_id=agent_id),
            client=client,
        )
    return sid, answer


def load(url: str, version: SkillVersion, *, agent_id: str) -> dict[str, Any]:
    """A fresh session of ``agent_id`` that loads ``version``; the skillLoad answer."""
    sid = str(uuid.uuid4())
    with httpx.Client() as client:
        assert "result" in post(url, hello_as(sid, agent_id), client=client)
        post(
            url, request("steps/sessionStart", {}, session_id=sid, agent_id=agent_id), client=client
        )
        payload = {
            "skill_id": version.skill_id,
            "digest": {"algorithm": "sha256", "value": version.value},
            "load_trigger": "user",
            "load_path": [{"skill_id": version.skill_id}],
        }
        return post(
            url,
            request("steps/skillLoad", payload, session_id=sid, agent_id=agent_id),
            client=client,
        )


def cli_status(db: Path | str, skill_id: str, digest: str) -> dict[str, Any]:
    import orjson

    done = run_cli("skills", "show", skill_id, "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = orjson.loads(done.stdout)
    record = next(r for r in doc["records"] if f"sha256:{r['digest']['value']}" == digest)
    return {"record": record, "history": doc["history"]}


def add_reviewer(file: Path, name: str, role: str) -> str:
    done = run_cli("reviewers", "add", name, "--role", role, "--file", str(file))
    assert done.returncode == 0, done.stderr
    token = done.stdout.decode().strip()
    assert token.startswith("agr_") and token not in file.read_text()
    return token


def pair_fields(skill_id: str, digest: str) -> dict[str, str]:
    """The decision form's fields naming ``(skill_id, digest)``: the id as hex of its UTF-8
    bytes and a SHA-256 key over ``id NUL digest`` (docs/reviewing.md, "The decision form"),
    computed here independently of the page."""
    import hashlib

    raw = skill_id.encode("utf-8")
    key = hashlib.sha256(raw + b"\0" + digest.encode()).hexdigest()
    return {"skill_id_hex": raw.hex(), "digest": digest, "pair_key": key}


def version_with_texts(skill_id: str, folder: Path) -> SkillVersion:
    """``version_of`` with each file's content carried as ``text`` (docs/reviewing.md,
    "What agents send for review"), and ``binary: true`` for a file that is not UTF-8."""
    version = version_of(skill_id, folder)
    files = []
    for entry in version.body["files"]:
        data = (folder / entry["path"]).read_bytes()
        try:
            if b"\0" in data:
                raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL")
            files.append({**entry, "text": data.decode("utf-8")})
        except UnicodeDecodeError:
            files.append({**entry, "binary": True})
    version.body = {"files": files}
    return version


@contextlib.contextmanager
def signed_in_page(
    url: str, token: str, width: int, failed: list[str], *, javascript: bool = True
) -> Iterator[Any]:
    """A chromium page ``width`` px wide on the server at ``url``, signed in with ``token``
    (JavaScript off when asked); each response of 400 or more and each console error (a CSP
    violation is one) is added to ``failed``."""
    sync_api = need_browser()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(
                viewport={"width": width, "height": 900}, java_script_enabled=javascript
            )
            page: Any = context.new_page()
            page.set_default_timeout(60_000)  # a loaded machine: a bound, not a timing claim
            page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
            page.on("console", lambda m: failed.append(m.text) if m.type == "error" else None)
            page.goto(f"{url}/ui/login")
            page.get_by_label("Reviewer token").fill(token)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{url}/ui/queue")
            yield page
        finally:
            browser.close()


@contextlib.contextmanager
def served_to_a_viewer(root: Path) -> Iterator[tuple[Served, str]]:
    """``agbom serve`` on ``root / "s.db"`` with one reviewer, ``vic``, a viewer; yields the
    server and vic's token, and stops the server after."""
    reviewers = root / "reviewers.json"
    token = add_reviewer(reviewers, "vic", "viewer")
    server = Served(
        db=root / "s.db", log=root / "serve.log", extra=["--reviewers-file", str(reviewers)]
    )
    server.start()
    try:
        yield server, token
    finally:
        server.stop()
