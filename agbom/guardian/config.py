"""Guardian configuration: one frozen object, validated when built."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase


class Mode(StrEnum):
    """``enforce`` denies what policy says to deny; ``observe`` records and allows skills."""

    ENFORCE = "enforce"
    OBSERVE = "observe"


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardianConfig:
    """Knobs of the decision pipeline. Defaults are the fail-closed ones."""

    mode: Mode = Mode.ENFORCE
    # Deny toolCallRequest for a tool that the session's AgBOM does not list.
    strict_inventory: bool = False
    require_signatures: bool = False
    skew_window_ms: int = 300_000
    nonce_window_ms: int = 600_000
    max_body_bytes: int = 1024 * 1024
    max_json_depth: int = 64
    max_batch: int = 100
    # skillLoad: deepest load_path accepted.
    max_load_path_depth: int = 8
    # skillRegister: deny declarations broader than what the composed tools expose.
    deny_overbroad_capabilities: bool = True
    # MODIFY content-bearing steps that carry credentials (tokens, private keys).
    redact_secrets: bool = True
    # Bound on DEFER decisions per session (the spec requires cascading deferrals be bounded).
    max_deferrals_per_session: int = 16
    on_decision_failure: str = "deny"
    default_timeout_ms: int = 5_000
    policy_requires_provenance: bool = False
    transports: tuple[str, ...] = field(default=("http", "stdio"))
    skill_churn_threshold: int = 3
    # After a handshake, the first step of a session without steps/sessionStart opens it
    # (spec §8 MAY); True refuses such steps with -32003 no_session instead.
    require_session_start: bool = False
    # Deny a tool call through an MCP server that no approval row (``agbom servers approve``
    # or the review page's server queue) approves; False leaves such servers to the rules.
    require_server_approval: bool = False
    # Clients that cannot apply MODIFY / answer ASK, as globs on agent_id (§6.5, §9.2).
    no_modify_agents: tuple[str, ...] = ()
    no_ask_agents: tuple[str, ...] = ()
    # What ASK becomes for an ASK-incapable client: "defer" (timeout_decision deny) where
    # the hook allows DEFER, else DENY approver_unavailable; "deny" always denies.
    ask_fallback: str = "defer"
    # Bound on the memory of the sessions kept in memory (estimated; see SessionState): past
    # it the least recently used ones are dropped, and restored from the store when next used.
    max_session_bytes: int = 512 * 1024 * 1024
    # Bound on the process's real resident size (guardian/sizing.py; serve --max-memory-mib):
    # past it, least recently used sessions are dropped too. None: the estimate alone.
    max_memory_bytes: int | None = 768 * 1024 * 1024
    # The Guardian's own asymmetric keys (serve --signing-key; agbom/guardian/signing.py):
    # private key files from `agbom keys generate`, by path, so the decision process reads
    # them itself and no key material travels. sign_responses: "all" or "non-allow".
    signing_keys: tuple[str, ...] = ()
    sign_responses: str = "all"
    # Telemetry of committed decisions (agbom.telemetry; docs/telemetry.md): a JSON-lines
    # decision log rotated by size, and OTLP/HTTP spans (ACS-Trace, advertised in the
    # ServerHello). None: off.
    decision_log: str | None = None
    decision_log_max_bytes: int = 100 * 1024 * 1024
    decision_log_keep: int = 5
    otlp_endpoint: str | None = None
    # Supply-chain signals (guardian/signals.py, docs/scan.md): an OSV export whose advisories
    # and a lock file whose tool-set pins every AgBOM is checked against. None: off.
    osv_path: str | None = None
    lock_path: str | None = None
    # VEX documents (serve --vex, docs/vex.md): statements that suppress OSV matches.
    vex_paths: tuple[str, ...] = ()
    # Signed skills (serve --skill-signers, guardian/skill_trust.py): whose OMS signatures and
    # Sigstore bundles verify, whether one is required, and which signers' skills are
    # approved on sight.
    skill_signers_path: str | None = None
    # serve --sigstore-trust-root: the trusted_root.json skill.sigstore.json bundles verify
    # against (offline); None: a carried bundle is unchecked, never signed.
    sigstore_trust_root_path: str | None = None
    # The review page's public address (serve --public-url): skill denials link to the pair.
    public_url: str | None = None
    # Runtime packs (serve --pack, guardian/runtime_pack.py): shipped names or pack files,
    # and the operator's data their checks read: hosts tool calls may reach, tools it runs.
    runtime_packs: tuple[str, ...] = ()
    egress_allow: tuple[str, ...] = ()
    known_tools: tuple[str, ...] = ()
    # The egress check (AGB-RUN-004) while the allowlist is empty: "deny" every destination,
    # as a pack says; "warn" records each and denies none; "auto" (serve's and the hook's
    # default) warns until a host is listed, then denies what is not listed. Raw sockets,
    # downloads into a shell and exfiltration deny whatever this says.
    egress: str = "deny"
    # Shipped component and flow packs chosen by name (serve --pack flow-strict), loaded
    # after the default pack and before --rules.
    rule_packs: tuple[str, ...] = ()
    # How --secret-file / --keys-file bytes become key material (agbom.protocol.signatures):
    # "raw" (the default) reads them as the reference tools do, so one file gives one key.
    secret_encoding: str = "raw"

    def __post_init__(self) -> None:
        if self.ask_fallback not in ("defer", "deny"):
            raise ValueError("ask_fallback must be defer or deny")
        if self.egress not in ("auto", "deny", "warn"):
            raise ValueError("egress must be auto, deny or warn")
        if self.secret_encoding not in ("raw", "hex", "base64"):
            raise ValueError("secret_encoding must be raw, hex or base64")

    @property
    def traced(self) -> bool:
        """Whether this Guardian emits ACS-Trace events (OpenTelemetry spans)."""
        return self.otlp_endpoint is not None

    def client_can_modify(self, agent_id: str) -> bool:
        return not any(fnmatchcase(agent_id, glob) for glob in self.no_modify_agents)

    def client_can_ask(self, agent_id: str) -> bool:
        return not any(fnmatchcase(agent_id, glob) for glob in self.no_ask_agents)
