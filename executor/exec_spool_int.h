/*
 * exec_spool_int.h - private to the outcome spool: the spool struct
 * shared by exec_spool.c (the API), exec_spool_retry.c (delivery, the
 * retry thread, logging), exec_spool_set.c (the pending set, group
 * commit) and exec_spool_file.c (the line format, reading the file back,
 * the directory's checks, the atomic rewrite) - in that order, each file
 * using only those after it. "(lock held)": the caller holds s->mu.
 */
#ifndef EXEC_SPOOL_INT_H
#define EXEC_SPOOL_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec_spool.h"

#define SPOOL_BUCKETS 1024

/*
 * One execution the spool holds: a run record (outcome[0] == '\0') or a
 * pending outcome. line is the one record that stands for it when the
 * file is rewritten. While busy a delivery of it is in progress outside
 * the lock: only the thread that set busy may change or free it.
 */
struct spool_entry {
    char id[IG_INTENT_ID_MAX + 1];
    char outcome[IG_OUTCOME_NAME_MAX + 1];
    char *line; /* "CCCCCCCC JSON\n", malloc'd */
    size_t len;
    uint64_t age; /* order of arrival: oldest first */
    unsigned attempts;
    int busy;
    struct spool_entry *older, *newer; /* the age list */
    struct spool_entry *hnext;         /* the bucket chain */
};

/* A record read back from a line. doc owns the strings and detail. */
enum spool_type { SPOOL_RUN = 1, SPOOL_OUTCOME, SPOOL_DONE };
struct spool_rec {
    enum spool_type type;
    const char *id, *outcome, *result;
    const json_t *detail;
    json_t *doc;
};

struct exec_spool {
    struct exec_spool_opts o; /* defaults filled in */
    char *dir;
    int dirfd, fd; /* the directory (locked) and the file (O_APPEND) */

    pthread_mutex_t mu;
    pthread_cond_t synced_cv; /* group commit: a sync ended */
    pthread_cond_t flush_cv;  /* flusher: a run record to flush */
    pthread_cond_t wake;      /* retry thread: work, kick, stop */
    pthread_cond_t passed;    /* flush: a retry pass ended */

    /* The pending set, by id and by age. */
    struct spool_entry *bucket[SPOOL_BUCKETS];
    struct spool_entry *oldest, *newest;
    uint64_t next_age;
    size_t nrun, npending;

    /* Group commit: records written, made durable, whose sync failed. */
    uint64_t written, synced, failed;
    int syncing; /* a leader is syncing (uses fd without the lock) */
    int broken;  /* a write or sync failed: rewrite before trusting */
    int need_lf; /* a torn write could not be cut: end it first */
    off_t size;  /* bytes in the file */
    size_t live; /* bytes of the entries' lines */
    char fail_msg[IG_ERR_MSGMAX]; /* why the last sync failed */

    /* The retry thread. failures: consecutive transient ones; while > 0
       nothing is sent before retry_at (ms, o.now_ms's clock). */
    pthread_t thread;
    int has_thread, stopping;
    /* The flusher: syncs run records as soon as they are written, so the
       disk flush overlaps the redemption instead of following it. */
    pthread_t flusher;
    int has_flusher, flush_req;
    unsigned failures;
    double retry_at;
    uint64_t pass_req, pass_done;

    struct exec_spool_stats st;
};

/* exec_spool_file.c */

/* 1 when id is 1..IG_INTENT_ID_MAX bytes of [A-Za-z0-9-]. */
int exec_spool_id_valid(const char *id);
/* 1 when name is 1..IG_OUTCOME_NAME_MAX bytes of [A-Z_]. */
int exec_spool_name_valid(const char *name);
/* IG_OK when detail is an object of at most IG_OUTCOME_DETAIL_MAX_BYTES
   canonical bytes; IG_ERR_INVALID, IG_ERR_LIMIT, IG_ERR_NOMEM. */
enum ig_status exec_spool_detail_check(const json_t *detail,
                                       struct ig_err *err) IG_WUR;
/* The line of a record (type "run", "outcome" with outcome and detail,
   or "done" with result) into *line (malloc'd) and *len. Arguments are
   trusted (checked by the caller). IG_ERR_LIMIT, IG_ERR_NOMEM. */
enum ig_status exec_spool_format(const char *type, const char *id,
                                 const char *outcome, const json_t *detail,
                                 const char *result, char **line, size_t *len,
                                 struct ig_err *err) IG_WUR;
/* The detail object of an outcome line (a new reference), or NULL. */
json_t *exec_spool_line_detail(const char *line, size_t len);
/* Create (0700) or check dir, open and lock it into s->dirfd. */
enum ig_status exec_spool_dir_open(struct exec_spool *s, const char *dir,
                                   struct ig_err *err) IG_WUR;
/* Apply one record read back (exec_spool_apply). */
typedef enum ig_status (*spool_apply_fn)(struct exec_spool *s,
                                         const struct spool_rec *r,
                                         struct ig_err *err);
/* Read the spool file back, calling apply for each good record and
   counting damaged lines. A missing file is empty. */
enum ig_status exec_spool_load(struct exec_spool *s, spool_apply_fn apply,
                               struct ig_err *err) IG_WUR;
/* With the lock held and no sync running: write every entry's line to a
   new file, sync it, rename it over the spool, sync the directory; make
   it s->fd. On success everything written is durable. */
enum ig_status exec_spool_rewrite(struct exec_spool *s,
                                  struct ig_err *err) IG_WUR;

/* exec_spool_set.c: the pending set (lock held, or before any thread
   runs) */

/* The entry of id, or NULL. */
struct spool_entry *exec_spool_entry_find(const struct exec_spool *s,
                                          const char *id);
/* A new run entry, newest; NULL when out of memory. */
struct spool_entry *exec_spool_entry_add(struct exec_spool *s, const char *id);
/* Give e the line (taken) that stands for it; outcome: now pending. */
void exec_spool_entry_set(struct exec_spool *s, struct spool_entry *e,
                          char *line, size_t len, const char *outcome);
/* Unlink and free e. */
void exec_spool_entry_free(struct exec_spool *s, struct spool_entry *e);
/* Apply one record read back (the replay rules are there); a
   spool_apply_fn. */
enum ig_status exec_spool_apply(struct exec_spool *s, const struct spool_rec *r,
                                struct ig_err *err) IG_WUR;

/* exec_spool_set.c: group commit (lock held) */

/* Append one line; *seq gets its number for exec_spool_commit_locked. */
void exec_spool_append_locked(struct exec_spool *s, const char *line,
                              size_t len, uint64_t *seq);
/* Lead one sync (no sync running) of every record written so far. */
void exec_spool_lead_sync(struct exec_spool *s);
/* Wait until record seq is durable; IG_ERR_IO when its sync failed. */
enum ig_status exec_spool_commit_locked(struct exec_spool *s, uint64_t seq,
                                        struct ig_err *err) IG_WUR;
/* The flusher thread (arg: the spool). */
void *exec_spool_flusher_main(void *arg);
/* Append a record nobody waits for: "done" with result, after the
   change it records is made in memory (it may rewrite). */
void exec_spool_append_nowait(struct exec_spool *s, const char *type,
                              const char *id, const char *result);

/* exec_spool_retry.c */

/* Log one event (o.log or a JSON line on stderr). Without the lock. */
void exec_spool_log(const struct exec_spool *s, const char *event,
                    const char *id, unsigned attempts, const char *error);
/* Ask the retry thread for a new pass (lock held); the pass's number. */
uint64_t exec_spool_kick_locked(struct exec_spool *s);
/* Send busy entry e once (lock held; dropped while sending and logging;
   e may be freed on return). detail: the caller's, or NULL to read it
   from e's line. retry: made by the retry thread. 1 when delivered. */
int exec_spool_deliver(struct exec_spool *s, struct spool_entry *e,
                       const json_t *detail, int retry);
/* The retry thread. */
void *exec_spool_retry_main(void *p);

#endif
