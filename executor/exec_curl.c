/*
 * exec_curl.c - per-thread reusable libcurl handles (see exec_curl.h), all
 * drawing on one process-wide connection cache: the MCP gateway runs each
 * request on a thread of its own, and without the shared cache every call
 * would open new connections to the PDP and to its upstream.
 */
#include "exec_curl.h"

#include <pthread.h>

static pthread_key_t keys[2];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLSH *share;
static pthread_mutex_t locks[CURL_LOCK_DATA_LAST];

static void
destroy(void *h)
{
    curl_easy_cleanup(h);
}

static void
lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ctx)
{
    (void)h;
    (void)access;
    (void)ctx;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        (void)pthread_mutex_lock(&locks[data]);
}

static void
unlock(CURL *h, curl_lock_data data, void *ctx)
{
    (void)h;
    (void)ctx;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        (void)pthread_mutex_unlock(&locks[data]);
}

static void
make_keys(void)
{
    int i;

    (void)pthread_key_create(&keys[0], destroy);
    (void)pthread_key_create(&keys[1], destroy);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        (void)pthread_mutex_init(&locks[i], NULL);
    /* Without a share (out of memory), each handle keeps its own cache. */
    share = curl_share_init();
    if (share != NULL &&
        (curl_share_setopt(share, CURLSHOPT_LOCKFUNC, lock) != CURLSHE_OK ||
         curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, unlock) != CURLSHE_OK ||
         curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) !=
             CURLSHE_OK ||
         curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) !=
             CURLSHE_OK)) {
        (void)curl_share_cleanup(share);
        share = NULL;
    }
}

void
exec_curl_share(CURL *h)
{
    (void)pthread_once(&once, make_keys);
    if (share != NULL)
        (void)curl_easy_setopt(h, CURLOPT_SHARE, share);
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
        exec_curl_share(h);
        return h;
    }
    h = curl_easy_init();
    if (h != NULL && pthread_setspecific(keys[kind], h) != 0) {
        curl_easy_cleanup(h);
        h = NULL;
    }
    if (h != NULL)
        exec_curl_share(h);
    return h;
}
