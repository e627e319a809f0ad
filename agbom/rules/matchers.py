"""Compiled predicates over components: names, versions, purls, digests, endpoints, fields.

Everything here is built once when a pack loads (globs become one regex, version ranges are
parsed, hosts normalized) so that evaluating a predicate is a few dict and string operations.
Each predicate also describes itself, which is what ``agbom explain`` prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from packageurl import PackageURL
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agbom.inventory import ComponentType, normalize_algorithm
from agbom.rules.predicate import Predicate, TextMatcher
from agbom.rules.subjects import (
    Endpoint,
    MatchSpecError,
    Subject,
    _norm_purl_name,
    _norm_purl_namespace,
    allowed_tool_capabilities,
    capabilities_of,
    covered_by_any,
    covers,
    is_glob,
    is_loopback,
    normalize_caps,
    normalize_host,
    parse_endpoint,
    parse_purl,
    purl_index_key,
    unpinned_reason,
)

# The subject helpers and the predicate base (rules/predicate.py) are re-exported: callers
# import every matcher name from here.
__all__ = [
    "AllOf",
    "AnyOf",
    "CapabilityIs",
    "DigestIs",
    "Endpoint",
    "EndpointIs",
    "FieldsAre",
    "MATCH_KEYS",
    "MatchSpecError",
    "Not",
    "Pinned",
    "Predicate",
    "Provenance",
    "PurlIs",
    "Subject",
    "TextField",
    "TextMatcher",
    "TypeIs",
    "VersionIn",
    "allowed_tool_capabilities",
    "capabilities_of",
    "compile_match",
    "covered_by_any",
    "covers",
    "index_hints",
    "is_glob",
    "is_loopback",
    "normalize_caps",
    "normalize_host",
    "parse_endpoint",
    "parse_purl",
    "purl_index_key",
    "unpinned_reason",
]

# One npm comparator: optional operator, then a (partial, x-wildcard) semver version.
_NPM_COMPARATOR = re.compile(
    r"(?:\^|~>?|>=|<=|>|<|=)?\s*v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}"
    r"(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?|[xX*]"
)

# -- predicates -------------------------------------------------------------------------------


def _as_list(value: Any, key: str) -> list[Any]:
    if isinstance(value, list):
        if not value:
            raise MatchSpecError(key, "must not be an empty list")
        return value
    return [value]


def _as_strings(value: Any, key: str) -> list[str]:
    values = _as_list(value, key)
    for v in values:
        if not isinstance(v, str) or not v:
            raise MatchSpecError(key, "must be a non-empty string or a list of them")
    return values


class TypeIs(Predicate):
    key = "type"

    def __init__(self, value: Any) -> None:
        names = _as_strings(value, "type")
        known = {t.value for t in ComponentType} | {"agent"}
        for name in names:
            if name not in known:
                raise MatchSpecError(
                    "type", f"unknown component type {name!r} (known: {', '.join(sorted(known))})"
                )
        self.types = frozenset(names)

    def __call__(self, subject: Subject) -> bool:
        return subject.type in self.types

    def describe(self) -> str:
        return "type is " + " or ".join(sorted(self.types))

    def negated(self) -> str:
        return "type is not " + " or ".join(sorted(self.types))


class TextField(Predicate):
    """``name`` / ``id`` / ``provider``: exact (case-insensitive) or glob."""

    def __init__(self, key: str, value: Any) -> None:
        self.key = key
        self.matcher = TextMatcher(_as_strings(value, key))

    def _value(self, subject: Subject) -> str | None:
        if self.key == "id":
            return subject.id
        if self.key == "name":
            return subject.name
        value = subject.data.get(self.key)
        return value if isinstance(value, str) else None

    def __call__(self, subject: Subject) -> bool:
        return self.matcher(self._value(subject))

    def describe(self) -> str:
        return f"{self.key} matches {self.matcher}"


class VersionIn(Predicate):
    """A version range: PEP 440 specifiers, npm semver ranges, or a ``vers:`` range."""

    key = "version"

    def __init__(self, value: Any, scheme: str = "auto") -> None:
        if not isinstance(value, str) or not value.strip():
            raise MatchSpecError("version", "must be a non-empty version range string")
        self.text = value.strip()
        self.scheme = scheme
        self._verdicts: dict[tuple[str, str | None], bool] = {}
        self.pep440: SpecifierSet | None = None
        self.npm: Any = None
        self.vers: Any = None
        if self.text.startswith("vers:"):
            from univers.version_range import VersionRange  # imported only when needed

            try:
                self.vers = VersionRange.from_string(self.text)  # type: ignore[no-untyped-call]
            except Exception as exc:  # univers raises many types for bad input
                raise MatchSpecError("version", f"invalid vers range {self.text!r}: {exc}") from exc
            return
        errors: list[str] = []
        if scheme in ("auto", "pep440"):
            try:
                self.pep440 = SpecifierSet(_pep440_text(self.text))
            except InvalidSpecifier as exc:
                errors.append(f"not a PEP 440 specifier ({exc})")
        if scheme in ("auto", "npm", "semver"):
            from univers.version_range import NpmVersionRange

            try:
                # univers accepts some junk (">>>1"); check the syntax strictly first.
                if not _npm_syntax_ok(self.text):
                    raise ValueError("bad comparator syntax")
                self.npm = NpmVersionRange.from_native(self.text)  # type: ignore[no-untyped-call]
            except Exception as exc:
                errors.append(f"not an npm semver range ({exc})")
        if self.pep440 is None and self.npm is None:
            raise MatchSpecError(
                "version", f"invalid version range {self.text!r}: " + "; ".join(errors)
            )

    def contains(self, version: str, purl_type: str | None) -> bool:
        """Whether ``version`` is in the range (cached: parsing a version is the slow part)."""
        key = (version, purl_type)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._contains(version, purl_type)
            if len(self._verdicts) < 4096:  # bounded: versions come from the inventory
                self._verdicts[key] = verdict
        return verdict

    def _contains(self, version: str, purl_type: str | None) -> bool:
        if self.vers is not None:
            try:
                return self.vers.version_class(version) in self.vers
            except Exception:
                return False
        use_npm = self.npm is not None and (
            self.pep440 is None or purl_type == "npm" or self.scheme in ("npm", "semver")
        )
        if use_npm:
            from univers.versions import SemverVersion

            try:
                return SemverVersion(version.lstrip("v=")) in self.npm
            except Exception:
                return False
        assert self.pep440 is not None
        try:
            parsed = Version(version)
        except InvalidVersion:
            return False
        # Pre-releases inside the range count: a ban on <2.0 must also catch 1.9rc1.
        return self.pep440.contains(parsed, prereleases=True)

    def __call__(self, subject: Subject) -> bool:
        version = subject.version
        if version is None:
            return False
        purl = parse_purl(subject.data.get("purl"))
        return self.contains(version, purl.type if purl is not None else None)

    def describe(self) -> str:
        return f"version in {self.text}"


def _npm_syntax_ok(text: str) -> bool:
    for alternative in text.split("||"):
        alternative = alternative.strip()
        if not alternative:
            return False
        pieces = re.split(r"\s+-\s+", alternative)
        if len(pieces) > 2:
            return False
        for piece in pieces:
            tokens = re.findall(r"(?:\^|~>?|>=|<=|>|<|=)?\s*[^\s]+", piece)
            if not tokens or any(_NPM_COMPARATOR.fullmatch(t.strip()) is None for t in tokens):
                return False
    return True


def _pep440_text(text: str) -> str:
    # A bare version ("1.2.3") means exactly that version.
    if text[0].isdigit():
        return "==" + text
    return text


class PurlIs(Predicate):
    """purl type, namespace and name compared exactly (after each type's normalization).

    A version in the pattern must equal the component's; qualifiers in the pattern must all
    be present with equal values (extra qualifiers on the component are ignored); a subpath
    in the pattern must be equal.
    """

    key = "purl"

    def __init__(self, value: Any) -> None:
        self.patterns: list[tuple[str, str, str, str | None, dict[str, str], str | None]] = []
        self.texts = _as_strings(value, "purl")
        for text in self.texts:
            try:
                purl = PackageURL.from_string(text)
            except ValueError as exc:
                raise MatchSpecError("purl", f"invalid purl {text!r}: {exc}") from exc
            ptype = purl.type.lower()
            qualifiers = purl.qualifiers if isinstance(purl.qualifiers, dict) else {}  # type: ignore[redundant-expr]
            self.patterns.append(
                (
                    ptype,
                    _norm_purl_namespace(ptype, purl.namespace),
                    _norm_purl_name(ptype, purl.name),
                    purl.version,
                    {k.lower(): str(v) for k, v in qualifiers.items()},
                    purl.subpath,
                )
            )
        self.index_keys = frozenset(filter(None, (purl_index_key(t) for t in self.texts)))

    def __call__(self, subject: Subject) -> bool:
        purl = parse_purl(subject.data.get("purl"))
        if purl is None:
            return False
        ptype = purl.type.lower()
        namespace = _norm_purl_namespace(ptype, purl.namespace)
        name = _norm_purl_name(ptype, purl.name)
        qualifiers = purl.qualifiers if isinstance(purl.qualifiers, dict) else {}  # type: ignore[redundant-expr]
        for p_type, p_ns, p_name, p_version, p_qual, p_sub in self.patterns:
            if (p_type, p_ns, p_name) != (ptype, namespace, name):
                continue
            if p_version is not None and p_version != purl.version:
                continue
            if any(str(qualifiers.get(k)) != v for k, v in p_qual.items()):
                continue
            if p_sub is not None and p_sub != purl.subpath:
                continue
            return True
        return False

    def describe(self) -> str:
        return "purl is " + " or ".join(self.texts)


class DigestIs(Predicate):
    key = "digest"

    def __init__(self, value: Any) -> None:
        self.digests: set[tuple[str, str]] = set()
        for text in _as_strings(value, "digest"):
            algorithm, sep, hexval = text.partition(":")
            if not sep or not re.fullmatch(r"[0-9a-fA-F]{16,256}", hexval):
                raise MatchSpecError("digest", f"digest {text!r} must look like sha256:HEX")
            self.digests.add((normalize_algorithm(algorithm), hexval.lower()))

    def __call__(self, subject: Subject) -> bool:
        found = _digest_of(subject.data)
        return found is not None and found in self.digests

    def describe(self) -> str:
        return "digest is " + " or ".join(f"{a}:{v[:12]}…" for a, v in sorted(self.digests))


def _digest_of(data: Mapping[str, Any]) -> tuple[str, str] | None:
    for holder in (data.get("definition"), data):
        if isinstance(holder, Mapping):
            digest = holder.get("digest")
            if isinstance(digest, Mapping):
                return (
                    normalize_algorithm(str(digest.get("algorithm", ""))),
                    str(digest.get("value", "")).lower(),
                )
            if isinstance(digest, str) and ":" in digest:
                algorithm, _, value = digest.partition(":")
                return normalize_algorithm(algorithm), value.lower()
    return None


class EndpointIs(Predicate):
    """scheme, host (exact), host_suffix (the domain or its sub-domains), port, loopback."""

    key = "endpoint"
    _KEYS = frozenset({"present", "scheme", "host", "host_suffix", "port", "loopback"})

    def __init__(self, value: Any) -> None:
        if not isinstance(value, Mapping):
            raise MatchSpecError("endpoint", "must be an object")
        unknown = set(value) - self._KEYS
        if unknown:
            raise MatchSpecError(f"endpoint.{sorted(unknown)[0]}", "unknown endpoint key")
        self.spec = dict(value)
        self.present: bool | None = value.get("present")
        self.schemes = (
            frozenset(s.lower() for s in _as_strings(value["scheme"], "endpoint.scheme"))
            if "scheme" in value
            else None
        )
        self.hosts = (
            frozenset(normalize_host(h) for h in _as_strings(value["host"], "endpoint.host"))
            if "host" in value
            else None
        )
        self.suffixes: tuple[str, ...] | None = None
        if "host_suffix" in value:
            suffixes = []
            for s in _as_strings(value["host_suffix"], "endpoint.host_suffix"):
                s = normalize_host(s.removeprefix("*.").lstrip("."))
                if not s:
                    raise MatchSpecError("endpoint.host_suffix", "must name a domain")
                suffixes.append(s)
            self.suffixes = tuple(suffixes)
        self.ports: frozenset[int] | None = None
        if "port" in value:
            ports = _as_list(value["port"], "endpoint.port")
            if not all(isinstance(p, int) and 0 < p < 65536 for p in ports):
                raise MatchSpecError("endpoint.port", "must be a port number or a list of them")
            self.ports = frozenset(ports)
        self.loopback: bool | None = value.get("loopback")

    def __call__(self, subject: Subject) -> bool:
        raw = subject.data.get("endpoint")
        endpoint = parse_endpoint(raw) if isinstance(raw, str) and raw else None
        if self.present is not None:
            has = isinstance(raw, str) and bool(raw.strip())
            if has != self.present:
                return False
            if not self.present:
                return True
        if endpoint is None:
            # Only "present" can hold for an endpoint that is missing or not a URL.
            return self.present is True and len(self.spec) == 1
        if self.schemes is not None and endpoint.scheme not in self.schemes:
            return False
        if self.hosts is not None and endpoint.host not in self.hosts:
            return False
        if self.suffixes is not None and not any(
            endpoint.host == s or endpoint.host.endswith("." + s) for s in self.suffixes
        ):
            return False
        if self.ports is not None and endpoint.port not in self.ports:
            return False
        return self.loopback is None or is_loopback(endpoint.host) == self.loopback

    def describe(self) -> str:
        if self.present is False:
            return "it has no endpoint"
        parts = []
        if self.schemes is not None:
            parts.append("uses " + " or ".join(sorted(self.schemes)))
        if self.hosts is not None:
            parts.append("is on host " + " or ".join(sorted(self.hosts)))
        if self.suffixes is not None:
            parts.append("is under " + " or ".join(self.suffixes))
        if self.ports is not None:
            parts.append("is on port " + " or ".join(str(p) for p in sorted(self.ports)))
        if self.loopback is not None:
            parts.append("is on this machine" if self.loopback else "is not on this machine")
        if not parts:
            return "it has an endpoint"
        return "its endpoint " + " and ".join(parts)

    def negated(self) -> str:
        if set(self.spec) == {"present"}:
            return "it has an endpoint" if self.present is False else "it has no endpoint"
        return super().negated()


class CapabilityIs(Predicate):
    """A tool whose capability (or one of them) is covered by one of the given names."""

    key = "capability"

    def __init__(self, value: Any) -> None:
        self.names = tuple(c.lower() for c in _as_strings(value, "capability"))
        self._names = normalize_caps(self.names)  # normalized once, not per tool
        # Verdicts per capability name: a graph has thousands of tools but a handful of
        # distinct capabilities. Bounded, since names come from the inventory.
        self._verdicts: dict[str, bool] = {}

    def _covered(self, capability: str) -> bool:
        verdict = self._verdicts.get(capability)
        if verdict is None:
            verdict = covered_by_any(self._names, capability)
            if len(self._verdicts) < 4096:
                self._verdicts[capability] = verdict
        return verdict

    def matching(self, data: Mapping[str, Any]) -> list[str]:
        covered = self._covered
        return [c for c in capabilities_of(data) if covered(c)]

    def __call__(self, subject: Subject) -> bool:
        return bool(self.matching(subject.data))

    def describe(self) -> str:
        return "it has a capability within " + " or ".join(self.names)


class Pinned(Predicate):
    key = "pinned"

    def __init__(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise MatchSpecError("pinned", "must be true or false")
        self.want = value

    def __call__(self, subject: Subject) -> bool:
        return (unpinned_reason(subject) is None) == self.want

    def describe(self) -> str:
        return "version is pinned" if self.want else "version is not pinned"


class Provenance(Predicate):
    """``provenance: false`` matches components without ``registration_provenance``."""

    key = "provenance"

    def __init__(self, value: Any) -> None:
        if isinstance(value, bool):
            self.present: bool | None = value
            self.origins: frozenset[str] | None = None
        else:
            self.present = None
            self.origins = frozenset(_as_strings(value, "provenance"))

    def __call__(self, subject: Subject) -> bool:
        prov = subject.data.get("registration_provenance")
        if self.present is not None:
            return isinstance(prov, Mapping) == self.present
        return isinstance(prov, Mapping) and prov.get("origin") in (self.origins or ())

    def describe(self) -> str:
        if self.present is not None:
            return "it has provenance" if self.present else "it has no registration provenance"
        return "its provenance origin is " + " or ".join(sorted(self.origins or ()))


_MISSING = object()


class FieldsAre(Predicate):
    """``fields: {transport: stdio, disabled: [null, false]}``: equality on wire fields.

    A ``null`` expected value matches a field that is null or absent; a list means any of.
    """

    key = "fields"

    def __init__(self, value: Any) -> None:
        if not isinstance(value, Mapping) or not value:
            raise MatchSpecError("fields", "must be a non-empty object")
        self.expected = {k: (v if isinstance(v, list) else [v]) for k, v in value.items()}

    def __call__(self, subject: Subject) -> bool:
        for key, options in self.expected.items():
            actual = subject.data.get(key, _MISSING)
            if actual is _MISSING:
                actual = None
            if not any(_field_equal(actual, option) for option in options):
                return False
        return True

    def describe(self) -> str:
        return ", ".join(_field_words(k, v) for k, v in self.expected.items())

    def negated(self) -> str:
        if len(self.expected) == 1:
            ((key, options),) = self.expected.items()
            if options == [None]:
                return f"it has a {key}"
            if None not in options:
                return f"its {key} is not {_options(options)}"
        return super().negated()


def _options(options: Sequence[Any]) -> str:
    return " or ".join(orjson.dumps(o).decode() if not isinstance(o, str) else o for o in options)


def _field_words(key: str, options: Sequence[Any]) -> str:
    """``fields: {purl: null}`` as "it has no purl", ``{transport: stdio}`` as "its
    transport is stdio"."""
    if options == [None]:
        return f"it has no {key}"
    if options == [[]]:
        return f"its {key} is empty"
    given = [o for o in options if o is not None]
    unset = " or unset" if len(given) < len(options) else ""
    return f"its {key} is {_options(given)}{unset}"


def _field_equal(actual: Any, option: Any) -> bool:
    if isinstance(option, str) and isinstance(actual, str):
        return actual.casefold() == option.casefold()
    return bool(actual == option and type(actual) is type(option))


class AllOf(Predicate):
    key = "all_of"

    def __init__(self, parts: Sequence[Predicate]) -> None:
        self.parts = tuple(parts)

    def __call__(self, subject: Subject) -> bool:
        for part in self.parts:  # a plain loop: this is the hottest call in evaluation
            if not part(subject):
                return False
        return True

    def describe(self) -> str:
        return " and ".join(p.describe() for p in self.parts) or "always"

    def negated(self) -> str:
        if len(self.parts) == 1:
            return self.parts[0].negated()
        return super().negated()

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        out: list[tuple[bool, str]] = []
        for part in self.parts:
            out.extend(part.explain(subject))
        return out


class AnyOf(Predicate):
    key = "any_of"

    def __init__(self, parts: Sequence[Predicate]) -> None:
        self.parts = tuple(parts)

    def __call__(self, subject: Subject) -> bool:
        return any(p(subject) for p in self.parts)

    def describe(self) -> str:
        if len(self.parts) == 1:
            return self.parts[0].describe()
        return "either " + ", or ".join(p.describe() for p in self.parts)

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        # The branch that held is the reason, not the whole alternative.
        for part in self.parts:
            if part(subject):
                return [(True, part.describe())]
        return [(False, self.describe())]


class Not(Predicate):
    key = "not"

    def __init__(self, part: Predicate) -> None:
        self.part = part

    def __call__(self, subject: Subject) -> bool:
        return not self.part(subject)

    def describe(self) -> str:
        return self.part.negated()

    def negated(self) -> str:
        return self.part.describe()


_SIMPLE: dict[str, Callable[[Any], Predicate]] = {
    "type": TypeIs,
    "name": lambda v: TextField("name", v),
    "id": lambda v: TextField("id", v),
    "provider": lambda v: TextField("provider", v),
    "purl": PurlIs,
    "digest": DigestIs,
    "endpoint": EndpointIs,
    "capability": CapabilityIs,
    "pinned": Pinned,
    "provenance": Provenance,
    "fields": FieldsAre,
}

# Supply-chain signals that scan attaches (agbom.rules.signal_matchers, loaded on use).
_SIGNAL_KEYS = frozenset(
    {"vulnerability", "content", "signature", "tools_drift", "plaintext_secret"}
)

MATCH_KEYS = (
    frozenset(_SIMPLE) | _SIGNAL_KEYS | {"version", "version_scheme", "all_of", "any_of", "not"}
)


def compile_match(spec: Any, key: str = "match") -> AllOf:
    """Compile a match object: every key must hold (``any_of``/``all_of``/``not`` nest)."""
    if not isinstance(spec, Mapping):
        raise MatchSpecError(key, "must be an object")
    parts: list[Predicate] = []
    for name, value in spec.items():
        where = f"{key}.{name}"
        try:
            if name in _SIMPLE:
                parts.append(_SIMPLE[name](value))
            elif name in _SIGNAL_KEYS:
                from agbom.rules.signal_matchers import SIGNAL_PREDICATES

                parts.append(SIGNAL_PREDICATES[name](value))
            elif name == "version":
                scheme = spec.get("version_scheme", "auto")
                parts.append(VersionIn(value, scheme))
            elif name == "version_scheme":
                if "version" not in spec:
                    raise MatchSpecError(name, "needs a version range next to it")
            elif name in ("all_of", "any_of"):
                subs = [
                    compile_match(s, f"{where}[{i}]") for i, s in enumerate(_as_list(value, name))
                ]
                parts.append(AllOf(subs) if name == "all_of" else AnyOf(subs))
            elif name == "not":
                parts.append(Not(compile_match(value, where)))
            else:
                raise MatchSpecError(name, "unknown match key")
        except MatchSpecError as exc:
            if exc.key.startswith(key + "."):
                raise
            raise MatchSpecError(f"{key}.{exc.key}", str(exc)) from None
    return AllOf(parts)


def index_hints(spec: Mapping[str, Any]) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """Top-level ``type`` and exact ``name`` values of a match, for rule indexing.

    ``None`` means "any" (absent, or a glob that cannot be looked up in a dict).
    """
    types = spec.get("type")
    type_set = frozenset(types if isinstance(types, list) else [types]) if types else None
    names = spec.get("name")
    name_set = None
    if names:
        listed = names if isinstance(names, list) else [names]
        if all(isinstance(n, str) and not is_glob(n) for n in listed):
            name_set = frozenset(n.casefold() for n in listed)
    return type_set, name_set
