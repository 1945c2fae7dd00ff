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
 * the Content-Type and the body come back. A 200 answer is searched for
 * the credential's raw bytes, the header value and its base64 (binary
 * pack data is not rewritten: a hit withholds the whole answer); any other
 * answer is text the agent may see only after exec_scrub_bytes.
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
#include "ig_secmem.h"

struct sink {
    int fd;
    uint64_t len, cap;
    int over, io_error;
};

struct source {
    int fd;
    uint64_t off, len;
};

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;
    size_t total = size * n, off = 0;
    ssize_t w;

    if (total > s->cap - s->len) {
        s->over = 1;
        return 0; /* libcurl stops: CURLE_WRITE_ERROR */
    }
    while (off < total) {
        w = write(s->fd, p + off, total - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->io_error = 1;
            return 0;
        }
        off += (size_t)w;
    }
    s->len += total;
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

/* The header list: credential, then the request's own. NULL on OOM. */
static struct curl_slist *
headers(const struct exec_git_call *call, const char *cred_line)
{
    struct curl_slist *h = NULL, *t;
    char line[192];
    int i;

    for (i = 0; i < 5; i++) {
        line[0] = '\0';
        if (i == 0)
            (void)snprintf(line, sizeof(line), "%s", cred_line);
        else if (i == 1 && call->content_type != NULL)
            (void)snprintf(line, sizeof(line), "Content-Type: %s",
                           call->content_type);
        else if (i == 2 && call->gzip)
            (void)snprintf(line, sizeof(line), "Content-Encoding: gzip");
        else if (i == 3 && call->git_protocol[0] != '\0')
            (void)snprintf(line, sizeof(line), "Git-Protocol: %s",
                           call->git_protocol);
        else if (i == 4)
            (void)snprintf(line, sizeof(line), "Expect:");
        if (line[0] == '\0' && i != 0)
            continue;
        t = curl_slist_append(h, i == 0 ? cred_line : line);
        if (t == NULL) {
            ig_curl_headers_free(h);
            return NULL;
        }
        h = t;
    }
    return h;
}

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

/* 1 when the file (len bytes) holds any of the n needles. */
static int
file_holds(int fd, uint64_t len, const char *const *needle, size_t n)
{
    char buf[65536 + 1024];
    size_t keep = 0, i, nl, longest = 0;
    uint64_t off = 0;
    ssize_t r;

    for (i = 0; i < n; i++)
        if (strlen(needle[i]) > longest)
            longest = strlen(needle[i]);
    if (longest == 0 || longest > 1024)
        return longest > 1024;
    while (off < len) {
        r = pread(fd, buf + keep, sizeof(buf) - keep, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 1; /* cannot tell: withhold */
        off += (uint64_t)r;
        keep += (size_t)r;
        for (i = 0; i < n; i++)
            if ((nl = strlen(needle[i])) > 0 && holds(buf, keep, needle[i], nl))
                return 1;
        if (keep > longest) { /* keep a tail a needle may straddle */
            memmove(buf, buf + keep - (longest - 1), longest - 1);
            keep = longest - 1;
        }
    }
    return 0;
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
                          sink->over ? "the upstream's answer is over the cap"
                                     : curl_easy_strerror(rc));
    (void)curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    (void)curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type);
    (void)snprintf(out->content_type, sizeof(out->content_type), "%s",
                   type != NULL ? type : "");
    return IG_OK;
}

enum ig_status
exec_git_up_call(const struct exec_git_call *call, struct exec_git_up *out,
                 struct ig_err *err)
{
    const struct exec_git_repo *r = call->repo;
    struct sink sink = {call->reply_fd, 0, (uint64_t)r->max_reply_bytes, 0, 0};
    struct source src = {call->body_fd, 0, call->body_len};
    unsigned char *cred = NULL;
    const char *value = NULL, *needles[3];
    struct curl_slist *h = NULL;
    char *line = NULL, *pc = NULL;
    size_t len = 0, pl;
    enum ig_status st;
    CURL *c;

    memset(out, 0, sizeof(*out));
    st = exec_secrets_get(call->secrets, r->credential, &cred, &len, err);
    if (st != IG_OK)
        return ig_err_set(err, st,
                          "the repository's credential cannot be read");
    line = credential_line(r, cred, len, &value);
    pl = strlen(r->cred_prefix);
    pc = ig_secmem_get(pl + len + 1);
    c = exec_curl_handle(1);
    if (line == NULL || pc == NULL || c == NULL ||
        (h = headers(call, line)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "cannot start the upstream call");
        goto out;
    }
    memcpy(pc, r->cred_prefix, pl);
    memcpy(pc + pl, cred, len);
    pc[pl + len] = '\0';
    st = perform(c, call, h, &sink, &src, out, err);
    out->reply_len = sink.len;
    if (st == IG_OK && sink.io_error)
        st = ig_err_set(err, IG_ERR_IO, "cannot spool the upstream's answer");
    if (st == IG_OK) {
        /* The raw credential (with a NUL inside, only its prefix up to
           it: the scrubber catches the rest on text answers). */
        needles[0] = (const char *)pc + pl;
        needles[1] = value;
        needles[2] = pc;
        out->reflected = file_holds(call->reply_fd, sink.len, needles, 3);
    }
out:
    ig_curl_headers_free(h); /* wipes the copied credential line */
    ig_secmem_put(line);
    ig_secmem_put(pc);
    exec_secret_free(cred, len);
    return st;
}
