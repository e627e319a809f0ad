-- A store written by agbom at store schema 6 (commit ed3e265) with make_store_v6.py; read by tests/store/test_store_versions.py.
BEGIN TRANSACTION;
CREATE TABLE agbom_versions (
        session_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        document TEXT NOT NULL,
        agbom_hash TEXT NOT NULL,
        change TEXT,
        created_at TEXT NOT NULL, accepted INTEGER NOT NULL DEFAULT 1,
        PRIMARY KEY (session_id, version)
    );
INSERT INTO "agbom_versions" VALUES('a',1,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-04","name":"tool-4","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-05","name":"tool-5","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000001','{"method":"agbom/snapshot"}','2026-03-01T12:01:00Z',1);
INSERT INTO "agbom_versions" VALUES('a',2,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.write","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-04","name":"tool-4","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-05","name":"tool-5","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000002','{"method":"agbom/changed"}','2026-03-01T12:02:00Z',1);
INSERT INTO "agbom_versions" VALUES('a',3,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"net.egress","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.write","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-05","name":"tool-5","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000003','{"decision":"deny"}','2026-03-01T12:03:00Z',0);
INSERT INTO "agbom_versions" VALUES('a',4,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.write","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-04","name":"tool-4","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000004',NULL,'2026-03-01T12:04:00Z',1);
INSERT INTO "agbom_versions" VALUES('a',5,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"2.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.write","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-04","name":"tool-4","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-05","name":"tool-5","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000005',NULL,'2026-03-01T12:05:00Z',1);
INSERT INTO "agbom_versions" VALUES('a',6,'agent-a','{"agbom_version":"0.1","agent":{"id":"agent-a","name":"Agent A"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"2.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.write","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-04","name":"tool-4","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-05","name":"tool-5","provider":"local","type":"tool","version":"1.0.0"},{"id":"tool-07","name":"métrique","type":"tool","version":3,"weights":[1.0,0.5,1e+21],"ключ":"значение"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000006',NULL,'2026-03-01T12:06:00Z',1);
INSERT INTO "agbom_versions" VALUES('b',1,'agent-b','{"agent":{"id":"agent-b"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000007',NULL,'2026-03-01T12:07:00Z',1);
INSERT INTO "agbom_versions" VALUES('b',2,'agent-c','{"agent":{"id":"agent-b"},"components":[{"capability":"fs.read","id":"tool-00","name":"tool-0","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-02","name":"tool-2","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:0000000000000000000000000000000000000000000000000000000000000008',NULL,'2026-03-01T12:08:00Z',1);
INSERT INTO "agbom_versions" VALUES('b',3,'agent-c','{"agent":{"id":"agent-c"},"components":[]}','sha256:0000000000000000000000000000000000000000000000000000000000000009',NULL,'2026-03-01T12:09:00Z',1);
INSERT INTO "agbom_versions" VALUES('c',1,'agent-x','{"agent":{"id":"agent-x"},"components":[{"capability":"fs.read","id":"tool-03","name":"tool-3","provider":"local","type":"tool","version":"1.0.0"},{"capability":"fs.read","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},{"capability":"x","id":"tool-01","name":"tool-1","provider":"local","type":"tool","version":"1.0.0"},"junk",{"id":5}]}','sha256:000000000000000000000000000000000000000000000000000000000000000a',NULL,'2026-03-01T12:10:00Z',1);
INSERT INTO "agbom_versions" VALUES('c',2,'agent-x','{"agent":{"id":"agent-x"},"note":"no components"}','sha256:000000000000000000000000000000000000000000000000000000000000000b',NULL,'2026-03-01T12:11:00Z',1);
INSERT INTO "agbom_versions" VALUES('c',3,'agent-x','{"components":[{"capability":"fs.read","id":"tool-09","name":"tool-9","provider":"local","type":"tool","version":"1.0.0"}]}','sha256:000000000000000000000000000000000000000000000000000000000000000c',NULL,'2026-03-01T12:12:00Z',0);
CREATE TABLE chain_entries (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        entry TEXT NOT NULL,
        entry_hash TEXT NOT NULL,
        previous_hash TEXT,
        request_id TEXT,
        nonce TEXT,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
CREATE TABLE components (
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
    );
INSERT INTO "components" VALUES('a',1,'agent-a','tool-00','tool','tool-0','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',1,'agent-a','tool-01','tool','tool-1','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',1,'agent-a','tool-02','tool','tool-2','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',1,'agent-a','tool-03','tool','tool-3','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',1,'agent-a','tool-04','tool','tool-4','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',1,'agent-a','tool-05','tool','tool-5','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:01:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-00','tool','tool-0','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-01','tool','tool-1','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-02','tool','tool-2','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-03','tool','tool-3','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-04','tool','tool-4','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',2,'agent-a','tool-05','tool','tool-5','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:02:00Z');
INSERT INTO "components" VALUES('a',4,'agent-a','tool-00','tool','tool-0','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:04:00Z');
INSERT INTO "components" VALUES('a',4,'agent-a','tool-01','tool','tool-1','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:04:00Z');
INSERT INTO "components" VALUES('a',4,'agent-a','tool-02','tool','tool-2','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:04:00Z');
INSERT INTO "components" VALUES('a',4,'agent-a','tool-03','tool','tool-3','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:04:00Z');
INSERT INTO "components" VALUES('a',4,'agent-a','tool-04','tool','tool-4','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:04:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-00','tool','tool-0','2.0.0','2026-03-01T12:05:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-01','tool','tool-1','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-02','tool','tool-2','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-03','tool','tool-3','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-04','tool','tool-4','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',5,'agent-a','tool-05','tool','tool-5','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:05:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-00','tool','tool-0','2.0.0','2026-03-01T12:05:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-01','tool','tool-1','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-02','tool','tool-2','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-03','tool','tool-3','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-04','tool','tool-4','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-05','tool','tool-5','1.0.0','2026-03-01T12:01:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('a',6,'agent-a','tool-07','tool','métrique','3','2026-03-01T12:06:00Z','2026-03-01T12:06:00Z');
INSERT INTO "components" VALUES('b',1,'agent-b','tool-00','tool','tool-0','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:07:00Z');
INSERT INTO "components" VALUES('b',1,'agent-b','tool-01','tool','tool-1','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:07:00Z');
INSERT INTO "components" VALUES('b',1,'agent-b','tool-02','tool','tool-2','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:07:00Z');
INSERT INTO "components" VALUES('b',2,'agent-c','tool-00','tool','tool-0','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:08:00Z');
INSERT INTO "components" VALUES('b',2,'agent-c','tool-01','tool','tool-1','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:08:00Z');
INSERT INTO "components" VALUES('b',2,'agent-c','tool-02','tool','tool-2','1.0.0','2026-03-01T12:07:00Z','2026-03-01T12:08:00Z');
INSERT INTO "components" VALUES('c',1,'agent-x','tool-03','tool','tool-3','1.0.0','2026-03-01T12:10:00Z','2026-03-01T12:10:00Z');
INSERT INTO "components" VALUES('c',1,'agent-x','tool-01','tool','tool-1','1.0.0','2026-03-01T12:10:00Z','2026-03-01T12:10:00Z');
CREATE TABLE schema_version (
        version INTEGER PRIMARY KEY,
        applied_at TEXT NOT NULL
    );
INSERT INTO "schema_version" VALUES(1,'2026-12-01T16:26:46.302173Z');
INSERT INTO "schema_version" VALUES(2,'2026-12-01T16:26:46.302638Z');
INSERT INTO "schema_version" VALUES(3,'2026-12-01T16:26:46.303192Z');
INSERT INTO "schema_version" VALUES(4,'2026-12-01T16:26:46.303369Z');
INSERT INTO "schema_version" VALUES(5,'2026-12-01T16:26:46.303527Z');
INSERT INTO "schema_version" VALUES(6,'2026-12-01T16:26:46.303750Z');
CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        tenant_id TEXT,
        parent_session_id TEXT,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        negotiated TEXT,
        updated_at TEXT NOT NULL
    , sealed_head TEXT);
CREATE TABLE skill_events (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        skill_id TEXT NOT NULL,
        event TEXT NOT NULL CHECK (event IN ('load', 'unload')),
        at TEXT NOT NULL
    );
CREATE TABLE skill_history (
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
    , scope_agents TEXT NOT NULL DEFAULT '[]', scope_tenants TEXT NOT NULL DEFAULT '[]', capabilities TEXT);
CREATE TABLE skills (
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
        registered_by_tenant TEXT, scope_agents TEXT NOT NULL DEFAULT '[]', scope_tenants TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (skill_id, digest_alg, digest_value)
    ) WITHOUT ROWID;
CREATE INDEX skills_by_status ON skills (status, skill_id);
CREATE INDEX skill_history_by_pair ON skill_history (skill_id, digest_alg, digest_value, id);
CREATE TRIGGER skill_history_no_update BEFORE UPDATE ON skill_history
       BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END;
CREATE TRIGGER skill_history_no_delete BEFORE DELETE ON skill_history
       BEGIN SELECT RAISE(ABORT, 'skill_history is append-only'); END;
CREATE UNIQUE INDEX chain_by_request ON chain_entries (session_id, request_id);
CREATE INDEX sessions_by_agent ON sessions (agent_id, started_at);
CREATE INDEX agbom_versions_by_agent ON agbom_versions (agent_id, created_at);
CREATE INDEX components_by_type_name ON components (type, name);
CREATE INDEX components_by_agent ON components (agent_id);
CREATE INDEX skill_events_by_session ON skill_events (session_id, skill_id, event);
CREATE UNIQUE INDEX chain_by_nonce ON chain_entries (session_id, nonce) WHERE nonce IS NOT NULL;
COMMIT;
