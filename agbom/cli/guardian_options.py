"""Options the Guardian commands share: signing keys and what each client can apply."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from agbom.cli.common import read_bytes
from agbom.errors import InputError

MAX_CLIENT_CONFIG_BYTES = 256 * 1024
MAX_CLIENT_ENTRIES = 1000
_CLIENT_KEYS = frozenset({"agent_id", "modify", "ask"})


def key_id_option() -> Any:
    return typer.Option(
        None,
        "--key-id",
        help="Key id of --secret-file's key, as clients name it in signature.key_id "
        "(default: default); with --keys-file, the primary key.",
    )


def keys_file_option() -> Any:
    return typer.Option(
        None,
        "--keys-file",
        help='Several keys for a rotation: a JSON object {"KEY_ID": "MATERIAL", ...}; a request '
        "signed with any of them verifies and is answered with the same key. Yours, mode 0600.",
    )


def secret_encoding_option() -> Any:
    return typer.Option(
        "raw",
        "--secret-encoding",
        metavar="[raw|hex|base64]",
        help="How --secret-file (and --keys-file entries without a hex:/base64: prefix) become "
        "key material: raw, the file's bytes exactly, trailing newline included (default; as "
        "the reference conformance tools read a key file), or hex / base64 text, decoded.",
    )


def check_key_options(secret_file: Path | None, keys_file: Path | None) -> None:
    if secret_file is not None and keys_file is not None:
        raise typer.BadParameter("give --secret-file or --keys-file, not both")


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """Globs on agent_id of clients that cannot apply MODIFY, or cannot answer ASK."""

    no_modify: tuple[str, ...] = ()
    no_ask: tuple[str, ...] = ()
    ask_fallback: str | None = None

    def settings(self) -> dict[str, Any]:
        out: dict[str, Any] = {"no_modify_agents": self.no_modify, "no_ask_agents": self.no_ask}
        if self.ask_fallback is not None:
            out["ask_fallback"] = self.ask_fallback
        return out


def load_client_config(path: Path) -> ClientCapabilities:
    """Read a client capabilities file::

    ask_fallback: defer        # or deny
    clients:
      - agent_id: "opencode-*"  # a glob on metadata.agent_id
        modify: false           # cannot apply MODIFY: it becomes DENY modify_unsupported
        ask: false              # cannot answer ASK: DEFER (deny on timeout) or DENY
    """
    import yaml  # only when a clients file is given (not for agbom --help)

    raw = read_bytes(path, limit=MAX_CLIENT_CONFIG_BYTES)
    try:
        # No anchors or aliases: they let a small file expand into a huge document.
        for event in yaml.parse(raw):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                where = f":{mark.line + 1}" if mark is not None else ""
                raise InputError(f"{path}{where}: YAML anchors and aliases are not allowed")
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from exc
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping with 'clients' and 'ask_fallback'")
    unknown = set(doc) - {"clients", "ask_fallback"}
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    fallback = doc.get("ask_fallback")
    if fallback is not None and fallback not in ("defer", "deny"):
        raise InputError(f"{path}: ask_fallback must be defer or deny")
    clients = doc.get("clients") or []
    if not isinstance(clients, list) or len(clients) > MAX_CLIENT_ENTRIES:
        raise InputError(f"{path}: clients must be a list of at most {MAX_CLIENT_ENTRIES} entries")
    no_modify: list[str] = []
    no_ask: list[str] = []
    for index, entry in enumerate(clients):
        where = f"{path}: clients[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("agent_id"), str):
            raise InputError(f"{where}: needs agent_id (a glob on the client's agent_id)")
        extra = set(entry) - _CLIENT_KEYS
        if extra:
            raise InputError(f"{where}: unknown key(s) {', '.join(sorted(map(str, extra)))}")
        for key in ("modify", "ask"):
            if key in entry and not isinstance(entry[key], bool):
                raise InputError(f"{where}.{key}: must be true or false")
        glob = entry["agent_id"]
        if not glob or len(glob) > 512:
            raise InputError(f"{where}.agent_id: must be 1-512 characters")
        if entry.get("modify") is False:
            no_modify.append(glob)
        if entry.get("ask") is False:
            no_ask.append(glob)
    return ClientCapabilities(tuple(no_modify), tuple(no_ask), fallback)


def client_capabilities(
    config_file: Path | None, no_modify: list[str], no_ask: list[str], ask_fallback: str | None
) -> ClientCapabilities:
    """The file's declarations plus the flags' (flags add globs and override ask_fallback)."""
    if ask_fallback is not None and ask_fallback not in ("defer", "deny"):
        raise typer.BadParameter("must be defer or deny", param_hint="--ask-fallback")
    base = load_client_config(config_file) if config_file is not None else ClientCapabilities()
    return ClientCapabilities(
        base.no_modify + tuple(no_modify),
        base.no_ask + tuple(no_ask),
        ask_fallback or base.ask_fallback,
    )


def guardian_config(**overrides: Any) -> Any:
    """A GuardianConfig of the options given (None: the default)."""
    from agbom.guardian import GuardianConfig

    return GuardianConfig(**{k: v for k, v in overrides.items() if v is not None})


# -- rule packs (serve and the standalone hook: agbom/guardian/pack_selection.py) -------------


def pack_option() -> Any:
    return typer.Option(
        [],
        "--pack",
        metavar="NAME|FILE",
        help="A rule pack to decide with, replacing the default (baseline): a shipped one by "
        "name (baseline, flow-strict; 'agbom rules show NAME' prints it), a runtime pack file, "
        "or 'none' for no runtime pack. Repeatable. See docs/rules-runtime.md.",
    )


def egress_allow_option() -> Any:
    return typer.Option(
        [],
        "--egress-allow",
        metavar="HOST",
        help="A host (or *.domain) tool calls may reach, added to the runtime packs' egress "
        "allowlist; once one is listed, every other destination is denied. Repeatable.",
    )


def known_tool_option() -> Any:
    return typer.Option(
        [],
        "--known-tool",
        metavar="NAME",
        help="A tool this deployment runs (any case). Given once or more, the runtime packs' "
        "unknown-tool check denies every other tool. Repeatable.",
    )


def egress_option() -> Any:
    return typer.Option(
        None,
        "--egress",
        metavar="[auto|deny|warn]",
        help="The egress check: auto (default) warns until --egress-allow lists a host, then "
        "denies the rest; deny denies every destination not listed, even with none listed; "
        "warn records and denies none.",
    )


def pack_announcement(guardian: Any) -> list[str]:
    """One line per pack a Guardian decides with, and what its egress check does."""
    lines = [
        f"agbom: rule pack {Path(source).stem}"
        for source in getattr(guardian.rules, "sources", ()) or ()
    ]
    runtime = guardian.policies.runtime
    if runtime is None:
        lines.append(
            "agbom: no runtime pack (--pack none): tool calls are not checked for destructive "
            "commands, downloads into a shell, exfiltration, raw sockets or egress"
        )
    for pack in runtime.packs if runtime is not None else ():
        egress = [r for r in pack.rules if r.check == "egress"]
        if not egress:
            allowed = "no egress rule"
        elif all(r.action == "warn" for r in egress):
            allowed = (
                "egress: every destination recorded, none denied (list hosts with "
                "--egress-allow to deny the rest)"
                if not pack.egress_allow
                else f"{len(pack.egress_allow)} allowed host(s), others recorded (--egress warn)"
            )
        elif pack.egress_allow:
            allowed = f"{len(pack.egress_allow)} allowed host(s), every other destination denied"
        else:
            allowed = "egress allowlist EMPTY: every network destination is denied (--egress deny)"
        lines.append(f"agbom: runtime pack {pack.name} ({len(pack.rules)} rules; {allowed})")
    return lines
