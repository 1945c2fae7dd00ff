/*
 * appr_html.c - HTML escaping, JSON pretty-printing and the page layout
 * shared by the approval pages (see appr_html.h; the pages themselves are
 * in appr_html_pages.c).
 *
 * Escaping copies runs of harmless bytes at once and writes an entity for
 * each of & < > " '. The "visible" variants also decode UTF-8 to spot the
 * characters that would make text read differently from what it is
 * (controls, bidi embeddings and overrides, zero-width characters) and
 * write them as [U+XXXX] (ig_utf8_hidden: the list the CLI and Slack use
 * too). JSON is printed by appr_show.c into a scratch buffer (same cap as
 * the page) and escaped in one pass.
 */
#include "appr_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_html_int.h"
#include "appr_show.h"
#include "ig_canon.h"
#include "ig_json.h"
#include "ig_text.h"

/* ---- escaping ---- */

static const char *
entity(unsigned char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&#39;";
    case '\0':
        return "\xEF\xBF\xBD"; /* U+FFFD: HTML has no NUL */
    default:
        return NULL;
    }
}

enum ig_status
appr_html_escape(struct ig_buf *b, const char *s, size_t n)
{
    size_t i, run = 0;
    enum ig_status st;
    const char *e;

    for (i = 0; i < n; i++) {
        if ((e = entity((unsigned char)s[i])) == NULL)
            continue;
        if ((st = ig_buf_add(b, s + run, i - run)) != IG_OK ||
            (st = ig_buf_adds(b, e)) != IG_OK)
            return st;
        run = i + 1;
    }
    return ig_buf_add(b, s + run, n - run);
}

enum ig_status
appr_html_escape_str(struct ig_buf *b, const char *s)
{
    return s != NULL ? appr_html_escape(b, s, strlen(s)) : IG_OK;
}

/* The code point of the UTF-8 sequence at s (n bytes left) and its length
   in *k; a stray byte decodes as itself, length 1. */
static unsigned long
utf8_next(const unsigned char *s, size_t n, size_t *k)
{
    unsigned long cp;
    size_t len, j;

    if (s[0] < 0xC2 || s[0] > 0xF4) {
        *k = 1;
        return s[0];
    }
    len = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
    cp = s[0] & (0x7Fu >> len);
    for (j = 1; j < len; j++) {
        if (j >= n || (s[j] & 0xC0) != 0x80) {
            *k = 1;
            return s[0];
        }
        cp = (cp << 6) | (s[j] & 0x3Fu);
    }
    *k = len;
    return cp;
}

/* Escape, writing controls (except newlines when lines) and the other
   characters ig_utf8_hidden() names as [U+XXXX]. */
static enum ig_status
text_visible(struct ig_buf *b, const char *s, size_t n, int lines)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0, k;
    unsigned long cp;
    char mark[16];
    enum ig_status st;

    while (i < n) {
        cp = utf8_next(u + i, n - i, &k);
        if (ig_utf8_hidden((uint32_t)cp) &&
            !(lines && (cp == '\n' || cp == '\r' || cp == '\t'))) {
            (void)snprintf(mark, sizeof(mark), "[U+%04lX]", cp);
            if ((st = appr_html_escape(b, s + run, i - run)) != IG_OK ||
                (st = ig_buf_adds(b, mark)) != IG_OK)
                return st;
            run = i + k;
        }
        i += k;
    }
    return appr_html_escape(b, s + run, n - run);
}

enum ig_status
appr_html_text(struct ig_buf *b, const char *s, size_t n)
{
    return text_visible(b, s, n, 0);
}

/* ---- JSON, pretty (appr_show.c), and numbers ---- */

/* A number as text: integers exactly, reals as RFC 8785 writes them. */
static enum ig_status
number_text(const json_t *v, char out[IG_NUMBER_STRMAX])
{
    if (json_is_integer(v)) {
        (void)snprintf(out, IG_NUMBER_STRMAX, "%" JSON_INTEGER_FORMAT,
                       json_integer_value(v));
        return IG_OK;
    }
    return ig_canon_number(json_real_value(v), out, NULL);
}

enum ig_status
appr_html_json(struct ig_buf *b, const json_t *v)
{
    struct ig_buf t;
    enum ig_status st;

    if (v == NULL)
        return ig_buf_adds(b, "null");
    ig_buf_init(&t, b->max);
    st = appr_show_json(&t, v, 0);
    if (st == IG_OK)
        st = appr_html_escape(b, t.data != NULL ? t.data : "", t.len);
    ig_buf_release(&t);
    return st;
}

/* ---- static files ---- */

const char *
appr_html_css(size_t *len)
{
    const struct ig_embedded_file *f = appr_static_files;

    while (f->name != NULL && strcmp(f->name, "style.css") != 0)
        f++;
    IG_ASSERT(f->name != NULL);
    if (len != NULL)
        *len = f->len;
    return (const char *)f->data;
}

/* ---- the sticky writer ---- */

void
appr_w_raw(struct appr_w *w, const char *s)
{
    if (w->st == IG_OK)
        w->st = ig_buf_adds(w->b, s);
}

void
appr_w_esc(struct appr_w *w, const char *s)
{
    if (w->st == IG_OK)
        w->st = appr_html_escape_str(w->b, s);
}

static void
value_out(struct appr_w *w, const json_t *v, int lines)
{
    char num[IG_NUMBER_STRMAX];

    if (w->st != IG_OK)
        return;
    if (json_is_string(v))
        w->st = text_visible(w->b, json_string_value(v), json_string_length(v),
                             lines);
    else if (json_is_number(v) && number_text(v, num) == IG_OK)
        w->st = ig_buf_adds(w->b, num);
    else
        w->st = ig_buf_adds(w->b, "\xE2\x80\x94"); /* an em dash */
}

void
appr_w_value(struct appr_w *w, const json_t *v)
{
    value_out(w, v, 0);
}

void
appr_w_lines(struct appr_w *w, const json_t *v)
{
    value_out(w, v, 1);
}

void
appr_w_json(struct appr_w *w, const json_t *v)
{
    if (w->st == IG_OK)
        w->st = appr_html_json(w->b, v);
}

void
appr_w_any(struct appr_w *w, const json_t *v)
{
    if (json_is_string(v) || json_is_number(v))
        appr_w_value(w, v);
    else
        appr_w_json(w, v);
}

void
appr_w_int(struct appr_w *w, const json_t *v, const char *otherwise)
{
    char n[32];

    if (!json_is_number(v)) {
        appr_w_raw(w, otherwise);
        return;
    }
    (void)snprintf(n, sizeof(n), "%lld", (long long)json_number_value(v));
    appr_w_raw(w, n);
}

void
appr_w_field(struct appr_w *w, const char *label, const char *id,
             const json_t *v, int is_code)
{
    appr_w_raw(w, "<dt>");
    appr_w_raw(w, label);
    appr_w_raw(w, "</dt><dd id=\"");
    appr_w_raw(w, id);
    appr_w_raw(w, is_code ? "\"><code>" : "\">");
    appr_w_value(w, v);
    appr_w_raw(w, is_code ? "</code></dd>\n" : "</dd>\n");
}

void
appr_w_segment(struct appr_w *w, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *u = (const unsigned char *)(s != NULL ? s : "");
    char pct[4];

    for (; w->st == IG_OK && *u != '\0'; u++) {
        if ((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') ||
            (*u >= '0' && *u <= '9') || *u == '-' || *u == '.' || *u == '_' ||
            *u == '~') {
            w->st = ig_buf_addc(w->b, (char)*u);
            continue;
        }
        pct[0] = '%';
        pct[1] = hex[*u >> 4];
        pct[2] = hex[*u & 15];
        pct[3] = '\0';
        w->st = ig_buf_adds(w->b, pct);
    }
}

/* The class of a trace verdict: from this list only, never the text. */
static const char *
verdict_class(const char *v)
{
    static const char *const known[] = {"ALLOW", "BLOCK", "ESCALATE", "ERROR",
                                        "LIMIT"};
    static const char *const cls[] = {"verdict-allow", "verdict-block",
                                      "verdict-escalate", "verdict-error",
                                      "verdict-limit"};
    size_t i;

    for (i = 0; v != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(v, known[i]) == 0)
            return cls[i];
    return "verdict-other";
}

void
appr_w_trace(struct appr_w *w, const char *id, const json_t *trace)
{
    const json_t *x, *reasons;
    size_t i, j;

    appr_w_raw(w, "<ol class=\"trace\"");
    if (id != NULL) {
        appr_w_raw(w, " id=\"");
        appr_w_raw(w, id);
        appr_w_raw(w, "\"");
    }
    appr_w_raw(w, ">");
    json_array_foreach(trace, i, x)
    {
        appr_w_raw(w, "<li><code class=\"policy\">");
        appr_w_value(w, json_object_get(x, "policy"));
        appr_w_raw(w, "</code> \xE2\x86\x92 <span class=\"verdict ");
        appr_w_raw(w, verdict_class(appr_json_str(x, "verdict")));
        appr_w_raw(w, "\">");
        appr_w_value(w, json_object_get(x, "verdict"));
        appr_w_raw(w, "</span>");
        reasons = json_object_get(x, "reasons");
        for (j = 0; j < json_array_size(reasons); j++) {
            appr_w_raw(w, j > 0 ? ", <code class=\"reason\">"
                                : " <code class=\"reason\">");
            appr_w_value(w, json_array_get(reasons, j));
            appr_w_raw(w, "</code>");
        }
        appr_w_raw(w, "</li>");
    }
    if (json_array_size(trace) == 0)
        appr_w_raw(w, "<li class=\"muted\">no policy had an opinion</li>");
    appr_w_raw(w, "</ol>\n");
}

const char *
appr_json_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- layout ---- */

void
appr_w_begin(struct appr_w *w, const struct appr_page *p, const char *title)
{
    appr_w_raw(w, "<!doctype html>\n<html lang=\"en\">\n<head>\n"
                  "<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" "
                  "content=\"width=device-width, initial-scale=1\">\n"
                  "<meta name=\"referrer\" content=\"no-referrer\">\n"
                  "<meta name=\"color-scheme\" content=\"light dark\">\n"
                  "<title>");
    appr_w_esc(w, title);
    appr_w_raw(w, " \xC2\xB7 intentgate</title>\n"
                  "<link rel=\"stylesheet\" href=\"" APPR_CSS_PATH "\">\n"
                  "</head>\n<body>\n<header class=\"top\"><div class=\"bar\">\n"
                  "<a class=\"brand\" href=\"/ui/approvals\">intentgate</a>\n");
    if (p != NULL && p->approver_id != NULL) {
        appr_w_raw(w, "<div class=\"user\"><span class=\"who\" "
                      "id=\"approver-name\" title=\"");
        appr_w_esc(w, p->approver_id);
        appr_w_raw(w, "\">");
        appr_w_esc(w, p->approver_name != NULL ? p->approver_name
                                               : p->approver_id);
        appr_w_raw(w, "</span>\n");
        if (p->auditor)
            appr_w_raw(w, "<a class=\"nav\" id=\"nav-audit\" "
                          "href=\"/ui/audit\">Audit log</a>\n");
        appr_w_raw(w, "<form class=\"logout\" method=\"post\" "
                      "action=\"/ui/logout\">"
                      "<input type=\"hidden\" name=\"csrf\" value=\"");
        appr_w_esc(w, p->csrf);
        appr_w_raw(w, "\"><button type=\"submit\" id=\"logout\" "
                      "class=\"link\">Sign out</button></form></div>\n");
    }
    appr_w_raw(w, "</div></header>\n<main>\n");
}

void
appr_w_end(struct appr_w *w)
{
    appr_w_raw(w, "</main>\n</body>\n</html>\n");
}
