"""Vendors' documented installers: a download run by a shell that fetches exactly one HTTPS URL
of a vendor's own installer is rated low (``vendor-installer``) by the content checks and the
runtime pack alike, whatever the shell (``curl ... | sh`` or ``irm ... | iex``). One table,
below both."""

from __future__ import annotations

import re

# Vendors' documented installers, fetched over HTTPS from the vendor's own address: still
# reported (what runs was not reviewed), at low severity as `vendor-installer`.
VENDOR_INSTALLERS = frozenset(
    {
        "get.docker.com",
        "get.docker.com/",
        "test.docker.com",
        "sh.rustup.rs",
        "astral.sh/uv/install.sh",
        "install.python-poetry.org",
        "raw.githubusercontent.com/homebrew/install/head/install.sh",
        "deno.land/install.sh",
        "bun.sh/install",
        "get.pnpm.io/install.sh",
        # The same vendors' PowerShell installers (irm URL | iex): rated as their sh ones.
        "astral.sh/uv/install.ps1",
        "bun.sh/install.ps1",
        "deno.land/install.ps1",
        "get.pnpm.io/install.ps1",
        "community.chocolatey.org/install.ps1",
        "get.scoop.sh",
        "dot.net/v1/dotnet-install.ps1",
        "dot.net/v1/dotnet-install.sh",
        "ollama.com/install.sh",
        "ollama.com/install.ps1",
        "claude.ai/install.sh",
        "claude.ai/install.ps1",
        "astral.sh/ruff/install.sh",
        "astral.sh/ruff/install.ps1",
    }
)
_URL = re.compile(r"(?i)\bhttps?://[^\s'\"|;)&>]+")


def is_vendor_installer(matched: str) -> bool:
    """``matched`` fetches exactly one URL, over HTTPS, and it is a vendor's documented
    installer (:data:`VENDOR_INSTALLERS`)."""
    urls = _URL.findall(matched)
    if len(urls) != 1 or not urls[0].lower().startswith("https://"):
        return False
    where = urls[0][len("https://") :].lower()
    return where.rstrip("/") in VENDOR_INSTALLERS or where in VENDOR_INSTALLERS
