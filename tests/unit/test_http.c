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
    struct exec_http_result out;
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
    json_decref(out.detail);
    json_decref(s);
    json_decref(p);
}

static void
test_outcomes(void **state)
{
    json_t *p = params(), *s;
    struct exec_http_result out;
    struct ig_err err;
    (void)state;

    /* Nobody listens on port 1: nothing was dispatched. */
    s = json_pack("{s:s, s:s, s:i}", "method", "GET", "url",
                  "http://127.0.0.1:1/x", "timeout_ms", 1000);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_FAILED_BEFORE_DISPATCH);
    json_decref(out.detail);
    json_decref(s);
    /* Sent, then no answer in time: unknown. */
    s = settings("/slow", 500, 65536);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_UNKNOWN_AFTER_DISPATCH);
    json_decref(out.detail);
    json_decref(s);
    /* A body over the cap is cut and says so. */
    s = settings("/small", 2000, 8);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_OK);
    assert_int_equal(out.outcome, EXEC_OUTCOME_COMPLETED);
    assert_true(json_is_true(json_object_get(out.detail, "truncated")));
    assert_int_equal(
        strlen(json_string_value(json_object_get(out.detail, "body"))), 8);
    json_decref(out.detail);
    json_decref(s);
    /* A parameter that cannot fill the URL: nothing is sent. */
    s = settings("/refunds/{missing}", 2000, 64);
    assert_int_equal(exec_http_run(s, p, NULL, 0, &out, &err), IG_ERR_INVALID);
    json_decref(s);
    json_decref(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_is_pinned_and_credential_injected),
        cmocka_unit_test(test_outcomes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
