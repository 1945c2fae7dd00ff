/*
 * exec_git_report.c - the git gateway's replies (a refused push's report,
 * a refused advertisement) and its readers of upstream bytes (the report
 * of a forwarded push, the refs of an advertisement).
 *
 * Report-status (git Documentation/technical/pack-protocol, receive-pack
 * report()): pkt-lines "unpack ok\n", then "ok <ref>\n" or
 * "ng <ref> <reason>\n" per command, then a flush. With side-band-64k the
 * whole report, its flush included, is cut into channel-1 packets (a
 * 0x01 byte then at most EXEC_GIT_PKT_MAX - 5 bytes) and the stream ends
 * with a flush of its own; progress (channel 2) may come before or after
 * the report. The reader undoes that: it joins channel 1 into one buffer
 * (capped by the reply's length) and reads the report from it.
 *
 * An advertisement: "# service=...\n" pkt, flush, then one
 * "<id> <ref>" pkt per ref, the first with NUL + capabilities, then a
 * flush. Text from the upstream that goes into a detail is reduced to
 * printable ASCII, so a log line stays one line.
 */
#include "exec_git_pkt.h"

#include <ctype.h>

#include <stdlib.h>
#include <string.h>

#include "ig_text.h"

#define SIDEBAND_CHUNK (EXEC_GIT_PKT_MAX - 5)

static int
printable(const char *s, size_t max)
{
    size_t i;

    for (i = 0; s[i] != '\0'; i++)
        if (i >= max || (unsigned char)s[i] < 0x20 ||
            (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

/* One "ng <ref> <reason>\n" line. */
static enum ig_status
add_ng(struct ig_buf *r, const char *ref, const char *reason)
{
    char line[EXEC_GIT_REF_MAX + EXEC_GIT_REASON_MAX + 8];
    int n = snprintf(line, sizeof(line), "ng %s %s\n", ref, reason);

    if (n < 0 || (size_t)n >= sizeof(line))
        return IG_ERR_LIMIT;
    return exec_git_pkt_add(r, line, (size_t)n);
}

static enum ig_status
build_report(const struct exec_git_push *p, const char *const *reasons,
             struct ig_buf *r)
{
    enum ig_status st;
    size_t i;

    if ((st = exec_git_pkt_add(r, "unpack ok\n", 10)) != IG_OK)
        return st;
    for (i = 0; i < p->ncmds; i++) {
        const char *why = reasons != NULL && reasons[i] != NULL
                              ? reasons[i]
                              : EXEC_GIT_REASON_WHOLE;

        if ((st = add_ng(r, p->cmds[i].ref, why)) != IG_OK)
            return st;
    }
    return exec_git_pkt_flush(r);
}

static enum ig_status
add_sideband(struct ig_buf *out, const char *data, size_t n)
{
    unsigned char chunk[SIDEBAND_CHUNK + 1];
    enum ig_status st;
    size_t k;

    while (n > 0) {
        k = n < SIDEBAND_CHUNK ? n : SIDEBAND_CHUNK;
        chunk[0] = 1;
        memcpy(chunk + 1, data, k);
        if ((st = exec_git_pkt_add(out, chunk, k + 1)) != IG_OK)
            return st;
        data += k;
        n -= k;
    }
    return exec_git_pkt_flush(out);
}

enum ig_status
exec_git_report_refusal(const struct exec_git_push *p,
                        const char *const *reasons, struct ig_buf *out)
{
    struct ig_buf r;
    enum ig_status st;
    size_t i;

    for (i = 0; i < p->ncmds; i++) {
        const char *ref = p->cmds[i].ref;

        if (ref == NULL ||
            !exec_git_ref_ok((const unsigned char *)ref, strlen(ref)) ||
            (reasons != NULL && reasons[i] != NULL &&
             !printable(reasons[i], EXEC_GIT_REASON_MAX)))
            return IG_ERR_INVALID;
    }
    if (!p->side_band_64k)
        return build_report(p, reasons, out);
    ig_buf_init(&r, out->max);
    st = build_report(p, reasons, &r);
    if (st != IG_OK)
        goto out;
    st = add_sideband(out, r.data, r.len);
out:
    ig_buf_release(&r);
    return st;
}

enum ig_status
exec_git_adv_error(const char *service, const char *msg, struct ig_buf *out)
{
    char line[EXEC_GIT_REASON_MAX + 8];
    enum ig_status st;
    int n;

    if (service == NULL || msg == NULL ||
        (strcmp(service, "git-receive-pack") != 0 &&
         strcmp(service, "git-upload-pack") != 0) ||
        !printable(msg, EXEC_GIT_REASON_MAX))
        return IG_ERR_INVALID;
    n = snprintf(line, sizeof(line), "# service=%s\n", service);
    if (n < 0 || (size_t)n >= sizeof(line))
        return IG_ERR_LIMIT;
    if ((st = exec_git_pkt_add(out, line, (size_t)n)) != IG_OK ||
        (st = exec_git_pkt_flush(out)) != IG_OK)
        return st;
    n = snprintf(line, sizeof(line), "ERR %s\n", msg);
    if (n < 0 || (size_t)n >= sizeof(line))
        return IG_ERR_LIMIT;
    return exec_git_pkt_add(out, line, (size_t)n);
}

/* A new JSON string of p[0..n) with every byte outside printable ASCII
   turned into '?'. */
static json_t *
clean_string(const unsigned char *p, size_t n)
{
    char *s = malloc(n + 1);
    json_t *v;
    size_t i;

    if (s == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        s[i] = p[i] >= 0x20 && p[i] <= 0x7e ? (char)p[i] : '?';
    s[n] = '\0';
    v = json_stringn(s, n);
    free(s);
    return v;
}

/* Join channel 1 of a side-band reply into ch1; skip channel 2. */
static enum ig_status
demux(const unsigned char *buf, size_t len, struct ig_buf *ch1,
      struct ig_err *err)
{
    struct exec_git_pkt pkt;
    size_t off = 0;
    char text[128];
    enum ig_status st;

    for (;;) {
        if ((st = exec_git_pkt_read(buf, len, &off, &pkt, err)) != IG_OK)
            return st;
        if (pkt.kind == EXEC_GIT_PKT_FLUSH)
            break;
        if (pkt.kind != EXEC_GIT_PKT_DATA || pkt.len == 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "side-band packet at offset %zu has no channel",
                              off);
        if (pkt.data[0] == 3) {
            size_t i, n = pkt.len - 1 < sizeof(text) - 1 ? pkt.len - 1
                                                         : sizeof(text) - 1;

            for (i = 0; i < n; i++) {
                unsigned char c = pkt.data[1 + i];
                text[i] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
            }
            text[n] = '\0';
            return ig_err_set(err, IG_ERR_INVALID, "upstream fatal error: %s",
                              text);
        }
        if (pkt.data[0] == 1) {
            if ((st = ig_buf_add(ch1, pkt.data + 1, pkt.len - 1)) != IG_OK)
                return ig_err_set(err, st, "side-band channel 1: %s",
                                  ig_strerror(st));
        } else if (pkt.data[0] != 2) {
            return ig_err_set(err, IG_ERR_INVALID,
                              "side-band packet with unknown channel %u",
                              (unsigned)pkt.data[0]);
        }
    }
    if (off != len)
        return ig_err_set(err, IG_ERR_INVALID,
                          "bytes after the side-band flush");
    return IG_OK;
}

/* Record "ok <ref>" (why NULL) or "ng <ref> [<reason>]" in refs. */
static enum ig_status
add_status(json_t *refs, const unsigned char *d, size_t n, int ok, int *all_ok,
           struct ig_err *err)
{
    const unsigned char *sp = ok ? NULL : memchr(d, ' ', n);
    size_t rn = sp != NULL ? (size_t)(sp - d) : n;
    char ref[EXEC_GIT_REF_MAX + 1];
    json_t *v;

    if (!exec_git_ref_ok(d, rn) || !ig_utf8_valid(d, rn))
        return ig_err_set(err, IG_ERR_INVALID,
                          "report: a ref is not valid or not UTF-8");
    memcpy(ref, d, rn);
    ref[rn] = '\0';
    if (json_object_get(refs, ref) != NULL)
        return ig_err_set(err, IG_ERR_INVALID, "report: a ref repeats");
    if (ok)
        v = json_string("ok");
    else if (sp == NULL)
        v = json_string("ng");
    else if (n - rn - 1 == 2 && memcmp(sp + 1, "ok", 2) == 0)
        v = json_string("ng ok");
    else
        v = clean_string(sp + 1, n - rn - 1);
    if (!ok)
        *all_ok = 0;
    /* json_object_set_new steals v, also on failure */
    if (v == NULL || json_object_set_new(refs, ref, v) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    return IG_OK;
}

/* One report line after "unpack". */
static enum ig_status
report_line(json_t *refs, const unsigned char *d, size_t n, int *all_ok,
            struct ig_err *err)
{
    n = exec_git_chomp(d, n);
    if (n >= 3 && memcmp(d, "ok ", 3) == 0)
        return add_status(refs, d + 3, n - 3, 1, all_ok, err);
    if (n >= 3 && memcmp(d, "ng ", 3) == 0)
        return add_status(refs, d + 3, n - 3, 0, all_ok, err);
    if (n >= 7 && memcmp(d, "option ", 7) == 0)
        return IG_OK;
    return ig_err_set(err, IG_ERR_INVALID,
                      "report: a line is not ok, ng or option");
}

static enum ig_status
read_report(const unsigned char *b, size_t len, json_t *detail, int *all_ok,
            struct ig_err *err)
{
    json_t *refs = json_object_get(detail, "refs");
    struct exec_git_pkt pkt;
    enum ig_status st;
    size_t off = 0, n;
    json_t *u;

    if ((st = exec_git_pkt_read(b, len, &off, &pkt, err)) != IG_OK)
        return st;
    n = pkt.kind == EXEC_GIT_PKT_DATA ? exec_git_chomp(pkt.data, pkt.len) : 0;
    if (n < 7 || memcmp(pkt.data, "unpack ", 7) != 0)
        return ig_err_set(err, IG_ERR_INVALID,
                          "report does not start with \"unpack\"");
    *all_ok = n == 9 && memcmp(pkt.data + 7, "ok", 2) == 0;
    u = *all_ok ? json_string("ok") : clean_string(pkt.data + 7, n - 7);
    /* json_object_set_new steals u, also on failure */
    if (u == NULL || json_object_set_new(detail, "unpack", u) != 0)
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    for (;;) {
        if ((st = exec_git_pkt_read(b, len, &off, &pkt, err)) != IG_OK)
            return st;
        if (pkt.kind == EXEC_GIT_PKT_FLUSH)
            break;
        if (pkt.kind != EXEC_GIT_PKT_DATA)
            return ig_err_set(err, IG_ERR_INVALID,
                              "report: unexpected delim/end pkt-line");
        if ((st = report_line(refs, pkt.data, pkt.len, all_ok, err)) != IG_OK)
            return st;
    }
    if (off != len)
        return ig_err_set(err, IG_ERR_INVALID, "bytes after the report");
    if (json_object_size(refs) == 0)
        *all_ok = 0;
    return IG_OK;
}

enum ig_status
exec_git_report_parse(const unsigned char *buf, size_t len, int side_band,
                      json_t **detail, int *all_ok, struct ig_err *err)
{
    struct ig_buf ch1;
    json_t *d = NULL;
    enum ig_status st;
    int ok = 0;

    *detail = NULL;
    *all_ok = 0;
    ig_buf_init(&ch1, len);
    /* json_pack "o" steals the new empty object */
    d = json_pack("{s:o}", "refs", json_object());
    if (d == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (side_band) {
        if ((st = demux(buf, len, &ch1, err)) != IG_OK)
            goto out;
        st = read_report((const unsigned char *)ch1.data, ch1.len, d, &ok, err);
    } else {
        st = read_report(buf, len, d, &ok, err);
    }
    if (st != IG_OK)
        goto out;
    *detail = d;
    *all_ok = ok;
    d = NULL;
out:
    json_decref(d);
    ig_buf_release(&ch1);
    return st;
}

struct adv {
    void (*fn)(void *ctx, const char *id, const char *ref);
    void *ctx;
    size_t lines, refs, idlen;
    int empty, shallow;
    struct ig_err *err;
};

/* "<id> <ref>" (no NUL): calls fn unless the line is not a ref. */
static enum ig_status
adv_ref(struct adv *a, const unsigned char *d, size_t n)
{
    const unsigned char *sp = memchr(d, ' ', n);
    size_t il = sp != NULL ? (size_t)(sp - d) : 0, rn = n - il - 1;
    char id[65], ref[EXEC_GIT_REF_MAX + 1];

    if (il == 0 || exec_git_id_len(d, il) == 0 ||
        (a->idlen != 0 && il != a->idlen) || !exec_git_ref_ok(sp + 1, rn))
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "advertisement line %zu is not \"<id> <ref>\"",
                          a->lines);
    a->idlen = il;
    if (a->empty)
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "advertisement: a ref after capabilities^{}");
    if (rn == 15 && memcmp(sp + 1, "capabilities^{}", 15) == 0) {
        if (a->lines != 1 || !exec_git_id_zero(d, il))
            return ig_err_set(a->err, IG_ERR_INVALID,
                              "advertisement: misplaced capabilities^{}");
        a->empty = 1;
        return IG_OK;
    }
    if ((rn == 5 && memcmp(sp + 1, ".have", 5) == 0) ||
        (rn > 3 && memcmp(sp + 1 + rn - 3, "^{}", 3) == 0))
        return IG_OK;
    if (++a->refs > EXEC_GIT_ADV_REFS_MAX)
        return ig_err_set(a->err, IG_ERR_LIMIT,
                          "advertisement: more than %d refs",
                          EXEC_GIT_ADV_REFS_MAX);
    memcpy(id, d, il);
    id[il] = '\0';
    memcpy(ref, sp + 1, rn);
    ref[rn] = '\0';
    a->fn(a->ctx, id, ref);
    return IG_OK;
}

static enum ig_status
adv_line(struct adv *a, const unsigned char *d, size_t n)
{
    const unsigned char *nul;

    n = exec_git_chomp(d, n);
    a->lines++;
    if (a->lines == 1 && n == 9 && memcmp(d, "version 1", 9) == 0) {
        a->lines = 0;
        return IG_OK;
    }
    if (n >= 8 && memcmp(d, "shallow ", 8) == 0) {
        a->shallow = 1;
        if (exec_git_id_len(d + 8, n - 8) == 0)
            return ig_err_set(a->err, IG_ERR_INVALID,
                              "advertisement: bad shallow line");
        return IG_OK;
    }
    if (a->shallow)
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "advertisement: a ref after a shallow line");
    nul = memchr(d, '\0', n);
    if (nul != NULL && a->lines != 1)
        return ig_err_set(a->err, IG_ERR_INVALID,
                          "advertisement line %zu holds a NUL", a->lines);
    return adv_ref(a, d, nul != NULL ? (size_t)(nul - d) : n);
}

static enum ig_status
adv_header(const unsigned char *buf, size_t len, size_t *off,
           struct ig_err *err)
{
    struct exec_git_pkt pkt;
    enum ig_status st;
    size_t n;

    if ((st = exec_git_pkt_read(buf, len, off, &pkt, err)) != IG_OK)
        return st;
    n = pkt.kind == EXEC_GIT_PKT_DATA ? exec_git_chomp(pkt.data, pkt.len) : 0;
    if (!((n == 26 &&
           memcmp(pkt.data, "# service=git-receive-pack", 26) == 0) ||
          (n == 25 && memcmp(pkt.data, "# service=git-upload-pack", 25) == 0)))
        return ig_err_set(err, IG_ERR_INVALID,
                          "advertisement does not start with \"# service=\"");
    if ((st = exec_git_pkt_read(buf, len, off, &pkt, err)) != IG_OK)
        return st;
    if (pkt.kind != EXEC_GIT_PKT_FLUSH)
        return ig_err_set(err, IG_ERR_INVALID,
                          "advertisement: no flush after the service line");
    return IG_OK;
}

enum ig_status
exec_git_adv_refs(const unsigned char *buf, size_t len,
                  void (*fn)(void *ctx, const char *id, const char *ref),
                  void *ctx, struct ig_err *err)
{
    struct exec_git_pkt pkt;
    struct adv a;
    enum ig_status st;
    size_t off = 0;

    memset(&a, 0, sizeof(a));
    a.fn = fn;
    a.ctx = ctx;
    a.err = err;
    if ((st = adv_header(buf, len, &off, err)) != IG_OK)
        return st;
    for (;;) {
        if ((st = exec_git_pkt_read(buf, len, &off, &pkt, err)) != IG_OK)
            return st;
        if (pkt.kind == EXEC_GIT_PKT_FLUSH)
            break;
        if (pkt.kind != EXEC_GIT_PKT_DATA)
            return ig_err_set(err, IG_ERR_INVALID,
                              "advertisement: unexpected delim/end pkt-line");
        if ((st = adv_line(&a, pkt.data, pkt.len)) != IG_OK)
            return st;
    }
    if (off != len)
        return ig_err_set(err, IG_ERR_INVALID,
                          "bytes after the advertisement's flush");
    return IG_OK;
}

int
exec_git_asks_side_band(const unsigned char *buf, size_t len)
{
    struct exec_git_pkt k;
    const unsigned char *nul, *end;
    size_t off = 0, i;

    while (exec_git_pkt_read(buf, len, &off, &k, NULL) == IG_OK &&
           k.kind == EXEC_GIT_PKT_DATA) {
        nul = memchr(k.data, '\0', k.len);
        if (nul == NULL)
            continue; /* a shallow line, say */
        end = k.data + exec_git_chomp(k.data, k.len);
        for (i = 1; nul + i + 13 <= end; i++) /* as has_cap reads it */
            if (memcmp(nul + i, "side-band-64k", 13) == 0 &&
                (nul[i - 1] == '\0' || isspace(nul[i - 1])) &&
                (nul + i + 13 == end || nul[i + 13] == '=' ||
                 isspace(nul[i + 13])))
                return 1;
        return 0;
    }
    return 0;
}
