/*
 * test_git_pkt.c - the git gateway's wire parsers and writers
 * (exec_git_pkt.c, exec_git_report.c), hostile input first.
 *
 * Request bodies are built here with an independent pkt-line writer
 * (snprintf "%04zx"), never with the module's own. Real traffic: every
 * seed under tests/fuzz/corpus/git_pkt was captured from git 2.39.5
 * pushing through `git http-backend` (a small Python CGI wrapper on
 * 127.0.0.1 that saved each request and response body), and
 * test_real_captures checks what each must parse to. The refusal bytes
 * are compared with hand-computed pkt-lines.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_git_pkt.h"

#define Z40 "0000000000000000000000000000000000000000"
#define A40 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B40 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define Z64 Z40 "000000000000000000000000"
#define A64 A40 "aaaaaaaaaaaaaaaaaaaaaaaa"
#define B64 B40 "bbbbbbbbbbbbbbbbbbbbbbbb"
#define CAPS " report-status side-band-64k object-format=sha1"

/* ---- an independent pkt-line builder ---- */

struct body {
    unsigned char *b;
    size_t n, cap;
};

static void
raw(struct body *w, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->b = realloc(w->b, w->cap);
        assert_non_null(w->b);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void
pktn(struct body *w, const char *s, size_t n)
{
    char h[8];

    assert_int_equal(snprintf(h, sizeof(h), "%04zx", n + 4), 4);
    raw(w, h, 4);
    raw(w, s, n);
}

static void
pkt(struct body *w, const char *s)
{
    pktn(w, s, strlen(s));
}

/* A first command with caps: "<old> <new> <ref>\0<caps>". */
static void
cmd1(struct body *w, const char *old, const char *nw, const char *ref,
     const char *caps)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "%s %s %s", old, nw, ref);

    assert_true(n > 0 && (size_t)n + strlen(caps) + 1 < sizeof(line));
    memcpy(line + n + 1, caps, strlen(caps));
    pktn(w, line, (size_t)n + 1 + strlen(caps));
}

static void
cmd(struct body *w, const char *old, const char *nw, const char *ref)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "%s %s %s", old, nw, ref);

    assert_true(n > 0 && (size_t)n < sizeof(line));
    pktn(w, line, (size_t)n);
}

static void
flush(struct body *w)
{
    raw(w, "0000", 4);
}

static void
pack(struct body *w)
{
    raw(w, "PACK\0\0\0\2\0\0\0\0", 12);
}

/* Parse w (complete); expect st; when not OK, *out must be all zero. */
static void
expect(struct body *w, int complete, enum ig_status want,
       struct exec_git_push *p, const char *msg_part)
{
    struct exec_git_push zero;
    struct ig_err err;
    enum ig_status st;

    memset(&err, 0, sizeof(err));
    st = exec_git_push_parse(w->b, w->n, complete, p, &err);
    if (st != want)
        fail_msg("status %d, want %d (%s)", st, want, err.msg);
    if (st != IG_OK) {
        memset(&zero, 0, sizeof(zero));
        assert_memory_equal(p, &zero, sizeof(zero));
    }
    if (msg_part != NULL && strstr(err.msg, msg_part) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, msg_part);
}

static void
refuse(struct body *w, const char *msg_part)
{
    struct exec_git_push p;

    expect(w, 1, IG_ERR_INVALID, &p, msg_part);
    free(w->b);
    memset(w, 0, sizeof(*w));
}

static void
refuse_bytes(const char *bytes, size_t n, const char *msg_part)
{
    struct body w = {0};

    raw(&w, bytes, n);
    refuse(&w, msg_part);
}

/* ---- pkt-line lengths ---- */

static void
test_pkt_lengths(void **state)
{
    struct exec_git_pkt k;
    struct ig_err err;
    size_t off;
    (void)state;

#define READ(s, want)                                                          \
    do {                                                                       \
        off = 0;                                                               \
        assert_int_equal(exec_git_pkt_read((const unsigned char *)(s),         \
                                           sizeof(s) - 1, &off, &k, &err),     \
                         (want));                                              \
    } while (0)
    READ("", IG_ERR_INVALID);
    READ("0", IG_ERR_INVALID);
    READ("00", IG_ERR_INVALID);
    READ("000", IG_ERR_INVALID);
    READ("0003", IG_ERR_INVALID);
    READ("0003x", IG_ERR_INVALID);
    READ("00g5x", IG_ERR_INVALID);
    READ(" 005x", IG_ERR_INVALID);
    READ("+005x", IG_ERR_INVALID);
    READ("0010abc", IG_ERR_INVALID); /* length past the end */
    READ("0006a", IG_ERR_INVALID);
    READ("ffff", IG_ERR_INVALID);
    READ("fff1", IG_ERR_INVALID);
    READ("0000", IG_OK);
    assert_int_equal(k.kind, EXEC_GIT_PKT_FLUSH);
    assert_int_equal(off, 4);
    READ("0001", IG_OK);
    assert_int_equal(k.kind, EXEC_GIT_PKT_DELIM);
    READ("0002", IG_OK);
    assert_int_equal(k.kind, EXEC_GIT_PKT_END);
    READ("0004", IG_OK);
    assert_int_equal(k.kind, EXEC_GIT_PKT_DATA);
    assert_int_equal(k.len, 0);
    READ("000Aabcdefxyz", IG_OK); /* either case of hex */
    assert_int_equal(k.len, 6);
    assert_int_equal(off, 10);
    assert_memory_equal(k.data, "abcdef", 6);
#undef READ
}

static void
test_pkt_bounds(void **state)
{
    struct exec_git_pkt k;
    struct ig_err err;
    size_t off;
    unsigned char *big;
    (void)state;

    /* *off beyond len: refused, not read. */
    off = 9;
    assert_int_equal(
        exec_git_pkt_read((const unsigned char *)"0000", 4, &off, &k, &err),
        IG_ERR_INVALID);
    /* The largest pkt-line, exactly 65520 bytes, and one byte short. */
    big = malloc(EXEC_GIT_PKT_MAX);
    assert_non_null(big);
    memset(big, 'x', EXEC_GIT_PKT_MAX);
    memcpy(big, "fff0", 4);
    off = 0;
    assert_int_equal(exec_git_pkt_read(big, EXEC_GIT_PKT_MAX, &off, &k, &err),
                     IG_OK);
    assert_int_equal(k.len, EXEC_GIT_PKT_MAX - 4);
    off = 0;
    assert_int_equal(
        exec_git_pkt_read(big, EXEC_GIT_PKT_MAX - 1, &off, &k, &err),
        IG_ERR_INVALID);
    free(big);
    /* One byte over the largest, with every byte present. */
    big = malloc(EXEC_GIT_PKT_MAX + 1);
    assert_non_null(big);
    memset(big, 'x', EXEC_GIT_PKT_MAX + 1);
    memcpy(big, "fff1", 4);
    off = 0;
    assert_int_equal(
        exec_git_pkt_read(big, EXEC_GIT_PKT_MAX + 1, &off, &k, &err),
        IG_ERR_INVALID);
    free(big);
}

/* ---- request bodies: hostile ---- */

static void
test_push_malformed_lengths(void **state)
{
    struct body w = {0};
    (void)state;

    refuse_bytes("", 0, "empty");
    refuse_bytes("00", 2, "runs past");
    refuse_bytes("000", 3, "runs past");
    refuse_bytes("0003", 4, "invalid length");
    refuse_bytes("00zz", 4, "not hex");
    /* A command whose pkt length runs past the body. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    w.n -= 3;
    refuse(&w, "runs past");
    /* Flush missing: the command section does not end inside buf. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    refuse(&w, "runs past");
    /* Delim or response-end among the commands. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    raw(&w, "0001", 4);
    refuse(&w, "delim");
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    raw(&w, "0002", 4);
    refuse(&w, "delim");
    /* An empty command list with bytes after its flush. */
    flush(&w);
    pack(&w);
    refuse(&w, "no commands");
}

static void
test_push_bad_ids(void **state)
{
    static const char *const bad[] = {
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  /* upper case */
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaag",  /* not hex */
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",   /* 39 */
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 41 */
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ",  /* 39 + space */
        "",
        "-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ("0x" Z40),
    };
    struct body w = {0};
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cmd1(&w, bad[i], A40, "refs/heads/x", CAPS);
        flush(&w);
        pack(&w);
        refuse(&w, "command 1");
        cmd1(&w, A40, bad[i], "refs/heads/x", CAPS);
        flush(&w);
        pack(&w);
        refuse(&w, "command 1");
    }
}

static void
test_push_mixed_ids(void **state)
{
    struct body w = {0};
    (void)state;

    /* Mixed 40/64 inside one command and across commands. */
    cmd1(&w, Z40, A64, "refs/heads/x", "");
    flush(&w);
    pack(&w);
    refuse(&w, "one length");
    cmd1(&w, Z64, A40, "refs/heads/x", "");
    flush(&w);
    pack(&w);
    refuse(&w, "one length");
    cmd1(&w, Z40, A40, "refs/heads/x", "");
    cmd(&w, Z64, A64, "refs/heads/y");
    flush(&w);
    pack(&w);
    refuse(&w, "command 2");
    /* The caps' object-format must match the ids. */
    cmd1(&w, Z40, A40, "refs/heads/x", " object-format=sha256");
    flush(&w);
    pack(&w);
    refuse(&w, "object-format");
    cmd1(&w, Z64, A64, "refs/heads/x", " object-format=sha1");
    flush(&w);
    pack(&w);
    refuse(&w, "object-format");
    cmd1(&w, Z40, A40, "refs/heads/x", " object-format=md5");
    flush(&w);
    pack(&w);
    refuse(&w, "object-format");
    /* Create and delete at once. */
    cmd1(&w, Z40, Z40, "refs/heads/x", CAPS);
    flush(&w);
    refuse(&w, "both zero");
    /* Not three fields. */
    cmd1(&w, Z40, A40, "", CAPS);
    flush(&w);
    pack(&w);
    refuse(&w, "command 1");
    refuse_bytes("0056" Z40 " " A40 "\n", 86, "command 1");
    pkt(&w, Z40 " " A40 "refs/heads/x");
    flush(&w);
    pack(&w);
    refuse(&w, "command 1");
    pkt(&w, Z40 "\t" A40 " refs/heads/x");
    flush(&w);
    pack(&w);
    refuse(&w, "command 1");
}

static void
test_push_bad_refs(void **state)
{
    static const char *const bad[] = {
        "refs/heads/a b",   "refs/heads/a\tb",     "refs/heads/a\rb",
        "refs/heads/a\x7f", "refs/heads/a\x1b[2J", " refs/heads/a",
    };
    struct body w = {0};
    char *longref;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cmd1(&w, Z40, A40, bad[i], CAPS);
        flush(&w);
        pack(&w);
        refuse(&w, "ref");
    }
    /* NUL inside the ref of a later command (the first's NUL starts the
       caps, as in git). */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    pktn(&w, Z40 " " A40 " refs/heads/y\0z", 96);
    flush(&w);
    pack(&w);
    refuse(&w, "NUL inside the ref");
    /* NUL inside the caps. */
    pktn(&w, Z40 " " A40 " refs/heads/y\0 atomic\0x", 104);
    flush(&w);
    pack(&w);
    refuse(&w, "NUL inside the capability");
    /* A ref longer than EXEC_GIT_REF_MAX. */
    longref = malloc(EXEC_GIT_REF_MAX + 2);
    assert_non_null(longref);
    memset(longref, 'r', EXEC_GIT_REF_MAX + 1);
    longref[EXEC_GIT_REF_MAX + 1] = '\0';
    {
        char *line = malloc(EXEC_GIT_REF_MAX + 100);
        int n;

        assert_non_null(line);
        n = snprintf(line, EXEC_GIT_REF_MAX + 100, "%s %s %s", Z40, A40,
                     longref);
        pktn(&w, line, (size_t)n);
        flush(&w);
        pack(&w);
        refuse(&w, "too long");
        free(line);
    }
    free(longref);
}

/* git's reader drops one trailing '\n'; so do we, never two. */
static void
test_push_newlines(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    (void)state;

    pkt(&w, Z40 " " A40 " refs/heads/x\n");
    pkt(&w, A40 " " B40 " refs/heads/y\n");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_string_equal(p.cmds[0].ref, "refs/heads/x");
    assert_string_equal(p.cmds[1].ref, "refs/heads/y");
    assert_string_equal(p.caps, "");
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
    /* With caps the newline ends the caps, not the ref. */
    cmd1(&w, Z40, A40, "refs/heads/x", " atomic\n");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_string_equal(p.cmds[0].ref, "refs/heads/x");
    assert_string_equal(p.caps, " atomic");
    assert_int_equal(p.atomic, 1);
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
    /* Two newlines: the second stays in the ref, and is refused. */
    pkt(&w, Z40 " " A40 " refs/heads/x\n\n");
    flush(&w);
    pack(&w);
    refuse(&w, "control byte");
}

static void
add_many(struct body *w, size_t n, const char *prefix)
{
    char ref[128];
    size_t i;

    for (i = 0; i < n; i++) {
        assert_true(snprintf(ref, sizeof(ref), "%s%zu", prefix, i) <
                    (int)sizeof(ref));
        if (i == 0)
            cmd1(w, Z40, A40, ref, CAPS);
        else
            cmd(w, Z40, A40, ref);
    }
    flush(w);
    pack(w);
}

static void
test_push_counts(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    size_t i;
    (void)state;

    add_many(&w, EXEC_GIT_CMDS_MAX, "refs/heads/agent/");
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(p.ncmds, EXEC_GIT_CMDS_MAX);
    assert_string_equal(p.cmds[EXEC_GIT_CMDS_MAX - 1].ref,
                        "refs/heads/agent/999");
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
    add_many(&w, EXEC_GIT_CMDS_MAX + 1, "refs/heads/agent/");
    refuse(&w, "more than 1000 commands");
    /* A huge count (2 MB of commands): refused at the 1001st. */
    add_many(&w, 20000, "refs/heads/agent/");
    expect(&w, 1, IG_ERR_INVALID, &p, "more than");
    free(w.b);
    memset(&w, 0, sizeof(w));
    /* Shallow lines: capped too. */
    for (i = 0; i <= EXEC_GIT_SHALLOW_MAX; i++)
        pkt(&w, "shallow " A40 "\n");
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    flush(&w);
    pack(&w);
    refuse(&w, "shallow");
}

static void
test_push_cert(void **state)
{
    struct body w = {0};
    (void)state;

    pktn(&w, "push-cert\0 report-status side-band-64k", 38);
    pkt(&w, "certificate version 0.1\n");
    pkt(&w, "pusher t <t@e> 1767225600 +0000\n");
    pkt(&w, "\n");
    pkt(&w, Z40 " " A40 " refs/heads/x\n");
    pkt(&w, "push-cert-end\n");
    flush(&w);
    pack(&w);
    refuse(&w, "signed pushes (push-cert) are not supported by the gateway");
    /* Also after shallow lines (where git's client puts them). */
    pkt(&w, "shallow " A40 "\n");
    pkt(&w, "push-cert");
    flush(&w);
    refuse(&w, "push-cert");
}

static void
test_push_options_mismatch(void **state)
{
    struct body w = {0};
    (void)state;

    /* Options without the cap: they sit where the pack should be. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    flush(&w);
    pkt(&w, "ci.skip");
    flush(&w);
    pack(&w);
    refuse(&w, "push options without the capability");
    cmd1(&w, A40, Z40, "refs/heads/x", CAPS);
    flush(&w);
    pkt(&w, "ci.skip");
    flush(&w);
    refuse(&w, "push options without the capability");
    /* The cap without the options section: the pack is read as one. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS " push-options");
    flush(&w);
    pack(&w);
    refuse(&w, "push options");
    cmd1(&w, A40, Z40, "refs/heads/x", CAPS " push-options");
    flush(&w);
    refuse(&w, "push options");
    /* An option holding a NUL or a newline. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS " push-options");
    flush(&w);
    pktn(&w, "a\0b", 3);
    flush(&w);
    pack(&w);
    refuse(&w, "push option 1");
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS " push-options");
    flush(&w);
    pkt(&w, "ok");
    pkt(&w, "a\nb");
    flush(&w);
    pack(&w);
    refuse(&w, "push option 2");
}

static void
test_push_duplicates(void **state)
{
    struct body w = {0};
    (void)state;

    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    cmd(&w, Z40, A40, "refs/heads/y");
    cmd(&w, A40, Z40, "refs/heads/x");
    flush(&w);
    pack(&w);
    refuse(&w, "same ref");
    /* Case and a trailing slash make different refs (git's too). */
    {
        struct exec_git_push p;

        cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
        cmd(&w, Z40, A40, "refs/heads/X");
        cmd(&w, Z40, A40, "refs/heads/x/");
        flush(&w);
        pack(&w);
        expect(&w, 1, IG_OK, &p, NULL);
        assert_int_equal(p.ncmds, 3);
        exec_git_push_release(&p);
        free(w.b);
    }
}

static void
test_push_tail(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    (void)state;

    /* Deletes only: no pack, and nothing may follow. */
    cmd1(&w, A40, Z40, "refs/heads/x", CAPS);
    cmd(&w, B40, Z40, "refs/heads/y");
    flush(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(p.ncmds, 2);
    assert_int_equal(p.cmds[0].kind, EXEC_GIT_DELETE);
    assert_int_equal(p.cmds[1].kind, EXEC_GIT_DELETE);
    assert_int_equal(p.pack_offset, w.n);
    exec_git_push_release(&p);
    /* ... and when buf is not the whole body, more bytes do follow. */
    expect(&w, 0, IG_ERR_INVALID, &p, "delete-only");
    pack(&w);
    refuse(&w, "delete-only");
    /* A create without a pack, or with something else. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    flush(&w);
    expect(&w, 1, IG_ERR_INVALID, &p, "no pack");
    /* Not complete: the pack may start beyond buf. */
    expect(&w, 0, IG_OK, &p, NULL);
    assert_int_equal(p.pack_offset, w.n);
    exec_git_push_release(&p);
    raw(&w, "PA", 2);
    expect(&w, 0, IG_OK, &p, NULL);
    assert_int_equal(p.pack_offset, w.n - 2);
    exec_git_push_release(&p);
    expect(&w, 1, IG_ERR_INVALID, &p, "no pack");
    raw(&w, "CX", 2);
    refuse(&w, "no pack");
    /* Not complete and the commands do not end inside buf. */
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    expect(&w, 0, IG_ERR_INVALID, &p, "EXEC_GIT_HEAD_MAX");
    free(w.b);
}

static void
test_push_probe(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    (void)state;

    flush(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(p.probe, 1);
    assert_int_equal(p.ncmds, 0);
    assert_int_equal(p.pack_offset, 4);
    exec_git_push_release(&p);
    exec_git_push_release(&p); /* zeroed: twice is fine */
    exec_git_push_release(NULL);
    /* Not the whole body, or more after it: not a probe. */
    expect(&w, 0, IG_ERR_INVALID, &p, NULL);
    flush(&w);
    refuse(&w, "no commands");
}

static void
test_push_shallow_and_caps(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    (void)state;

    pkt(&w, "shallow " A40 "\n");
    pkt(&w, "shallow " B40);
    cmd1(&w, A40, B40, "refs/heads/x",
         " report-status report-status-v2 side-band-64k quiet atomic "
         "push-options agent=git/2.39.5");
    cmd(&w, Z40, A40, "refs/tags/v1");
    flush(&w);
    pkt(&w, "ci.skip");
    pkt(&w, "note=a b\n");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(p.nshallow, 2);
    assert_int_equal(p.ncmds, 2);
    assert_int_equal(p.cmds[0].kind, EXEC_GIT_UPDATE);
    assert_string_equal(p.cmds[0].old_id, A40);
    assert_string_equal(p.cmds[0].new_id, B40);
    assert_int_equal(p.cmds[1].kind, EXEC_GIT_CREATE);
    assert_true(p.report_status && p.report_status_v2 && p.side_band_64k &&
                p.quiet && p.atomic && p.push_options);
    assert_int_equal(p.noptions, 2);
    assert_string_equal(p.options[0], "ci.skip");
    assert_string_equal(p.options[1], "note=a b");
    assert_int_equal(p.pack_offset, w.n - 12);
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
    /* Caps are whole tokens: "side-band" is not side-band-64k, and
       "report-status-v2" alone is not report-status; "quiet=1" is quiet,
       as git's parse_feature_request reads it. */
    cmd1(&w, Z40, A40, "refs/heads/x",
         " side-band report-status-v2 xatomic quiet=1");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_false(p.side_band_64k || p.report_status || p.atomic);
    assert_true(p.report_status_v2 && p.quiet);
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
    /* Any white space separates them, as git takes it. */
    cmd1(&w, Z40, A40, "refs/heads/x", " report-status\tside-band-64k\vquiet");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_true(p.report_status && p.side_band_64k && p.quiet);
    assert_true(exec_git_asks_side_band((const unsigned char *)w.b, w.n));
    exec_git_push_release(&p);
    free(w.b);
    memset(&w, 0, sizeof(w));
}

static void
test_push_shallow_bad(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    (void)state;

    /* Shallow: a bad id, a mismatched length, after a command. */
    pkt(&w, "shallow " A40 "a\n");
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    flush(&w);
    pack(&w);
    refuse(&w, "shallow line 1");
    pkt(&w, "shallow " A64);
    cmd1(&w, Z40, A40, "refs/heads/x", "");
    flush(&w);
    pack(&w);
    refuse(&w, "command 1");
    cmd1(&w, Z40, A40, "refs/heads/x", CAPS);
    pkt(&w, "shallow " A40);
    flush(&w);
    pack(&w);
    refuse(&w, "command 2");
    /* sha256 ids. */
    cmd1(&w, Z64, A64, "refs/heads/x", " object-format=sha256");
    cmd(&w, B64, Z64, "refs/heads/y");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_string_equal(p.cmds[0].new_id, A64);
    assert_int_equal(p.cmds[1].kind, EXEC_GIT_DELETE);
    exec_git_push_release(&p);
    free(w.b);
}

/* ---- the grant check ---- */

static json_t *
jarr(const char *json)
{
    json_error_t e;
    json_t *v = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);

    if (v == NULL)
        fail_msg("bad test JSON: %s", e.text);
    return v;
}

static void
parse_cmds(const char *const *lines, size_t n, struct exec_git_push *p)
{
    struct body w = {0};
    size_t i;

    for (i = 0; i < n; i++)
        pkt(&w, lines[i]);
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, p, NULL);
    free(w.b);
}

static void
test_check(void **state)
{
    static const char *const lines[] = {
        Z40 " " A40 " refs/heads/agent/x",
        A40 " " B40 " refs/heads/agent/y",
        B40 " " Z40 " refs/heads/old",
    };
    struct exec_git_push p;
    const char *why[3];
    json_t *refs, *del;
    (void)state;

    parse_cmds(lines, 3, &p);
    refs = jarr("[\"refs/heads/agent/x\", \"refs/heads/agent/y\"]");
    del = jarr("[\"refs/heads/old\"]");
    assert_int_equal(exec_git_push_check(&p, refs, del, why), 0);
    assert_null(why[0]);
    assert_null(why[1]);
    assert_null(why[2]);
    /* refs NULL: nothing may be created or updated. */
    assert_int_equal(exec_git_push_check(&p, NULL, del, why), 2);
    assert_string_equal(why[0], "intentgate: ref not granted");
    assert_string_equal(why[1], EXEC_GIT_REASON_REF);
    assert_null(why[2]);
    /* del NULL: the delete is refused; a delete listed in refs only too. */
    assert_int_equal(exec_git_push_check(&p, refs, NULL, why), 1);
    assert_string_equal(why[2], "intentgate: delete not granted");
    json_decref(refs);
    refs = jarr("[\"refs/heads/agent/x\", \"refs/heads/agent/y\","
                " \"refs/heads/old\"]");
    assert_int_equal(exec_git_push_check(&p, refs, NULL, why), 1);
    assert_string_equal(why[2], EXEC_GIT_REASON_DELETE);
    /* An update listed in del only. */
    json_decref(refs);
    json_decref(del);
    refs = jarr("[\"refs/heads/agent/x\"]");
    del = jarr("[\"refs/heads/agent/y\", \"refs/heads/old\"]");
    assert_int_equal(exec_git_push_check(&p, refs, del, why), 1);
    assert_string_equal(why[1], EXEC_GIT_REASON_REF);
    json_decref(refs);
    /* Case, a trailing slash, a prefix, a NUL, non-strings: no match. */
    refs =
        jarr("[\"refs/heads/agent/X\", \"refs/heads/agent/x/\","
             " \"refs/heads/agent/\", \"refs/heads/agent/y\\u0000\","
             " \"refs/heads/agent/*\", 1, null, true, [\"refs/heads/agent/x\"],"
             " {\"refs/heads/agent/x\": 1}]");
    assert_int_equal(exec_git_push_check(&p, refs, del, why), 2);
    assert_non_null(why[0]);
    assert_non_null(why[1]);
    json_decref(refs);
    /* Not an array: grants nothing. */
    refs = jarr("\"refs/heads/agent/x\"");
    assert_int_equal(exec_git_push_check(&p, refs, del, why), 2);
    json_decref(refs);
    refs = jarr("{\"refs/heads/agent/x\": true, \"refs/heads/agent/y\": 1}");
    assert_int_equal(exec_git_push_check(&p, refs, del, why), 2);
    json_decref(refs);
    json_decref(del);
    exec_git_push_release(&p);
}

/* One ref too many: the grant names x, the push names x and y. */
static void
test_check_one_too_many(void **state)
{
    static const char *const lines[] = {
        Z40 " " A40 " refs/heads/agent/x",
        Z40 " " A40 " refs/heads/agent/y",
    };
    struct exec_git_push p;
    const char *why[2];
    json_t *refs = jarr("[\"refs/heads/agent/x\"]");
    struct ig_buf out;
    static const char want[] =
        "000eunpack ok\n"
        "003eng refs/heads/agent/x intentgate: push refused as a whole\n"
        "0036ng refs/heads/agent/y intentgate: ref not granted\n"
        "0000";
    (void)state;

    parse_cmds(lines, 2, &p);
    assert_int_equal(exec_git_push_check(&p, refs, NULL, why), 1);
    assert_null(why[0]);
    assert_string_equal(why[1], EXEC_GIT_REASON_REF);
    ig_buf_init(&out, 1 << 20);
    assert_int_equal(exec_git_report_refusal(&p, why, &out), IG_OK);
    assert_int_equal(out.len, sizeof(want) - 1);
    assert_memory_equal(out.data, want, sizeof(want) - 1);
    ig_buf_release(&out);
    json_decref(refs);
    exec_git_push_release(&p);
}

/* ---- the refusal writer, byte for byte ---- */

static void
test_refusal_bytes(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    struct ig_buf out;
    const char *why[2] = {"intentgate: ref not granted", NULL};
    /* Plain: "unpack ok\n" is 10 bytes (000e); the ng lines 47 (0033) and
       58 (003e) bytes; then the flush: 69 + 62 - 4 ... counted below. */
    static const char plain[] =
        "000eunpack ok\n"
        "0033ng refs/heads/main intentgate: ref not granted\n"
        "003eng refs/heads/agent/x intentgate: push refused as a whole\n"
        "0000";
    /* Side-band: the plain report (14 + 51 + 62 + 4 = 131 bytes) in one
       channel-1 packet of 4 + 1 + 131 = 136 = 0x88 bytes, then a flush. */
    static const char sideband[] =
        "0088\001"
        "000eunpack ok\n"
        "0033ng refs/heads/main intentgate: ref not granted\n"
        "003eng refs/heads/agent/x intentgate: push refused as a whole\n"
        "0000"
        "0000";
    (void)state;

    cmd1(&w, A40, B40, "refs/heads/main", " report-status");
    cmd(&w, Z40, A40, "refs/heads/agent/x");
    flush(&w);
    pack(&w);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(sizeof(plain) - 1, 131);
    ig_buf_init(&out, 1 << 20);
    assert_int_equal(exec_git_report_refusal(&p, why, &out), IG_OK);
    assert_int_equal(out.len, sizeof(plain) - 1);
    assert_memory_equal(out.data, plain, sizeof(plain) - 1);
    ig_buf_release(&out);
    p.side_band_64k = 1;
    ig_buf_init(&out, 1 << 20);
    assert_int_equal(exec_git_report_refusal(&p, why, &out), IG_OK);
    assert_int_equal(out.len, sizeof(sideband) - 1);
    assert_memory_equal(out.data, sideband, sizeof(sideband) - 1);
    /* reasons NULL: every command "as a whole". */
    ig_buf_reset(&out);
    p.side_band_64k = 0;
    assert_int_equal(exec_git_report_refusal(&p, NULL, &out), IG_OK);
    assert_non_null(strstr(out.data, "003bng refs/heads/main intentgate: "
                                     "push refused as a whole\n"));
    /* A reason that would break the line: nothing appended. */
    ig_buf_reset(&out);
    why[0] = "bad\nok refs/heads/main";
    assert_int_equal(exec_git_report_refusal(&p, why, &out), IG_ERR_INVALID);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
    /* Over the output's cap. */
    why[0] = NULL;
    ig_buf_init(&out, 100);
    assert_int_equal(exec_git_report_refusal(&p, why, &out), IG_ERR_LIMIT);
    ig_buf_release(&out);
    exec_git_push_release(&p);
    free(w.b);
}

#define SPLIT_PREFIX "refs/heads/a-rather-long-branch-name/"

/* A report over 65515 bytes is cut into full channel-1 packets, each a
   valid pkt-line, and reads back whole. */
static void
test_refusal_split(void **state)
{
    struct exec_git_push p;
    struct body w = {0};
    struct ig_buf out;
    struct ig_err err;
    json_t *d = NULL;
    int all_ok = 1;
    size_t off = 0, packets = 0;
    struct exec_git_pkt k;
    (void)state;

    add_many(&w, EXEC_GIT_CMDS_MAX, SPLIT_PREFIX);
    expect(&w, 1, IG_OK, &p, NULL);
    assert_int_equal(p.side_band_64k, 1);
    ig_buf_init(&out, 1 << 22);
    assert_int_equal(exec_git_report_refusal(&p, NULL, &out), IG_OK);
    assert_memory_equal(out.data, "fff0\001000eunpack ok\n", 19);
    for (;;) {
        assert_int_equal(exec_git_pkt_read((unsigned char *)out.data, out.len,
                                           &off, &k, &err),
                         IG_OK);
        if (k.kind == EXEC_GIT_PKT_FLUSH)
            break;
        assert_int_equal(k.data[0], 1);
        packets++;
    }
    assert_int_equal(off, out.len);
    assert_true(packets >= 2);
    assert_int_equal(exec_git_report_parse((unsigned char *)out.data, out.len,
                                           1, &d, &all_ok, &err),
                     IG_OK);
    assert_int_equal(all_ok, 0);
    assert_int_equal(json_object_size(json_object_get(d, "refs")),
                     EXEC_GIT_CMDS_MAX);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(d, "refs"), SPLIT_PREFIX "999")),
                        EXEC_GIT_REASON_WHOLE);
    json_decref(d);
    ig_buf_release(&out);
    exec_git_push_release(&p);
    free(w.b);
}

static void
test_adv_error(void **state)
{
    struct ig_buf out;
    /* "# service=git-receive-pack\n" is 27 bytes (001f, as git sends it);
       "ERR no grant for this repository\n" 33 (0025). */
    static const char want[] = "001f# service=git-receive-pack\n"
                               "0000"
                               "0025ERR no grant for this repository\n";
    (void)state;

    ig_buf_init(&out, 4096);
    assert_int_equal(exec_git_adv_error("git-receive-pack",
                                        "no grant for this repository", &out),
                     IG_OK);
    assert_int_equal(out.len, sizeof(want) - 1);
    assert_memory_equal(out.data, want, sizeof(want) - 1);
    ig_buf_reset(&out);
    assert_int_equal(exec_git_adv_error("git-upload-pack", "x", &out), IG_OK);
    assert_memory_equal(
        out.data, "001e# service=git-upload-pack\n0000000aERR x\n", out.len);
    assert_int_equal(out.len, 44);
    ig_buf_reset(&out);
    assert_int_equal(exec_git_adv_error("git-upload-archive", "x", &out),
                     IG_ERR_INVALID);
    assert_int_equal(exec_git_adv_error("git-receive-pack", "a\nb", &out),
                     IG_ERR_INVALID);
    assert_int_equal(exec_git_adv_error("git-receive-pack", "\xc3\xa9", &out),
                     IG_ERR_INVALID);
    assert_int_equal(out.len, 0);
    ig_buf_release(&out);
}

/* ---- the upstream's report ---- */

/* Captured with git 2.39.5: `git push o HEAD:refs/heads/blocked
   HEAD:refs/heads/agent/w` through a Python CGI wrapper around
   `git http-backend`, whose update hook refused refs/heads/blocked; this
   is the response body byte for byte (side-band-64k: two channel-2
   progress packets, the report in one channel-1 packet, a flush). */
static const unsigned char real_hook_declined[] =
    "0030\002update hook: refs/heads/blocked is blocked\n"
    "0037\002error: hook declined to update refs/heads/blocked\n"
    "0059\001"
    "000eunpack ok\n"
    "0028ng refs/heads/blocked hook declined\n"
    "001aok refs/heads/agent/w\n"
    "0000"
    "0000";

static enum ig_status
report(const void *b, size_t n, int sb, json_t **d, int *ok, char *msg)
{
    struct ig_err err;
    enum ig_status st;

    memset(&err, 0, sizeof(err));
    st = exec_git_report_parse(b, n, sb, d, ok, &err);
    if (msg != NULL)
        memcpy(msg, err.msg, sizeof(err.msg));
    if (st != IG_OK) {
        assert_null(*d);
        assert_int_equal(*ok, 0);
    }
    return st;
}

#define REPORT(s, sb, d, ok) report((s), sizeof(s) - 1, (sb), (d), (ok), NULL)

static const char *
ref_status(json_t *d, const char *ref)
{
    return json_string_value(json_object_get(json_object_get(d, "refs"), ref));
}

static void
test_report_real(void **state)
{
    json_t *d = NULL;
    int ok = 1;
    (void)state;

    assert_int_equal(REPORT(real_hook_declined, 1, &d, &ok), IG_OK);
    assert_int_equal(ok, 0);
    assert_string_equal(json_string_value(json_object_get(d, "unpack")), "ok");
    assert_string_equal(ref_status(d, "refs/heads/blocked"), "hook declined");
    assert_string_equal(ref_status(d, "refs/heads/agent/w"), "ok");
    assert_int_equal(json_object_size(json_object_get(d, "refs")), 2);
    json_decref(d);
    /* The same bytes read without side-band are not a report. */
    assert_int_equal(REPORT(real_hook_declined, 0, &d, &ok), IG_ERR_INVALID);
}

static void
test_report_written(void **state)
{
    static const char plain_ok[] = "000eunpack ok\n"
                                   "0017ok refs/heads/main\n"
                                   "001aok refs/heads/agent/x\n"
                                   "0000";
    /* v2: option lines after ok are ignored. */
    static const char v2[] = "000eunpack ok\n"
                             "0017ok refs/heads/main\n"
                             "0024option refname refs/heads/other\n"
                             "003coption old-oid " A40 "\n"
                             "0019option forced-update\n"
                             "0000";
    /* The report split across two channel-1 packets, progress between. */
    static const char split[] = "000d\001000eunpa"
                                "000b\002hello\n"
                                "0026\001ck ok\n0017ok refs/heads/main\n0000"
                                "0000";
    static const char unpack_err[] = "0024unpack index-pack abnormal exit\n"
                                     "0026ng refs/heads/main unpacker error\n"
                                     "0000";
    static const char odd[] = "000eunpack ok\n"
                              "0014ng refs/heads/a\n"
                              "0017ng refs/heads/b ok\n"
                              "001eng refs/heads/c bad\001\033[0m\xff\n"
                              "0000";
    static const char empty_refs[] = "000eunpack ok\n0000";
    json_t *d = NULL;
    int ok = 0;
    (void)state;

    assert_int_equal(REPORT(plain_ok, 0, &d, &ok), IG_OK);
    assert_int_equal(ok, 1);
    assert_string_equal(ref_status(d, "refs/heads/agent/x"), "ok");
    json_decref(d);
    assert_int_equal(REPORT(v2, 0, &d, &ok), IG_OK);
    assert_int_equal(ok, 1);
    assert_int_equal(json_object_size(json_object_get(d, "refs")), 1);
    json_decref(d);
    assert_int_equal(REPORT(split, 1, &d, &ok), IG_OK);
    assert_int_equal(ok, 1);
    assert_string_equal(ref_status(d, "refs/heads/main"), "ok");
    json_decref(d);
    assert_int_equal(REPORT(unpack_err, 0, &d, &ok), IG_OK);
    assert_int_equal(ok, 0);
    assert_string_equal(json_string_value(json_object_get(d, "unpack")),
                        "index-pack abnormal exit");
    assert_string_equal(ref_status(d, "refs/heads/main"), "unpacker error");
    json_decref(d);
    assert_int_equal(REPORT(odd, 0, &d, &ok), IG_OK);
    assert_int_equal(ok, 0);
    assert_string_equal(ref_status(d, "refs/heads/a"), "ng");
    assert_string_equal(ref_status(d, "refs/heads/b"), "ng ok");
    assert_string_equal(ref_status(d, "refs/heads/c"), "bad??[0m?");
    json_decref(d);
    /* No ref reported: not all ok. */
    assert_int_equal(REPORT(empty_refs, 0, &d, &ok), IG_OK);
    assert_int_equal(ok, 0);
    json_decref(d);
}

static void
test_report_hostile(void **state)
{
    static const struct {
        const char *s;
        size_t n;
        int sb;
        const char *msg;
    } bad[] = {
#define B(s, sb, m) {s, sizeof(s) - 1, sb, m}
        B("", 0, "runs past"),
        B("", 1, "runs past"),
        B("0000", 0, "unpack"),
        B("0000", 1, "runs past"), /* no report in channel 1 */
        B("000eunpack ok\n", 0, "runs past"),
        B("000eunpack ok\n0000x", 0, "after the report"),
        B("000eunpack ok\n0003", 0, "invalid length"),
        B("000eunpack ok\n0001", 0, "delim"),
        B("000aunpack0000", 0, "unpack"),
        B("000eunpack ok\n0015okrefs/heads/main0000", 0, "not ok, ng"),
        B("000eunpack ok\n0007ok 0000", 0, "not valid"),
        B("000eunpack ok\n0017ok refs/heads/main\n0017ok refs/heads/main\n0000",
          0, "repeats"),
        B("000eunpack ok\n0017ok refs/heads/m\xffin\n0000", 0, "UTF-8"),
        B("000eunpack ok\n0017ok refs/heads/m\tin\n0000", 0, "not valid"),
        /* side-band */
        B("0017\001000eunpack ok\n0000", 1, "runs past"), /* no outer flush */
        B("0017\001000eunpack ok\n00000000x", 1, "after the side-band"),
        B("0004", 1, "no channel"),
        B("0005\0010000", 1, "runs past"), /* empty channel 1 */
        B("0006\004x0000", 1, "unknown channel 4"),
        B("0017\003denied: no access\n0000", 1,
          "upstream fatal error: denied: no access?"),
        B("0001", 1, "no channel"),
#undef B
    };
    char msg[IG_ERR_MSGMAX];
    json_t *d = NULL;
    int ok = 1;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ok = 1;
        if (report(bad[i].s, bad[i].n, bad[i].sb, &d, &ok, msg) !=
            IG_ERR_INVALID)
            fail_msg("case %zu accepted", i);
        if (strstr(msg, bad[i].msg) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, msg, bad[i].msg);
    }
}

/* ---- advertisements ---- */

struct seen {
    char ids[8][65];
    char refs[8][64];
    size_t n;
};

static void
on_ref(void *ctx, const char *id, const char *ref)
{
    struct seen *s = ctx;

    assert_true(s->n < 8);
    assert_true(strlen(id) < 65 && strlen(ref) < 64);
    memcpy(s->ids[s->n], id, strlen(id) + 1);
    memcpy(s->refs[s->n], ref, strlen(ref) + 1);
    s->n++;
}

static enum ig_status
adv(const void *b, size_t n, struct seen *s, char *msg)
{
    struct ig_err err;
    enum ig_status st;

    memset(s, 0, sizeof(*s));
    memset(&err, 0, sizeof(err));
    st = exec_git_adv_refs(b, n, on_ref, s, &err);
    if (msg != NULL)
        memcpy(msg, err.msg, sizeof(err.msg));
    return st;
}

#define HDR "001f# service=git-receive-pack\n0000"

static void
test_adv_written(void **state)
{
    static const char refs[] =
        HDR "0057" A40 " refs/heads/main\0report-status delete-refs\n"
            "0040" B40 " refs/heads/agent/x\n"
            "0033" A40 " .have\n"
            "003d" B40 " refs/tags/v1^{}\n"
            "003a" A40 " refs/tags/v1\n"
            "0000";
    static const char v1[] = "001e# service=git-upload-pack\n0000"
                             "000eversion 1\n"
                             "003b" A40 " refs/heads/x\0\n"
                             "0035shallow " B40 "\n"
                             "0000";
    static const char empty[] = HDR "0000";
    struct seen s;
    (void)state;

    assert_int_equal(adv(refs, sizeof(refs) - 1, &s, NULL), IG_OK);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.refs[0], "refs/heads/main");
    assert_string_equal(s.ids[0], A40);
    assert_string_equal(s.refs[1], "refs/heads/agent/x");
    assert_string_equal(s.ids[1], B40);
    assert_string_equal(s.refs[2], "refs/tags/v1");
    assert_int_equal(adv(v1, sizeof(v1) - 1, &s, NULL), IG_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.refs[0], "refs/heads/x");
    assert_int_equal(adv(empty, sizeof(empty) - 1, &s, NULL), IG_OK);
    assert_int_equal(s.n, 0);
}

static void
test_adv_hostile(void **state)
{
    static const struct {
        const char *s;
        size_t n;
        const char *msg;
    } bad[] = {
#define B(s, m) {s, sizeof(s) - 1, m}
        B("", "runs past"),
        B("0000", "service"),
        B("001e# service=git-upload-arch\n0000", "service"),
        B("001f# service=git-receive-pack\n", "runs past"),
        B("001f# service=git-receive-pack\n0004", "no flush"),
        B(HDR, "runs past"),
        B(HDR "0000x", "after"),
        B(HDR "0001", "delim"),
        B(HDR "003a" A40 " refs/heads/x\n", "runs past"),
        B(HDR "003a" A40 "_refs/heads/x\n0000", "line 1"),
        B(HDR "003aAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA refs/heads/x\n0000",
          "line 1"),
        B(HDR "0039" A40 " refs/heads/x0052" A64 " refs/heads/y\n0000",
          "line 2"),
        B(HDR "0039" A40 " refs/heads/x003c" B40 " refs/heads/y\0z\n0000",
          "NUL"),
        B(HDR "003a" A40 " refs/heads/x\t0000", "line 1"),
        B(HDR "0039" A40 " refs/heads/x" /* capabilities^{} not first */
              "003d" Z40 " capabilities^{}\n0000",
          "misplaced"),
        B(HDR "003d" A40 " capabilities^{}\n0000", "misplaced"),
        B(HDR "003d" Z40 " capabilities^{}\n0039" A40 " refs/heads/x0000",
          "after capabilities"),
        B(HDR "0035shallow " A40 "\n0039" A40 " refs/heads/x0000",
          "after a shallow"),
        B(HDR "0010shallow xyz\n0000", "shallow"),
#undef B
    };
    char msg[IG_ERR_MSGMAX];
    struct seen s;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (adv(bad[i].s, bad[i].n, &s, msg) != IG_ERR_INVALID)
            fail_msg("case %zu accepted", i);
        if (strstr(msg, bad[i].msg) == NULL)
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, msg, bad[i].msg);
    }
}

/* ---- real captures (tests/fuzz/corpus/git_pkt, see the file comment) */

static unsigned char *
seed(const char *name, size_t *n)
{
    char path[512];

    assert_true(snprintf(path, sizeof(path), "%s/%s", IG_GIT_CORPUS, name) <
                (int)sizeof(path));
    return (unsigned char *)tu_read_file(path, n);
}

static void
real_push(const char *name, struct exec_git_push *p)
{
    struct ig_err err;
    unsigned char *b;
    size_t n;

    b = seed(name, &n);
    if (exec_git_push_parse(b, n, 1, p, &err) != IG_OK)
        fail_msg("%s: %s", name, err.msg);
    free(b);
}

static void
test_real_pushes(void **state)
{
    struct exec_git_push p;
    (void)state;

    real_push("push-create-main.req", &p);
    assert_int_equal(p.ncmds, 1);
    assert_int_equal(p.cmds[0].kind, EXEC_GIT_CREATE);
    assert_string_equal(p.cmds[0].ref, "refs/heads/main");
    assert_string_equal(p.cmds[0].new_id,
                        "f98d669ca0860b51b0a3223e88beac392640af21");
    assert_string_equal(p.caps, " report-status-v2 side-band-64k quiet "
                                "object-format=sha1 agent=git/2.39.5");
    assert_true(p.side_band_64k && p.report_status_v2 && p.quiet);
    assert_false(p.report_status || p.atomic || p.push_options);
    assert_int_equal(p.pack_offset, 0xaf + 4);
    exec_git_push_release(&p);
    real_push("push-branch-and-tag.req", &p);
    assert_int_equal(p.ncmds, 2);
    assert_string_equal(p.cmds[1].ref, "refs/tags/v1");
    exec_git_push_release(&p);
    real_push("push-options.req", &p);
    assert_int_equal(p.push_options, 1);
    assert_int_equal(p.noptions, 2);
    assert_string_equal(p.options[0], "ci.skip");
    assert_string_equal(p.options[1], "note=a b");
    exec_git_push_release(&p);
    real_push("push-delete-only.req", &p);
    assert_int_equal(p.cmds[0].kind, EXEC_GIT_DELETE);
    assert_string_equal(p.cmds[0].ref, "refs/heads/agent/x");
    assert_int_equal(p.pack_offset, 182);
    exec_git_push_release(&p);
    real_push("push-atomic.req", &p);
    assert_int_equal(p.atomic, 1);
    assert_int_equal(p.ncmds, 2);
    assert_int_equal(p.cmds[0].kind, EXEC_GIT_UPDATE);
    exec_git_push_release(&p);
    real_push("push-sha256.req", &p);
    assert_int_equal(strlen(p.cmds[0].new_id), 64);
    exec_git_push_release(&p);
    real_push("push-shallow.req", &p);
    assert_int_equal(p.nshallow, 1);
    assert_string_equal(p.cmds[0].ref, "refs/heads/agent/shallow2");
    exec_git_push_release(&p);
    real_push("push-probe.req", &p);
    assert_int_equal(p.probe, 1);
    exec_git_push_release(&p);
}

static void
test_real_replies(void **state)
{
    unsigned char *b;
    struct seen s;
    json_t *d = NULL;
    int ok = 0;
    size_t n;
    (void)state;

    b = seed("report-hook-declined.resp", &n);
    assert_int_equal(n, sizeof(real_hook_declined) - 1);
    assert_memory_equal(b, real_hook_declined, n);
    free(b);
    b = seed("report-ok.resp", &n);
    assert_int_equal(report(b, n, 1, &d, &ok, NULL), IG_OK);
    assert_int_equal(ok, 1);
    assert_string_equal(ref_status(d, "refs/heads/main"), "ok");
    json_decref(d);
    free(b);
    b = seed("adv-empty-repo.adv", &n);
    assert_int_equal(adv(b, n, &s, NULL), IG_OK);
    assert_int_equal(s.n, 0);
    free(b);
    b = seed("adv-sha256-empty.adv", &n);
    assert_int_equal(adv(b, n, &s, NULL), IG_OK);
    assert_int_equal(s.n, 0);
    free(b);
    b = seed("adv-refs.adv", &n);
    assert_int_equal(adv(b, n, &s, NULL), IG_OK);
    assert_int_equal(s.n, 5);
    assert_string_equal(s.refs[0], "refs/heads/agent/w");
    assert_string_equal(s.ids[0], "10f21d80503f267d45456e56d2343836109efbe6");
    assert_string_equal(s.refs[4], "refs/tags/v1");
    assert_string_equal(s.ids[4], "f98d669ca0860b51b0a3223e88beac392640af21");
    free(b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pkt_lengths),
        cmocka_unit_test(test_pkt_bounds),
        cmocka_unit_test(test_push_malformed_lengths),
        cmocka_unit_test(test_push_bad_ids),
        cmocka_unit_test(test_push_mixed_ids),
        cmocka_unit_test(test_push_bad_refs),
        cmocka_unit_test(test_push_newlines),
        cmocka_unit_test(test_push_counts),
        cmocka_unit_test(test_push_cert),
        cmocka_unit_test(test_push_options_mismatch),
        cmocka_unit_test(test_push_duplicates),
        cmocka_unit_test(test_push_tail),
        cmocka_unit_test(test_push_probe),
        cmocka_unit_test(test_push_shallow_and_caps),
        cmocka_unit_test(test_push_shallow_bad),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_check_one_too_many),
        cmocka_unit_test(test_refusal_bytes),
        cmocka_unit_test(test_refusal_split),
        cmocka_unit_test(test_adv_error),
        cmocka_unit_test(test_report_real),
        cmocka_unit_test(test_report_written),
        cmocka_unit_test(test_report_hostile),
        cmocka_unit_test(test_adv_written),
        cmocka_unit_test(test_adv_hostile),
        cmocka_unit_test(test_real_pushes),
        cmocka_unit_test(test_real_replies),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
