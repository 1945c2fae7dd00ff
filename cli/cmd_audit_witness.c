/*
 * cmd_audit_witness.c - `audit verify --witness VKEY --witness-quorum K`:
 * does the checkpoint the verification ends on carry K valid
 * cosignatures (c2sp.org/tlog-cosignature) from the named witnesses?
 *
 * The notes verify reads (the database's, --checkpoints, --anchor) carry
 * the witnesses' cosignature lines after the log's signature line. Every
 * note that opens with one of the log's keys is searched for each named
 * witness (audit_cosig_find): on the latest checkpoint - the largest size
 * - that gives the witness's state (cosigned, missing, or INVALID); over
 * all of them, the largest size it cosigned (its view of the log). A
 * witness counts once however many of its lines a note holds. A line by a
 * named witness's name and key id that does not verify is a forgery or a
 * cosignature copied from another checkpoint: evidence, so an error
 * whatever the quorum.
 */
#include "cli.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit_cosig.h"
#include "cmd_audit_int.h"
#include "ig_buf.h"
#include "ig_time.h"

/* ---- the keys ---- */

static enum ig_status
add_key(struct cli_audit_witnesses *ws, const struct audit_witness_key *k,
        const char *arg, struct ig_err *err)
{
    size_t i;

    for (i = 0; i < ws->n; i++)
        if (ws->w[i].key.key_id == k->key_id &&
            strcmp(ws->w[i].key.name, k->name) == 0)
            return ig_err_set(err, IG_ERR_INVALID,
                              "--witness %s: the witness %s+%08x is named "
                              "twice (each witness counts once)",
                              arg, k->name, (unsigned)k->key_id);
    if (ws->n == IG_AUDIT_CLI_WITNESSES_MAX)
        return ig_err_set(err, IG_ERR_LIMIT, "at most %d witnesses",
                          IG_AUDIT_CLI_WITNESSES_MAX);
    memset(&ws->w[ws->n], 0, sizeof(ws->w[ws->n]));
    ws->w[ws->n++].key = *k;
    return IG_OK;
}

/* A file of vkeys, one a line; blank lines and lines starting with '#'
   are skipped. */
static enum ig_status
load_file(struct cli_audit_witnesses *ws, const char *arg, struct ig_err *err)
{
    struct audit_witness_key k;
    struct ig_buf file;
    struct ig_err ferr;
    const char *p, *end, *nl;
    size_t lineno = 0, got = 0;
    enum ig_status st;

    ig_buf_init(&file, (size_t)IG_AUDIT_CLI_WITNESSES_MAX * 256);
    st = cli_read_input(arg, &file, &ferr);
    if (st != IG_OK) {
        (void)ig_err_set(err, st == IG_ERR_LIMIT ? st : IG_ERR_INVALID,
                         "--witness %s: %s", arg, ferr.msg);
        goto out;
    }
    p = file.data != NULL ? file.data : "";
    end = p + file.len;
    for (; p < end && st == IG_OK; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            nl = end;
        lineno++;
        while (p < nl && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p == nl || *p == '#')
            continue;
        if (audit_witness_key_parse(p, (size_t)(nl - p), &k, &ferr) != IG_OK)
            st = ig_err_set(err, IG_ERR_INVALID, "--witness %s:%zu: %s", arg,
                            lineno, ferr.msg);
        else if ((st = add_key(ws, &k, arg, err)) == IG_OK)
            got++;
    }
    if (st == IG_OK && got == 0)
        st = ig_err_set(err, IG_ERR_INVALID,
                        "--witness %s: no witness key in the file", arg);
out:
    ig_buf_release(&file);
    return st;
}

enum ig_status
cli_audit_witnesses_load(struct cli_audit_witnesses *ws,
                         const char *const *args, size_t nargs, uint64_t quorum,
                         struct ig_err *err)
{
    struct audit_witness_key k;
    struct ig_err kerr;
    enum ig_status st = IG_OK;
    size_t i;

    memset(ws, 0, sizeof(*ws));
    for (i = 0; i < nargs && st == IG_OK; i++) {
        if (audit_witness_key_parse(args[i], strlen(args[i]), &k, &kerr) ==
            IG_OK)
            st = add_key(ws, &k, args[i], err);
        else if (access(args[i], F_OK) == 0)
            st = load_file(ws, args[i], err);
        else
            st = ig_err_set(err, IG_ERR_INVALID,
                            "--witness %s is neither a witness key "
                            "(NAME+ID+KEY, type 04) nor a file: %s",
                            args[i], kerr.msg);
    }
    if (st != IG_OK)
        return st;
    ws->quorum = quorum > 0 ? quorum : ws->n;
    if (ws->quorum > ws->n)
        return ig_err_set(err, IG_ERR_INVALID,
                          "--witness-quorum %llu: only %zu witness%s named",
                          (unsigned long long)quorum, ws->n,
                          ws->n == 1 ? " is" : "es are");
    return IG_OK;
}

enum ig_status
cli_audit_witnesses_not_log(const struct cli_audit_witnesses *ws,
                            const struct audit_verifier *keys, size_t nkeys,
                            struct ig_err *err)
{
    size_t j, k;

    for (j = 0; j < ws->n; j++)
        for (k = 0; k < nkeys; k++)
            if (sodium_memcmp(ws->w[j].key.pk, keys[k].pk,
                              sizeof(keys[k].pk)) == 0)
                return ig_err_set(err, IG_ERR_INVALID,
                                  "--witness %s+%08x is the log's own key "
                                  "(--key %s+%08x): a log does not witness "
                                  "itself",
                                  ws->w[j].key.name,
                                  (unsigned)ws->w[j].key.key_id, keys[k].name,
                                  (unsigned)keys[k].key_id);
    return IG_OK;
}

/* ---- the search ---- */

/* Whether note holds a signature line by name at all (cheap: most notes
   carry no line of most witnesses). */
static int
mentions(const char *note, size_t len, const char *name)
{
    char needle[AUDIT_NAME_MAX + 8];
    size_t n;
    int r = snprintf(needle, sizeof(needle), "\n\xe2\x80\x94 %s ", name);

    if (r < 0 || (size_t)r >= sizeof(needle))
        return 1;
    n = (size_t)r;
    for (; len >= n; note++, len--)
        if (memcmp(note, needle, n) == 0)
            return 1;
    return 0;
}

/* One note of checkpoint cp, for witness w. */
static void
check_note(struct cli_audit_witness *w, const char *note, size_t len,
           const struct audit_checkpoint *cp, int final)
{
    struct ig_err e;
    uint64_t ts = 0;
    enum ig_status st;

    if (!mentions(note, len, w->key.name))
        return;
    ig_err_clear(&e);
    st = audit_cosig_find(note, len, &w->key, &ts, &e);
    if (st == IG_ERR_NOTFOUND)
        return;
    if (st != IG_OK) {
        if (!w->invalid || cp->size > w->invalid_size) {
            w->invalid_size = cp->size;
            (void)snprintf(w->why, sizeof(w->why), "%s", e.msg);
        }
        w->invalid = 1;
        if (final)
            w->state = ACLI_COSIG_INVALID;
        return;
    }
    if (!w->viewed || cp->size > w->view_size ||
        (cp->size == w->view_size && ts > w->view_ts)) {
        w->view_size = cp->size;
        w->view_ts = ts;
    }
    w->viewed = 1;
    if (final && w->state != ACLI_COSIG_INVALID) {
        w->state = ACLI_COSIG_OK;
        if (ts > w->ts)
            w->ts = ts;
    }
}

/* Whether note holds a line by one of the witnesses' names. */
static int
mentions_any(const struct cli_audit_witnesses *ws, const char *note, size_t len)
{
    size_t j;

    for (j = 0; j < ws->n; j++)
        if (mentions(note, len, ws->w[j].key.name))
            return 1;
    return 0;
}

void
cli_audit_witnesses_check(struct cli_audit_witnesses *ws,
                          const struct cli_audit_notes *ns,
                          const struct audit_verifier *keys, size_t nkeys,
                          const struct audit_checkpoint *final)
{
    struct audit_checkpoint cp;
    size_t i, k, j;
    int opened;

    ws->have_final = final != NULL;
    if (final != NULL)
        ws->final = *final;
    /* Only notes that carry a line by a named witness's name are opened
       (one signature check each) and searched. */
    for (i = 0; i < ns->n; i++) {
        if (!mentions_any(ws, ns->note[i], ns->len[i]))
            continue;
        opened = 0;
        for (k = 0; k < nkeys && !opened; k++)
            opened = audit_checkpoint_open(ns->note[i], ns->len[i], &keys[k],
                                           &cp, NULL) == IG_OK;
        if (!opened)
            continue;
        for (j = 0; j < ws->n; j++)
            check_note(
                &ws->w[j], ns->note[i], ns->len[i], &cp,
                final != NULL && cp.size == final->size &&
                    sodium_memcmp(cp.root, final->root, sizeof(cp.root)) == 0);
    }
    ws->cosigned = 0;
    for (j = 0; j < ws->n; j++)
        if (ws->w[j].state == ACLI_COSIG_OK)
            ws->cosigned++;
}

/* ---- the report ---- */

static void
when(uint64_t ts, char *out, size_t cap)
{
    char t[IG_TIME_STRLEN + 1];

    if (ts <= (uint64_t)INT64_MAX && ig_time_format((int64_t)ts, t) == IG_OK)
        (void)snprintf(out, cap, "%s", t);
    else
        (void)snprintf(out, cap, "time %llu", (unsigned long long)ts);
}

static void
print_witness(const struct cli_audit_witness *w)
{
    char t[48], vt[48];

    when(w->ts, t, sizeof(t));
    when(w->view_ts, vt, sizeof(vt));
    (void)printf("witness:     %s+%08x ", w->key.name, (unsigned)w->key.key_id);
    if (w->state == ACLI_COSIG_OK)
        (void)printf("cosigned (%s)", t);
    else if (w->state == ACLI_COSIG_INVALID)
        (void)printf("INVALID");
    else
        (void)printf("missing");
    if (w->viewed)
        (void)printf("; its view: size %llu (cosigned %s)",
                     (unsigned long long)w->view_size, vt);
    else
        (void)printf("; its view: none (no valid cosignature)");
    if (w->invalid)
        (void)printf("; INVALID cosignature on size %llu: %s",
                     (unsigned long long)w->invalid_size, w->why);
    (void)printf("\n");
}

int
cli_audit_witnesses_report(const struct cli_audit_witnesses *ws, char *why,
                           size_t cap)
{
    size_t j, bad = 0;

    for (j = 0; j < ws->n; j++) {
        print_witness(&ws->w[j]);
        if (ws->w[j].invalid && bad++ == 0)
            (void)snprintf(why, cap,
                           "an invalid cosignature by the witness %s+%08x on "
                           "the checkpoint of size %llu: %s",
                           ws->w[j].key.name, (unsigned)ws->w[j].key.key_id,
                           (unsigned long long)ws->w[j].invalid_size,
                           ws->w[j].why);
    }
    (void)printf("witnesses:   %zu of %zu cosigned the latest checkpoint "
                 "(size %llu); quorum %zu %s\n",
                 ws->cosigned, ws->n,
                 (unsigned long long)(ws->have_final ? ws->final.size : 0),
                 ws->quorum, ws->cosigned >= ws->quorum ? "met" : "NOT met");
    if (bad > 0)
        return ACLI_WITNESS_INVALID;
    if (ws->cosigned < ws->quorum) {
        (void)snprintf(
            why, cap,
            "%zu of the %zu named "
            "witnesses cosigned the checkpoint of size %llu, %zu "
            "needed",
            ws->cosigned, ws->n,
            (unsigned long long)(ws->have_final ? ws->final.size : 0),
            ws->quorum);
        return ACLI_WITNESS_SHORT;
    }
    return ACLI_WITNESS_MET;
}
