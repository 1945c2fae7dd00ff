/*
 * pol_bundle.c - reading a policy bundle directory once, immutably.
 *
 * How it works: pol_bundle_read() lists DIR, keeps the regular `*.lua`
 * files (names limited to [A-Za-z0-9_.-], dot files skipped), sorts them by
 * byte order, and reads each (at most IG_POLICY_MAX_FILES files of at most
 * IG_POLICY_FILE_MAX_BYTES). The revision is ig_hash_bytes() over the
 * concatenated (name, NUL, decimal size, NUL, content) of every file, tests
 * included. Proving that the files evaluate is the next layer's job
 * (pol_load.c). The bundle is never modified after that; a C11 atomic
 * counter shares it between threads.
 */
#include "pol.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ig_buf.h"
#include "ig_text.h"
#include "pol_int.h"

#define POL_SUFFIX ".lua"
#define POL_TEST_SUFFIX "_test.lua"

static int
pol_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int
pol_is_test_name(const char *name)
{
    return pol_ends_with(name, POL_TEST_SUFFIX);
}

/* A bundle file name: [A-Za-z0-9_.-]+ ending in .lua, not a dot file. */
static int
pol_name_wanted(const char *name, int *bad)
{
    const char *p;

    *bad = 0;
    if (name[0] == '.' || !pol_ends_with(name, POL_SUFFIX) ||
        strlen(name) == sizeof(POL_SUFFIX) - 1)
        return 0;
    for (p = name; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
            *bad = 1;
    }
    return 1;
}

static int
pol_cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted *.lua names in dir. */
static enum ig_status
pol_list_dir(const char *dir, char ***out, size_t *nout, struct ig_err *err)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    int bad;
    enum ig_status st = IG_OK;

    if (d == NULL)
        return ig_err_set(err, errno == ENOENT ? IG_ERR_NOTFOUND : IG_ERR_IO,
                          "cannot open policy dir %s: %s", dir,
                          strerror(errno));
    names = calloc(IG_POLICY_MAX_FILES, sizeof(*names));
    if (names == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    while ((de = readdir(d)) != NULL) {
        if (!pol_name_wanted(de->d_name, &bad))
            continue;
        if (bad) {
            st = ig_err_set(err, IG_ERR_INVALID,
                            "%s: policy file names may only use "
                            "A-Z a-z 0-9 _ . -",
                            dir);
            goto out;
        }
        if (n == IG_POLICY_MAX_FILES) {
            st = ig_err_set(err, IG_ERR_LIMIT, "%s: more than %d .lua files",
                            dir, IG_POLICY_MAX_FILES);
            goto out;
        }
        names[n] = strdup(de->d_name);
        if (names[n++] == NULL) {
            st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    qsort(names, n, sizeof(*names), pol_cmp_name);
out:
    (void)closedir(d);
    if (st != IG_OK) {
        ig_str_list_free(names, n);
        return st;
    }
    *out = names;
    *nout = n;
    return IG_OK;
}

/* Read dir/name (a regular file, symlinks followed) into f. */
static enum ig_status
pol_read_file(const char *dir, const char *name, struct pol_file *f,
              struct ig_err *err)
{
    char path[IG_PATH_MAX];
    struct stat sb;
    ssize_t got = 0;
    size_t len = 0, cap;
    int fd, n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    enum ig_status st = IG_OK;

    if (n < 0 || (size_t)n >= sizeof(path))
        return ig_err_set(err, IG_ERR_INVALID, "%s: path too long", name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ig_err_set(err, IG_ERR_IO, "cannot open %s: %s", path,
                          strerror(errno));
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = ig_err_set(err, IG_ERR_INVALID, "%s: not a regular file", name);
        goto out;
    }
    if (sb.st_size > IG_POLICY_FILE_MAX_BYTES) {
        st = ig_err_set(err, IG_ERR_LIMIT, "%s: larger than %d bytes", name,
                        IG_POLICY_FILE_MAX_BYTES);
        goto out;
    }
    cap = (size_t)sb.st_size + 1;
    f->src = malloc(cap + 1);
    f->name = strdup(name);
    if (f->src == NULL || f->name == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* Read one byte more than fstat said, to notice a file that grew. */
    while (len < cap && (got = read(fd, f->src + len, cap - len)) > 0)
        len += (size_t)got;
    if (got < 0) {
        st = ig_err_set(err, IG_ERR_IO, "cannot read %s: %s", path,
                        strerror(errno));
        goto out;
    }
    if (len != cap - 1) {
        st = ig_err_set(err, IG_ERR_IO, "%s changed while being read", path);
        goto out;
    }
    f->src[len] = '\0';
    f->len = len;
out:
    (void)close(fd);
    return st;
}

static void
pol_files_free(struct pol_file *f, size_t n)
{
    size_t i;

    if (f == NULL)
        return;
    for (i = 0; i < n; i++) {
        free(f[i].name);
        free(f[i].src);
    }
    free(f);
}

/* The revision over every file, in name order. */
static enum ig_status
pol_revision(struct pol_file *all, size_t n, char out[IG_HASH_STRLEN + 1],
             struct ig_err *err)
{
    struct ig_buf b;
    char size[32];
    size_t i;
    enum ig_status st = IG_OK;

    ig_buf_init(&b,
                (size_t)IG_POLICY_MAX_FILES * (IG_POLICY_FILE_MAX_BYTES + 512));
    for (i = 0; i < n && st == IG_OK; i++) {
        (void)snprintf(size, sizeof(size), "%zu", all[i].len);
        st = ig_buf_add(&b, all[i].name, strlen(all[i].name) + 1);
        if (st == IG_OK)
            st = ig_buf_add(&b, size, strlen(size) + 1);
        if (st == IG_OK)
            st = ig_buf_add(&b, all[i].src, all[i].len);
    }
    if (st != IG_OK)
        ig_err_set(err, st, "hashing the bundle: %s", ig_strerror(st));
    else
        ig_hash_bytes(b.data != NULL ? b.data : "", b.len, out);
    ig_buf_release(&b);
    return st;
}

/* Read every listed file, hash them, and split policies from tests. */
static enum ig_status
pol_read_all(struct pol_bundle *b, char **names, size_t n, struct ig_err *err)
{
    struct pol_file *all = calloc(n + 1, sizeof(*all));
    size_t i;
    enum ig_status st = IG_OK;

    b->files = calloc(n + 1, sizeof(*b->files));
    b->tests = calloc(n + 1, sizeof(*b->tests));
    if (all == NULL || b->files == NULL || b->tests == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < n && st == IG_OK; i++)
        st = pol_read_file(b->dir, names[i], &all[i], err);
    if (st != IG_OK)
        goto out;
    st = pol_revision(all, n, b->revision, err);
    if (st != IG_OK)
        goto out;
    /* Move each file into files or tests; all keeps no pointers. */
    for (i = 0; i < n; i++) {
        if (pol_is_test_name(all[i].name))
            b->tests[b->ntests++] = all[i];
        else
            b->files[b->nfiles++] = all[i];
        memset(&all[i], 0, sizeof(all[i]));
    }
out:
    pol_files_free(all, n);
    return st;
}

enum ig_status
pol_bundle_read(const char *dir, const json_t *settings,
                struct pol_bundle **out, struct ig_err *err)
{
    struct pol_bundle *b = NULL;
    char **names = NULL;
    size_t n = 0;
    enum ig_status st;

    *out = NULL;
    if (settings != NULL && !json_is_object(settings))
        return ig_err_set(err, IG_ERR_INVALID,
                          "policy settings must be a JSON object");
    st = pol_list_dir(dir, &names, &n, err);
    if (st != IG_OK)
        return st;
    b = calloc(1, sizeof(*b));
    if (b == NULL || (b->dir = strdup(dir)) == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    atomic_init(&b->refs, 1);
    b->settings = settings != NULL ? json_deep_copy(settings) : json_object();
    if (b->settings == NULL) {
        st = ig_err_set(err, IG_ERR_NOMEM, "out of memory");
        goto out;
    }
    st = pol_read_all(b, names, n, err);
out:
    ig_str_list_free(names, n);
    if (st != IG_OK) {
        pol_bundle_unref(b);
        return st;
    }
    *out = b;
    return IG_OK;
}

void
pol_bundle_ref(struct pol_bundle *b)
{
    IG_ASSERT(b != NULL);
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void
pol_bundle_unref(struct pol_bundle *b)
{
    if (b == NULL)
        return;
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    pol_files_free(b->files, b->nfiles);
    pol_files_free(b->tests, b->ntests);
    json_decref(b->settings);
    free(b->dir);
    free(b);
}

const char *
pol_bundle_revision(const struct pol_bundle *b)
{
    return b->revision;
}
