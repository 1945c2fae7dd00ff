/*
 * exec_spool_set.c - the outcome spool's pending set and group commit
 * (the DESIGN block is in exec_spool.c; the declarations in
 * exec_spool_int.h). Below the API (exec_spool.c) and the retry thread
 * (exec_spool_retry.c), above the file format (exec_spool_file.c).
 */
#include "exec_spool_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ig_file.h"

/* ---- the pending set ---- */

static size_t
bucket_of(const char *id)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    while (*id != '\0')
        h = (h ^ (unsigned char)*id++) * 16777619u;
    return h % SPOOL_BUCKETS;
}

struct spool_entry *
exec_spool_entry_find(const struct exec_spool *s, const char *id)
{
    struct spool_entry *e = s->bucket[bucket_of(id)];

    while (e != NULL && strcmp(e->id, id) != 0)
        e = e->hnext;
    return e;
}

/* A new run entry, newest; NULL when out of memory. */
struct spool_entry *
exec_spool_entry_add(struct exec_spool *s, const char *id)
{
    struct spool_entry *e = calloc(1, sizeof(*e));
    size_t b = bucket_of(id);

    if (e == NULL)
        return NULL;
    (void)snprintf(e->id, sizeof(e->id), "%s", id);
    e->age = ++s->next_age;
    e->hnext = s->bucket[b];
    s->bucket[b] = e;
    e->older = s->newest;
    if (s->newest != NULL)
        s->newest->newer = e;
    else
        s->oldest = e;
    s->newest = e;
    s->nrun++;
    return e;
}

void
exec_spool_entry_free(struct exec_spool *s, struct spool_entry *e)
{
    struct spool_entry **pp = &s->bucket[bucket_of(e->id)];

    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    if (e->older != NULL)
        e->older->newer = e->newer;
    else
        s->oldest = e->newer;
    if (e->newer != NULL)
        e->newer->older = e->older;
    else
        s->newest = e->older;
    if (e->outcome[0] != '\0')
        s->npending--;
    else
        s->nrun--;
    s->live -= e->len;
    free(e->line);
    free(e);
}

/* Give e the line (taken) that stands for it; outcome: now pending. */
void
exec_spool_entry_set(struct exec_spool *s, struct spool_entry *e, char *line,
                     size_t len, const char *outcome)
{
    s->live = s->live - e->len + len;
    free(e->line);
    e->line = line;
    e->len = len;
    if (outcome != NULL && e->outcome[0] == '\0') {
        (void)snprintf(e->outcome, sizeof(e->outcome), "%s", outcome);
        s->nrun--;
        s->npending++;
    }
}

/* Replay: a run or outcome adds its id when absent; an outcome completes
   a run; done removes the id; any other repeat is ignored. */
enum ig_status
exec_spool_apply(struct exec_spool *s, const struct spool_rec *r,
                 struct ig_err *err)
{
    struct spool_entry *e = exec_spool_entry_find(s, r->id);
    enum ig_status st;
    char *line;
    size_t len;

    if (r->type == SPOOL_DONE ||
        (e != NULL && (r->type == SPOOL_RUN || e->outcome[0] != '\0'))) {
        if (r->type == SPOOL_DONE && e != NULL)
            exec_spool_entry_free(s, e);
        return IG_OK;
    }
    st = r->type == SPOOL_RUN
             ? exec_spool_format("run", r->id, NULL, NULL, NULL, &line, &len,
                                 err)
             : exec_spool_format("outcome", r->id, r->outcome, r->detail, NULL,
                                 &line, &len, err);
    if (st != IG_OK)
        return st;
    if (e == NULL && (e = exec_spool_entry_add(s, r->id)) == NULL) {
        free(line);
        return ig_err_set(err, IG_ERR_NOMEM, "out of memory");
    }
    exec_spool_entry_set(s, e, line, len,
                         r->type == SPOOL_OUTCOME ? r->outcome : NULL);
    return IG_OK;
}

/* ---- group commit ---- */

static int
compact_due(const struct exec_spool *s)
{
    return s->broken || (s->size > (off_t)s->o.compact_bytes &&
                         s->size > 2 * (off_t)s->live);
}

/* Append one line (lock held); *seq gets its number for commit. A failed
   write is cut off again, or ended by the next append; the spool is then
   broken, so the next commit rewrites the file from memory. */
void
exec_spool_append_locked(struct exec_spool *s, const char *line, size_t len,
                         uint64_t *seq)
{
    int ok = 1;

    if (s->need_lf && (ok = ig_file_write_all(s->fd, "\n", 1) == 0)) {
        s->need_lf = 0;
        s->size++;
    }
    if (ok && (ok = ig_file_write_all(s->fd, line, len) == 0))
        s->size += (off_t)len;
    if (!ok) {
        s->broken = 1;
        if (ftruncate(s->fd, s->size) != 0)
            s->need_lf = 1;
    }
    s->st.records_total++;
    *seq = ++s->written;
}

/* Lead one sync (lock held, no sync running) of every record written so
   far: the rewrite when one is due (a broken spool must be rewritten; a
   large one falls back to a plain sync when it cannot be). */
void
exec_spool_lead_sync(struct exec_spool *s)
{
    uint64_t target;
    struct ig_err err;
    int fd, rc = 0, rewritten = 0;

    s->syncing = 1;
    target = s->written;
    ig_err_clear(&err);
    if (compact_due(s)) {
        rewritten = exec_spool_rewrite(s, &err) == IG_OK;
        s->st.rewrite_failures += rewritten ? 0u : 1u;
    }
    if (!rewritten && s->broken) {
        rc = -1;
    } else if (!rewritten) {
        fd = s->fd;
        pthread_mutex_unlock(&s->mu);
        rc = s->o.sync(s->o.ctx, fd);
        if (rc != 0)
            (void)ig_err_set(&err, IG_ERR_IO, "%s", strerror(errno));
        pthread_mutex_lock(&s->mu);
        s->st.syncs_total++;
        if (rc == 0 && s->synced < target)
            s->synced = target;
    }
    if (rc != 0) {
        s->broken = 1;
        if (s->failed < target)
            s->failed = target;
        (void)snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", err.msg);
    }
    s->syncing = 0;
    pthread_cond_broadcast(&s->synced_cv);
    pthread_cond_signal(&s->flush_cv); /* a request made meanwhile */
}

/* Wait (lock held) until record seq is durable. */
enum ig_status
exec_spool_commit_locked(struct exec_spool *s, uint64_t seq, struct ig_err *err)
{
    while (s->synced < seq) {
        if (s->failed >= seq)
            return ig_err_set(err, IG_ERR_IO,
                              "cannot make the outcome spool %s durable: %s",
                              s->dir, s->fail_msg);
        if (s->syncing)
            pthread_cond_wait(&s->synced_cv, &s->mu);
        else
            exec_spool_lead_sync(s);
    }
    return IG_OK;
}

/* The flusher: lead a sync whenever a run record asks for one and no
   sync is running, so that it is durable (or nearly) by the time the
   redemption's answer comes back. */
void *
exec_spool_flusher_main(void *arg)
{
    struct exec_spool *s = arg;

    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        if (!s->flush_req || s->syncing) {
            pthread_cond_wait(&s->flush_cv, &s->mu);
            continue;
        }
        s->flush_req = 0;
        if (s->synced < s->written)
            exec_spool_lead_sync(s);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Append a record nobody waits for (lock held); compact when due. */
void
exec_spool_append_nowait(struct exec_spool *s, const char *type, const char *id,
                         const char *result)
{
    char *line;
    size_t len;
    uint64_t seq;

    if (exec_spool_format(type, id, NULL, NULL, result, &line, &len, NULL) ==
        IG_OK)
        exec_spool_append_locked(s, line, len, &seq);
    else
        s->broken = 1; /* the rewrite will leave the id out */
    free(line);
    /* When it fails the old file stands (or stays broken): retried. */
    if (!s->syncing && compact_due(s) && exec_spool_rewrite(s, NULL) != IG_OK)
        s->st.rewrite_failures++;
}
