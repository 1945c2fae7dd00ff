/*
 * pol_cover_run.c - struct pol_coverage: what the test cases of a bundle
 * ran, line by line and branch by branch, and its report.
 *
 * How it works: the test runner sets the collector's callbacks as the
 * thread's watch (pol_vm_watch) around its coverage engine. Then:
 *   - executable lines are the union of Lua's `activelines` of every
 *     function met: each chunk's main function, every Lua function
 *     reachable from what the chunk returned (upvalues and tables,
 *     recursively, with a visited set), and - so that a function no case
 *     ever creates still shows its lines - every function the
 *     instrumenter found, compiled alone on its own lines in a bare state
 *     (only its closure is created). In a file the instrumenter could not
 *     finish, the functions after the point where it stopped are counted
 *     when a line event is seen in them, else from their enclosing
 *     function's lines only. Lines holding only `end`, `else`, `then`,
 *     `do` or `;` are not counted;
 *   - run lines are the line events of the policy files;
 *   - branches come from the probes pol_cover.c inserted: a condition
 *     was true when its `then` probe ran, false when the chain's else
 *     probe or a later condition's probe ran. A file the instrumenter
 *     could not place, or whose instrumented source does not compile, is
 *     reported by lines only, with the reason.
 */
#include "pol_cover.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "pol_int.h"

#define POL_WALK_DEPTH 32   /* tables in tables followed from a policy */
#define POL_WALK_MAX 100000 /* functions and tables visited per chunk */

struct pol_cfile {
    char *name;
    struct pol_cover_src src;
    int branches;              /* probes compiled and counted */
    char why[160];             /* why branches are not counted */
    unsigned char *exec, *run; /* [nlines + 1] */
    int *seen;      /* [nlines + 1]: 1 + lastline of a function met there */
    uint64_t *hits; /* [nprobes + 1] */
};

struct pol_coverage {
    struct pol_cfile *files;
    size_t nfiles;
    const char *last_src; /* line events: the source string last seen */
    int last_file;
    size_t mismatches;
    char mismatch[POL_MESSAGE_MAX]; /* the first one */
    char failed[POL_MESSAGE_MAX];   /* coverage could not run */
};

/* A set of pointers (open addressing), for the walk. */
struct pol_pset {
    const void **slot;
    size_t cap, n;
};

static void pol_walk(struct pol_coverage *c, struct pol_pset *v, lua_State *L,
                     int fi, int idx, int depth);

static int
pol_pset_add(struct pol_pset *s, const void *p)
{
    size_t i, h;
    const void **old = s->slot;
    size_t oldcap = s->cap;

    if (s->n >= POL_WALK_MAX)
        return 0;
    if (2 * (s->n + 1) > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->slot = calloc(s->cap, sizeof(*s->slot));
        if (s->slot == NULL) {
            s->slot = old;
            s->cap = oldcap;
            return 0;
        }
        s->n = 0;
        for (i = 0; i < oldcap; i++)
            if (old[i] != NULL)
                (void)pol_pset_add(s, old[i]);
        free(old);
    }
    h = ((size_t)(uintptr_t)p >> 4) * 2654435761u;
    for (i = h & (s->cap - 1); s->slot[i] != NULL; i = (i + 1) & (s->cap - 1))
        if (s->slot[i] == p)
            return 0;
    s->slot[i] = p;
    s->n++;
    return 1;
}

static int
pol_cov_file(void *ctx, const char *name)
{
    struct pol_coverage *c = ctx;
    size_t i;

    for (i = 0; i < c->nfiles; i++)
        if (strcmp(c->files[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const char *
pol_cov_source(void *ctx, int fi, size_t *len)
{
    struct pol_coverage *c = ctx;
    struct pol_cfile *f = &c->files[fi];

    if (f->src.text == NULL)
        return NULL;
    f->branches = 1;
    *len = f->src.len;
    return f->src.text;
}

static void
pol_cov_fallback(void *ctx, int fi, const char *why)
{
    struct pol_coverage *c = ctx;
    struct pol_cfile *f = &c->files[fi];

    f->branches = 0;
    (void)snprintf(f->why, sizeof(f->why), "instrumented source: %s",
                   why != NULL ? why : "does not compile");
}

/* Merge the activelines table on top of the stack into f (popped). */
static void
pol_merge_lines(struct pol_cfile *f, lua_State *L)
{
    lua_Integer ln;

    if (lua_istable(L, -1)) {
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_pop(L, 1);
            ln = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
            if (ln > 0 && ln <= f->src.nlines)
                f->exec[ln] = 1;
        }
    }
    lua_pop(L, 1);
}

/* The Lua function at idx: its lines, then its upvalues. */
static void
pol_walk_fn(struct pol_coverage *c, struct pol_pset *v, lua_State *L, int fi,
            int idx, int depth)
{
    struct pol_cfile *f = &c->files[fi];
    const char *up;
    lua_Debug ar;
    int i;

    lua_pushvalue(L, idx);
    if (!lua_getinfo(L, ">SL", &ar)) {
        lua_pop(L, 1);
        return;
    }
    if (strcmp(ar.source + (ar.source[0] == '='), f->name) != 0) {
        lua_pop(L, 1);
        return;
    }
    if (ar.linedefined >= 0 && ar.linedefined <= f->src.nlines)
        f->seen[ar.linedefined] = ar.lastlinedefined + 1;
    pol_merge_lines(f, L);
    for (i = 1; (up = lua_getupvalue(L, idx, i)) != NULL; i++) {
        if (strcmp(up, "_ENV") != 0)
            pol_walk(c, v, L, fi, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
    }
}

static void
pol_walk(struct pol_coverage *c, struct pol_pset *v, lua_State *L, int fi,
         int idx, int depth)
{
    int t = lua_type(L, idx);

    if (depth > POL_WALK_DEPTH || !lua_checkstack(L, 8) ||
        (t != LUA_TTABLE && (t != LUA_TFUNCTION || lua_iscfunction(L, idx))) ||
        !pol_pset_add(v, lua_topointer(L, idx)))
        return;
    if (t == LUA_TFUNCTION) {
        pol_walk_fn(c, v, L, fi, idx, depth);
        return;
    }
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        pol_walk(c, v, L, fi, lua_gettop(L) - 1, depth + 1);
        pol_walk(c, v, L, fi, lua_gettop(L), depth + 1);
        lua_pop(L, 1);
    }
}

static void
pol_cov_reach(void *ctx, lua_State *L, int fi, int idx)
{
    struct pol_pset v = {NULL, 0, 0};

    pol_walk(ctx, &v, L, fi, lua_absindex(L, idx), 0);
    free(v.slot);
}

static void
pol_cov_line(void *ctx, lua_State *L, lua_Debug *ar)
{
    struct pol_coverage *c = ctx;
    struct pol_cfile *f;
    int fi;

    if (!lua_getinfo(L, "Sl", ar) || ar->currentline <= 0 ||
        ar->source[0] != '=')
        return;
    /* The source string of the last event is a fast path, checked by
       name too: after a rebuilt state another file's name may sit at the
       same address. */
    if (ar->source != c->last_src || c->last_file < 0 ||
        strcmp(ar->source + 1, c->files[c->last_file].name) != 0) {
        fi = pol_cov_file(c, ar->source + 1);
        c->last_src = ar->source;
        c->last_file = fi;
    }
    if (c->last_file < 0)
        return;
    f = &c->files[c->last_file];
    if (ar->currentline > f->src.nlines)
        return;
    f->run[ar->currentline] = 1;
    /* A file the instrumenter finished has every function's lines
       already; only the others need them here (a table in the policy's
       own heap, inside its run). */
    if (f->src.text == NULL && ar->linedefined >= 0 &&
        ar->linedefined <= f->src.nlines &&
        f->seen[ar->linedefined] != ar->lastlinedefined + 1 &&
        lua_getinfo(L, "L", ar)) {
        f->seen[ar->linedefined] = ar->lastlinedefined + 1;
        pol_merge_lines(f, L);
    }
}

static void
pol_cov_probe(void *ctx, int fi, lua_Integer n)
{
    struct pol_coverage *c = ctx;
    struct pol_cfile *f = &c->files[fi];

    if (f->hits != NULL && n >= 1 && (size_t)n <= f->src.nprobes)
        f->hits[n]++;
}

void
pol_coverage_watch(struct pol_coverage *c, struct pol_vm_watch *w)
{
    w->ctx = c;
    w->file = pol_cov_file;
    w->source = pol_cov_source;
    w->fallback = pol_cov_fallback;
    w->reach = pol_cov_reach;
    w->line = pol_cov_line;
    w->probe = pol_cov_probe;
}

static void
pol_fn_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    (void)luaL_error(L, "too long");
}

/* Protected: compile function i of f alone (on its own lines) and merge
   its active lines. Only a closure is created, in a bare state (no
   libraries), under a count hook: nothing of the policy runs. */
static int
pol_fn_lines(lua_State *L)
{
    struct pol_cfile *f = lua_touserdata(L, 1);
    const struct pol_file *pf = lua_touserdata(L, 2);
    const struct pol_cover_fn *fn = &f->src.fns[lua_tointeger(L, 3)];
    luaL_Buffer b;
    lua_Debug ar;
    int i;

    luaL_buffinit(L, &b);
    for (i = 1; i < fn->line; i++)
        luaL_addchar(&b, '\n');
    luaL_addstring(&b, "return function");
    luaL_addlstring(&b, pf->src + fn->from, fn->to - fn->from);
    luaL_pushresult(&b);
    if (luaL_loadbufferx(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=f",
                         "t") != LUA_OK)
        return 0;
    lua_sethook(L, pol_fn_hook, LUA_MASKCOUNT, 100);
    lua_call(L, 0, 1);
    lua_sethook(L, NULL, 0, 0);
    if (lua_isfunction(L, -1) && !lua_iscfunction(L, -1) &&
        lua_getinfo(L, ">L", &ar))
        pol_merge_lines(f, L);
    return 0;
}

/* The lines of every function of f, created or not. */
static void
pol_cfile_fns(struct pol_cfile *f, const struct pol_file *pf)
{
    lua_State *L;
    size_t i;

    if (f->src.nfns == 0 || (L = luaL_newstate()) == NULL)
        return;
    for (i = 0; i < f->src.nfns; i++) {
        lua_settop(L, 0);
        lua_pushcfunction(L, pol_fn_lines);
        lua_pushlightuserdata(L, f);
        lua_pushlightuserdata(L, (void *)(uintptr_t)pf);
        lua_pushinteger(L, (lua_Integer)i);
        (void)lua_pcall(L, 3, 0, 0);
    }
    lua_close(L);
}

static enum ig_status
pol_cfile_init(struct pol_cfile *f, const struct pol_file *pf)
{
    size_t n;

    f->name = strdup(pf->name);
    if (f->name == NULL || pol_cover_instrument(pf->src, pf->len, &f->src))
        return IG_ERR_NOMEM;
    if (f->src.text == NULL)
        (void)snprintf(f->why, sizeof(f->why), "%s", f->src.why);
    n = (size_t)f->src.nlines + 1;
    f->exec = calloc(n, 1);
    f->run = calloc(n, 1);
    f->seen = calloc(n, sizeof(*f->seen));
    f->hits = calloc(f->src.nprobes + 1, sizeof(*f->hits));
    if (f->exec == NULL || f->run == NULL || f->seen == NULL || f->hits == NULL)
        return IG_ERR_NOMEM;
    pol_cfile_fns(f, pf);
    return IG_OK;
}

enum ig_status
pol_coverage_new(const struct pol_file *files, size_t n,
                 struct pol_coverage **out)
{
    struct pol_coverage *c;
    size_t i;

    *out = NULL;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return IG_ERR_NOMEM;
    c->files = calloc(n + 1, sizeof(*c->files));
    c->nfiles = n;
    c->last_file = -1;
    for (i = 0; c->files != NULL && i < n; i++)
        if (pol_cfile_init(&c->files[i], &files[i]) != IG_OK)
            break;
    if (c->files == NULL || i < n) {
        pol_coverage_free(c);
        return IG_ERR_NOMEM;
    }
    *out = c;
    return IG_OK;
}

void
pol_coverage_free(struct pol_coverage *c)
{
    size_t i;

    if (c == NULL)
        return;
    for (i = 0; c->files != NULL && i < c->nfiles; i++) {
        free(c->files[i].name);
        pol_cover_src_release(&c->files[i].src);
        free(c->files[i].exec);
        free(c->files[i].run);
        free(c->files[i].seen);
        free(c->files[i].hits);
    }
    free(c->files);
    free(c);
}

void
pol_coverage_fail(struct pol_coverage *c, const char *why)
{
    pol_copy_text(c->failed, sizeof(c->failed), why, strlen(why));
}

void
pol_coverage_mismatch(struct pol_coverage *c, const char *file,
                      const char *name)
{
    if (c->mismatches++ == 0)
        (void)snprintf(c->mismatch, sizeof(c->mismatch), "%s: %s", file, name);
}

/* ---- the report ---- */

struct pol_csum {
    size_t lines, lines_run, br, br_taken;
};

static int
pol_line_counts(const struct pol_cfile *f, int ln)
{
    return (f->exec[ln] || f->run[ln]) && !f->src.quiet[ln];
}

/* Whether condition i of f was ever false (a later probe of its chain). */
static int
pol_cond_false(const struct pol_cfile *f, size_t i)
{
    const struct pol_cover_cond *k = &f->src.conds[i];

    if (f->hits[k->else_probe] > 0)
        return 1;
    for (i = k->next; i != 0; i = f->src.conds[i - 1].next)
        if (f->hits[f->src.conds[i - 1].then_probe] > 0)
            return 1;
    return 0;
}

static void
pol_cfile_sum(const struct pol_cfile *f, struct pol_csum *s)
{
    size_t i;
    int ln;

    memset(s, 0, sizeof(*s));
    for (ln = 1; ln <= f->src.nlines; ln++) {
        if (pol_line_counts(f, ln)) {
            s->lines++;
            s->lines_run += f->run[ln];
        }
    }
    for (i = 0; f->branches && i < f->src.nconds; i++) {
        s->br += 2;
        s->br_taken += (size_t)(f->hits[f->src.conds[i].then_probe] > 0) +
                       (size_t)pol_cond_false(f, i);
    }
}

static void
pol_pct(char *buf, size_t n, size_t part, size_t whole, int decimals)
{
    unsigned long long p;

    if (whole == 0)
        (void)snprintf(buf, n, "n/a");
    else if (!decimals)
        (void)snprintf(buf, n, "%llu%%",
                       (unsigned long long)part * 100 / whole);
    else {
        p = (unsigned long long)part * 1000 / whole;
        (void)snprintf(buf, n, "%llu.%llu%%", p / 10, p % 10);
    }
}

static void
pol_print_branches(const struct pol_cfile *f, FILE *out)
{
    const struct pol_cover_cond *k;
    int said_t = 0, said_f = 0, first = 1;
    size_t i;

    for (i = 0; i < f->src.nconds; i++) {
        k = &f->src.conds[i];
        if (f->hits[k->then_probe] == 0) {
            (void)fprintf(out, "%s%d `%s` true%s",
                          first ? "  branch not taken: " : ", ", k->line,
                          k->elseif ? "elseif" : "if",
                          said_t++ ? "" : " (no case entered it)");
            first = 0;
        }
        if (!pol_cond_false(f, i)) {
            (void)fprintf(out, "%s%d `%s` false%s",
                          first ? "  branch not taken: " : ", ", k->line,
                          k->elseif ? "elseif" : "if",
                          said_f++ ? "" : " (no case skipped it)");
            first = 0;
        }
    }
    if (!first)
        (void)fputc('\n', out);
}

static void
pol_print_file(const struct pol_cfile *f, const struct pol_csum *s, FILE *out)
{
    char lp[48], bp[48];
    int ln, first = 1;

    pol_pct(lp, sizeof(lp), s->lines_run, s->lines, 0);
    pol_pct(bp, sizeof(bp), s->br_taken, s->br, 0);
    (void)fprintf(out, "coverage %s: lines %zu/%zu (%s), ", f->name,
                  s->lines_run, s->lines, lp);
    if (f->branches)
        (void)fprintf(out, "branches %zu/%zu (%s)\n", s->br_taken, s->br, bp);
    else
        (void)fprintf(out, "branches not counted (%s)\n", f->why);
    for (ln = 1; ln <= f->src.nlines; ln++) {
        if (pol_line_counts(f, ln) && !f->run[ln]) {
            (void)fprintf(out, "%s%d", first ? "  not run: " : ", ", ln);
            first = 0;
        }
    }
    if (!first)
        (void)fputc('\n', out);
    if (f->branches)
        pol_print_branches(f, out);
}

void
pol_coverage_print(const struct pol_coverage *c, FILE *out)
{
    struct pol_csum s, t;
    char lp[48], bp[48];
    size_t i;

    if (c->failed[0] != '\0') {
        (void)fprintf(out, "coverage not available: %s\n", c->failed);
        return;
    }
    memset(&t, 0, sizeof(t));
    for (i = 0; i < c->nfiles; i++) {
        pol_cfile_sum(&c->files[i], &s);
        pol_print_file(&c->files[i], &s, out);
        t.lines += s.lines;
        t.lines_run += s.lines_run;
        t.br += s.br;
        t.br_taken += s.br_taken;
    }
    pol_pct(lp, sizeof(lp), t.lines_run, t.lines, 1);
    pol_pct(bp, sizeof(bp), t.br_taken, t.br, 1);
    (void)fprintf(out, "total: lines %zu/%zu (%s), branches %zu/%zu (%s)\n",
                  t.lines_run, t.lines, lp, t.br_taken, t.br, bp);
    if (c->mismatches > 0)
        (void)fprintf(out,
                      "coverage: %zu case(s) decided differently under "
                      "coverage (first: %s); the verdicts above are from "
                      "the plain engine, this report may be incomplete\n",
                      c->mismatches, c->mismatch);
}

static json_t *
pol_json_branches(const struct pol_cfile *f, const struct pol_csum *s)
{
    const struct pol_cover_cond *k;
    json_t *nt = json_array(), *o;
    size_t i;
    int out;

    for (i = 0; nt != NULL && i < f->src.nconds; i++) {
        k = &f->src.conds[i];
        for (out = 1; out >= 0; out--) {
            if (out ? f->hits[k->then_probe] > 0 : pol_cond_false(f, i))
                continue;
            o = json_pack("{s:i, s:s, s:b}", "line", k->line, "kind",
                          k->elseif ? "elseif" : "if", "outcome", out);
            if (o == NULL || json_array_append_new(nt, o) != 0) {
                json_decref(nt);
                return NULL;
            }
        }
    }
    /* "o" steals nt */
    return json_pack("{s:I, s:I, s:o}", "taken", (json_int_t)s->br_taken,
                     "total", (json_int_t)s->br, "not_taken", nt);
}

static json_t *
pol_json_file(const struct pol_cfile *f)
{
    struct pol_csum s;
    json_t *nr = json_array(), *br;
    int ln;

    pol_cfile_sum(f, &s);
    for (ln = 1; nr != NULL && ln <= f->src.nlines; ln++)
        if (pol_line_counts(f, ln) && !f->run[ln] &&
            json_array_append_new(nr, json_integer(ln)) != 0) {
            json_decref(nr);
            return NULL;
        }
    br = f->branches ? pol_json_branches(f, &s) : json_null();
    /* "o" steals nr and br */
    return json_pack("{s:s, s:{s:I, s:I, s:o}, s:o, s:s?}", "file", f->name,
                     "lines", "run", (json_int_t)s.lines_run, "total",
                     (json_int_t)s.lines, "not_run", nr, "branches", br,
                     "branches_note", f->branches ? NULL : f->why);
}

json_t *
pol_coverage_json(const struct pol_coverage *c)
{
    struct pol_csum s, t;
    json_t *files = json_array(), *f;
    size_t i;

    memset(&t, 0, sizeof(t));
    for (i = 0; files != NULL && c->failed[0] == '\0' && i < c->nfiles; i++) {
        f = pol_json_file(&c->files[i]);
        if (f == NULL || json_array_append_new(files, f) != 0) {
            json_decref(files);
            return NULL;
        }
        pol_cfile_sum(&c->files[i], &s);
        t.lines += s.lines;
        t.lines_run += s.lines_run;
        t.br += s.br;
        t.br_taken += s.br_taken;
    }
    /* "o" steals files */
    return json_pack("{s:o, s:{s:{s:I, s:I}, s:{s:I, s:I}}, s:I, s:s?}",
                     "files", files, "total", "lines", "run",
                     (json_int_t)t.lines_run, "total", (json_int_t)t.lines,
                     "branches", "taken", (json_int_t)t.br_taken, "total",
                     (json_int_t)t.br, "mismatches", (json_int_t)c->mismatches,
                     "error", c->failed[0] != '\0' ? c->failed : NULL);
}
