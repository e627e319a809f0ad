"""Runtime rule packs: checks on each tool call as it happens, turned on with one flag
(``agbom serve --pack baseline``).

A component rule pack (agbom/rules) judges what an agent is made of; a runtime pack judges
what a tool call is about to do: the command line a shell tool runs, the URL a fetch tool
reaches, the tool's name. Each rule of a pack names one built-in check
(:data:`CHECKS`), and the pack carries the operator's data those checks read: the hosts
tool calls may reach (``egress_allow``), the tools the deployment runs (``tools``), which tool
names are shells.

The checks share their patterns with the scanner, so a command is judged the same way in a
SKILL.md and in a tool call: ``pipe-to-shell`` and ``credential-exfiltration`` run the
content checks of :mod:`agbom.scan.content` over the command line, ``destructive-command``
and ``egress`` the patterns of :mod:`agbom.scan.shell_patterns`.

Deterministic and explainable: the same payload always gives the same verdict, and every
hit names its rule, the field (a JSON pointer into the payload), the offsets and the text
matched (credentials in it redacted). The pack file format is in docs/rules.md ("Runtime
packs").
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agbom.guardian.decision import Decision, DecisionCollector, PolicyReference
from agbom.guardian.redaction import redact_text
from agbom.protocol import Disposition
from agbom.rules.interface import RuleError

if TYPE_CHECKING:
    from agbom.analysis import Assessment

CHECKS = (
    "destructive-command",
    "pipe-to-shell",
    "credential-exfiltration",
    "vendor-installer",
    "egress",
    "unknown-tool",
    "uninspectable-command",
    "raw-socket",
)
# The scanner's content checks each runtime check runs (agbom/scan/content.py names).
_CONTENT_OF = {
    "pipe-to-shell": ("download-to-shell", "decode-and-execute"),
    "credential-exfiltration": ("secret-exfiltration",),
    "vendor-installer": ("vendor-installer",),
}
_PACK_KEYS = frozenset(
    {"pack", "kind", "version", "description", "egress_allow", "tools", "shell_tools", "rules"}
)  # fmt: skip
_RULE_KEYS = frozenset({"id", "check", "severity", "action", "message", "remediation"})
_SEVERITIES = ("info", "low", "medium", "high", "critical")
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
_HOST = re.compile(r"^(?:\*\.)?(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_-]{1,63}$")
MAX_LIST = 10_000  # entries in one of the pack's lists
MAX_PACK_BYTES = 256 * 1024
MAX_SHOWN = 120  # characters of a matched span put in a decision
MAX_HITS = 50  # hits kept for one step: a command naming 10,000 URLs gives a bounded answer


@dataclass(frozen=True, slots=True)
class RuntimeRule:
    id: str
    check: str
    severity: str
    action: str  # deny | warn
    message: str
    remediation: str = ""


@dataclass(frozen=True, slots=True)
class RuntimePack:
    """One loaded pack: its rules and the operator data its checks read."""

    name: str
    version: str
    source: str
    rules: tuple[RuntimeRule, ...]
    egress_allow: tuple[str, ...] = ()
    tools: frozenset[str] = frozenset()  # lower-cased; empty: any tool
    shell_tools: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Hit:
    """One rule that fired: where (a JSON pointer and offsets into that field) and what."""

    pack: RuntimePack
    rule: RuntimeRule
    path: str
    start: int
    end: int
    matched: str  # safe to show: credentials redacted, cut to MAX_SHOWN
    detail: str = ""

    def reasoning(self) -> str:
        where = f"{self.path} offset {self.start}" if self.path else "the call"
        text = f"{self.rule.id} ({self.rule.check}): {self.rule.message}; matched "
        text += f"{self.matched!r} at {where}"
        return text + (f" ({self.detail})" if self.detail else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule_id": self.rule.id,
            "pack": self.pack.name,
            "check": self.rule.check,
            "severity": self.rule.severity,
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "match": self.matched,
        }
        if self.detail:
            out["detail"] = self.detail
        if self.rule.remediation:
            out["remediation"] = self.rule.remediation
        return out


# -- loading ----------------------------------------------------------------------------------


def builtin_packs() -> dict[str, Path]:
    """The runtime packs shipped with agbom, by name (agbom/rules/packs/runtime/)."""
    folder = Path(str(resources.files("agbom.rules").joinpath("packs", "runtime")))
    return {p.stem: p for p in sorted(folder.glob("*.yaml")) if not p.name.endswith("_test.yaml")}


def load_pack(
    name_or_path: str,
    *,
    egress_allow: Sequence[str] = (),
    tools: Sequence[str] = (),
    egress: str = "deny",
) -> RuntimePack:
    """The pack shipped under that name, or the pack file at that path; the operator's
    ``egress_allow`` hosts and ``tools`` are added to the pack's own lists. ``egress`` is
    what an ``egress`` rule does while the allowlist is empty (:func:`with_egress`)."""
    shipped = builtin_packs()
    path = shipped.get(name_or_path) or Path(name_or_path)
    if name_or_path not in shipped and not path.is_file():
        known = ", ".join(sorted(shipped)) or "none"
        raise RuleError(
            f"no runtime pack {name_or_path!r}: give a shipped pack ({known}) or a pack file",
            file=name_or_path,
        )
    from agbom.rules.loader import read_yaml

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RuleError(f"cannot read: {exc.strerror or exc}", file=str(path)) from exc
    if size > MAX_PACK_BYTES:
        raise RuleError(f"larger than the {MAX_PACK_BYTES} byte limit", file=str(path))
    data, _ = read_yaml(path)
    pack = compile_pack(data, str(path), egress_allow=egress_allow, tools=tools)
    return with_egress(pack, egress)


EGRESS_UNLISTED_NOTE = "no host is allowed yet (--egress-allow): recorded, not denied"


def with_egress(pack: RuntimePack, egress: str) -> RuntimePack:
    """``pack`` with its ``egress`` rules set for ``egress`` (``GuardianConfig.egress``):
    ``deny`` leaves the pack as written; ``warn`` makes them warnings; ``auto`` makes them
    warnings only while the allowlist is empty, so that a new deployment records every
    destination without being blocked from all of them, and denies what is not listed as
    soon as one host is. Raw sockets (``raw-socket``) are not egress rules: they deny."""
    if egress == "deny" or (egress == "auto" and pack.egress_allow):
        return pack
    note = EGRESS_UNLISTED_NOTE if not pack.egress_allow else "recorded, not denied (--egress warn)"
    rules = tuple(
        replace(rule, action="warn", message=f"{rule.message} ({note})")
        if rule.check == "egress" and rule.action == "deny"
        else rule
        for rule in pack.rules
    )
    return replace(pack, rules=rules)


def compile_pack(
    data: Any, source: str, *, egress_allow: Sequence[str] = (), tools: Sequence[str] = ()
) -> RuntimePack:
    """A pack from its parsed YAML, every problem a located :class:`RuleError`."""

    def fail(message: str, key: str | None = None, rule_id: str | None = None) -> RuleError:
        return RuleError(message, file=source, key_path=key, rule_id=rule_id)

    if not isinstance(data, Mapping):
        raise fail("a runtime pack is a mapping with pack, kind: runtime and rules")
    unknown = sorted(str(k) for k in data if k not in _PACK_KEYS)
    if unknown:
        raise fail("unknown key", unknown[0])
    if data.get("kind") != "runtime":
        raise fail("a runtime pack says kind: runtime", "kind")
    name = data.get("pack")
    if not isinstance(name, str) or not _ID.match(name):
        raise fail("pack must be a name (letters, digits, . _ -)", "pack")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("egress_allow", "tools", "shell_tools"):
        value = data.get(key, [])
        if not isinstance(value, list) or len(value) > MAX_LIST:
            raise fail(f"must be a list of at most {MAX_LIST} names", key)
        if not all(isinstance(v, str) and 0 < len(v) <= 255 for v in value):
            raise fail("every entry must be a name of 1-255 characters", key)
        lists[key] = tuple(value)
    hosts = tuple(dict.fromkeys(h.strip().lower() for h in (*lists["egress_allow"], *egress_allow)))
    for host in hosts:
        if not _HOST.match(host):
            raise fail(
                f"{host!r} is not a host name or *.domain (no scheme, port or path)",
                "egress_allow",
            )
    raw_rules = data.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise fail("a pack needs a list of rules", "rules")
    rules: list[RuntimeRule] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_rules):
        where = f"rules[{index}]"
        if not isinstance(raw, Mapping):
            raise fail("each rule is a mapping", where)
        rule_id = raw.get("id")
        if not isinstance(rule_id, str) or not _ID.match(rule_id):
            raise fail("id must be a rule id (letters, digits, . _ -)", f"{where}.id")
        extra = sorted(str(k) for k in raw if k not in _RULE_KEYS)
        if extra:
            raise fail("unknown key", f"{where}.{extra[0]}", rule_id)
        if rule_id in seen:
            raise fail("duplicate rule id", f"{where}.id", rule_id)
        seen.add(rule_id)
        check = raw.get("check")
        if check not in CHECKS:
            raise fail(f"check must be one of {', '.join(CHECKS)}", f"{where}.check", rule_id)
        severity = raw.get("severity", "high")
        if severity not in _SEVERITIES:
            raise fail(f"severity must be one of {', '.join(_SEVERITIES)}", f"{where}.severity")
        action = raw.get("action", "deny")
        if action not in ("deny", "warn"):
            raise fail("action must be deny or warn", f"{where}.action", rule_id)
        message = raw.get("message")
        if not isinstance(message, str) or not message.strip() or len(message) > 500:
            raise fail("message must be text of 1-500 characters", f"{where}.message", rule_id)
        remediation = raw.get("remediation", "")
        if not isinstance(remediation, str) or len(remediation) > 1000:
            raise fail("remediation must be text", f"{where}.remediation", rule_id)
        rules.append(
            RuntimeRule(rule_id, str(check), str(severity), str(action), message, remediation)
        )
    version = data.get("version", 1)
    return RuntimePack(
        name=name,
        version=str(version),
        source=source,
        rules=tuple(rules),
        egress_allow=hosts,
        tools=frozenset(t.lower() for t in (*lists["tools"], *tools)),
        shell_tools=frozenset(t.lower() for t in lists["shell_tools"]),
    )


# -- what a step gives to check ---------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    tool: str  # as sent
    tool_path: str
    commands: list[tuple[str, str]] = field(default_factory=list)  # (pointer, command line)
    urls: list[tuple[str, str]] = field(default_factory=list)  # (pointer, URL)
    uninspectable: str | None = None  # a shell call whose command cannot be read


def _argument(arguments: Mapping[str, Any], name: str, base: str) -> tuple[str, Any] | None:
    """An argument's value and pointer: ACS ``{name: {value: ...}}`` or a plain value."""
    if name not in arguments:
        return None
    value = arguments[name]
    if isinstance(value, Mapping) and "value" in value:
        return f"{base}/{name}/value", value["value"]
    return f"{base}/{name}", value


def _call_of(method: str, payload: Mapping[str, Any], pack: RuntimePack) -> _Call | None:
    if method in ("steps/toolCallRequest", "steps/toolCallResult"):
        tool = payload.get("tool")
        name = tool.get("name") or tool.get("id") if isinstance(tool, Mapping) else None
        arguments = payload.get("arguments") if method == "steps/toolCallRequest" else None
        base, tool_path = "/arguments", "/tool/name"
        raw = payload.get("raw_command") if method == "steps/toolCallRequest" else None
    elif payload.get("method") == "tools/call" and isinstance(payload.get("params"), Mapping):
        inner = payload["params"]
        name, arguments, base, tool_path, raw = (
            inner.get("name"), inner.get("arguments"), "/params/arguments", "/params/name", None,
        )  # fmt: skip
    else:
        return None
    if not isinstance(name, str):
        return None
    call = _Call(tool=name, tool_path=tool_path)
    if method == "steps/toolCallResult":
        return call
    arguments = arguments if isinstance(arguments, Mapping) else {}
    lowered = name.lower()
    if lowered in pack.shell_tools:
        found = _argument(arguments, "command", base)
        if found is not None:
            pointer, value = found
            if isinstance(value, str):
                call.commands.append((pointer, value))
            elif isinstance(value, (int, float, bool)) or value is None:
                call.commands.append((pointer, str(value)))  # nothing to run but its text
            else:
                call.uninspectable = f"the command at {pointer} is not text"
        else:  # raw_command is the client's rendering; the tool runs its arguments
            sent = ", ".join(sorted(str(k) for k in arguments)[:10]) or "none"
            call.uninspectable = f"no command argument to inspect (arguments sent: {sent})"
    if isinstance(raw, str) and all(raw != text for _, text in call.commands):
        call.commands.append(("/raw_command", raw))  # the same line twice is judged once
    found = _argument(arguments, "url", base)
    if found is not None and isinstance(found[1], str):
        call.urls.append(found)
    return call


# -- the checks -------------------------------------------------------------------------------


def _shown(text: str) -> str:
    text = redact_text(text)[0]
    from agbom.scan.content import shown  # the scanner's: URL passwords, command secrets

    return shown(text)[:MAX_SHOWN]


def _content_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """The scanner's content checks over one command line: (check, start, end)."""
    from agbom.scan.content import check_text

    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    for finding in check_text(text, "tool call"):
        start = starts[finding.line - 1] + finding.column - 1
        end_line = finding.end_line or finding.line
        end = starts[end_line - 1] + (finding.end_column or finding.column + 1) - 1
        yield finding.check, start, max(end, start + 1)


def _destination(url: str) -> tuple[str | None, str]:
    """The host a URL reaches, normalised (lower case, IPv4 in any notation as dotted
    decimal), or ``None`` and why it cannot be told."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError as exc:
        return None, f"not a valid URL ({exc})"
    if not host:
        return None, "no host"
    if "xn--" in host:
        try:
            host.encode("ascii").decode("idna")
        except UnicodeError:
            return None, "an invalid internationalised (xn--) name"
    return _ipv4(host) or host, ""


def _ipv4(host: str) -> str | None:
    """``host`` as dotted decimal when it is an IPv4 address in any inet_aton notation
    (``0x7f.1``, ``2130706433``, ``0177.0.0.1``): such a name reaches that address."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers: list[int] = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = sum(n << (8 * (3 - i)) for i, n in enumerate(head)) + last
    return str(ipaddress.IPv4Address(value))


def _allowed(host: str, allow: tuple[str, ...]) -> bool:
    for entry in allow:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and len(host) > len(entry) - 1:
                return True
        elif host == entry:
            return True
    return False


class RuntimePacks:
    """The runtime packs a Guardian decides with, in the order given."""

    def __init__(self, packs: Sequence[RuntimePack]) -> None:
        self.packs = tuple(packs)

    def hits(self, method: str, payload: Mapping[str, Any]) -> list[Hit]:
        """Every rule of every pack that fires on this step."""
        found: list[Hit] = []
        for pack in self.packs:
            call = _call_of(method, payload, pack)
            if call is None:
                continue
            for hit in _pack_hits(pack, call):
                found.append(hit)
                if len(found) >= MAX_HITS:
                    return found
        return found

    def evaluate(self, method: str, payload: Mapping[str, Any]) -> Decision | None:
        """A DENY when a deny rule fires (every hit named), an ALLOW carrying the warnings
        when only warn rules do, ``None`` when nothing fires."""
        hits = self.hits(method, payload)
        if not hits:
            return None
        collector = DecisionCollector()
        for hit in hits:
            reference = PolicyReference(
                policy_id=hit.pack.name, rule_id=hit.rule.id, policy_version=hit.pack.version
            )
            if hit.rule.action == "deny":
                collector.denials.append(
                    Decision.deny(
                        hit.reasoning(),
                        hit.rule.id,
                        hit.rule.check,
                        references=[reference],
                        findings=[hit.to_json()],
                    )
                )
            else:
                collector.warnings.append(hit.to_json())
                collector.codes.append(f"warn:{hit.rule.id}")
                collector.references.append(reference)
        return collector.merge()


def _pack_hits(pack: RuntimePack, call: _Call) -> Iterator[Hit]:
    checks: dict[str, list[RuntimeRule]] = {}
    for rule in pack.rules:
        checks.setdefault(rule.check, []).append(rule)

    def hits(
        check: str, path: str, start: int, end: int, text: str, detail: str = ""
    ) -> Iterator[Hit]:
        for rule in checks.get(check, ()):
            yield Hit(pack, rule, path, start, end, _shown(text), detail)

    if pack.tools and call.tool.lower() not in pack.tools:
        yield from hits(
            "unknown-tool",
            call.tool_path,
            0,
            len(call.tool),
            call.tool,
            f"{len(pack.tools)} tool(s) are listed for this deployment",
        )
    if call.uninspectable is not None:
        yield from hits("uninspectable-command", "", 0, 0, call.tool, call.uninspectable)
    urls = [(path, 0, len(url), url, "") for path, url in call.urls]
    if call.commands and checks.keys() & _ANALYSED:
        from agbom.analysis import assess  # the parser loads with the first command
    for path, command in call.commands if checks.keys() & _ANALYSED else ():
        assessment = assess(command)
        analysis = assessment.analysis
        if not analysis.complete:
            yield from hits(
                "uninspectable-command", path, 0, len(command), command,
                f"the command cannot be analysed whole: {analysis.problems[0]}",
            )  # fmt: skip
        found = list(_command_spans(command, assessment, checks))
        for check, start, end, detail in found:
            yield from hits(check, path, start, end, command[start:end], detail)
        if "egress" in checks or "raw-socket" in checks:
            urls.extend(_command_urls(path, command, assessment))
    if "egress" not in checks and "raw-socket" not in checks:
        return
    for path, start, end, url, how in urls:
        raw = how.startswith("raw:")
        check = "raw-socket" if raw else "egress"
        if check not in checks:
            continue
        always = how.split(":", 2)[2] if raw and how.count(":") >= 2 else ""
        host, problem = _destination(url)
        what = how.split(":", 2)[1] if raw else how
        via = f" ({what})" if what else ""
        if always:
            yield from hits(check, path, start, end, url, f"{always}{via}")
        elif host is None:
            yield from hits(check, path, start, end, url, f"destination unknown: {problem}{via}")
        elif not _allowed(host, pack.egress_allow):
            listed = (
                f"not in the egress allowlist ({len(pack.egress_allow)} host(s))"
                if pack.egress_allow
                else "the egress allowlist is empty (the pack ships none: add hosts with "
                "--egress-allow)"
            )
            yield from hits(check, path, start, end, url, f"destination {host}{via}: {listed}")


# The checks that read a shell command line.
_ANALYSED = frozenset(
    {"destructive-command", "pipe-to-shell", "credential-exfiltration", "vendor-installer",
     "egress", "raw-socket", "uninspectable-command"}
)  # fmt: skip
# The shell analysis's judgments and the runtime check each is reported under.
_RISK_CHECK = {
    "destructive": "destructive-command",
    "download-exec": "pipe-to-shell",
    "decode-exec": "pipe-to-shell",
    "exfiltration": "credential-exfiltration",
}


def _command_spans(
    command: str, assessment: Assessment, checks: Mapping[str, object]
) -> Iterator[tuple[str, int, int, str]]:
    """(check, start, end, detail) for one command line: the scanner's patterns first (their
    spans are the exact text), then what the parse finds that no pattern did."""
    from agbom.analysis import DEFAULT_LIMITS

    reported: dict[str, list[tuple[int, int]]] = {}
    if "destructive-command" in checks:
        from agbom.scan.shell_patterns import destructive_commands

        for span in destructive_commands(command):
            reported.setdefault("destructive-command", []).append((span.start, span.end))
            yield "destructive-command", span.start, span.end, ""
    if any(check in checks for check in _CONTENT_OF):
        # once per command line, over the part the analysis reads (a longer one is denied)
        for name, start, end in _content_spans(command[: DEFAULT_LIMITS.max_bytes]):
            for check, wanted in _CONTENT_OF.items():
                if check in checks and name in wanted:
                    reported.setdefault(check, []).append((start, end))
                    yield check, start, end, ""
    for risk in assessment.risks:
        check = _RISK_CHECK[risk.check]
        if risk.check == "download-exec" and _vendor_installer(risk.origin):
            check = "vendor-installer"  # as the scanner rates it, whichever shell runs it
        if check not in checks:
            continue
        spans = reported.setdefault(check, [])
        if check == "pipe-to-shell":
            spans = spans + reported.get("vendor-installer", [])
        if any(start < risk.end and risk.start < end for start, end in spans):
            continue  # the same command, already reported
        reported[check].append((risk.start, risk.end))
        yield check, risk.start, max(risk.end, risk.start + 1), risk.detail


def _vendor_installer(fetch: str) -> bool:
    from agbom.scan.vendor_installers import is_vendor_installer

    return bool(fetch) and is_vendor_installer(fetch)


def _command_urls(
    path: str, command: str, assessment: Assessment
) -> Iterator[tuple[str, int, int, str, str]]:
    """(path, start, end, URL, how) for each destination of a command line: the URLs written in
    it, then those the parse finds (curl's default scheme, proxies, ssh hosts, sockets).
    ``how`` starts with ``raw:`` for a raw socket, then what opened it and, for one denied
    whatever its host, why."""
    from agbom.scan.shell_patterns import urls as urls_in

    seen: set[str] = set()
    for span in urls_in(command):
        url = command[span.start : span.end]
        seen.add(url)
        yield path, span.start, span.end, url, ""
    for destination in assessment.destinations:
        if destination.url in seen:
            continue
        seen.add(destination.url)
        how = (
            f"raw:{destination.how}:{destination.always}" if destination.raw else (destination.how)
        )
        yield path, destination.start, destination.end, destination.url, how


def combine(base: Decision, runtime: Decision | None) -> Decision:
    """``base`` (the Guardian's other policies) and a runtime pack's verdict: a runtime DENY
    denies, with ``base``'s own denial if it had one; runtime warnings ride along."""
    if runtime is None:
        return base
    if runtime.disposition is not Disposition.DENY:
        return replace(
            base,
            reason_codes=(*base.reason_codes, *runtime.reason_codes),
            policy_references=(*base.policy_references, *runtime.policy_references),
            findings=(*base.findings, *runtime.findings),
        )
    collector = DecisionCollector(denials=[runtime])
    if base.disposition is Disposition.DENY:
        collector.denials.insert(0, base)
    else:
        collector.codes.extend(base.reason_codes)
    return collector.merge()
