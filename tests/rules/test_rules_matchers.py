"""Edge cases of each matcher: versions, purls, hosts, capabilities, pinning."""

from __future__ import annotations

import pytest

from agbom.rules.matchers import (
    EndpointIs,
    MatchSpecError,
    PurlIs,
    Subject,
    VersionIn,
    compile_match,
    covers,
    normalize_host,
    unpinned_reason,
)


def subj(**data: object) -> Subject:
    return Subject(str(data.get("id", "x")), str(data.get("type", "mcp_server")), data)


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        ("<2.0", "1.9.9", True),
        ("<2.0", "2.0", False),
        ("<2.0", "1.9rc1", True),  # pre-releases inside the range are caught
        (">=1.2,<1.3", "1.2", True),
        (">=1.2,<1.3", "1.3", False),
        ("1.2.3", "1.2.3", True),  # a bare version means exactly it
        ("1.2.3", "1.2.4", False),
        ("<=1.0", "not-a-version", False),
    ],
)
def test_pep440_bounds(spec: str, version: str, expected: bool) -> None:
    assert VersionIn(spec, "pep440").contains(version, "pypi") is expected


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        ("^1.2.3", "1.2.3", True),
        ("^1.2.3", "1.99.0", True),
        ("^1.2.3", "2.0.0", False),
        ("^1.2.3", "1.2.2", False),
        ("~1.2", "1.2.9", True),
        ("~1.2", "1.3.0", False),
        (">=1.0.0 <2.0.0", "2.0.0", False),
        ("1.x || >=3.0.0", "3.1.0", True),
        ("1.x || >=3.0.0", "2.5.0", False),
        ("1.2.3 - 2.3.4", "2.3.4", True),
        ("1.2.3 - 2.3.4", "2.3.5", False),
    ],
)
def test_npm_ranges(spec: str, version: str, expected: bool) -> None:
    assert VersionIn(spec, "npm").contains(version, "npm") is expected


def test_auto_scheme_follows_purl_type() -> None:
    matcher = VersionIn("^1.2.0")  # only npm can parse a caret range
    assert matcher(subj(version="1.5.0", purl="pkg:npm/a@1.5.0"))
    assert not matcher(subj(version="2.0.0", purl="pkg:npm/a@2.0.0"))


@pytest.mark.parametrize(
    ("spec", "version", "expected"),
    [
        ("vers:npm/>=1.0.0|<2.0.0", "1.0.0", True),
        ("vers:npm/>=1.0.0|<2.0.0", "2.0.0", False),
        ("vers:pypi/>=1.0|<2.0|!=1.5", "1.5", False),
        ("vers:pypi/>=1.0|<2.0|!=1.5", "1.6", True),
    ],
)
def test_vers_ranges(spec: str, version: str, expected: bool) -> None:
    assert VersionIn(spec).contains(version, None) is expected


@pytest.mark.parametrize("bad", ["vers:npm/>=1.0.0|<x", ">>>1", ""])
def test_invalid_version_ranges_are_rejected(bad: str) -> None:
    with pytest.raises(MatchSpecError):
        VersionIn(bad)


def test_unknown_version_never_matches_a_range() -> None:
    assert not VersionIn("<99")(subj(version=None))


def test_purl_exact_not_substring() -> None:
    matcher = PurlIs("pkg:npm/left-pad")
    assert matcher(subj(purl="pkg:npm/left-pad@1.3.0"))
    assert not matcher(subj(purl="pkg:npm/left-pad-extra@1.0.0"))
    assert not matcher(subj(purl="pkg:npm/evil/left-pad@1.0.0"))
    assert not matcher(subj(purl="pkg:pypi/left-pad@1.0.0"))
    assert not matcher(subj(purl="not a purl"))


def test_purl_scoped_npm_and_pypi_normalization() -> None:
    assert PurlIs("pkg:npm/%40acme/tool")(subj(purl="pkg:npm/%40acme/tool@1.0.0"))
    assert PurlIs("pkg:pypi/Foo_Bar")(subj(purl="pkg:pypi/foo-bar@2.0"))


def test_purl_version_and_qualifiers() -> None:
    pinned = PurlIs("pkg:pypi/requests@2.31.0")
    assert pinned(subj(purl="pkg:pypi/requests@2.31.0"))
    assert not pinned(subj(purl="pkg:pypi/requests@2.31.1"))
    qualified = PurlIs("pkg:deb/debian/curl?arch=amd64")
    assert qualified(subj(purl="pkg:deb/debian/curl@7.0?arch=amd64&distro=bookworm"))
    assert not qualified(subj(purl="pkg:deb/debian/curl@7.0?arch=arm64"))
    assert not qualified(subj(purl="pkg:deb/debian/curl@7.0"))


def test_host_normalization() -> None:
    assert normalize_host("Example.COM.") == "example.com"
    assert normalize_host("[::1]") == "::1"
    assert normalize_host("bücher.example") == "xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a", True),
        ("https://api.example.com/a", True),
        ("https://API.Example.COM./a", True),
        ("https://evil-example.com/a", False),
        ("https://example.com.evil.net/a", False),
        ("https://notexample.com", False),
        ("stdio", False),
    ],
)
def test_host_suffix_confusion(url: str, expected: bool) -> None:
    assert EndpointIs({"host_suffix": "example.com"})(subj(endpoint=url)) is expected


def test_host_suffix_pattern_forms_are_equivalent() -> None:
    for pattern in ("*.example.com", ".example.com", "EXAMPLE.com."):
        assert EndpointIs({"host_suffix": pattern})(subj(endpoint="https://a.example.com"))


def test_endpoint_scheme_port_loopback() -> None:
    plain = EndpointIs({"scheme": "http", "loopback": False})
    assert plain(subj(endpoint="http://mcp.example.com/"))
    assert not plain(subj(endpoint="http://127.0.0.1:3000/"))
    assert not plain(subj(endpoint="http://localhost/"))
    assert not plain(subj(endpoint="http://[::1]:8080/"))
    assert not plain(subj(endpoint="https://mcp.example.com/"))
    assert EndpointIs({"port": 443})(subj(endpoint="https://x.example"))  # default port
    assert not EndpointIs({"port": 8443})(subj(endpoint="https://x.example"))
    assert EndpointIs({"present": False})(subj(endpoint=None))
    assert not EndpointIs({"present": False})(subj(endpoint="https://x"))
    assert not EndpointIs({"host": "x.example"})(subj(endpoint="http://x.example:99999/"))


def test_capability_coverage() -> None:
    assert covers("fs.*", "fs.read")
    assert covers("fs", "fs.read")
    assert covers("FS.Read", "fs.read")
    assert covers("*", "process.execute")
    assert not covers("fs.read", "fs.write")
    assert not covers("fs", "fsx.read")
    assert not covers("fs.read", "fs")


@pytest.mark.parametrize(
    ("data", "pinned"),
    [
        ({"version": "1.2.3"}, True),
        ({"version": None}, False),
        ({"version": "latest"}, False),
        ({"version": "^1.2.0"}, False),
        ({"version": None, "purl": "pkg:npm/a@latest"}, False),
        ({"version": None, "purl": "pkg:npm/a@1.0.0"}, True),
        ({"version": "1.0.0", "purl": "pkg:npm/a"}, True),
    ],
)
def test_unpinned(data: dict[str, object], pinned: bool) -> None:
    assert (unpinned_reason(subj(**data)) is None) is pinned


def test_names_are_case_insensitive_and_globs_anchor() -> None:
    match = compile_match({"name": ["Evil", "bad-*"]})
    assert match(subj(name="evil"))
    assert match(subj(name="bad-thing"))
    assert not match(subj(name="not-bad-thing"))
    assert not match(subj(name="evil2"))


def test_combinators_and_unknown_keys() -> None:
    match = compile_match({"any_of": [{"type": "tool"}, {"not": {"provider": "acme"}}]})
    assert match(subj(type="tool", provider="acme"))
    assert match(subj(type="model", provider="other"))
    assert not match(subj(type="model", provider="ACME"))
    with pytest.raises(MatchSpecError, match="unknown match key") as info:
        compile_match({"all_of": [{"nme": "x"}]})
    assert info.value.key == "match.all_of[0].nme"
    with pytest.raises(MatchSpecError, match="unknown component type"):
        compile_match({"type": "widget"})


def test_covered_by_any_agrees_with_covers() -> None:
    from itertools import product

    from agbom.rules.matchers import covered_by_any

    names = ["*", "fs", "fs.*", "fs.read", "FS.Write", "net.http", "net", "process.execute"]
    caps = ["fs", "fs.read", "fs.write", "fs.read.deep", "fsx.read", "net.http.get", "process"]
    for size in range(3):
        for declared in product(names, repeat=size):
            for cap in caps:
                assert covered_by_any(declared, cap) == any(covers(d, cap) for d in declared)
