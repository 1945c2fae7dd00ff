/*
 * pg_test.c - see pg_test.h.
 */
#include "pg_test.h"

#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const char *
base_url(void)
{
    const char *u = getenv("IG_TEST_PG_URL");

    if (u == NULL || u[0] == '\0')
        fail_msg("IG_TEST_PG_URL is not set: this test needs a PostgreSQL "
                 "cluster (scripts/test.sh starts one; see "
                 "scripts/pg-cluster.sh)");
    return u;
}

/* url with its database (the path after the authority) replaced by db. */
static char *
with_db(const char *url, const char *db)
{
    const char *auth = strstr(url, "://");
    const char *slash, *query;
    size_t n;
    char *out;

    if (auth == NULL)
        fail_msg("IG_TEST_PG_URL is not a URL: %s", url);
    slash = strchr(auth + 3, '/');
    query = strchr(auth + 3, '?');
    if (slash == NULL || (query != NULL && query < slash))
        slash = query != NULL ? query : url + strlen(url);
    n = (size_t)(slash - url) + 1 + strlen(db) +
        (query != NULL ? strlen(query) : 0) + 1;
    out = malloc(n);
    if (out == NULL)
        fail_msg("out of memory");
    (void)snprintf(out, n, "%.*s/%s%s", (int)(slash - url), url, db,
                   query != NULL ? query : "");
    return out;
}

static void
quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

int
pg_test_exec(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r;
    int rc = -1;

    (void)PQsetNoticeProcessor(c, quiet, NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "pg_test: cannot connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    r = PQexec(c, sql);
    if (PQresultStatus(r) == PGRES_COMMAND_OK ||
        PQresultStatus(r) == PGRES_TUPLES_OK)
        rc = 0;
    else
        fprintf(stderr, "pg_test: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    return rc;
}

long long
pg_test_scalar(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r;
    long long v;

    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("pg_test: cannot connect: %s", PQerrorMessage(c));
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
        fail_msg("pg_test: %s: %s", sql, PQerrorMessage(c));
    v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}

char *
pg_test_db(const char *prefix)
{
    static int n;
    char name[96], sql[160];
    const char *base = base_url();

    (void)snprintf(name, sizeof(name), "%s_%ld_%d", prefix, (long)getpid(),
                   n++);
    (void)snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)",
                   name);
    (void)pg_test_exec(base, sql);
    (void)snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
    if (pg_test_exec(base, sql) != 0)
        fail_msg("pg_test: cannot create database %s", name);
    return with_db(base, name);
}

void
pg_test_drop(char *url)
{
    const char *slash, *auth;
    char sql[160], name[96];
    size_t n;

    if (url == NULL)
        return;
    auth = strstr(url, "://");
    slash = auth != NULL ? strchr(auth + 3, '/') : NULL;
    if (slash != NULL) {
        n = strcspn(slash + 1, "?");
        if (n < sizeof(name)) {
            (void)snprintf(name, sizeof(name), "%.*s", (int)n, slash + 1);
            (void)snprintf(sql, sizeof(sql),
                           "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
            (void)pg_test_exec(base_url(), sql);
        }
    }
    free(url);
}
