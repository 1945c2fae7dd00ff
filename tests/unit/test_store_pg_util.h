/*
 * test_store_pg_util.h - what the PostgreSQL store's unit tests share: a
 * fresh database per test on the cluster IG_TEST_PG_URL names (a base URL
 * whose user may CREATE DATABASE), stores opened on it, and statements
 * run on connections of the test's own. Failures fail the running test.
 */
#ifndef TEST_STORE_PG_UTIL_H
#define TEST_STORE_PG_UTIL_H

#include <libpq-fe.h>
#include <stdint.h>

#include "store.h"

struct pgt_db {
    char name[64];
    char url[1024];
};

/* IG_TEST_PG_URL, or NULL (the caller fails: a test never skips). */
const char *pgt_base_url(void);

/* Create a database of a new name (prefix, the pid and a counter) and
   set db's url to it; drop it. */
void pgt_db_create(struct pgt_db *db, const char *prefix);
void pgt_db_drop(struct pgt_db *db);

/* A store on db (fails the test when it does not open); with options of
   the caller's (their path is set to db's URL). */
struct store *pgt_store_open(const struct pgt_db *db);
struct store *pgt_store_open_opts(const struct pgt_db *db,
                                  struct store_opts *o);

/* A connection of the test's own to db. */
PGconn *pgt_connect(const struct pgt_db *db);

/* Run sql on db: 1 when it succeeded; else 0 with the server's message in
   msg (may be NULL). */
int pgt_exec(const struct pgt_db *db, const char *sql, char *msg,
             size_t msglen);

/* The integer sql returns (one row, one column); fails the test when the
   statement fails. */
int64_t pgt_int(const struct pgt_db *db, const char *sql);

/* Terminate every other session on db (a database failover, as the
   store's connections see it); returns how many. */
int64_t pgt_kill_sessions(const struct pgt_db *db);

/* One audit event, for the records below. */
extern const char *const pgt_ev1[1];

/* An ALLOW record with a grant, ids (intent, decision, jti, token) made
   from n into ids; idem may be NULL. Its events: pgt_ev1. */
void pgt_make_rec(struct store_intent_rec *r, char ids[4][40], int n,
                  const char *idem, int64_t now);
/* The same escalated: an approval request (its id in appr, quorum 2,
   expiring at now + 900) instead of a grant. */
void pgt_make_escalated(struct store_intent_rec *r, char ids[4][40],
                        char appr[40], int n, int64_t now);

/* Audit events db holds, queued or sequenced. */
int64_t pgt_events(const struct pgt_db *db);

#endif
