/*
 * test_audit_note.c - signed notes, checkpoints, verifier keys and the
 * tlog-proof text format.
 *
 * Known answers from Go's golang.org/x/mod/sumdb (vectors/audit/
 * sumdb-note.json): the PeterNeumann verifier key and every mangling of it
 * Go refuses, its signing key signing the example text to Go's exact
 * bytes (Ed25519 is deterministic), Go's Open cases (one of two signers
 * known, duplicated and unknown lines, the malformed notes), and Go's
 * golden tree text. Then signify-style negatives on a fresh checkpoint:
 * wrong key, wrong name, every byte changed, CRLF, no em dash, duplicated
 * and extension lines.
 */
#include "testutil.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "audit_note.h"
#include "audit_util.h"

#define LOG "example.com/intentgate-log"

typedef unsigned char hash_t[32];

static const char *
js(json_t *doc, const char *key)
{
    const char *s = json_string_value(json_object_get(doc, key));

    assert_non_null(s);
    return s;
}

static struct audit_verifier
parse_vkey(const char *s)
{
    struct audit_verifier v;
    struct ig_err err;

    if (audit_verifier_parse(s, strlen(s), &v, &err) != IG_OK)
        fail_msg("%s: %s", s, err.msg);
    return v;
}

static enum ig_status
open_text(const char *note, const struct audit_verifier *v, size_t *text_len)
{
    return audit_note_open(note, strlen(note), v, text_len, NULL);
}

/* ---- verifier keys ---- */

static void
test_verifier_go_vectors(void **state)
{
    json_t *doc = au_load_json("audit/sumdb-note.json");
    const char *vkey = js(doc, "peter_vkey");
    char buf[512], *b;
    struct audit_verifier v, w;
    size_t n = strlen(vkey), i, j;

    (void)state;
    v = parse_vkey(vkey);
    assert_string_equal(v.name, "PeterNeumann");
    assert_int_equal(v.key_id, 0xc74f20a3);
    assert_int_equal(audit_key_id(v.name, v.pk), 0xc74f20a3);
    assert_int_equal(audit_verifier_format(v.name, v.pk, buf, sizeof(buf)),
                     IG_OK);
    assert_string_equal(buf, vkey);
    w = parse_vkey(js(doc, "enoch_vkey"));
    assert_string_equal(w.name, "EnochRoot");
    assert_int_equal(w.key_id, 0xaf0cfe78);
    /* Surrounding white space is ignored. */
    (void)snprintf(buf, sizeof(buf), " \t%s\r\n", vkey);
    w = parse_vkey(buf);
    assert_memory_equal(&w, &v, sizeof(v));
    /* Go's TestNewVerifier: every proper substring, every byte + 1. */
    b = strdup(vkey);
    assert_non_null(b);
    for (i = 0; i < n; i++)
        for (j = i + 1; j <= n; j++) {
            if (i == 0 && j == n)
                continue;
            if (audit_verifier_parse(vkey + i, j - i, &w, NULL) == IG_OK)
                fail_msg("accepted substring [%zu:%zu]", i, j);
            assert_int_equal(w.key_id, 0);
        }
    for (i = 0; i < n; i++) {
        b[i]++;
        assert_int_equal(audit_verifier_parse(b, n, &w, NULL), IG_ERR_INVALID);
        b[i]--;
    }
    free(b);
    for (i = 0; i < json_array_size(json_object_get(doc, "bad_vkeys")); i++) {
        const char *s = json_string_value(
            json_array_get(json_object_get(doc, "bad_vkeys"), i));

        assert_int_equal(audit_verifier_parse(s, strlen(s), &w, NULL),
                         IG_ERR_INVALID);
    }
    json_decref(doc);
}

static void
test_verifier_bad_inputs(void **state)
{
    static const char *bad[] = {
        "",
        "   ",
        "PeterNeumann",
        "PeterNeumann+c74f20a3",
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20g3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW=",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq_LDE4izWy10TW",
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW "
        "x",
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegw\nxbzhKqiBfsVkmqq/LDE4izWy10TW",
    };
    struct audit_verifier v;
    unsigned char pk[32] = {0};
    char out[600], name[AUDIT_NAME_MAX + 2];
    struct ig_err err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(audit_verifier_parse(bad[i], strlen(bad[i]), &v, &err),
                         IG_ERR_INVALID);
        assert_true(strlen(err.msg) > 0);
    }
    /* Upper-case hex is read (as Go does); the format is lower case. */
    v = parse_vkey("PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/"
                   "LDE4izWy10TW");
    assert_int_equal(v.key_id, 0xc74f20a3);
    /* Names. */
    assert_true(audit_name_valid("example.com/log"));
    assert_true(audit_name_valid("caf\xc3\xa9"));
    assert_false(audit_name_valid(""));
    assert_false(audit_name_valid("a b"));
    assert_false(audit_name_valid("a+b"));
    assert_false(audit_name_valid("a\tb"));
    assert_false(audit_name_valid("a\x7f"));
    assert_false(audit_name_valid("a\xc2\xa0"));     /* U+00A0 */
    assert_false(audit_name_valid("a\xe2\x80\x83")); /* U+2003 */
    assert_false(audit_name_valid("a\xe3\x80\x80")); /* U+3000 */
    assert_false(audit_name_valid("a\xff"));
    assert_false(audit_name_valid("\xc0\xaf"));     /* overlong '/' */
    assert_false(audit_name_valid("\xed\xa0\x80")); /* a surrogate */
    memset(name, 'n', sizeof(name));
    name[AUDIT_NAME_MAX] = '\0';
    assert_true(audit_name_valid(name));
    assert_int_equal(audit_verifier_format(name, pk, out, sizeof(out)), IG_OK);
    v = parse_vkey(out);
    assert_string_equal(v.name, name);
    name[AUDIT_NAME_MAX] = 'n';
    name[AUDIT_NAME_MAX + 1] = '\0';
    assert_false(audit_name_valid(name));
    assert_int_equal(audit_verifier_format(name, pk, out, sizeof(out)),
                     IG_ERR_INVALID);
    assert_int_equal(audit_verifier_format("a b", pk, out, sizeof(out)),
                     IG_ERR_INVALID);
    assert_int_equal(audit_verifier_format("abc", pk, out, 20), IG_ERR_INVALID);
    assert_int_equal(audit_verifier_init(&v, "a+b", pk), IG_ERR_INVALID);
}

/* ---- signed notes: Go's vectors ---- */

static struct ig_signing_key *
peter_signer(json_t *doc)
{
    const char *skey = js(doc, "peter_skey"), *b64;
    unsigned char raw[64];
    struct ig_signing_key *k;
    size_t n;

    /* PRIVATE+KEY+<name>+<id>+base64(0x01 || seed) */
    b64 = skey;
    for (n = 0; n < 4; n++)
        b64 = strchr(b64, '+') + 1;
    assert_int_equal(sodium_base642bin(raw, sizeof(raw), b64, strlen(b64), NULL,
                                       &n, NULL,
                                       sodium_base64_VARIANT_ORIGINAL),
                     0);
    assert_int_equal(n, 33);
    assert_int_equal(raw[0], 1);
    k = au_key_from_seed(raw + 1);
    sodium_memzero(raw, sizeof(raw));
    return k;
}

static void
test_sign_matches_go(void **state)
{
    json_t *doc = au_load_json("audit/sumdb-note.json");
    struct ig_signing_key *k = peter_signer(doc);
    struct audit_verifier v = parse_vkey(js(doc, "peter_vkey")), mine;
    char *note;
    size_t len;

    (void)state;
    au_verifier(k, "PeterNeumann", &mine);
    assert_memory_equal(&mine, &v, sizeof(v));
    note = au_sign_text(k, "PeterNeumann", js(doc, "text"), &len);
    assert_string_equal(note, js(doc, "signed_note"));
    free(note);
    ig_signing_key_free(k);
    json_decref(doc);
}

static void
test_open_go_vectors(void **state)
{
    json_t *doc = au_load_json("audit/sumdb-note.json"), *bad;
    struct audit_verifier peter = parse_vkey(js(doc, "peter_vkey"));
    struct audit_verifier enoch = parse_vkey(js(doc, "enoch_vkey"));
    const char *text = js(doc, "text"), *psig = js(doc, "peter_sig_line");
    const char *esig = js(doc, "enoch_sig_line");
    char buf[16384], tampered[256];
    struct ig_err err;
    size_t tl, i;

    (void)state;
    assert_int_equal(open_text(js(doc, "signed_note"), &peter, &tl), IG_OK);
    assert_int_equal(tl, strlen(text));
    /* Two signers, either one known. */
    assert_int_equal(open_text(js(doc, "signed_note_both"), &peter, &tl),
                     IG_OK);
    assert_int_equal(tl, strlen(text));
    assert_int_equal(open_text(js(doc, "signed_note_both"), &enoch, &tl),
                     IG_OK);
    /* Only Peter's signature: Enoch's verifier finds none of its own. */
    assert_int_equal(audit_note_open(js(doc, "signed_note"),
                                     strlen(js(doc, "signed_note")), &enoch,
                                     &tl, &err),
                     IG_ERR_CRYPTO);
    assert_int_equal(tl, 0);
    /* Duplicated lines, known and unknown, and a garbled unknown one. */
    (void)snprintf(tampered, sizeof(tampered), "%.*sABCD%s", 60, esig,
                   esig + 60);
    (void)snprintf(buf, sizeof(buf), "%s\n%s%s%s%s%s", text, psig, psig, esig,
                   esig, tampered);
    assert_int_equal(open_text(buf, &peter, &tl), IG_OK);
    /* Sixteen signature lines must be accepted, 101 refused. */
    (void)snprintf(buf, sizeof(buf), "%s\n", text);
    for (i = 0; i < 16; i++)
        strncat(buf, psig, sizeof(buf) - strlen(buf) - 1);
    assert_int_equal(open_text(buf, &peter, &tl), IG_OK);
    (void)snprintf(buf, sizeof(buf), "%s\n", text);
    for (i = 0; i < 101; i++)
        strncat(buf, esig, sizeof(buf) - strlen(buf) - 1);
    assert_true(strlen(buf) < sizeof(buf) - 1);
    assert_int_equal(open_text(buf, &peter, &tl), IG_ERR_INVALID);
    /* Go's malformed notes, and its invalid signature. */
    bad = json_object_get(doc, "bad_notes");
    for (i = 0; i < json_array_size(bad); i++) {
        const char *s = json_string_value(json_array_get(bad, i));

        if (open_text(s, &peter, &tl) == IG_OK)
            fail_msg("bad note %zu opened", i);
    }
    (void)snprintf(buf, sizeof(buf), "\xff%s\n%s", text, psig);
    assert_int_equal(open_text(buf, &peter, &tl), IG_ERR_INVALID);
    (void)snprintf(buf, sizeof(buf), "%s\n%.*sABCD%s", text, 60, psig,
                   psig + 60);
    assert_int_equal(open_text(buf, &peter, &tl), IG_ERR_CRYPTO);
    json_decref(doc);
}

static void
test_tree_text_matches_go(void **state)
{
    json_t *doc = au_load_json("audit/sumdb-note.json");
    const char *rec = js(doc, "tree_record");
    struct audit_checkpoint c;
    hash_t h;
    struct ig_buf b;

    (void)state;
    audit_leaf_hash(rec, strlen(rec), h);
    ig_buf_init(&b, 4096);
    assert_int_equal(
        audit_checkpoint_text(
            js(doc, "tree_origin"),
            (uint64_t)json_integer_value(json_object_get(doc, "tree_size")), h,
            &b),
        IG_OK);
    assert_string_equal(b.data, js(doc, "tree_text"));
    assert_int_equal(audit_checkpoint_parse(b.data, b.len, &c, NULL), IG_OK);
    assert_string_equal(c.origin, "go.sum database tree");
    assert_int_equal(c.size, 123456789012);
    assert_memory_equal(c.root, h, 32);
    ig_buf_release(&b);
    json_decref(doc);
}

/* ---- checkpoints: a fresh key, signify-style negatives ---- */

static char *
subst(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0, cap = strlen(s) * 3 + 1;
    char *out = malloc(cap);
    const char *p;

    assert_non_null(out);
    while ((p = strstr(s, from)) != NULL) {
        memcpy(out + n, s, (size_t)(p - s));
        n += (size_t)(p - s);
        memcpy(out + n, to, tl);
        n += tl;
        s = p + fl;
    }
    memcpy(out + n, s, strlen(s) + 1);
    return out;
}

static void
test_checkpoint_round_trip_and_tampering(void **state)
{
    struct ig_signing_key *k = au_key_new(), *other = au_key_new();
    struct audit_verifier v, wrong_key, wrong_name;
    struct audit_checkpoint c;
    struct ig_err err;
    hash_t root;
    char *note, *bad;
    size_t len, i;

    (void)state;
    randombytes_buf(root, sizeof(root));
    au_verifier(k, LOG, &v);
    au_verifier(other, LOG, &wrong_key);
    au_verifier(k, "example.com/other-log", &wrong_name);
    note = au_sign_checkpoint(k, LOG, LOG, 123456, root, &len);
    if (audit_checkpoint_open(note, len, &v, &c, &err) != IG_OK)
        fail_msg("%s", err.msg);
    assert_string_equal(c.origin, LOG);
    assert_int_equal(c.size, 123456);
    assert_memory_equal(c.root, root, 32);
    assert_int_equal(audit_checkpoint_open(note, len, &wrong_key, &c, &err),
                     IG_ERR_CRYPTO);
    assert_int_equal(c.size, 0);
    assert_int_equal(audit_checkpoint_open(note, len, &wrong_name, &c, &err),
                     IG_ERR_CRYPTO);
    /* Every byte changed, anywhere: text, dash, name, signature, newline. */
    bad = malloc(len + 1);
    assert_non_null(bad);
    for (i = 0; i < len; i++) {
        memcpy(bad, note, len + 1);
        bad[i] ^= 0x01;
        if (audit_checkpoint_open(bad, len, &v, &c, NULL) == IG_OK)
            fail_msg("byte %zu changed, still opens", i);
        bad[i] ^= 0x03;
        if (audit_checkpoint_open(bad, len, &v, &c, NULL) == IG_OK)
            fail_msg("byte %zu changed, still opens", i);
    }
    /* Truncated anywhere. */
    for (i = 0; i < len; i++)
        assert_int_not_equal(audit_checkpoint_open(note, i, &v, &c, NULL),
                             IG_OK);
    free(bad);
    /* CRLF line ends. */
    bad = subst(note, "\n", "\r\n");
    assert_int_equal(audit_checkpoint_open(bad, strlen(bad), &v, &c, &err),
                     IG_ERR_INVALID);
    free(bad);
    /* No em dash (a hyphen, an en dash). */
    bad = subst(note, "\xe2\x80\x94", "-");
    assert_int_equal(audit_checkpoint_open(bad, strlen(bad), &v, &c, &err),
                     IG_ERR_INVALID);
    free(bad);
    bad = subst(note, "\xe2\x80\x94", "\xe2\x80\x93");
    assert_int_equal(audit_checkpoint_open(bad, strlen(bad), &v, &c, &err),
                     IG_ERR_INVALID);
    free(bad);
    /* Space or two after the dash, name, signature. */
    bad = subst(note, LOG " ", LOG "  ");
    assert_int_not_equal(audit_checkpoint_open(bad, strlen(bad), &v, &c, &err),
                         IG_OK);
    free(bad);
    free(note);
    ig_signing_key_free(k);
    ig_signing_key_free(other);
}

static void
test_checkpoint_other_lines(void **state)
{
    struct ig_signing_key *k = au_key_new(), *witness = au_key_new();
    struct audit_verifier v, w;
    struct audit_checkpoint c;
    char *note, *wnote, *buf, *line;
    hash_t root;
    size_t len, wlen, tl;

    (void)state;
    randombytes_buf(root, sizeof(root));
    au_verifier(k, LOG, &v);
    au_verifier(witness, "witness.example/w1", &w);
    note = au_sign_checkpoint(k, LOG, LOG, 7, root, &len);
    wnote =
        au_sign_checkpoint(witness, "witness.example/w1", LOG, 7, root, &wlen);
    tl = (size_t)(strstr(note, "\n\n") - note) + 2; /* text + blank line */
    line = wnote + tl;
    buf = malloc(len + wlen + 200);
    assert_non_null(buf);
    /* A witness cosignature before and after ours: ignored. */
    (void)snprintf(buf, len + wlen + 200, "%.*s%s%s", (int)tl, note, line,
                   note + tl);
    assert_int_equal(audit_checkpoint_open(buf, strlen(buf), &v, &c, NULL),
                     IG_OK);
    (void)snprintf(buf, len + wlen + 200, "%s%s", note, line);
    assert_int_equal(audit_checkpoint_open(buf, strlen(buf), &v, &c, NULL),
                     IG_OK);
    /* Only the witness's: nothing by the log's key. */
    assert_int_equal(audit_checkpoint_open(wnote, wlen, &v, &c, NULL),
                     IG_ERR_CRYPTO);
    /* The witness's line renamed to ours: another key id, ignored... */
    {
        char *renamed = subst(line, "witness.example/w1", LOG);

        (void)snprintf(buf, len + wlen + 200, "%s%s", note, renamed);
        assert_int_equal(audit_checkpoint_open(buf, strlen(buf), &v, &c, NULL),
                         IG_OK);
        /* ... and alone it is no signature of ours. */
        (void)snprintf(buf, len + wlen + 200, "%.*s%s", (int)tl, note, renamed);
        assert_int_equal(audit_checkpoint_open(buf, strlen(buf), &v, &c, NULL),
                         IG_ERR_CRYPTO);
        free(renamed);
    }
    /* A duplicated signature line is fine (Go drops repeats). */
    (void)snprintf(buf, len + wlen + 200, "%s%s", note, note + tl);
    assert_int_equal(audit_checkpoint_open(buf, strlen(buf), &v, &c, NULL),
                     IG_OK);
    free(buf);
    free(note);
    free(wnote);
    ig_signing_key_free(k);
    ig_signing_key_free(witness);
}

/* Sign arbitrary text as LOG and try to open it as a checkpoint. */
static enum ig_status
open_signed_text(struct ig_signing_key *k, const struct audit_verifier *v,
                 const char *text)
{
    struct audit_checkpoint c;
    struct ig_err err;
    enum ig_status st;
    size_t len;
    char *note = au_sign_text(k, LOG, text, &len);

    st = audit_checkpoint_open(note, len, v, &c, &err);
    free(note);
    return st;
}

static void
test_checkpoint_malformed_bodies(void **state)
{
    static const char *bad[] = {
        LOG "\n" LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n5\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nextension\n",
        LOG "\n05\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n+5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n-5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n 5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n0x5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n18446744073709551616\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
            "A=\n",
        LOG "\n\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
        LOG "\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAA-AAAAAAAAAAAAAA=\n",
        LOG "\n5\n",
        LOG "\n",
        "other.example/log\n5\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
    };
    struct ig_signing_key *k = au_key_new();
    struct audit_checkpoint c;
    struct audit_verifier v;
    char max[128];
    size_t i;

    (void)state;
    au_verifier(k, LOG, &v);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (open_signed_text(k, &v, bad[i]) != IG_ERR_INVALID)
            fail_msg("malformed checkpoint %zu accepted", i);
    assert_int_equal(
        open_signed_text(
            k, &v, LOG "\n0\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"),
        IG_OK);
    (void)snprintf(max, sizeof(max),
                   "%s\n18446744073709551615\n"
                   "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
                   LOG);
    assert_int_equal(open_signed_text(k, &v, max), IG_OK);
    assert_int_equal(audit_checkpoint_parse(max, strlen(max), &c, NULL), IG_OK);
    assert_true(c.size == UINT64_MAX);
    /* Signing refuses what could not be opened. */
    {
        struct ig_buf b;
        hash_t root = {0};

        ig_buf_init(&b, 4096);
        assert_int_equal(audit_note_sign("no newline", 10, LOG, k, &b),
                         IG_ERR_INVALID);
        assert_int_equal(audit_note_sign("a\rb\n", 4, LOG, k, &b),
                         IG_ERR_INVALID);
        assert_int_equal(audit_note_sign("a\n", 2, "bad name", k, &b),
                         IG_ERR_INVALID);
        assert_int_equal(audit_checkpoint_text("", 1, root, &b),
                         IG_ERR_INVALID);
        assert_int_equal(audit_checkpoint_text("a\nb", 1, root, &b),
                         IG_ERR_INVALID);
        assert_int_equal(b.len, 0);
        /* Past the buffer's cap: nothing is left behind. */
        ig_buf_release(&b);
        ig_buf_init(&b, 100);
        assert_int_equal(audit_checkpoint_text(LOG, 1, root, &b), IG_OK);
        assert_int_equal(audit_note_sign(b.data, b.len, LOG, k, &b),
                         IG_ERR_LIMIT);
        assert_int_equal(b.len, strlen(b.data));
        ig_buf_release(&b);
    }
    /* Over the size limit. */
    {
        char *big = malloc(AUDIT_NOTE_MAX + 2);

        assert_non_null(big);
        memset(big, 'a', AUDIT_NOTE_MAX + 1);
        big[AUDIT_NOTE_MAX + 1] = '\0';
        assert_int_equal(
            audit_checkpoint_open(big, AUDIT_NOTE_MAX + 1, &v, &c, NULL),
            IG_ERR_INVALID);
        free(big);
    }
    ig_signing_key_free(k);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verifier_go_vectors),
        cmocka_unit_test(test_verifier_bad_inputs),
        cmocka_unit_test(test_sign_matches_go),
        cmocka_unit_test(test_open_go_vectors),
        cmocka_unit_test(test_tree_text_matches_go),
        cmocka_unit_test(test_checkpoint_round_trip_and_tampering),
        cmocka_unit_test(test_checkpoint_other_lines),
        cmocka_unit_test(test_checkpoint_malformed_bodies),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
