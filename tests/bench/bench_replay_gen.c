/*
 * bench_replay_gen.c - the database bench_replay.sh replays: N recorded
 * decisions of the example bundle, written straight into a SQLite file
 * the store created (store_open makes the schema; the rows then go in
 * with plain INSERTs in one transaction - the PDP's own path would take
 * far longer for a million intents and adds nothing a replay reads).
 *
 *   bench_replay_gen PATH [N]     (N default 1000000)
 *
 * The mix, by a fixed pseudo-random sequence (the same file every run):
 * 40% shell.exec echo (ALLOW), 15% refunds of 50 (ALLOW), 10% refunds of
 * 500 (ESCALATE; half then approved by finance - a vote, the resolution
 * and a second decision ALLOW - and half denied), 10% git.push to main
 * (BLOCK PROTECTED_BRANCH), 10% file.read of /etc/passwd (BLOCK
 * SENSITIVE_PATH), 10% http.request to a private address (BLOCK
 * PRIVATE_ADDRESS), 5% refunds of 5000 (BLOCK AMOUNT_OVER_LIMIT); 1,000
 * agents, 20 decisions a second. Every recorded decision is what the
 * example bundle decides, so replaying it with that bundle reports no
 * change.
 *
 * PATH may be a postgresql:// URL of an empty database: the store makes
 * its schema, then the same mix goes in as a few INSERT ... SELECT over
 * generate_series (the kind by intent number modulo 20 instead of the
 * pseudo-random sequence; the quorum decisions after all first ones),
 * and the database is vacuumed and analysed as one in use would be.
 */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_key.h"
#include "ig_time.h"
#include "store.h"
#include "store_pg_int.h"

#define BASE_TIME 1796000000 /* 2026-11-30 */
#define AGENTS 1000
#define PER_SECOND 20

enum { S_INTENT, S_DECISION, S_APPROVAL, S_VOTE, S_RESOLUTION, S_N };

static const char *const sql[S_N] = {
    [S_INTENT] = "INSERT INTO intents (seq, intent_id, principal, tenant, "
                 "action, resource, intent_hash, binding, created_at, "
                 "expires_at) VALUES (?1, ?2, ?3, 'bench', ?4, ?5, "
                 "'sha256:00', ?6, ?7, ?7 + 60)",
    [S_DECISION] = "INSERT INTO decisions (intent_seq, decision_id, decision, "
                   "reasons, message, policy_revision, decided_at) VALUES "
                   "(?1, 'd', ?2, ?3, '', 'sha256:00', ?4)",
    [S_APPROVAL] = "INSERT INTO approvals (intent_seq, approval_id, "
                   "requirements, created_at, expires_at) VALUES (?1, ?2, "
                   "'{\"groups\":[\"finance\"],\"quorum\":1}', ?3, ?3 + 900)",
    [S_VOTE] = "INSERT INTO votes (intent_seq, approver, vote, comment, "
               "channel, groups, intent_hash, voted_at) VALUES (?1, 'alice', "
               "?2, 'ok', 'api', '[\"finance\"]', 'sha256:00', ?3)",
    [S_RESOLUTION] = "INSERT INTO resolutions (intent_seq, result, "
                     "resolved_at) VALUES (?1, ?2, ?3)",
};

struct kind {
    int weight;
    const char *action, *resource, *params, *decision, *reasons;
};

static const struct kind kinds[] = {
    {40, "shell.exec", "local", "{\"argv\":[\"echo\",\"hello\"]}", "ALLOW",
     "[]"},
    {15, "payments.refund", "orders/1", "{\"amount\":50,\"currency\":\"EUR\"}",
     "ALLOW", "[]"},
    {10, "payments.refund", "orders/2", "{\"amount\":500,\"currency\":\"EUR\"}",
     "ESCALATE", "[\"REFUND_NEEDS_APPROVAL\"]"},
    {10, "git.push", "repo", "{\"refs\":[\"refs/heads/main\"]}", "BLOCK",
     "[\"PROTECTED_BRANCH\"]"},
    {10, "file.read", "/etc/passwd", "{}", "BLOCK", "[\"SENSITIVE_PATH\"]"},
    {10, "http.request", "http://10.0.0.1/", "{}", "BLOCK",
     "[\"PRIVATE_ADDRESS\"]"},
    {5, "payments.refund", "orders/3", "{\"amount\":5000,\"currency\":\"EUR\"}",
     "BLOCK", "[\"AMOUNT_OVER_LIMIT\"]"},
};

static uint64_t rng = 88172645463325252ull;

static unsigned
next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % 100);
}

static const struct kind *
pick(void)
{
    unsigned r = next_rand(), acc = 0;
    size_t i;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        acc += (unsigned)kinds[i].weight;
        if (r < acc)
            return &kinds[i];
    }
    return &kinds[0];
}

static int
step(sqlite3_stmt *q)
{
    int rc = sqlite3_step(q);

    (void)sqlite3_reset(q);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int
decision(sqlite3_stmt **st, long long seq, const char *d, const char *reasons,
         long long at)
{
    (void)sqlite3_bind_int64(st[S_DECISION], 1, seq);
    (void)sqlite3_bind_text(st[S_DECISION], 2, d, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st[S_DECISION], 3, reasons, -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st[S_DECISION], 4, at);
    return step(st[S_DECISION]);
}

/* An approval ended by one vote: approved (a second decision ALLOW) or
   denied (BLOCK APPROVAL_DENIED). */
static int
approval(sqlite3_stmt **st, long long seq, const char *id, long long at,
         int approve)
{
    (void)sqlite3_bind_int64(st[S_APPROVAL], 1, seq);
    (void)sqlite3_bind_text(st[S_APPROVAL], 2, id, -1, SQLITE_TRANSIENT);
    (void)sqlite3_bind_int64(st[S_APPROVAL], 3, at);
    (void)sqlite3_bind_int64(st[S_VOTE], 1, seq);
    (void)sqlite3_bind_text(st[S_VOTE], 2, approve ? "APPROVE" : "DENY", -1,
                            SQLITE_STATIC);
    (void)sqlite3_bind_int64(st[S_VOTE], 3, at + 1);
    (void)sqlite3_bind_int64(st[S_RESOLUTION], 1, seq);
    (void)sqlite3_bind_text(st[S_RESOLUTION], 2,
                            approve ? "APPROVED" : "DENIED", -1, SQLITE_STATIC);
    (void)sqlite3_bind_int64(st[S_RESOLUTION], 3, at + 1);
    if (step(st[S_APPROVAL]) != 0 || step(st[S_VOTE]) != 0 ||
        step(st[S_RESOLUTION]) != 0)
        return -1;
    return approve
               ? decision(st, seq, "ALLOW", "[]", at + 1)
               : decision(st, seq, "BLOCK", "[\"APPROVAL_DENIED\"]", at + 1);
}

static int
intent(sqlite3_stmt **st, long long seq, const struct kind *k, long long at)
{
    char id[64], who[32], created[IG_TIME_STRLEN + 1],
        expires[IG_TIME_STRLEN + 1], binding[1024];
    int n;

    (void)snprintf(id, sizeof(id), "00000000-0000-7000-8000-%012lld", seq);
    (void)snprintf(who, sizeof(who), "agent-%lld", seq % AGENTS);
    if (ig_time_format(at, created) != IG_OK ||
        ig_time_format(at + 60, expires) != IG_OK)
        return -1;
    n = snprintf(binding, sizeof(binding),
                 "{\"action\":\"%s\",\"context\":{},\"created_at\":\"%s\","
                 "\"expires_at\":\"%s\",\"intent_id\":\"%s\",\"params\":%s,"
                 "\"principal\":\"%s\",\"resource\":\"%s\",\"tenant\":"
                 "\"bench\",\"version\":\"intentgate.intent/1\"}",
                 k->action, created, expires, id, k->params, who, k->resource);
    if (n < 0 || (size_t)n >= sizeof(binding))
        return -1;
    (void)sqlite3_bind_int64(st[S_INTENT], 1, seq);
    (void)sqlite3_bind_text(st[S_INTENT], 2, id, -1, SQLITE_TRANSIENT);
    (void)sqlite3_bind_text(st[S_INTENT], 3, who, -1, SQLITE_TRANSIENT);
    (void)sqlite3_bind_text(st[S_INTENT], 4, k->action, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st[S_INTENT], 5, k->resource, -1, SQLITE_STATIC);
    (void)sqlite3_bind_text(st[S_INTENT], 6, binding, n, SQLITE_TRANSIENT);
    (void)sqlite3_bind_int64(st[S_INTENT], 7, at);
    if (step(st[S_INTENT]) != 0 ||
        decision(st, seq, k->decision, k->reasons, at) != 0)
        return -1;
    if (strcmp(k->decision, "ESCALATE") == 0)
        return approval(st, seq, id, at, seq % 2 == 0);
    return 0;
}

static int
fill(const char *path, long long n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st[S_N] = {0};
    long long seq = 0, made = 0;
    int i, rc = -1;

    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA synchronous = OFF; BEGIN", NULL, NULL, NULL) !=
            SQLITE_OK)
        goto out;
    for (i = 0; i < S_N; i++)
        if (sqlite3_prepare_v2(db, sql[i], -1, &st[i], NULL) != SQLITE_OK)
            goto out;
    while (made < n) {
        const struct kind *k = pick();

        seq++;
        if (intent(st, seq, k, BASE_TIME + seq / PER_SECOND) != 0)
            goto out;
        made += strcmp(k->decision, "ESCALATE") == 0 ? 2 : 1;
    }
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    (void)printf("%lld intents, %lld decisions\n", seq, made);
out:
    if (rc != 0)
        (void)fprintf(stderr, "bench_replay_gen: %s\n", sqlite3_errmsg(db));
    for (i = 0; i < S_N; i++)
        sqlite3_finalize(st[i]);
    sqlite3_close(db);
    return rc;
}

/* The kinds by n % 20, in PostgreSQL: (idx, action, resource, params,
   decision, reasons). */
static const char PG_KINDS[] =
    "CREATE TEMP TABLE k (idx int, action text, resource text, params text,"
    " decision text, reasons text);"
    "INSERT INTO k SELECT i, 'shell.exec', 'local',"
    " '{\"argv\":[\"echo\",\"hello\"]}', 'ALLOW', '[]'"
    " FROM generate_series(0, 7) i;"
    "INSERT INTO k SELECT i, 'payments.refund', 'orders/1',"
    " '{\"amount\":50,\"currency\":\"EUR\"}', 'ALLOW', '[]'"
    " FROM generate_series(8, 10) i;"
    "INSERT INTO k SELECT i, 'payments.refund', 'orders/2',"
    " '{\"amount\":500,\"currency\":\"EUR\"}', 'ESCALATE',"
    " '[\"REFUND_NEEDS_APPROVAL\"]' FROM generate_series(11, 12) i;"
    "INSERT INTO k SELECT i, 'git.push', 'repo',"
    " '{\"refs\":[\"refs/heads/main\"]}', 'BLOCK', '[\"PROTECTED_BRANCH\"]'"
    " FROM generate_series(13, 14) i;"
    "INSERT INTO k SELECT i, 'file.read', '/etc/passwd', '{}', 'BLOCK',"
    " '[\"SENSITIVE_PATH\"]' FROM generate_series(15, 16) i;"
    "INSERT INTO k SELECT i, 'http.request', 'http://10.0.0.1/', '{}',"
    " 'BLOCK', '[\"PRIVATE_ADDRESS\"]' FROM generate_series(17, 18) i;"
    "INSERT INTO k VALUES (19, 'payments.refund', 'orders/3',"
    " '{\"amount\":5000,\"currency\":\"EUR\"}', 'BLOCK',"
    " '[\"AMOUNT_OVER_LIMIT\"]');";

#define PG_TIME(x)                                                             \
    "to_char(to_timestamp(" x ") AT TIME ZONE 'UTC', "                         \
    "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* $1: how many intents. */
static const char *const PG_FILL[] = {
    "INSERT INTO intents (seq, intent_id, principal, tenant, action,"
    " resource, intent_hash, binding, created_at, expires_at)"
    " SELECT g, 'i-' || g, 'agent-' || (g % 1000), 'bench', k.action,"
    " k.resource, 'sha256:00', json_build_object('action', k.action,"
    " 'context', '{}'::json, 'created_at', " PG_TIME(
        "t.t") ", 'expires_at', " PG_TIME("t.t + 60") ", 'intent_id', 'i-' || "
                                                      "g, 'params', "
                                                      "k.params::json,"
                                                      " 'principal', 'agent-' "
                                                      "|| (g % 1000), "
                                                      "'resource', k.resource, "
                                                      "'tenant',"
                                                      " 'bench', 'version', "
                                                      "'intentgate.intent/"
                                                      "1')::text, t.t, t.t + 60"
                                                      " FROM "
                                                      "generate_series(1, "
                                                      "$1::bigint) g"
                                                      " JOIN k ON k.idx = g % "
                                                      "20"
                                                      " CROSS JOIN LATERAL "
                                                      "(SELECT 1796000000 + g "
                                                      "/ 20 AS t) t",
    "INSERT INTO approvals (intent_seq, approval_id, requirements,"
    " created_at, expires_at) SELECT seq, intent_id,"
    " '{\"groups\":[\"finance\"],\"quorum\":1}', created_at,"
    " created_at + 900 FROM intents WHERE seq % 20 IN (11, 12)",
    "INSERT INTO votes (intent_seq, approver, vote, comment, channel, groups,"
    " intent_hash, voted_at) SELECT seq, 'alice', CASE WHEN seq % 2 = 0 THEN"
    " 'APPROVE' ELSE 'DENY' END, 'ok', 'api', '[\"finance\"]', 'sha256:00',"
    " created_at + 1 FROM intents WHERE seq % 20 IN (11, 12)",
    "INSERT INTO resolutions (intent_seq, result, resolved_at) SELECT seq,"
    " CASE WHEN seq % 2 = 0 THEN 'APPROVED' ELSE 'DENIED' END,"
    " created_at + 1 FROM intents WHERE seq % 20 IN (11, 12)",
    "INSERT INTO decisions (intent_seq, decision_id, decision, reasons,"
    " message, policy_revision, decided_at)"
    " SELECT seq, 'd', decision, reasons, '', 'sha256:00', at FROM ("
    " SELECT i.seq, 0 AS n, k.decision, k.reasons, i.created_at AS at"
    " FROM intents i JOIN k ON k.idx = i.seq % 20"
    " UNION ALL SELECT i.seq, 1, CASE WHEN i.seq % 2 = 0 THEN 'ALLOW' ELSE"
    " 'BLOCK' END, CASE WHEN i.seq % 2 = 0 THEN '[]' ELSE"
    " '[\"APPROVAL_DENIED\"]' END, i.created_at + 1 FROM intents i"
    " WHERE i.seq % 20 IN (11, 12)) x ORDER BY seq, n",
};

static int
fill_pg(const char *url, long long n)
{
    char count[24];
    const char *params[1] = {count};
    struct ig_err err;
    PGconn *pg = store_pg_connect(url, &err);
    PGresult *r;
    size_t i;
    int rc = -1;

    if (pg == NULL) {
        (void)fprintf(stderr, "bench_replay_gen: %s\n", err.msg);
        return -1;
    }
    /* 1 in 10 intents makes two decisions: N decisions are N/1.1
       intents. */
    (void)snprintf(count, sizeof(count), "%lld", n * 10 / 11);
    r = PQexec(pg, "SET statement_timeout = 0");
    PQclear(r);
    r = PQexec(pg, PG_KINDS);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        goto out;
    for (i = 0; i < sizeof(PG_FILL) / sizeof(PG_FILL[0]); i++) {
        PQclear(r);
        r = PQexecParams(pg, PG_FILL[i], i == 0 ? 1 : 0, NULL,
                         i == 0 ? params : NULL, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            goto out;
    }
    /* As a database in use would be: vacuumed (visibility and hint
       bits set) and analysed, not read for the first time by the
       replay. */
    PQclear(r);
    r = PQexec(pg, "VACUUM ANALYZE");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        goto out;
    PQclear(r);
    r = PQexec(pg, "SELECT (SELECT count(*) FROM intents),"
                   " (SELECT count(*) FROM decisions)");
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        (void)printf("%s intents, %s decisions\n", PQgetvalue(r, 0, 0),
                     PQgetvalue(r, 0, 1));
        rc = 0;
    }
out:
    if (rc != 0)
        (void)fprintf(stderr, "bench_replay_gen: %s", PQerrorMessage(pg));
    PQclear(r);
    PQfinish(pg);
    return rc;
}

int
main(int argc, char **argv)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;
    long long n = argc > 2 ? strtoll(argv[2], NULL, 10) : 1000000;

    if (argc < 2 || n < 1) {
        (void)fprintf(stderr, "usage: bench_replay_gen PATH [N]\n");
        return 2;
    }
    memset(&o, 0, sizeof(o));
    o.path = argv[1];
    if (ig_crypto_init() != IG_OK || store_open(&o, &s, &err) != IG_OK) {
        (void)fprintf(stderr, "bench_replay_gen: %s\n", err.msg);
        return 1;
    }
    store_close(s);
    if (store_is_postgres(argv[1]))
        return fill_pg(argv[1], n) == 0 ? 0 : 1;
    return fill(argv[1], n) == 0 ? 0 : 1;
}
