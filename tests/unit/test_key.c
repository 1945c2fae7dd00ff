/*
 * test_key.c - Ed25519 keys and PASERK: the k4.public, k4.pid and k4.secret
 * vectors (including their expect-fail cases), round trips, a secret whose
 * public half was swapped, key files (modes, newline, size cap, refusing to
 * overwrite) and the keyring.
 */
#include "testutil.h"

#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_b64.h"
#include "ig_key.h"

/* prefix || base64url(b) into out; returns the length. */
static size_t
mk_paserk(char *out, size_t cap, const char *prefix, const unsigned char *b,
          size_t n)
{
    size_t plen = strlen(prefix);

    assert_true(cap > plen);
    memcpy(out, prefix, plen);
    return plen + ig_b64_encode(b, n, out + plen, cap - plen);
}

static json_t *
load_vectors(const char *name)
{
    char path[512];
    json_error_t jerr;
    json_t *root;

    assert_true(snprintf(path, sizeof(path), "%s/paseto/%s", IG_VECTORS_DIR,
                         name) < (int)sizeof(path));
    root = json_load_file(path, 0, &jerr);
    if (root == NULL)
        fail_msg("%s: %s", path, jerr.text);
    return root;
}

static const char *
str_field(json_t *t, const char *key)
{
    return json_string_value(json_object_get(t, key));
}

static unsigned char *
hex_field(json_t *t, const char *key, size_t *len)
{
    const char *hex = str_field(t, key);

    assert_non_null(hex);
    return tu_hex_decode(hex, len);
}

static void
test_paserk_public_vectors(void **state)
{
    json_t *root = load_vectors("k4.public.json"), *t;
    char s[256];
    size_t i, klen, n;
    unsigned char *key;
    struct ig_public_key pk;
    (void)state;

    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        key = hex_field(t, "key", &klen);
        if (json_is_true(json_object_get(t, "expect-fail"))) {
            /* A k3 (P-384) key: refused as k3 and as a k4 of wrong size. */
            n = mk_paserk(s, sizeof(s), "k3.public.", key, klen);
            assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                             IG_ERR_INVALID);
            n = mk_paserk(s, sizeof(s), "k4.public.", key, klen);
            assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                             IG_ERR_INVALID);
        } else {
            assert_int_equal(klen, IG_PK_BYTES);
            ig_public_key_from_bytes(key, &pk);
            ig_public_key_to_paserk(&pk, s, sizeof(s));
            assert_string_equal(s, str_field(t, "paserk"));
            memset(&pk, 0, sizeof(pk));
            assert_int_equal(ig_public_key_from_paserk(s, strlen(s), &pk, NULL),
                             IG_OK);
            assert_memory_equal(pk.pk, key, IG_PK_BYTES);
        }
        free(key);
    }
    json_decref(root);
}

static void
test_paserk_pid_vectors(void **state)
{
    json_t *root = load_vectors("k4.pid.json"), *t;
    char s[256];
    size_t i, klen, n;
    unsigned char *key;
    struct ig_public_key pk;
    (void)state;

    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        key = hex_field(t, "key", &klen);
        if (json_is_true(json_object_get(t, "expect-fail"))) {
            /* Too short, or of another version: no key, hence no pid. */
            n = mk_paserk(s, sizeof(s), "k4.public.", key, klen);
            assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                             IG_ERR_INVALID);
            n = mk_paserk(s, sizeof(s), "k3.public.", key, klen);
            assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                             IG_ERR_INVALID);
        } else {
            ig_public_key_from_bytes(key, &pk);
            assert_string_equal(pk.kid, str_field(t, "paserk"));
            assert_int_equal(strlen(pk.kid), IG_PASERK_PID_STRLEN);
        }
        free(key);
    }
    json_decref(root);
}

static void
test_paserk_secret_vectors(void **state)
{
    json_t *root = load_vectors("k4.secret.json"), *t;
    struct ig_signing_key *k;
    struct ig_public_key pub;
    struct ig_err err;
    unsigned char *key, *pk;
    char s[512];
    size_t i, klen, pklen, n;
    (void)state;

    json_array_foreach(json_object_get(root, "tests"), i, t)
    {
        key = hex_field(t, "key", &klen);
        if (json_is_true(json_object_get(t, "expect-fail"))) {
            n = mk_paserk(s, sizeof(s), "k4.secret.", key, klen);
            assert_int_equal(ig_signing_key_from_paserk(s, n, &k, &err),
                             IG_ERR_INVALID);
            assert_null(k);
            n = mk_paserk(s, sizeof(s), "k3.secret.", key, klen);
            assert_int_equal(ig_signing_key_from_paserk(s, n, &k, &err),
                             IG_ERR_INVALID);
            assert_null(k);
        } else {
            const char *want = str_field(t, "paserk");
            assert_int_equal(
                ig_signing_key_from_paserk(want, strlen(want), &k, &err),
                IG_OK);
            ig_signing_key_to_paserk(k, s, sizeof(s));
            assert_string_equal(s, want);
            pk = hex_field(t, "public-key", &pklen);
            ig_signing_key_public(k, &pub);
            assert_memory_equal(pub.pk, pk, IG_PK_BYTES);
            free(pk);
            ig_signing_key_free(k);
        }
        free(key);
    }
    json_decref(root);
}

static void
test_generate_round_trip(void **state)
{
    struct ig_signing_key *a, *b;
    struct ig_public_key pa, pb, pp;
    unsigned char sa[64], sb[64];
    char sec[IG_PASERK_SECRET_STRLEN + 1], pub[IG_PASERK_PUBLIC_STRLEN + 1];
    static const unsigned char msg[] = "grant me";
    (void)state;

    assert_int_equal(ig_signing_key_generate(&a), IG_OK);
    ig_signing_key_to_paserk(a, sec, sizeof(sec));
    assert_int_equal(strlen(sec), IG_PASERK_SECRET_STRLEN);
    assert_int_equal(ig_signing_key_from_paserk(sec, strlen(sec), &b, NULL),
                     IG_OK);
    sodium_memzero(sec, sizeof(sec));
    ig_signing_key_public(a, &pa);
    ig_signing_key_public(b, &pb);
    assert_memory_equal(&pa, &pb, sizeof(pa));
    assert_int_equal(strncmp(pa.kid, "k4.pid.", 7), 0);
    ig_public_key_to_paserk(&pa, pub, sizeof(pub));
    assert_int_equal(ig_public_key_from_paserk(pub, strlen(pub), &pp, NULL),
                     IG_OK);
    assert_memory_equal(&pa, &pp, sizeof(pa));
    /* Ed25519 is deterministic: both copies sign alike, and it verifies. */
    ig_signing_key_sign(a, sa, msg, sizeof(msg));
    ig_signing_key_sign(b, sb, msg, sizeof(msg));
    assert_memory_equal(sa, sb, 64);
    assert_int_equal(crypto_sign_verify_detached(sa, msg, sizeof(msg), pa.pk),
                     0);
    ig_signing_key_free(a);
    ig_signing_key_free(b);
    ig_signing_key_free(NULL);
}

/* A k4.secret whose public half is not the seed's is refused. */
static void
test_mismatched_public_half(void **state)
{
    unsigned char sk[IG_SK_BYTES], pk[IG_PK_BYTES];
    unsigned char sk2[IG_SK_BYTES], pk2[IG_PK_BYTES];
    struct ig_signing_key *k = NULL;
    struct ig_err err;
    char s[IG_PASERK_SECRET_STRLEN + 1];
    size_t n;
    (void)state;

    (void)crypto_sign_keypair(pk, sk);
    sk[40] ^= 0x01;
    n = mk_paserk(s, sizeof(s), "k4.secret.", sk, sizeof(sk));
    assert_int_equal(ig_signing_key_from_paserk(s, n, &k, &err), IG_ERR_CRYPTO);
    assert_null(k);
    /* The message never carries the secret. */
    assert_null(strstr(err.msg, s + 10));
    assert_null(strstr(err.msg, "k4.secret.A"));
    /* A whole other public key in place of ours, too. */
    (void)crypto_sign_keypair(pk, sk);
    (void)crypto_sign_keypair(pk2, sk2);
    memcpy(sk + 32, pk2, sizeof(pk2));
    sodium_memzero(sk2, sizeof(sk2));
    n = mk_paserk(s, sizeof(s), "k4.secret.", sk, sizeof(sk));
    assert_int_equal(ig_signing_key_from_paserk(s, n, &k, &err), IG_ERR_CRYPTO);
    sodium_memzero(sk, sizeof(sk));
}

static void
test_paserk_malformed(void **state)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    struct ig_signing_key *k;
    struct ig_public_key pk;
    char s[IG_PASERK_SECRET_STRLEN + 8];
    unsigned char raw[IG_SK_BYTES];
    size_t n;
    (void)state;

    assert_int_equal(ig_public_key_from_paserk("", 0, &pk, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(ig_public_key_from_paserk("k4.public", 9, &pk, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(ig_signing_key_from_paserk("k4.secret.", 10, &k, NULL),
                     IG_ERR_INVALID);
    /* A public PASERK is not a secret one and vice versa. */
    randombytes_buf(raw, sizeof(raw));
    n = mk_paserk(s, sizeof(s), "k4.public.", raw, IG_PK_BYTES);
    assert_int_equal(ig_signing_key_from_paserk(s, n, &k, NULL),
                     IG_ERR_INVALID);
    assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL), IG_OK);
    /* Trailing newline or characters are refused by the string parsers. */
    s[n] = '\n';
    assert_int_equal(ig_public_key_from_paserk(s, n + 1, &pk, NULL),
                     IG_ERR_INVALID);
    /* Non-canonical last character (trailing bits set). */
    s[n - 1] = b64[(strchr(b64, s[n - 1]) - b64) | 1];
    assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                     IG_ERR_INVALID);
    n = mk_paserk(s, sizeof(s), "K4.public.", raw, IG_PK_BYTES);
    assert_int_equal(ig_public_key_from_paserk(s, n, &pk, NULL),
                     IG_ERR_INVALID);
}

/* ---- files ---- */

static void
path_in(char *out, size_t cap, const char *dir, const char *name)
{
    assert_true(snprintf(out, cap, "%s/%s", dir, name) < (int)cap);
}

static void
write_text(const char *path, const char *text, size_t len, mode_t mode)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void
cleanup_dir(const char *dir)
{
    static const char *const names[] = {"signing.key", "signing.pub",
                                        "other.key", "big.key", "fifo.key"};
    char p[512];
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        path_in(p, sizeof(p), dir, names[i]);
        (void)unlink(p);
    }
    assert_int_equal(rmdir(dir), 0);
}

static void
test_write_dir_and_load(void **state)
{
    char tmpl[] = "/tmp/ig_test_key_XXXXXX", dir[512], keyp[512], pubp[512];
    struct ig_signing_key *k, *l;
    struct ig_public_key pk, pl;
    struct ig_err err;
    struct stat sb;
    (void)state;

    assert_non_null(mkdtemp(tmpl));
    path_in(dir, sizeof(dir), tmpl, "keys");
    path_in(keyp, sizeof(keyp), dir, "signing.key");
    path_in(pubp, sizeof(pubp), dir, "signing.pub");
    assert_int_equal(ig_signing_key_generate(&k), IG_OK);
    assert_int_equal(ig_key_write_dir(k, dir, &err), IG_OK);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    assert_int_equal(stat(keyp, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(stat(pubp, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    assert_int_equal(ig_signing_key_load_file(keyp, &l, &err), IG_OK);
    assert_int_equal(ig_public_key_load_file(pubp, &pl, &err), IG_OK);
    ig_signing_key_public(k, &pk);
    assert_memory_equal(&pk, &pl, sizeof(pk));
    ig_signing_key_public(l, &pl);
    assert_memory_equal(&pk, &pl, sizeof(pk));
    ig_signing_key_free(l);
    ig_signing_key_free(k);
    cleanup_dir(dir);
    assert_int_equal(rmdir(tmpl), 0);
}

static void
test_write_dir_never_overwrites(void **state)
{
    char dir[] = "/tmp/ig_test_key_XXXXXX", keyp[512], *before, *after;
    struct ig_signing_key *a, *b;
    struct ig_err err;
    (void)state;

    assert_non_null(mkdtemp(dir));
    path_in(keyp, sizeof(keyp), dir, "signing.key");
    assert_int_equal(ig_signing_key_generate(&a), IG_OK);
    assert_int_equal(ig_signing_key_generate(&b), IG_OK);
    assert_int_equal(ig_key_write_dir(a, dir, &err), IG_OK);
    before = tu_read_file(keyp, NULL);
    assert_int_equal(ig_key_write_dir(b, dir, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "already exists"));
    assert_non_null(strstr(err.msg, keyp));
    after = tu_read_file(keyp, NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    ig_signing_key_free(a);
    ig_signing_key_free(b);
    cleanup_dir(dir);
}

static void
test_load_refuses_readable_secret(void **state)
{
    char dir[] = "/tmp/ig_test_key_XXXXXX", keyp[512];
    struct ig_signing_key *k, *l = NULL;
    struct ig_err err;
    (void)state;

    assert_non_null(mkdtemp(dir));
    path_in(keyp, sizeof(keyp), dir, "signing.key");
    assert_int_equal(ig_signing_key_generate(&k), IG_OK);
    assert_int_equal(ig_key_write_dir(k, dir, &err), IG_OK);
    assert_int_equal(chmod(keyp, 0644), 0);
    assert_int_equal(ig_signing_key_load_file(keyp, &l, &err), IG_ERR_IO);
    assert_null(l);
    assert_non_null(strstr(err.msg, keyp));
    assert_non_null(strstr(err.msg, "chmod 600"));
    assert_int_equal(chmod(keyp, 0640), 0);
    assert_int_equal(ig_signing_key_load_file(keyp, &l, &err), IG_ERR_IO);
    assert_int_equal(chmod(keyp, 0604), 0);
    assert_int_equal(ig_signing_key_load_file(keyp, &l, &err), IG_ERR_IO);
    assert_int_equal(chmod(keyp, 0400), 0);
    assert_int_equal(ig_signing_key_load_file(keyp, &l, &err), IG_OK);
    ig_signing_key_free(l);
    ig_signing_key_free(k);
    cleanup_dir(dir);
}

static void
test_load_file_contents(void **state)
{
    char dir[] = "/tmp/ig_test_key_XXXXXX", p[512], big[5000];
    char s[IG_PASERK_SECRET_STRLEN + 4];
    struct ig_signing_key *k, *l = NULL;
    struct ig_public_key pk;
    struct ig_err err;
    (void)state;

    assert_non_null(mkdtemp(dir));
    path_in(p, sizeof(p), dir, "other.key");
    assert_int_equal(ig_signing_key_generate(&k), IG_OK);
    ig_signing_key_to_paserk(k, s, sizeof(s));
    /* Without a newline, and with exactly one. */
    write_text(p, s, IG_PASERK_SECRET_STRLEN, 0600);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_OK);
    ig_signing_key_free(l);
    memcpy(s + IG_PASERK_SECRET_STRLEN, "\n\n", 3);
    write_text(p, s, IG_PASERK_SECRET_STRLEN + 1, 0600);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_OK);
    ig_signing_key_free(l);
    l = NULL;
    /* Two newlines, CRLF, a leading space: refused, naming the file. */
    write_text(p, s, IG_PASERK_SECRET_STRLEN + 2, 0600);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, p));
    memcpy(s + IG_PASERK_SECRET_STRLEN, "\r\n", 3);
    write_text(p, s, IG_PASERK_SECRET_STRLEN + 2, 0600);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_ERR_INVALID);
    assert_null(l);
    sodium_memzero(s, sizeof(s));
    /* Over the size cap. */
    memset(big, 'A', sizeof(big));
    path_in(p, sizeof(p), dir, "big.key");
    write_text(p, big, sizeof(big), 0600);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_ERR_LIMIT);
    assert_int_equal(ig_public_key_load_file(p, &pk, &err), IG_ERR_LIMIT);
    /* Missing file, and a directory. */
    path_in(p, sizeof(p), dir, "signing.key");
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, p));
    assert_int_equal(ig_signing_key_load_file(dir, &l, &err), IG_ERR_IO);
    /* A FIFO is refused at once instead of blocking the open. */
    path_in(p, sizeof(p), dir, "fifo.key");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(ig_signing_key_load_file(p, &l, &err), IG_ERR_IO);
    assert_non_null(strstr(err.msg, "not a regular file"));
    ig_signing_key_free(k);
    cleanup_dir(dir);
}

static void
test_keyring(void **state)
{
    struct ig_keyring *kr;
    struct ig_public_key a, b, c;
    unsigned char raw[IG_PK_BYTES];
    int i;
    (void)state;

    assert_int_equal(ig_keyring_new(&kr), IG_OK);
    randombytes_buf(raw, sizeof(raw));
    ig_public_key_from_bytes(raw, &a);
    raw[0] ^= 1;
    ig_public_key_from_bytes(raw, &b);
    raw[0] ^= 2;
    ig_public_key_from_bytes(raw, &c);
    assert_null(ig_keyring_find(kr, a.kid, strlen(a.kid)));
    assert_int_equal(ig_keyring_add(kr, &a), IG_OK);
    assert_int_equal(ig_keyring_add(kr, &b), IG_OK);
    assert_int_equal(ig_keyring_add(kr, &a), IG_ERR_INVALID);
    assert_memory_equal(ig_keyring_find(kr, a.kid, strlen(a.kid)), &a,
                        sizeof(a));
    assert_memory_equal(ig_keyring_find(kr, b.kid, strlen(b.kid)), &b,
                        sizeof(b));
    assert_null(ig_keyring_find(kr, c.kid, strlen(c.kid)));
    assert_null(ig_keyring_find(kr, a.kid, strlen(a.kid) - 1));
    assert_null(ig_keyring_find(kr, "", 0));
    /* Bounded: fill it up until it refuses. */
    for (i = 0; i < 1000; i++) {
        randombytes_buf(raw, sizeof(raw));
        ig_public_key_from_bytes(raw, &c);
        if (ig_keyring_add(kr, &c) != IG_OK)
            break;
    }
    assert_true(i < 1000);
    assert_int_equal(ig_keyring_add(kr, &c), IG_ERR_LIMIT);
    assert_non_null(ig_keyring_find(kr, b.kid, strlen(b.kid)));
    ig_keyring_free(kr);
    ig_keyring_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paserk_public_vectors),
        cmocka_unit_test(test_paserk_pid_vectors),
        cmocka_unit_test(test_paserk_secret_vectors),
        cmocka_unit_test(test_generate_round_trip),
        cmocka_unit_test(test_mismatched_public_half),
        cmocka_unit_test(test_paserk_malformed),
        cmocka_unit_test(test_write_dir_and_load),
        cmocka_unit_test(test_write_dir_never_overwrites),
        cmocka_unit_test(test_load_refuses_readable_secret),
        cmocka_unit_test(test_load_file_contents),
        cmocka_unit_test(test_keyring),
    };

    if (ig_crypto_init() != IG_OK)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
