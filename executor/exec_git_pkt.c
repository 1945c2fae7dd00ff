/*
 * exec_git_pkt.c - pkt-lines and the commands of a git-receive-pack
 * request, read from an agent assumed hostile.
 *
 * How a request body is read (exec_git_push_parse):
 *   1. "0000" alone is git's probe before a chunked push: IG_OK, probe = 1.
 *   2. A first pkt-line starting "push-cert" is a signed push: refused,
 *      since the gateway cannot verify the certificate.
 *   3. "shallow <id>" lines, then commands "<old> <new> <ref>" (the first
 *      carries NUL + capabilities), up to a flush. Each line may end in one
 *      '\n' (git's reader drops it too). The first id fixes the id length
 *      (40 or 64) for every later id.
 *   4. With the push-options cap, option lines up to a flush.
 *   5. pack_offset: the pack's first 4 bytes must read "PACK" (as far as
 *      buf holds them), or, when every command is a delete, nothing.
 *   6. No two commands name the same ref (sorted copy of pointers).
 * Everything is built in a local struct and moved to *out only on
 * success, so a refusal leaves nothing allocated.
 */
#include "exec_git_pkt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ig_text.h"

struct parse {
    const unsigned char *buf;
    size_t len, off;
    int complete;
    size_t idlen;     /* 0 until the first id */
    size_t cmd_alloc; /* entries allocated in p.cmds */
    struct exec_git_push p;
    struct ig_err *err;
};

enum ig_status
exec_git_pkt_read(const unsigned char *buf, size_t len, size_t *off,
                  struct exec_git_pkt *pkt, struct ig_err *err)
{
    size_t at = *off, n = 0, i;
    int v;

    if (at > len || len - at < 4)
        return ig_err_set(err, IG_ERR_INVALID,
                          "pkt-line length at offset %zu runs past the end",
                          at);
    for (i = 0; i < 4; i++) {
        if ((v = ig_hex_digit(buf[at + i])) < 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "pkt-line length at offset %zu is not hex", at);
        n = n * 16 + (size_t)v;
    }
    pkt->data = NULL;
    pkt->len = 0;
    if (n <= 2) {
        pkt->kind = n == 0   ? EXEC_GIT_PKT_FLUSH
                    : n == 1 ? EXEC_GIT_PKT_DELIM
                             : EXEC_GIT_PKT_END;
        *off = at + 4;
        return IG_OK;
    }
    if (n < 4 || n > EXEC_GIT_PKT_MAX)
        return ig_err_set(err, IG_ERR_INVALID,
                          "pkt-line at offset %zu has invalid length %zu", at,
                          n);
    if (n > len - at)
        return ig_err_set(err, IG_ERR_INVALID,
                          "pkt-line at offset %zu runs past the end", at);
    pkt->kind = EXEC_GIT_PKT_DATA;
    pkt->data = buf + at + 4;
    pkt->len = n - 4;
    *off = at + n;
    return IG_OK;
}

enum ig_status
exec_git_pkt_add(struct ig_buf *out, const void *data, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    char head[4];
    size_t total = n + 4;
    enum ig_status st;

    if (n > EXEC_GIT_PKT_MAX - 4)
        return IG_ERR_LIMIT;
    head[0] = hex[(total >> 12) & 15];
    head[1] = hex[(total >> 8) & 15];
    head[2] = hex[(total >> 4) & 15];
    head[3] = hex[total & 15];
    if (out->len > out->max || out->max - out->len < total)
        return IG_ERR_LIMIT; /* all or nothing */
    if ((st = ig_buf_add(out, head, 4)) != IG_OK)
        return st;
    return ig_buf_add(out, data, n);
}

enum ig_status
exec_git_pkt_flush(struct ig_buf *out)
{
    return ig_buf_add(out, "0000", 4);
}

size_t
exec_git_chomp(const unsigned char *data, size_t n)
{
    return n > 0 && data[n - 1] == '\n' ? n - 1 : n;
}

size_t
exec_git_id_len(const unsigned char *p, size_t n)
{
    size_t i;

    if (n != 40 && n != 64)
        return 0;
    for (i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return n;
}

int
exec_git_id_zero(const unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (p[i] != '0')
            return 0;
    return n > 0;
}

int
exec_git_ref_ok(const unsigned char *p, size_t n)
{
    size_t i;

    if (n == 0 || n > EXEC_GIT_REF_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (p[i] < 0x21 || p[i] == 0x7f)
            return 0;
    return 1;
}

/* A NUL-terminated malloc'd copy of n bytes, or NULL. */
static char *
dup_bytes(const unsigned char *p, size_t n)
{
    char *s = malloc(n + 1);

    if (s == NULL)
        return NULL;
    if (n > 0)
        memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Check an id of the push's id length; the first id fixes that length. */
static int
id_fits(struct parse *ps, const unsigned char *p, size_t n)
{
    if (exec_git_id_len(p, n) == 0)
        return 0;
    if (ps->idlen == 0)
        ps->idlen = n;
    return n == ps->idlen;
}

static enum ig_status
parse_shallow(struct parse *ps, const unsigned char *d, size_t n)
{
    n = exec_git_chomp(d, n);
    if (ps->p.nshallow >= EXEC_GIT_SHALLOW_MAX)
        return ig_err_set(ps->err, IG_ERR_INVALID, "more than %d shallow lines",
                          EXEC_GIT_SHALLOW_MAX);
    if (!id_fits(ps, d + 8, n - 8))
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "shallow line %zu: not a %s id", ps->p.nshallow + 1,
                          ps->idlen ? "same-length hex" : "40 or 64 hex");
    ps->p.nshallow++;
    return IG_OK;
}

static enum ig_status
add_cmd(struct parse *ps, struct exec_git_cmd **c)
{
    struct exec_git_cmd *v;
    size_t n;

    if (ps->p.ncmds >= EXEC_GIT_CMDS_MAX)
        return ig_err_set(ps->err, IG_ERR_INVALID, "more than %d commands",
                          EXEC_GIT_CMDS_MAX);
    if (ps->p.ncmds == ps->cmd_alloc) {
        n = ps->cmd_alloc ? ps->cmd_alloc * 2 : 8;
        if (n > EXEC_GIT_CMDS_MAX)
            n = EXEC_GIT_CMDS_MAX;
        v = realloc(ps->p.cmds, n * sizeof(*v));
        if (v == NULL)
            return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
        ps->p.cmds = v;
        ps->cmd_alloc = n;
    }
    *c = &ps->p.cmds[ps->p.ncmds];
    memset(*c, 0, sizeof(**c));
    return IG_OK;
}

/* "<old> <new> <ref>" (line holds no NUL here). */
static enum ig_status
parse_cmd_line(struct parse *ps, const unsigned char *d, size_t n)
{
    const unsigned char *sp = memchr(d, ' ', n), *nw, *ref;
    size_t k = ps->p.ncmds + 1, il;
    struct exec_git_cmd *c = NULL;
    enum ig_status st;

    il = sp != NULL ? (size_t)(sp - d) : 0;
    if (il == 0 || !id_fits(ps, d, il) || n - il - 1 < il + 2 ||
        d[2 * il + 1] != ' ' || !id_fits(ps, d + il + 1, il))
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "command %zu is not \"<old> <new> <ref>\" with "
                          "lowercase hex ids of one length (40 or 64)",
                          k);
    nw = d + il + 1;
    ref = d + 2 * il + 2;
    if (memchr(ref, '\0', n - 2 * il - 2) != NULL)
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "command %zu: NUL inside the ref", k);
    if (!exec_git_ref_ok(ref, n - 2 * il - 2))
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "command %zu: the ref is empty, too long or holds "
                          "a space or control byte",
                          k);
    if (exec_git_id_zero(d, il) && exec_git_id_zero(nw, il))
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "command %zu: old and new ids are both zero", k);
    if ((st = add_cmd(ps, &c)) != IG_OK)
        return st;
    memcpy(c->old_id, d, il);
    memcpy(c->new_id, nw, il);
    c->kind = exec_git_id_zero(d, il)    ? EXEC_GIT_CREATE
              : exec_git_id_zero(nw, il) ? EXEC_GIT_DELETE
                                         : EXEC_GIT_UPDATE;
    if ((c->ref = dup_bytes(ref, n - 2 * il - 2)) == NULL)
        return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
    ps->p.ncmds++;
    return IG_OK;
}

/* Whether the space-separated list caps holds the token t exactly. */
static int
has_cap(const char *caps, const char *t)
{
    size_t n = strlen(t);
    const char *s = caps;

    /* As git's parse_feature_request reads them: a name after the start
       or any white space, ended by the end, white space or "=value". */
    while ((s = strstr(s, t)) != NULL) {
        if ((s == caps || isspace((unsigned char)s[-1])) &&
            (s[n] == '\0' || s[n] == '=' || isspace((unsigned char)s[n])))
            return 1;
        s++;
    }
    return 0;
}

static enum ig_status
parse_caps(struct parse *ps, const unsigned char *d, size_t n)
{
    struct exec_git_push *p = &ps->p;
    const char *fmt;

    if (memchr(d, '\0', n) != NULL)
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "NUL inside the capability list");
    if ((p->caps = dup_bytes(d, n)) == NULL)
        return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
    p->side_band_64k = has_cap(p->caps, "side-band-64k");
    p->report_status = has_cap(p->caps, "report-status");
    p->report_status_v2 = has_cap(p->caps, "report-status-v2");
    p->atomic = has_cap(p->caps, "atomic");
    p->quiet = has_cap(p->caps, "quiet");
    p->push_options = has_cap(p->caps, "push-options");
    fmt = has_cap(p->caps, "object-format=sha1")     ? "sha1"
          : has_cap(p->caps, "object-format=sha256") ? "sha256"
                                                     : NULL;
    if (fmt == NULL && strstr(p->caps, "object-format=") != NULL)
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "unknown object-format capability");
    if (fmt != NULL && ps->idlen != (fmt[3] == '1' ? 40u : 64u))
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "ids do not match the object-format capability");
    return IG_OK;
}

/* One command pkt; the first splits off the capabilities at its NUL. */
static enum ig_status
parse_cmd(struct parse *ps, const unsigned char *d, size_t n)
{
    const unsigned char *nul;
    enum ig_status st;

    n = exec_git_chomp(d, n);
    nul = memchr(d, '\0', n);
    if (ps->p.ncmds == 0 && nul != NULL) {
        size_t ln = (size_t)(nul - d);

        if ((st = parse_cmd_line(ps, d, ln)) != IG_OK)
            return st;
        return parse_caps(ps, nul + 1, n - ln - 1);
    }
    if (ps->p.ncmds == 0 && (st = parse_caps(ps, d, 0)) != IG_OK)
        return st;
    return parse_cmd_line(ps, d, n);
}

static enum ig_status
next_pkt(struct parse *ps, struct exec_git_pkt *pkt, const char *section)
{
    struct ig_err e;

    if (exec_git_pkt_read(ps->buf, ps->len, &ps->off, pkt, &e) == IG_OK)
        return IG_OK;
    return ig_err_set(ps->err, IG_ERR_INVALID, "%s%s: %s", section,
                      ps->complete ? "" : " (head capped at EXEC_GIT_HEAD_MAX)",
                      e.msg);
}

static enum ig_status
parse_commands(struct parse *ps)
{
    struct exec_git_pkt pkt;
    enum ig_status st;

    for (;;) {
        if ((st = next_pkt(ps, &pkt, "commands")) != IG_OK)
            return st;
        if (pkt.kind == EXEC_GIT_PKT_FLUSH)
            break;
        if (pkt.kind != EXEC_GIT_PKT_DATA)
            return ig_err_set(ps->err, IG_ERR_INVALID,
                              "commands: unexpected delim/end pkt-line");
        if (ps->p.ncmds == 0 && pkt.len >= 9 &&
            memcmp(pkt.data, "push-cert", 9) == 0)
            return ig_err_set(ps->err, IG_ERR_INVALID,
                              "signed pushes (push-cert) are not supported "
                              "by the gateway");
        if (ps->p.ncmds == 0 && pkt.len >= 8 &&
            memcmp(pkt.data, "shallow ", 8) == 0)
            st = parse_shallow(ps, pkt.data, pkt.len);
        else
            st = parse_cmd(ps, pkt.data, pkt.len);
        if (st != IG_OK)
            return st;
    }
    if (ps->p.ncmds == 0)
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "no commands before the flush");
    return IG_OK;
}

static enum ig_status
parse_options(struct parse *ps)
{
    struct exec_git_pkt pkt;
    enum ig_status st;
    size_t n;
    char **v;

    for (;;) {
        if ((st = next_pkt(ps, &pkt, "push options")) != IG_OK)
            return st;
        if (pkt.kind == EXEC_GIT_PKT_FLUSH)
            return IG_OK;
        if (pkt.kind != EXEC_GIT_PKT_DATA)
            return ig_err_set(ps->err, IG_ERR_INVALID,
                              "push options: unexpected delim/end pkt-line");
        if (ps->p.noptions >= EXEC_GIT_OPTIONS_MAX)
            return ig_err_set(ps->err, IG_ERR_INVALID,
                              "more than %d push options",
                              EXEC_GIT_OPTIONS_MAX);
        n = exec_git_chomp(pkt.data, pkt.len);
        if (memchr(pkt.data, '\0', n) || memchr(pkt.data, '\n', n))
            return ig_err_set(ps->err, IG_ERR_INVALID,
                              "push option %zu holds a NUL or a newline",
                              ps->p.noptions + 1);
        v = realloc(ps->p.options, (ps->p.noptions + 1) * sizeof(*v));
        if (v == NULL)
            return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
        ps->p.options = v;
        if ((v[ps->p.noptions] = dup_bytes(pkt.data, n)) == NULL)
            return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
        ps->p.noptions++;
    }
}

/* What follows the commands (and options): a pack, or nothing. */
static enum ig_status
check_tail(struct parse *ps)
{
    size_t i, rest = ps->len - ps->off;
    int need_pack = 0;

    for (i = 0; i < ps->p.ncmds; i++)
        if (ps->p.cmds[i].kind != EXEC_GIT_DELETE)
            need_pack = 1;
    ps->p.pack_offset = ps->off;
    if (!need_pack) {
        if (rest == 0 && ps->complete)
            return IG_OK;
        return ig_err_set(
            ps->err, IG_ERR_INVALID, "bytes after a delete-only command list%s",
            ps->p.push_options ? ""
                               : " (push options without the capability?)");
    }
    if ((rest == 0 && ps->complete) ||
        memcmp(ps->buf + ps->off, "PACK", rest < 4 ? rest : 4) != 0 ||
        (rest < 4 && ps->complete))
        return ig_err_set(
            ps->err, IG_ERR_INVALID, "no pack after the commands%s",
            ps->p.push_options ? ""
                               : " (push options without the capability?)");
    return IG_OK;
}

static int
cmp_ref(const void *a, const void *b)
{
    const struct exec_git_cmd *const *x = a, *const *y = b;

    return strcmp((*x)->ref, (*y)->ref);
}

static enum ig_status
check_dups(struct parse *ps)
{
    const struct exec_git_cmd **v;
    size_t i, n = ps->p.ncmds;
    int dup = 0;

    if (n < 2)
        return IG_OK;
    if ((v = malloc(n * sizeof(*v))) == NULL)
        return ig_err_set(ps->err, IG_ERR_NOMEM, "out of memory");
    for (i = 0; i < n; i++)
        v[i] = &ps->p.cmds[i];
    qsort(v, n, sizeof(*v), cmp_ref);
    for (i = 1; i < n && !dup; i++)
        dup = strcmp(v[i - 1]->ref, v[i]->ref) == 0;
    free(v);
    if (dup)
        return ig_err_set(ps->err, IG_ERR_INVALID,
                          "two commands for the same ref");
    return IG_OK;
}

static enum ig_status
parse_body(struct parse *ps)
{
    enum ig_status st;

    if (ps->len == 0)
        return ig_err_set(ps->err, IG_ERR_INVALID, "empty body");
    if (ps->len == 4 && ps->complete && memcmp(ps->buf, "0000", 4) == 0) {
        ps->p.probe = 1;
        ps->p.pack_offset = 4;
        return IG_OK;
    }
    if ((st = parse_commands(ps)) != IG_OK)
        return st;
    if (ps->p.push_options && (st = parse_options(ps)) != IG_OK)
        return st;
    if ((st = check_tail(ps)) != IG_OK)
        return st;
    return check_dups(ps);
}

enum ig_status
exec_git_push_parse(const unsigned char *buf, size_t len, int complete,
                    struct exec_git_push *out, struct ig_err *err)
{
    struct parse ps;
    enum ig_status st;

    memset(&ps, 0, sizeof(ps));
    memset(out, 0, sizeof(*out));
    ps.buf = buf;
    ps.len = len;
    ps.complete = complete;
    ps.err = err;
    st = parse_body(&ps);
    if (st != IG_OK)
        goto out;
    if (ps.p.caps == NULL && (ps.p.caps = dup_bytes(buf, 0)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    *out = ps.p;
    memset(&ps.p, 0, sizeof(ps.p));
out:
    exec_git_push_release(&ps.p);
    return st;
}

void
exec_git_push_release(struct exec_git_push *p)
{
    size_t i;

    if (p == NULL)
        return;
    for (i = 0; i < p->ncmds; i++)
        free(p->cmds[i].ref);
    free(p->cmds);
    for (i = 0; i < p->noptions; i++)
        free(p->options[i]);
    free(p->options);
    free(p->caps);
    memset(p, 0, sizeof(*p));
}

/* Whether the JSON array a holds a string equal to s, byte for byte. */
static int
granted(const json_t *a, const char *s)
{
    size_t i, n = strlen(s);

    if (!json_is_array(a))
        return 0;
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);

        if (json_is_string(v) && json_string_length(v) == n &&
            memcmp(json_string_value(v), s, n) == 0)
            return 1;
    }
    return 0;
}

size_t
exec_git_push_check(const struct exec_git_push *p, const json_t *refs,
                    const json_t *del, const char **reasons)
{
    size_t i, refused = 0;

    for (i = 0; i < p->ncmds; i++) {
        const struct exec_git_cmd *c = &p->cmds[i];

        if (c->kind == EXEC_GIT_DELETE)
            reasons[i] = granted(del, c->ref) ? NULL : EXEC_GIT_REASON_DELETE;
        else
            reasons[i] = granted(refs, c->ref) ? NULL : EXEC_GIT_REASON_REF;
        if (reasons[i] != NULL)
            refused++;
    }
    return refused;
}
