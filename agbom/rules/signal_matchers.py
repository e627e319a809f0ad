"""Match keys over the supply-chain signals that scan attaches to components.

- ``vulnerability``: the component's ``vulnerabilities`` (OSV advisories, ``--osv``);
- ``content``: a skill's ``content_findings`` (deterministic content checks);
- ``signature``: an A2A card's ``signature.status`` (``--keys``);
- ``tools_drift``: an MCP server's ``tools_drift`` against a lock file (``--locked``);
- ``plaintext_secret``: an MCP server's ``plaintext_secrets``, the config fields holding a
  credential in plaintext instead of an env reference (:mod:`agbom.scan.plaintext`).

Each predicate explains itself with the entries that matched, which is what a finding's
``{reason}`` shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agbom.inventory.signals import CONTENT_CHECKS, DRIFT_CLASSES
from agbom.rules.predicate import Predicate, TextMatcher
from agbom.rules.subjects import MatchSpecError, Subject

VULNERABILITY_SEVERITIES = ("critical", "high", "medium", "low", "unknown")
SIGNATURE_STATES = ("valid", "unsigned", "invalid", "unknown_key", "unverified")
MAX_SHOWN = 3  # entries named in one reason; the rest are counted


def _strings(value: Any, key: str) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise MatchSpecError(key, "must be a non-empty string or a list of them")
    return values


def _entries(subject: Subject, field: str) -> list[Mapping[str, Any]]:
    found = subject.data.get(field)
    if not isinstance(found, list):
        return []
    return [entry for entry in found if isinstance(entry, Mapping)]


def _listed(shown: list[str]) -> str:
    more = len(shown) - MAX_SHOWN
    return "; ".join(shown[:MAX_SHOWN]) + (f"; and {more} more" if more > 0 else "")


class VulnerabilityIs(Predicate):
    """``vulnerability: true`` or ``{severity, id, alias}``: some advisory on the component
    has every given property (ids and aliases are exact or globs, case-insensitive)."""

    key = "vulnerability"

    def __init__(self, value: Any) -> None:
        self.severities: frozenset[str] | None = None
        self.ids: TextMatcher | None = None
        self.aliases: TextMatcher | None = None
        if value is True:
            return
        if not isinstance(value, Mapping) or not value:
            raise MatchSpecError("vulnerability", "must be true or an object")
        for name in value:
            if name not in ("severity", "id", "alias"):
                raise MatchSpecError(f"vulnerability.{name}", "unknown key")
        if "severity" in value:
            levels = [s.lower() for s in _strings(value["severity"], "vulnerability.severity")]
            for level in levels:
                if level not in VULNERABILITY_SEVERITIES:
                    raise MatchSpecError(
                        "vulnerability.severity",
                        f"unknown severity {level!r} (one of "
                        + ", ".join(VULNERABILITY_SEVERITIES)
                        + ")",
                    )
            self.severities = frozenset(levels)
        if "id" in value:
            self.ids = TextMatcher(_strings(value["id"], "vulnerability.id"))
        if "alias" in value:
            self.aliases = TextMatcher(_strings(value["alias"], "vulnerability.alias"))

    def _holds(self, entry: Mapping[str, Any]) -> bool:
        vex = entry.get("vex")
        if isinstance(vex, Mapping) and vex.get("suppresses") is True:
            return False  # a VEX not_affected statement with a justification (docs/vex.md)
        if self.severities is not None and entry.get("severity") not in self.severities:
            return False
        if self.ids is not None:
            advisory_id = entry.get("id")
            if not isinstance(advisory_id, str) or not self.ids(advisory_id):
                return False
        if self.aliases is not None:
            aliases = entry.get("aliases")
            if not isinstance(aliases, list) or not any(
                isinstance(a, str) and self.aliases(a) for a in aliases
            ):
                return False
        return True

    def matching(self, subject: Subject) -> list[Mapping[str, Any]]:
        return [e for e in _entries(subject, "vulnerabilities") if self._holds(e)]

    def __call__(self, subject: Subject) -> bool:
        return any(self._holds(e) for e in _entries(subject, "vulnerabilities"))

    def describe(self) -> str:
        parts = []
        if self.severities is not None:
            parts.append("severity " + " or ".join(sorted(self.severities)))
        if self.ids is not None:
            parts.append(f"id {self.ids}")
        if self.aliases is not None:
            parts.append(f"alias {self.aliases}")
        return "it has a known vulnerability" + (" (" + ", ".join(parts) + ")" if parts else "")

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        shown = []
        for entry in self.matching(subject):
            aliases = [a for a in entry.get("aliases") or [] if isinstance(a, str)]
            fixed = [f for f in entry.get("fixed") or [] if isinstance(f, str)]
            text = f"{entry.get('id')}"
            if aliases:
                text += " (" + ", ".join(aliases[:3]) + ")"
            text += f", {entry.get('severity', 'unknown')}, in {entry.get('package', '?')}"
            text += ", fixed in " + ", ".join(fixed[:3]) if fixed else ", no fixed version"
            shown.append(text)
        if not shown:
            return [(False, self.describe())]
        return [(True, _listed(shown))]


class ContentIs(Predicate):
    """``content: true`` or a list of check names: the skill's content checks found one."""

    key = "content"

    def __init__(self, value: Any) -> None:
        self.checks: frozenset[str] | None = None
        if value is True:
            return
        names = _strings(value, "content")
        for name in names:
            if name not in CONTENT_CHECKS:
                raise MatchSpecError(
                    "content",
                    f"unknown content check {name!r} (one of {', '.join(CONTENT_CHECKS)})",
                )
        self.checks = frozenset(names)

    def matching(self, subject: Subject) -> list[Mapping[str, Any]]:
        return [
            e
            for e in _entries(subject, "content_findings")
            if self.checks is None or e.get("check") in self.checks
        ]

    def __call__(self, subject: Subject) -> bool:
        return bool(self.matching(subject))

    def describe(self) -> str:
        if self.checks is None:
            return "a content check found something"
        return "a content check found " + " or ".join(sorted(self.checks))

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        shown = [
            f"{e.get('file')}:{e.get('line')} {e.get('check')}: {e.get('text', '')!s}"
            for e in self.matching(subject)
        ]
        if not shown:
            return [(False, self.describe())]
        return [(True, _listed(shown))]


class SignatureIs(Predicate):
    """``signature: unsigned`` (or a list of states): the card's verification outcome."""

    key = "signature"

    def __init__(self, value: Any) -> None:
        states = _strings(value, "signature")
        for state in states:
            if state not in SIGNATURE_STATES:
                raise MatchSpecError(
                    "signature",
                    f"unknown state {state!r} (one of {', '.join(SIGNATURE_STATES)})",
                )
        self.states = frozenset(states)

    def _state(self, subject: Subject) -> Mapping[str, Any] | None:
        found = subject.data.get("signature")
        return found if isinstance(found, Mapping) else None

    def __call__(self, subject: Subject) -> bool:
        found = self._state(subject)
        return found is not None and found.get("status") in self.states

    def describe(self) -> str:
        return "its card signature is " + " or ".join(sorted(self.states))

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        found = self._state(subject)
        if found is None or found.get("status") not in self.states:
            return [(False, self.describe())]
        detail = found.get("detail")
        return [(True, f"card signature {found.get('status')}" + (f": {detail}" if detail else ""))]


class ToolsDriftIs(Predicate):
    """``tools_drift: true``: the server's tool set differs from its pinned one;
    ``tools_drift: {class: expansion}``: it does, and the change is of that class (one of
    cosmetic, narrowing, expansion; a drift without a class counts as an expansion)."""

    key = "tools_drift"

    def __init__(self, value: Any) -> None:
        self.classes: frozenset[str] | None = None
        if isinstance(value, Mapping):
            wanted = [c.lower() for c in _strings(value.get("class"), "tools_drift.class")]
            unknown = [c for c in wanted if c not in DRIFT_CLASSES]
            if unknown or set(value) != {"class"}:
                raise MatchSpecError(
                    "tools_drift.class", "one or more of " + ", ".join(DRIFT_CLASSES)
                )
            self.classes = frozenset(wanted)
            value = True
        if not isinstance(value, bool):
            raise MatchSpecError("tools_drift", "must be true, false or {class: ...}")
        self.want = value

    def __call__(self, subject: Subject) -> bool:
        drift = subject.data.get("tools_drift")
        if not isinstance(drift, Mapping):
            return not self.want
        if self.classes is None:
            return self.want
        return str(drift.get("class") or "expansion") in self.classes

    def describe(self) -> str:
        if self.classes is not None:
            return "its tool set drifted from its pin (" + " or ".join(sorted(self.classes)) + ")"
        return "its tool set drifted from its pin" if self.want else "its tool set matches its pin"

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        drift = subject.data.get("tools_drift")
        if not self(subject):
            return [(False, self.describe())]
        if not isinstance(drift, Mapping):
            return [(True, self.describe())]
        parts = []
        for change in ("added", "removed", "renamed", "changed"):
            names = drift.get(change)
            if isinstance(names, list) and names:
                parts.append(f"{change} " + ", ".join(str(n) for n in names[:5]))
        text = "tools " + "; ".join(parts) if parts else str(drift.get("detail") or "")
        classified = drift.get("classified")
        if isinstance(classified, list) and classified:
            # Which class each change is, and why (agbom/scan/expansion.py).
            said = [
                f"{c.get('tool')} {c.get('change')}: {c.get('class')} "
                f"({'; '.join(str(r) for r in (c.get('reasons') or [])[:3])})"
                for c in classified[:5]
                if isinstance(c, Mapping)
            ]
            text = f"{drift.get('class') or 'expansion'}: {text}; " + "; ".join(said)
        # What a changed tool now says against what was pinned (cut; see scan/lock.py).
        differences = drift.get("differences")
        if isinstance(differences, list) and differences:
            text += ": " + _listed([str(d) for d in differences])
        return [(True, text or self.describe())]


class PlaintextSecretIs(Predicate):
    """``plaintext_secret: true``: a config field of the component holds a credential in
    plaintext. The reason names the fields and the kind of credential, never the value."""

    key = "plaintext_secret"

    def __init__(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise MatchSpecError("plaintext_secret", "must be true or false")
        self.want = value

    def __call__(self, subject: Subject) -> bool:
        return bool(_entries(subject, "plaintext_secrets")) == self.want

    def describe(self) -> str:
        if self.want:
            return "a credential is written in plaintext"
        return "no credential is written in plaintext"

    def explain(self, subject: Subject) -> list[tuple[bool, str]]:
        if not self(subject) or not self.want:
            return [(self(subject), self.describe())]
        # The file is the finding's location (SARIF, the table's "at:"), not part of the
        # message: a message that names a path differs between checkouts of the same tree.
        shown = dict.fromkeys(
            f"{entry.get('field')} ({entry.get('kind', 'a credential')})"
            for entry in _entries(subject, "plaintext_secrets")
        )
        return [(True, _listed(list(shown)))]


SIGNAL_PREDICATES: dict[str, Callable[[Any], Predicate]] = {
    "vulnerability": VulnerabilityIs,
    "content": ContentIs,
    "signature": SignatureIs,
    "tools_drift": ToolsDriftIs,
    "plaintext_secret": PlaintextSecretIs,
}
