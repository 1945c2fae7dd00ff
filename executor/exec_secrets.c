/*
 * exec_secrets.c - the executor's named credentials, sealed at rest with
 * crypto_secretbox (see exec_secrets.h for the file format).
 *
 * In memory a set is the path, the key (read-only sodium_malloc'd memory)
 * and an array of entries, each a name and its sealed bytes exactly as in
 * the file: nonce || MAC || ciphertext. Plaintext exists only inside
 * exec_secrets_get (and exec_secrets_set while sealing), in sodium_malloc'd
 * buffers that are wiped.
 *
 * What is sealed is name || NUL || value, and opening checks the name, so
 * an entry's line cannot be moved to another name (swapping the
 * credentials of two actions) without failing at open. Every entry is
 * opened once at exec_secrets_open, so a wrong key or an edited file is
 * refused at start-up, naming its line, rather than on a request.
 *
 * exec_secrets_set seals the new value, rewrites the whole file through
 * exec_sfile_write (temporary file and rename), and only then changes the
 * in-memory set, so memory and disk agree when it fails.
 */
#include "exec_secrets.h"

#include <stdlib.h>
#include <string.h>

#include "exec_secrets_int.h"
#include "ig_buf.h"
#include "ig_secmem.h"

#define BOX_OVERHEAD (crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES)

struct entry {
    char name[EXEC_SECRET_NAME_MAX + 1];
    unsigned char *box; /* malloc'd: nonce || MAC || ciphertext */
    size_t box_len;
};

struct exec_secrets {
    char *path;         /* malloc'd copy */
    unsigned char *key; /* EXEC_SECRETS_KEY_BYTES, sodium_malloc'd, r/o */
    struct entry *e;
    size_t n, cap;
};

/* ---- names and boxes ---- */

static int
name_char(char c, int first)
{
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
        return 1;
    return !first && (c == '.' || c == '_' || c == '-');
}

static int
name_valid_n(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || n > EXEC_SECRET_NAME_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (!name_char(s[i], i == 0))
            return 0;
    return 1;
}

int
exec_secret_name_valid(const char *name)
{
    return name != NULL &&
           name_valid_n(name, strnlen(name, EXEC_SECRET_NAME_MAX + 1));
}

/* Seal name || NUL || value into a new malloc'd box. */
static enum ig_status
seal(const unsigned char *key, const char *name, const unsigned char *value,
     size_t len, unsigned char **box, size_t *box_len)
{
    size_t nlen = strlen(name), plen = nlen + 1 + len;
    unsigned char *plain;

    *box = NULL;
    plain = sodium_malloc(plen);
    if (plain == NULL)
        return IG_ERR_NOMEM;
    *box = malloc(BOX_OVERHEAD + plen);
    if (*box == NULL) {
        sodium_free(plain);
        return IG_ERR_NOMEM;
    }
    memcpy(plain, name, nlen + 1);
    memcpy(plain + nlen + 1, value, len);
    randombytes_buf(*box, crypto_secretbox_NONCEBYTES);
    (void)crypto_secretbox_easy(*box + crypto_secretbox_NONCEBYTES, plain, plen,
                                *box, key);
    sodium_free(plain); /* wipes */
    *box_len = BOX_OVERHEAD + plen;
    return IG_OK;
}

/*
 * Open an entry's box: on IG_OK *value is a sodium_malloc'd buffer holding
 * the value (*len bytes, NUL-terminated) for the caller to
 * exec_secret_free. IG_ERR_CRYPTO when the box does not open under key or
 * was sealed for another name; IG_ERR_NOMEM.
 */
static enum ig_status
unseal(const unsigned char *key, const struct entry *en, unsigned char **value,
       size_t *len)
{
    size_t nlen = strlen(en->name), plen;
    unsigned char *p;

    *value = NULL;
    *len = 0;
    if (en->box_len < BOX_OVERHEAD + nlen + 2)
        return IG_ERR_CRYPTO;
    plen = en->box_len - BOX_OVERHEAD;
    p = ig_secmem_get(plen + 1);
    if (p == NULL)
        return IG_ERR_NOMEM;
    if (crypto_secretbox_open_easy(p, en->box + crypto_secretbox_NONCEBYTES,
                                   plen + crypto_secretbox_MACBYTES, en->box,
                                   key) != 0 ||
        memcmp(p, en->name, nlen) != 0 || p[nlen] != '\0') {
        ig_secmem_put(p);
        return IG_ERR_CRYPTO;
    }
    /* Move the value to the front and wipe what it leaves behind. */
    memmove(p, p + nlen + 1, plen - nlen - 1);
    *len = plen - nlen - 1;
    sodium_memzero(p + *len, plen + 1 - *len);
    *value = p;
    return IG_OK;
}

void
exec_secret_free(unsigned char *value, size_t len)
{
    if (value == NULL)
        return;
    sodium_memzero(value, len);
    ig_secmem_put(value); /* wipes the whole block too */
}

static struct entry *
find(const struct exec_secrets *s, const char *name, size_t nlen)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strlen(s->e[i].name) == nlen &&
            memcmp(s->e[i].name, name, nlen) == 0)
            return &s->e[i];
    return NULL;
}

/* Room for one more entry; IG_ERR_LIMIT at EXEC_SECRETS_MAX. */
static enum ig_status
reserve(struct exec_secrets *s)
{
    struct entry *p;
    size_t cap;

    if (s->n < s->cap)
        return IG_OK;
    if (s->n >= EXEC_SECRETS_MAX)
        return IG_ERR_LIMIT;
    cap = s->cap ? s->cap * 2 : 8;
    if (cap > EXEC_SECRETS_MAX)
        cap = EXEC_SECRETS_MAX;
    p = realloc(s->e, cap * sizeof(*p));
    if (p == NULL)
        return IG_ERR_NOMEM;
    s->e = p;
    s->cap = cap;
    return IG_OK;
}

/* ---- parsing ---- */

/*
 * Parse one entry line (n bytes, no newline) into a new entry at s->e[s->n]
 * and check that it opens. lineno names the line in errors.
 */
static enum ig_status
parse_entry(struct exec_secrets *s, const char *line, size_t n, size_t lineno,
            struct ig_err *err)
{
    const char *sp = memchr(line, ' ', n);
    size_t nlen = sp ? (size_t)(sp - line) : 0, blen;
    struct entry *en;
    unsigned char *v;
    enum ig_status st;

    if (sp == NULL || !name_valid_n(line, nlen))
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s line %zu: want NAME (^[a-z0-9][a-z0-9._-]"
                          "{0,63}$), a space and the sealed value",
                          s->path, lineno);
    if (find(s, line, nlen) != NULL)
        return ig_err_set(err, IG_ERR_INVALID, "%s line %zu: %.*s repeated",
                          s->path, lineno, (int)nlen, line);
    st = reserve(s);
    if (st != IG_OK)
        return ig_err_set(err, st, "%s line %zu: over %d secrets", s->path,
                          lineno, EXEC_SECRETS_MAX);
    en = &s->e[s->n];
    memcpy(en->name, line, nlen);
    en->name[nlen] = '\0';
    blen = n - nlen - 1;
    en->box = malloc(EXEC_SEALED_MAX);
    if (en->box == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (ig_b64_decode(sp + 1, blen, en->box, EXEC_SEALED_MAX, &en->box_len) !=
        IG_OK) {
        free(en->box);
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s line %zu: %s: not valid base64url", s->path,
                          lineno, en->name);
    }
    v = realloc(en->box, en->box_len > 0 ? en->box_len : 1);
    if (v != NULL)
        en->box = v; /* shrunk to fit; keeping the large one is harmless */
    s->n++;          /* owned by s from here */
    st = unseal(s->key, en, &v, &blen);
    exec_secret_free(v, blen);
    if (st == IG_ERR_CRYPTO)
        return ig_err_set(err, st,
                          "%s line %zu: %s does not decrypt (wrong key or "
                          "tampered file)",
                          s->path, lineno, en->name);
    if (st != IG_OK)
        return ig_err_set(err, st, "out of memory");
    return IG_OK;
}

static enum ig_status
parse(struct exec_secrets *s, const char *text, size_t len, struct ig_err *err)
{
    const size_t hlen = sizeof(EXEC_SECRETS_HEADER) - 1;
    const char *p = text, *end = text + len, *nl;
    size_t lineno = 1, n;
    enum ig_status st;

    nl = memchr(p, '\n', len);
    n = nl ? (size_t)(nl - p) : len;
    if (n != hlen || memcmp(p, EXEC_SECRETS_HEADER, hlen) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s line 1: not a secrets file (want \"%s\")",
                          s->path, EXEC_SECRETS_HEADER);
    p = nl ? nl + 1 : end;
    while (p < end) {
        lineno++;
        nl = memchr(p, '\n', (size_t)(end - p));
        n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n + 1 > EXEC_SECRETS_LINE_MAX)
            return ig_err_set(err, IG_ERR_LIMIT, "%s line %zu: over %zu bytes",
                              s->path, lineno, (size_t)EXEC_SECRETS_LINE_MAX);
        st = parse_entry(s, p, n, lineno, err);
        if (st != IG_OK)
            return st;
        p = nl ? nl + 1 : end;
    }
    return IG_OK;
}

/* ---- the set ---- */

void
exec_secrets_free(struct exec_secrets *s)
{
    size_t i;

    if (s == NULL)
        return;
    for (i = 0; i < s->n; i++)
        free(s->e[i].box);
    free(s->e);
    free(s->path);
    sodium_free(s->key); /* wipes, even when read-only */
    free(s);
}

enum ig_status
exec_secrets_open(const char *path, const char *key_path,
                  struct exec_secrets **out, struct ig_err *err)
{
    struct exec_secrets *s;
    enum ig_status st;
    char *text = NULL;
    size_t len = 0;

    *out = NULL;
    s = calloc(1, sizeof(*s));
    if (s == NULL || (s->path = strdup(path)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = exec_sfile_load_key(key_path, &s->key, err);
    if (st == IG_OK)
        st = exec_sfile_read(path, &text, &len, err);
    if (st == IG_OK && text != NULL)
        st = parse(s, text, len, err);
    if (st == IG_OK) {
        *out = s;
        s = NULL;
    }
out:
    free(text);
    exec_secrets_free(s);
    return st;
}

/* The file's text for the set as it is now. */
static enum ig_status
serialize(const struct exec_secrets *s, struct ig_buf *b)
{
    const size_t cap = IG_B64_ENCODED_LEN(EXEC_SEALED_MAX) + 1;
    enum ig_status st;
    char *enc;
    size_t i, n;

    enc = malloc(cap);
    if (enc == NULL)
        return IG_ERR_NOMEM;
    st = ig_buf_adds(b, EXEC_SECRETS_HEADER "\n");
    for (i = 0; st == IG_OK && i < s->n; i++) {
        n = ig_b64_encode(s->e[i].box, s->e[i].box_len, enc, cap);
        st = ig_buf_adds(b, s->e[i].name);
        if (st == IG_OK)
            st = ig_buf_addc(b, ' ');
        if (st == IG_OK)
            st = ig_buf_add(b, enc, n);
        if (st == IG_OK)
            st = ig_buf_addc(b, '\n');
    }
    free(enc);
    return st;
}

static enum ig_status
save(const struct exec_secrets *s, struct ig_err *err)
{
    struct ig_buf b;
    enum ig_status st;

    ig_buf_init(&b, EXEC_SECRETS_FILE_MAX);
    st = serialize(s, &b);
    if (st != IG_OK)
        st = ig_err_set(err, st, "cannot build %s: %s", s->path,
                        ig_strerror(st));
    else
        st = exec_sfile_write(s->path, b.data, b.len, err);
    ig_buf_release(&b);
    return st;
}

enum ig_status
exec_secrets_set(struct exec_secrets *s, const char *name,
                 const unsigned char *value, size_t len, struct ig_err *err)
{
    unsigned char *box, *old;
    struct entry *en;
    size_t box_len, old_len;
    enum ig_status st;

    if (!exec_secret_name_valid(name))
        return ig_err_set(err, IG_ERR_INVALID,
                          "secret name must match ^[a-z0-9][a-z0-9._-]{0,63}$");
    if (len == 0 || value == NULL)
        return ig_err_set(err, IG_ERR_INVALID, "%s: empty value refused", name);
    if (len > EXEC_SECRET_MAX_BYTES)
        return ig_err_set(err, IG_ERR_LIMIT, "%s: value over %d bytes", name,
                          EXEC_SECRET_MAX_BYTES);
    en = find(s, name, strlen(name));
    if (en == NULL && reserve(s) != IG_OK)
        return ig_err_set(err, IG_ERR_LIMIT, "over %d secrets",
                          EXEC_SECRETS_MAX);
    if (seal(s->key, name, value, len, &box, &box_len) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    if (en == NULL) {
        en = &s->e[s->n++];
        memcpy(en->name, name, strlen(name) + 1);
        old = NULL;
        old_len = 0;
    } else {
        old = en->box;
        old_len = en->box_len;
    }
    en->box = box;
    en->box_len = box_len;
    st = save(s, err);
    if (st != IG_OK) {
        /* Undo: memory stays as the file still is. */
        free(box);
        en->box = old;
        en->box_len = old_len;
        if (old == NULL)
            s->n--;
        return st;
    }
    free(old);
    return IG_OK;
}

enum ig_status
exec_secrets_get(const struct exec_secrets *s, const char *name,
                 unsigned char **value, size_t *len, struct ig_err *err)
{
    const struct entry *en;
    enum ig_status st;

    *value = NULL;
    *len = 0;
    if (!exec_secret_name_valid(name))
        return ig_err_set(err, IG_ERR_INVALID, "invalid secret name");
    en = find(s, name, strlen(name));
    if (en == NULL)
        return ig_err_set(err, IG_ERR_NOTFOUND, "no secret named %s", name);
    st = unseal(s->key, en, value, len);
    if (st == IG_ERR_CRYPTO)
        return ig_err_set(err, st, "%s does not decrypt", name);
    if (st != IG_OK)
        return ig_err_set(err, st, "out of memory");
    return IG_OK;
}

size_t
exec_secrets_count(const struct exec_secrets *s)
{
    return s->n;
}

const char *
exec_secrets_name(const struct exec_secrets *s, size_t i)
{
    return i < s->n ? s->e[i].name : NULL;
}
