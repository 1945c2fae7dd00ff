/*
 * pg_test.h - a fresh PostgreSQL database for a unit test.
 *
 * The cluster comes from IG_TEST_PG_URL (scripts/test.sh starts one and
 * exports it: a URL whose user may CREATE DATABASE). A test that needs
 * PostgreSQL and finds no IG_TEST_PG_URL fails - it never skips.
 */
#ifndef PG_TEST_H
#define PG_TEST_H

/* CREATE DATABASE <prefix>_<pid>_<n> on the cluster and return its URL
   (malloc'd). Fails the test (cmocka fail_msg) when the variable is
   missing or the database cannot be made. */
char *pg_test_db(const char *prefix);

/* DROP DATABASE of a URL pg_test_db returned (WITH (FORCE): connections
   still open are ended), and free it. NULL is fine. */
void pg_test_drop(char *url);

/* Run one SQL statement on url (a fresh connection): 0, or -1 with the
   server's message printed. For what a test does as an attacker with the
   database (DROP TRIGGER, UPDATE) or to check a table. */
int pg_test_exec(const char *url, const char *sql);

/* The first column of the first row of sql on url as a long long; fails
   the test when there is none. */
long long pg_test_scalar(const char *url, const char *sql);

#endif
