/*
 * store_schema.c - the SQLite schema and its versioned migrations.
 *
 * PRAGMA user_version holds the number of migrations applied. Each
 * migration runs in its own transaction; a database newer than this binary
 * is refused. Every table that records what happened refuses UPDATE and
 * DELETE by trigger, so a row once written is never changed by intentgate
 * (an operator with the file can still edit it - the audit log's signed
 * Merkle tree is what detects that).
 */
#include "store_int.h"

#include <stdio.h>

#define IMMUTABLE(t)                                                           \
    "CREATE TRIGGER " t "_no_update BEFORE UPDATE ON " t " BEGIN "             \
    "SELECT RAISE(ABORT, '" t " rows are immutable'); END;"                    \
    "CREATE TRIGGER " t "_no_delete BEFORE DELETE ON " t " BEGIN "             \
    "SELECT RAISE(ABORT, '" t " rows are immutable'); END;"

/* The same, for a migration that may find them made already. */
#define IMMUTABLE_IF_NEW(t)                                                    \
    "CREATE TRIGGER IF NOT EXISTS " t "_no_update BEFORE UPDATE ON " t         \
    " BEGIN SELECT RAISE(ABORT, '" t " rows are immutable'); END;"             \
    "CREATE TRIGGER IF NOT EXISTS " t "_no_delete BEFORE DELETE ON " t         \
    " BEGIN SELECT RAISE(ABORT, '" t " rows are immutable'); END;"

static const char *const migrations[] = {
    /* 1: the first schema. Rows are keyed by the intent's sequence number
       (append-only B-tree inserts); the random UUIDs are indexed once. */
    "CREATE TABLE intents ("
    " seq INTEGER PRIMARY KEY,"
    " intent_id TEXT NOT NULL UNIQUE,"
    " principal TEXT NOT NULL,"
    " tenant TEXT NOT NULL,"
    " action TEXT NOT NULL,"
    " resource TEXT NOT NULL,"
    " intent_hash TEXT NOT NULL,"
    " binding TEXT NOT NULL,"
    " idempotency_key TEXT,"
    " created_at INTEGER NOT NULL,"
    " expires_at INTEGER NOT NULL);"
    "CREATE INDEX intents_idem ON intents(principal, idempotency_key)"
    " WHERE idempotency_key IS NOT NULL;"
    "CREATE TABLE decisions ("
    " seq INTEGER PRIMARY KEY,"
    " intent_seq INTEGER NOT NULL REFERENCES intents(seq),"
    " decision_id TEXT NOT NULL,"
    " decision TEXT NOT NULL"
    "  CHECK (decision IN ('ALLOW', 'ESCALATE', 'BLOCK')),"
    " reasons TEXT NOT NULL,"
    " message TEXT NOT NULL,"
    " policy_revision TEXT NOT NULL,"
    " decided_at INTEGER NOT NULL);"
    "CREATE INDEX decisions_intent ON decisions(intent_seq);"
    "CREATE TABLE grants ("
    " intent_seq INTEGER PRIMARY KEY REFERENCES intents(seq),"
    " jti TEXT NOT NULL,"
    " decision_id TEXT NOT NULL,"
    " audience TEXT NOT NULL,"
    " issued_at INTEGER NOT NULL,"
    " expires_at INTEGER NOT NULL,"
    " token TEXT NOT NULL);"
    "CREATE TABLE redemptions ("
    " intent_seq INTEGER PRIMARY KEY REFERENCES grants(intent_seq),"
    " jti TEXT NOT NULL,"
    " executor TEXT NOT NULL,"
    " redeemed_at INTEGER NOT NULL);"
    "CREATE TABLE outcomes ("
    " intent_seq INTEGER PRIMARY KEY REFERENCES redemptions(intent_seq),"
    " outcome TEXT NOT NULL CHECK (outcome IN ('COMPLETED',"
    "  'FAILED_BEFORE_DISPATCH', 'UNKNOWN_AFTER_DISPATCH',"
    "  'DEFINITELY_NOT_EXECUTED')),"
    " detail TEXT NOT NULL,"
    " executor TEXT NOT NULL,"
    " reported_at INTEGER NOT NULL);"
    "CREATE TABLE approvals ("
    " intent_seq INTEGER PRIMARY KEY REFERENCES intents(seq),"
    " approval_id TEXT NOT NULL UNIQUE,"
    " requirements TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " expires_at INTEGER NOT NULL);"
    "CREATE TABLE audit_events ("
    " seq INTEGER PRIMARY KEY,"
    " event TEXT NOT NULL);"
    "CREATE TABLE counter_hits ("
    " key TEXT NOT NULL,"
    " at INTEGER NOT NULL);"
    "CREATE INDEX counter_hits_at ON counter_hits(at);" IMMUTABLE("intents")
        IMMUTABLE("decisions") IMMUTABLE("grants") IMMUTABLE("redemptions")
            IMMUTABLE("outcomes") IMMUTABLE("approvals")
                IMMUTABLE("audit_events"),
    /* 2: votes on approval requests and how each request ended. */
    "CREATE TABLE votes ("
    " seq INTEGER PRIMARY KEY,"
    " intent_seq INTEGER NOT NULL REFERENCES approvals(intent_seq),"
    " approver TEXT NOT NULL,"
    " vote TEXT NOT NULL CHECK (vote IN ('APPROVE', 'DENY')),"
    " comment TEXT NOT NULL,"
    " channel TEXT NOT NULL,"
    " groups TEXT NOT NULL,"
    " intent_hash TEXT NOT NULL,"
    " voted_at INTEGER NOT NULL,"
    " UNIQUE (intent_seq, approver));"
    "CREATE TABLE resolutions ("
    " intent_seq INTEGER PRIMARY KEY REFERENCES approvals(intent_seq),"
    " result TEXT NOT NULL"
    "  CHECK (result IN ('APPROVED', 'DENIED', 'EXPIRED')),"
    " resolved_at INTEGER NOT NULL);"
    "CREATE INDEX approvals_expiry ON approvals(expires_at);" IMMUTABLE("votes")
        IMMUTABLE("resolutions"),
    /* 3: the audit log's Merkle tree. audit_nodes holds every complete
       subtree (level 0: the leaf hashes; leaf index = audit_events.seq - 1)
       so proofs never reread the log; checkpoints the signed notes. A
       database with events from before this migration gets its nodes
       backfilled once at open (store_audit.c). */
    "CREATE TABLE audit_nodes ("
    " level INTEGER NOT NULL,"
    " idx INTEGER NOT NULL,"
    " hash BLOB NOT NULL,"
    " PRIMARY KEY (level, idx)) WITHOUT ROWID;"
    "CREATE TABLE checkpoints ("
    " size INTEGER PRIMARY KEY,"
    " note TEXT NOT NULL,"
    " created_at INTEGER NOT NULL);" IMMUTABLE("audit_nodes")
        IMMUTABLE("checkpoints"),
    /* 4: quota hits as counts per key and second, written once per group
       commit (store_counter.c) instead of one row and one index entry per
       hit. */
    "CREATE TABLE counter_counts ("
    " key TEXT NOT NULL,"
    " at INTEGER NOT NULL,"
    " hits INTEGER NOT NULL CHECK (hits > 0),"
    " PRIMARY KEY (key, at)) WITHOUT ROWID;"
    "INSERT INTO counter_counts SELECT key, at, count(*) FROM counter_hits"
    " GROUP BY key, at;"
    "DROP TABLE counter_hits;",
    /* 5: the tree as C2SP tlog tiles (audit/audit_tile.h): one row per
       full tile of 256 hashes, written once, in place of two audit_nodes
       rows per leaf. The partial tiles at the right edge are not stored:
       the writer keeps them and rebuilds them at open. audit_nodes is
       dropped (with its triggers: DROP TABLE fires none); the tiles of an
       existing log are computed from its events at the first open, after
       which its checkpoints and the anchor are checked against them. It
       holds when run twice (a test that sets user_version back). */
    "CREATE TABLE IF NOT EXISTS audit_tiles ("
    " level INTEGER NOT NULL,"
    " idx INTEGER NOT NULL,"
    " hashes BLOB NOT NULL,"
    " PRIMARY KEY (level, idx)) WITHOUT ROWID;"
    "DROP TABLE IF EXISTS audit_nodes;" IMMUTABLE_IF_NEW("audit_tiles"),
    /* 6: what the PDP replicas share, mutable (store_shared.c): approver
       sessions by the SHA-256 of their id (hex; never the id), failed
       sign-ins per key (times in wall clock milliseconds), and where each
       approval's Slack message is. It holds when run twice. */
    "CREATE TABLE IF NOT EXISTS approver_sessions ("
    " id_hash TEXT PRIMARY KEY,"
    " approver TEXT NOT NULL,"
    " csrf TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " last_seen INTEGER NOT NULL,"
    " expires_at INTEGER NOT NULL,"
    " cred TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS approver_sessions_approver ON "
    "approver_sessions(approver);"
    "CREATE TABLE IF NOT EXISTS login_failures ("
    " key TEXT PRIMARY KEY,"
    " failures INTEGER NOT NULL,"
    " last_failure_ms INTEGER NOT NULL,"
    " wait_until_ms INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS slack_messages ("
    " intent_id TEXT PRIMARY KEY,"
    " channel TEXT NOT NULL,"
    " ts TEXT NOT NULL) WITHOUT ROWID;",
    /* 7: witness cosignatures (store_cosig.c): each witness's signature
       line on a stored checkpoint, kept as it came, at most one per
       (checkpoint, witness), immutable like the checkpoint it signs. The
       checkpoint must exist when a line is inserted (a trigger, and
       store_cosig.c checks first); not a foreign key, which would make
       the checkpoints' rows harder to remove than they are - what the
       attack tests do to fork a log, and a fork's checkpoint that a
       stale line then comes with fails its witness's check. The index
       answers a witness's latest cosigned size. It holds when run twice. */
    "CREATE TABLE IF NOT EXISTS cosignatures ("
    " size INTEGER NOT NULL,"
    " witness TEXT NOT NULL,"
    " line TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " PRIMARY KEY (size, witness)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS cosignatures_witness ON "
    "cosignatures(witness, size);"
    "CREATE TRIGGER IF NOT EXISTS cosignatures_checkpoint BEFORE INSERT ON "
    "cosignatures WHEN NOT EXISTS (SELECT 1 FROM checkpoints WHERE size = "
    "NEW.size) BEGIN SELECT RAISE(ABORT, 'no such checkpoint'); "
    "END;" IMMUTABLE_IF_NEW("cosignatures"),
};

#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static int
user_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int v = -1;

    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

enum ig_status
store_migrate(sqlite3 *db, struct ig_err *err)
{
    char sql[64];
    char *msg = NULL;
    int v = user_version(db), i;

    if (v < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot read schema version: %s",
                          sqlite3_errmsg(db));
    if (v > NMIGRATIONS)
        return ig_err_set(err, IG_ERR_IO,
                          "database schema version %d is newer than this "
                          "intentgate (%d): refusing to open it",
                          v, NMIGRATIONS);
    for (i = v; i < NMIGRATIONS; i++) {
        (void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", i + 1);
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) !=
                SQLITE_OK ||
            sqlite3_exec(db, migrations[i], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            (void)ig_err_set(err, IG_ERR_IO, "schema migration %d failed: %s",
                             i + 1, msg != NULL ? msg : "unknown error");
            sqlite3_free(msg);
            (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return IG_ERR_IO;
        }
    }
    return IG_OK;
}
