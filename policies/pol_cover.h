/*
 * pol_cover.h - policy coverage, for the test runner only: the source
 * instrumenter that adds branch probes (pol_cover.c), the collector of
 * lines and branches (pol_cover_run.c), and the watch pol_vm.c offers so
 * the test runner can see a state's lines without pol_vm.c knowing about
 * coverage. The server never sets a watch: its engines keep only their
 * count hook.
 */
#ifndef POL_COVER_H
#define POL_COVER_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "ig_error.h"
#include "pol.h"

/* The name of the probe function in instrumented source (a local of the
   chunk: the instrumented chunk starts with "local __igcov = ...;"). */
#define POL_COVER_PROBE "__igcov"

/* Instructions a probe call costs (upvalue or local, constant, call); the
   probe gives them back to the budget so coverage keeps it as it was. */
#define POL_COVER_PROBE_COST 3

/* One `if` or `elseif` condition and where its outcomes are counted. */
struct pol_cover_cond {
    int line;          /* line of the `if` or `elseif` keyword */
    int elseif;        /* 1 for `elseif` */
    size_t then_probe; /* probe right after its `then`: it was true */
    size_t else_probe; /* probe of the chain's else, written or added */
    size_t next;       /* 1 + index of the chain's next condition; 0 none */
};

/* A function of the source: from its parameter list's "(" to its "end". */
struct pol_cover_fn {
    size_t from, to; /* byte offsets, to just past the "end" */
    int line;        /* line of the "(" */
};

/*
 * An instrumented file. text is the source with probes added - the same
 * lines, each with text inserted and nothing removed - or NULL when the
 * instrumenter could not place every block (why says where); quiet marks
 * the lines holding nothing but `end`, `else`, `then`, `do` or `;`, which
 * coverage does not count (the probes give some of them code); fns lists
 * the functions, so their lines can be known before any is created.
 */
struct pol_cover_src {
    char *text;
    size_t len;
    struct pol_cover_cond *conds;
    size_t nconds;
    size_t nprobes; /* probes are numbered 1..nprobes */
    int nlines;
    unsigned char *quiet; /* [nlines + 1] */
    /* every function whose block closed (filled even when text is NULL,
       for the blocks matched before the instrumenter stopped) */
    struct pol_cover_fn *fns;
    size_t nfns;
    char why[128];
};

/*
 * Instrument src (len bytes, any bytes): tokenize it as Lua 5.4 does
 * (names, keywords, numbers, short strings with escapes, long strings and
 * comments, Lua's line breaks) and match blocks with a stack over
 * function, if, do/while/for and repeat. Then, on the same line: after
 * each `then` and `else` a call " __igcov(N);", before the `end` of an
 * if-chain with no else " else __igcov(N);", and at the very start
 * "local __igcov = ...;". A source that uses the name __igcov or `...` in
 * its main chunk, or whose blocks do not match, is not instrumented
 * (text NULL, why set). IG_OK, or IG_ERR_NOMEM (out released). Pure:
 * thread safe, no Lua. Release with pol_cover_src_release().
 */
enum ig_status pol_cover_instrument(const char *src, size_t len,
                                    struct pol_cover_src *out) IG_WUR;
void pol_cover_src_release(struct pol_cover_src *s);

/* ---- pol_vm.c: the test runner's watch on its engines ---- */

/*
 * Callbacks pol_vm.c makes on the thread the watch is set on. file: the
 * index of a policy file to cover, or -1 (loaded as it is). source: its
 * instrumented source, or NULL for lines only. fallback: the instrumented
 * source did not compile (why), the original is used. reach: the value at
 * stack index idx (a chunk, or what it returned) was reached from file.
 * line: a line event (ar from the hook). probe: probe n of file ran.
 */
struct pol_vm_watch {
    void *ctx;
    int (*file)(void *ctx, const char *name);
    const char *(*source)(void *ctx, int file, size_t *len);
    void (*fallback)(void *ctx, int file, const char *why);
    void (*reach)(void *ctx, lua_State *L, int file, int idx);
    void (*line)(void *ctx, lua_State *L, lua_Debug *ar);
    void (*probe)(void *ctx, int file, lua_Integer n);
};

/*
 * Watch the policy states of this thread with w (borrowed until the next
 * call) from now on, or stop with NULL. While set, pol_vm_begin() adds a
 * line hook and pol_vm_load() asks w for each file. Thread-local.
 */
void pol_vm_watch(const struct pol_vm_watch *w);

/* ---- pol_cover_run.c: the collector ---- */

struct pol_file;

/* A collector for the policy files (instrumented here). IG_ERR_NOMEM. */
enum ig_status pol_coverage_new(const struct pol_file *files, size_t n,
                                struct pol_coverage **out) IG_WUR;
/* Fill w with c's callbacks. */
void pol_coverage_watch(struct pol_coverage *c, struct pol_vm_watch *w);
/* Coverage could not run at all (why): the report says so. */
void pol_coverage_fail(struct pol_coverage *c, const char *why);
/* A case decided differently under coverage (a bug): the report says so. */
void pol_coverage_mismatch(struct pol_coverage *c, const char *file,
                           const char *name);

#endif
