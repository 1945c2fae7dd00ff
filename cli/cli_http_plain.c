/*
 * cli_http_plain.c - the http:// transport of the CLI's JSON client
 * (cli_http_int.h): one HTTP/1.1 request over a new TCP connection.
 *
 * The request is written whole with one sendmsg (header lines from a
 * stack buffer that is wiped, since it holds the bearer token, and the
 * body) with
 * "Connection: close"; the answer is read until cli_http_parse_answer
 * (cli_http_answer.c) says it is whole, or the peer closes, or the total
 * timeout passes. Every wait is a poll(2) bounded by the connect timeout
 * (connecting) or what is left of the total timeout (everything), so a
 * peer that accepts and never answers costs at most the total timeout.
 */
#include "cli_http_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cli_http.h"

#define REQ_HEAD_MAX (CLI_HTTP_MAX_URL + IG_CLI_AUTH_HEADER_MAX + 512)

/* ---- the URL ---- */

static int
host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* HOST of an authority into t->host; the bytes it took, or 0. */
static size_t
parse_host(const char *a, size_t n, struct cli_http_target *t)
{
    size_t i = 0, end;

    if (n > 0 && a[0] == '[') { /* [IPv6] */
        for (i = 1; i < n && a[i] != ']'; i++)
            if (!(a[i] == ':' || a[i] == '.' || (a[i] >= '0' && a[i] <= '9') ||
                  (a[i] >= 'a' && a[i] <= 'f') || (a[i] >= 'A' && a[i] <= 'F')))
                return 0;
        if (i == n || i == 1)
            return 0;
        end = i + 1;
        i--;
        memcpy(t->host, a + 1, i);
        t->host[i] = '\0';
        return i < sizeof(t->host) ? end : 0;
    }
    while (i < n && host_char(a[i]))
        i++;
    if (i == 0 || i >= sizeof(t->host))
        return 0;
    memcpy(t->host, a, i);
    t->host[i] = '\0';
    return i;
}

enum ig_status
cli_http_target_parse(const char *url, struct cli_http_target *t,
                      struct ig_err *err)
{
    const char *a = url + 7, *slash;
    size_t n, h, i;
    long port = 80;

    memset(t, 0, sizeof(*t));
    if (strncmp(url, "http://", 7) != 0)
        goto bad;
    slash = strchr(a, '/');
    n = slash != NULL ? (size_t)(slash - a) : strlen(a);
    if (strpbrk(url, "?#@%\\") != NULL || n >= sizeof(t->authority) ||
        (h = parse_host(a, n, t)) == 0)
        goto bad;
    if (h < n) {
        if (a[h] != ':' || h + 1 == n || n - h - 1 > 5)
            goto bad;
        for (port = 0, i = h + 1; i < n; i++) {
            if (a[i] < '0' || a[i] > '9')
                goto bad;
            port = port * 10 + (a[i] - '0');
        }
        if (port < 1 || port > 65535)
            goto bad;
    }
    (void)snprintf(t->port, sizeof(t->port), "%ld", port);
    memcpy(t->authority, a, n);
    t->authority[n] = '\0';
    t->prefix = 7 + n;
    return IG_OK;
bad:
    return ig_err_set(err, IG_ERR_INVALID,
                      "the URL must be http://HOST[:PORT][/PATH] (no user, "
                      "query or escapes) or https://...");
}

/* ---- time ---- */

static long
now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Wait until fd is ready for ev or deadline (ms): 1 ready, 0 timed out,
   -1 failed. */
static int
wait_fd(int fd, short ev, long deadline)
{
    struct pollfd p;
    long left;
    int r;

    for (;;) {
        left = deadline - now_ms();
        if (left <= 0)
            return 0;
        p.fd = fd;
        p.events = ev;
        p.revents = 0;
        r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* ---- connecting ---- */

/* A connected socket to one of ai's addresses, or -1 with why set. */
static int
connect_any(const struct addrinfo *ai, long deadline, const char **why)
{
    int fd, one = 1, soerr;
    socklen_t sl;

    *why = "connection refused";
    for (; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family,
                    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            *why = strerror(errno);
            continue;
        }
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            return fd;
        soerr = errno;
        if (soerr == EINPROGRESS) {
            int w = wait_fd(fd, POLLOUT, deadline);

            sl = sizeof(soerr);
            if (w == 0)
                soerr = ETIMEDOUT;
            else if (w < 0 ||
                     getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
                soerr = errno;
            if (w > 0 && soerr == 0)
                return fd;
        }
        *why = soerr == ETIMEDOUT ? "connect timed out" : strerror(soerr);
        (void)close(fd);
    }
    return -1;
}

static int
dial(const struct cli_http_target *t, long deadline, const char **why)
{
    struct addrinfo hints, *ai = NULL;
    int fd, rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(t->host, t->port, &hints, &ai);
    if (rc != 0) {
        *why = rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc);
        return -1;
    }
    fd = connect_any(ai, deadline, why);
    freeaddrinfo(ai);
    return fd;
}

/* ---- the exchange ---- */

/* Write all of iov[0..1] (one segment when it fits: the head and the body
   together): 0, or -1 with why set. */
static int
send_all(int fd, struct iovec iov[2], long deadline, const char **why)
{
    struct msghdr m;
    size_t w;
    ssize_t r;

    memset(&m, 0, sizeof(m));
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    while (m.msg_iovlen > 0) {
        r = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR) {
            *why = strerror(errno);
            return -1;
        }
        if (r <= 0) {
            if (wait_fd(fd, POLLOUT, deadline) <= 0) {
                *why = "timed out sending the request";
                return -1;
            }
            continue;
        }
        for (w = (size_t)r; m.msg_iovlen > 0 && w >= m.msg_iov->iov_len;) {
            w -= m.msg_iov->iov_len;
            m.msg_iov++;
            m.msg_iovlen--;
        }
        if (m.msg_iovlen > 0) {
            m.msg_iov->iov_base = (char *)m.msg_iov->iov_base + w;
            m.msg_iov->iov_len -= w;
        }
    }
    return 0;
}

/* The request line and header lines into buf; their length, or 0 when
   they do not fit or the target holds a byte a request line cannot. */
static size_t
request_head(const struct cli_http_xfer *x, const struct cli_http_target *t,
             char *buf, size_t cap)
{
    const char *target = x->url[t->prefix] ? x->url + t->prefix : "/";
    char clen[48] = "";
    size_t i;
    int n;

    for (i = 0; target[i] != '\0'; i++)
        if ((unsigned char)target[i] <= 0x20 ||
            (unsigned char)target[i] >= 0x7f)
            return 0;
    if (x->body != NULL || strcmp(x->method, "POST") == 0)
        (void)snprintf(clen, sizeof(clen), "Content-Length: %zu\r\n",
                       x->body != NULL ? x->len : (size_t)0);
    n = snprintf(
        buf, cap,
        "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: intentgate-cli\r\n"
        "Accept: application/json\r\n%s%s%s%sConnection: close\r\n\r\n",
        x->method, target, t->authority,
        x->body != NULL ? "Content-Type: application/json\r\n" : "",
        x->auth != NULL ? x->auth : "", x->auth != NULL ? "\r\n" : "", clen);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/* Read the answer into raw until it parses whole: the parser's verdict,
   or CLI_HTTP_MORE with why set when reading failed or timed out. */
static enum cli_http_parsed
read_answer(int fd, struct cli_http_xfer *x, struct ig_buf *raw, long deadline,
            const char **why, struct ig_err *perr)
{
    char chunk[16384];
    enum cli_http_parsed p = CLI_HTTP_MORE;
    ssize_t r;

    while (p == CLI_HTTP_MORE) {
        r = recv(fd, chunk, sizeof(chunk), 0);
        if (r < 0 &&
            (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (wait_fd(fd, POLLIN, deadline) <= 0) {
                *why = "timed out waiting for the answer";
                break;
            }
            continue;
        }
        if (r < 0) {
            *why = strerror(errno);
            break;
        }
        if (r > 0 && ig_buf_add(raw, chunk, (size_t)r) != IG_OK) {
            p = CLI_HTTP_BIG;
            break;
        }
        p = cli_http_parse_answer(raw->data, raw->len, r == 0, &x->status,
                                  x->resp, perr);
    }
    sodium_memzero(chunk, sizeof(chunk));
    return p;
}

/* Send the request (head, then the body) and read the answer. */
static enum cli_http_parsed
exchange(int fd, struct cli_http_xfer *x, const char *head, size_t n,
         struct ig_buf *raw, long deadline, const char **why,
         struct ig_err *perr)
{
    enum cli_http_parsed p;
    const char *sent_why;
    struct iovec iov[2];

    iov[0].iov_base = (void *)(uintptr_t)head; /* sendmsg does not write */
    iov[0].iov_len = n;
    iov[1].iov_base = (void *)(uintptr_t)(x->body != NULL ? x->body : "");
    iov[1].iov_len = x->body != NULL ? x->len : 0;
    if (send_all(fd, iov, deadline, why) == 0)
        return read_answer(fd, x, raw, deadline, why, perr);
    /* The server may have answered (413) and closed before taking the
       whole body: its answer, if whole, is the one to report. */
    sent_why = *why;
    p = read_answer(fd, x, raw, deadline, why, perr);
    if (p != CLI_HTTP_DONE) {
        *why = sent_why;
        p = CLI_HTTP_MORE;
    }
    return p;
}

enum ig_status
cli_http_plain_call(struct cli_http_xfer *x, struct ig_err *err)
{
    long start = now_ms(), deadline = start + CLI_HTTP_TIMEOUT_MS;
    char head[REQ_HEAD_MAX];
    struct cli_http_target t;
    enum cli_http_parsed p;
    const char *why = "";
    struct ig_err perr;
    struct ig_buf raw;
    enum ig_status st = IG_OK;
    size_t n;
    int fd;

    perr.msg[0] = '\0';
    ig_buf_init(&raw, x->resp->max + CLI_HTTP_HEADER_MAX + x->resp->max / 8);
    if ((st = cli_http_target_parse(x->base, &t, err)) != IG_OK)
        goto out;
    if ((n = request_head(x, &t, head, sizeof(head))) == 0) {
        st = ig_err_set(err, IG_ERR_INVALID,
                        "the request line is too long or not URL-safe");
        goto out;
    }
    fd = dial(&t, start + CLI_HTTP_CONNECT_TIMEOUT_MS, &why);
    if (fd < 0) {
        st = ig_err_set(err, IG_ERR_IO, "cannot reach %s: %s", x->base, why);
        goto out;
    }
    p = exchange(fd, x, head, n, &raw, deadline, &why, &perr);
    (void)close(fd);
    if (p == CLI_HTTP_BIG)
        st = ig_err_set(err, IG_ERR_LIMIT,
                        "the answer from %s is larger than %zu bytes", x->base,
                        x->resp->max);
    else if (p == CLI_HTTP_BAD)
        st = ig_err_set(err, IG_ERR_IO, "cannot reach %s: %s", x->base,
                        perr.msg);
    else if (p == CLI_HTTP_MORE)
        st = ig_err_set(err, IG_ERR_IO, "cannot reach %s: %s", x->base, why);
out:
    sodium_memzero(head, sizeof(head));
    ig_buf_release_secret(&raw);
    return st;
}
