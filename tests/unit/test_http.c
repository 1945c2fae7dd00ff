/*
 * test_http.c - the executor's `http` handler against a real upstream on
 * loopback (libmicrohttpd in this process): the request goes exactly where
 * the registry pins it, parameters are encoded as data, the credential is
 * injected, and outcomes are classified: response -> COMPLETED, no
 * connection -> FAILED_BEFORE_DISPATCH, timeout after sending ->
 * UNKNOWN_AFTER_DISPATCH; bodies are capped.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec_http.h"
#include "ig_key.h"

static struct MHD_Daemon *d;
static unsigned short port;
static char seen_uri[512], seen_method[16], seen_auth[256], seen_body[512];
static size_t seen_len;

static void *
log_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    (void)snprintf(seen_uri, sizeof(seen_uri), "%s", uri);
    return NULL;
}

/* {"seen": "<Authorization>", "b64": "<base64 of it>"}, and the header
   value in the Content-Type too. */
static enum MHD_Result
echo_auth(struct MHD_Connection *c, const char *auth)
{
    char b64[512], body[1200], ctype[400];
    struct MHD_Response *r;
    enum MHD_Result ret;

    (void)sodium_bin2base64(b64, sizeof(b64), (const unsigned char *)auth,
                            strlen(auth), sodium_base64_VARIANT_ORIGINAL);
    (void)snprintf(body, sizeof(body), "{\"seen\":\"%s\",\"b64\":\"%s\"}", auth,
                   b64);
    (void)snprintf(ctype, sizeof(ctype), "text/plain; token=%s", auth);
    r = MHD_create_response_from_buffer(strlen(body), body,
                                        MHD_RESPMEM_MUST_COPY);
    (void)MHD_add_response_header(r, "Content-Type", ctype);
    ret = MHD_queue_response(c, 500, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *c, const char *url,
        const char *method, const char *version, const char *upload,
        size_t *upload_size, void **con_cls)
{
    static char reply[] = "{\"ok\":true,\"padding\":\"0123456789\"}";
    const char *auth;
    struct MHD_Response *r;
    enum MHD_Result ret;
    (void)cls;
    (void)version;

    if (*con_cls == NULL) {
        *con_cls = c;
        seen_len = 0;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (seen_len + *upload_size < sizeof(seen_body)) {
            memcpy(seen_body + seen_len, upload, *upload_size);
            seen_len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    seen_body[seen_len] = '\0';
    (void)snprintf(seen_method, sizeof(seen_method), "%s", method);
    auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    (void)snprintf(seen_auth, sizeof(seen_auth), "%s", auth ? auth : "");
    if (strstr(url, "/slow") != NULL) {
        struct timespec ts = {2, 0};
        (void)nanosleep(&ts, NULL);
    }
    if (strstr(url, "/echo") != NULL) /* a debug endpoint: echoes it */
        return echo_auth(c, auth != NULL ? auth : "");
    r = MHD_create_response_from_buffer(sizeof(reply) - 1, reply,
                                        MHD_RESPMEM_PERSISTENT);
    ret = MHD_queue_response(c, 201, r);
    MHD_destroy_response(r);
    return ret;
}

static int
setup(void **state)
{
    struct sockaddr_in sa;
    (void)state;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(0x7f000001);
    d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0,
        NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_URI_LOG_CALLBACK, log_uri, NULL, MHD_OPTION_END);
    assert_non_null(d);
    port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    assert_int_equal(curl_global_init(CURL_GLOBAL_DEFAULT), 0);
    assert_int_equal(ig_crypto_init(), IG_OK); /* sodium_malloc needs it */
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    MHD_stop_daemon(d);
    curl_global_cleanup();
    return 0;
}

static json_t *
settings(const char *path, long timeout_ms, long cap)
{
    char url[256];

    (void)snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
    return json_pack("{s:s, s:s, s:s, s:s, s:[s,s], s:[s], s:i, s:i}", "method",
                     "POST", "url", url, "credential_header", "Authorization",
                     "credential_prefix", "Bearer ", "body_fields", "amount",
                     "currency", "query_fields", "note", "timeout_ms",
                     (int)timeout_ms, "max_response_bytes", (int)cap);
}

static json_t *
params(void)
{
    return json_pack("{s:f, s:s, s:s, s:s}", "amount", 42.5, "currency", "EUR",
                     "order_id", "a/b?c", "note", "x y");
}

static void
test_request_is_pinned_and_credential_injected(void **state)
{
    json_t *s = settings("/refunds/{order_id}", 2000, 65536), *p = params();
    struct exec_result out;
    struct ig_err err;
    char *text;
    (void)state;

    assert_int_equal(
        exec_http_run(s, p, (const unsigned char *)"s3cret", 6, &out, &err),
        IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_COMPLETED);
    assert_int_equal(out.status, 201);
    assert_string_equal(seen_method, "POST");
    assert_string_equal(seen_uri, "/refunds/a%2Fb%3Fc?note=x%20y");
    assert_string_equal(seen_auth, "Bearer s3cret");
    assert_string_equal(seen_body, "{\"amount\":42.5,\"currency\":\"EUR\"}");
    /* The detail reports the upstream's answer, never the credential. */
    text = json_dumps(out.detail, 0);
    assert_non_null(text);
    assert_null(strstr(text, "s3cret"));
    free(text);
    exec_result_release(&out);
    json_decref(s);
    json_decref(p);
}

static void
test_outcomes(void **state)
{
    json_t *p = params(), *s;
    struct exec_result out;
    struct ig_err err;
    (void)state;

    /* Nobody listens on port 1: nothing was dispatched. */
    s = json_pack("{s:s, s:s, s:i}", "method", "GET", "url",
                  "http://127.0.0.1:1/x", "timeout_ms", 1000);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
    exec_result_release(&out);
    json_decref(s);
    /* Sent, then no answer in time: unknown. */
    s = settings("/slow", 500, 65536);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH);
    exec_result_release(&out);
    json_decref(s);
    /* A body over the cap is cut and says so. */
    s = settings("/small", 2000, 8);
    /* json_object_set_new steals the new string. */
    assert_int_equal(json_object_set_new(s, "response", json_string("body")),
                     0);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_COMPLETED);
    assert_true(json_is_true(json_object_get(out.detail, "truncated")));
    assert_int_equal(
        strlen(json_string_value(json_object_get(out.detail, "body"))), 8);
    exec_result_release(&out);
    json_decref(s);
    /* A parameter that cannot fill the URL: nothing is sent. */
    s = settings("/refunds/{missing}", 2000, 64);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_ERR_INVALID);
    json_decref(s);
    json_decref(p);
}

/* Exactly the registered URL: for hostile values the upstream sees the
   template with the value percent-encoded byte for byte (RFC 3986
   unreserved kept, uppercase hex), or nothing is sent at all. */
static void
test_hostile_path_values(void **state)
{
    static const struct {
        const char *value; /* NULL ends */
        size_t len;
        const char *want; /* path seen; NULL: refused before sending */
    } cases[] = {
        {"", 0, NULL},
        {".", 1, NULL},
        {"..", 2, NULL},
        {"...", 3, NULL},
        {"%2e%2e", 6, "/db/%252e%252e/rows?note=x"},
        {"%2F", 3, "/db/%252F/rows?note=x"},
        {"/", 1, "/db/%2F/rows?note=x"},
        {"../x", 4, "/db/..%2Fx/rows?note=x"},
        {"x/../y", 6, "/db/x%2F..%2Fy/rows?note=x"},
        {";", 1, "/db/%3B/rows?note=x"},
        {"\\", 1, "/db/%5C/rows?note=x"},
        {"@", 1, "/db/%40/rows?note=x"},
        {"#", 1, "/db/%23/rows?note=x"},
        {"?", 1, "/db/%3F/rows?note=x"},
        {"&=+", 3, "/db/%26%3D%2B/rows?note=x"},
        {" ", 1, "/db/%20/rows?note=x"},
        {"\r\nX: y", 6, "/db/%0D%0AX%3A%20y/rows?note=x"},
        {"a\0b", 3, "/db/a%00b/rows?note=x"},
        {"\xc3\xa9", 2, "/db/%C3%A9/rows?note=x"},
        {"\xef\xbc\x8e\xef\xbc\x8e", 6, "/db/%EF%BC%8E%EF%BC%8E/rows?note=x"},
        {".x", 2, "/db/.x/rows?note=x"},
        {"a..b", 4, "/db/a..b/rows?note=x"},
        {"~_-.", 4, "/db/~_-./rows?note=x"},
        {NULL, 0, NULL}};
    json_t *s = settings("/db/{table}/rows", 2000, 64), *p;
    struct exec_result out;
    struct ig_err err;
    char big[5000];
    size_t i;
    (void)state;

    for (i = 0; cases[i].value != NULL; i++) {
        p = json_pack("{s:s%, s:s}", "table", cases[i].value, cases[i].len,
                      "note", "x");
        assert_non_null(p);
        seen_uri[0] = '\0';
        if (cases[i].want == NULL) {
            assert_int_equal(exec_http_check(s, p, &err), IG_ERR_INVALID);
            assert_non_null(strstr(err.msg, "table"));
            assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err),
                             IG_ERR_INVALID);
            assert_string_equal(seen_uri, ""); /* nothing was sent */
        } else {
            assert_int_equal(exec_http_check(s, p, &err), IG_OK);
            assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
            assert_int_equal(out.outcome, EXEC_OUTCOME_COMPLETED);
            if (strcmp(seen_uri, cases[i].want) != 0)
                fail_msg("case %zu: upstream saw %s, want %s", i, seen_uri,
                         cases[i].want);
            exec_result_release(&out);
        }
        json_decref(p);
    }
    /* A value too long for the URL: refused before anything is sent. */
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    p = json_pack("{s:s}", "table", big);
    assert_int_not_equal(exec_http_check(s, p, &err), IG_OK);
    json_decref(p);
    /* Query values are data too. */
    p = json_pack("{s:s, s:s}", "table", "t", "note", "a&b=c#d?e/f +");
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_string_equal(seen_uri,
                        "/db/t/rows?note=a%26b%3Dc%23d%3Fe%2Ff%20%2B");
    exec_result_release(&out);
    json_decref(p);
    json_decref(s);
}

/* An upstream that echoes the credential: nothing of it reaches the
   result (in any mode) or the PDP's report, and both say so. */
static void
test_reflected_credential_is_scrubbed(void **state)
{
    static const char *const modes[] = {"status", "fields", "body", NULL};
    const char *cred = "s3cr3t-reflected-0123456789";
    json_t *s, *p = params();
    struct exec_result out;
    struct ig_err err;
    char *a, *b;
    size_t i;
    (void)state;

    for (i = 0; modes[i] != NULL; i++) {
        s = settings("/echo", 2000, 65536);
        /* json_object_set_new steals the new values. */
        (void)json_object_set_new(s, "response", json_string(modes[i]));
        if (strcmp(modes[i], "fields") == 0)
            (void)json_object_set_new(
                s, "response_fields",
                json_pack("{s:s, s:s}", "seen", "/seen", "b64", "/b64"));
        assert_int_equal(exec_http_run(s, p, (const unsigned char *)cred,
                                       strlen(cred), &out, &err),
                         IG_OK);
        assert_int_equal(out.outcome, EXEC_OUTCOME_COMPLETED);
        assert_int_equal(out.status, 500);
        assert_string_equal(seen_auth, "Bearer s3cr3t-reflected-0123456789");
        assert_true(out.credential_reflected);
        a = json_dumps(out.detail, 0);
        b = json_dumps(out.report, 0);
        assert_non_null(a);
        assert_non_null(b);
        if (strstr(a, "s3cr3t") != NULL || strstr(b, "s3cr3t") != NULL ||
            strstr(a, "czNjcjN0") != NULL || strstr(b, "czNjcjN0") != NULL)
            fail_msg("mode %s leaked: %s / %s", modes[i], a, b);
        assert_null(strstr(b, "\"body\""));
        assert_non_null(strstr(a, "\"credential_reflected\": true"));
        free(a);
        free(b);
        exec_result_release(&out);
        json_decref(s);
    }
    json_decref(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_is_pinned_and_credential_injected),
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_hostile_path_values),
        cmocka_unit_test(test_reflected_credential_is_scrubbed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
