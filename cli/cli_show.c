/*
 * cli_show.c - approvals as a human reads them at a terminal (cli_show.h).
 *
 * Text is built in a capped buffer and written in one go, so a write error
 * is seen once. Every string from the PDP goes through one escaper that
 * decodes UTF-8 and replaces what a terminal would not show as it is
 * (controls, bidi overrides, zero-width and other invisible characters)
 * by \uXXXX; invalid UTF-8 bytes (the strict JSON reader lets none
 * through) become U+FFFD. Numbers are read as doubles by the strict reader
 * and written back in their canonical form.
 */
#include "cli_show.h"

#include <stdint.h>
#include <string.h>

#include "ig_canon.h"
#include "ig_json.h"
#include "ig_text.h"

#define BAD_CP 0xffffffffu
#define LABEL_WIDTH 13

/* One UTF-8 sequence at s (n > 0 bytes): its code point, or BAD_CP for an
   invalid byte (*used = 1). */
static uint32_t
utf8_next(const unsigned char *s, size_t n, size_t *used)
{
    uint32_t cp;
    size_t len, i;

    *used = 1;
    if (s[0] < 0x80)
        return s[0];
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2, cp = s[0] & 0x1fu;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3, cp = s[0] & 0x0fu;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4, cp = s[0] & 0x07u;
    } else {
        return BAD_CP;
    }
    if (len > n)
        return BAD_CP;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return BAD_CP;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return BAD_CP;
    *used = len;
    return cp;
}

static enum ig_status
add_u(struct ig_buf *b, uint32_t cp)
{
    char esc[16];
    int n;

    if (cp > 0xffff) { /* a surrogate pair, as JSON writes it */
        cp -= 0x10000;
        n = snprintf(esc, sizeof(esc), "\\u%04x\\u%04x",
                     (unsigned)(0xd800 + (cp >> 10)),
                     (unsigned)(0xdc00 + (cp & 0x3ff)));
    } else {
        n = snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
    }
    IG_ASSERT(n > 0 && (size_t)n < sizeof(esc));
    return ig_buf_add(b, esc, (size_t)n);
}

static enum ig_status
add_escaped(struct ig_buf *b, const char *s, size_t len, int json)
{
    const unsigned char *p = (const unsigned char *)s;
    enum ig_status st = IG_OK;
    size_t i = 0, used;
    uint32_t cp;

    while (st == IG_OK && i < len) {
        cp = utf8_next(p + i, len - i, &used);
        if (cp == BAD_CP)
            st = add_u(b, 0xfffd);
        else if (cp == '"' && json)
            st = ig_buf_adds(b, "\\\"");
        else if (cp == '\\')
            st = ig_buf_adds(b, "\\\\");
        else if (cp == '\n')
            st = ig_buf_adds(b, "\\n");
        else if (cp == '\t')
            st = ig_buf_adds(b, "\\t");
        else if (cp == '\r')
            st = ig_buf_adds(b, "\\r");
        else if (ig_utf8_hidden(cp))
            st = add_u(b, cp);
        else
            st = ig_buf_add(b, p + i, used);
        i += used;
    }
    return st;
}

enum ig_status
cli_json_quote(struct ig_buf *b, const char *s, size_t len)
{
    enum ig_status st;

    if ((st = ig_buf_addc(b, '"')) != IG_OK ||
        (st = add_escaped(b, s, len, 1)) != IG_OK)
        return st;
    return ig_buf_addc(b, '"');
}

enum ig_status
cli_text_safe(struct ig_buf *b, const char *s, size_t len)
{
    return add_escaped(b, s, len, 0);
}

static enum ig_status
add_indent(struct ig_buf *b, int n)
{
    enum ig_status st = IG_OK;

    while (st == IG_OK && n-- > 0)
        st = ig_buf_addc(b, ' ');
    return st;
}

static enum ig_status
add_number(struct ig_buf *b, const json_t *v)
{
    char num[IG_NUMBER_STRMAX];
    enum ig_status st;

    if (json_is_integer(v)) {
        if (snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
                     json_integer_value(v)) < 0)
            return IG_ERR_INVALID;
    } else if ((st = ig_canon_number(json_real_value(v), num, NULL)) != IG_OK) {
        return st;
    }
    return ig_buf_adds(b, num);
}

/* One member or element: indent, [key": "], value, separator. */
static enum ig_status
add_member(struct ig_buf *b, const char *key, const json_t *v, int indent,
           int last)
{
    enum ig_status st;

    if ((st = add_indent(b, indent)) != IG_OK)
        return st;
    if (key != NULL && ((st = cli_json_quote(b, key, strlen(key))) != IG_OK ||
                        (st = ig_buf_adds(b, ": ")) != IG_OK))
        return st;
    if ((st = cli_json_pretty(b, v, indent)) != IG_OK)
        return st;
    return ig_buf_adds(b, last ? "\n" : ",\n");
}

enum ig_status
cli_json_pretty(struct ig_buf *b, const json_t *v, int indent)
{
    json_t *o = ig_json_unconst(v), *m;
    const char *key;
    enum ig_status st = IG_OK;
    size_t i = 0, n;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
        if (n == 0)
            return ig_buf_adds(b, json_is_object(v) ? "{}" : "[]");
        if ((st = ig_buf_adds(b, json_is_object(v) ? "{\n" : "[\n")) != IG_OK)
            return st;
        if (json_is_object(v)) {
            json_object_foreach(o, key, m)
            {
                if ((st = add_member(b, key, m, indent + 2, ++i == n)) != IG_OK)
                    return st;
            }
        } else {
            json_array_foreach(o, i, m)
            {
                if ((st = add_member(b, NULL, m, indent + 2, i + 1 == n)) !=
                    IG_OK)
                    return st;
            }
        }
        if ((st = add_indent(b, indent)) != IG_OK)
            return st;
        return ig_buf_addc(b, json_is_object(v) ? '}' : ']');
    case JSON_STRING:
        return cli_json_quote(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
    case JSON_REAL:
        return add_number(b, v);
    case JSON_TRUE:
        return ig_buf_adds(b, "true");
    case JSON_FALSE:
        return ig_buf_adds(b, "false");
    case JSON_NULL:
        return ig_buf_adds(b, "null");
    }
    return IG_ERR_INVALID;
}

/* A value as text: a string as it is (made safe), "-" when absent, any
   other value as JSON whose later lines start at column `indent`. */
static enum ig_status
add_value(struct ig_buf *b, const json_t *v, int indent)
{
    if (v == NULL || json_is_null(v))
        return ig_buf_adds(b, "-");
    if (json_is_string(v))
        return cli_text_safe(b, json_string_value(v), json_string_length(v));
    return cli_json_pretty(b, v, indent);
}

static enum ig_status
add_label(struct ig_buf *b, const char *label)
{
    enum ig_status st = ig_buf_adds(b, label);

    if (st == IG_OK)
        st = add_indent(b, LABEL_WIDTH - (int)strlen(label));
    return st;
}

/* "Label        value\n" */
static enum ig_status
add_field(struct ig_buf *b, const char *label, const json_t *v)
{
    enum ig_status st;

    if ((st = add_label(b, label)) != IG_OK ||
        (st = add_value(b, v, LABEL_WIDTH)) != IG_OK)
        return st;
    return ig_buf_addc(b, '\n');
}

/* The strings of an array joined by ", " (made safe). */
static enum ig_status
add_joined(struct ig_buf *b, const json_t *arr)
{
    enum ig_status st = IG_OK;
    const json_t *s;
    size_t i;

    json_array_foreach(ig_json_unconst(arr), i, s)
    {
        if (i > 0 && (st = ig_buf_adds(b, ", ")) != IG_OK)
            return st;
        if ((st = add_value(b, s, 0)) != IG_OK)
            return st;
    }
    return st;
}

static int
flush(FILE *f, struct ig_buf *b, enum ig_status st)
{
    int rc = -1;

    if (st == IG_OK &&
        (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len) &&
        fflush(f) == 0)
        rc = 0;
    ig_buf_release(b);
    return rc;
}

/* ---- the list ---- */

enum {
    COL_ID,
    COL_ACTION,
    COL_RESOURCE,
    COL_WHO,
    COL_VOTES,
    COL_EXPIRES,
    NCOLS
};

static const char *const col_names[NCOLS] = {"ID",        "ACTION", "RESOURCE",
                                             "REQUESTER", "VOTES",  "EXPIRES"};
/* Widest a column may grow, in characters (ids are never cut). */
static const size_t col_max[NCOLS] = {64, 32, 40, 24, 9, 20};

/* Characters (code points) in s. */
static size_t
text_width(const char *s)
{
    size_t w = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

/* Cell text of summary a in column c (safe, not cut), into cell. */
static enum ig_status
cell_text(const json_t *a, int c, struct ig_buf *cell)
{
    const json_t *req = json_object_get(a, "requirements");
    static const char *const keys[NCOLS] = {
        "approval_id", "action", "resource", "principal", NULL, "expires_at"};
    enum ig_status st;

    ig_buf_reset(cell);
    if (c != COL_VOTES)
        st = add_value(cell, json_object_get(a, keys[c]), 0);
    else if ((st = add_value(cell, json_object_get(a, "approvals"), 0)) ==
                 IG_OK &&
             (st = ig_buf_addc(cell, '/')) == IG_OK)
        st = add_value(cell, json_object_get(req, "quorum"), 0);
    if (st == IG_OK && cell->data == NULL)
        st = ig_buf_adds(cell, "");
    return st;
}

/* Append cell cut to width w (with "..." when cut) and padded to pad. */
static enum ig_status
add_cell(struct ig_buf *b, const char *s, size_t w, size_t pad)
{
    size_t have = text_width(s), n = 0, chars = 0;
    enum ig_status st;

    if (have > w) {
        while (s[n] != '\0' && chars < w - 3)
            if (((unsigned char)s[++n] & 0xc0) != 0x80)
                chars++;
        if ((st = ig_buf_add(b, s, n)) != IG_OK ||
            (st = ig_buf_adds(b, "...")) != IG_OK)
            return st;
        have = w;
    } else if ((st = ig_buf_adds(b, s)) != IG_OK) {
        return st;
    }
    return add_indent(b, (int)(pad - have));
}

int
cli_show_list(FILE *f, const json_t *approvals)
{
    struct ig_buf out, cell;
    size_t width[NCOLS], i, w;
    enum ig_status st = IG_OK;
    const json_t *a;
    int c;

    ig_buf_init(&out, IG_CLI_SHOW_MAX_BYTES);
    ig_buf_init(&cell, IG_CLI_SHOW_MAX_BYTES);
    if (json_array_size(approvals) == 0) {
        st = ig_buf_adds(&out, "No pending approvals.\n");
        goto out;
    }
    for (c = 0; c < NCOLS; c++)
        width[c] = strlen(col_names[c]);
    json_array_foreach(ig_json_unconst(approvals), i, a)
    {
        for (c = 0; c < NCOLS && st == IG_OK; c++)
            if ((st = cell_text(a, c, &cell)) == IG_OK &&
                (w = text_width(cell.data)) > width[c])
                width[c] = w < col_max[c] ? w : col_max[c];
    }
    for (c = 0; c < NCOLS && st == IG_OK; c++)
        st = add_cell(&out, col_names[c], width[c],
                      c + 1 < NCOLS ? width[c] + 2 : 0);
    if (st == IG_OK)
        st = ig_buf_addc(&out, '\n');
    json_array_foreach(ig_json_unconst(approvals), i, a)
    {
        for (c = 0; c < NCOLS && st == IG_OK; c++)
            if ((st = cell_text(a, c, &cell)) == IG_OK)
                st = add_cell(&out, cell.data, width[c],
                              c + 1 < NCOLS ? width[c] + 2 : 0);
        if (st == IG_OK)
            st = ig_buf_addc(&out, '\n');
    }
out:
    ig_buf_release(&cell);
    return flush(f, &out, st);
}

/* ---- one approval ---- */

static enum ig_status
add_status(struct ig_buf *b, const json_t *view)
{
    const json_t *req = json_object_get(view, "requirements");
    enum ig_status st;

    if ((st = add_label(b, "Status")) != IG_OK ||
        (st = add_value(b, json_object_get(view, "status"), 0)) != IG_OK ||
        (st = ig_buf_adds(b, " (")) != IG_OK ||
        (st = add_value(b, json_object_get(view, "approvals"), 0)) != IG_OK ||
        (st = ig_buf_adds(b, " of ")) != IG_OK ||
        (st = add_value(b, json_object_get(req, "quorum"), 0)) != IG_OK ||
        (st = ig_buf_adds(b, " approvals; groups: ")) != IG_OK ||
        (st = add_joined(b, json_object_get(req, "groups"))) != IG_OK)
        return st;
    return ig_buf_adds(b, ")\n");
}

/* "Label        a, b, c\n" for an array of strings */
static enum ig_status
add_list_field(struct ig_buf *b, const char *label, const json_t *arr)
{
    enum ig_status st;

    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return add_field(b, label, NULL);
    if ((st = add_label(b, label)) != IG_OK ||
        (st = add_joined(b, arr)) != IG_OK)
        return st;
    return ig_buf_addc(b, '\n');
}

static enum ig_status
add_votes(struct ig_buf *b, const json_t *votes)
{
    static const char *const parts[] = {"vote",    " by ", "approver",
                                        " (",      "name", ") via ",
                                        "channel", " at ", "at"};
    enum ig_status st = add_label(b, "Votes");
    const json_t *v, *comment;
    size_t i, k;

    if (st == IG_OK && json_array_size(votes) == 0)
        return ig_buf_adds(b, "none\n");
    json_array_foreach(ig_json_unconst(votes), i, v)
    {
        if (i > 0 && st == IG_OK)
            st = add_indent(b, LABEL_WIDTH);
        for (k = 0; k < sizeof(parts) / sizeof(parts[0]) && st == IG_OK; k++)
            st = k % 2 ? ig_buf_adds(b, parts[k])
                       : add_value(b, json_object_get(v, parts[k]), 0);
        comment = json_object_get(v, "comment");
        if (st == IG_OK && json_string_length(comment) > 0 &&
            (st = ig_buf_adds(b, ": ")) == IG_OK)
            st = cli_json_quote(b, json_string_value(comment),
                                json_string_length(comment));
        if (st == IG_OK)
            st = ig_buf_addc(b, '\n');
    }
    return st;
}

static enum ig_status
add_resolution(struct ig_buf *b, const json_t *res)
{
    const json_t *reasons = json_object_get(res, "reasons");
    enum ig_status st;

    if (res == NULL || json_is_null(res))
        return IG_OK;
    if ((st = add_label(b, "Resolution")) != IG_OK ||
        (st = add_value(b, json_object_get(res, "result"), 0)) != IG_OK ||
        (st = ig_buf_adds(b, " at ")) != IG_OK ||
        (st = add_value(b, json_object_get(res, "resolved_at"), 0)) != IG_OK)
        return st;
    if (json_object_get(res, "decision") != NULL &&
        ((st = ig_buf_adds(b, ", decision ")) != IG_OK ||
         (st = add_value(b, json_object_get(res, "decision"), 0)) != IG_OK))
        return st;
    if (json_array_size(reasons) > 0 &&
        ((st = ig_buf_adds(b, " (")) != IG_OK ||
         (st = add_joined(b, reasons)) != IG_OK ||
         (st = ig_buf_addc(b, ')')) != IG_OK))
        return st;
    return ig_buf_addc(b, '\n');
}

static enum ig_status
add_you(struct ig_buf *b, const json_t *view)
{
    enum ig_status st = add_label(b, "You");

    if (st != IG_OK)
        return st;
    if (json_is_true(json_object_get(view, "can_vote")))
        return ig_buf_adds(b, "may vote\n");
    if ((st = ig_buf_adds(b, "cannot vote: ")) != IG_OK ||
        (st = add_value(b, json_object_get(view, "cannot_vote"), 0)) != IG_OK)
        return st;
    return ig_buf_addc(b, '\n');
}

/* What the PDP established about who asked: the authenticated agent and
   the approvers the config says run it. */
static enum ig_status
add_agent(struct ig_buf *b, const json_t *view, const json_t *intent)
{
    const json_t *ops = json_object_get(view, "operators");
    enum ig_status st;

    if ((st = add_label(b, "Agent")) != IG_OK ||
        (st = add_value(b, json_object_get(intent, "principal"), 0)) != IG_OK ||
        (st = ig_buf_adds(b, " (authenticated)\n")) != IG_OK)
        return st;
    if (json_array_size(ops) == 0)
        return IG_OK;
    if ((st = add_label(b, "Run by")) != IG_OK ||
        (st = add_joined(b, ops)) != IG_OK)
        return st;
    return ig_buf_adds(b, " (config)\n");
}

/* The agent's context: what it says about itself, labelled a claim. */
static enum ig_status
add_claims(struct ig_buf *b, const json_t *ctx)
{
    enum ig_status st;

    if ((st = add_label(b, "Context")) != IG_OK ||
        (st = ig_buf_adds(b, "(claimed by the agent, not verified) ")) !=
            IG_OK ||
        (st = ctx != NULL ? add_value(b, ctx, LABEL_WIDTH)
                          : ig_buf_adds(b, "{}")) != IG_OK)
        return st;
    return ig_buf_addc(b, '\n');
}

int
cli_show_approval(FILE *f, const json_t *view)
{
    static const char *const intent_fields[][2] = {
        {"Action", "action"}, {"Resource", "resource"}, {"Params", "params"}};
    const json_t *intent = json_object_get(view, "intent");
    const json_t *d = json_object_get(view, "decision");
    enum ig_status st;
    struct ig_buf out;
    size_t i;

    ig_buf_init(&out, IG_CLI_SHOW_MAX_BYTES);
    st = add_field(&out, "Approval", json_object_get(view, "approval_id"));
    if (st == IG_OK)
        st = add_status(&out, view);
    if (st == IG_OK)
        st = add_field(&out, "Decide by", json_object_get(view, "expires_at"));
    for (i = 0;
         i < sizeof(intent_fields) / sizeof(intent_fields[0]) && st == IG_OK;
         i++)
        st = add_field(&out, intent_fields[i][0],
                       json_object_get(intent, intent_fields[i][1]));
    if (st == IG_OK)
        st = add_agent(&out, view, intent);
    if (st == IG_OK)
        st = add_field(&out, "Tenant", json_object_get(intent, "tenant"));
    if (st == IG_OK)
        st = add_claims(&out, json_object_get(intent, "context"));
    if (st == IG_OK)
        st = add_field(&out, "Created", json_object_get(intent, "created_at"));
    if (st == IG_OK)
        st = add_field(&out, "Expires", json_object_get(intent, "expires_at"));
    if (st == IG_OK)
        st = add_list_field(&out, "Reasons", json_object_get(d, "reasons"));
    if (st == IG_OK)
        st = add_field(&out, "Message", json_object_get(d, "message"));
    if (st == IG_OK)
        st = add_field(&out, "Policy", json_object_get(d, "policy_revision"));
    if (st == IG_OK)
        st = add_field(&out, "Intent", json_object_get(view, "intent_id"));
    if (st == IG_OK)
        st = add_field(&out, "Intent hash",
                       json_object_get(view, "intent_hash"));
    if (st == IG_OK)
        st = add_votes(&out, json_object_get(view, "votes"));
    if (st == IG_OK)
        st = add_resolution(&out, json_object_get(view, "resolution"));
    if (st == IG_OK)
        st = add_you(&out, view);
    return flush(f, &out, st);
}
