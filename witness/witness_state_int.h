/*
 * witness_state_int.h - what witness_state.c (the state and the decision)
 * and witness_evidence.c (the evidence table, and the listings of
 * `witness show`) share.
 */
#ifndef WITNESS_STATE_INT_H
#define WITNESS_STATE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "witness_state.h"

struct witness_state {
    sqlite3 *db;
    pthread_mutex_t mu; /* one statement or transaction at a time */
    size_t evidence_max;
};

/* The stored checkpoint of an origin, loaded in the transaction. */
struct witness_cur {
    int has;
    uint64_t size;
    unsigned char root[AUDIT_HASH_BYTES];
    char *note; /* malloc'd: the kept note and the cosignature line */
    size_t note_len;
};

/* Keep in as evidence of reason against cur (in the open transaction):
 *outcome as witness_result's evidence. IG_ERR_IO. */
enum ig_status witness_evidence_put(struct witness_state *s,
                                    const struct witness_submit *in,
                                    const struct witness_cur *cur,
                                    enum witness_reason reason, int *outcome,
                                    struct ig_err *err) IG_WUR;

/* A statement; IG_ERR_IO naming the database's complaint. */
enum ig_status witness_sql_prepare(struct witness_state *s, const char *sql,
                                   sqlite3_stmt **st,
                                   struct ig_err *err) IG_WUR;
enum ig_status witness_sql_error(struct witness_state *s, const char *what,
                                 struct ig_err *err);

#endif
