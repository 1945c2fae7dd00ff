/*
 * exec_curl.c - per-thread reusable libcurl handles (see exec_curl.h).
 */
#include "exec_curl.h"

#include <pthread.h>

static pthread_key_t keys[2];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
destroy(void *h)
{
    curl_easy_cleanup(h);
}

static void
make_keys(void)
{
    (void)pthread_key_create(&keys[0], destroy);
    (void)pthread_key_create(&keys[1], destroy);
}

CURL *
exec_curl_handle(int kind)
{
    CURL *h;

    (void)pthread_once(&once, make_keys);
    kind = kind != 0;
    h = pthread_getspecific(keys[kind]);
    if (h != NULL) {
        curl_easy_reset(h);
        return h;
    }
    h = curl_easy_init();
    if (h != NULL && pthread_setspecific(keys[kind], h) != 0) {
        curl_easy_cleanup(h);
        h = NULL;
    }
    return h;
}
