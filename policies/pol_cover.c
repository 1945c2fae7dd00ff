/*
 * pol_cover.c - the branch-probe instrumenter behind `policy test
 * --coverage` (pol_cover.h tells the contract).
 *
 * How it works: one pass over the source with a small Lua 5.4 lexer. It
 * knows exactly the token shapes that can hide a keyword - short strings
 * and their escapes (\z, \ followed by a line break), long strings and
 * comments at any level ([==[ ]==]), numbers touching letters - and
 * counts line breaks as Lua does (\n, \r, \r\n, \n\r are one each).
 * Every keyword outside those drives a block stack:
 *   function ... end          if ... then ... [elseif ... then ...]
 *   do ... end                     [else ...] end
 *   while/for ... do ... end  repeat ... until
 * An `if` records a condition per `then`; the probe after a `then` counts
 * "this condition was true", and the chain's else probe (written by the
 * author, or added before the `end`) together with the later conditions'
 * probes counts "it was false". Insertions hold no line break, so every
 * line keeps its number and every message its line. Anything the stack
 * cannot place (a stray `end`, `then` outside an if, an unclosed block)
 * stops the instrumenting - the file is then covered by lines only; the
 * original source, never a guess, is what runs.
 */
#include "pol_cover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ig_buf.h"

enum { BLK_FN, BLK_IF, BLK_LOOP, BLK_DO, BLK_REPEAT };
enum { TK_EOF, TK_NAME, TK_DOTS, TK_SEMI, TK_OTHER, TK_BAD };

struct pol_blk {
    int kind;
    int cond;     /* if: in a condition; while/for: before its `do` */
    int has_else; /* if */
    size_t first; /* if: its first condition */
    size_t last;  /* if: its latest condition */
    size_t paren; /* function: 1 + offset of its "(", 0 before it */
    int pline;    /* function: line of its "(" */
};

struct pol_lex {
    const char *s;
    size_t n, i;
    int line;
    /* the token just read */
    int tk;
    size_t start, len;
    int tline;
    /* output */
    struct ig_buf out;
    size_t copied; /* source bytes copied to out */
    struct pol_blk *stk;
    size_t depth, stkcap;
    size_t condcap, fncap;
    int fndepth;
    int nomem;
    struct pol_cover_src *r;
};

static int
pol_is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
pol_is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int
pol_is_xdigit(int c)
{
    return pol_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
pol_cur(const struct pol_lex *x, size_t k)
{
    return x->i + k < x->n ? (unsigned char)x->s[x->i + k] : -1;
}

/* At a line break: skip it (one of \n \r \r\n \n\r) and count it. */
static void
pol_newline(struct pol_lex *x)
{
    int c = pol_cur(x, 0);

    x->i++;
    if ((pol_cur(x, 0) == '\n' || pol_cur(x, 0) == '\r') && pol_cur(x, 0) != c)
        x->i++;
    x->line++;
}

/* The level of a long bracket opening at x->i ("[", "="*, "["), or -1. */
static int
pol_long_open(const struct pol_lex *x)
{
    size_t k = 1;

    while (pol_cur(x, k) == '=')
        k++;
    return pol_cur(x, k) == '[' ? (int)k - 1 : -1;
}

/* Skip a long string or comment of level lvl opening at x->i; 0 if open. */
static int
pol_long_skip(struct pol_lex *x, int lvl)
{
    size_t k;

    x->i += (size_t)lvl + 2;
    while (x->i < x->n) {
        if (x->s[x->i] == '\n' || x->s[x->i] == '\r') {
            pol_newline(x);
            continue;
        }
        if (x->s[x->i] == ']') {
            for (k = 1; pol_cur(x, k) == '='; k++)
                ;
            if (pol_cur(x, k) == ']' && (int)k - 1 == lvl) {
                x->i += k + 1;
                return 1;
            }
        }
        x->i++;
    }
    return 0;
}

/* Skip a short string opening at x->i; 0 when it does not close. */
static int
pol_short_skip(struct pol_lex *x)
{
    int q = pol_cur(x, 0), c;

    x->i++;
    while ((c = pol_cur(x, 0)) != q) {
        if (c == -1 || c == '\n' || c == '\r')
            return 0;
        x->i++;
        if (c != '\\')
            continue;
        c = pol_cur(x, 0);
        if (c == '\n' || c == '\r') {
            pol_newline(x);
        } else if (c == 'z') {
            x->i++;
            while ((c = pol_cur(x, 0)) == ' ' || c == '\t' || c == '\f' ||
                   c == '\v' || c == '\n' || c == '\r') {
                if (c == '\n' || c == '\r')
                    pol_newline(x);
                else
                    x->i++;
            }
        } else if (c != -1) {
            x->i++;
        }
    }
    x->i++;
    return 1;
}

/* A numeral as llex.c reads it; 0 when it touches a letter (Lua refuses). */
static int
pol_number_skip(struct pol_lex *x)
{
    const char *expo = "Ee";
    int c;

    if (pol_cur(x, 0) == '0' &&
        (pol_cur(x, 1) == 'x' || pol_cur(x, 1) == 'X')) {
        expo = "Pp";
        x->i += 2;
    }
    for (;;) {
        c = pol_cur(x, 0);
        if (c != -1 && (c == expo[0] || c == expo[1])) {
            x->i++;
            if (pol_cur(x, 0) == '+' || pol_cur(x, 0) == '-')
                x->i++;
        } else if (pol_is_xdigit(c) || c == '.') {
            x->i++;
        } else {
            break;
        }
    }
    return !pol_is_alpha(pol_cur(x, 0)) && !pol_is_digit(pol_cur(x, 0));
}

/* Mark the lines from..to as holding a token that is not quiet. */
static void
pol_loud(struct pol_lex *x, int from, int to)
{
    for (; from <= to && from <= x->r->nlines; from++)
        x->r->quiet[from] = 0;
}

/* Skip blanks and comments; 0 on an unclosed long comment. */
static int
pol_skip_space(struct pol_lex *x)
{
    int c, lvl;

    while ((c = pol_cur(x, 0)) != -1) {
        if (c == '\n' || c == '\r') {
            pol_newline(x);
        } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
            x->i++;
        } else if (c == '-' && pol_cur(x, 1) == '-') {
            x->i += 2;
            if (pol_cur(x, 0) == '[' && (lvl = pol_long_open(x)) >= 0) {
                if (!pol_long_skip(x, lvl))
                    return 0;
                continue;
            }
            while ((c = pol_cur(x, 0)) != -1 && c != '\n' && c != '\r')
                x->i++;
        } else {
            break;
        }
    }
    return 1;
}

/* Read the next token into x->tk/start/len/tline. */
static void
pol_next(struct pol_lex *x)
{
    int c, lvl, ok = 1;

    x->tk = TK_BAD;
    if (!pol_skip_space(x))
        return;
    x->start = x->i;
    x->tline = x->line;
    c = pol_cur(x, 0);
    if (c == -1) {
        x->tk = TK_EOF;
    } else if (pol_is_alpha(c)) {
        while (pol_is_alpha(pol_cur(x, 0)) || pol_is_digit(pol_cur(x, 0)))
            x->i++;
        x->tk = TK_NAME;
    } else if (pol_is_digit(c) || (c == '.' && pol_is_digit(pol_cur(x, 1)))) {
        ok = pol_number_skip(x);
        x->tk = TK_OTHER;
    } else if (c == '"' || c == '\'') {
        ok = pol_short_skip(x);
        x->tk = TK_OTHER;
    } else if (c == '[' && (lvl = pol_long_open(x)) >= 0) {
        ok = pol_long_skip(x, lvl);
        x->tk = TK_OTHER;
    } else if (c == '.' && pol_cur(x, 1) == '.' && pol_cur(x, 2) == '.') {
        x->i += 3;
        x->tk = TK_DOTS;
    } else {
        x->i += c == ':' && pol_cur(x, 1) == ':' ? 2 : 1;
        x->tk = c == ';' ? TK_SEMI : TK_OTHER;
    }
    if (!ok)
        x->tk = TK_BAD;
    x->len = x->i - x->start;
}

static int
pol_tok_is(const struct pol_lex *x, const char *kw)
{
    size_t n = strlen(kw);

    return x->tk == TK_NAME && x->len == n &&
           memcmp(x->s + x->start, kw, n) == 0;
}

/* Stop instrumenting: the file is covered by lines only. */
static void
pol_give_up(struct pol_lex *x, const char *what)
{
    if (x->r->why[0] == '\0')
        (void)snprintf(x->r->why, sizeof(x->r->why), "line %d: %s", x->tline,
                       what);
}

/* Copy the source up to at, then add " __igcov(N);" (or with else). */
static void
pol_insert(struct pol_lex *x, size_t at, int with_else, size_t probe)
{
    char text[64];

    (void)snprintf(text, sizeof(text), " %s" POL_COVER_PROBE "(%zu);",
                   with_else ? "else " : "", probe);
    if (ig_buf_add(&x->out, x->s + x->copied, at - x->copied) != IG_OK ||
        ig_buf_adds(&x->out, text) != IG_OK)
        x->nomem = 1;
    x->copied = at;
}

static struct pol_blk *
pol_push(struct pol_lex *x, int kind, int cond)
{
    struct pol_blk *b;

    if (x->depth == x->stkcap) {
        b = realloc(x->stk, (x->stkcap * 2 + 16) * sizeof(*b));
        if (b == NULL) {
            x->nomem = 1;
            return NULL;
        }
        x->stk = b;
        x->stkcap = x->stkcap * 2 + 16;
    }
    b = &x->stk[x->depth++];
    memset(b, 0, sizeof(*b));
    b->kind = kind;
    b->cond = cond;
    if (kind == BLK_FN)
        x->fndepth++;
    return b;
}

static struct pol_blk *
pol_top(struct pol_lex *x)
{
    return x->depth > 0 ? &x->stk[x->depth - 1] : NULL;
}

/* A new condition at this `if`/`elseif`; its index, or -1 (no memory). */
static long
pol_new_cond(struct pol_lex *x, int elseif)
{
    struct pol_cover_src *r = x->r;
    struct pol_cover_cond *c;

    if (r->nconds == x->condcap) {
        c = realloc(r->conds, (x->condcap * 2 + 8) * sizeof(*c));
        if (c == NULL) {
            x->nomem = 1;
            return -1;
        }
        r->conds = c;
        x->condcap = x->condcap * 2 + 8;
    }
    c = &r->conds[r->nconds];
    memset(c, 0, sizeof(*c));
    c->line = x->tline;
    c->elseif = elseif;
    return (long)r->nconds++;
}

/* The chain of b gets its else probe (written or added). */
static void
pol_close_chain(struct pol_lex *x, const struct pol_blk *b, size_t probe)
{
    size_t i = b->first + 1;

    while (i != 0) {
        x->r->conds[i - 1].else_probe = probe;
        i = x->r->conds[i - 1].next;
    }
}

/* if, elseif, then, else: the if-chain keywords. */
static void
pol_if_word(struct pol_lex *x, struct pol_blk *t)
{
    long c;

    if (pol_tok_is(x, "if")) {
        if ((c = pol_new_cond(x, 0)) >= 0 && (t = pol_push(x, BLK_IF, 1)))
            t->first = t->last = (size_t)c;
    } else if (t == NULL || t->kind != BLK_IF) {
        pol_give_up(x, "then/elseif/else outside an if");
    } else if (pol_tok_is(x, "elseif")) {
        if (t->cond || t->has_else)
            pol_give_up(x, "misplaced elseif");
        else if ((c = pol_new_cond(x, 1)) >= 0) {
            x->r->conds[t->last].next = (size_t)c + 1;
            t->last = (size_t)c;
            t->cond = 1;
        }
    } else if (pol_tok_is(x, "then")) {
        if (!t->cond) {
            pol_give_up(x, "misplaced then");
            return;
        }
        t->cond = 0;
        x->r->conds[t->last].then_probe = ++x->r->nprobes;
        pol_insert(x, x->i, 0, x->r->nprobes);
    } else if (t->cond || t->has_else) {
        pol_give_up(x, "misplaced else");
    } else {
        t->has_else = 1;
        pol_close_chain(x, t, ++x->r->nprobes);
        pol_insert(x, x->i, 0, x->r->nprobes);
    }
}

/* The function block t closes at the current `end`: remember its text. */
static void
pol_add_fn(struct pol_lex *x, const struct pol_blk *t)
{
    struct pol_cover_src *r = x->r;
    struct pol_cover_fn *f;

    if (t->paren == 0)
        return;
    if (r->nfns == x->fncap) {
        f = realloc(r->fns, (x->fncap * 2 + 8) * sizeof(*f));
        if (f == NULL) {
            x->nomem = 1;
            return;
        }
        r->fns = f;
        x->fncap = x->fncap * 2 + 8;
    }
    f = &r->fns[r->nfns++];
    f->from = t->paren - 1;
    f->to = x->i;
    f->line = t->pline;
}

static void
pol_end_word(struct pol_lex *x, struct pol_blk *t)
{
    if (t == NULL || t->cond || t->kind == BLK_REPEAT) {
        pol_give_up(x, "an `end` that closes nothing");
        return;
    }
    if (t->kind == BLK_IF && !t->has_else) {
        pol_close_chain(x, t, ++x->r->nprobes);
        pol_insert(x, x->start, 1, x->r->nprobes);
    }
    if (t->kind == BLK_FN) {
        x->fndepth--;
        pol_add_fn(x, t);
    }
    x->depth--;
}

/* One keyword or name: move the block stack, insert probes. */
static void
pol_word(struct pol_lex *x)
{
    struct pol_blk *t = pol_top(x);

    if (pol_tok_is(x, "if") || pol_tok_is(x, "elseif") ||
        pol_tok_is(x, "then") || pol_tok_is(x, "else")) {
        pol_if_word(x, t);
    } else if (pol_tok_is(x, "end")) {
        pol_end_word(x, t);
    } else if (pol_tok_is(x, "function")) {
        (void)pol_push(x, BLK_FN, 0);
    } else if (pol_tok_is(x, "while") || pol_tok_is(x, "for")) {
        (void)pol_push(x, BLK_LOOP, 1);
    } else if (pol_tok_is(x, "do")) {
        if (t != NULL && t->kind == BLK_LOOP && t->cond)
            t->cond = 0;
        else
            (void)pol_push(x, BLK_DO, 0);
    } else if (pol_tok_is(x, "repeat")) {
        (void)pol_push(x, BLK_REPEAT, 0);
    } else if (pol_tok_is(x, "until")) {
        if (t == NULL || t->kind != BLK_REPEAT)
            pol_give_up(x, "an `until` without its repeat");
        else
            x->depth--;
    } else if (pol_tok_is(x, POL_COVER_PROBE)) {
        pol_give_up(x, "the source uses the name " POL_COVER_PROBE);
    }
}

/* Lines as Lua counts them. */
static int
pol_count_lines(const char *s, size_t n)
{
    struct pol_lex x;

    memset(&x, 0, sizeof(x));
    x.s = s;
    x.n = n;
    x.line = 1;
    while (x.i < n) {
        if (s[x.i] == '\n' || s[x.i] == '\r')
            pol_newline(&x);
        else
            x.i++;
    }
    return x.line;
}

static void
pol_scan(struct pol_lex *x)
{
    int quiet;

    for (pol_next(x); x->tk != TK_EOF && !x->nomem; pol_next(x)) {
        if (x->tk == TK_BAD) {
            pol_give_up(x, "a string, comment or number Lua would refuse");
            return;
        }
        quiet = x->tk == TK_SEMI || pol_tok_is(x, "end") ||
                pol_tok_is(x, "else") || pol_tok_is(x, "then") ||
                pol_tok_is(x, "do");
        if (!quiet)
            pol_loud(x, x->tline, x->line);
        if (x->r->why[0] != '\0')
            continue; /* keep marking lines, stop placing probes */
        if (x->tk == TK_NAME)
            pol_word(x);
        else if (x->tk == TK_OTHER && x->s[x->start] == '(' && x->depth > 0 &&
                 x->stk[x->depth - 1].kind == BLK_FN &&
                 x->stk[x->depth - 1].paren == 0) {
            x->stk[x->depth - 1].paren = x->start + 1;
            x->stk[x->depth - 1].pline = x->tline;
        } else if (x->tk == TK_DOTS && x->fndepth == 0)
            pol_give_up(x, "the main chunk uses `...`");
    }
    x->tline = x->line;
    if (x->depth > 0 && !x->nomem)
        pol_give_up(x, "a block is not closed at the end of the file");
}

enum ig_status
pol_cover_instrument(const char *src, size_t len, struct pol_cover_src *out)
{
    struct pol_lex x;

    memset(out, 0, sizeof(*out));
    memset(&x, 0, sizeof(x));
    x.s = src;
    x.n = len;
    x.line = 1;
    x.r = out;
    out->nlines = pol_count_lines(src, len);
    out->quiet = malloc((size_t)out->nlines + 1);
    /* Each probe is at most 40 bytes and needs a 3-byte keyword or more. */
    ig_buf_init(&x.out, 64 + len * 16);
    if (out->quiet == NULL ||
        ig_buf_adds(&x.out, "local " POL_COVER_PROBE " = ...;") != IG_OK)
        x.nomem = 1;
    else
        memset(out->quiet, 1, (size_t)out->nlines + 1);
    if (!x.nomem)
        pol_scan(&x);
    if (!x.nomem && out->why[0] == '\0') {
        if (ig_buf_add(&x.out, src + x.copied, len - x.copied) != IG_OK ||
            (out->text = ig_buf_take(&x.out, &out->len)) == NULL)
            x.nomem = 1;
    }
    ig_buf_release(&x.out);
    free(x.stk);
    if (x.nomem) {
        pol_cover_src_release(out);
        return IG_ERR_NOMEM;
    }
    return IG_OK;
}

void
pol_cover_src_release(struct pol_cover_src *s)
{
    free(s->text);
    free(s->conds);
    free(s->quiet);
    free(s->fns);
    memset(s, 0, sizeof(*s));
}
