/*
 * test_html.c - the approval pages: escaping, the JSON pretty-printer, and
 * each page rendered from a hand-built view. Whatever an agent put in an
 * intent must come out as text (no raw <script>, no attribute breakout),
 * the ids the browser tests rely on must be there, and no page may carry
 * script or inline style (the CSP forbids both).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "appr_html.h"

#define XSS "<script>alert(1)</script>"
#define XSS_TEXT "&lt;script&gt;alert(1)&lt;/script&gt;"

static const struct appr_page alice = {"alice", "Alice <Admin>",
                                       "csrfTOKEN_abc-123", 0};

static json_t *
load(const char *text)
{
    json_error_t je;
    json_t *v =
        json_loads(text, JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY, &je);

    if (v == NULL)
        fail_msg("bad test JSON: %s", je.text);
    return v;
}

/* Fails when s holds script, inline style or an event handler. */
static void
assert_inert(const char *s)
{
    assert_null(strstr(s, "<script"));
    assert_null(strstr(s, "<SCRIPT"));
    assert_null(strstr(s, "style="));
    assert_null(strstr(s, "<style"));
    assert_null(strstr(s, " onclick"));
    assert_null(strstr(s, " onerror"));
    assert_null(strstr(s, "javascript:"));
    assert_non_null(strstr(s, "<meta name=\"viewport\""));
    assert_non_null(strstr(s, "href=\"/ui/static/style.css\""));
}

static void
assert_has(const char *s, const char *want)
{
    if (strstr(s, want) == NULL)
        fail_msg("missing %s in:\n%s", want, s);
}

static char *
escaped(const char *s, size_t n)
{
    struct ig_buf b;

    ig_buf_init(&b, 4096);
    assert_int_equal(appr_html_escape(&b, s, n), IG_OK);
    return ig_buf_take(&b, NULL);
}

static void
test_escape(void **state)
{
    char *s;
    struct ig_buf b;
    (void)state;

    s = escaped("a&b<c>d\"e'f", 11);
    assert_string_equal(s, "a&amp;b&lt;c&gt;d&quot;e&#39;f");
    free(s);
    s = escaped("plain \xC3\xA9t\xC3\xA9", 11);
    assert_string_equal(s, "plain \xC3\xA9t\xC3\xA9");
    free(s);
    s = escaped("x\0y", 3);
    assert_string_equal(s, "x\xEF\xBF\xBDy");
    free(s);
    s = escaped(XSS, strlen(XSS));
    assert_string_equal(s, XSS_TEXT);
    free(s);

    ig_buf_init(&b, 64);
    assert_int_equal(appr_html_escape_str(&b, NULL), IG_OK);
    assert_int_equal(b.len, 0);
    assert_int_equal(appr_html_escape_str(&b, "\"'"), IG_OK);
    assert_string_equal(b.data, "&quot;&#39;");
    ig_buf_release(&b);

    /* The cap holds: escaping grows text up to six times. */
    ig_buf_init(&b, 10);
    assert_int_equal(appr_html_escape(&b, "\"\"", 2), IG_ERR_LIMIT);
    ig_buf_release(&b);
}

static void
test_visible_text(void **state)
{
    struct ig_buf b;
    /* "pay to " RLO "moc.live" and a zero-width space, a newline. */
    const char in[] = "pay \xE2\x80\xAEmoc\xE2\x80\x8B<x>\n\xC3\xA9";
    (void)state;

    ig_buf_init(&b, 4096);
    assert_int_equal(appr_html_text(&b, in, sizeof(in) - 1), IG_OK);
    assert_string_equal(b.data,
                        "pay [U+202E]moc[U+200B]&lt;x&gt;[U+000A]\xC3\xA9");
    ig_buf_release(&b);
}

static char *
json_html(const char *text)
{
    struct ig_buf b;
    json_t *v = load(text);

    ig_buf_init(&b, 1 << 16);
    assert_int_equal(appr_html_json(&b, v), IG_OK);
    json_decref(v);
    return ig_buf_take(&b, NULL);
}

static void
test_json_pretty(void **state)
{
    char *s;
    struct ig_buf b;
    (void)state;

    s = json_html("{\"b\":[1,2.5,{}],\"a\":{\"n\":500,\"e\":[]},"
                  "\"t\":true,\"z\":null}");
    assert_string_equal(s, "{\n"
                           "  &quot;a&quot;: {\n"
                           "    &quot;e&quot;: [],\n"
                           "    &quot;n&quot;: 500\n"
                           "  },\n"
                           "  &quot;b&quot;: [\n"
                           "    1,\n"
                           "    2.5,\n"
                           "    {}\n"
                           "  ],\n"
                           "  &quot;t&quot;: true,\n"
                           "  &quot;z&quot;: null\n"
                           "}");
    free(s);

    /* Strings: JSON escapes, then HTML escapes; invisible characters as
       \u escapes so the text still reads back to the same value. */
    s = json_html("{\"note\":\"" XSS "\",\"q\":\"a\\\"b\\\\c\\n\\u0001\","
                  "\"bidi\":\"x\\u202ey\",\"amt\":1e21,\"neg\":-0.5}");
    assert_has(s, "&quot;note&quot;: &quot;" XSS_TEXT "&quot;");
    assert_has(s, "&quot;a\\&quot;b\\\\c\\n\\u0001&quot;");
    assert_has(s, "&quot;x\\u202ey&quot;");
    assert_has(s, "&quot;amt&quot;: 1e+21");
    assert_has(s, "&quot;neg&quot;: -0.5");
    assert_null(strchr(s, '<'));
    free(s);

    /* A Unicode tag character (invisible, beyond U+FFFF) as JSON writes
       it: a surrogate pair, so the text reads back to the same value. */
    s = json_html("{\"tag\":\"a\\udb40\\udc41b\\u2064c\"}");
    assert_has(s, "&quot;a\\udb40\\udc41b\\u2064c&quot;");
    free(s);

    s = json_html("\"top\"");
    assert_string_equal(s, "&quot;top&quot;");
    free(s);

    ig_buf_init(&b, 64);
    assert_int_equal(appr_html_json(&b, NULL), IG_OK);
    assert_string_equal(b.data, "null");
    ig_buf_release(&b);
}

static char *
page_login(const char *error, const char *approver)
{
    struct ig_buf b;

    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    assert_int_equal(appr_html_login(&b, "tok_123-ABC", error, approver),
                     IG_OK);
    return ig_buf_take(&b, NULL);
}

static void
test_login_page(void **state)
{
    char *s;
    (void)state;

    s = page_login(NULL, NULL);
    assert_inert(s);
    assert_has(s, "<form method=\"post\" action=\"/ui/login\"");
    assert_has(s, "id=\"approver\" name=\"approver\"");
    assert_has(s, "id=\"password\" name=\"password\" type=\"password\"");
    assert_has(s, "<input type=\"hidden\" name=\"csrf\" "
                  "value=\"tok_123-ABC\">");
    assert_has(s, "id=\"login\"");
    assert_null(strstr(s, "id=\"error\""));
    assert_null(strstr(s, "id=\"logout\"")); /* nobody signed in */
    free(s);

    s = page_login("Wrong <b>password</b>", "\"><script>x</script>");
    assert_inert(s);
    assert_has(s, "id=\"error\" role=\"alert\">Wrong &lt;b&gt;password"
                  "&lt;/b&gt;</p>");
    assert_has(s, "value=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\"");
    free(s);
}

static const char list_json[] =
    "[{\"approval_id\":\"0b0c2d3e-aaaa-4bbb-8ccc-123456789abc\","
    "\"intent_id\":\"i-1\",\"action\":\"payments.refund\","
    "\"resource\":\"orders/<1>\",\"principal\":\"dev-agent\","
    "\"tenant\":\"dev\",\"created_at\":\"2026-01-01T10:00:00Z\","
    "\"expires_at\":\"2026-01-01T10:15:00Z\","
    "\"requirements\":{\"groups\":[\"finance\",\"ops\"],\"quorum\":2},"
    "\"approvals\":1,\"can_vote\":true},"
    "{\"approval_id\":\"x/../y\",\"action\":\"" XSS "\",\"resource\":\"r\","
    "\"principal\":\"p\",\"expires_at\":\"2026-01-01T10:15:00Z\","
    "\"requirements\":{\"groups\":[\"dba\"],\"quorum\":1},"
    "\"approvals\":0,\"can_vote\":false}]";

static void
test_list_page(void **state)
{
    struct ig_buf b;
    json_t *list = load(list_json);
    char *s;
    (void)state;

    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    assert_int_equal(appr_html_list(&b, &alice, list), IG_OK);
    s = ig_buf_take(&b, NULL);
    assert_inert(s);
    assert_has(s, "<a class=\"approval-link\" href=\"/ui/approvals/"
                  "0b0c2d3e-aaaa-4bbb-8ccc-123456789abc\">");
    assert_has(s, ">payments.refund<");
    assert_has(s, ">orders/&lt;1&gt;<");
    assert_has(s, ">dev-agent<");
    assert_has(s, "1 of 2");
    assert_has(s, "finance, ops");
    assert_has(s, "2026-01-01T10:15:00Z");
    /* A hostile id stays one path segment; a hostile action is text. */
    assert_has(s, "href=\"/ui/approvals/x%2F..%2Fy\"");
    assert_has(s, XSS_TEXT);
    assert_has(s, "view only");
    /* The layout: who is signed in (escaped) and a logout form. */
    assert_has(s, "id=\"approver-name\" title=\"alice\">Alice &lt;Admin&gt;");
    assert_has(s, "action=\"/ui/logout\"");
    assert_has(s, "name=\"csrf\" value=\"csrfTOKEN_abc-123\"");
    assert_null(strstr(s, "Nothing is waiting"));
    free(s);
    json_decref(list);

    list = json_array();
    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    assert_int_equal(appr_html_list(&b, &alice, list), IG_OK);
    assert_has(b.data, "Nothing is waiting for you");
    assert_null(strstr(b.data, "approval-link"));
    ig_buf_release(&b);
    json_decref(list);
}

static const char view_json[] =
    "{\"approval_id\":\"0b0c2d3e-aaaa-4bbb-8ccc-123456789abc\","
    "\"intent_id\":\"11111111-2222-4333-8444-555555555555\","
    "\"intent_hash\":\"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b8"
    "22cd15d6c15b0f00a08\",\"status\":\"PENDING\","
    "\"requirements\":{\"groups\":[\"finance\"],\"quorum\":1},"
    "\"created_at\":\"2026-01-01T10:00:00Z\","
    "\"expires_at\":\"2026-01-01T10:15:00Z\","
    "\"intent\":{\"action\":\"payments.refund\",\"resource\":\"orders/7\","
    "\"params\":{\"amount\":500,\"note\":\"" XSS "\"},"
    "\"context\":{\"requested_by\":\"bob\",\"ticket\":\"T-1\"},"
    "\"principal\":\"dev-agent\",\"tenant\":\"dev\"},"
    "\"principal\":\"dev-agent\",\"tenant\":\"dev\","
    "\"decision\":{\"decision\":\"ESCALATE\","
    "\"reasons\":[\"AMOUNT_NEEDS_APPROVAL\",\"<b>\"],"
    "\"message\":\"refunds over 100 need finance\","
    "\"policy_revision\":\"rev-abc123\"},"
    "\"votes\":[{\"approver\":\"carol\",\"name\":\"Carol\","
    "\"vote\":\"DENY\",\"comment\":\"no </li><script>\","
    "\"channel\":\"slack\",\"at\":\"2026-01-01T10:05:00Z\"}],"
    "\"approvals\":0,\"can_vote\":true,\"resolution\":null}";

static char *
page_detail(json_t *view, const char *flash, const char *code, const char *msg)
{
    struct ig_buf b;

    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    assert_int_equal(appr_html_detail(&b, &alice, view, flash, code, msg),
                     IG_OK);
    return ig_buf_take(&b, NULL);
}

static void
test_detail_page(void **state)
{
    static const char *const ids[] = {
        "status",      "action",     "resource",   "params",  "principal",
        "tenant",      "context",    "reasons",    "message", "policy-revision",
        "intent-hash", "created-at", "expires-at", "votes",   "approve",
        "deny",        "comment",
    };
    json_t *view = load(view_json);
    char *s, want[64];
    size_t i;
    (void)state;

    s = page_detail(view, NULL, NULL, NULL);
    assert_inert(s);
    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        (void)snprintf(want, sizeof(want), "id=\"%s\"", ids[i]);
        assert_has(s, want);
    }
    assert_has(s, "<pre id=\"params\" class=\"json\">{\n"
                  "  &quot;amount&quot;: 500,\n"
                  "  &quot;note&quot;: &quot;" XSS_TEXT "&quot;\n}</pre>");
    assert_has(s, "<pre id=\"context\" class=\"json\">{\n"
                  "  &quot;requested_by&quot;: &quot;bob&quot;");
    assert_has(s, ">PENDING</span>");
    assert_has(s, "status-pending");
    assert_has(s, "<code>sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b8"
                  "22cd15d6c15b0f00a08</code>");
    assert_has(s, "<li><code>AMOUNT_NEEDS_APPROVAL</code></li>"
                  "<li><code>&lt;b&gt;</code></li>");
    assert_has(s, ">refunds over 100 need finance<");
    assert_has(s, "rev-abc123");
    /* The vote form: posts the session token and the hash shown. */
    assert_has(s, "<form method=\"post\" class=\"stack vote\" "
                  "id=\"vote-form\" action=\"/ui/approvals/"
                  "0b0c2d3e-aaaa-4bbb-8ccc-123456789abc/vote\">");
    assert_has(s, "name=\"csrf\" value=\"csrfTOKEN_abc-123\"");
    assert_has(s, "name=\"intent_hash\" value=\"sha256:9f86d081884c7d659a2f");
    assert_has(s, "<textarea id=\"comment\" name=\"comment\"");
    assert_has(s, "id=\"approve\" name=\"vote\" value=\"approve\"");
    assert_has(s, "id=\"deny\" name=\"vote\" value=\"deny\"");
    /* The vote list, with the comment as text. */
    assert_has(s, "vote-deny");
    assert_has(s, ">Carol<");
    assert_has(s, "no &lt;/li&gt;&lt;script&gt;");
    assert_has(s, "via slack");
    assert_null(strstr(s, "id=\"flash\""));
    assert_null(strstr(s, "id=\"error\""));
    assert_null(strstr(s, "id=\"resolution\"")); /* resolution is null */
    free(s);

    s = page_detail(view, "Your approval was recorded.", NULL, NULL);
    assert_has(s, "id=\"flash\" role=\"status\">Your approval was "
                  "recorded.</p>");
    free(s);

    s = page_detail(view, NULL, "INTENT_HASH_MISMATCH", "changed <since>");
    assert_has(s, "id=\"error\" role=\"alert\"><strong class=\"code\">"
                  "INTENT_HASH_MISMATCH</strong> changed &lt;since&gt;");
    free(s);
    json_decref(view);
}

static void
test_detail_cannot_vote(void **state)
{
    json_t *view = load(view_json);
    char *s;
    (void)state;

    (void)json_object_set_new(view, "can_vote", json_false());
    (void)json_object_set_new(view, "cannot_vote",
                              json_string("ALREADY_VOTED"));
    (void)json_object_set_new(view, "status", json_string("APPROVED"));
    (void)json_object_set_new(view, "resolution",
                              json_pack("{s:s, s:s, s:s, s:[s]}", "result",
                                        "APPROVED", "resolved_at",
                                        "2026-01-01T10:06:00Z", "decision",
                                        "ALLOW", "reasons", "OK"));
    s = page_detail(view, NULL, NULL, NULL);
    assert_inert(s);
    assert_null(strstr(s, "id=\"vote-form\""));
    assert_null(strstr(s, "id=\"approve\""));
    assert_has(s, "id=\"cannot-vote\">You have already voted on this "
                  "request. <code>ALREADY_VOTED</code>");
    assert_has(s, "status-approved");
    assert_has(s, "id=\"resolution\"");
    assert_has(s, ">ALLOW<");
    /* Still shown without a vote: the hash and everything else. */
    assert_has(s, "id=\"intent-hash\"");
    free(s);
    json_decref(view);

    assert_string_equal(appr_html_cannot_vote_text("SELF_APPROVAL"),
                        "This is your own request (you run the agent that "
                        "sent it, or it names you as its requester): someone "
                        "else must decide it.");
    assert_non_null(appr_html_cannot_vote_text("SOMETHING_NEW"));
    assert_non_null(appr_html_cannot_vote_text(NULL));
}

/* The agent's context is its claim: labelled so, never as a fact. What
   the PDP established (the authenticated agent, the approvers the config
   says run it) is labelled as such. */
static void
test_detail_labels_claims(void **state)
{
    json_t *view = load(view_json);
    char *s;
    (void)state;

    (void)json_object_set_new(view, "operators", json_pack("[s]", "alice"));
    s = page_detail(view, NULL, NULL, NULL);
    assert_inert(s);
    assert_null(strstr(s, "On behalf of"));
    assert_has(s, "id=\"requested-by\"");
    assert_has(s, "claimed by the agent: bob");
    assert_has(s, "Context, claimed by the agent (not verified)");
    assert_has(s, "Agent (authenticated)");
    assert_has(s, "id=\"operators\"");
    assert_has(s, ">alice<");
    free(s);
    json_decref(view);

    /* A claim that is not a string is shown as the JSON it is. */
    view = load(view_json);
    (void)json_object_set_new(
        json_object_get(json_object_get(view, "intent"), "context"),
        "requested_by", json_pack("[s, s]", "bob", "<i>eve</i>"));
    s = page_detail(view, NULL, NULL, NULL);
    assert_has(s, "claimed by the agent: [");
    assert_null(strstr(s, "<i>eve"));
    assert_null(strstr(s, "id=\"operators\""));
    free(s);
    json_decref(view);
}

/* The explain trace: "Why: policy -> verdict" for the escalation and the
   re-evaluation; every value escaped (a hostile log, or a future policy
   name rule, must not inject markup), the verdict's class from a fixed
   list only. */
static void
test_detail_trace(void **state)
{
    json_t *view = load(view_json);
    char *s;
    (void)state;

    s = page_detail(view, NULL, NULL, NULL);
    assert_null(strstr(s, "id=\"trace\""));
    assert_null(strstr(s, "Why: policy"));
    free(s);
    assert_int_equal(
        json_object_set_new(
            json_object_get(view, "decision"), "trace",
            load("[{\"policy\":\"refund.lua\",\"verdict\":\"ESCALATE\","
                 "\"reasons\":[\"AMOUNT_NEEDS_APPROVAL\"]},"
                 "{\"policy\":\"quota.lua\",\"verdict\":\"ALLOW\","
                 "\"reasons\":[]},"
                 "{\"policy\":\"" XSS "\",\"verdict\":\"x\\\" onload=\","
                 "\"reasons\":[\"<b>\",\"R2\"]}]")),
        0);
    assert_int_equal(json_object_set_new(view, "resolution",
                                         load("{\"result\":\"APPROVED\","
                                              "\"decision\":\"ALLOW\","
                                              "\"reasons\":[],\"trace\":[]}")),
                     0);
    s = page_detail(view, NULL, NULL, NULL);
    assert_inert(s);
    assert_has(s, "<h3>Why: policy \xE2\x86\x92 verdict</h3>\n"
                  "<div class=\"trace\" id=\"trace\"><div class=\"trace-line\">"
                  "<code class=\"policy\">"
                  "refund.lua</code> \xE2\x86\x92 <span class=\"verdict "
                  "verdict-escalate\">ESCALATE</span> <code class=\"reason\">"
                  "AMOUNT_NEEDS_APPROVAL</code></div>");
    assert_has(s, "<div class=\"trace-line\"><code class=\"policy\">quota.lua"
                  "</code> \xE2\x86\x92 <span class=\"verdict verdict-allow\">"
                  "ALLOW</span></div>");
    assert_has(s, "<code class=\"policy\">" XSS_TEXT "</code>");
    assert_has(s, "<span class=\"verdict verdict-other\">x&quot; "
                  "onload=</span> <code class=\"reason\">&lt;b&gt;</code>, "
                  "<code class=\"reason\">R2</code>");
    assert_has(s, "<div class=\"trace\" id=\"resolution-trace\">"
                  "<div class=\"trace-line muted\">no policy had an opinion"
                  "</div></div>");
    free(s);
    json_decref(view);
}

static void
test_error_page(void **state)
{
    struct ig_buf b;
    (void)state;

    ig_buf_init(&b, APPR_HTML_MAX_BYTES);
    assert_int_equal(appr_html_error(&b, NULL, 404, "Not <found>", "no " XSS),
                     IG_OK);
    assert_inert(b.data);
    assert_has(b.data, "Error 404");
    assert_has(b.data, "<h1>Not &lt;found&gt;</h1>");
    assert_has(b.data, "id=\"error\" role=\"alert\">no " XSS_TEXT "</p>");
    assert_null(strstr(b.data, "id=\"logout\""));
    ig_buf_reset(&b);
    assert_int_equal(appr_html_error(&b, &alice, 403, "Refused", "x"), IG_OK);
    assert_has(b.data, "id=\"logout\"");
    ig_buf_release(&b);
}

static void
test_page_cap(void **state)
{
    struct ig_buf b;
    json_t *view = load(view_json);
    (void)state;

    ig_buf_init(&b, 512);
    assert_int_equal(appr_html_detail(&b, &alice, view, NULL, NULL, NULL),
                     IG_ERR_LIMIT);
    ig_buf_release(&b);
    json_decref(view);
}

static void
test_stylesheet(void **state)
{
    size_t n = 0;
    const char *css = appr_html_css(&n);
    (void)state;

    assert_true(n > 500);
    assert_int_equal(strlen(css), n);
    assert_has(css, "button.approve");
    assert_has(css, "button.deny");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_visible_text),
        cmocka_unit_test(test_json_pretty),
        cmocka_unit_test(test_login_page),
        cmocka_unit_test(test_list_page),
        cmocka_unit_test(test_detail_page),
        cmocka_unit_test(test_detail_cannot_vote),
        cmocka_unit_test(test_detail_labels_claims),
        cmocka_unit_test(test_detail_trace),
        cmocka_unit_test(test_error_page),
        cmocka_unit_test(test_page_cap),
        cmocka_unit_test(test_stylesheet),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
