/*
 * store_stmt.c - the text of the statements prepared once: on the writer
 * connection (store_sqlite.c, run by store_ops.c's jobs and the audit
 * log's) and on each read connection (store_pool.c). Data only: every
 * store file may use it, it uses none.
 */
#include "store_int.h"

const char *const store_wstmt_sql[W_COUNT] = {
    [W_IDEM] = "SELECT intent_id FROM intents WHERE principal = ?1 AND "
               "idempotency_key = ?2 AND expires_at > ?3 "
               "ORDER BY seq DESC LIMIT 1",
    [W_INTENT] = "INSERT INTO intents (intent_id, principal, tenant, action, "
                 "resource, intent_hash, binding, idempotency_key, "
                 "created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                 "?7, ?8, ?9, ?10)",
    [W_DECISION] = "INSERT INTO decisions (intent_seq, decision_id, decision, "
                   "reasons, message, policy_revision, decided_at) VALUES "
                   "(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [W_GRANT] = "INSERT INTO grants VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [W_APPROVAL] = "INSERT INTO approvals VALUES (?1, ?2, ?3, ?4, ?5)",
    [W_EVENT] = "INSERT INTO audit_events (event) VALUES (?1)",
    [W_REDEEMED] = "SELECT 1 FROM redemptions WHERE intent_seq = ?1",
    [W_REDEEM] = "INSERT INTO redemptions SELECT intent_seq, jti, ?3, ?4 "
                 "FROM grants WHERE intent_seq = ?1 AND jti = ?2",
    [W_REDEMPTION_BY] = "SELECT 1 FROM redemptions WHERE intent_seq = ?1 "
                        "AND executor = ?2",
    [W_OUTCOME_GET] = "SELECT outcome, detail FROM outcomes WHERE "
                      "intent_seq = ?1",
    [W_OUTCOME] = "INSERT INTO outcomes VALUES (?1, ?2, ?3, ?4, ?5)",
    [W_HITS] = "INSERT INTO counter_counts VALUES (?1, ?2, ?3) "
               "ON CONFLICT (key, at) DO UPDATE SET hits = hits + "
               "excluded.hits",
    [W_SEQ] = "SELECT seq FROM intents WHERE intent_id = ?1",
    [W_NODE] = "INSERT INTO audit_tiles (level, idx, hashes) VALUES "
               "(?1, ?2, ?3)",
    [W_NODE_GET] = "SELECT hashes FROM audit_tiles WHERE level = ?1 AND "
                   "idx = ?2",
    [W_CHECKPOINT] = "INSERT INTO checkpoints (size, note, created_at) "
                     "VALUES (?1, ?2, ?3)",
    [W_CKPT_EXISTS] = "SELECT 1 FROM checkpoints WHERE size = ?1",
    [W_COSIG] = "INSERT INTO cosignatures (size, witness, line, created_at) "
                "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (size, witness) DO "
                "NOTHING",
    [W_SAVEPOINT] = "SAVEPOINT job",
    [W_RELEASE] = "RELEASE job",
    [W_ROLLBACK_TO] = "ROLLBACK TO job",
};

const char *const store_rstmt_sql[R_COUNT] = {
    [R_IDEM] = "SELECT intent_id FROM intents WHERE principal = ?1 AND "
               "idempotency_key = ?2 AND expires_at > ?3 "
               "ORDER BY seq DESC LIMIT 1",
    [R_INTENT] = "SELECT seq, intent_id, principal, tenant, intent_hash, "
                 "binding, created_at, expires_at FROM intents "
                 "WHERE intent_id = ?1",
    [R_DECISIONS] = "SELECT decision_id, decision, reasons, message, "
                    "policy_revision, decided_at FROM decisions "
                    "WHERE intent_seq = ?1 ORDER BY seq",
    [R_GRANT] = "SELECT jti, audience, issued_at, expires_at, token FROM "
                "grants "
                "WHERE intent_seq = ?1",
    [R_REDEMPTION] = "SELECT executor, redeemed_at FROM redemptions "
                     "WHERE intent_seq = ?1",
    [R_OUTCOME] = "SELECT outcome, detail, executor, reported_at FROM "
                  "outcomes WHERE intent_seq = ?1",
    [R_APPROVAL] = "SELECT approval_id, requirements, created_at, expires_at "
                   "FROM approvals WHERE intent_seq = ?1",
    [R_AUDIT_SIZE] = "SELECT max(seq) FROM audit_events",
    [R_NODE] = "SELECT hashes FROM audit_tiles WHERE level = ?1 AND "
               "idx = ?2",
    [R_LEAVES] = "SELECT seq, event FROM audit_events WHERE seq > ?1 AND "
                 "seq <= ?2 ORDER BY seq",
    [R_CKPT_LATEST] = "SELECT size, note FROM checkpoints ORDER BY size DESC "
                      "LIMIT 1",
    [R_CKPT_SIZE] = "SELECT size, note FROM checkpoints WHERE size = ?1",
    [R_COSIGS] = "SELECT line FROM cosignatures WHERE size = ?1 "
                 "ORDER BY witness",
    [R_COSIG_LATEST] = "SELECT max(size) FROM cosignatures WHERE "
                       "witness = ?1",
};
