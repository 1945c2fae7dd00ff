/*
 * test_store_cosig_cases.h - the cases of witness cosignatures in the
 * store (store.h: store_cosig_put/get/latest, store_opts.on_checkpoint,
 * the offline reader's notes with their cosignature lines), written once
 * and run on each backend: test_store_cosig.c (SQLite) and
 * test_store_pg_cosig.c (PostgreSQL). Each file gives the opener; every
 * case opens its own store on a fresh database.
 */
#ifndef TEST_STORE_COSIG_CASES_H
#define TEST_STORE_COSIG_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "ig_key.h"
#include "store.h"

#define CC_LOG "log.example/cosig" /* the log's origin and key name */
#define CC_W1 "w1.example/a"
#define CC_W2 "w2.example/b"
#define CC_SIZES_MAX 64

struct cc_fixture {
    /* The backend: its database (a SQLite path or a postgresql:// URL),
       made fresh per case by the setup; the opener uses o as given. */
    char db[1024];
    char dir[64]; /* SQLite: the case's directory */
    char *pg_url; /* PostgreSQL: the case's database (pg_test_db) */
    struct ig_signing_key *log_key, *w1_key, *w2_key;
    /* What on_checkpoint was told, in order (under a mutex). */
    uint64_t sizes[CC_SIZES_MAX];
    size_t nsizes;
};

/* The options every case opens with (the log's key and name, the
   on_checkpoint recorder), path the fixture's database. */
void cc_opts(struct cc_fixture *f, struct store_opts *o);
/* The on_checkpoint of cc_opts (ctx: a struct cc_fixture), and how many
   sizes it recorded there. */
void cc_record(void *ctx, uint64_t size);
size_t cc_nsizes(struct cc_fixture *f);
/* Open a store with o, failing the test when it does not open. */
struct store *cc_open(const struct store_opts *o);
/* Fresh keys into f (the backends' setups call it). */
void cc_keys(struct cc_fixture *f);
void cc_keys_free(struct cc_fixture *f);

/* Put n events and sign a checkpoint (waiting on PostgreSQL until this
   handle sequences); returns its size. */
uint64_t cc_grow_and_sign(struct store *s, int n);
/* witness's cosignature line (key k, timestamp ts) of the stored
   checkpoint of tree size `size`: malloc'd. */
char *cc_line(struct store *s, uint64_t size, const char *witness,
              const struct ig_signing_key *k, uint64_t ts);
/* The bare note of checkpoint `size`, malloc'd. */
char *cc_note(struct store *s, uint64_t size);

/* The cases, as cmocka tests; *state is the struct cc_fixture. */
void cc_put_get_latest(void **state);
void cc_first_put_wins(void **state);
void cc_missing_checkpoint(void **state);
void cc_hostile_lines(void **state);
void cc_on_checkpoint(void **state);
void cc_offline_reader(void **state);

#define COSIG_CASES(setup, teardown)                                           \
    cmocka_unit_test_setup_teardown(cc_put_get_latest, setup, teardown),       \
        cmocka_unit_test_setup_teardown(cc_first_put_wins, setup, teardown),   \
        cmocka_unit_test_setup_teardown(cc_missing_checkpoint, setup,          \
                                        teardown),                             \
        cmocka_unit_test_setup_teardown(cc_hostile_lines, setup, teardown),    \
        cmocka_unit_test_setup_teardown(cc_on_checkpoint, setup, teardown),    \
        cmocka_unit_test_setup_teardown(cc_offline_reader, setup, teardown)

#endif
