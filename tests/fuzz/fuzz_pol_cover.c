/*
 * fuzz_pol_cover.c - libFuzzer target for the coverage instrumenter
 * (pol_cover_instrument, pol_cover.h) on arbitrary bytes.
 *
 * Beyond not crashing and terminating, each answer is checked:
 *   - the line count is Lua's, and an instrumented text has the same
 *     lines: walking input and output side by side, the output is the
 *     input with insertions only, no insertion holds a line break (so
 *     every line break is at the same line, every message keeps its line),
 *     and each insertion is one of the three probe shapes;
 *   - every condition points at probes that exist, and its chain ends;
 *   - every function span runs from a "(" to an "end";
 *   - when the input compiles as Lua, the instrumented text compiles too
 *     (unless Lua runs out of one of its own limits, which only a file at
 *     the edge of them meets).
 * A broken property aborts.
 */
#define _GNU_SOURCE /* memmem */
#include <lauxlib.h>
#include <lua.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_cover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lua_State *fz_L;

static int
fz_lines(const char *s, size_t n)
{
    size_t i = 0;
    int lines = 1;

    while (i < n) {
        if (s[i] == '\n' || s[i] == '\r') {
            i += (i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r') &&
                  s[i + 1] != s[i])
                     ? 2
                     : 1;
            lines++;
        } else {
            i++;
        }
    }
    return lines;
}

/* The length of the probe insertion at p (n bytes left), or 0. */
static size_t
fz_probe_at(const char *p, size_t n)
{
    static const char *const heads[] = {" " POL_COVER_PROBE "(",
                                        " else " POL_COVER_PROBE "(", NULL};
    size_t i, k, h;

    for (i = 0; heads[i] != NULL; i++) {
        h = strlen(heads[i]);
        if (n < h || memcmp(p, heads[i], h) != 0)
            continue;
        for (k = h; k < n && p[k] >= '0' && p[k] <= '9'; k++)
            ;
        /* an added else comes right before the `end` it precedes (a
           written one is followed by its probe, then a blank) */
        if (k > h && k + 1 < n && p[k] == ')' && p[k + 1] == ';' &&
            (i == 0 || (k + 5 <= n && memcmp(p + k + 2, "end", 3) == 0)))
            return k + 2;
    }
    return 0;
}

/* out must be in with probe insertions only; aborts otherwise. The input
   holds no "__igcov" (checked by the caller), so a probe in the output is
   always an insertion. */
static void
fz_only_insertions(const char *in, size_t n, const char *out, size_t m)
{
    static const char prefix[] = "local " POL_COVER_PROBE " = ...;";
    size_t i = 0, j = sizeof(prefix) - 1, k;

    if (m < j || memcmp(out, prefix, j) != 0)
        abort();
    while (i < n || j < m) {
        k = fz_probe_at(out + j, m - j);
        if (k > 0) {
            j += k;
        } else if (i < n && j < m && out[j] == in[i]) {
            i++;
            j++;
        } else {
            abort();
        }
    }
}

static void
fz_check_conds(const struct pol_cover_src *r)
{
    size_t i, hops;
    const struct pol_cover_cond *c;

    for (i = 0; i < r->nconds; i++) {
        c = &r->conds[i];
        if (c->then_probe < 1 || c->then_probe > r->nprobes ||
            c->else_probe < 1 || c->else_probe > r->nprobes ||
            c->next > r->nconds || c->line < 1 || c->line > r->nlines)
            abort();
        for (hops = 0; c->next != 0; hops++) {
            if (hops > r->nconds || c->next - 1 <= (size_t)(c - r->conds))
                abort();
            c = &r->conds[c->next - 1];
        }
    }
}

/* Every function span runs from a "(" to an "end", on a real line. */
static void
fz_check_fns(const struct pol_cover_src *r, const char *in, size_t n)
{
    size_t i;

    for (i = 0; i < r->nfns; i++)
        if (r->fns[i].from + 4 > r->fns[i].to || r->fns[i].to > n ||
            in[r->fns[i].from] != '(' ||
            memcmp(in + r->fns[i].to - 3, "end", 3) != 0 ||
            r->fns[i].line < 1 || r->fns[i].line > r->nlines)
            abort();
}

static int
fz_compiles(const char *s, size_t n, const char **msg)
{
    int ok;

    ok = luaL_loadbufferx(fz_L, s, n, "=f", "t") == LUA_OK;
    *msg = lua_tostring(fz_L, -1);
    lua_settop(fz_L, 0);
    return ok;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data, *msg;
    struct pol_cover_src r;

    if (size > 65536)
        return 0;
    if (fz_L == NULL && (fz_L = luaL_newstate()) == NULL)
        abort();
    if (pol_cover_instrument(in, size, &r) != IG_OK)
        return 0;
    if (r.nlines != fz_lines(in, size))
        abort();
    fz_check_fns(&r, in, size);
    if (r.text == NULL) {
        if (r.why[0] == '\0')
            abort();
        pol_cover_src_release(&r);
        return 0;
    }
    if (fz_lines(r.text, r.len) != r.nlines || strlen(r.text) > r.len)
        abort();
    if (memmem(in, size, POL_COVER_PROBE, strlen(POL_COVER_PROBE)) == NULL)
        fz_only_insertions(in, size, r.text, r.len);
    fz_check_conds(&r);
    if (fz_compiles(in, size, &msg) && !fz_compiles(r.text, r.len, &msg) &&
        (msg == NULL ||
         (strstr(msg, "too many") == NULL && strstr(msg, "overflow") == NULL &&
          strstr(msg, "too long") == NULL &&
          strstr(msg, "too complex") == NULL))) {
        (void)fprintf(stderr, "instrumented text does not compile: %s\n",
                      msg != NULL ? msg : "?");
        abort();
    }
    pol_cover_src_release(&r);
    return 0;
}
