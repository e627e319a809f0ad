"""The recorded decisions counted per day, free of any database driver: the counters behind
the Overview's charts "decisions by disposition over time" and "top denied rules" (SQLite
schema 14, PostgreSQL schema 8), and the statements that read them.

Every decision the Guardian makes is one audit-chain entry, and a fleet holds millions of
them: a chart that read the entries would read them all. So each append counts itself, in
the append's own transaction, into one small table keyed by the day it was recorded (UTC,
``recorded_at``), ``decision_days``: a row ``(day, disposition, '')`` counts the entries of
each disposition, and a row ``(day, 'deny', code)`` each reason code of the denials (``warn:``
codes left out: they warned, they did not deny; an empty code too). A chart reads 30 days of
counters, whatever the number of decisions. One table rather than two: a day's rows sit
side by side in one page, so a commit writes one page more than before, not two.

Where the count is made is chosen for the Guardian's hot path (benchmarks/
bench_decision_counts.py, docs/performance.md "Decisions counted per day"):

- SQLite: in Python, by the store's two append paths (:func:`counted`, from the entry the
  Guardian hands over as a mapping: no JSON is parsed again), in the append's transaction.
  A batch (the pipelined commits of ``agbom serve``) writes its counts in one statement
  before its commit, a few microseconds an entry; a single append becomes a
  transaction of the entry and its counts. A trigger did the same in SQL and cost every
  entry its own JSON parses and upserts: as much as counting in Python costs a single
  append, five times what it costs an entry of a batch. Nothing else appends to a SQLite
  store.
- PostgreSQL: a statement-level trigger over the inserted rows (one per batch statement,
  its JSON read on the server, no round trip added), so that ``store migrate``'s copies count
  too. Its counter rows are keyed by the backend's process id as well (``slot``), so that
  replicas appending at once never wait on one another's rows and can never deadlock on
  them; a chart sums the slots. A failure of the count (an entry PostgreSQL cannot read as
  JSON) rolls back the count alone, never the append.

The migration counts the entries already stored, by the same definition in SQL. Reason
codes are cut at :data:`MAX_RULE` characters and at most :data:`MAX_CODES` are counted per
entry (the Guardian writes a handful).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

DISPOSITIONS = ("allow", "deny", "modify", "ask", "defer")
"""The dispositions counted, in the charts' order (``agbom.protocol.Disposition``)."""
MAX_RULE = 128
MAX_CODES = 32
TOP_RULES = 10
"""Rules the "top denied rules" chart shows."""

_IN = "(" + ", ".join(f"'{d}'" for d in DISPOSITIONS) + ")"

# -- SQLite (schema 14) ---------------------------------------------------------------------

SQLITE_TABLE = """CREATE TABLE decision_days (
    day TEXT NOT NULL,
    decision TEXT NOT NULL,
    rule TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (day, decision, rule)
) WITHOUT ROWID"""

# The reason codes of an entry ``{of}`` counted as denied rules (``json_each`` joined to it).
# A decision that is not text cannot be one of the dispositions, whose text ``json_extract``
# compares (an array of one comes back as its JSON text).
_SQLITE_RULES = f"""json_each({{of}}.entry, '$.reason_codes') j
  WHERE j.type = 'text' AND j.value <> '' AND substr(j.value, 1, 5) <> 'warn:'
    AND j.key < {MAX_CODES}"""

SQLITE_COUNT = (
    "INSERT INTO decision_days (day, decision, rule, n) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (day, decision, rule) DO UPDATE SET n = n + excluded.n"
)
"""Add ``n`` to one counter (the rows of :func:`counted`, summed)."""


def counted(entry: Mapping[str, Any] | bytes | str, recorded_at: str) -> list[tuple[str, str, str]]:
    """The counters one stored entry adds 1 to: ``(day, disposition, '')`` and, for a deny,
    ``(day, 'deny', code)`` per reason code (a code given twice, twice); none for an entry
    that is no decision. ``entry`` as given to the append (a mapping is read as it is; text
    was checked to be a JSON object by then), ``recorded_at`` as stored."""
    if not isinstance(entry, Mapping):
        try:
            entry = orjson.loads(entry)
        except orjson.JSONDecodeError:
            return []
        if not isinstance(entry, dict):
            return []
    decision = entry.get("decision")
    if not isinstance(decision, str) or decision not in DISPOSITIONS:
        return []
    day = recorded_at[:10]
    keys = [(day, decision, "")]
    codes = entry.get("reason_codes")
    if decision == "deny" and isinstance(codes, list):
        keys.extend(
            (day, "deny", code[:MAX_RULE])
            for code in codes[:MAX_CODES]
            if isinstance(code, str) and code and not code.startswith("warn:")
        )
    return keys


# The entries already stored, counted as :func:`counted` counts them (valid JSON is checked
# before any other term reads it: SQLite tests a term on the outermost loop it can).
_SQLITE_DECIDED = f"""chain_entries e
  WHERE json_valid(e.entry) AND json_extract(e.entry, '$.decision') IN {_IN}"""

SQLITE_BACKFILL = (
    "INSERT INTO decision_days (day, decision, rule, n) "
    "SELECT substr(e.recorded_at, 1, 10), json_extract(e.entry, '$.decision'), '', COUNT(*) "
    f"FROM {_SQLITE_DECIDED} GROUP BY 1, 2",
    "INSERT INTO decision_days (day, decision, rule, n) "
    f"SELECT substr(e.recorded_at, 1, 10), 'deny', substr(j.value, 1, {MAX_RULE}), COUNT(*) "
    f"FROM (SELECT e.recorded_at, e.entry FROM {_SQLITE_DECIDED} "
    "AND json_extract(e.entry, '$.decision') = 'deny') e, "
    + _SQLITE_RULES.replace("{of}", "e")
    + " GROUP BY 1, 3",
)
"""The entries stored before schema 14, counted once."""

# -- PostgreSQL (schema 8) ------------------------------------------------------------------

_ID = 'TEXT COLLATE "C"'

POSTGRES_TABLE = f"""CREATE TABLE decision_days (
    day {_ID} NOT NULL,
    decision {_ID} NOT NULL,
    rule {_ID} NOT NULL,
    slot INTEGER NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (day, decision, rule, slot)
)"""

# {rows}: the entries counted, each read as jsonb by {parse}; its decision is kept when it
# is one of the dispositions, its reason codes when it is a deny. One INSERT for both kinds
# of row, grouped first (ON CONFLICT may touch a row once per statement).
_POSTGRES_COUNT = f"""
WITH parsed AS (
  SELECT left(r.recorded_at, 10) AS day, {{parse}} AS doc FROM {{rows}} r),
decided AS (
  SELECT day, doc, doc ->> 'decision' AS decision FROM parsed
  WHERE jsonb_typeof(doc -> 'decision') = 'string' AND doc ->> 'decision' IN {_IN}),
codes AS (
  SELECT d.day, e.value #>> '{{}}' AS code
  FROM decided d CROSS JOIN LATERAL jsonb_array_elements(
    CASE WHEN jsonb_typeof(d.doc -> 'reason_codes') = 'array' THEN d.doc -> 'reason_codes'
    ELSE '[]'::jsonb END) WITH ORDINALITY AS e(value, k)
  WHERE d.decision = 'deny' AND e.k <= {MAX_CODES} AND jsonb_typeof(e.value) = 'string'),
counted AS (
  SELECT day, decision, '' AS rule FROM decided
  UNION ALL
  SELECT day, 'deny', left(code, {MAX_RULE}) FROM codes
  WHERE code <> '' AND left(code, 5) <> 'warn:')
INSERT INTO decision_days (day, decision, rule, slot, n)
SELECT day, decision, rule, {{slot}}, COUNT(*) FROM counted GROUP BY day, decision, rule
ON CONFLICT (day, decision, rule, slot) DO UPDATE SET n = decision_days.n + EXCLUDED.n"""

# An entry as jsonb, any \u0000 escape made a space first: jsonb holds no NUL (and a '\\u0000'
# of text stays valid JSON after it too).
_JSONB = "replace({of}.entry, '\\u0000', '\\u0020')::jsonb"

POSTGRES_TRIGGER = (
    f"""CREATE FUNCTION agbom_count_decisions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  {
        _POSTGRES_COUNT.replace("{rows}", "counted_rows")
        .replace("{parse}", _JSONB.replace("{of}", "r"))
        .replace("{slot}", "pg_backend_pid()")
    };
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;  -- the append stands; only its count is lost (see agbom/store/_decision_counts.py)
END
$$""",
    "CREATE TRIGGER chain_entries_counted AFTER INSERT ON chain_entries "
    "REFERENCING NEW TABLE AS counted_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION agbom_count_decisions()",
)

POSTGRES_BACKFILL = (
    # Entry by entry, an entry PostgreSQL cannot read as JSON is left out rather than the
    # migration failing (a subtransaction each: once, at the upgrade).
    f"""CREATE FUNCTION agbom_entry_jsonb(entry text) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  RETURN {_JSONB.replace("{of}.", "")};
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$$""",
    _POSTGRES_COUNT.replace("{rows}", "chain_entries")
    .replace("{parse}", "agbom_entry_jsonb(r.entry)")
    .replace("{slot}", "0"),
    "DROP FUNCTION agbom_entry_jsonb(text)",
)
"""The entries stored before schema 8, counted once (slot 0)."""

# -- the charts' reads (both dialects; :func:`agbom.store._fleet_logic.fleet_sql` renders) ---

DECISIONS_BY_DAY = """
SELECT day, decision, SUM(n) FROM decision_days
WHERE day >= :since AND day <= :until AND rule = ''
GROUP BY day, decision
"""
TOP_DENIED_RULES = f"""
SELECT rule, SUM(n) AS total FROM decision_days
WHERE day >= :since AND day <= :until AND decision = 'deny' AND rule <> ''
GROUP BY rule ORDER BY total DESC, rule{{C}} LIMIT {TOP_RULES}
"""
