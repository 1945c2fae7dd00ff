/*
 * test_store_pg_util.c - a fresh PostgreSQL database per test, on the
 * cluster of IG_TEST_PG_URL (see test_store_pg_util.h).
 */
#include "testutil.h"

#include "test_store_pg_util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int db_counter;

const char *
pgt_base_url(void)
{
    const char *u = getenv("IG_TEST_PG_URL");

    return u != NULL && u[0] != '\0' ? u : NULL;
}

/* base with its database name replaced by name: the path after the
   authority, up to a '?'. */
static void
url_with_db(const char *base, const char *name, char *out, size_t len)
{
    const char *auth = strstr(base, "://");
    const char *path, *query;
    int n;

    if (auth == NULL)
        fail_msg("IG_TEST_PG_URL is not a URL: %s", base);
    auth += 3;
    query = strchr(auth, '?');
    path = strchr(auth, '/');
    if (path == NULL || (query != NULL && path > query))
        path = query != NULL ? query : auth + strlen(auth);
    n = snprintf(out, len, "%.*s/%s%s", (int)(path - base), base, name,
                 query != NULL ? query : "");
    if (n < 0 || (size_t)n >= len)
        fail_msg("database URL too long");
}

static void
quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *
connect_url(const char *url)
{
    PGconn *c = PQconnectdb(url);

    if (c == NULL || PQstatus(c) != CONNECTION_OK)
        fail_msg("cannot connect to %s: %s", url,
                 c != NULL ? PQerrorMessage(c) : "out of memory");
    (void)PQsetNoticeProcessor(c, quiet, NULL);
    return c;
}

static void
admin(const char *sql)
{
    const char *base = pgt_base_url();
    PGconn *c;
    PGresult *r;

    if (base == NULL)
        fail_msg("IG_TEST_PG_URL is not set: these tests need a "
                 "PostgreSQL cluster (scripts/pg-cluster.sh)");
    c = connect_url(base);
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
}

void
pgt_db_create(struct pgt_db *db, const char *prefix)
{
    char sql[128];

    (void)snprintf(db->name, sizeof(db->name), "%s_%ld_%d", prefix,
                   (long)getpid(), atomic_fetch_add(&db_counter, 1));
    (void)snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s", db->name);
    admin(sql);
    (void)snprintf(sql, sizeof(sql), "CREATE DATABASE %s", db->name);
    admin(sql);
    url_with_db(pgt_base_url(), db->name, db->url, sizeof(db->url));
}

void
pgt_db_drop(struct pgt_db *db)
{
    char sql[128];

    (void)snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)",
                   db->name);
    admin(sql);
}

struct store *
pgt_store_open(const struct pgt_db *db)
{
    struct store_opts o;
    struct store *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = db->url;
    o.synchronous_full = 1;
    if (store_open(&o, &s, &err) != IG_OK)
        fail_msg("open %s: %s", db->url, err.msg);
    return s;
}

PGconn *
pgt_connect(const struct pgt_db *db)
{
    return connect_url(db->url);
}

int
pgt_exec(const struct pgt_db *db, const char *sql, char *msg, size_t msglen)
{
    PGconn *c = pgt_connect(db);
    PGresult *r = PQexec(c, sql);
    ExecStatusType rs = PQresultStatus(r);
    int ok = rs == PGRES_COMMAND_OK || rs == PGRES_TUPLES_OK;

    if (!ok && msg != NULL)
        (void)snprintf(msg, msglen, "%s", PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return ok;
}

int64_t
pgt_int(const struct pgt_db *db, const char *sql)
{
    PGconn *c = pgt_connect(db);
    PGresult *r = PQexec(c, sql);
    int64_t v;

    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    v = PQgetisnull(r, 0, 0) ? 0 : strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}

int64_t
pgt_kill_sessions(const struct pgt_db *db)
{
    return pgt_int(db, "SELECT count(pg_terminate_backend(pid, 5000)) FROM "
                       "pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid()");
}
