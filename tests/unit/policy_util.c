/*
 * policy_util.c - throwaway bundles and decision checks for the policy
 * engine tests (see policy_util.h).
 */
#include "policy_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
pt_bundle_dir(const char *const *files)
{
    const char *tmp = getenv("TMPDIR");
    char tmpl[512];
    char *dir;
    size_t i;

    (void)snprintf(tmpl, sizeof(tmpl), "%s/igpolXXXXXX",
                   tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    dir = mkdtemp(tmpl);
    assert_non_null(dir);
    dir = strdup(dir);
    assert_non_null(dir);
    for (i = 0; files != NULL && files[i] != NULL; i += 2)
        pt_write(dir, files[i], files[i + 1]);
    return dir;
}

void
pt_write(const char *dir, const char *name, const char *content)
{
    char path[1024];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL)
        fail_msg("cannot create %s", path);
    assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
    assert_int_equal(fclose(f), 0);
}

void
pt_rmdir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[1024];

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        (void)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        assert_int_equal(unlink(path), 0);
    }
    (void)closedir(d);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

struct pol_bundle *
pt_load(const char *dir, const json_t *settings)
{
    struct pol_bundle *b = NULL;
    struct ig_err err;

    ig_err_clear(&err);
    if (pol_bundle_load(dir, settings, &b, &err) != IG_OK)
        fail_msg("pol_bundle_load(%s): %s", dir, err.msg);
    return b;
}

struct pol_engine *
pt_engine(struct pol_bundle *b, const struct pol_limits *l, pol_count_fn count,
          void *ctx)
{
    struct pol_engine *e = NULL;
    struct ig_err err;

    ig_err_clear(&err);
    if (pol_engine_new(b, l, count, ctx, &e, &err) != IG_OK)
        fail_msg("pol_engine_new: %s", err.msg);
    return e;
}

json_t *
pt_json(const char *text)
{
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);

    if (v == NULL)
        fail_msg("bad test JSON %s: %s", text, je.text);
    return v;
}

void
pt_eval(struct pol_engine *e, const char *intent, struct pol_decision *out)
{
    json_t *v = pt_json(intent);

    pol_engine_eval(e, v, out);
    json_decref(v);
}

int64_t
pt_count(void *ctx, const char *key, int64_t window)
{
    struct pt_counter *c = ctx;

    c->calls++;
    (void)snprintf(c->key, sizeof(c->key), "%s", key);
    c->window = window;
    return c->answer;
}

void
pt_eval1(const char *src, const char *intent, struct pol_decision *out)
{
    const char *files[] = {"p.lua", src, NULL};
    struct pt_counter counter = {1, 0, "", 0};
    char *dir = pt_bundle_dir(files);
    struct pol_bundle *b = pt_load(dir, NULL);
    struct pol_engine *e = pt_engine(b, NULL, pt_count, &counter);

    pt_eval(e, intent, out);
    pol_engine_free(e);
    pol_bundle_unref(b);
    pt_rmdir(dir);
}

void
pt_expect(const struct pol_decision *d, enum pol_verdict v, const char *reason,
          const char *msg)
{
    if (d->verdict == v &&
        (reason == NULL ||
         (d->nreasons >= 1 && strcmp(d->reasons[0], reason) == 0)) &&
        (msg == NULL || strstr(d->message, msg) != NULL))
        return;
    fail_msg("expected %s %s \"%s\", got %s %s \"%s\"", pol_verdict_name(v),
             reason != NULL ? reason : "-", msg != NULL ? msg : "",
             pol_verdict_name(d->verdict),
             d->nreasons > 0 ? d->reasons[0] : "-", d->message);
}

const char *
pt_intent(const char *action, const char *params)
{
    static char buf[4096];

    (void)snprintf(buf, sizeof(buf),
                   "{\"version\":\"intentgate.intent/1\",\"intent_id\":"
                   "\"i-1\",\"principal\":\"agent:t\",\"tenant\":\"acme\","
                   "\"action\":\"%s\",\"resource\":\"r/1\",\"params\":%s,"
                   "\"context\":{},\"created_at\":\"2026-01-01T00:00:00Z\","
                   "\"expires_at\":\"2026-01-01T00:01:00Z\"}",
                   action, params != NULL ? params : "{}");
    return buf;
}

int
pt_bundle_test(const char *dir, const json_t *settings, char *out, size_t outsz)
{
    struct pol_bundle *b = pt_load(dir, settings);
    FILE *f = tmpfile();
    struct ig_err err;
    size_t n;
    int rc;

    assert_non_null(f);
    ig_err_clear(&err);
    rc = pol_bundle_test(b, f, &err);
    rewind(f);
    n = fread(out, 1, outsz - 1, f);
    out[n] = '\0';
    if (rc < 0)
        (void)snprintf(out, outsz, "error: %s", err.msg);
    (void)fclose(f);
    pol_bundle_unref(b);
    return rc;
}

/* Run body (asserts) inside a policy; it must reach `return ALLOW`. */
void
pt_lua_asserts(const char *body)
{
    struct pol_decision d;
    char src[16384];

    (void)snprintf(src, sizeof(src),
                   "return function(intent)\n%s\nreturn ALLOW\nend\n", body);
    pt_eval1(src, pt_intent("x", NULL), &d);
    pt_expect(&d, POL_ALLOW, NULL, NULL);
}
