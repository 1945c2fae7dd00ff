/*
 * pdp_config.c - read and validate the PDP's INI-style configuration.
 *
 * One pass over the lines: a "[kind id]" line opens a section, "key =
 * value" lines set a field of the current section, "#" starts a comment.
 * Each key is looked up in a table for its section kind; unknown keys,
 * duplicate keys, bad values and incomplete sections are errors that name
 * the file and line. Defaults are set before the pass; paths are made
 * relative to the file's directory after it.
 */
#include "pdp_config.h"

#include <ctype.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_b64.h"
#include "ig_text.h"
#include "pdp_config_int.h"

static void
principal_release(struct pdp_principal *p)
{
    size_t i;

    free(p->id);
    free(p->tenant);
    for (i = 0; i < p->nactions; i++)
        free(p->actions[i]);
    free(p->actions);
}

void
pdp_config_free(struct pdp_config *c)
{
    size_t i;

    if (c == NULL)
        return;
    free(c->path);
    free(c->listen_host);
    free(c->database);
    free(c->signing_key);
    free(c->policy_dir);
    free(c->issuer);
    for (i = 0; i < c->npublic_keys; i++)
        free(c->public_keys[i]);
    free(c->public_keys);
    json_decref(c->policy_settings);
    for (i = 0; i < c->nprincipals; i++)
        principal_release(&c->principals[i]);
    free(c->principals);
    cfg_appr_free(c);
    cfg_audit_free(c);
    free(c->trusted_proxies);
    free(c);
}

/* "[kind id]" → a new section; returns 0 or -1 with err set. */
static int
open_section(struct cfg_parse *p, char *line)
{
    char *end = strchr(line, ']'), *kind, *id;

    if (end == NULL || ig_trim(end + 1)[0] != '\0')
        return cfg_error(p, "malformed section header (want [kind id])");
    *end = '\0';
    kind = ig_trim(line + 1);
    id = strchr(kind, ' ');
    if (id != NULL) {
        *id++ = '\0';
        id = ig_trim(id);
    }
    return cfg_section_begin(p, kind, id);
}

static int
parse_line(struct cfg_parse *p, char *raw)
{
    char *line, *eq, *key, *value;

    ig_strip_comment(raw);
    line = ig_trim(raw);
    if (line[0] == '\0')
        return 0;
    if (line[0] == '[')
        return open_section(p, line);
    eq = strchr(line, '=');
    if (eq == NULL)
        return cfg_error(p, "expected key = value");
    *eq = '\0';
    key = ig_trim(line);
    value = ig_trim(eq + 1);
    if (key[0] == '\0')
        return cfg_error(p, "missing key before '='");
    return cfg_set(p, key, value);
}

static int
read_lines(struct cfg_parse *p, FILE *f)
{
    char line[CFG_LINE_MAX + 2];

    while (fgets(line, sizeof(line), f) != NULL) {
        size_t n = strlen(line);
        p->line++;
        if (n > CFG_LINE_MAX && line[n - 1] != '\n')
            return cfg_error(p, "line longer than %d characters", CFG_LINE_MAX);
        if (parse_line(p, line) != 0)
            return -1;
    }
    if (ferror(f))
        return cfg_error(p, "read error: %s", strerror(errno));
    return cfg_section_end(p);
}

enum ig_status
pdp_config_load(const char *path, struct pdp_config **out, struct ig_err *err)
{
    struct cfg_parse p;
    struct pdp_config *c;
    FILE *f;
    int rc;

    *out = NULL;
    c = cfg_defaults(path);
    if (c == NULL)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    f = fopen(path, "r");
    if (f == NULL) {
        pdp_config_free(c);
        return ig_err_set(err, IG_ERR_IO, "cannot open config %s: %s", path,
                          strerror(errno));
    }
    memset(&p, 0, sizeof(p));
    p.c = c;
    p.err = err;
    p.path = path;
    rc = read_lines(&p, f);
    (void)fclose(f);
    if (rc == 0)
        rc = cfg_finish(&p);
    if (rc != 0) {
        pdp_config_free(c);
        return IG_ERR_INVALID;
    }
    *out = c;
    return IG_OK;
}

const struct pdp_principal *
pdp_config_authenticate(const struct pdp_config *c, const char *token,
                        size_t len)
{
    unsigned char h[32];
    const struct pdp_principal *found = NULL;
    size_t i;

    if (token == NULL || len == 0)
        return NULL;
    crypto_hash_sha256(h, (const unsigned char *)token, len);
    /* Compare with every entry, constant time each, no early exit. */
    for (i = 0; i < c->nprincipals; i++)
        if (sodium_memcmp(h, c->principals[i].token_hash, sizeof(h)) == 0)
            found = &c->principals[i];
    return found;
}

const struct pdp_principal *
pdp_config_executor_for(const struct pdp_config *c, const char *action)
{
    const struct pdp_principal *best = NULL;
    size_t i, j, bestlen = 0, n;

    for (i = 0; i < c->nprincipals; i++) {
        const struct pdp_principal *p = &c->principals[i];
        if (p->role != PDP_ROLE_EXECUTOR)
            continue;
        for (j = 0; j < p->nactions; j++) {
            n = strlen(p->actions[j]);
            if (strncmp(action, p->actions[j], n) == 0 &&
                (best == NULL || n > bestlen)) {
                best = p;
                bestlen = n;
            }
        }
    }
    return best;
}

void
pdp_token_new(char out[48], char hex[65])
{
    unsigned char raw[32], h[32];
    size_t n;

    randombytes_buf(raw, sizeof(raw));
    memcpy(out, "igt_", 4);
    n = ig_b64_encode(raw, sizeof(raw), out + 4, 44);
    out[4 + n] = '\0';
    crypto_hash_sha256(h, (const unsigned char *)out, 4 + n);
    sodium_bin2hex(hex, 65, h, sizeof(h));
    sodium_memzero(raw, sizeof(raw));
}
