/*
 * shared_cases.c - the cases of shared_cases.h. Times are passed in (the
 * store takes now as an argument), so nothing sleeps. The login cases are
 * the rules the in-memory limiter had (approval/appr_limiter.c until
 * issue 17), now kept by the store.
 */
#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "ig_limits.h"
#include "shared_cases.h"

static struct store *
open1(void **state)
{
    struct shared_fixture *f = *state;

    return f->open(f);
}

static void
hash_of(int n, unsigned char h[STORE_SESSION_HASH_BYTES])
{
    memset(h, 0, STORE_SESSION_HASH_BYTES);
    h[0] = (unsigned char)(n & 0xff);
    h[1] = (unsigned char)(n >> 8);
    h[31] = 0x5a;
}

static enum ig_status
create(struct store *s, int n, const char *who, int64_t at, int64_t max_age,
       int64_t idle, size_t cap)
{
    unsigned char h[STORE_SESSION_HASH_BYTES];
    struct store_session_rec r;
    char csrf[32];

    hash_of(n, h);
    (void)snprintf(csrf, sizeof(csrf), "csrf-%d", n);
    memset(&r, 0, sizeof(r));
    r.id_hash = h;
    r.approver = who;
    r.csrf = csrf;
    r.created_at = at;
    r.expires_at = at + max_age;
    return store_session_create(s, &r, idle, cap);
}

static enum ig_status
get(struct store *s, int n, int64_t now, int64_t idle, char *who)
{
    unsigned char h[STORE_SESSION_HASH_BYTES];
    char csrf[IG_SESSION_CSRF_MAX + 1];

    hash_of(n, h);
    return store_session_get(s, h, now, idle, who, csrf);
}

void
sc_sessions(void **state)
{
    struct store *s = open1(state);
    unsigned char h[STORE_SESSION_HASH_BYTES];
    char who[IG_ID_MAX + 1], csrf[IG_SESSION_CSRF_MAX + 1], long_id[100];
    struct store_session_rec r;

    assert_int_equal(create(s, 1, "alice", 1000, 600, 60, 10), IG_OK);
    hash_of(1, h);
    assert_int_equal(store_session_get(s, h, 1010, 60, who, csrf), IG_OK);
    assert_string_equal(who, "alice");
    assert_string_equal(csrf, "csrf-1");
    /* Another hash is another (unknown) session; one hash, one session. */
    h[5] ^= 1;
    assert_int_equal(store_session_get(s, h, 1010, 60, who, NULL),
                     IG_ERR_NOTFOUND);
    assert_int_equal(create(s, 1, "bob", 1000, 600, 60, 10), IG_ERR_EXISTS);
    assert_int_equal(get(s, 1, 1011, 60, who), IG_OK);
    assert_string_equal(who, "alice");
    /* Refused fields. */
    memset(long_id, 'a', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    assert_int_equal(create(s, 2, long_id, 1000, 600, 60, 10), IG_ERR_INVALID);
    assert_int_equal(create(s, 2, "", 1000, 600, 60, 10), IG_ERR_INVALID);
    memset(&r, 0, sizeof(r));
    r.id_hash = h;
    r.approver = "carol";
    r.csrf = long_id;
    assert_int_equal(store_session_create(s, &r, 60, 10), IG_ERR_INVALID);
    r.csrf = NULL;
    assert_int_equal(store_session_create(s, &r, 60, 10), IG_ERR_INVALID);
    assert_int_equal(create(s, 2, "carol", 1000, 600, 60, 0), IG_ERR_INVALID);
    store_close(s);
}

void
sc_session_timeouts(void **state)
{
    struct store *s = open1(state);
    char who[IG_ID_MAX + 1];
    int64_t t;

    /* Idle: 60 s without a lookup ends it. */
    assert_int_equal(create(s, 1, "bob", 0, 300, 60, 10), IG_OK);
    assert_int_equal(get(s, 1, 59, 60, who), IG_OK);
    assert_int_equal(get(s, 1, 119, 60, who), IG_ERR_NOTFOUND);
    /* ... and it is gone, not just hidden. */
    assert_int_equal(get(s, 1, 60, 60, who), IG_ERR_NOTFOUND);
    /* Absolute: kept busy, it still ends at 300 s. */
    assert_int_equal(create(s, 2, "bob", 0, 300, 60, 10), IG_OK);
    for (t = 30; t < 300; t += 30)
        assert_int_equal(get(s, 2, t, 60, who), IG_OK);
    assert_int_equal(get(s, 2, 300, 60, who), IG_ERR_NOTFOUND);
    /* The idle timer is written back at most every idle / 4 (here 15 s):
       used every 14 s, it runs from its last write-back. */
    assert_int_equal(create(s, 3, "bob", 0, 3000, 60, 10), IG_OK);
    assert_int_equal(get(s, 3, 14, 60, who), IG_OK); /* not written */
    assert_int_equal(get(s, 3, 28, 60, who), IG_OK); /* written: 28 */
    assert_int_equal(get(s, 3, 87, 60, who), IG_OK); /* 59 s after 28 */
    assert_int_equal(get(s, 3, 147, 60, who), IG_ERR_NOTFOUND);
    /* Logout, and every session of one approver. */
    assert_int_equal(create(s, 4, "bob", 0, 300, 60, 10), IG_OK);
    {
        unsigned char h[STORE_SESSION_HASH_BYTES];
        hash_of(4, h);
        assert_int_equal(store_session_end(s, h), IG_OK);
        assert_int_equal(store_session_end(s, h), IG_OK); /* unknown: fine */
    }
    assert_int_equal(get(s, 4, 1, 60, who), IG_ERR_NOTFOUND);
    assert_int_equal(create(s, 5, "carol", 0, 300, 60, 10), IG_OK);
    assert_int_equal(create(s, 6, "carol", 0, 300, 60, 10), IG_OK);
    assert_int_equal(create(s, 7, "dave", 0, 300, 60, 10), IG_OK);
    assert_int_equal(store_session_end_all(s, "carol"), IG_OK);
    assert_int_equal(get(s, 5, 1, 60, who), IG_ERR_NOTFOUND);
    assert_int_equal(get(s, 6, 1, 60, who), IG_ERR_NOTFOUND);
    assert_int_equal(get(s, 7, 1, 60, who), IG_OK);
    store_close(s);
}

void
sc_session_capacity(void **state)
{
    struct store *s = open1(state);
    char who[IG_ID_MAX + 1];
    int i;

    /* Three at most: dead ones go first, then the least recently seen. */
    assert_int_equal(create(s, 1, "a", 0, 1000, 100, 3), IG_OK);
    assert_int_equal(create(s, 2, "a", 50, 1000, 100, 3), IG_OK);
    assert_int_equal(create(s, 3, "a", 60, 1000, 100, 3), IG_OK);
    /* At 120, 1 idled out (0 + 100): it makes the room. */
    assert_int_equal(get(s, 2, 120, 100, who), IG_OK); /* 2 seen at 120 */
    assert_int_equal(create(s, 4, "a", 120, 1000, 100, 3), IG_OK);
    assert_int_equal(get(s, 1, 120, 100, who), IG_ERR_NOTFOUND);
    /* All live (2 at 120, 3 at 60, 4 at 120): 3 goes. */
    assert_int_equal(create(s, 5, "a", 121, 1000, 100, 3), IG_OK);
    assert_int_equal(get(s, 3, 121, 100, who), IG_ERR_NOTFOUND);
    assert_int_equal(get(s, 2, 121, 100, who), IG_OK);
    assert_int_equal(get(s, 4, 121, 100, who), IG_OK);
    assert_int_equal(get(s, 5, 121, 100, who), IG_OK);
    /* Never more than the cap, however many log in. */
    for (i = 10; i < 30; i++)
        assert_int_equal(create(s, i, "b", 130 + i, 1000, 100, 3), IG_OK);
    for (i = 10; i < 27; i++)
        assert_int_equal(get(s, i, 170, 100, who), IG_ERR_NOTFOUND);
    for (i = 27; i < 30; i++)
        assert_int_equal(get(s, i, 170, 100, who), IG_OK);
    store_close(s);
}

void
sc_sessions_across_stores(void **state)
{
    struct store *a = open1(state), *b = open1(state);
    unsigned char h[STORE_SESSION_HASH_BYTES];
    char who[IG_ID_MAX + 1];

    /* Made on one replica, good on the other; ended there, gone here. */
    assert_int_equal(create(a, 1, "alice", 0, 600, 60, 10), IG_OK);
    assert_int_equal(get(b, 1, 10, 60, who), IG_OK);
    assert_string_equal(who, "alice");
    hash_of(1, h);
    assert_int_equal(store_session_end(b, h), IG_OK);
    assert_int_equal(get(a, 1, 11, 60, who), IG_ERR_NOTFOUND);
    store_close(a);
    store_close(b);
}

/* ---- failed sign-ins ---- */

static struct store_login_rule
rule(int max, int64_t window, size_t keys)
{
    struct store_login_rule r;

    r.max_failures = max;
    r.window_ms = window;
    r.max_keys = keys;
    return r;
}

static int64_t
wait_of(struct store *s, const char *key, int64_t now,
        const struct store_login_rule *r)
{
    int64_t w = -1;
    int n;

    assert_int_equal(store_login_check(s, "id", key, now, r, &n, &w), IG_OK);
    return w;
}

static int
failures_of(struct store *s, const char *key, int64_t now,
            const struct store_login_rule *r)
{
    int64_t w;
    int n = -1;

    assert_int_equal(store_login_check(s, "id", key, now, r, &n, &w), IG_OK);
    return n;
}

static void
fail1(struct store *s, const char *key, int64_t now,
      const struct store_login_rule *r)
{
    assert_int_equal(store_login_fail(s, "id", key, now, r, NULL), IG_OK);
}

void
sc_login_backoff(void **state)
{
    struct store *s = open1(state);
    struct store_login_rule r = rule(3, 100000, 100); /* ms */
    int64_t t = 1000000, wait;
    int i, n;

    for (i = 0; i < 2; i++) {
        assert_int_equal(wait_of(s, "alice", t, &r), 0);
        fail1(s, "alice", t, &r);
    }
    assert_int_equal(wait_of(s, "alice", t, &r), 0); /* 2 of 3 */
    assert_int_equal(store_login_fail(s, "id", "alice", t, &r, &n), IG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(failures_of(s, "alice", t, &r), 3);
    /* Third failure: the first wait. */
    assert_int_equal(wait_of(s, "alice", t, &r), IG_LOGIN_BACKOFF_FIRST_MS);
    assert_int_equal(wait_of(s, "alice", t + IG_LOGIN_BACKOFF_FIRST_MS, &r), 0);
    /* Each further failure doubles it, up to the window. */
    for (i = 1, wait = IG_LOGIN_BACKOFF_FIRST_MS * 2; i < 12; i++) {
        t += 1000; /* a second apart: not forgotten, the wait grows */
        fail1(s, "alice", t, &r);
        assert_int_equal(wait_of(s, "alice", t, &r),
                         wait < 100000 ? wait : 100000);
        /* It counts down. */
        assert_int_equal(wait_of(s, "alice", t + 7, &r),
                         (wait < 100000 ? wait : 100000) - 7);
        wait *= 2;
    }
    /* Other keys are untouched. */
    assert_int_equal(wait_of(s, "bob", t, &r), 0);
    assert_int_equal(failures_of(s, "bob", t, &r), 0);
    /* Forgotten a window after the wait ends. */
    assert_int_equal(failures_of(s, "alice", t + 199999, &r), 14);
    assert_int_equal(failures_of(s, "alice", t + 200000, &r), 0);
    assert_int_equal(wait_of(s, "alice", t + 200000, &r), 0);
    store_close(s);
}

void
sc_login_clear_and_forget(void **state)
{
    struct store *s = open1(state);
    struct store_login_rule r = rule(2, 50000, 100);

    fail1(s, "bob", 0, &r);
    fail1(s, "bob", 0, &r);
    assert_int_equal(wait_of(s, "bob", 0, &r), IG_LOGIN_BACKOFF_FIRST_MS);
    assert_int_equal(store_login_clear(s, "id", "bob"), IG_OK);
    assert_int_equal(wait_of(s, "bob", 0, &r), 0);
    assert_int_equal(failures_of(s, "bob", 0, &r), 0);
    /* One failure, forgotten a window later. */
    fail1(s, "carol", 10000, &r);
    assert_int_equal(failures_of(s, "carol", 59999, &r), 1);
    assert_int_equal(failures_of(s, "carol", 60000, &r), 0);
    fail1(s, "carol", 60000, &r); /* counts from zero again */
    assert_int_equal(failures_of(s, "carol", 60000, &r), 1);
    /* A wait never outlasts the window. */
    r = rule(1, 300, 100);
    fail1(s, "erin", 0, &r);
    assert_int_equal(wait_of(s, "erin", 0, &r), 300);
    store_close(s);
}

void
sc_login_full_kind(void **state)
{
    struct store *s = open1(state);
    struct store_login_rule r = rule(1, 100, 16), other = rule(1, 100, 16);
    char key[32];
    int i, n;
    int64_t w;

    /* A key under backoff survives keys that are already forgotten. */
    for (i = 0; i < 16; i++) {
        (void)snprintf(key, sizeof(key), "old-%d", i);
        fail1(s, key, 0, &r);
    }
    fail1(s, "alice", 500, &r);
    for (i = 0; i < 15; i++) {
        (void)snprintf(key, sizeof(key), "new-%d", i);
        fail1(s, key, 501, &r);
    }
    assert_int_equal(failures_of(s, "alice", 501, &r), 1);
    /* Another kind has room of its own: it pushes nothing out. */
    for (i = 0; i < 16; i++) {
        (void)snprintf(key, sizeof(key), "x-%d", i);
        assert_int_equal(store_login_fail(s, "unknown", key, 501, &other, &n),
                         IG_OK);
    }
    assert_int_equal(failures_of(s, "alice", 501, &r), 1);
    /* Full of live keys: the oldest goes. */
    fail1(s, "late", 502, &r);
    assert_int_equal(failures_of(s, "late", 502, &r), 1);
    assert_int_equal(failures_of(s, "alice", 502, &r), 0);
    assert_int_equal(failures_of(s, "new-0", 502, &r), 1);
    assert_int_equal(
        store_login_check(s, "unknown", "x-0", 502, &other, &n, &w), IG_OK);
    assert_int_equal(n, 1);
    store_close(s);
}

void
sc_login_keys(void **state)
{
    struct store *s = open1(state);
    struct store_login_rule r = rule(1, 100, 100);
    char a[100], b[100];
    int64_t w;
    int n;

    /* Long keys are cut, and do not share counts by prefix. */
    memset(a, 'a', sizeof(a) - 1);
    a[sizeof(a) - 1] = '\0';
    memcpy(b, a, sizeof(b));
    b[sizeof(b) - 2] = 'b'; /* differs past the cut: the same key */
    fail1(s, a, 0, &r);
    assert_int_equal(failures_of(s, b, 0, &r), 1);
    assert_int_equal(failures_of(s, "aaa", 0, &r), 0);
    /* Kinds are apart: the same key in another kind has no failures. */
    assert_int_equal(store_login_check(s, "addr", a, 0, &r, &n, &w), IG_OK);
    assert_int_equal(n, 0);
    /* Bad kinds and rules are refused. */
    assert_int_equal(store_login_fail(s, "", "k", 0, &r, NULL), IG_ERR_INVALID);
    assert_int_equal(store_login_fail(s, "Id", "k", 0, &r, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(store_login_fail(s, "id:x", "k", 0, &r, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(store_login_fail(s, "abcdefghijklmnop", "k", 0, &r, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(store_login_fail(s, "id", NULL, 0, &r, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(store_login_clear(s, NULL, "k"), IG_ERR_INVALID);
    r.window_ms = 0;
    assert_int_equal(store_login_check(s, "id", "k", 0, &r, &n, &w),
                     IG_ERR_INVALID);
    r = rule(0, 100, 100);
    assert_int_equal(store_login_fail(s, "id", "k", 0, &r, NULL),
                     IG_ERR_INVALID);
    r = rule(1, 100, 0);
    assert_int_equal(store_login_fail(s, "id", "k", 0, &r, NULL),
                     IG_ERR_INVALID);
    store_close(s);
}

#define LOGIN_THREADS 4
#define LOGIN_FAILS 25

struct fail_arg {
    struct store *s;
    atomic_int *errors;
};

static void *
fail_many(void *p)
{
    struct fail_arg *a = p;
    struct store_login_rule r = rule(1000, INT64_C(1000000000), 100);
    int i;

    for (i = 0; i < LOGIN_FAILS; i++)
        if (store_login_fail(a->s, "addr", "2001:db8::/64", 1000 + i, &r,
                             NULL) != IG_OK)
            atomic_fetch_add(a->errors, 1);
    return NULL;
}

void
sc_login_concurrent(void **state)
{
    struct store *st[2] = {open1(state), open1(state)};
    struct store_login_rule r = rule(1000, INT64_C(1000000000), 100);
    struct fail_arg args[LOGIN_THREADS];
    pthread_t th[LOGIN_THREADS];
    atomic_int errors = 0;
    int64_t w;
    int i, n;

    /* Failures on two replicas at once add up: none is lost. */
    for (i = 0; i < LOGIN_THREADS; i++) {
        args[i].s = st[i % 2];
        args[i].errors = &errors;
        assert_int_equal(pthread_create(&th[i], NULL, fail_many, &args[i]), 0);
    }
    for (i = 0; i < LOGIN_THREADS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(atomic_load(&errors), 0);
    assert_int_equal(
        store_login_check(st[0], "addr", "2001:db8::/64", 2000, &r, &n, &w),
        IG_OK);
    assert_int_equal(n, LOGIN_THREADS * LOGIN_FAILS);
    store_close(st[0]);
    store_close(st[1]);
}

/* ---- Slack messages ---- */

void
sc_slack(void **state)
{
    struct store *s = open1(state), *b = open1(state);
    char ch[IG_ID_MAX + 1], ts[IG_SLACK_TS_MAX + 1], id[64], long_ts[64];
    int i;

    assert_int_equal(store_slack_get(s, "i-1", ch, ts), IG_ERR_NOTFOUND);
    assert_int_equal(store_slack_put(s, "i-1", "C1", "1700000000.000100"),
                     IG_OK);
    /* Another replica finds it. */
    assert_int_equal(store_slack_get(b, "i-1", ch, ts), IG_OK);
    assert_string_equal(ch, "C1");
    assert_string_equal(ts, "1700000000.000100");
    /* Put replaces. */
    assert_int_equal(store_slack_put(b, "i-1", "C2", "1700000001.000100"),
                     IG_OK);
    assert_int_equal(store_slack_get(s, "i-1", ch, ts), IG_OK);
    assert_string_equal(ch, "C2");
    assert_string_equal(ts, "1700000001.000100");
    assert_int_equal(store_slack_forget(s, "i-1"), IG_OK);
    assert_int_equal(store_slack_forget(s, "i-1"), IG_OK);
    assert_int_equal(store_slack_get(b, "i-1", ch, ts), IG_ERR_NOTFOUND);
    /* Refused fields. */
    memset(long_ts, '1', sizeof(long_ts) - 1);
    long_ts[sizeof(long_ts) - 1] = '\0';
    assert_int_equal(store_slack_put(s, "i-2", "C1", long_ts), IG_ERR_INVALID);
    assert_int_equal(store_slack_put(s, "i-2", "", "1.2"), IG_ERR_INVALID);
    assert_int_equal(store_slack_put(s, NULL, "C", "1.2"), IG_ERR_INVALID);
    /* At most IG_SLACK_MESSAGES_MAX: the oldest by ts go. */
    for (i = 0; i <= IG_SLACK_MESSAGES_MAX; i++) {
        (void)snprintf(id, sizeof(id), "m-%d", i);
        (void)snprintf(ts, sizeof(ts), "17%08d.000000", i);
        assert_int_equal(store_slack_put(s, id, "C", ts), IG_OK);
    }
    assert_int_equal(store_slack_get(s, "m-0", ch, ts), IG_ERR_NOTFOUND);
    assert_int_equal(store_slack_get(s, "m-1", ch, ts), IG_OK);
    (void)snprintf(id, sizeof(id), "m-%d", IG_SLACK_MESSAGES_MAX);
    assert_int_equal(store_slack_get(s, id, ch, ts), IG_OK);
    store_close(s);
    store_close(b);
}

/* ---- the vote lock ---- */

#define VOTERS 4
#define VOTES 50

struct voter {
    struct store *s;
    atomic_int *count, *errors;
};

/* "Count, then add one" with a gap between: without the lock, updates
   are lost. */
static void *
vote_many(void *p)
{
    struct voter *v = p;
    int i, seen;

    for (i = 0; i < VOTES; i++) {
        if (store_vote_lock(v->s) != IG_OK) {
            atomic_fetch_add(v->errors, 1);
            continue;
        }
        seen = atomic_load(v->count);
        sched_yield();
        atomic_store(v->count, seen + 1);
        store_vote_unlock(v->s);
    }
    return NULL;
}

void
sc_vote_lock(void **state)
{
    struct shared_fixture *f = *state;
    struct store *st[2];
    struct voter v[VOTERS];
    pthread_t th[VOTERS];
    atomic_int count = 0, errors = 0;
    int i;

    /* PostgreSQL: two stores (replicas) on one database, whose mutexes
       are not shared - only the advisory lock keeps them apart. SQLite
       has one process per file: one store. */
    st[0] = f->open(f);
    st[1] = f->cross_store_votes ? f->open(f) : st[0];
    for (i = 0; i < VOTERS; i++) {
        v[i].s = st[i % 2];
        v[i].count = &count;
        v[i].errors = &errors;
        assert_int_equal(pthread_create(&th[i], NULL, vote_many, &v[i]), 0);
    }
    for (i = 0; i < VOTERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(atomic_load(&errors), 0);
    assert_int_equal(atomic_load(&count), VOTERS * VOTES);
    if (st[1] != st[0])
        store_close(st[1]);
    store_close(st[0]);
}
