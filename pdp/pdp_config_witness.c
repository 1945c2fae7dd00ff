/*
 * pdp_config_witness.c - the [witness ID] sections: the witnesses that
 * cosign the audit log's checkpoints (c2sp.org/tlog-witness).
 *
 *   [witness w1]
 *   url = https://w1.example/witness  submission prefix (http or https):
 *                                     POST <url>/add-checkpoint
 *   key = w1.example+1234abcd+BA...   the witness's vkey (type 04), or the
 *                                     path of a file holding it
 *   timeout_ms = 10000                whole request (default 10000)
 *   retry_ms = 30000                  between attempts while the witness
 *                                     fails (default 30000)
 *
 * url and key are required. key is first read as a vkey; when it is not
 * one it names a file (relative to the config's directory) that must hold
 * one: a public key, read here at load like the rest of the file. Key
 * names must be distinct (a cosignature is stored under its witness's key
 * name) and there are at most IG_WITNESS_MAX witnesses. Witnesses cosign
 * signed checkpoints: a [witness] without an [audit] key is an error.
 */
#include "pdp_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_file.h"
#include "ig_limits.h"

/* The longest prefix: room for "/add-checkpoint" in IG_WITNESS_URL_MAX. */
#define URL_PREFIX_MAX (IG_WITNESS_URL_MAX - sizeof("/add-checkpoint"))

int
pdp_cfg_witness_begin(struct pdp_cfg_parse *p, const char *kind, const char *id)
{
    struct pdp_config *c = p->c;
    struct pdp_witness_cfg *arr;
    size_t i;

    (void)kind;
    if (c->nwitnesses >= IG_WITNESS_MAX)
        return pdp_cfg_error(p, "more than %d witnesses", IG_WITNESS_MAX);
    for (i = 0; i < c->nwitnesses; i++)
        if (strcmp(c->witnesses[i].id, id) == 0)
            return pdp_cfg_error(p, "[witness %s] appears twice", id);
    arr = realloc(c->witnesses, (c->nwitnesses + 1) * sizeof(*arr));
    if (arr == NULL)
        return pdp_cfg_error(p, "out of memory");
    c->witnesses = arr;
    p->cur_wit = &arr[c->nwitnesses++];
    memset(p->cur_wit, 0, sizeof(*p->cur_wit));
    p->cur_wit->timeout_ms = IG_WITNESS_TIMEOUT_MS_DEFAULT;
    p->cur_wit->retry_ms = IG_WITNESS_RETRY_MS_DEFAULT;
    return pdp_cfg_string(p, "id", id, &p->cur_wit->id);
}

/* http:// or https://, a host without user info (it would be logged),
   then printable ASCII without spaces, a query or a fragment (the path
   gets "/add-checkpoint" appended). */
static int
url_valid(const char *v)
{
    size_t i, n = strlen(v), skip, host_end;

    if (strncmp(v, "https://", 8) == 0)
        skip = 8;
    else if (strncmp(v, "http://", 7) == 0)
        skip = 7;
    else
        return 0;
    if (n <= skip || n > URL_PREFIX_MAX || v[skip] == '/')
        return 0;
    host_end = skip + strcspn(v + skip, "/");
    if (memchr(v + skip, '@', host_end - skip) != NULL)
        return 0;
    for (i = skip; i < n; i++)
        if ((unsigned char)v[i] <= ' ' || (unsigned char)v[i] >= 0x7f ||
            strchr("?#\\\"<>`{}|^", v[i]) != NULL)
            return 0;
    return 1;
}

static int
set_url(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    struct pdp_witness_cfg *w = p->cur_wit;
    size_t n;

    if (!url_valid(v))
        return pdp_cfg_error(p,
                             "url must be http:// or https:// and a host, "
                             "without user info, spaces, query or fragment, "
                             "at most %d bytes (the witness's submission "
                             "prefix)",
                             (int)URL_PREFIX_MAX);
    if (pdp_cfg_string(p, k->name, v, &w->url) != 0)
        return -1;
    n = strlen(w->url);
    while (n > 0 && w->url[n - 1] == '/')
        w->url[--n] = '\0'; /* <url>/add-checkpoint, not <url>//... */
    return 0;
}

/* The vkey in the file v names (relative to the config's directory)
   into w; verr says why v itself is not a vkey, for when it is no file
   either. */
static int
key_from_file(struct pdp_cfg_parse *p, const char *v, const char *verr,
              struct pdp_witness_cfg *w)
{
    struct ig_err ferr, kerr;
    char *path = strdup(v), *text = NULL;
    enum ig_status st;
    size_t len = 0;
    int rc = 0;

    if (path == NULL)
        return pdp_cfg_error(p, "out of memory");
    if (pdp_cfg_resolve(p, &path) != 0) {
        free(path);
        return -1;
    }
    st = ig_file_read(path, IG_WITNESS_VKEY_FILE_MAX, &text, &len, &ferr);
    if (st == IG_ERR_NOTFOUND)
        rc = pdp_cfg_error(p,
                           "key must be a witness vkey (name+keyid+base64, "
                           "type 04: %s) or a file holding one (%s: no such "
                           "file)",
                           verr, path);
    else if (st != IG_OK)
        rc = pdp_cfg_error(p, "key: %s", ferr.msg);
    else if (strlen(text) != len)
        rc = pdp_cfg_error(p, "key: %s holds a NUL byte", path);
    else if (audit_witness_key_parse(text, len, &w->key, &kerr) != IG_OK)
        rc = pdp_cfg_error(p, "key: %s does not hold a witness vkey: %s", path,
                           kerr.msg);
    free(text);
    free(path);
    return rc;
}

static int
set_key(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    struct pdp_witness_cfg *w = p->cur_wit;
    struct ig_err kerr;

    (void)k;
    if (audit_witness_key_parse(v, strlen(v), &w->key, &kerr) != IG_OK &&
        key_from_file(p, v, kerr.msg, w) != 0)
        return -1;
    if (audit_witness_key_format(w->key.name, w->key.pk, w->vkey,
                                 sizeof(w->vkey)) != IG_OK)
        return pdp_cfg_error(p, "key: cannot format the witness vkey");
    return 0;
}

static int
set_timeout(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    return pdp_cfg_int(p, k->name, v, IG_WITNESS_TIMEOUT_MS_MIN,
                       IG_WITNESS_TIMEOUT_MS_MAX, &p->cur_wit->timeout_ms);
}

static int
set_retry(struct pdp_cfg_parse *p, const struct pdp_cfg_key *k, const char *v)
{
    return pdp_cfg_int(p, k->name, v, IG_WITNESS_RETRY_MS_MIN,
                       IG_WITNESS_RETRY_MS_MAX, &p->cur_wit->retry_ms);
}

static const struct pdp_cfg_key witness_keys[] = {
    PDP_CFG_KEY("url", set_url),
    PDP_CFG_KEY("key", set_key),
    PDP_CFG_KEY("timeout_ms", set_timeout),
    PDP_CFG_KEY("retry_ms", set_retry),
};

int
pdp_cfg_witness_set(struct pdp_cfg_parse *p, const char *key, const char *v)
{
    return pdp_cfg_dispatch(p, witness_keys, PDP_CFG_NKEYS(witness_keys),
                            &p->seen_sec, key, v);
}

int
pdp_cfg_witness_end(struct pdp_cfg_parse *p)
{
    struct pdp_witness_cfg *w = p->cur_wit;
    const struct pdp_config *c = p->c;
    size_t i;

    p->cur_wit = NULL;
    if (w->url == NULL)
        return pdp_cfg_error(p, "witness %s needs url", w->id);
    if (w->vkey[0] == '\0')
        return pdp_cfg_error(p, "witness %s needs key (its vkey)", w->id);
    for (i = 0; &c->witnesses[i] != w; i++)
        if (strcmp(c->witnesses[i].key.name, w->key.name) == 0)
            return pdp_cfg_error(p,
                                 "witnesses %s and %s have the same key "
                                 "name %s (cosignatures are kept by key "
                                 "name)",
                                 c->witnesses[i].id, w->id, w->key.name);
    return 0;
}

int
pdp_cfg_witness_finish(struct pdp_cfg_parse *p)
{
    const struct pdp_config *c = p->c;

    if (c->nwitnesses > 0 && c->audit_key == NULL)
        return pdp_cfg_error(p,
                             "[witness %s] needs [audit] key: witnesses "
                             "cosign the checkpoints that key signs",
                             c->witnesses[0].id);
    return 0;
}

void
pdp_cfg_witness_free(struct pdp_config *c)
{
    size_t i;

    for (i = 0; i < c->nwitnesses; i++) {
        free(c->witnesses[i].id);
        free(c->witnesses[i].url);
    }
    free(c->witnesses);
    c->witnesses = NULL;
    c->nwitnesses = 0;
}
