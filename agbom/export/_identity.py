"""Package identities and versions the exports derive from what an AgBOM already says.

Shared by the CycloneDX and SPDX exports so that both name the same things the same way
(docs/cyclonedx-mapping.md, "Package identity"). Nothing here is guessed: a purl is derived
only where the source names a package in a registry that has a purl type, and a version only
where one was declared, else from the AgBOM hash, and then marked as such.
"""

from __future__ import annotations

import functools
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from agbom.inventory import AgBOM, Component, ComponentType

__all__ = [
    "DERIVED_VERSION_PREFIX",
    "MAX_DECLARED_PACKAGES",
    "agent_version",
    "declared_packages",
    "hub_model_purl",
    "parsed_purl",
]

DERIVED_VERSION_PREFIX = "0.0.0+agbom."
"""An agent without a declared version gets ``0.0.0+agbom.<first 12 hex of agbom_hash>``.

SBOM consumers need a version for the described application (cdxgen's SCVS-2.11, the
project version in Dependency-Track). An agent configuration has no release number, but the
AgBOM hash names exactly one inventory. As semver, ``0.0.0`` sorts below any real release
and ``+agbom.…`` is build metadata, which ordering ignores.
"""

MAX_DECLARED_PACKAGES = 10_000
"""At most this many declared packages per component are exported (a bundle can ship
thousands; the rest are counted in a property, never silently dropped)."""

# Names Hugging Face goes by in client configs (provider fields), lower-cased.
_HF_PROVIDERS = frozenset({"huggingface", "hugging face", "hugging-face", "hf", "hf-inference"})
_HF_HOSTS = ("huggingface.co", "hf.co")
# A Hub repository id: ORG/NAME, each of letters, digits, '-', '_', '.' (Hub rules).
_HF_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_COMMIT = re.compile(r"[0-9a-fA-F]{40}")


@functools.cache
def parsed_purl(value: str) -> Any:
    """The parsed ``PackageURL``, or ``None`` when ``value`` is not a valid purl."""
    from packageurl import PackageURL

    try:
        return PackageURL.from_string(value)
    except ValueError:
        return None


def agent_version(agbom: AgBOM) -> tuple[str, bool]:
    """(the agent's version, whether it was declared): ``agent.version``, else the derived
    :data:`DERIVED_VERSION_PREFIX` form."""
    declared = agbom.agent.get("version")
    if isinstance(declared, str) and declared.strip():
        return declared, True
    digest = agbom.agbom_hash.partition(":")[2]
    return f"{DERIVED_VERSION_PREFIX}{digest[:12]}", False


def _hf_repo_from_name(name: str) -> str | None:
    """``ORG/NAME`` from ``ORG/NAME``, ``hf.co/ORG/NAME[:tag]`` or ``huggingface.co/...``."""
    text = name.strip()
    for host in _HF_HOSTS:
        if text.lower().startswith(host + "/"):
            text = text[len(host) + 1 :]
            text = text.split(":", 1)[0]  # an Ollama quantization tag, not a revision
            break
    return text if _HF_REPO.fullmatch(text) else None


def _hf_repo_from_url(url: str) -> str | None:
    """``ORG/NAME`` from a Hub or Inference API URL that names one model repository."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if not any(host == h or host.endswith("." + h) for h in _HF_HOSTS):
        return None
    path = [urllib.parse.unquote(p) for p in parts.path.split("/") if p]
    if path[:1] == ["models"]:  # api-inference.huggingface.co/models/ORG/NAME
        path = path[1:]
    if len(path) < 2 or host.startswith(("router.", "api.")):
        return None  # a router or API root serves many models
    repo = f"{path[0]}/{path[1]}"
    return repo if _HF_REPO.fullmatch(repo) else None


def hub_model_purl(component: Component) -> tuple[str, str] | None:
    """(``pkg:huggingface/ORG/NAME[@commit]``, the field it came from) for a model that
    names a Hugging Face Hub repository, else ``None``.

    The repository id comes from the model's ``name`` when its provider is Hugging Face or the
    name carries the Hub host (``hf.co/ORG/NAME``, as Ollama pulls them), else from an
    ``endpoint`` on the Hub's hosts. The purl's version is the model revision, a Git commit
    (purl-spec's huggingface type), so a ``version`` is used only when it is a 40-hex commit.
    """
    if component.type is not ComponentType.MODEL:
        return None
    data = component.data
    provider = data.get("provider")
    from_hub = isinstance(provider, str) and provider.strip().lower() in _HF_PROVIDERS
    name = component.name
    repo, field = None, ""
    lowered = name.strip().lower()
    if from_hub or lowered.startswith(tuple(h + "/" for h in _HF_HOSTS)):
        repo, field = _hf_repo_from_name(name), "name"
    endpoint = data.get("endpoint")
    if repo is None and isinstance(endpoint, str):
        repo, field = _hf_repo_from_url(endpoint), "endpoint"
    if repo is None:
        return None
    from packageurl import PackageURL

    org, model = repo.split("/", 1)
    version = component.version
    revision = version.lower() if isinstance(version, str) and _COMMIT.fullmatch(version) else None
    try:
        purl = PackageURL(type="huggingface", namespace=org, name=model, version=revision)
    except ValueError:
        return None
    return purl.to_string(), field


def declared_packages(data: Mapping[str, Any]) -> tuple[list[Any], int]:
    """(the parsed, versioned purls of a component's ``packages`` list, sorted and without
    duplicates, at most :data:`MAX_DECLARED_PACKAGES`; how many more there were).

    The scanner lists there what a skill pins (``requirements.txt``, ``package.json``) and
    what an MCP bundle ships (``node_modules``, ``*.dist-info``): exact versions only.
    """
    declared = data.get("packages")
    if not isinstance(declared, list):
        return [], 0
    seen: dict[str, Any] = {}
    for text in declared:
        if not isinstance(text, str) or text in seen:
            continue
        purl = parsed_purl(text)
        if purl is not None and purl.version:
            seen[text] = purl
    ordered = [seen[key] for key in sorted(seen)]
    return ordered[:MAX_DECLARED_PACKAGES], max(0, len(ordered) - MAX_DECLARED_PACKAGES)
