/*
 * test_audit_cosig.c - witness cosignatures (cosignature/v1, Ed25519) and
 * the tlog-witness add-checkpoint body.
 *
 * Known answers (vectors/audit/cosignature.json): the C2SP documents'
 * example checkpoint, its cosignature line (key id and time), the message
 * it signs, and the example add-checkpoint body; a published witness vkey
 * (remora.n621.de) whose key id must recompute; transparency-dev/formats'
 * cosignature timestamp and its refused verifier keys. Then round trips
 * with fresh keys and every way a cosignature must fail: another
 * checkpoint, another key, the log's own key type, each byte flipped,
 * truncated and overlong signatures, a time over 2^63 - 1.
 */
#include "testutil.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_cosig.h"
#include "audit_util.h"

#define LOG "example.com/intentgate-log"
#define WIT "witness.example.org/w1"
#define BUF                                                                    \
    {                                                                          \
        NULL, 0, 0, 1 << 20                                                    \
    }

static const char *
js(json_t *doc, const char *key)
{
    const char *s = json_string_value(json_object_get(doc, key));

    assert_non_null(s);
    return s;
}

static uint32_t
hex32(const char *s)
{
    return (uint32_t)strtoul(s, NULL, 16);
}

static void
wkey(const struct ig_signing_key *k, const char *name,
     struct audit_witness_key *w)
{
    struct ig_public_key pub;

    ig_signing_key_public(k, &pub);
    assert_int_equal(audit_witness_key_init(w, name, pub.pk), IG_OK);
}

/* A checkpoint text for size with a root made from the size. */
static char *
cp_text(uint64_t size)
{
    unsigned char root[32];
    struct ig_buf b = BUF;

    memset(root, 0, sizeof(root));
    memcpy(root, &size, sizeof(size));
    assert_int_equal(audit_checkpoint_text(LOG, size, root, &b), IG_OK);
    return b.data;
}

static char *
cosign(const struct ig_signing_key *k, const char *name, const char *text,
       uint64_t ts)
{
    struct ig_buf b = BUF;

    assert_int_equal(audit_cosig_sign(text, strlen(text), name, k, ts, &b),
                     IG_OK);
    return b.data;
}

static enum ig_status
verify(const char *line, const char *text, const struct audit_witness_key *w,
       uint64_t *ts)
{
    size_t n = strlen(line);

    if (n > 0 && line[n - 1] == '\n')
        n--;
    return audit_cosig_verify_line(line, n, text, strlen(text), w, ts, NULL);
}

/* ---- known answers ---- */

static void
test_c2sp_example(void **state)
{
    json_t *doc = au_load_json("audit/cosignature.json");
    const char *line = js(doc, "c2sp_cosig_line");
    const char *text = js(doc, "c2sp_checkpoint_text"), *name;
    struct ig_buf msg = BUF;
    size_t name_len;
    uint32_t id;
    uint64_t ts;

    (void)state;
    assert_int_equal(
        audit_cosig_line_info(line, strlen(line), &name, &name_len, &id, &ts),
        IG_OK);
    assert_int_equal(name_len, strlen("witness.example.com/w1"));
    assert_memory_equal(name, "witness.example.com/w1", name_len);
    assert_int_equal(id, hex32(js(doc, "c2sp_cosig_key_id")));
    assert_int_equal(ts, (uint64_t)json_integer_value(
                             json_object_get(doc, "c2sp_cosig_time")));
    assert_int_equal(audit_cosig_message(ts, text, strlen(text), &msg), IG_OK);
    assert_string_equal(msg.data, js(doc, "c2sp_signed_message"));
    /* The log's line is 68 bytes: a note signature, not a cosignature. */
    line = js(doc, "c2sp_log_line");
    assert_int_equal(
        audit_cosig_line_info(line, strlen(line), &name, &name_len, &id, &ts),
        IG_ERR_INVALID);
    ig_buf_release(&msg);
    json_decref(doc);
}

static void
test_c2sp_request(void **state)
{
    json_t *doc = au_load_json("audit/cosignature.json");
    const char *body = js(doc, "c2sp_request_body");
    struct audit_witness_req *r = malloc(sizeof(*r));
    struct ig_buf again = BUF;
    struct ig_err err;

    (void)state;
    assert_non_null(r);
    assert_int_equal(audit_witness_req_parse(body, strlen(body), r, &err),
                     IG_OK);
    assert_int_equal(r->old, (uint64_t)json_integer_value(
                                 json_object_get(doc, "c2sp_request_old")));
    assert_int_equal(r->nproof, (size_t)json_integer_value(json_object_get(
                                    doc, "c2sp_request_proof_lines")));
    assert_true(r->note_len > 0);
    assert_memory_equal(r->note, "example.com/behind-the-sofa\n20852163\n", 37);
    /* One spelling: formatting the parts gives the same bytes. */
    assert_int_equal(
        audit_witness_req_format(r->old, (const unsigned char(*)[32])r->proof,
                                 r->nproof, r->note, r->note_len, &again),
        IG_OK);
    assert_int_equal(again.len, strlen(body));
    assert_memory_equal(again.data, body, again.len);
    ig_buf_release(&again);
    free(r);
    json_decref(doc);
}

static void
test_vkeys(void **state)
{
    json_t *doc = au_load_json("audit/cosignature.json");
    const char *ok = js(doc, "witness_vkey_ok"), *s;
    json_t *bad = json_object_get(doc, "vkeys_bad"), *v;
    struct audit_witness_key w;
    struct audit_verifier lv;
    struct ig_err err;
    char out[256];
    size_t i;

    (void)state;
    assert_int_equal(audit_witness_key_parse(ok, strlen(ok), &w, &err), IG_OK);
    assert_string_equal(w.name, "remora.n621.de");
    assert_int_equal(w.key_id, hex32(js(doc, "witness_vkey_ok_key_id")));
    assert_int_equal(audit_witness_key_format(w.name, w.pk, out, sizeof(out)),
                     IG_OK);
    assert_string_equal(out, ok);
    /* The same key as a log key has another id. */
    assert_int_equal(audit_verifier_init(&lv, w.name, w.pk), IG_OK);
    assert_int_not_equal(lv.key_id, w.key_id);
    /* A log's note key (type 0x01) is no witness key. */
    s = js(doc, "vkey_log_type");
    assert_int_equal(audit_witness_key_parse(s, strlen(s), &w, &err),
                     IG_ERR_INVALID);
    json_array_foreach(bad, i, v)
    {
        s = json_string_value(v);
        assert_int_equal(audit_witness_key_parse(s, strlen(s), &w, &err),
                         IG_ERR_INVALID);
        assert_int_equal(w.key_id, 0);
    }
    assert_int_equal(audit_witness_key_format(w.name, w.pk, out, 10),
                     IG_ERR_INVALID);
    json_decref(doc);
}

static void
test_formats_timestamp(void **state)
{
    json_t *doc = au_load_json("audit/cosignature.json");
    char line[256];
    const char *name;
    size_t name_len;
    uint32_t id;
    uint64_t ts;

    (void)state;
    (void)snprintf(line, sizeof(line), "\xe2\x80\x94 w.example %s",
                   js(doc, "formats_cosig_b64"));
    assert_int_equal(
        audit_cosig_line_info(line, strlen(line), &name, &name_len, &id, &ts),
        IG_OK);
    assert_int_equal(id, hex32(js(doc, "formats_cosig_key_id")));
    assert_int_equal(ts, (uint64_t)json_integer_value(
                             json_object_get(doc, "formats_cosig_time")));
    (void)snprintf(line, sizeof(line), "\xe2\x80\x94 w.example %s",
                   js(doc, "formats_not_cosig_b64"));
    assert_int_equal(
        audit_cosig_line_info(line, strlen(line), &name, &name_len, &id, &ts),
        IG_ERR_INVALID);
    json_decref(doc);
}

/* ---- round trips and refusals ---- */

static void
test_sign_verify(void **state)
{
    struct ig_signing_key *k = au_key_new();
    struct audit_witness_key w;
    char *text = cp_text(42), *line = cosign(k, WIT, text, 1700000000);
    uint64_t ts;

    (void)state;
    wkey(k, WIT, &w);
    assert_int_equal(
        strncmp(line, "\xe2\x80\x94 " WIT " ", 4 + strlen(WIT) + 1), 0);
    assert_int_equal(strlen(line), 4 + strlen(WIT) + 1 + 104 + 1);
    assert_true(strlen(line) <= AUDIT_COSIG_LINE_MAX);
    assert_int_equal(verify(line, text, &w, &ts), IG_OK);
    assert_int_equal(ts, 1700000000);
    /* Ed25519 is deterministic: the same inputs, the same line. */
    {
        char *again = cosign(k, WIT, text, 1700000000);

        assert_string_equal(again, line);
        free(again);
    }
    free(line);
    free(text);
    ig_signing_key_free(k);
}

static void
test_refusals(void **state)
{
    struct ig_signing_key *k = au_key_new(), *other = au_key_new();
    struct audit_witness_key w, wo, wrong_name;
    char *text = cp_text(42), *text2 = cp_text(43);
    char *line = cosign(k, WIT, text, 1700000000), *bad;
    struct ig_buf b = BUF;
    char b64[200], buf[400];
    size_t n, i, start = 4 + strlen(WIT) + 1;
    uint64_t ts;

    (void)state;
    wkey(k, WIT, &w);
    wkey(other, WIT, &wo);
    wkey(k, "witness.example.org/w2", &wrong_name);
    /* Another checkpoint, another key (same name: another key id, so not
       its line), another name. */
    assert_int_equal(verify(line, text2, &w, &ts), IG_ERR_CRYPTO);
    assert_int_equal(verify(line, text, &wo, &ts), IG_ERR_NOTFOUND);
    assert_int_equal(verify(line, text, &wrong_name, &ts), IG_ERR_NOTFOUND);
    /* The log's own note signature by the same key is not a cosignature. */
    assert_int_equal(audit_note_sign(text, strlen(text), WIT, k, &b), IG_OK);
    bad = strstr(b.data, "\n\n") + 2;
    assert_int_equal(verify(bad, text, &w, &ts), IG_ERR_NOTFOUND);
    ig_buf_release(&b);
    /* Every byte of the signature and its time flipped in turn. */
    for (i = 4; i < AUDIT_COSIG_BYTES; i++) {
        unsigned char sig[AUDIT_COSIG_BYTES];
        const char *name;
        size_t name_len;
        uint32_t id;
        uint64_t t;

        assert_int_equal(audit_cosig_line_info(line, strlen(line) - 1, &name,
                                               &name_len, &id, &t),
                         IG_OK);
        sodium_base642bin(sig, sizeof(sig), line + start, 104, NULL, &n, NULL,
                          sodium_base64_VARIANT_ORIGINAL);
        assert_int_equal(n, AUDIT_COSIG_BYTES);
        sig[i] ^= 0x01;
        sodium_bin2base64(b64, sizeof(b64), sig, sizeof(sig),
                          sodium_base64_VARIANT_ORIGINAL);
        (void)snprintf(buf, sizeof(buf), "\xe2\x80\x94 %s %s", WIT, b64);
        assert_int_equal(verify(buf, text, &w, &ts), IG_ERR_CRYPTO);
    }
    /* 75 and 77 bytes under the right key id. */
    {
        unsigned char sig[AUDIT_COSIG_BYTES + 1];

        sodium_base642bin(sig, sizeof(sig), line + start, 104, NULL, &n, NULL,
                          sodium_base64_VARIANT_ORIGINAL);
        sodium_bin2base64(b64, sizeof(b64), sig, AUDIT_COSIG_BYTES - 1,
                          sodium_base64_VARIANT_ORIGINAL);
        (void)snprintf(buf, sizeof(buf), "\xe2\x80\x94 %s %s", WIT, b64);
        assert_int_equal(verify(buf, text, &w, &ts), IG_ERR_CRYPTO);
        sig[AUDIT_COSIG_BYTES] = 0;
        sodium_bin2base64(b64, sizeof(b64), sig, AUDIT_COSIG_BYTES + 1,
                          sodium_base64_VARIANT_ORIGINAL);
        (void)snprintf(buf, sizeof(buf), "\xe2\x80\x94 %s %s", WIT, b64);
        assert_int_equal(verify(buf, text, &w, &ts), IG_ERR_CRYPTO);
    }
    /* Times: 0 and over 2^63 - 1 are not signed; 2^63 - 1 is. */
    assert_int_equal(audit_cosig_sign(text, strlen(text), WIT, k, 0, &b),
                     IG_ERR_INVALID);
    assert_int_equal(audit_cosig_sign(text, strlen(text), WIT, k,
                                      (uint64_t)INT64_MAX + 1, &b),
                     IG_ERR_INVALID);
    assert_int_equal(b.len, 0);
    free(line);
    line = cosign(k, WIT, text, (uint64_t)INT64_MAX);
    assert_int_equal(verify(line, text, &w, &ts), IG_OK);
    assert_int_equal(ts, (uint64_t)INT64_MAX);
    /* A valid signature over time 0 is still refused: tlog-witness says a
       cosignature must not omit the time. */
    {
        unsigned char sig[AUDIT_COSIG_BYTES];
        struct ig_buf m = BUF;

        assert_int_equal(audit_cosig_message(0, text, strlen(text), &m), IG_OK);
        memset(sig, 0, sizeof(sig));
        sig[0] = (unsigned char)(w.key_id >> 24);
        sig[1] = (unsigned char)(w.key_id >> 16);
        sig[2] = (unsigned char)(w.key_id >> 8);
        sig[3] = (unsigned char)w.key_id;
        ig_signing_key_sign(k, sig + 12, (const unsigned char *)m.data, m.len);
        sodium_bin2base64(b64, sizeof(b64), sig, sizeof(sig),
                          sodium_base64_VARIANT_ORIGINAL);
        (void)snprintf(buf, sizeof(buf), "\xe2\x80\x94 %s %s", WIT, b64);
        assert_int_equal(verify(buf, text, &w, &ts), IG_ERR_CRYPTO);
        ig_buf_release(&m);
    }
    /* Not checkpoint text: no newline at the end, a blank line inside. */
    assert_int_equal(audit_cosig_sign("a\n1", 3, WIT, k, 1, &b),
                     IG_ERR_INVALID);
    assert_int_equal(audit_cosig_sign("a\n\n1\n", 5, WIT, k, 1, &b),
                     IG_ERR_INVALID);
    assert_int_equal(audit_cosig_sign(text, strlen(text), "bad name", k, 1, &b),
                     IG_ERR_INVALID);
    /* Malformed lines. */
    assert_int_equal(verify("- " WIT " AAAA", text, &w, &ts), IG_ERR_INVALID);
    assert_int_equal(verify("\xe2\x80\x94 " WIT, text, &w, &ts),
                     IG_ERR_INVALID);
    assert_int_equal(verify("\xe2\x80\x94 " WIT " !!!!", text, &w, &ts),
                     IG_ERR_INVALID);
    free(line);
    free(text);
    free(text2);
    ig_signing_key_free(k);
    ig_signing_key_free(other);
}

static void
test_find_and_pick(void **state)
{
    struct ig_signing_key *lk = au_key_new(), *k1 = au_key_new(),
                          *k2 = au_key_new();
    struct audit_witness_key w1, w2;
    char *text = cp_text(7), *l1 = cosign(k1, "w1.example", text, 100),
         *l1b = cosign(k1, "w1.example", text, 200), *note;
    struct ig_buf all = BUF, body = BUF;
    char line[AUDIT_COSIG_LINE_MAX + 1];
    struct ig_err err;
    size_t len;
    uint64_t ts;

    (void)state;
    wkey(k1, "w1.example", &w1);
    wkey(k2, "w2.example", &w2);
    note = au_sign_text(lk, LOG, text, &len);
    /* No cosignature yet. */
    assert_int_equal(audit_cosig_find(note, len, &w1, &ts, &err),
                     IG_ERR_NOTFOUND);
    /* The note with two lines of w1: found, the later time. */
    assert_int_equal(ig_buf_adds(&all, note), IG_OK);
    assert_int_equal(ig_buf_adds(&all, l1), IG_OK);
    assert_int_equal(ig_buf_adds(&all, l1b), IG_OK);
    assert_int_equal(audit_cosig_find(all.data, all.len, &w1, &ts, &err),
                     IG_OK);
    assert_int_equal(ts, 200);
    assert_int_equal(audit_cosig_find(all.data, all.len, &w2, &ts, &err),
                     IG_ERR_NOTFOUND);
    /* A line of w1 copied from another checkpoint's note fails it. */
    {
        char *t8 = cp_text(8), *l8 = cosign(k1, "w1.example", t8, 300);

        assert_int_equal(ig_buf_adds(&all, l8), IG_OK);
        assert_int_equal(audit_cosig_find(all.data, all.len, &w1, &ts, &err),
                         IG_ERR_CRYPTO);
        free(t8);
        free(l8);
    }
    /* A witness's answer: another key's line first, then ours. */
    {
        char *other = cosign(k2, "w2.example", text, 5);

        assert_int_equal(ig_buf_adds(&body, other), IG_OK);
        assert_int_equal(ig_buf_adds(&body, l1), IG_OK);
        free(other);
    }
    assert_int_equal(audit_cosig_pick(body.data, body.len, text, strlen(text),
                                      &w1, line, sizeof(line), &ts, &err),
                     IG_OK);
    assert_string_equal(line, l1);
    assert_int_equal(ts, 100);
    /* Garbage answers. */
    assert_int_equal(audit_cosig_pick("hello", 5, text, strlen(text), &w1, line,
                                      sizeof(line), &ts, &err),
                     IG_ERR_INVALID);
    assert_string_equal(line, "");
    assert_int_equal(audit_cosig_pick("hello\n", 6, text, strlen(text), &w1,
                                      line, sizeof(line), &ts, &err),
                     IG_ERR_INVALID);
    assert_int_equal(audit_cosig_pick("", 0, text, strlen(text), &w1, line,
                                      sizeof(line), &ts, &err),
                     IG_ERR_INVALID);
    assert_int_equal(audit_cosig_pick(l1, strlen(l1), text, strlen(text), &w2,
                                      line, sizeof(line), &ts, &err),
                     IG_ERR_NOTFOUND);
    ig_buf_release(&all);
    ig_buf_release(&body);
    free(note);
    free(l1);
    free(l1b);
    free(text);
    ig_signing_key_free(lk);
    ig_signing_key_free(k1);
    ig_signing_key_free(k2);
}

static void
test_request_refusals(void **state)
{
    static const char *const bad[] = {
        "",
        "old 1\n",
        "old 1\n\n",
        "old 01\n\nn\n",
        "old -1\n\nn\n",
        "old 18446744073709551616\n\nn\n",
        "old 1\r\n\nn\n",
        "Old 1\n\nn\n",
        " old 1\n\nn\n",
        "old  1\n\nn\n",
        "\nold 1\n\nn\n",
        "old 1\nAAAA\n\nn\n",
        "old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\nn\n",
        "old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\nn\n",
        "old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=\n\nn\n",
        "old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n\nn\n",
    };
    struct audit_witness_req *r = malloc(sizeof(*r));
    struct ig_buf b = BUF;
    unsigned char proof[64][32];
    struct ig_err err;
    size_t i;

    (void)state;
    assert_non_null(r);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (audit_witness_req_parse(bad[i], strlen(bad[i]), r, &err) !=
            IG_ERR_INVALID)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(r->old, 0);
        assert_null(r->note);
    }
    /* 63 proof lines are fine, 64 are not. */
    memset(proof, 7, sizeof(proof));
    assert_int_equal(audit_witness_req_format(5,
                                              (const unsigned char(*)[32])proof,
                                              63, "n\n", 2, &b),
                     IG_OK);
    assert_int_equal(audit_witness_req_parse(b.data, b.len, r, &err), IG_OK);
    assert_int_equal(r->nproof, 63);
    assert_int_equal(r->old, 5);
    assert_int_equal(r->note_len, 2);
    ig_buf_release(&b);
    assert_int_equal(audit_witness_req_format(5,
                                              (const unsigned char(*)[32])proof,
                                              64, "n\n", 2, &b),
                     IG_ERR_INVALID);
    assert_int_equal(b.len, 0);
    {
        /* A 64th line written by hand. */
        struct ig_buf h = BUF;

        assert_int_equal(ig_buf_adds(&h, "old 5\n"), IG_OK);
        for (i = 0; i < 64; i++)
            assert_int_equal(
                ig_buf_adds(&h,
                            "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"),
                IG_OK);
        assert_int_equal(ig_buf_adds(&h, "\nn\n"), IG_OK);
        assert_int_equal(audit_witness_req_parse(h.data, h.len, r, &err),
                         IG_ERR_INVALID);
        ig_buf_release(&h);
    }
    free(r);
}

static void
test_size_body(void **state)
{
    char out[32];
    uint64_t n;

    (void)state;
    audit_witness_size_format(3, out, sizeof(out));
    assert_string_equal(out, "3\n");
    assert_int_equal(audit_witness_size_parse("3\n", 2, &n), IG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(audit_witness_size_parse("0\n", 2, &n), IG_OK);
    assert_int_equal(n, 0);
    assert_int_equal(audit_witness_size_parse("18446744073709551615\n", 21, &n),
                     IG_OK);
    assert_int_equal(n, UINT64_MAX);
    assert_int_equal(audit_witness_size_parse("3", 1, &n), IG_ERR_INVALID);
    assert_int_equal(audit_witness_size_parse("03\n", 3, &n), IG_ERR_INVALID);
    assert_int_equal(audit_witness_size_parse("3\n\n", 3, &n), IG_ERR_INVALID);
    assert_int_equal(audit_witness_size_parse("\n", 1, &n), IG_ERR_INVALID);
    assert_int_equal(audit_witness_size_parse("18446744073709551616\n", 21, &n),
                     IG_ERR_INVALID);
    assert_int_equal(n, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c2sp_example),
        cmocka_unit_test(test_c2sp_request),
        cmocka_unit_test(test_vkeys),
        cmocka_unit_test(test_formats_timestamp),
        cmocka_unit_test(test_sign_verify),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_find_and_pick),
        cmocka_unit_test(test_request_refusals),
        cmocka_unit_test(test_size_body),
    };

    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
