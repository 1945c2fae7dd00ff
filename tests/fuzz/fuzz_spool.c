/*
 * fuzz_spool.c - libFuzzer target for the outcome spool's reader: the
 * input becomes the spool file of a fresh 0700 directory, which is opened
 * with nothing to deliver to (exec_spool.h: send NULL) and closed.
 *
 * So that mutations reach the JSON behind the checksum gate, an input
 * whose first byte is odd has the checksum of each of its lines (after
 * that byte) recomputed before it is written.
 *
 * Beyond "never crash, never leak", the pending set must be consistent:
 * after open no run is left (each became UNKNOWN_AFTER_DISPATCH), the
 * rewritten file has exactly one line per pending outcome, and opening
 * that file again finds no damaged line, the same pending count, and
 * rewrites it to the very same bytes.
 */
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_spool.h"
#include "ig_file.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char dir[64], file[128];

static int
no_sync(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    return 0; /* durability is not under test here */
}

static void
quiet(void *ctx, const char *event, const char *id, unsigned attempts,
      const char *error)
{
    (void)ctx;
    (void)event;
    (void)id;
    (void)attempts;
    (void)error;
}

static char root[] = "/tmp/fuzz_spool.XXXXXX";

static void
cleanup(void)
{
    (void)unlink(file);
    (void)rmdir(dir);
    (void)rmdir(root);
}

static void
init_once(void)
{
    if (dir[0] != '\0')
        return;
    if (mkdtemp(root) == NULL)
        abort();
    (void)snprintf(dir, sizeof(dir), "%s/spool", root);
    (void)snprintf(file, sizeof(file), "%s/%s", dir, EXEC_SPOOL_FILE);
    if (mkdir(dir, 0700) != 0 || atexit(cleanup) != 0)
        abort();
}

/* The whole spool file, malloc'd; *len its size. */
static char *
slurp(size_t *len)
{
    FILE *f = fopen(file, "rb");
    char *buf = NULL;
    long n;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 || (buf = malloc((size_t)n + 1)) == NULL ||
        fread(buf, 1, (size_t)n, f) != (size_t)n)
        abort();
    (void)fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Open and close the spool; its counts in *st, its file's bytes back. */
static char *
open_close(struct exec_spool_stats *st, size_t *len)
{
    struct exec_spool_opts o;
    struct exec_spool *s = NULL;
    struct ig_err err;

    memset(&o, 0, sizeof(o));
    o.sync = no_sync;
    o.log = quiet;
    if (exec_spool_open(dir, &o, &s, &err) != IG_OK) {
        (void)fprintf(stderr, "open: %s\n", err.msg);
        abort(); /* only a system failure may refuse a file we own */
    }
    exec_spool_stats(s, st);
    exec_spool_close(s);
    return slurp(len);
}

/* Give every line "XXXXXXXX JSON" of p the checksum of its JSON. */
static void
fix_sums(unsigned char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char h[crypto_hash_sha256_BYTES];
    size_t start = 0, end, i;

    while (start < n) {
        for (end = start; end < n && p[end] != '\n'; end++)
            ;
        if (end - start > 9 && p[start + 8] == ' ') {
            crypto_hash_sha256(h, p + start + 9, end - start - 9);
            for (i = 0; i < 4; i++) {
                p[start + 2 * i] = (unsigned char)hex[h[i] >> 4];
                p[start + 2 * i + 1] = (unsigned char)hex[h[i] & 15];
            }
        }
        start = end + 1;
    }
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct exec_spool_stats a, b;
    size_t la, lb, i, lines = 0;
    unsigned char *copy;
    char *fa, *fb;

    init_once();
    if (size > 0 && (data[0] & 1) != 0) {
        if ((copy = malloc(size)) == NULL)
            abort();
        memcpy(copy, data + 1, size - 1);
        fix_sums(copy, size - 1);
        if (ig_file_write(file, copy, size - 1, 0600, 0, NULL) != IG_OK)
            abort();
        free(copy);
    } else if (ig_file_write(file, data, size, 0600, 0, NULL) != IG_OK) {
        abort();
    }
    fa = open_close(&a, &la);
    for (i = 0; i < la; i++)
        lines += fa[i] == '\n';
    if (a.running != 0 || a.pending != lines || (la > 0 && fa[la - 1] != '\n'))
        abort();
    fb = open_close(&b, &lb);
    if (b.corrupt_lines != 0 || b.pending != a.pending || la != lb ||
        memcmp(fa, fb, la) != 0)
        abort();
    free(fa);
    free(fb);
    return 0;
}
