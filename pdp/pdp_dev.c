/*
 * pdp_dev.c - dev mode's data directory: created once, then reused.
 * See pdp_dev.h. Files are created exclusively (nothing is overwritten
 * except dev.env, replaced atomically by rename) and fsync'ed.
 */
#include "pdp_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "appr_password.h"
#include "audit_note.h"
#include "ig_b64.h"
#include "ig_file.h"
#include "ig_key.h"
#include "ig_limits.h"
#include "pdp_config.h"

#define PATH_CAP (IG_DEV_PATH_MAX + 1)

static enum ig_status
join(char *out, const char *dir, const char *name, struct ig_err *err)
{
    int n = snprintf(out, PATH_CAP, "%s/%s", dir, name);

    if (n < 0 || n >= PATH_CAP)
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s/%s", dir,
                          name);
    return IG_OK;
}

static enum ig_status
write_file(const char *path, const void *data, size_t len, mode_t mode,
           int excl, struct ig_err *err)
{
    return ig_file_write(path, data, len, mode, excl, err);
}

enum ig_status
pdp_dev_write_policies(const char *dir, struct ig_err *err)
{
    const struct ig_embedded_file *f;
    char path[PATH_CAP];
    enum ig_status st;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", dir,
                          strerror(errno));
    for (f = pdp_example_policies; f->name != NULL; f++) {
        if ((st = join(path, dir, f->name, err)) != IG_OK)
            return st;
        if (access(path, F_OK) == 0)
            continue;
        if ((st = write_file(path, f->data, f->len, 0644, 1, err)) != IG_OK)
            return st;
    }
    return IG_OK;
}

struct dev_tokens {
    char agent[48], agent_hash[65];
    char executor[48], executor_hash[65];
    char admin[48], admin_hash[65];
    char auditor[48], auditor_hash[65];
    char audit_vkey[512]; /* the audit log's verifier key */
    char approver_pw[33], approver_hash[APPR_HASH_MAX];
    char slack_secret[65], slack_token[64];
};

/* The optional parts of the dev config: a shorter approval ttl from
   INTENTGATE_DEV_APPROVAL_TTL (top), and a [slack] section when
   INTENTGATE_SLACK_API_URL is set (a fake Slack for tests and demos). */
struct dev_extra {
    char top[64], policy[1100], slack[1024];
};

static enum ig_status
optional_config(const char *dir, const struct dev_tokens *t,
                struct dev_extra *x, struct ig_err *err)
{
    const char *api = getenv("INTENTGATE_SLACK_API_URL");
    const char *ttl = getenv("INTENTGATE_DEV_APPROVAL_TTL");
    const char *roots = getenv("INTENTGATE_DEV_PROJECT_ROOTS");
    char path[PATH_CAP];
    enum ig_status st;
    int n;

    x->top[0] = x->policy[0] = x->slack[0] = '\0';
    if (roots != NULL && roots[0] != '\0') {
        n = snprintf(x->policy, sizeof(x->policy), "project_roots = %s\n",
                     roots);
        if (n < 0 || (size_t)n >= sizeof(x->policy) ||
            strpbrk(roots, "\r\n#") != NULL)
            return ig_err_set(err, IG_ERR_INVALID,
                              "INTENTGATE_DEV_PROJECT_ROOTS: at most 1 KiB "
                              "on one line, without #");
    }
    if (ttl != NULL && ttl[0] != '\0') {
        n = snprintf(x->top, sizeof(x->top), "approval_ttl = %s\n", ttl);
        if (n < 0 || (size_t)n >= sizeof(x->top))
            return ig_err_set(err, IG_ERR_INVALID,
                              "INTENTGATE_DEV_APPROVAL_TTL too long");
    }
    if (api == NULL || api[0] == '\0')
        return IG_OK;
    if ((st = join(path, dir, "slack-bot-token", err)) != IG_OK ||
        (st = write_file(path, t->slack_token, strlen(t->slack_token), 0600, 1,
                         err)) != IG_OK ||
        (st = join(path, dir, "slack-signing-secret", err)) != IG_OK ||
        (st = write_file(path, t->slack_secret, strlen(t->slack_secret), 0600,
                         1, err)) != IG_OK)
        return st;
    n = snprintf(x->slack, sizeof(x->slack),
                 "\n[slack]\napi_url = %s\nchannel = CDEVAPPROVALS\n"
                 "bot_token_file = slack-bot-token\n"
                 "signing_secret_file = slack-signing-secret\n",
                 api);
    if (n < 0 || (size_t)n >= sizeof(x->slack))
        return ig_err_set(err, IG_ERR_INVALID,
                          "INTENTGATE_SLACK_API_URL too long");
    return IG_OK;
}

static enum ig_status
write_config(const char *dir, const char *listen, const struct dev_tokens *t,
             struct ig_err *err)
{
    char path[PATH_CAP], text[IG_DEV_CONFIG_MAX + 1];
    struct dev_extra x;
    int n;
    enum ig_status st;

    if ((st = optional_config(dir, t, &x, err)) != IG_OK)
        return st;
    n = snprintf(
        text, sizeof(text),
        "# intentgate PDP configuration written by `intentgate "
        "serve --dev`.\n"
        "# Tokens are in dev.env; this file holds only their "
        "SHA-256.\n"
        "listen = %s\n"
        "database = intentgate.db\n"
        "signing_key = keys/signing.key\n"
        "policy_dir = policies\n"
        "issuer = intentgate-dev\n"
        "intent_ttl = 60\n"
        "grant_ttl = 30\n"
        "%s"
        "\n[policy]\nquota_per_minute = 6000\n%s"
        "\n[agent " PDP_DEV_AGENT "]\ntenant = dev\n"
        "token_sha256 = %s\n"
        "\n[executor " PDP_DEV_EXECUTOR "]\n"
        "actions = payments., shell., http., git., db., file., mcp.\n"
        "token_sha256 = %s\n"
        "\n[admin " PDP_DEV_ADMIN "]\ntoken_sha256 = %s\n"
        "\n[auditor " PDP_DEV_AUDITOR "]\ntoken_sha256 = %s\n"
        "\n[approver " PDP_DEV_APPROVER "]\n"
        "name = Dev Approver\ngroups = finance, dba, security, auditors\n"
        "password_hash = %s\nslack_user = " PDP_DEV_SLACK_USER "\n"
        "\n[audit]\nname = " PDP_DEV_AUDIT_NAME "\n"
        "key = keys/audit.key\nhmac_key = keys/audit-hmac.key\n"
        "redact = /card_number\n"
        "%s",
        listen, x.top, x.policy, t->agent_hash, t->executor_hash, t->admin_hash,
        t->auditor_hash, t->approver_hash, x.slack);
    if (n < 0 || (size_t)n >= sizeof(text))
        return ig_err_set(err, IG_ERR_INVALID, "listen address too long");
    if ((st = join(path, dir, "intentgate.conf", err)) != IG_OK)
        return st;
    return write_file(path, text, (size_t)n, 0600, 1, err);
}

static enum ig_status
write_first_env(const char *dir, const struct dev_tokens *t, const char *pubkey,
                struct ig_err *err)
{
    char path[PATH_CAP], text[IG_DEV_ENV_MAX + 1];
    int n;
    enum ig_status st;

    n = snprintf(text, sizeof(text),
                 "INTENTGATE_URL=\n"
                 "INTENTGATE_AGENT_TOKEN=%s\n"
                 "INTENTGATE_TOKEN=%s\n"
                 "INTENTGATE_EXECUTOR_ID=" PDP_DEV_EXECUTOR "\n"
                 "INTENTGATE_EXECUTOR_TOKEN=%s\n"
                 "INTENTGATE_ADMIN_TOKEN=%s\n"
                 "INTENTGATE_APPROVER_ID=" PDP_DEV_APPROVER "\n"
                 "INTENTGATE_APPROVER_PASSWORD=%s\n"
                 "INTENTGATE_SLACK_SIGNING_SECRET=%s\n"
                 "INTENTGATE_AUDITOR_TOKEN=%s\n"
                 "INTENTGATE_AUDIT_KEY=%s\n"
                 /* Last: scripts wait for this line. */
                 "INTENTGATE_PUBLIC_KEY=%s\n",
                 t->agent, t->agent, t->executor, t->admin, t->approver_pw,
                 t->slack_secret, t->auditor, t->audit_vkey, pubkey);
    if (n < 0 || (size_t)n >= sizeof(text))
        return ig_err_set(err, IG_ERR_INVALID, "dev.env too long");
    if ((st = join(path, dir, "dev.env", err)) != IG_OK)
        return st;
    return write_file(path, text, (size_t)n, 0600, 1, err);
}

static void
random_hex(char *out, size_t bytes)
{
    unsigned char raw[32];

    randombytes_buf(raw, bytes);
    sodium_bin2hex(out, bytes * 2 + 1, raw, bytes);
    sodium_memzero(raw, sizeof(raw));
}

/* The dev approver's password and hash, the Slack secrets. */
static int
dev_secrets(struct dev_tokens *t)
{
    char hex[33];

    random_hex(t->approver_pw, 16);
    random_hex(t->slack_secret, 32);
    random_hex(hex, 16);
    (void)snprintf(t->slack_token, sizeof(t->slack_token), "xoxb-dev-%s", hex);
    return appr_password_hash(t->approver_pw, strlen(t->approver_pw),
                              t->approver_hash);
}

/* keys/audit.key (the checkpoint signing key, its verifier key into
   t->audit_vkey) and keys/audit-hmac.key (32 random bytes, base64url). */
static enum ig_status
audit_keys(const char *dir, struct dev_tokens *t, struct ig_err *err)
{
    struct ig_signing_key *key = NULL;
    struct ig_public_key pub;
    unsigned char raw[32];
    char path[PATH_CAP], text[IG_PASERK_SECRET_STRLEN + 2];
    enum ig_status st;
    size_t n;

    if (ig_signing_key_generate(&key) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot generate a key");
    ig_signing_key_to_paserk(key, text, sizeof(text));
    ig_signing_key_public(key, &pub);
    ig_signing_key_free(key);
    n = strlen(text);
    text[n++] = '\n';
    if ((st = join(path, dir, "keys/audit.key", err)) == IG_OK)
        st = write_file(path, text, n, 0600, 1, err);
    sodium_memzero(text, sizeof(text));
    if (st == IG_OK &&
        audit_verifier_format(PDP_DEV_AUDIT_NAME, pub.pk, t->audit_vkey,
                              sizeof(t->audit_vkey)) != IG_OK)
        st = ig_err_set(err, IG_ERR_INVALID, "cannot format the verifier key");
    if (st != IG_OK)
        return st;
    randombytes_buf(raw, sizeof(raw));
    n = ig_b64_encode(raw, sizeof(raw), text, sizeof(text) - 1);
    sodium_memzero(raw, sizeof(raw));
    text[n++] = '\n';
    if ((st = join(path, dir, "keys/audit-hmac.key", err)) == IG_OK)
        st = write_file(path, text, n, 0600, 1, err);
    sodium_memzero(text, sizeof(text));
    return st;
}

static enum ig_status
create_dir(const char *dir, const char *listen, struct ig_err *err)
{
    struct ig_signing_key *key = NULL;
    struct ig_public_key pub;
    struct dev_tokens t;
    char path[PATH_CAP], pubtext[IG_PASERK_PUBLIC_STRLEN + 1];
    enum ig_status st;

    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", dir,
                          strerror(errno));
    if ((st = join(path, dir, "keys", err)) != IG_OK)
        return st;
    if (ig_signing_key_generate(&key) != IG_OK)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot generate a key");
    st = ig_key_write_dir(key, path, err);
    ig_signing_key_public(key, &pub);
    ig_signing_key_free(key);
    if (st != IG_OK)
        return st;
    ig_public_key_to_paserk(&pub, pubtext, sizeof(pubtext));
    if ((st = join(path, dir, "policies", err)) != IG_OK ||
        (st = pdp_dev_write_policies(path, err)) != IG_OK)
        return st;
    if ((st = audit_keys(dir, &t, err)) != IG_OK)
        return st;
    pdp_token_new(t.agent, t.agent_hash);
    pdp_token_new(t.executor, t.executor_hash);
    pdp_token_new(t.admin, t.admin_hash);
    pdp_token_new(t.auditor, t.auditor_hash);
    if (dev_secrets(&t) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "cannot hash the dev password");
    st = write_first_env(dir, &t, pubtext, err);
    if (st == IG_OK)
        st = write_config(dir, listen, &t, err);
    sodium_memzero(&t, sizeof(t));
    return st;
}

enum ig_status
pdp_dev_prepare(const char *dir, const char *listen, char *config_path,
                size_t cap, struct ig_err *err)
{
    char path[PATH_CAP];
    enum ig_status st;

    if ((st = join(path, dir, "intentgate.conf", err)) != IG_OK)
        return st;
    if (strlen(path) >= cap)
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", path);
    memcpy(config_path, path, strlen(path) + 1);
    if (access(path, F_OK) == 0)
        return IG_OK;
    if (ig_crypto_init() != IG_OK)
        return ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
    return create_dir(dir, listen, err);
}

/* Read dir/dev.env into text (cap bytes, NUL-terminated). */
static enum ig_status
read_env(const char *path, char *text, size_t cap, struct ig_err *err)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    n = fread(text, 1, cap - 1, f);
    text[n] = '\0';
    if (ferror(f) || !feof(f)) {
        (void)fclose(f);
        return ig_err_set(err, IG_ERR_IO, "cannot read %s (or too large)",
                          path);
    }
    (void)fclose(f);
    return IG_OK;
}

enum ig_status
pdp_dev_write_env(const char *dir, const char *url, char *out, size_t cap,
                  struct ig_err *err)
{
    char path[PATH_CAP], tmp[PATH_CAP], old[IG_DEV_ENV_MAX + 1],
        text[IG_DEV_ENV_MAX + 1];
    const char *line, *nl;
    size_t used = 0, n;
    enum ig_status st;
    int w;

    if ((st = join(path, dir, "dev.env", err)) != IG_OK ||
        (st = join(tmp, dir, "dev.env.tmp", err)) != IG_OK ||
        (st = read_env(path, old, sizeof(old), err)) != IG_OK)
        return st;
    w = snprintf(text, sizeof(text), "INTENTGATE_URL=%s\n", url);
    if (w < 0 || (size_t)w >= sizeof(text))
        return ig_err_set(err, IG_ERR_INVALID, "URL too long");
    used = (size_t)w;
    for (line = old; *line != '\0'; line = nl) {
        nl = strchr(line, '\n');
        nl = nl != NULL ? nl + 1 : line + strlen(line);
        n = (size_t)(nl - line);
        if (strncmp(line, "INTENTGATE_URL=", 15) == 0)
            continue;
        if (used + n + 1 >= sizeof(text))
            return ig_err_set(err, IG_ERR_INVALID, "%s is too large", path);
        memcpy(text + used, line, n);
        used += n;
    }
    text[used] = '\0';
    (void)unlink(tmp);
    if ((st = write_file(tmp, text, used, 0600, 1, err)) != IG_OK)
        return st;
    if (rename(tmp, path) != 0)
        return ig_err_set(err, IG_ERR_IO, "cannot replace %s: %s", path,
                          strerror(errno));
    if (used >= cap)
        return ig_err_set(err, IG_ERR_INVALID, "dev.env too large to print");
    memcpy(out, text, used + 1);
    sodium_memzero(old, sizeof(old));
    sodium_memzero(text, sizeof(text));
    return IG_OK;
}
