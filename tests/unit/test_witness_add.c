/*
 * test_witness_add.c - an add-checkpoint request from its body to the
 * answer (witness/witness_add.c), the hostile ones first: garbage, an
 * unknown origin, another key's signature, a broken signature under the
 * log's key, a signed note that is no checkpoint, a forged cosignature in
 * the witness's name riding on a valid note. Each refusal is one line of
 * text; a 409 is the size as text/x.tlog.size; a 200 is a cosignature
 * line that verifies, and what the witness serves afterwards carries only
 * the log's signature and its own.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "audit_mem.h"
#include "audit_util.h"
#include "ig_hash.h"
#include "witness_add.h"

#define ORIGIN "add.test.example/audit"
#define WNAME "witness.test.example/add"
#define NOW 1767225600

struct fx {
    char dir[64], path[96];
    struct ig_signing_key *log_key, *w_key;
    struct audit_witness_key wk;
    struct audit_mem *tree;
    struct witness_config cfg;
    struct witness_log log;
    struct witness_state *st;
    struct witness_signer sg;
    struct witness_answer a;
    char wname[64];
};

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    struct witness_state_opts o;
    struct ig_public_key pub;
    unsigned char leaf[32];
    unsigned i;

    assert_non_null(f);
    assert_int_equal(ig_crypto_init(), IG_OK);
    (void)snprintf(f->dir, sizeof(f->dir), "/tmp/test_witness_add_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    (void)snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
    f->log_key = au_key_new();
    f->w_key = au_key_new();
    ig_signing_key_public(f->w_key, &pub);
    assert_int_equal(audit_witness_key_init(&f->wk, WNAME, pub.pk), IG_OK);
    au_verifier(f->log_key, ORIGIN, &f->log.keys[0]);
    f->log.nkeys = 1;
    (void)snprintf(f->log.origin, sizeof(f->log.origin), "%s", ORIGIN);
    ig_sha256_hex(ORIGIN, strlen(ORIGIN), f->log.origin_hex);
    (void)snprintf(f->wname, sizeof(f->wname), "%s", WNAME);
    f->cfg.name = f->wname;
    f->cfg.logs = &f->log;
    f->cfg.nlogs = 1;
    assert_int_equal(audit_mem_new(&f->tree), IG_OK);
    for (i = 0; i < 20; i++) {
        memset(leaf, (int)i, sizeof(leaf));
        assert_int_equal(audit_mem_append(f->tree, leaf), IG_OK);
    }
    memset(&o, 0, sizeof(o));
    o.path = f->path;
    assert_int_equal(witness_state_open(&o, &f->st, NULL), IG_OK);
    f->sg.name = WNAME;
    f->sg.key = f->w_key;
    witness_answer_init(&f->a);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    char p[160];

    ig_buf_release(&f->a.body);
    witness_state_close(f->st);
    audit_mem_free(f->tree);
    ig_signing_key_free(f->log_key);
    ig_signing_key_free(f->w_key);
    (void)snprintf(p, sizeof(p), "rm -rf '%s'", f->dir);
    assert_int_equal(system(p), 0);
    free(f);
    return 0;
}

/* The request body: old, the proof from old, the checkpoint of size
   signed by k (as name), and extra appended to the note. */
static char *
request(struct fx *f, const struct ig_signing_key *k, const char *name,
        uint64_t old, uint64_t size, const char *extra, size_t *len)
{
    unsigned char root[32], proof[AUDIT_CPROOF_MAX][32];
    struct ig_buf b;
    size_t n = 0, nl;
    char *note, *out;

    assert_int_equal(audit_root_at(size, audit_mem_fetch, f->tree, root),
                     IG_OK);
    if (old > 0 && old < size)
        assert_int_equal(audit_consistency_proof(old, size, audit_mem_fetch,
                                                 f->tree, proof, &n),
                         IG_OK);
    note = au_sign_checkpoint(k, name, ORIGIN, size, root, &nl);
    ig_buf_init(&b, AUDIT_WITNESS_REQ_MAX + 1024);
    assert_int_equal(audit_witness_req_format(old,
                                              (const unsigned char(*)[32])proof,
                                              n, note, nl, &b),
                     IG_OK);
    assert_int_equal(ig_buf_adds(&b, extra), IG_OK);
    free(note);
    out = ig_buf_take(&b, len);
    assert_non_null(out);
    return out;
}

static void
answer(struct fx *f, const char *body, size_t len)
{
    ig_buf_reset(&f->a.body);
    f->a.status = 0;
    witness_add_checkpoint(&f->cfg, f->st, &f->sg, body, len, NOW, &f->a);
}

/* A refusal: status, text/plain, one line naming it. */
static void
assert_refused(struct fx *f, unsigned int status, const char *needle)
{
    const char *t = f->a.body.data != NULL ? f->a.body.data : "";

    assert_int_equal(f->a.status, status);
    assert_string_equal(f->a.type, WITNESS_TYPE_TEXT);
    assert_true(f->a.body.len > 1 && t[f->a.body.len - 1] == '\n');
    assert_ptr_equal(strchr(t, '\n'), t + f->a.body.len - 1);
    if (strstr(t, needle) == NULL)
        fail_msg("answer %u \"%s\" does not say \"%s\"", f->a.status, t,
                 needle);
}

static void
test_garbage_is_400(void **state)
{
    static const char *const bodies[] = {
        "",
        "hello\n",
        "old 01\n\n" ORIGIN "\n1\nAAAA\n",
        "old 1\nnot-base64!\n\nx\n",
        "old -1\n\nx\n",
        "old 18446744073709551616\n\nx\n",
    };
    struct fx *f = *state;
    size_t i;

    for (i = 0; i < sizeof(bodies) / sizeof(*bodies); i++) {
        answer(f, bodies[i], strlen(bodies[i]));
        assert_refused(f, 400, "bad request");
    }
}

static void
test_unknown_origin_and_wrong_key(void **state)
{
    struct fx *f = *state;
    struct ig_signing_key *other = au_key_new();
    unsigned char root[32];
    struct ig_buf b;
    size_t len, nl;
    char *body, *note;

    /* another origin, validly signed by its own key */
    assert_int_equal(audit_root_at(3, audit_mem_fetch, f->tree, root), IG_OK);
    note = au_sign_checkpoint(other, "other.example/log", "other.example/log",
                              3, root, &nl);
    ig_buf_init(&b, AUDIT_WITNESS_REQ_MAX);
    assert_int_equal(audit_witness_req_format(0, NULL, 0, note, nl, &b), IG_OK);
    free(note);
    answer(f, b.data, b.len);
    assert_refused(f, 404, "unknown log");
    ig_buf_release(&b);
    /* our origin, signed by another key under the log's name */
    body = request(f, other, ORIGIN, 0, 3, "", &len);
    answer(f, body, len);
    assert_refused(f, 403, "no valid signature");
    free(body);
    /* our origin, signed by another key under another name */
    body = request(f, other, "impostor.example/log", 0, 3, "", &len);
    answer(f, body, len);
    assert_refused(f, 403, "no valid signature");
    free(body);
    ig_signing_key_free(other);
}

static void
test_broken_log_signature_is_403(void **state)
{
    struct fx *f = *state;
    size_t len;
    char *body = request(f, f->log_key, ORIGIN, 0, 4, "", &len);
    char *last = body + len - 20; /* inside the signature's base64 */

    *last = *last == 'A' ? 'B' : 'A';
    answer(f, body, len);
    assert_refused(f, 403, "no valid signature");
    free(body);
}

static void
test_not_a_checkpoint_is_400(void **state)
{
    struct fx *f = *state;
    unsigned char root[32];
    char text[256], b64[48];
    struct ig_buf b;
    size_t nl;
    char *note;

    assert_int_equal(audit_root_at(4, audit_mem_fetch, f->tree, root), IG_OK);
    (void)sodium_bin2base64(b64, sizeof(b64), root, 32,
                            sodium_base64_VARIANT_ORIGINAL);
    /* an extension line, validly signed */
    (void)snprintf(text, sizeof(text), "%s\n4\n%s\nextension\n", ORIGIN, b64);
    note = au_sign_text(f->log_key, ORIGIN, text, &nl);
    ig_buf_init(&b, AUDIT_WITNESS_REQ_MAX);
    assert_int_equal(audit_witness_req_format(0, NULL, 0, note, nl, &b), IG_OK);
    answer(f, b.data, b.len);
    assert_refused(f, 400, "not a checkpoint");
    ig_buf_release(&b);
    free(note);
}

static void
test_cosign_conflict_and_served_note(void **state)
{
    struct fx *f = *state;
    char forged[AUDIT_COSIG_LINE_MAX + 1], extra[512], served_log[1024];
    struct ig_signing_key *other = au_key_new();
    struct ig_buf fb, text;
    unsigned char root[32];
    char *body, *note = NULL;
    size_t len, nlen = 0;
    uint64_t size = 0, ts = 0;

    /* a cosignature line in the witness's name by another key, and a
       line of an unknown key: ignored for the answer, never served */
    assert_int_equal(audit_root_at(8, audit_mem_fetch, f->tree, root), IG_OK);
    ig_buf_init(&text, 512);
    assert_int_equal(audit_checkpoint_text(ORIGIN, 8, root, &text), IG_OK);
    ig_buf_init(&fb, sizeof(forged));
    assert_int_equal(
        audit_cosig_sign(text.data, text.len, WNAME, other, 5, &fb), IG_OK);
    ig_buf_release(&text);
    (void)snprintf(forged, sizeof(forged), "%s", fb.data);
    ig_buf_release(&fb);
    (void)snprintf(extra, sizeof(extra), "%s", forged);
    body = request(f, f->log_key, ORIGIN, 0, 8, "", &len);
    (void)snprintf(served_log, sizeof(served_log), "%s",
                   strstr(body, "\n\n") + 2);
    /* the extra line goes after the log's signature line */
    body = realloc(body, len + strlen(extra) + 1);
    assert_non_null(body);
    memcpy(body + len, extra, strlen(extra) + 1);
    len += strlen(extra);
    answer(f, body, len);
    assert_int_equal(f->a.status, 200);
    free(body);
    assert_int_equal(witness_state_latest(f->st, ORIGIN, &note, &nlen, &size),
                     IG_OK);
    assert_int_equal(size, 8);
    assert_null(strstr(note, forged));
    /* the log's own signature line is kept */
    assert_memory_equal(note, served_log, strlen(served_log));
    assert_int_equal(audit_cosig_find(note, nlen, &f->wk, &ts, NULL), IG_OK);
    assert_int_equal(ts, NOW);
    /* the answer is the served line */
    assert_non_null(strstr(note, f->a.body.data));
    free(note);

    /* a stale old size: 409, the size as text/x.tlog.size */
    body = request(f, f->log_key, ORIGIN, 5, 12, "", &len);
    answer(f, body, len);
    assert_int_equal(f->a.status, 409);
    assert_string_equal(f->a.type, WITNESS_TYPE_SIZE);
    assert_string_equal(f->a.body.data, "8\n");
    free(body);
    /* old > size: 400 */
    body = request(f, f->log_key, ORIGIN, 0, 3, "", &len);
    memcpy(body, "old 9", 5);
    answer(f, body, len);
    assert_refused(f, 400, "larger");
    free(body);
    /* the right old: 200 */
    body = request(f, f->log_key, ORIGIN, 8, 12, "", &len);
    answer(f, body, len);
    assert_int_equal(f->a.status, 200);
    assert_string_equal(f->a.type, WITNESS_TYPE_TEXT);
    free(body);
    ig_signing_key_free(other);
}

/* While the log rotates its key the witness trusts both: a checkpoint
   signed by either is cosigned; a bad line under either is refused even
   when the other's verifies. */
static void
test_two_keys_while_rotating(void **state)
{
    struct fx *f = *state;
    struct ig_signing_key *next = au_key_new();
    char *body, *sig, *line2;
    size_t len;

    au_verifier(next, ORIGIN, &f->log.keys[1]);
    f->log.nkeys = 2;
    body = request(f, f->log_key, ORIGIN, 0, 3, "", &len);
    answer(f, body, len);
    assert_int_equal(f->a.status, 200);
    free(body);
    body = request(f, next, ORIGIN, 3, 6, "", &len);
    answer(f, body, len);
    assert_int_equal(f->a.status, 200);
    /* the new key's line, broken, beside a valid line of the old key */
    line2 = strstr(body, "\n\n");
    line2 = strstr(line2 + 2, "\n\n") + 2; /* the signature line */
    line2 = strdup(line2);
    assert_non_null(line2);
    free(body);
    body = request(f, f->log_key, ORIGIN, 6, 9, "", &len);
    sig = line2 + strlen(line2) - 20;
    *sig = *sig == 'A' ? 'B' : 'A';
    body = realloc(body, len + strlen(line2) + 1);
    assert_non_null(body);
    memcpy(body + len, line2, strlen(line2) + 1);
    answer(f, body, len + strlen(line2));
    assert_refused(f, 403, "no valid signature");
    /* without it: cosigned */
    answer(f, body, len);
    assert_int_equal(f->a.status, 200);
    free(body);
    free(line2);
    ig_signing_key_free(next);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_garbage_is_400, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_origin_and_wrong_key,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_broken_log_signature_is_403, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_not_a_checkpoint_is_400, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cosign_conflict_and_served_note,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_keys_while_rotating, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
