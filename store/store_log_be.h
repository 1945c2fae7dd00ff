/*
 * store_log_be.h - private to the offline reader (store_log.h): its two
 * backends. store_log.c hands each call to store_log_sq_* (a SQLite file,
 * store_log_sq.c) or store_log_pg_* (a postgresql:// URL, store_log_pg.c);
 * each function is its store_log.h namesake on the backend's own structs.
 */
#ifndef STORE_LOG_BE_H
#define STORE_LOG_BE_H

#include "store_log.h"

struct store_log_sq;
struct store_log_sq_cursor;
struct store_log_pg;
struct store_log_pg_cursor;
struct store_log_sq_dcursor; /* store_log_dec_sq.c */
struct store_log_pg_dcursor; /* store_log_dec_pg.c */
struct sqlite3;
struct pg_conn;

/* SQLite */
enum ig_status store_log_sq_open(const char *path, struct store_log_sq **out,
                                 struct ig_err *err) IG_WUR;
void store_log_sq_close(struct store_log_sq *l);
enum ig_status store_log_sq_scan(struct store_log_sq *l,
                                 enum store_log_table table,
                                 const char *contains,
                                 struct store_log_sq_cursor **out,
                                 struct ig_err *err) IG_WUR;
enum ig_status store_log_sq_next(struct store_log_sq_cursor *c,
                                 struct store_log_row *row,
                                 struct ig_err *err) IG_WUR;
void store_log_sq_cursor_free(struct store_log_sq_cursor *c);
enum ig_status store_log_sq_checkpoint(struct store_log_sq *l, uint64_t size,
                                       char **note, size_t *len, uint64_t *got,
                                       struct ig_err *err) IG_WUR;
enum ig_status store_log_sq_leaf(struct store_log_sq *l, uint64_t index,
                                 char **leaf, size_t *len,
                                 struct ig_err *err) IG_WUR;
int store_log_sq_has_tiles(struct store_log_sq *l);
enum ig_status store_log_sq_scan_tiles(struct store_log_sq *l, unsigned level,
                                       struct store_log_sq_cursor **out,
                                       struct ig_err *err) IG_WUR;
enum ig_status store_log_sq_nodes(struct store_log_sq *l, uint64_t size,
                                  struct ig_err *err) IG_WUR;
enum ig_status store_log_sq_fetch_node(void *ctx, unsigned level,
                                       uint64_t index,
                                       unsigned char out[AUDIT_HASH_BYTES]);
/* The connection a decision scan reads (store_log_dec_sq.c), and what a
   read that ended returns: st, or IG_ERR_IO when an immutable file
   changed meanwhile. */
struct sqlite3 *store_log_sq_db(struct store_log_sq *l);
enum ig_status store_log_sq_ended(const struct store_log_sq *l,
                                  enum ig_status st, struct ig_err *err);
enum ig_status store_log_sq_scan_decisions(struct store_log_sq *l, int64_t from,
                                           int64_t until,
                                           struct store_log_sq_dcursor **out,
                                           struct ig_err *err) IG_WUR;
enum ig_status store_log_sq_next_decision(struct store_log_sq_dcursor *c,
                                          struct store_log_decision *d,
                                          struct ig_err *err) IG_WUR;
void store_log_sq_dcursor_free(struct store_log_sq_dcursor *c);

/* PostgreSQL */
enum ig_status store_log_pg_open(const char *url, struct store_log_pg **out,
                                 struct ig_err *err) IG_WUR;
void store_log_pg_close(struct store_log_pg *l);
enum ig_status store_log_pg_scan(struct store_log_pg *l,
                                 enum store_log_table table,
                                 const char *contains,
                                 struct store_log_pg_cursor **out,
                                 struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_next(struct store_log_pg_cursor *c,
                                 struct store_log_row *row,
                                 struct ig_err *err) IG_WUR;
void store_log_pg_cursor_free(struct store_log_pg_cursor *c);
enum ig_status store_log_pg_checkpoint(struct store_log_pg *l, uint64_t size,
                                       char **note, size_t *len, uint64_t *got,
                                       struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_leaf(struct store_log_pg *l, uint64_t index,
                                 char **leaf, size_t *len,
                                 struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_scan_tiles(struct store_log_pg *l, unsigned level,
                                       struct store_log_pg_cursor **out,
                                       struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_nodes(struct store_log_pg *l, uint64_t size,
                                  struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_fetch_node(void *ctx, unsigned level,
                                       uint64_t index,
                                       unsigned char out[AUDIT_HASH_BYTES]);
enum ig_status store_log_pg_queued(struct store_log_pg *l, uint64_t *n,
                                   struct ig_err *err) IG_WUR;
/* The connection of l, and its last error as one line in l's buffer. */
struct pg_conn *store_log_pg_conn(struct store_log_pg *l);
const char *store_log_pg_error(struct store_log_pg *l);
enum ig_status store_log_pg_scan_decisions(struct store_log_pg *l, int64_t from,
                                           int64_t until,
                                           struct store_log_pg_dcursor **out,
                                           struct ig_err *err) IG_WUR;
enum ig_status store_log_pg_next_decision(struct store_log_pg_dcursor *c,
                                          struct store_log_decision *d,
                                          struct ig_err *err) IG_WUR;
void store_log_pg_dcursor_free(struct store_log_pg_dcursor *c);

#endif
