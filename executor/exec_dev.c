/*
 * exec_dev.c - the executor's dev mode (see exec_dev.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include "exec_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_secrets.h"
#include "ig_file.h"
#include "ig_key.h"
#include "ig_limits.h"

#define PATH_CAP IG_PATH_MAX
#define DEV_UPSTREAM "http://127.0.0.1:8702"

/*
 * The demo registry. payments.refund: POST to the dev upstream with the
 * credential, answering the agent only the refund's status and its
 * "refund" field. shell.exec: a few programs that cannot run other code,
 * each argument a plain name in the sandbox's /scratch (no "/", no
 * leading ".", no control character: nothing to read by path).
 */
static const char demo_registry[] =
    "{\"actions\": {\n"
    "  \"payments.refund\": {\n"
    "    \"handler\": \"http\",\n"
    "    \"credential\": \"refund-api\",\n"
    "    \"params\": {\n"
    "      \"amount\": {\"type\": \"number\", \"required\": true, "
    "\"min\": 0.01, \"max\": 1000},\n"
    "      \"currency\": {\"type\": \"string\", \"required\": true, "
    "\"pattern\": \"^[A-Z]{3}$\"},\n"
    "      \"order_id\": {\"type\": \"string\", \"required\": true, "
    "\"max_length\": 64, \"pattern\": \"^[A-Za-z0-9_-]+$\"}\n"
    "    },\n"
    "    \"http\": {\"method\": \"POST\", "
    "\"url\": \"${INTENTGATE_DEV_UPSTREAM}/refunds\",\n"
    "             \"credential_header\": \"Authorization\", "
    "\"credential_prefix\": \"Bearer \",\n"
    "             \"body_fields\": [\"amount\", \"currency\", \"order_id\"],"
    " \"timeout_ms\": 5000,\n"
    "             \"response\": \"fields\", \"response_fields\": "
    "{\"refund\": \"/refund\"}}\n"
    "  },\n"
    "  \"shell.exec\": {\n"
    "    \"handler\": \"exec\",\n"
    "    \"params\": {\"argv\": {\"type\": \"array\", \"items\": \"string\", "
    "\"max_items\": 16, \"max_length\": 256, \"required\": true,\n"
    "                        \"pattern\": "
    "\"^[^/.[:cntrl:]][^/[:cntrl:]]*$\"}},\n"
    "    \"exec\": {\"argv\": [\"{argv...}\"], \"allow\": [\"ls\", \"cat\", "
    "\"echo\", \"pwd\", \"wc\", \"head\", \"tail\", \"grep\"],\n"
    "             \"timeout_ms\": 10000, \"network\": false, "
    "\"sandbox\": \"bwrap\", \"max_output_bytes\": 65536}\n"
    "  }\n"
    "}}\n";

/* With INTENTGATE_DEV_GIT_UPSTREAM set: the same registry plus the git
   gateway's alias "demo", its credential sent as HTTP Basic with user
   x-access-token (the large forges' convention). Written at every start
   (registry-git.json), so that setting or unsetting the variable takes. */
static const char demo_git[] =
    ",\n\"git\": {\"demo\": {\"url\": \"${INTENTGATE_DEV_GIT_UPSTREAM}\", "
    "\"credential\": \"demo-git\", \"credential_user\": "
    "\"x-access-token\"}}}\n";

struct pdp_env {
    char url[256], id[128], token[256], pubkey[128];
};

/* Copy the value (n bytes) into dst (cap bytes); -1 when it does not
   fit: a cut token or URL would fail later, far from the cause. */
static int
env_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap)
        return -1;
    memcpy(dst, v, n);
    dst[n] = '\0';
    return 0;
}

/* One KEY=VALUE line (n bytes, no newline) into e. */
static int
env_line(struct pdp_env *e, const char *line, size_t n)
{
    static const char *const keys[] = {
        "INTENTGATE_URL", "INTENTGATE_EXECUTOR_ID", "INTENTGATE_EXECUTOR_TOKEN",
        "INTENTGATE_PUBLIC_KEY"};
    char *dst[4];
    size_t cap[4], i, k;
    const char *eq;

    dst[0] = e->url, cap[0] = sizeof(e->url);
    dst[1] = e->id, cap[1] = sizeof(e->id);
    dst[2] = e->token, cap[2] = sizeof(e->token);
    dst[3] = e->pubkey, cap[3] = sizeof(e->pubkey);
    if (n > 0 && line[n - 1] == '\r')
        n--;
    if ((eq = memchr(line, '=', n)) == NULL)
        return 0;
    k = (size_t)(eq - line);
    for (i = 0; i < 4; i++)
        if (strlen(keys[i]) == k && memcmp(line, keys[i], k) == 0)
            return env_value(dst[i], cap[i], eq + 1, n - k - 1);
    return 0;
}

/* Read KEY=VALUE lines of the PDP's dev.env (ig_file_read: a regular
   file under its cap; it holds a token, so the copy is wiped). */
static enum ig_status
read_pdp_env(const char *path, struct pdp_env *e, struct ig_err *err)
{
    const char *p, *nl, *end;
    enum ig_status st;
    size_t len = 0;
    char *text;
    int bad = 0;

    memset(e, 0, sizeof(*e));
    st = ig_file_read(path, IG_EXEC_DEV_ENV_MAX_BYTES, &text, &len, err);
    if (st != IG_OK)
        return st == IG_ERR_NOTFOUND ? IG_ERR_IO : st;
    for (p = text, end = text + len; p < end && !bad; p = nl + 1) {
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            nl = end;
        bad = env_line(e, p, (size_t)(nl - p)) != 0;
    }
    sodium_memzero(text, len);
    free(text);
    if (bad)
        return ig_err_set(err, IG_ERR_INVALID, "%s: a value is too long", path);
    if (e->url[0] == '\0' || e->id[0] == '\0' || e->token[0] == '\0' ||
        e->pubkey[0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID,
                          "%s lacks the PDP URL, executor id, token or "
                          "public key: start `intentgate serve --dev` first",
                          path);
    return IG_OK;
}

/* dir of path + "/" + name into out. */
static enum ig_status
sibling(const char *path, const char *name, char out[PATH_CAP],
        struct ig_err *err)
{
    const char *slash = strrchr(path, '/');
    int n = slash == NULL ? snprintf(out, PATH_CAP, "%s", name)
                          : snprintf(out, PATH_CAP, "%.*s/%s",
                                     (int)(slash - path), path, name);

    if (n < 0 || n >= PATH_CAP)
        return ig_err_set(err, IG_ERR_INVALID, "path too long");
    return IG_OK;
}

/* dir/name with text; an existing file is kept unless replace. */
static enum ig_status
write_file(const char *dir, const char *name, const char *text, mode_t mode,
           int replace, struct ig_err *err)
{
    char path[PATH_CAP];

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= PATH_CAP)
        return ig_err_set(err, IG_ERR_INVALID, "path too long");
    if (!replace && access(path, F_OK) == 0)
        return IG_OK;
    return ig_file_write(path, text, strlen(text), mode, 0, err);
}

/* First run: the secrets key and the dev credential. */
static enum ig_status
make_secrets(const char *dir, struct ig_err *err)
{
    char key[PATH_CAP], file[PATH_CAP], value[48];
    unsigned char raw[16];
    struct exec_secrets *s = NULL;
    enum ig_status st;

    if (snprintf(key, sizeof(key), "%s/secrets.key", dir) >= PATH_CAP ||
        snprintf(file, sizeof(file), "%s/secrets.enc", dir) >= PATH_CAP)
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", dir);
    if (access(key, F_OK) == 0)
        return IG_OK;
    if ((st = exec_secrets_keygen(key, err)) != IG_OK ||
        (st = exec_secrets_open(file, key, &s, err)) != IG_OK)
        return st;
    randombytes_buf(raw, sizeof(raw));
    memcpy(value, "dev-refund-", 11);
    sodium_bin2hex(value + 11, sizeof(value) - 11, raw, sizeof(raw));
    st = exec_secrets_set(s, "refund-api", (const unsigned char *)value,
                          strlen(value), err);
    sodium_memzero(value, sizeof(value));
    sodium_memzero(raw, sizeof(raw));
    exec_secrets_free(s);
    return st;
}

/* The git demo: registry-git.json and the credential from
   INTENTGATE_DEV_GIT_CREDENTIAL (set at every start), when
   INTENTGATE_DEV_GIT_UPSTREAM is set. *git tells which registry to use. */
static enum ig_status
make_git_demo(const char *dir, int *git, struct ig_err *err)
{
    const char *cred = getenv("INTENTGATE_DEV_GIT_CREDENTIAL");
    char text[sizeof(demo_registry) + sizeof(demo_git)];
    char key[PATH_CAP], file[PATH_CAP];
    struct exec_secrets *s = NULL;
    size_t n = sizeof(demo_registry) - 1;
    enum ig_status st;

    *git = getenv("INTENTGATE_DEV_GIT_UPSTREAM") != NULL;
    if (!*git)
        return IG_OK;
    if (cred == NULL || cred[0] == '\0')
        return ig_err_set(err, IG_ERR_INVALID,
                          "INTENTGATE_DEV_GIT_UPSTREAM is set: set "
                          "INTENTGATE_DEV_GIT_CREDENTIAL too");
    while (n > 0 && demo_registry[n - 1] != '}') /* the document's end */
        n--;
    memcpy(text, demo_registry, n - 1);
    memcpy(text + n - 1, demo_git, sizeof(demo_git));
    if (snprintf(key, sizeof(key), "%s/secrets.key", dir) >= PATH_CAP ||
        snprintf(file, sizeof(file), "%s/secrets.enc", dir) >= PATH_CAP)
        return ig_err_set(err, IG_ERR_INVALID, "path too long: %s", dir);
    if ((st = write_file(dir, "registry-git.json", text, 0644, 1, err)) !=
            IG_OK ||
        (st = exec_secrets_open(file, key, &s, err)) != IG_OK)
        return st;
    st = exec_secrets_set(s, "demo-git", (const unsigned char *)cred,
                          strlen(cred), err);
    exec_secrets_free(s);
    return st;
}

/*
 * The config. The PDP's whole data directory (its key, dev.env with every
 * token, the database) is protected: the sandbox must not see it. Run as
 * root, sandboxed commands run as nobody; run as a developer's own user
 * (who cannot switch users), as that user - still inside the allowlist
 * sandbox, which the self-check proves blind to both data directories.
 */
static enum ig_status
write_config(const char *dir, const struct pdp_env *e, const char *listen,
             int git, struct ig_err *err)
{
    char text[2048 + PATH_CAP], pdp_dir[PATH_CAP];
    int n;

    if (realpath(dir, pdp_dir) == NULL)
        return ig_err_set(err, IG_ERR_IO, "%s: %s", dir, strerror(errno));
    *strrchr(pdp_dir, '/') = '\0'; /* dir is PDPDIR/executor */
    n = snprintf(text, sizeof(text),
                 "# written by `intentgate-executor serve --dev` at "
                 "every start\n"
                 "id = %s\nlisten = %s\npdp_url = %s\n"
                 "pdp_token_file = pdp.token\npdp_public_keys = "
                 "pdp.pub\nregistry = %s\n"
                 "secrets = secrets.enc\nsecrets_key = secrets.key\n"
                 "work_dir = work\nspool_dir = spool\n"
                 "sandbox_user = %s\nprotect = %s\n",
                 e->id, listen != NULL ? listen : "127.0.0.1:8701", e->url,
                 git ? "registry-git.json" : "registry.json",
                 geteuid() == 0 ? "nobody" : "self", pdp_dir);

    if (n < 0 || (size_t)n >= sizeof(text))
        return ig_err_set(err, IG_ERR_INVALID, "config too long");
    return write_file(dir, "executor.conf", text, 0644, 1, err);
}

enum ig_status
exec_dev_prepare(const char *pdp_env, const char *listen, char *config_path,
                 size_t cap, struct ig_err *err)
{
    char dir[PATH_CAP], line[300];
    struct pdp_env e;
    enum ig_status st;
    int git = 0;

    if ((st = read_pdp_env(pdp_env, &e, err)) != IG_OK ||
        (st = sibling(pdp_env, "executor", dir, err)) != IG_OK)
        goto out;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        st = ig_err_set(err, IG_ERR_IO, "cannot create %s: %s", dir,
                        strerror(errno));
        goto out;
    }
    if (ig_crypto_init() != IG_OK) {
        st = ig_err_set(err, IG_ERR_CRYPTO, "cannot initialize libsodium");
        goto out;
    }
    (void)snprintf(line, sizeof(line), "%s\n", e.token);
    if ((st = write_file(dir, "pdp.token", line, 0600, 1, err)) != IG_OK)
        goto out;
    (void)snprintf(line, sizeof(line), "%s\n", e.pubkey);
    if ((st = write_file(dir, "pdp.pub", line, 0644, 1, err)) != IG_OK ||
        (st = write_file(dir, "registry.json", demo_registry, 0644, 0, err)) !=
            IG_OK ||
        (st = make_secrets(dir, err)) != IG_OK ||
        (st = make_git_demo(dir, &git, err)) != IG_OK ||
        (st = write_config(dir, &e, listen, git, err)) != IG_OK)
        goto out;
    if (getenv("INTENTGATE_DEV_UPSTREAM") == NULL)
        (void)setenv("INTENTGATE_DEV_UPSTREAM", DEV_UPSTREAM, 0);
    if ((size_t)snprintf(config_path, cap, "%s/executor.conf", dir) >= cap)
        st = ig_err_set(err, IG_ERR_INVALID, "path too long");
out:
    sodium_memzero(&e, sizeof(e));
    sodium_memzero(line, sizeof(line));
    return st;
}

enum ig_status
exec_dev_announce(const char *pdp_env, const char *url, struct ig_err *err)
{
    char dir[PATH_CAP], text[512];
    const char *slash = strrchr(pdp_env, '/');
    enum ig_status st;

    if (slash == NULL)
        (void)snprintf(dir, sizeof(dir), ".");
    else
        (void)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - pdp_env),
                       pdp_env);
    (void)snprintf(text, sizeof(text), "INTENTGATE_EXECUTOR_URL=%s\n", url);
    st = write_file(dir, "executor.env", text, 0644, 1, err);
    if (st == IG_OK)
        (void)printf("%s", text);
    (void)fflush(stdout);
    return st;
}
