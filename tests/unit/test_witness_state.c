/*
 * test_witness_state.c - the witness's add-checkpoint decision and its
 * SQLite state (witness/witness_state.c, witness_evidence.c), attacker
 * first: a wrong old size, a fork at the same size, a proof that fails, a
 * rollback, the evidence each leaves (kept once, capped, immutable), two
 * requests racing from one old size (exactly one is cosigned, on one
 * connection and on two), and a restart that keeps the state. The
 * checkpoints are signed by a real key over trees built in memory
 * (tests/support/audit_mem.c), and every cosignature is verified.
 */
#include "testutil.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "audit_mem.h"
#include "audit_util.h"
#include "ig_hash.h"
#include "witness_state.h"

#define ORIGIN "log.test.example/audit"
#define WNAME "witness.test.example/w1"
#define NOW 1767225600

struct fx {
    char dir[64], path[96];
    struct ig_signing_key *log_key, *w_key;
    struct audit_witness_key wk;
    struct audit_mem *tree;  /* the log's history */
    struct audit_mem *other; /* a fork of it */
    struct witness_state *st;
    struct witness_signer sg;
};

/* A checkpoint of one tree, signed, as a request would carry it. */
struct cp {
    char *note;
    size_t len, text_len;
    unsigned char root[32];
    uint64_t size;
    unsigned char proof[AUDIT_CPROOF_MAX][32];
    size_t nproof;
};

static void
grow(struct audit_mem *m, uint64_t n, unsigned salt)
{
    unsigned char leaf[32];
    uint64_t i;

    for (i = 0; i < n; i++) {
        uint64_t k = audit_mem_size(m);
        memset(leaf, 0, sizeof(leaf));
        memcpy(leaf, &k, sizeof(k));
        leaf[31] = (unsigned char)salt;
        assert_int_equal(audit_mem_append(m, leaf), IG_OK);
    }
}

static void
open_state(struct fx *f, size_t evidence_max)
{
    struct witness_state_opts o;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.path = f->path;
    o.evidence_max = evidence_max;
    if (witness_state_open(&o, &f->st, &err) != IG_OK)
        fail_msg("%s", err.msg);
}

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    struct ig_public_key pub;

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/test_witness_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
    f->log_key = au_key_new();
    f->w_key = au_key_new();
    ig_signing_key_public(f->w_key, &pub);
    assert_int_equal(audit_witness_key_init(&f->wk, WNAME, pub.pk), IG_OK);
    assert_int_equal(audit_mem_new(&f->tree), IG_OK);
    assert_int_equal(audit_mem_new(&f->other), IG_OK);
    f->sg.name = WNAME;
    f->sg.key = f->w_key;
    open_state(f, 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    char p[160];

    witness_state_close(f->st);
    audit_mem_free(f->tree);
    audit_mem_free(f->other);
    ig_signing_key_free(f->log_key);
    ig_signing_key_free(f->w_key);
    (void)snprintf(p, sizeof(p), "rm -rf '%s'", f->dir);
    assert_int_equal(system(p), 0);
    free(f);
    return 0;
}

/* The checkpoint of m at size, with the proof from old. */
static void
make_cp(struct fx *f, struct audit_mem *m, uint64_t old, uint64_t size,
        struct cp *c)
{
    const char *blank;

    memset(c, 0, sizeof(*c));
    c->size = size;
    if (size == 0)
        ig_sha256("", 0, c->root);
    else
        assert_int_equal(audit_root_at(size, audit_mem_fetch, m, c->root),
                         IG_OK);
    if (old > 0 && old < size)
        assert_int_equal(audit_consistency_proof(old, size, audit_mem_fetch, m,
                                                 c->proof, &c->nproof),
                         IG_OK);
    c->note =
        au_sign_checkpoint(f->log_key, ORIGIN, ORIGIN, size, c->root, &c->len);
    blank = strstr(c->note, "\n\n");
    assert_non_null(blank);
    c->text_len = (size_t)(blank - c->note) + 1;
}

static enum ig_status
submit_as(struct witness_state *st, const struct witness_signer *sg,
          const struct cp *c, uint64_t old, struct witness_result *r)
{
    struct witness_submit in;
    struct ig_err err;
    enum ig_status s;

    memset(&in, 0, sizeof(in));
    in.origin = ORIGIN;
    in.old = old;
    in.size = c->size;
    in.root = c->root;
    in.proof = (const unsigned char(*)[32])c->proof;
    in.nproof = c->nproof;
    in.text = in.kept = c->note;
    in.kept_len = c->len;
    in.text_len = c->text_len;
    in.now = NOW;
    s = witness_state_submit(st, &in, sg, r, &err);
    if (s != IG_OK)
        print_message("submit: %s\n", err.msg);
    return s;
}

static void
submit(struct fx *f, const struct cp *c, uint64_t old, struct witness_result *r)
{
    assert_int_equal(submit_as(f->st, &f->sg, c, old, r), IG_OK);
}

/* r is a 200 whose line is the witness's valid cosignature of c. */
static void
assert_cosigned(const struct fx *f, const struct cp *c,
                const struct witness_result *r)
{
    uint64_t ts = 0;
    size_t n = strlen(r->line);

    assert_int_equal(r->status, 200);
    assert_true(n > 0 && r->line[n - 1] == '\n');
    assert_int_equal(audit_cosig_verify_line(r->line, n - 1, c->note,
                                             c->text_len, &f->wk, &ts, NULL),
                     IG_OK);
    assert_int_equal(ts, NOW);
}

static uint64_t
stored_size(struct fx *f)
{
    char *note = NULL;
    size_t len = 0;
    uint64_t size = 0;
    enum ig_status s = witness_state_latest(f->st, ORIGIN, &note, &len, &size);

    free(note);
    return s == IG_OK ? size : 0;
}

static void
free_cp(struct cp *c)
{
    free(c->note);
    c->note = NULL;
}

static int
count_evidence(void *ctx, const struct witness_evidence_row *r)
{
    (void)r;
    (*(int *)ctx)++;
    return 0;
}

static int
evidence_rows(struct fx *f)
{
    int n = 0;

    assert_int_equal(witness_state_each_evidence(f->st, count_evidence, &n),
                     IG_OK);
    return n;
}

/* ---- cases ---- */

static void
test_first_and_extension(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, b;
    char *note = NULL;
    size_t len = 0;
    uint64_t size = 0;

    assert_int_equal(witness_state_latest(f->st, ORIGIN, &note, &len, &size),
                     IG_ERR_NOTFOUND);
    grow(f->tree, 5, 0);
    make_cp(f, f->tree, 0, 5, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    /* served: the note with the line that was answered */
    assert_int_equal(witness_state_latest(f->st, ORIGIN, &note, &len, &size),
                     IG_OK);
    assert_int_equal(size, 5);
    assert_int_equal(len, a.len + strlen(r.line));
    assert_memory_equal(note, a.note, a.len);
    assert_string_equal(note + a.len, r.line);
    free(note);

    grow(f->tree, 8, 0);
    make_cp(f, f->tree, 5, 13, &b);
    assert_true(b.nproof > 0);
    submit(f, &b, 5, &r);
    assert_cosigned(f, &b, &r);
    assert_int_equal(stored_size(f), 13);
    /* the same checkpoint again: cosigned again, nothing changes */
    b.nproof = 0;
    submit(f, &b, 13, &r);
    assert_cosigned(f, &b, &r);
    assert_int_equal(evidence_rows(f), 0);
    free_cp(&a);
    free_cp(&b);
}

static void
test_wrong_old_is_409(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, b;

    grow(f->tree, 10, 0);
    make_cp(f, f->tree, 0, 4, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    make_cp(f, f->tree, 3, 10, &b);
    submit(f, &b, 3, &r); /* the log thinks we are at 3 */
    assert_int_equal(r.status, 409);
    assert_int_equal(r.size, 4);
    assert_string_equal(r.line, "");
    submit(f, &b, 0, &r); /* old 0: the way to learn the size */
    assert_int_equal(r.status, 409);
    assert_int_equal(r.size, 4);
    free_cp(&b);
    make_cp(f, f->tree, 4, 10, &b);
    submit(f, &b, 4, &r);
    assert_cosigned(f, &b, &r);
    assert_int_equal(evidence_rows(f), 0);
    free_cp(&a);
    free_cp(&b);
}

static void
test_fork_at_equal_size(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, fork;

    grow(f->tree, 6, 0);
    grow(f->other, 6, 1); /* another history, signed by the same key */
    make_cp(f, f->tree, 0, 6, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    make_cp(f, f->other, 6, 6, &fork);
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(r.reason, WITNESS_REASON_FORK);
    assert_int_equal(r.evidence, 1);
    assert_string_equal(r.line, "");
    /* the same fork again: refused, kept once */
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(r.evidence, 0);
    assert_int_equal(evidence_rows(f), 1);
    assert_int_equal(stored_size(f), 6);
    free_cp(&a);
    free_cp(&fork);
}

static void
test_fork_beyond_is_inconsistent(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, fork;

    grow(f->tree, 6, 0);
    grow(f->other, 6, 1);
    grow(f->other, 5, 1);
    make_cp(f, f->tree, 0, 6, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    /* the fork's own proof from 6 to 11: right for its own tree, wrong
       for the one cosigned */
    make_cp(f, f->other, 6, 11, &fork);
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(r.reason, WITNESS_REASON_INCONSISTENT);
    assert_int_equal(r.evidence, 1);
    /* a flipped byte of a right proof */
    grow(f->tree, 5, 0);
    free_cp(&fork);
    make_cp(f, f->tree, 6, 11, &fork);
    fork.proof[0][0] ^= 1;
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(r.reason, WITNESS_REASON_INCONSISTENT);
    /* a proof cut short, one too long */
    fork.proof[0][0] ^= 1;
    fork.nproof--;
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    fork.nproof += 2;
    submit(f, &fork, 6, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(stored_size(f), 6);
    fork.nproof--;
    submit(f, &fork, 6, &r);
    assert_cosigned(f, &fork, &r);
    free_cp(&a);
    free_cp(&fork);
}

static void
test_rollback(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, old;

    grow(f->tree, 9, 0);
    make_cp(f, f->tree, 0, 9, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    make_cp(f, f->tree, 0, 4, &old);
    submit(f, &old, 9, &r); /* old = the stored size, size below it */
    assert_int_equal(r.status, 400);
    assert_int_equal(r.reason, WITNESS_REASON_ROLLBACK);
    assert_int_equal(r.evidence, 1);
    submit(f, &old, 4, &r); /* old = its own size: told ours */
    assert_int_equal(r.status, 409);
    assert_int_equal(r.size, 9);
    submit(f, &old, 7, &r); /* any other old > size: 400, no evidence */
    assert_int_equal(r.status, 400);
    assert_int_equal(r.reason, WITNESS_REASON_NONE);
    assert_int_equal(evidence_rows(f), 1);
    assert_int_equal(stored_size(f), 9);
    free_cp(&a);
    free_cp(&old);
}

static void
test_spec_422s(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a;

    /* size 0 must have the empty root */
    make_cp(f, f->tree, 0, 0, &a);
    a.root[0] ^= 1;
    submit(f, &a, 0, &r);
    assert_int_equal(r.status, 422);
    a.root[0] ^= 1;
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    free_cp(&a);
    /* old 0 takes no proof */
    grow(f->tree, 3, 0);
    make_cp(f, f->tree, 0, 3, &a);
    a.nproof = 1;
    submit(f, &a, 0, &r);
    assert_int_equal(r.status, 422);
    a.nproof = 0;
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    /* equal sizes, equal roots, a proof: refused but no evidence */
    a.nproof = 1;
    submit(f, &a, 3, &r);
    assert_int_equal(r.status, 422);
    assert_int_equal(r.reason, WITNESS_REASON_NONE);
    assert_int_equal(evidence_rows(f), 0);
    free_cp(&a);
}

static void
test_restart_keeps_state(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct cp a, b;

    grow(f->tree, 7, 0);
    make_cp(f, f->tree, 0, 7, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    witness_state_close(f->st);
    open_state(f, 0);
    assert_int_equal(stored_size(f), 7);
    submit(f, &a, 0, &r);
    assert_int_equal(r.status, 409);
    assert_int_equal(r.size, 7);
    grow(f->tree, 2, 0);
    make_cp(f, f->tree, 7, 9, &b);
    submit(f, &b, 7, &r);
    assert_cosigned(f, &b, &r);
    free_cp(&a);
    free_cp(&b);
}

static int
count_dropped(void *ctx, const char *origin, uint64_t n)
{
    assert_string_equal(origin, ORIGIN);
    *(uint64_t *)ctx = n;
    return 0;
}

static void
test_evidence_cap_and_immutable(void **state)
{
    struct fx *f = *state;
    struct witness_result r;
    struct audit_mem *m;
    struct cp a, fork;
    uint64_t dropped = 0;
    sqlite3 *db;
    unsigned i;

    witness_state_close(f->st);
    open_state(f, 3);
    grow(f->tree, 4, 0);
    make_cp(f, f->tree, 0, 4, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    for (i = 1; i <= 5; i++) {
        assert_int_equal(audit_mem_new(&m), IG_OK);
        grow(m, 4, i);
        make_cp(f, m, 4, 4, &fork);
        submit(f, &fork, 4, &r);
        assert_int_equal(r.status, 422);
        assert_int_equal(r.evidence, i <= 3 ? 1 : -1);
        free_cp(&fork);
        audit_mem_free(m);
    }
    assert_int_equal(evidence_rows(f), 3);
    assert_int_equal(witness_state_each_dropped(f->st, count_dropped, &dropped),
                     IG_OK);
    assert_int_equal(dropped, 2);
    /* the rows cannot be changed or deleted, even by hand */
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    (void)sqlite3_busy_timeout(db, 5000);
    assert_int_not_equal(
        sqlite3_exec(db, "UPDATE evidence SET note = 'x'", NULL, NULL, NULL),
        SQLITE_OK);
    assert_int_not_equal(
        sqlite3_exec(db, "DELETE FROM evidence", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(evidence_rows(f), 3);
    free_cp(&a);
}

/* Two requests from one old size at once. */
struct racer {
    struct witness_state *st;
    const struct witness_signer *sg;
    const struct cp *c;
    uint64_t old;
    pthread_barrier_t *go;
    struct witness_result r;
    enum ig_status s;
};

static void *
race(void *arg)
{
    struct racer *x = arg;

    (void)pthread_barrier_wait(x->go);
    x->s = submit_as(x->st, x->sg, x->c, x->old, &x->r);
    return NULL;
}

static void
race_once(struct fx *f, struct witness_state *st2, uint64_t from)
{
    struct racer x[2];
    pthread_barrier_t go;
    pthread_t t[2];
    struct cp c[2];
    int i, ok = 0;

    make_cp(f, f->tree, from, from + 3, &c[0]);
    make_cp(f, f->tree, from, from + 6, &c[1]);
    assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
    for (i = 0; i < 2; i++) {
        memset(&x[i], 0, sizeof(x[i]));
        x[i].st = i == 0 ? f->st : st2;
        x[i].sg = &f->sg;
        x[i].c = &c[i];
        x[i].old = from;
        x[i].go = &go;
        assert_int_equal(pthread_create(&t[i], NULL, race, &x[i]), 0);
    }
    for (i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(x[i].s, IG_OK);
        if (x[i].r.status == 200) {
            ok++;
            assert_int_equal(stored_size(f), c[i].size);
        } else {
            assert_int_equal(x[i].r.status, 409);
            assert_int_equal(x[i].r.size, c[1 - i].size);
        }
    }
    assert_int_equal(ok, 1);
    (void)pthread_barrier_destroy(&go);
    free_cp(&c[0]);
    free_cp(&c[1]);
}

static void
test_race_one_cosigned(void **state)
{
    struct fx *f = *state;
    struct witness_state_opts o;
    struct witness_state *st2 = NULL;
    struct witness_result r;
    uint64_t from;
    struct cp a;
    int i;

    grow(f->tree, 2 + 6 * 40, 0);
    make_cp(f, f->tree, 0, 2, &a);
    submit(f, &a, 0, &r);
    assert_cosigned(f, &a, &r);
    free_cp(&a);
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    assert_int_equal(witness_state_open(&o, &st2, NULL), IG_OK);
    for (i = 0; i < 40; i++) {
        from = stored_size(f);
        /* even rounds on one connection, odd ones on two */
        race_once(f, i % 2 == 0 ? f->st : st2, from);
        assert_true(stored_size(f) > from);
    }
    witness_state_close(st2);
}

static void
test_read_only(void **state)
{
    struct fx *f = *state;
    struct witness_state_opts o;
    struct witness_state *ro = NULL;
    struct ig_err err;
    char p[128];

    memset(&o, 0, sizeof(o));
    (void)snprintf(p, sizeof(p), "%s/none.db", f->dir);
    o.path = p;
    o.read_only = 1;
    assert_int_equal(witness_state_open(&o, &ro, &err), IG_ERR_NOTFOUND);
    assert_null(ro);
    assert_int_not_equal(access(p, F_OK), 0); /* not created */
    o.path = f->path;
    assert_int_equal(witness_state_open(&o, &ro, &err), IG_OK);
    assert_int_equal(evidence_rows(f), 0);
    witness_state_close(ro);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_first_and_extension, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wrong_old_is_409, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fork_at_equal_size, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_fork_beyond_is_inconsistent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_422s, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_evidence_cap_and_immutable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_race_one_cosigned, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_only, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
