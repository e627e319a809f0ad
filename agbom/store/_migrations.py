"""Versioned schema of the SQLite store.

Each migration is a list of SQL statements that moves the schema from version N-1 to N. They
are frozen once released: a change to the schema is a new migration appended to
:data:`MIGRATIONS`, never an edit of an old one, so that a store written by any earlier agbom
upgrades to exactly the schema a fresh store gets. All migrations a store needs run in one
``BEGIN IMMEDIATE`` transaction (SQLite DDL is transactional), so an interrupted upgrade
leaves the old version intact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from agbom.store import _decision_counts

_V1 = [
    # One row per applied migration; the store's version is the largest.
    """CREATE TABLE schema_version (
        version INTEGER PRIMARY KEY,
        applied_at TEXT NOT NULL
    )""",
    # One row per (skill_id, digest) pair: its registration facts and its current decision.
    """CREATE TABLE skills (
        skill_id TEXT NOT NULL,
        digest_alg TEXT NOT NULL,
        digest_value TEXT NOT NULL,
        ref TEXT,
        declared_capabilities TEXT NOT NULL DEFAULT '[]',
        composition TEXT NOT NULL DEFAULT '{}',
        provenance TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'revoked')),
        decided_by TEXT,
        decided_at TEXT,
        reason TEXT,
        expires_at TEXT,
        first_seen TEXT,
        last_seen TEXT,
        registered_by_agent TEXT,
        registered_by_tenant TEXT,
        PRIMARY KEY (skill_id, digest_alg, digest_value)
    ) WITHOUT ROWID""",
    "CREATE INDEX skills_by_status ON skills (status, skill_id)",
    # Every status change, appended and never rewritten (the triggers enforce it).
    """CREATE TABLE skill_history (
        id INTEGER PRIMARY KEY,
        skill_id TEXT NOT NULL,
        digest_alg TEXT NOT NULL,
        digest_value TEXT NOT NULL,
        from_status TEXT,
        to_status TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT,
        expires_at TEXT,
        at TEXT NOT NULL,
        source TEXT NOT NULL
    )""",
    "CREATE INDEX skill_history_by_pair ON skill_history (skill_id, digest_alg, digest_value, id)",
    """CREATE TRIGGER skill_history_no_update BEFORE UPDATE ON skill_history
       BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END""",
    """CREATE TRIGGER skill_history_no_delete BEFORE DELETE ON skill_history
       BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END""",
]

_V2 = [
    # Approval scopes: JSON lists of glob patterns; empty means every agent / tenant.
    "ALTER TABLE skills ADD COLUMN scope_agents TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE skills ADD COLUMN scope_tenants TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE skill_history ADD COLUMN scope_agents TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE skill_history ADD COLUMN scope_tenants TEXT NOT NULL DEFAULT '[]'",
]

_V3 = [
    # Audit hash chain, one per session; entries are canonical JSON text from the Guardian.
    """CREATE TABLE chain_entries (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        entry TEXT NOT NULL,
        entry_hash TEXT NOT NULL,
        previous_hash TEXT,
        request_id TEXT,
        nonce TEXT,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
    # NULLs are distinct in SQLite unique indexes, so entries without an id never collide.
    "CREATE UNIQUE INDEX chain_by_request ON chain_entries (session_id, request_id)",
    "CREATE UNIQUE INDEX chain_by_nonce ON chain_entries (session_id, nonce)",
    """CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        tenant_id TEXT,
        parent_session_id TEXT,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        negotiated TEXT,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX sessions_by_agent ON sessions (agent_id, started_at)",
    """CREATE TABLE agbom_versions (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        document TEXT NOT NULL,
        agbom_hash TEXT NOT NULL,
        change TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, version)
    )""",
    "CREATE INDEX agbom_versions_by_agent ON agbom_versions (agent_id, created_at)",
    # Fleet inventory index: one row per component per AgBOM version.
    """CREATE TABLE components (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        component_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        version_str TEXT,
        first_seen TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (session_id, version, component_id)
    )""",
    "CREATE INDEX components_by_type_name ON components (type, name)",
    "CREATE INDEX components_by_agent ON components (agent_id)",
    """CREATE TABLE skill_events (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        skill_id TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN ('load', 'unload')),
        at TEXT NOT NULL
    )""",
    "CREATE INDEX skill_events_by_session ON skill_events (session_id, skill_id, event)",
]

_V4 = [
    # The chain head when the session ended (sealed): lets `audit verify` notice entries cut
    # from the end of an ended session's chain, which no link inside the chain can reveal.
    "ALTER TABLE sessions ADD COLUMN sealed_head TEXT",
]

_V5 = [
    # An AgBOM the Guardian refused (a denied snapshot or hot-swap) is kept for audit and
    # `agbom explain`, but is never the session's current inventory nor indexed as in use.
    "ALTER TABLE agbom_versions ADD COLUMN accepted INTEGER NOT NULL DEFAULT 1",
]

_V6 = [
    # What each approval decision covered: the capability list (JSON) the record held after
    # it. NULL on rows written before this version, where it was not recorded.
    "ALTER TABLE skill_history ADD COLUMN capabilities TEXT",
    # Most entries carry no nonce: index only those that do (uniqueness is unchanged, NULLs
    # never collided), one index write fewer per decision.
    "DROP INDEX chain_by_nonce",
    "CREATE UNIQUE INDEX chain_by_nonce ON chain_entries (session_id, nonce) "
    "WHERE nonce IS NOT NULL",
]

_V7 = [
    # What a registration carried for review (``definition.body``: the SKILL.md text and the
    # file list), as agbom/review/definition.py bounds it; one row per pair, for the review
    # page's "what changed".
    """CREATE TABLE skill_definitions (
        skill_id TEXT NOT NULL,
        digest_alg TEXT NOT NULL,
        digest_value TEXT NOT NULL,
        definition TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (skill_id, digest_alg, digest_value)
    ) WITHOUT ROWID""",
]


def _content_addressed_versions(conn: sqlite3.Connection) -> None:
    # Imported here: the store package imports this module first.
    from agbom.store.sqlite.versions import migrate_v6_versions

    migrate_v6_versions(conn)


Step = str | Callable[[sqlite3.Connection], None]
"""A migration step: one SQL statement, or a data step run on the migrating connection."""

_V8: list[Step] = [
    # Content-addressed AgBOM versions (agbom/store/sqlite/versions.py): each distinct
    # component stored once, keyed by the SHA-256 of its bytes; a version is its header plus
    # which components it holds, kept as intervals that double as the fleet index; a
    # refused version is its differences from the accepted one it was refused against.
    "DROP INDEX agbom_versions_by_agent",
    "ALTER TABLE agbom_versions RENAME TO agbom_versions_v6",
    """CREATE TABLE agbom_versions (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        header TEXT,
        document TEXT,
        base_version INTEGER,
        agbom_hash TEXT NOT NULL,
        change TEXT,
        created_at TEXT NOT NULL,
        accepted INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (session_id, version),
        CHECK ((header IS NULL) <> (document IS NULL))
    )""",
    "CREATE INDEX agbom_versions_by_agent ON agbom_versions (agent_id, created_at)",
    """CREATE TABLE agbom_components (
        key TEXT PRIMARY KEY,
        body TEXT NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE agbom_members (
        session_id TEXT NOT NULL,
        component_id TEXT NOT NULL,
        since_version INTEGER NOT NULL,
        until_version INTEGER,
        key TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT NOT NULL,
        version_str TEXT,
        first_seen TEXT NOT NULL,
        last_seen TEXT,
        PRIMARY KEY (session_id, component_id, since_version)
    ) WITHOUT ROWID""",
    "CREATE INDEX agbom_members_by_type_name ON agbom_members (type, name)",
    """CREATE TABLE agbom_refused_members (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        component_id TEXT NOT NULL,
        key TEXT,
        PRIMARY KEY (session_id, version, component_id)
    ) WITHOUT ROWID""",
    _content_addressed_versions,
    "DROP TABLE agbom_versions_v6",
    "DROP TABLE components",
]

_V9: list[Step] = [
    # Approved MCP servers and the pin of their tool set (agbom/store/sqlite/servers.py): one
    # row per server, keyed by the casefolded name the approval gave; the pin is the JSON of
    # agbom.scan.lock.tool_set_pin with the canonical definitions.
    """CREATE TABLE server_pins (
        server_key TEXT PRIMARY KEY,
        server TEXT NOT NULL,
        purl TEXT,
        version TEXT,
        pin_value TEXT NOT NULL,
        pin TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('approved', 'revoked')),
        decided_by TEXT NOT NULL,
        decided_at TEXT NOT NULL,
        reason TEXT
    ) WITHOUT ROWID""",
    # Every approval and revocation, appended and never rewritten (the triggers enforce it).
    """CREATE TABLE server_pin_history (
        id INTEGER PRIMARY KEY,
        server_key TEXT NOT NULL,
        server TEXT NOT NULL,
        purl TEXT,
        version TEXT,
        pin_value TEXT NOT NULL,
        pin TEXT NOT NULL,
        from_status TEXT,
        to_status TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT,
        at TEXT NOT NULL
    )""",
    "CREATE INDEX server_pin_history_by_key ON server_pin_history (server_key, id)",
    """CREATE TRIGGER server_pin_history_no_update BEFORE UPDATE ON server_pin_history
       BEGIN SELECT RAISE(ABORT, 'server_pin_history is append-only'); END""",
    """CREATE TRIGGER server_pin_history_no_delete BEFORE DELETE ON server_pin_history
       BEGIN SELECT RAISE(ABORT, 'server_pin_history is append-only'); END""",
]

_V10: list[Step] = [
    # A session's chain head signed with the Guardian's asymmetric key at sessionEnd
    # (agbom/guardian/signing.py): the agbom.chain-head/v1 statement as JSON, kept once.
    """CREATE TABLE signed_heads (
        session_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        statement TEXT NOT NULL,
        sealed_at TEXT NOT NULL
    ) WITHOUT ROWID""",
]

_V11: list[Step] = [
    # The asymmetric key that signs a session's answers when its handshake accepted
    # acs-crypto (agbom/guardian/signing.py): read by a restarted Guardian or another replica.
    """CREATE TABLE response_keys (
        session_id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        negotiated_at TEXT NOT NULL
    ) WITHOUT ROWID""",
]

_V12: list[Step] = [
    # The signer an approval requires (`skills approve --require-signer`): the approval holds
    # only while a signature by that signer verifies over the skill (guardian/skill_trust.py).
    # NULL: no signer required. The history records what each decision required.
    "ALTER TABLE skills ADD COLUMN required_signer TEXT",
    "ALTER TABLE skill_history ADD COLUMN required_signer TEXT",
]


def _fleet_summary(conn: sqlite3.Connection) -> None:
    # Imported here: the store package imports this module first.
    from agbom.store.sqlite.fleet import rebuild_summary

    rebuild_summary(conn)


_V13: list[Step] = [
    # The fleet summary (agbom/store/_fleet_summary.py), kept as AgBOMs are saved: each
    # agent's latest accepted AgBOM's fleet components (fleet_held), one row per distinct
    # component with its aggregates (fleet_summary), and the scratch list of the components
    # one save touches (fleet_dirty, empty between saves). ref_key/release_key: the ref and
    # release with NULL as '' and any text after a 'v', so that they key an index.
    """CREATE TABLE fleet_held (
        agent_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agbom_version INTEGER NOT NULL,
        seen_at TEXT NOT NULL,
        first_seen TEXT,
        component_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT,
        ref TEXT,
        release TEXT,
        ref_key TEXT NOT NULL,
        release_key TEXT NOT NULL,
        purl TEXT,
        digest_alg TEXT,
        digest_value TEXT
    )""",
    "CREATE INDEX fleet_held_by_agent ON fleet_held (agent_id)",
    # Covering: a component's summary is recomputed from this index alone, in order.
    "CREATE INDEX fleet_held_by_component ON fleet_held (type, ref_key, release_key, agent_id, "
    "first_seen, seen_at, name, purl, ref, release, component_id, digest_alg, digest_value)",
    """CREATE TABLE fleet_summary (
        type TEXT NOT NULL,
        ref_key TEXT NOT NULL,
        release_key TEXT NOT NULL,
        ref TEXT,
        release TEXT,
        name TEXT,
        purl TEXT,
        agents INTEGER NOT NULL,
        first_seen TEXT,
        last_seen TEXT,
        digest_alg TEXT,
        digest_value TEXT,
        search TEXT,
        pins_alike INTEGER NOT NULL,
        pin_id TEXT,
        pin_name TEXT,
        developers INTEGER NOT NULL,
        hosts INTEGER NOT NULL,
        PRIMARY KEY (type, ref_key, release_key)
    )""",
    # The list's order, walked by a page.
    "CREATE INDEX fleet_summary_by_name ON fleet_summary (type, name, ref, release_key)",
    """CREATE TABLE fleet_dirty (
        type TEXT NOT NULL,
        ref_key TEXT NOT NULL,
        release_key TEXT NOT NULL
    )""",
    # (Built from the stored versions by v16, the last change of its tables: the statements
    # that build it are the current ones, which need those columns.)
    # The pending-approvals chart reads the history of its window only.
    "CREATE INDEX skill_history_by_at ON skill_history (at)",
]

_V14: list[Step] = [
    # The recorded decisions counted per day, by disposition and by denied rule, kept by
    # every append from now on (agbom/store/_decision_counts.py), and the entries already
    # stored counted once.
    _decision_counts.SQLITE_TABLE,
    *_decision_counts.SQLITE_BACKFILL,
]

_V15: list[Step] = [
    # Each fleet component's rule findings (agbom/store/_fleet_scan.py): the worst severity's
    # rank and the rule ids the Guardian found on it in each agent's latest accepted AgBOM
    # (fleet_held), and over its holders (fleet_summary); the covering index of a
    # component's holders gains the severity (the rule ids, unbounded text, are read from
    # the rows). (Built by v16.)
    "ALTER TABLE fleet_held ADD COLUMN severity INTEGER",
    "ALTER TABLE fleet_held ADD COLUMN rules TEXT",
    "ALTER TABLE fleet_summary ADD COLUMN severity INTEGER",
    "ALTER TABLE fleet_summary ADD COLUMN rules TEXT",
    "DROP INDEX fleet_held_by_component",
    "CREATE INDEX fleet_held_by_component ON fleet_held (type, ref_key, release_key, agent_id, "
    "first_seen, seen_at, name, purl, ref, release, component_id, digest_alg, digest_value, "
    "severity)",
]

_V16: list[Step] = [
    # The agents list's rows (agbom/store/_fleet_summary.py): each agent's latest accepted
    # version, kept with the rest of the summary; and fleet_summary keyed by a platform as
    # well: '' for a component's row over every holder, 'h' and a host platform for its row
    # over that platform's holders (a host filter's list). The table is made again (its key
    # changes; it holds nothing the stored versions do not). Then the summary is built from
    # the stored versions (the last migration that changes its tables does).
    """CREATE TABLE fleet_agents (
        agent_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        agbom_version INTEGER NOT NULL,
        seen_at TEXT NOT NULL
    ) WITHOUT ROWID""",
    "DROP TABLE fleet_summary",
    """CREATE TABLE fleet_summary (
        platform TEXT NOT NULL,
        type TEXT NOT NULL,
        ref_key TEXT NOT NULL,
        release_key TEXT NOT NULL,
        ref TEXT,
        release TEXT,
        name TEXT,
        purl TEXT,
        agents INTEGER NOT NULL,
        first_seen TEXT,
        last_seen TEXT,
        digest_alg TEXT,
        digest_value TEXT,
        search TEXT,
        pins_alike INTEGER NOT NULL,
        pin_id TEXT,
        pin_name TEXT,
        developers INTEGER NOT NULL,
        hosts INTEGER NOT NULL,
        severity INTEGER,
        rules TEXT,
        PRIMARY KEY (platform, type, ref_key, release_key)
    )""",
    # The list's order, walked by a page (of every holder's rows, or of one platform's).
    "CREATE INDEX fleet_summary_by_name ON fleet_summary (platform, type, name, ref, release_key)",
    _fleet_summary,
]

MIGRATIONS: Sequence[Sequence[Step]] = (
    _V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11, _V12, _V13, _V14, _V15, _V16
)  # fmt: skip
"""``MIGRATIONS[i]`` upgrades a store from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version a store has after :func:`migrate`; the newest this agbom understands."""
