/*
 * cmd_mcp.c - `intentgate mcp connect URL`: a bridge between an MCP client
 * that only speaks stdio (Claude Desktop) and an MCP server that speaks
 * Streamable HTTP (2025-11-25), such as intentgate's MCP gateway.
 *
 * DESIGN. The main thread reads stdin, one JSON-RPC message per line
 * (IG_MCP_LINE_MAX at most; a longer line is skipped and answered with a
 * -32700 error, id null, since its id cannot be known). Each message is
 * checked strictly (ig_json_parse: one JSON object) and POSTed as it came
 * by a thread of its own (cli_mcp_http.c), so a request the server holds
 * (an escalated tools/call waiting for a human) never delays a ping sent
 * after it. At most IG_MCP_INFLIGHT_MAX POSTs run at once; past it a
 * request is answered -32000 at once. Every stdout write is one whole line
 * under one mutex (cli_mcp_out.c). After the initialize result, one more
 * thread holds the GET stream open for the server's own messages.
 *
 * The token comes from INTENTGATE_TOKEN only (never argv, never printed);
 * it lives in sodium_malloc'd memory, wiped at exit.
 *
 * Ending: at stdin's end, or SIGTERM/SIGINT (blocked but while the main
 * thread waits in pselect, so a signal is never lost between a check and a
 * read), the bridge waits up to IG_MCP_DRAIN_MS for the POSTs in flight,
 * then stops every transfer still running, ends the session with DELETE
 * and exits 0.
 */
#include "cli.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "cli_mcp.h"
#include "ig_buf.h"
#include "ig_json.h"

#define CMD "mcp"
#define AUTH_PREFIX "Authorization: Bearer "
#define URL_MAX 2048
#define READ_CHUNK 65536

#define DRAIN_TEXT IG_STR(IG_MCP_DRAIN_MS)
#define INFLIGHT_TEXT IG_STR(IG_MCP_INFLIGHT_MAX)

static const char mcp_usage[] =
    "usage: intentgate mcp connect URL\n"
    "       intentgate mcp tools pending|accept ... (see mcp tools --help)\n"
    "\n"
    "Bridge an MCP client that speaks stdio (one JSON-RPC message per line)\n"
    "to an MCP server that speaks Streamable HTTP (2025-11-25) at URL, such\n"
    "as intentgate's MCP gateway: each line read is POSTed to URL, and the\n"
    "server's answers (JSON or event streams) and the messages of its GET\n"
    "stream are written to stdout, one per line. Requests run concurrently\n"
    "(at most " INFLIGHT_TEXT "): one held by the server does not delay the "
    "others.\n"
    "At the end of stdin (or on SIGTERM) it waits up to " DRAIN_TEXT " ms\n"
    "for requests in flight, ends the session with DELETE and exits.\n"
    "  URL  http[s]://HOST[:PORT]/PATH (no user name or password)\n"
    "Environment: INTENTGATE_TOKEN (the agent's bearer token, sent to URL).\n"
    "Errors go to stderr, one line each. Exit status: 0 done; 2 bad\n"
    "arguments or INTENTGATE_TOKEN not set; 1 out of memory.\n";

static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
    (void)sig;
    got_signal = 1;
}

/* A job: one message POSTed by its own thread. */
struct job {
    struct mcp_bridge *b;
    char *body;
    size_t len;
    json_t *id; /* NULL: no answer owed */
    int is_init;
};

static void *
job_run(void *arg)
{
    struct job *j = arg;
    struct mcp_bridge *b = j->b;

    mcp_post(b, j->body, j->len, j->id, j->is_init);
    json_decref(j->id);
    free(j->body);
    free(j);
    (void)pthread_mutex_lock(&b->lock);
    b->inflight--;
    (void)pthread_cond_broadcast(&b->changed);
    (void)pthread_mutex_unlock(&b->lock);
    return NULL;
}

static void *
get_run(void *arg)
{
    mcp_get_stream(arg);
    return NULL;
}

/* Start the GET stream's thread, once (the bridge's initialized hook). */
static void
mcp_start_get(struct mcp_bridge *b)
{
    (void)pthread_mutex_lock(&b->lock);
    if (!b->get_started && !atomic_load(&b->stopping))
        b->get_started = pthread_create(&b->get_thread, NULL, get_run, b) == 0;
    (void)pthread_mutex_unlock(&b->lock);
}

/* Run j on a detached thread, if one is free; -1 when not (j untouched). */
static int
spawn(struct job *j)
{
    struct mcp_bridge *b = j->b;
    pthread_attr_t attr;
    pthread_t t;
    int rc;

    (void)pthread_mutex_lock(&b->lock);
    if (b->inflight >= IG_MCP_INFLIGHT_MAX) {
        (void)pthread_mutex_unlock(&b->lock);
        return -1;
    }
    b->inflight++;
    (void)pthread_mutex_unlock(&b->lock);
    if (pthread_attr_init(&attr) != 0)
        rc = -1;
    else {
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &attr, job_run, j) == 0 ? 0 : -1;
        (void)pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        (void)pthread_mutex_lock(&b->lock);
        b->inflight--;
        (void)pthread_mutex_unlock(&b->lock);
    }
    return rc;
}

/* One line from stdin (without its newline): check it, then send it. */
static void
take_line(struct mcp_bridge *b, const char *line, size_t len)
{
    json_t *m = NULL;
    const json_t *id, *method;
    struct ig_err err;
    struct job *j;

    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
                       line[len - 1] == '\t'))
        len--;
    if (len == 0)
        return;
    if (ig_json_parse(line, len, &m, &err) != IG_OK) {
        mcp_error_line(b, NULL, -32700, "Parse error: %s", err.msg);
        return;
    }
    if (!json_is_object(m)) {
        mcp_error_line(b, NULL, -32600,
                       "Invalid Request: not one JSON-RPC message");
        json_decref(m);
        return;
    }
    id = json_object_get(m, "id");
    method = json_object_get(m, "method");
    if (method == NULL)
        id = NULL; /* a response to the server: nothing answers it */
    j = calloc(1, sizeof(*j));
    if (j == NULL || (j->body = malloc(len)) == NULL) {
        free(j);
        if (id != NULL)
            mcp_error_line(b, id, -32000, "out of memory");
        json_decref(m);
        return;
    }
    memcpy(j->body, line, len);
    j->b = b;
    j->len = len;
    j->id = id != NULL ? json_incref(ig_json_unconst(id)) : NULL;
    j->is_init = json_is_string(method) &&
                 strcmp(json_string_value(method), "initialize") == 0;
    if (spawn(j) != 0) {
        if (id != NULL)
            mcp_error_line(b, id, -32000,
                           "too many requests in flight "
                           "(at most %d)",
                           IG_MCP_INFLIGHT_MAX);
        else
            mcp_log(b, "dropped a message: too many requests in flight");
        json_decref(j->id);
        free(j->body);
        free(j);
    }
    json_decref(m);
}

/* The stdin line being gathered. */
struct reader {
    struct ig_buf line;
    int skipping; /* the line went past the cap: drop it to its end */
};

static void
feed(struct mcp_bridge *b, struct reader *r, const char *p, size_t n)
{
    const char *nl;
    size_t k;

    while (n > 0) {
        nl = memchr(p, '\n', n);
        k = nl != NULL ? (size_t)(nl - p) : n;
        if (!r->skipping && ig_buf_add(&r->line, p, k) != IG_OK) {
            r->skipping = 1;
            ig_buf_reset(&r->line);
        }
        if (nl == NULL)
            return;
        if (r->skipping)
            mcp_error_line(b, NULL, -32700,
                           "Parse error: a line longer than %d bytes",
                           IG_MCP_LINE_MAX);
        else
            take_line(b, r->line.data != NULL ? r->line.data : "", r->line.len);
        ig_buf_reset(&r->line);
        r->skipping = 0;
        p += k + 1;
        n -= k + 1;
    }
}

/* Read stdin to its end or a signal; every line is taken. */
static void
read_stdin(struct mcp_bridge *b, const sigset_t *wait_mask)
{
    struct reader r = {{NULL, 0, 0, IG_MCP_LINE_MAX}, 0};
    static char chunk[READ_CHUNK];
    fd_set in;
    ssize_t n;

    while (!got_signal) {
        FD_ZERO(&in);
        FD_SET(0, &in);
        if (pselect(1, &in, NULL, NULL, NULL, wait_mask) < 0) {
            if (errno == EINTR)
                continue;
            mcp_log(b, "cannot wait for stdin: %s", strerror(errno));
            break;
        }
        n = read(0, chunk, sizeof(chunk));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            mcp_log(b, "cannot read stdin: %s", strerror(errno));
        if (n <= 0)
            break;
        feed(b, &r, chunk, (size_t)n);
    }
    if (!got_signal && !r.skipping && r.line.len > 0)
        take_line(b, r.line.data, r.line.len); /* no final newline */
    ig_buf_release(&r.line);
}

/* Wait up to IG_MCP_DRAIN_MS for the POSTs in flight (a line on stderr
   names those left when loud); 1 when all ended. */
static int
drain(struct mcp_bridge *b, int loud)
{
    struct timespec until;
    int left;

    (void)clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += IG_MCP_DRAIN_MS / 1000;
    until.tv_nsec += (IG_MCP_DRAIN_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    (void)pthread_mutex_lock(&b->lock);
    while (b->inflight > 0 &&
           pthread_cond_timedwait(&b->changed, &b->lock, &until) == 0)
        ;
    left = b->inflight;
    (void)pthread_mutex_unlock(&b->lock);
    if (left > 0 && loud)
        mcp_log(b, "%d request%s still in flight at the end; stopped", left,
                left == 1 ? "" : "s");
    return left == 0;
}

/* The URL: http:// or https://, no user info, no space or control. */
static int
url_ok(const char *url)
{
    const char *host, *end;
    size_t i, n = strlen(url);

    if (strncmp(url, "http://", 7) == 0)
        host = url + 7;
    else if (strncmp(url, "https://", 8) == 0)
        host = url + 8;
    else
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
            return 0;
    end = host + strcspn(host, "/?#");
    return n <= URL_MAX && end > host &&
           memchr(host, '@', (size_t)(end - host)) == NULL;
}

/* "Authorization: Bearer TOKEN" in sodium_malloc'd memory, or NULL. */
static char *
auth_line(const char *token)
{
    size_t i, n = strlen(token);
    char *a;

    for (i = 0; i < n; i++)
        if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7f)
            return NULL;
    if ((a = sodium_malloc(sizeof(AUTH_PREFIX) + n)) == NULL)
        return NULL;
    memcpy(a, AUTH_PREFIX, sizeof(AUTH_PREFIX) - 1);
    memcpy(a + sizeof(AUTH_PREFIX) - 1, token, n + 1);
    return a;
}

/* Signals: SIGTERM and SIGINT end the bridge, seen only in pselect (they are
   blocked everywhere else, threads included); SIGPIPE is ignored. */
static void
signals(sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: pselect returns EINTR */
    (void)sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGTERM, &sa, NULL);
    (void)sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    (void)sigaction(SIGPIPE, &sa, NULL);
    (void)sigemptyset(&block);
    (void)sigaddset(&block, SIGTERM);
    (void)sigaddset(&block, SIGINT);
    (void)pthread_sigmask(SIG_BLOCK, &block, wait_mask);
    (void)sigdelset(wait_mask, SIGTERM);
    (void)sigdelset(wait_mask, SIGINT);
}

static int
bridge_init(struct mcp_bridge *b, const char *url, const char *auth)
{
    pthread_condattr_t ca;

    memset(b, 0, sizeof(*b));
    b->url = url;
    b->auth = auth;
    b->initialized = mcp_start_get;
    atomic_init(&b->stopping, 0);
    if (pthread_condattr_init(&ca) != 0)
        return -1;
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&b->changed, &ca) != 0 ||
        pthread_mutex_init(&b->lock, NULL) != 0 ||
        pthread_mutex_init(&b->out, NULL) != 0) {
        (void)pthread_condattr_destroy(&ca);
        return -1;
    }
    (void)pthread_condattr_destroy(&ca);
    return 0;
}

static int
run(const char *url, char *auth)
{
    static struct mcp_bridge b; /* threads may outlive a stuck drain */
    sigset_t wait_mask;
    int all_done, started;

    if (bridge_init(&b, url, auth) != 0 ||
        curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
        cli_error(CMD, "cannot start: out of memory");
        sodium_free(auth);
        return CLI_EXIT_FAIL;
    }
    signals(&wait_mask);
    read_stdin(&b, &wait_mask);
    (void)drain(&b, 1);
    atomic_store(&b.stopping, 1); /* transfers abort within a second */
    (void)pthread_mutex_lock(&b.lock);
    started = b.get_started;
    (void)pthread_mutex_unlock(&b.lock);
    if (started)
        (void)pthread_join(b.get_thread, NULL);
    mcp_delete(&b);
    all_done = drain(&b, 0);
    if (all_done) { /* else a stuck POST may still use them */
        curl_global_cleanup();
        sodium_free(auth);
    }
    return CLI_EXIT_OK;
}

int
cli_mcp(int argc, char **argv)
{
    const char *names[] = {"INTENTGATE_TOKEN"};
    const char *token;
    char *auth;

    /* `mcp tools pending|accept`: the pins admin (cmd_mcp_tools.c). */
    if (argc >= 2 && strcmp(argv[1], "tools") == 0)
        return cmd_mcp_tools(argc - 1, argv + 1);
    if (cli_wants_help(argc, argv)) {
        (void)fputs(mcp_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "connect") != 0) {
        cli_error(CMD, "unknown or missing subcommand (connect URL, or tools "
                       "pending|accept)");
        return CLI_EXIT_USAGE;
    }
    if (argc != 3) {
        (void)fputs(mcp_usage, stderr);
        return CLI_EXIT_USAGE;
    }
    if (!url_ok(argv[2])) {
        cli_error(CMD, "URL must be http[s]://HOST[:PORT]/PATH without a "
                       "user name, spaces or control characters");
        return CLI_EXIT_USAGE;
    }
    if (cli_require_env(CMD, names, &token, 1) != 0)
        return CLI_EXIT_USAGE;
    if (sodium_init() < 0 || (auth = auth_line(token)) == NULL) {
        cli_error(CMD, "INTENTGATE_TOKEN holds a character a header cannot "
                       "carry (or out of memory)");
        return CLI_EXIT_USAGE;
    }
    return run(argv[2], auth); /* frees auth */
}
