/*
 * test_curl.c - ig_curl_harden, proven by behaviour (libcurl cannot be
 * asked which options a handle holds): against a loopback server in this
 * process, a redirect is answered, never followed; a file:// URL is
 * refused; a proxy named in the environment is not used; a server that
 * never answers is given up on after the total timeout. Each case first
 * shows that a handle without the hardening does the unsafe thing, so the
 * case can fail.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_curl.h"

static struct MHD_Daemon *d;
static unsigned short port;
static int target_hits; /* requests for /target */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released; /* /hang may answer */

static enum MHD_Result
answer(struct MHD_Connection *c, unsigned status, const char *location)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(2, (void *)(uintptr_t) "ok",
                                        MHD_RESPMEM_PERSISTENT);
    if (location != NULL)
        (void)MHD_add_response_header(r, "Location", location);
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
handler(void *cls, struct MHD_Connection *c, const char *url,
        const char *method, const char *version, const char *data, size_t *size,
        void **ctx)
{
    (void)cls, (void)method, (void)version, (void)data, (void)size;
    if (*ctx == NULL) {
        *ctx = c;
        return MHD_YES;
    }
    if (strcmp(url, "/redirect") == 0)
        return answer(c, 302, "/target");
    if (strcmp(url, "/target") == 0) {
        (void)pthread_mutex_lock(&mu);
        target_hits++;
        (void)pthread_mutex_unlock(&mu);
        return answer(c, 200, NULL);
    }
    if (strcmp(url, "/hang") == 0) {
        /* Answer only once the test says so: after its client gave up. */
        (void)pthread_mutex_lock(&mu);
        while (!released)
            (void)pthread_cond_wait(&cv, &mu);
        (void)pthread_mutex_unlock(&mu);
    }
    return answer(c, 200, NULL);
}

static int
setup(void **state)
{
    struct sockaddr_in sa;
    (void)state;

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
                             MHD_USE_THREAD_PER_CONNECTION,
                         0, NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&sa, MHD_OPTION_END);
    if (d == NULL)
        return -1;
    port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return curl_global_init(CURL_GLOBAL_DEFAULT) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
    (void)state;
    (void)pthread_mutex_lock(&mu);
    released = 1;
    (void)pthread_cond_broadcast(&cv);
    (void)pthread_mutex_unlock(&mu);
    MHD_stop_daemon(d);
    curl_global_cleanup();
    return 0;
}

static size_t
discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p, (void)ud;
    return size * n;
}

/* A handle for url, hardened or not; the answer is thrown away. */
static CURL *
handle(const char *url, int harden, long total_ms)
{
    CURL *c = curl_easy_init();
    struct ig_err err;

    assert_non_null(c);
    if (harden)
        assert_int_equal(ig_curl_harden(c, 2000, total_ms, &err), IG_OK);
    else
        assert_int_equal(curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms),
                         CURLE_OK);
    assert_int_equal(curl_easy_setopt(c, CURLOPT_URL, url), CURLE_OK);
    assert_int_equal(curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard),
                     CURLE_OK);
    return c;
}

static void
local_url(char *out, size_t cap, const char *path)
{
    int n = snprintf(out, cap, "http://127.0.0.1:%u%s", port, path);

    assert_true(n > 0 && (size_t)n < cap);
}

static void
test_redirect_not_followed(void **state)
{
    char url[128];
    long status = 0, count = -1;
    CURL *c;
    (void)state;

    local_url(url, sizeof(url), "/redirect");
    /* Control: told to follow, libcurl does. */
    c = handle(url, 0, 5000);
    assert_int_equal(curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L), CURLE_OK);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    assert_int_equal(target_hits, 1);
    /* Hardened: the 302 is the answer; /target is never asked for. */
    c = handle(url, 1, 5000);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    (void)curl_easy_getinfo(c, CURLINFO_REDIRECT_COUNT, &count);
    curl_easy_cleanup(c);
    assert_int_equal(status, 302);
    assert_int_equal(count, 0);
    assert_int_equal(target_hits, 1);
}

static void
test_file_url_refused(void **state)
{
    char path[] = "/tmp/ig_test_curl_XXXXXX", url[64];
    CURL *c;
    int fd;
    (void)state;

    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "secret\n", 7), 7);
    assert_int_equal(close(fd), 0);
    (void)snprintf(url, sizeof(url), "file://%s", path);
    c = handle(url, 0, 5000); /* control: plain libcurl reads the file */
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_cleanup(c);
    c = handle(url, 1, 5000);
    assert_int_equal(curl_easy_perform(c), CURLE_UNSUPPORTED_PROTOCOL);
    curl_easy_cleanup(c);
    (void)snprintf(url, sizeof(url), "ftp://127.0.0.1:%u/", port);
    c = handle(url, 1, 5000);
    assert_int_equal(curl_easy_perform(c), CURLE_UNSUPPORTED_PROTOCOL);
    curl_easy_cleanup(c);
    assert_int_equal(unlink(path), 0);
}

static void
test_environment_proxy_ignored(void **state)
{
    char url[128];
    long status = 0;
    CURL *c;
    (void)state;

    local_url(url, sizeof(url), "/plain");
    /* Port 1 on loopback: nothing listens, so a proxied call fails. */
    assert_int_equal(setenv("http_proxy", "http://127.0.0.1:1", 1), 0);
    assert_int_equal(setenv("no_proxy", "", 1), 0);
    c = handle(url, 0, 5000); /* control: plain libcurl uses the proxy */
    assert_int_equal(curl_easy_perform(c), CURLE_COULDNT_CONNECT);
    curl_easy_cleanup(c);
    c = handle(url, 1, 5000);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    assert_int_equal(status, 200);
    assert_int_equal(unsetenv("http_proxy"), 0);
    assert_int_equal(unsetenv("no_proxy"), 0);
}

static void
test_total_timeout(void **state)
{
    char url[128];
    CURL *c;
    (void)state;

    local_url(url, sizeof(url), "/hang");
    c = handle(url, 1, 300);
    assert_int_equal(curl_easy_perform(c), CURLE_OPERATION_TIMEDOUT);
    curl_easy_cleanup(c);
}

static void
test_bad_timeouts(void **state)
{
    CURL *c = curl_easy_init();
    struct ig_err err;
    (void)state;

    assert_non_null(c);
    assert_int_equal(ig_curl_harden(c, 0, 1000, &err), IG_ERR_INVALID);
    assert_int_equal(ig_curl_harden(c, 1000, -1, &err), IG_ERR_INVALID);
    assert_non_null(strstr(err.msg, "timeouts"));
    curl_easy_cleanup(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redirect_not_followed),
        cmocka_unit_test(test_file_url_refused),
        cmocka_unit_test(test_environment_proxy_ignored),
        cmocka_unit_test(test_total_timeout),
        cmocka_unit_test(test_bad_timeouts),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
