/*
 * appr_slack_text.c - mrkdwn that shows an agent's values as they are
 * (see appr_slack_int.h).
 *
 * Slack reads three characters in any text: & < > (mentions such as
 * <!channel>, links <url|label>). They are always entities here. Inside a
 * ``` block or a ` span nothing else is formatting, so an agent's values
 * go there, as JSON, with every backtick written \u0060: no value can
 * close the block and write mrkdwn after it. Invisible and direction
 * characters are \u escapes there, [U+XXXX] in plain text, exactly as the
 * web page and the terminal show them (ig_utf8_hidden).
 */
#include "appr_slack_int.h"

#include <stdio.h>
#include <string.h>

#include "appr_show.h"
#include "ig_text.h"

/* The JSON text of one message's params or context, at most: more could
   not fit 50 sections of 3000 characters anyway. */
#define JSON_TEXT_MAX ((size_t)APPR_SLACK_SECTION_MAX * APPR_SLACK_BLOCKS_MAX)
#define FENCE_OPEN "\n```\n"
#define FENCE_CLOSE "\n```"
#define CONTINUED " (continued)"

enum ig_status
appr_slack_text(struct ig_buf *b, const char *text, size_t len, size_t max)
{
    const unsigned char *u = (const unsigned char *)text;
    size_t i = 0, start = b->len, k, n;
    char mark[16];
    const char *rep;
    uint32_t cp;
    enum ig_status st;

    while (i < len) {
        k = ig_utf8_next(u + i, len - i, &cp);
        rep = NULL;
        if (k == 0) {
            k = 1;
            rep = "\xEF\xBF\xBD"; /* not UTF-8: U+FFFD */
        } else if (cp == '&' || cp == '<' || cp == '>') {
            rep = cp == '&' ? "&amp;" : cp == '<' ? "&lt;" : "&gt;";
        } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
            rep = " ";
        } else if (ig_utf8_hidden(cp) || cp == '`') {
            (void)snprintf(mark, sizeof(mark), "[U+%04X]", (unsigned)cp);
            rep = mark;
        }
        n = rep != NULL ? strlen(rep) : k;
        if (b->len - start + n > max)
            return ig_buf_adds(b, "...");
        st = rep != NULL ? ig_buf_adds(b, rep) : ig_buf_add(b, text + i, k);
        if (st != IG_OK)
            return st;
        i += k;
    }
    return IG_OK;
}

enum ig_status
appr_slack_escape(struct ig_buf *b, const char *text, size_t len)
{
    return appr_slack_text(b, text, len, APPR_SLACK_VALUE_MAX);
}

enum ig_status
appr_slack_str(struct ig_buf *b, const char *s, size_t max)
{
    return appr_slack_text(b, s != NULL ? s : "-", s != NULL ? strlen(s) : 1,
                           max);
}

/* Append n bytes of JSON text with & < > as entities (nothing else in
   it needs escaping: controls, hidden characters and backticks are
   already \u escapes). */
static enum ig_status
add_entities(struct ig_buf *b, const char *s, size_t n)
{
    size_t i, run = 0;
    enum ig_status st;

    for (i = 0; i < n; i++) {
        if (s[i] != '&' && s[i] != '<' && s[i] != '>')
            continue;
        if ((st = ig_buf_add(b, s + run, i - run)) != IG_OK ||
            (st = ig_buf_adds(b, s[i] == '&'   ? "&amp;"
                                 : s[i] == '<' ? "&lt;"
                                               : "&gt;")) != IG_OK)
            return st;
        run = i + 1;
    }
    return ig_buf_add(b, s + run, n - run);
}

/* The largest prefix of s[0..n) of at most cut bytes that ends on a
   character boundary. */
static size_t
utf8_prefix(const char *s, size_t n, size_t cut)
{
    if (n <= cut)
        return n;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--;
    return cut;
}

enum ig_status
appr_slack_code_str(struct ig_buf *b, const char *s, size_t n, size_t cut)
{
    size_t keep = cut > 0 ? utf8_prefix(s, n, cut) : n;
    struct ig_buf t;
    enum ig_status st;

    ig_buf_init(&t, b->max);
    st = appr_show_string(&t, s, keep, APPR_SHOW_NO_BACKTICK);
    if (st == IG_OK)
        st = ig_buf_addc(b, '`');
    if (st == IG_OK)
        st = add_entities(b, t.data, t.len);
    if (st == IG_OK)
        st = ig_buf_addc(b, '`');
    if (st == IG_OK && keep < n)
        st = ig_buf_adds(b, " (cut)");
    ig_buf_release(&t);
    return st;
}

json_t *
appr_slack_section(const char *text)
{
    return json_pack("{s:s, s:{s:s, s:s}}", "type", "section", "text", "type",
                     "mrkdwn", "text", text);
}

/* Close the section in sec and append it to blocks. */
static enum ig_status
flush(json_t *blocks, struct ig_buf *sec, size_t max_blocks)
{
    if (ig_buf_adds(sec, FENCE_CLOSE) != IG_OK)
        return IG_ERR_LIMIT;
    if (json_array_size(blocks) >= max_blocks)
        return IG_ERR_LIMIT;
    /* json_array_append_new steals the section (NULL: fails). */
    return json_array_append_new(blocks, appr_slack_section(sec->data)) == 0
               ? IG_OK
               : IG_ERR_NOMEM;
}

/* Cut the escaped JSON text e (not empty) into sections under title, at
   line ends. */
static enum ig_status
split(json_t *blocks, const char *title, const struct ig_buf *e,
      size_t max_blocks)
{
    const char *p = e->data, *end = e->data + e->len, *nl;
    size_t lines = 0, sections = 0, len;
    const size_t close = strlen(FENCE_CLOSE);
    struct ig_buf sec;
    enum ig_status st = IG_OK;

    ig_buf_init(&sec, APPR_SLACK_SECTION_MAX);
    while (st == IG_OK && p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        len = (size_t)((nl != NULL ? nl : end) - p);
        if (lines > 0 && sec.len + 1 + len + close > APPR_SLACK_SECTION_MAX) {
            st = flush(blocks, &sec, max_blocks);
            lines = 0;
        }
        if (st == IG_OK && lines == 0) {
            ig_buf_reset(&sec);
            st = ig_buf_adds(&sec, title);
            if (st == IG_OK && sections++ > 0)
                st = ig_buf_adds(&sec, CONTINUED);
            if (st == IG_OK)
                st = ig_buf_adds(&sec, FENCE_OPEN);
        } else if (st == IG_OK) {
            st = ig_buf_addc(&sec, '\n');
        }
        /* A line longer than a section holds cannot be shown whole. */
        if (st == IG_OK && sec.len + len + close > APPR_SLACK_SECTION_MAX)
            st = IG_ERR_LIMIT;
        if (st == IG_OK)
            st = ig_buf_add(&sec, p, len);
        lines++;
        p += len + (nl != NULL ? 1 : 0);
    }
    if (st == IG_OK && lines > 0)
        st = flush(blocks, &sec, max_blocks);
    ig_buf_release(&sec);
    return st;
}

enum ig_status
appr_slack_json_sections(json_t *blocks, const char *title, const json_t *v,
                         size_t max_blocks)
{
    struct ig_buf t, e;
    enum ig_status st;

    ig_buf_init(&t, JSON_TEXT_MAX);
    ig_buf_init(&e, JSON_TEXT_MAX);
    st = appr_show_json(&t, v, APPR_SHOW_NO_BACKTICK);
    if (st == IG_OK)
        st = add_entities(&e, t.data, t.len);
    if (st == IG_OK && e.len > 0)
        st = split(blocks, title, &e, max_blocks);
    ig_buf_release(&t);
    ig_buf_release(&e);
    return st == IG_ERR_INVALID ? IG_ERR_LIMIT : st;
}
