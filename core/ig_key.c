/*
 * ig_key.c - Ed25519 grant keys, their PASERK strings, key files and the
 * keyring of public keys by kid.
 *
 * A signing key is a small malloc'd struct pointing at a 64-byte
 * sodium_malloc'd buffer (seed || public key, libsodium's layout) that is
 * made read-only once set and wiped by sodium_free. Its public half and
 * kid are computed once, when the key is made. A kid is the PASERK k4.pid:
 * "k4.pid." + base64url(BLAKE2b-264("k4.pid." || "k4.public.<b64 pk>")).
 *
 * Key files hold one PASERK string and at most one trailing newline. A
 * secret file is refused unless only its owner may read it; its contents
 * are read into sodium_malloc'd memory and wiped. Files are written
 * exclusively (O_EXCL) and fsync'ed, so an existing key is never replaced.
 *
 * The keyring is a small growable array searched linearly: a PDP has a
 * handful of keys at most (one current, a few being rotated out).
 */
#include "ig_key.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_b64.h"
#include "ig_file.h"
#include "ig_limits.h"

#define PFX_SECRET "k4.secret."
#define PFX_PUBLIC "k4.public."
#define PFX_PID "k4.pid."
#define PFX_LEN(p) (sizeof(p) - 1)
#define PID_HASH_BYTES 33
/* Most keys one keyring holds; a limit like those in ig_limits.h. */
#define KEYRING_MAX_KEYS 64
#define PATH_BYTES IG_PATH_MAX

struct ig_signing_key {
    unsigned char *sk;        /* IG_SK_BYTES, sodium_malloc'd, read-only */
    struct ig_public_key pub; /* its public half and kid */
};

struct ig_keyring {
    struct ig_public_key *keys;
    size_t n, cap;
};

enum ig_status
ig_crypto_init(void)
{
    /* 0 on first success, 1 when already initialised, -1 on failure. */
    if (sodium_init() < 0)
        return IG_ERR_CRYPTO;
    return IG_OK;
}

/* ---- public keys ---- */

void
ig_public_key_to_paserk(const struct ig_public_key *k, char *out, size_t outcap)
{
    IG_ASSERT(outcap >= IG_PASERK_PUBLIC_STRLEN + 1);
    memcpy(out, PFX_PUBLIC, PFX_LEN(PFX_PUBLIC));
    (void)ig_b64_encode(k->pk, IG_PK_BYTES, out + PFX_LEN(PFX_PUBLIC),
                        outcap - PFX_LEN(PFX_PUBLIC));
}

void
ig_public_key_from_bytes(const unsigned char pk[IG_PK_BYTES],
                         struct ig_public_key *out)
{
    char paserk[IG_PASERK_PUBLIC_STRLEN + 1];
    unsigned char h[PID_HASH_BYTES];
    crypto_generichash_state st;

    memcpy(out->pk, pk, IG_PK_BYTES);
    ig_public_key_to_paserk(out, paserk, sizeof(paserk));
    (void)crypto_generichash_init(&st, NULL, 0, sizeof(h));
    (void)crypto_generichash_update(&st, (const unsigned char *)PFX_PID,
                                    PFX_LEN(PFX_PID));
    (void)crypto_generichash_update(&st, (const unsigned char *)paserk,
                                    IG_PASERK_PUBLIC_STRLEN);
    (void)crypto_generichash_final(&st, h, sizeof(h));
    memcpy(out->kid, PFX_PID, PFX_LEN(PFX_PID));
    (void)ig_b64_encode(h, sizeof(h), out->kid + PFX_LEN(PFX_PID),
                        sizeof(out->kid) - PFX_LEN(PFX_PID));
}

/*
 * Check that s is "<prefix><b64>" of exactly want characters and decode
 * the base64url part into out (exactly outlen bytes).
 */
static enum ig_status
paserk_decode(const char *s, size_t len, const char *prefix, size_t want,
              unsigned char *out, size_t outlen, struct ig_err *err)
{
    size_t plen = strlen(prefix), n;

    if (len < plen || memcmp(s, prefix, plen) != 0)
        return ig_err_set(err, IG_ERR_INVALID, "not a %.*s PASERK",
                          (int)(plen - 1), prefix);
    if (len != want)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%.*s PASERK has %zu characters, want %zu",
                          (int)(plen - 1), prefix, len, want);
    if (ig_b64_decode(s + plen, len - plen, out, outlen, &n) != IG_OK ||
        n != outlen)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%.*s PASERK is not valid base64url", (int)(plen - 1),
                          prefix);
    return IG_OK;
}

enum ig_status
ig_public_key_from_paserk(const char *s, size_t len, struct ig_public_key *out,
                          struct ig_err *err)
{
    unsigned char pk[IG_PK_BYTES];
    enum ig_status st;

    st = paserk_decode(s, len, PFX_PUBLIC, IG_PASERK_PUBLIC_STRLEN, pk,
                       sizeof(pk), err);
    if (st != IG_OK)
        return st;
    ig_public_key_from_bytes(pk, out);
    return IG_OK;
}

/* ---- signing keys ---- */

static struct ig_signing_key *
key_alloc(void)
{
    struct ig_signing_key *k = calloc(1, sizeof(*k));

    if (k == NULL)
        return NULL;
    k->sk = sodium_malloc(IG_SK_BYTES);
    if (k->sk == NULL) {
        free(k);
        return NULL;
    }
    return k;
}

/* Seal k->sk read-only and derive the public half from it. */
static void
key_seal(struct ig_signing_key *k)
{
    (void)sodium_mprotect_readonly(k->sk);
    ig_public_key_from_bytes(k->sk + crypto_sign_SEEDBYTES, &k->pub);
}

enum ig_status
ig_signing_key_generate(struct ig_signing_key **out)
{
    unsigned char pk[IG_PK_BYTES];
    struct ig_signing_key *k = key_alloc();

    *out = NULL;
    if (k == NULL)
        return IG_ERR_NOMEM;
    (void)crypto_sign_keypair(pk, k->sk);
    key_seal(k);
    *out = k;
    return IG_OK;
}

enum ig_status
ig_signing_key_from_paserk(const char *s, size_t len,
                           struct ig_signing_key **out, struct ig_err *err)
{
    unsigned char pk[IG_PK_BYTES], sk[IG_SK_BYTES];
    struct ig_signing_key *k;
    enum ig_status st;

    *out = NULL;
    k = key_alloc();
    if (k == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    st = paserk_decode(s, len, PFX_SECRET, IG_PASERK_SECRET_STRLEN, k->sk,
                       IG_SK_BYTES, err);
    if (st != IG_OK)
        goto out;
    /* The stored public half must be the one the seed derives. */
    (void)crypto_sign_seed_keypair(pk, sk, k->sk);
    sodium_memzero(sk, sizeof(sk));
    if (sodium_memcmp(pk, k->sk + crypto_sign_SEEDBYTES, IG_PK_BYTES) != 0) {
        st = ig_err_set(err, IG_ERR_CRYPTO,
                        "k4.secret PASERK: public half does not match the "
                        "secret seed");
        goto out;
    }
    key_seal(k);
    *out = k;
    k = NULL;
out:
    ig_signing_key_free(k);
    return st;
}

void
ig_signing_key_to_paserk(const struct ig_signing_key *k, char *out,
                         size_t outcap)
{
    IG_ASSERT(outcap >= IG_PASERK_SECRET_STRLEN + 1);
    memcpy(out, PFX_SECRET, PFX_LEN(PFX_SECRET));
    (void)ig_b64_encode(k->sk, IG_SK_BYTES, out + PFX_LEN(PFX_SECRET),
                        outcap - PFX_LEN(PFX_SECRET));
}

void
ig_signing_key_public(const struct ig_signing_key *k, struct ig_public_key *out)
{
    *out = k->pub;
}

void
ig_signing_key_sign(const struct ig_signing_key *k, unsigned char sig[64],
                    const unsigned char *msg, size_t len)
{
    (void)crypto_sign_detached(sig, NULL, msg, len, k->sk);
}

void
ig_signing_key_free(struct ig_signing_key *k)
{
    if (k == NULL)
        return;
    sodium_free(k->sk); /* wipes, even when read-only */
    free(k);
}

/* ---- key files ---- */

enum ig_status
ig_signing_key_load_file(const char *path, struct ig_signing_key **out,
                         struct ig_err *err)
{
    struct ig_err inner;
    enum ig_status st;
    size_t n = 0;
    char *buf;

    *out = NULL;
    st = ig_file_read_secret(path, IG_KEYFILE_MAX_BYTES, &buf, &n, err);
    if (st != IG_OK)
        return st;
    st = ig_signing_key_from_paserk(buf, n, out, &inner);
    if (st != IG_OK)
        (void)ig_err_set(err, st, "%s: %s", path, inner.msg);
    ig_file_free_secret(buf); /* wipes */
    return st;
}

enum ig_status
ig_public_key_load_file(const char *path, struct ig_public_key *out,
                        struct ig_err *err)
{
    struct ig_err inner;
    enum ig_status st;
    size_t n = 0;
    char *buf;

    st = ig_file_read(path, IG_KEYFILE_MAX_BYTES, &buf, &n, err);
    if (st == IG_ERR_NOTFOUND)
        st = IG_ERR_IO; /* a configured key that is missing: as unreadable */
    if (st != IG_OK)
        return st;
    if (n > 0 && buf[n - 1] == '\n')
        n--; /* one optional trailing newline */
    st = ig_public_key_from_paserk(buf, n, out, &inner);
    free(buf);
    if (st != IG_OK)
        return ig_err_set(err, st, "%s: %s", path, inner.msg);
    return IG_OK;
}

static enum ig_status
join_path(char out[PATH_BYTES], const char *dir, const char *name,
          struct ig_err *err)
{
    int n = snprintf(out, PATH_BYTES, "%s/%s", dir, name);

    if (n < 0 || n >= PATH_BYTES)
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", dir);
    return IG_OK;
}

enum ig_status
ig_key_write_dir(const struct ig_signing_key *k, const char *dir,
                 struct ig_err *err)
{
    char keypath[PATH_BYTES], pubpath[PATH_BYTES];
    char sec[IG_PASERK_SECRET_STRLEN + 2], pub[IG_PASERK_PUBLIC_STRLEN + 2];
    enum ig_status st;

    st = join_path(keypath, dir, "signing.key", err);
    if (st == IG_OK)
        st = join_path(pubpath, dir, "signing.pub", err);
    if (st != IG_OK)
        return st;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", dir,
                          strerror(errno));
    ig_signing_key_to_paserk(k, sec, sizeof(sec));
    sec[IG_PASERK_SECRET_STRLEN] = '\n';
    st = ig_file_write(keypath, sec, IG_PASERK_SECRET_STRLEN + 1, 0600, 1, err);
    sodium_memzero(sec, sizeof(sec));
    if (st != IG_OK)
        return st;
    ig_public_key_to_paserk(&k->pub, pub, sizeof(pub));
    pub[IG_PASERK_PUBLIC_STRLEN] = '\n';
    st = ig_file_write(pubpath, pub, IG_PASERK_PUBLIC_STRLEN + 1, 0644, 1, err);
    if (st == IG_OK) {
        st = ig_file_sync_dir(dir, err);
        if (st != IG_OK)
            (void)unlink(pubpath);
    }
    if (st != IG_OK)
        (void)unlink(keypath); /* both files are ours: made by this call */
    return st;
}

/* ---- keyring ---- */

enum ig_status
ig_keyring_new(struct ig_keyring **out)
{
    *out = calloc(1, sizeof(**out));
    return *out == NULL ? IG_ERR_NOMEM : IG_OK;
}

void
ig_keyring_free(struct ig_keyring *kr)
{
    if (kr == NULL)
        return;
    free(kr->keys);
    free(kr);
}

enum ig_status
ig_keyring_add(struct ig_keyring *kr, const struct ig_public_key *k)
{
    struct ig_public_key *p;
    size_t cap;

    if (ig_keyring_find(kr, k->kid, strlen(k->kid)) != NULL)
        return IG_ERR_INVALID;
    if (kr->n == kr->cap) {
        if (kr->cap >= KEYRING_MAX_KEYS)
            return IG_ERR_LIMIT;
        cap = kr->cap ? kr->cap * 2 : 4;
        p = realloc(kr->keys, cap * sizeof(*p));
        if (p == NULL)
            return IG_ERR_NOMEM;
        kr->keys = p;
        kr->cap = cap;
    }
    kr->keys[kr->n++] = *k;
    return IG_OK;
}

const struct ig_public_key *
ig_keyring_find(const struct ig_keyring *kr, const char *kid, size_t len)
{
    size_t i;

    if (len != IG_PASERK_PID_STRLEN)
        return NULL;
    for (i = 0; i < kr->n; i++)
        if (memcmp(kr->keys[i].kid, kid, len) == 0)
            return &kr->keys[i];
    return NULL;
}
