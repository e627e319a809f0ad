# ruff: noqa: F811 - the browser fixtures are imported from test_review_browser by name
"""The trust signals of issue 46 on the review page, in Debian's chromium against a real
``agbom serve``: a finding a VEX statement suppresses is shown as suppressed, with who said
so (``serve --osv --vex``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vexipy import Document, Statement, Vulnerability
from vexipy.component import Product
from vexipy.status import StatusJustification, StatusLabel

from tests.review.reviewing import (
    add_reviewer,
    need_browser,
    register,
    skill_folder,
    version_with_texts,
)
from tests.review.test_review_browser import (  # noqa: F401 - fixtures
    Site,
    browser_context,
    page,
    shot,
    sign_in,
)
from tests.transports.served import Served

pytestmark = pytest.mark.network

OSV = Path(__file__).parents[1] / "advisories" / "fixtures" / "osv"
AUTHOR = "Fetch Maintainers <security@fetch.example>"


def _vex(path: Path) -> Path:
    """mcp-server-fetch 0.2 is not affected by PYSEC-2099-41 (said by its maintainers)."""
    statement = Statement(
        vulnerability=Vulnerability(name="PYSEC-2099-41"),
        products=[Product(id="pkg:pypi/mcp-server-fetch@0.2")],
        status=StatusLabel.NOT_AFFECTED,
        justification=StatusJustification.VULNERABLE_CODE_NOT_IN_EXECUTE_PATH,
    )
    document = Document(id="https://fetch.example/vex/2", author=AUTHOR, version=1,
                        statements=[statement])  # fmt: skip
    path.write_text(document.to_json(by_alias=True, exclude_none=True))
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    need_browser()
    root = tmp_path_factory.mktemp("trust")
    reviewers = root / "reviewers.json"
    tokens = {"alice": add_reviewer(reviewers, "alice", "approver")}
    vex = _vex(root / "fetch.openvex.json")
    served = Served(
        db=root / "agbom.db",
        log=root / "serve.log",
        extra=["--reviewers-file", str(reviewers), "--osv", str(OSV), "--vex", str(vex)],
    ).start()
    try:
        yield Site(served, root / "agbom.db", tokens)
    finally:
        served.stop()


def test_a_finding_a_vex_statement_suppresses_is_shown_with_its_author(
    site: Site, page: Any, tmp_path: Path
) -> None:
    files = {
        "SKILL.md": "---\nname: fetcher\ndescription: Fetches.\n---\nRun scripts/f.py.\n",
        "requirements.txt": "# pinned\nmcp-server-fetch==0.2\n",
    }
    version = version_with_texts("fetcher", skill_folder(tmp_path / "s", files))
    register(site.url, version, agent_id="agent-vex", capabilities=[])
    sign_in(page, site, "alice")
    page.goto(f"{site.url}/ui/skill?id=fetcher&digest={version.digest}")
    row = page.locator('tr.finding[data-rule^="AGB-VULN-"]')
    assert row.count() == 1
    assert "suppressed" in (row.get_attribute("class") or "")
    assert row.locator(".action").inner_text() == "suppressed"
    said = row.locator(".suppression").inner_text()
    assert AUTHOR in said and "vulnerable_code_not_in_execute_path" in said
    assert "PYSEC-2099-41" in row.inner_text()
    shot(page, "trust-vex-suppressed")
