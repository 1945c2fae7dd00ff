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

/* A store on db (fails the test when it does not open). */
struct store *pgt_store_open(const struct pgt_db *db);

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

#endif
