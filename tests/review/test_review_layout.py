"""The review page at 1,280 and 800 px (issue 42 item 13), in Debian's chromium driven by
Playwright against a real ``agbom serve``: the agent graph fits its box, the decision log and
the approval history wrap prose between words (only long tokens such as digests may break),
every page has a favicon that loads under the strict CSP, and ``explain`` reads as sentences,
not match expressions. The store is the README demo's (a real ``agbom replay``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import run_agbom
from tests.review.reviewing import ARTIFACTS, add_reviewer, need_browser, signed_in_page
from tests.transports.served import Served

pytestmark = pytest.mark.network

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
SESSION_ID = "7f1c2a9e-5b3d-4e8f-9a61-0c2d4e6f8a10"
SKILL = "skill-code-review"
DIGEST = "sha256:d462f8a17fcb2ae41b4d866b51db4f9ced12971cb8ec1d306543c5f3be2bb5fd"
PROSE = (
    "Reviewed every file with the security team; the network access is limited to the "
    "internal documentation service and the repository host, which the platform owners "
    "confirmed in writing before the release."
)
INTERNAL = ("[match:", "any of:", "present=", "fields purl", "not ((", "[forbid paths")

# Every word of ``selector``'s text that the layout split over two lines, outside elements of
# class ``digest`` or ``long-token`` (long tokens, which may break anywhere).
SPLIT_WORDS = """selector => {
  const root = document.querySelector(selector);
  const split = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('.digest, .long-token')) continue;
    for (const match of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (lines.size > 1) split.push(match[0]);
    }
  }
  return split;
}"""

GRAPH_FITS = """() => {
  const box = document.querySelector('.graph-box');
  const svg = box.querySelector('svg.graph');
  const b = box.getBoundingClientRect(), s = svg.getBoundingClientRect();
  return {fits: s.left >= b.left - 1 && s.right <= b.right + 1,
          scrolls: box.scrollWidth > box.clientWidth + 1,
          page: document.documentElement.scrollWidth, svg: s.width, box: b.width,
          text: [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect().height)};
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    need_browser()
    root = tmp_path_factory.mktemp("layout")
    db = root / "demo.db"
    approve = [
        "skills", "approve", SKILL, "--digest", DIGEST, "--capability", "fs.read",
        "--capability", "net.http", "--reason", PROSE, "--by", "alice@example.com",
        "--db", str(db),
    ]  # fmt: skip
    for args in (
        ["replay", str(SAMPLES / "sessions" / "coding-agent.jsonl"), "--db", str(db)],
        approve,
    ):
        done = run_agbom(*args, cwd=root)
        assert done.returncode in (0, 1), done.stderr
    reviewers = root / "reviewers.json"
    token = add_reviewer(reviewers, "carol", "viewer")
    server = Served(db=db, log=root / "serve.log", extra=["--reviewers-file", str(reviewers)])
    server.start()
    try:
        yield server, token
    finally:
        server.stop()


def _signed_in(served: Served, token: str, width: int, failed: list[str]) -> Any:
    """A chromium page ``width`` px wide, signed in as the viewer; each response of 400 or
    more and each console error (a CSP violation is one) is added to ``failed``."""
    return signed_in_page(served.url, token, width, failed)


@pytest.mark.parametrize("width", [1280, 800])
def test_the_pages_fit_wrap_between_words_and_load_everything(
    site: tuple[Served, str], width: int
) -> None:
    served, token = site
    failed: list[str] = []
    with _signed_in(served, token, width, failed) as page:
        page.goto(f"{served.url}/ui/agent?id=coding-agent")
        graph = page.evaluate(GRAPH_FITS)
        page.screenshot(path=str(ARTIFACTS / f"agent-{width}.png"), full_page=True)
        assert graph["fits"] and not graph["scrolls"], graph
        assert graph["page"] <= width, graph
        assert min(graph["text"]) >= 7, graph  # the labels stay readable when scaled

        page.goto(f"{served.url}/ui/decisions")
        page.screenshot(path=str(ARTIFACTS / f"decisions-{width}.png"), full_page=True)
        assert page.evaluate(SPLIT_WORDS, "#decision-rows") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        page.goto(f"{served.url}/ui/skill?id={SKILL}&digest={DIGEST}")
        page.screenshot(path=str(ARTIFACTS / f"history-{width}.png"), full_page=True)
        assert PROSE.split()[0] in page.locator("#history").inner_text()
        assert page.evaluate(SPLIT_WORDS, "#history") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width

        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert icon and icon.startswith("/ui/static/")
        fetched = page.request.get(f"{served.url}{icon}")
        assert fetched.status == 200
        assert fetched.headers["content-type"].startswith("image/svg+xml")
    assert failed == [], failed  # no 404 (favicon), no CSP violation


def test_explain_reads_as_sentences_on_the_page_and_in_the_cli(
    site: tuple[Served, str], tmp_path: Path
) -> None:
    served, token = site
    with _signed_in(served, token, 800, []) as page:
        page.goto(f"{served.url}/ui/explain?session={SESSION_ID}&entry=2")
        shown = page.locator("main").inner_text()
    cli = run_agbom(
        "explain", "--session", SESSION_ID, "--entry", "2", "--db", str(served.db), cwd=tmp_path
    )
    assert cli.returncode == 0, cli.stderr
    as_json = run_agbom(
        "explain", "--session", SESSION_ID, "--entry", "2", "--db", str(served.db),
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    reasons = [r for e in json.loads(as_json.stdout)["explanations"] for r in e["reasons"]]
    whys = [
        f["explanation"] for e in json.loads(as_json.stdout)["explanations"] for f in e["findings"]
    ]
    assert reasons and whys
    for text in (shown, cli.stdout, *reasons, *whys):
        assert not any(mark in text for mark in INTERNAL), text
    # Each rule says what it checks in a sentence, and each finding why, in words.
    sentence = (
        "It matches when type is mcp_server and version is not pinned and either it has a purl, "
        "or it has no endpoint and it has no command."
    )
    assert sentence in cli.stdout and sentence in shown
    assert "It forbids a path from a component where type is skill to one where type is tool" in (
        shown
    )
    assert any(w.endswith("type is mcp_server; version is not pinned; it has a purl; no version "
                          "is given.") for w in whys)  # fmt: skip
