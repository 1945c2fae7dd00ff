/*
 * exec_git_up.c - the git gateway's call to the upstream repository: one
 * libcurl request with the credential injected, the request body streamed
 * from the gateway's body file, the answer written to a temporary file
 * (capped), and the check that nothing the upstream sent back holds the
 * credential.
 *
 * The credential is read from the secrets for this call only; the header
 * line built from it lives in ig_secmem memory and is wiped after. Only
 * three headers go upstream besides it: Content-Type, Content-Encoding
 * (gzip, for a fetch's negotiation) and Git-Protocol; only the status,
 * the Content-Type and the body come back. The answer is searched as it
 * arrives for the credential's raw bytes, the header value (with HTTP
 * Basic, the base64 of user:credential) and prefix + credential; a hit
 * stops the call (binary pack data is never rewritten). The caller learns
 * the status and type at the first byte (on_start) and, as bytes arrive,
 * how many of them are safe to pass on (on_progress: all but the last
 * longest-spelling - 1, which a spelling could still complete).
 */
#include "exec_git_up.h"

#include <curl/curl.h>
#include <errno.h>
#include <sodium.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec_curl.h"
#include "ig_curl.h"
#include "ig_file.h"
#include "ig_secmem.h"

/* Where the answer goes, and the running search for the credential in
   it: tail keeps the last longest - 1 bytes, so a spelling split across
   two writes is still seen. */
struct sink {
    int fd;
    uint64_t len, cap;
    int over, io_error, reflected, started;
    const struct exec_git_call *call;
    CURL *c;
    const char *needle[3];
    size_t nlen[3], longest;
    char tail[EXEC_GIT_NEEDLE_MAX];
    size_t ntail;
};

struct source {
    int fd;
    uint64_t off, len;
};

/* 1 when hay (n bytes) holds needle (m > 0 bytes). */
static int
holds(const char *hay, size_t n, const char *needle, size_t m)
{
    const char *p = hay, *end = hay + n;

    while (end - p >= (ptrdiff_t)m &&
           (p = memchr(p, needle[0], (size_t)(end - p) - m + 1)) != NULL) {
        if (memcmp(p, needle, m) == 0)
            return 1;
        p++;
    }
    return 0;
}

/* Does p (n bytes), after what came before, complete a spelling? Then
   update the tail. */
static int
scan(struct sink *s, const char *p, size_t n)
{
    char win[2 * EXEC_GIT_NEEDLE_MAX];
    size_t i, head = n < s->longest - 1 ? n : s->longest - 1, keep;

    memcpy(win, s->tail, s->ntail);
    memcpy(win + s->ntail, p, head);
    for (i = 0; i < 3; i++)
        if (s->nlen[i] > 0 &&
            (holds(win, s->ntail + head, s->needle[i], s->nlen[i]) ||
             holds(p, n, s->needle[i], s->nlen[i])))
            return 1;
    if (n >= s->longest - 1) {
        s->ntail = s->longest - 1;
        memcpy(s->tail, p + n - s->ntail, s->ntail);
    } else {
        keep = s->ntail + n > s->longest - 1 ? s->longest - 1 - n : s->ntail;
        memmove(s->tail, s->tail + s->ntail - keep, keep);
        memcpy(s->tail + keep, p, n);
        s->ntail = keep + n;
    }
    return 0;
}

/* The first bytes of the answer: tell the caller the status and type. */
static void
started(struct sink *s)
{
    const char *type = NULL;
    long status = 0;

    s->started = 1;
    if (s->call->on_start == NULL)
        return;
    (void)curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &status);
    (void)curl_easy_getinfo(s->c, CURLINFO_CONTENT_TYPE, &type);
    s->call->on_start(s->call->ctx, status, type != NULL ? type : "");
}

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t total = size * n;

    if (!s->started)
        started(s);
    if (total > s->cap - s->len) {
        s->over = 1;
        return 0; /* libcurl stops: CURLE_WRITE_ERROR */
    }
    if (scan(s, p, total)) {
        s->reflected = 1;
        return 0;
    }
    if (ig_file_write_all(s->fd, p, total) != 0) {
        s->io_error = 1;
        return 0;
    }
    s->len += total;
    if (s->call->on_progress != NULL && s->len >= s->longest)
        s->call->on_progress(s->call->ctx, s->len - (s->longest - 1));
    return total;
}

static size_t
on_read(char *p, size_t size, size_t n, void *arg)
{
    struct source *s = arg;
    size_t want = size * n;
    ssize_t r;

    if (s->off >= s->len)
        return 0;
    if (want > s->len - s->off)
        want = (size_t)(s->len - s->off);
    do
        r = pread(s->fd, p, want, (off_t)s->off);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return CURL_READFUNC_ABORT;
    s->off += (uint64_t)r;
    return (size_t)r;
}

/* "Authorization: Basic b64(user:cred)" or "<header>: <prefix><cred>",
   in secure memory; *value points at the header's value inside it. */
static char *
credential_line(const struct exec_git_repo *r, const unsigned char *cred,
                size_t len, const char **value)
{
    size_t n, b64, pre;
    char *pair, *line;

    if (r->cred_user != NULL) {
        n = strlen(r->cred_user) + 1 + len;
        b64 = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
        pair = ig_secmem_get(n);
        line = ig_secmem_get(sizeof("Authorization: Basic ") + b64);
        if (pair == NULL || line == NULL) {
            ig_secmem_put(pair);
            ig_secmem_put(line);
            return NULL;
        }
        memcpy(pair, r->cred_user, strlen(r->cred_user));
        pair[strlen(r->cred_user)] = ':';
        memcpy(pair + strlen(r->cred_user) + 1, cred, len);
        memcpy(line, "Authorization: Basic ", 21);
        (void)sodium_bin2base64(line + 21, b64, (const unsigned char *)pair, n,
                                sodium_base64_VARIANT_ORIGINAL);
        ig_secmem_put(pair);
        *value = line + 21;
        return line;
    }
    pre = strlen(r->cred_header) + 2 + strlen(r->cred_prefix);
    line = ig_secmem_get(pre + len + 1);
    if (line == NULL)
        return NULL;
    (void)snprintf(line, pre + 1, "%s: %s", r->cred_header, r->cred_prefix);
    memcpy(line + pre, cred, len);
    line[pre + len] = '\0';
    *value = line + strlen(r->cred_header) + 2;
    return line;
}

/* The header list: credential, then the request's own. NULL on OOM.
   (curl_slist_append copies each line; the caller wipes them.) */
static struct curl_slist *
headers(const struct exec_git_call *call, const char *cred_line)
{
    char type[128], proto[160];
    const char *line[5];
    struct curl_slist *h = NULL, *t;
    size_t n = 0, i;

    line[n++] = cred_line;
    if (call->content_type != NULL) {
        (void)snprintf(type, sizeof(type), "Content-Type: %s",
                       call->content_type);
        line[n++] = type;
    }
    if (call->gzip)
        line[n++] = "Content-Encoding: gzip";
    if (call->git_protocol[0] != '\0') {
        (void)snprintf(proto, sizeof(proto), "Git-Protocol: %s",
                       call->git_protocol);
        line[n++] = proto;
    }
    line[n++] = "Expect:"; /* no 100-continue round trip */
    for (i = 0; i < n; i++) {
        if ((t = curl_slist_append(h, line[i])) == NULL) {
            ig_curl_headers_free(h);
            return NULL;
        }
        h = t;
    }
    return h;
}

static enum ig_status
perform(CURL *c, const struct exec_git_call *call, struct curl_slist *h,
        struct sink *sink, struct source *src, struct exec_git_up *out,
        struct ig_err *err)
{
    const char *type = NULL;
    CURLcode rc;

    if (ig_curl_harden(
            c, call->repo->timeout_ms < 10000 ? call->repo->timeout_ms : 10000,
            call->repo->timeout_ms, err) != IG_OK)
        return IG_ERR_IO;
    if (curl_easy_setopt(c, CURLOPT_URL, call->url) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_WRITEDATA, sink) != CURLE_OK ||
        (call->body_fd >= 0 &&
         (curl_easy_setopt(c, CURLOPT_POST, 1L) != CURLE_OK ||
          curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                           (curl_off_t)call->body_len) != CURLE_OK ||
          curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read) != CURLE_OK ||
          curl_easy_setopt(c, CURLOPT_READDATA, src) != CURLE_OK)))
        return ig_err_set(err, IG_ERR_NOMEM, "cannot set up the upstream call");
    rc = curl_easy_perform(c);
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    out->sent = rc != CURLE_COULDNT_CONNECT &&
                rc != CURLE_COULDNT_RESOLVE_HOST &&
                rc != CURLE_SSL_CONNECT_ERROR;
    if (rc != CURLE_OK)
        return ig_err_set(err, IG_ERR_IO, "%s",
                          sink->reflected ? "the upstream's answer held the "
                                            "credential"
                          : sink->over ? "the upstream's answer is over the cap"
                                       : curl_easy_strerror(rc));
    if (!sink->started)
        started(sink);
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    (void)curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
    (void)snprintf(out->content_type, sizeof(out->content_type), "%s",
                   type != NULL ? type : "");
    return IG_OK;
}

/* The spellings the answer is searched for: the raw credential (up to a
   NUL in it), the header value sent, prefix + credential. */
static enum ig_status
set_needles(struct sink *s, const char *raw, const char *value,
            const char *prefixed, struct ig_err *err)
{
    size_t i;

    s->needle[0] = raw;
    s->needle[1] = value;
    s->needle[2] = prefixed;
    s->longest = 1;
    for (i = 0; i < 3; i++) {
        s->nlen[i] = strlen(s->needle[i]);
        if (s->nlen[i] > s->longest)
            s->longest = s->nlen[i];
    }
    if (s->longest > EXEC_GIT_NEEDLE_MAX)
        return ig_err_set(err, IG_ERR_LIMIT,
                          "the repository's credential is too long for "
                          "the gateway (at most %d bytes sent)",
                          EXEC_GIT_NEEDLE_MAX);
    return IG_OK;
}

enum ig_status
exec_git_up_call(const struct exec_git_call *call, struct exec_git_up *out,
                 struct ig_err *err)
{
    const struct exec_git_repo *r = call->repo;
    struct sink sink;
    struct source src = {call->body_fd, 0, call->body_len};
    unsigned char *cred = NULL;
    const char *value = NULL;
    struct curl_slist *h = NULL;
    char *line = NULL, *pc = NULL;
    size_t len = 0, pl;
    enum ig_status st;
    CURL *c;

    memset(out, 0, sizeof(*out));
    memset(&sink, 0, sizeof(sink));
    sink.fd = call->reply_fd;
    sink.cap = (uint64_t)r->max_reply_bytes;
    sink.call = call;
    st = exec_secrets_get(call->secrets, r->credential, &cred, &len, err);
    if (st != IG_OK)
        return ig_err_set(err, st,
                          "the repository's credential cannot be read");
    line = credential_line(r, cred, len, &value);
    pl = strlen(r->cred_prefix);
    pc = ig_secmem_get(pl + len + 1);
    c = sink.c = exec_curl_handle(1);
    if (line == NULL || pc == NULL || c == NULL ||
        (h = headers(call, line)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "cannot start the upstream call");
        goto out;
    }
    memcpy(pc, r->cred_prefix, pl);
    memcpy(pc + pl, cred, len);
    pc[pl + len] = '\0';
    if ((st = set_needles(&sink, pc + pl, value, pc, err)) != IG_OK)
        goto out;
    st = perform(c, call, h, &sink, &src, out, err);
    out->reply_len = sink.len;
    out->reflected = sink.reflected;
    if (st == IG_OK && sink.io_error)
        st = ig_err_set(err, IG_ERR_IO, "cannot spool the upstream's answer");
out:
    ig_curl_headers_free(h); /* wipes the copied credential line */
    ig_secmem_put(line);
    ig_secmem_put(pc);
    sodium_memzero(sink.tail, sizeof(sink.tail));
    exec_secret_free(cred, len);
    return st;
}

enum ig_status
exec_git_up_credential(const struct exec_git_repo *repo,
                       const struct exec_secrets *secrets, char **line,
                       struct ig_err *err)
{
    unsigned char *cred = NULL;
    const char *value;
    size_t len = 0;
    enum ig_status st;

    *line = NULL;
    st = exec_secrets_get(secrets, repo->credential, &cred, &len, err);
    if (st != IG_OK)
        return ig_err_set(err, st,
                          "the repository's credential cannot be read");
    *line = credential_line(repo, cred, len, &value);
    exec_secret_free(cred, len);
    return *line != NULL ? IG_OK
                         : ig_err_set(err, IG_ERR_NOMEM, "out of memory");
}
