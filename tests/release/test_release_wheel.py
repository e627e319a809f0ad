"""What the wheel and the sdist hold, and the metadata PyPI shows (issue 43)."""

from __future__ import annotations

import email.parser
import re
import subprocess
import sys
import tarfile
import zipfile

import yaml

import agbom
from tests.release.release_tools import REPO, Dist, tracked_files

# What a wheel install needs at run time, by what uses it. Each line is a file the code opens
# from the package (importlib.resources or a path next to a module).
REQUIRED = [
    "agbom/py.typed",
    # rule packs, each with its unit tests beside it (one copy of each: issue 44 item 4)
    "agbom/rules/packs/default.yaml",
    "agbom/rules/packs/default_test.yaml",
    "agbom/rules/packs/flow-strict.yaml",
    "agbom/rules/packs/flow-strict_test.yaml",
    "agbom/rules/packs/runtime/baseline.yaml",
    "agbom/rules/packs/runtime/baseline_test.yaml",
    "agbom/rules/packs/runtime/baseline_tools_test.yaml",
    "agbom/rules/schemas/rule-pack.json",
    # the AgBOM and ACS schemas (validation of every input)
    "agbom/inventory/schemas/document.json",
    "agbom/inventory/schemas/component.json",
    "agbom/inventory/schemas/component-skill.json",
    "agbom/protocol/schemas/request-envelope.json",
    "agbom/protocol/schemas/response-envelope.json",
    "agbom/protocol/schemas/handshake-hello.json",
    # CycloneDX and SPDX export validation, with the schemas' source and licence notice
    "agbom/export/schemas/bom-1.6.SNAPSHOT.schema.json",
    "agbom/export/schemas/bom-1.7.SNAPSHOT.schema.json",
    "agbom/export/schemas/spdx.SNAPSHOT.schema.json",
    "agbom/export/schemas/jsf-0.82.SNAPSHOT.schema.json",
    "agbom/export/schemas/cryptography-defs.SNAPSHOT.schema.json",
    "agbom/export/schemas/README.md",
    # the OPA bundle's example Rego policy and the read API's OpenAPI document
    "agbom/export/opa/skill_load.rego",
    "agbom/transports/openapi.json",
    # the review page: templates and page assets
    "agbom/review/templates/base.html",
    "agbom/review/templates/login.html",
    "agbom/review/templates/queue.html",
    "agbom/review/templates/skill.html",
    "agbom/review/static/review.css",
    "agbom/review/static/review.js",
    # generated schema validators and the pre-commit hooks' entry point
    "agbom/_validators/__init__.py",
    "agbom/cli/precommit.py",
]


def _wheel_names(dist: Dist) -> set[str]:
    with zipfile.ZipFile(dist.wheel) as wheel:
        return set(wheel.namelist())


def _metadata(dist: Dist) -> email.message.Message:
    with zipfile.ZipFile(dist.wheel) as wheel:
        (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(wheel.read(name).decode("utf-8"))


def test_the_wheel_holds_every_file_the_package_needs(dist: Dist) -> None:
    names = _wheel_names(dist)
    assert [f for f in REQUIRED if f not in names] == []
    # Whatever else lies under agbom/ in the checkout ships too (a new pack, schema, template,
    # host plugin file): a kind of file pyproject's package-data misses fails here.
    assert [f for f in tracked_files("agbom") if f not in names] == []


def test_the_wheel_holds_the_package_and_its_metadata_only(dist: Dist) -> None:
    names = _wheel_names(dist)
    tops = {n.split("/", 1)[0] for n in names}
    version = agbom.__version__
    assert tops == {"agbom", f"agbom-{version}.dist-info", f"agbom-{version}.data"}
    # The one data file: the hook launcher, a script the installer points at its interpreter.
    launcher = f"agbom-{version}.data/scripts/agbom-hook"
    assert [n for n in names if n.startswith(f"agbom-{version}.data/")] == [launcher]
    with zipfile.ZipFile(dist.wheel) as wheel:
        first, rest = wheel.read(launcher).decode().split("\n", 1)
    assert first == "#!python"
    assert rest == (REPO / "bin" / "agbom-hook").read_text("utf-8").split("\n", 1)[1]
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".db"))]
    shipped = {n for n in names if n.startswith("agbom/")}
    assert shipped == set(tracked_files("agbom")), "the wheel holds files the checkout does not"
    assert f"agbom-{version}.dist-info/licenses/LICENSE" in names
    with zipfile.ZipFile(dist.wheel) as wheel:
        entry_points = wheel.read(f"agbom-{version}.dist-info/entry_points.txt").decode()
        licence = wheel.read(f"agbom-{version}.dist-info/licenses/LICENSE").decode()
    assert "agbom = agbom.cli:main" in entry_points
    assert licence == (REPO / "LICENSE").read_text("utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence


def test_the_wheel_metadata_is_complete(dist: Dist) -> None:
    meta = _metadata(dist)
    assert meta["Name"] == "agbom"
    assert meta["Version"] == agbom.__version__  # one source: agbom/__init__.py
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta["License-File"] == "LICENSE"
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# agbom")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert set(urls) >= {"Homepage", "Source", "Issues", "Changelog", "Documentation"}
    assert all(u.startswith("https://github.com/agbom/agbom") for u in urls.values())
    classifiers = meta.get_all("Classifier")
    for expected in (
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Topic :: Security",
        "Typing :: Typed",
    ):
        assert expected in classifiers
    # No licence classifier beside the SPDX expression (PEP 639 forbids both).
    assert not [c for c in classifiers if c.startswith("License ::")]


def test_twine_check_strict_passes_on_the_sdist_and_the_wheel(dist: Dist) -> None:
    files = [str(dist.wheel), *([str(dist.sdist)] if dist.sdist else [])]
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == len(files)


def test_the_sdist_holds_the_licence_tests_docs_and_samples(dist: Dist) -> None:
    assert dist.sdist is not None, "no sdist beside the wheel"
    with tarfile.open(dist.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for expected in (
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "pyproject.toml",
        "docs/deploying.md",
        "samples/approvals.yaml",
        "rules/example-bans.yaml",
        "tests/conftest.py",
        "tests/release/test_release_wheel.py",
        "bin/agbom-hook",
        "tests/export/spdx-3.0.1/spdx-model.ttl",
    ):
        assert expected in names
    assert [f for f in tracked_files("agbom") if f not in names] == []
    assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".db"))]


def test_the_version_is_written_once_and_its_copies_are_checked() -> None:
    """agbom/__init__.py holds the version; pyproject reads it; the two files that must name
    a release by value (the Action's pinned install, the image's label default) say the same."""
    pyproject = (REPO / "pyproject.toml").read_text("utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "agbom.__version__" }' in pyproject
    assert not re.search(r'^version = "', pyproject, flags=re.M)
    action = yaml.safe_load((REPO / "action.yml").read_text("utf-8"))
    assert action["inputs"]["version"]["default"] == agbom.__version__
    containerfile = (REPO / "Containerfile").read_text("utf-8")
    assert f"ARG VERSION={agbom.__version__}\n" in containerfile
    done = subprocess.run(
        [sys.executable, "-m", "agbom", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout == f"agbom {agbom.__version__}\n"
