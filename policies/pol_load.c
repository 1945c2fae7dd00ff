/*
 * pol_load.c - pol_bundle_load(): a bundle is only handed out once it is
 * known to evaluate.
 *
 * How it works: the files are read and hashed (pol_bundle.c), then every
 * policy file is compiled and run once in a throwaway engine (pol_eval.c),
 * so a bundle with a syntax error or a file that does not return a
 * function is refused at load time, never at the first request. This sits
 * above both files so that reading a bundle needs nothing of the engine.
 */
#include "pol.h"

#include "pol_int.h"

static enum ig_status
pol_bundle_check(struct pol_bundle *b, struct ig_err *err)
{
    struct pol_engine *e = NULL;
    enum ig_status st;

    if (b->nfiles == 0)
        return ig_err_set(err, IG_ERR_NOTFOUND,
                          "%s: no policy files (*.lua other than *_test.lua)",
                          b->dir);
    st = pol_engine_new(b, NULL, NULL, NULL, &e, err);
    pol_engine_free(e);
    return st;
}

enum ig_status
pol_bundle_load(const char *dir, const json_t *settings,
                struct pol_bundle **out, struct ig_err *err)
{
    struct pol_bundle *b = NULL;
    enum ig_status st;

    *out = NULL;
    st = pol_bundle_read(dir, settings, &b, err);
    if (st == IG_OK)
        st = pol_bundle_check(b, err);
    if (st != IG_OK) {
        pol_bundle_unref(b);
        return st;
    }
    *out = b;
    return IG_OK;
}
