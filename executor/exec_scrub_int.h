/*
 * exec_scrub_int.h - private to the credential scrubber: the scrubber's
 * layout and the span lists shared by exec_scrub.c (building the
 * spellings, the API, the replacing passes), exec_scrub_find.c (finding
 * spans in a text and in its escape views), exec_scrub_b64.c (the base64
 * view), exec_scrub_spans.c (span lists) and exec_scrub_json.c (the walk
 * over a decoded JSON value).
 *
 * A struct exec_scrub is one ig_secmem block, written once by
 * exec_scrub_new and read-only after it: every function here only reads
 * it, so threads may share it. A struct scrub_spans belongs to one call.
 */
#ifndef EXEC_SCRUB_INT_H
#define EXEC_SCRUB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "exec_scrub.h"

#define SCRUB_MAX_SPELLINGS 80 /* 33 per value at most, two values */
#define SCRUB_TABLE_BITS 8     /* slots: 4 or more per spelling */
#define SCRUB_TABLE_SIZE (1u << SCRUB_TABLE_BITS)
#define SCRUB_FILTER_BITS 10 /* the first test: 1 in 13 or fewer set */
#define SCRUB_FILTER_SIZE (1u << SCRUB_FILTER_BITS)
#define SCRUB_WORK_FACTOR 16 /* whole-spelling compare bytes per text byte */
#define SCRUB_STRETCH 11     /* most source bytes one view byte comes from */
#define SCRUB_MARKER_LEN (sizeof(EXEC_SCRUB_MARKER) - 1)

/* The views exec_scrub_scan looks through besides the text itself. */
#define SCRUB_VIEW_ESC 1u /* JSON escapes, %XX, HTML references */
#define SCRUB_VIEW_B64 2u /* base64 and base64url runs */

struct scrub_spelling {
    uint32_t off;  /* in text[] */
    uint32_t len;  /* > 0 */
    uint32_t next; /* 1 + index of the next spelling with this key; 0 */
};

struct scrub_slot {
    uint64_t key;   /* masked last bytes of its spellings */
    uint32_t first; /* 1 + index of the first spelling; 0: empty */
    uint32_t pad;
};

struct exec_scrub {
    uint64_t mul;  /* random, odd */
    uint64_t mask; /* keeps the last q bytes of an 8-byte load */
    size_t q, n, shortest, longest;
    int mark_bad, withheld_bad; /* the marker texts hold a spelling */
    struct scrub_spelling sp[SCRUB_MAX_SPELLINGS];
    struct scrub_slot slot[SCRUB_TABLE_SIZE];
    unsigned char filter[SCRUB_FILTER_SIZE]; /* 1: a key hashes here */
    unsigned char text[];
};

struct scrub_span {
    size_t a, b; /* [a, b) */
};

/* Sorted, disjoint spans; v is malloc'd (the caller frees it). */
struct scrub_spans {
    struct scrub_span *v;
    size_t n, cap;
    size_t max;  /* more spans than this: the result cannot fit */
    size_t work; /* compare bytes left */
    int one;     /* only whether there is a span matters: keep one span
                    covering all of them (never more than max) */
};

/* The table slot where the search for a key starts. */
static inline size_t
scrub_slot_of(const struct exec_scrub *s, uint64_t key)
{
    return (size_t)((key * s->mul) >> (64 - SCRUB_TABLE_BITS));
}

/*
 * Most source bytes one occurrence of a spelling can take, in any view: L
 * decoded bytes are at most 4 * (L / 3 + 2) base64 characters (partial
 * groups at both ends included), and one escape view byte comes from at
 * most SCRUB_STRETCH source bytes. The longest chain is a base64 run read
 * in an escape view, 11 x 4 x (L / 3 + 2); an escape read in base64 is
 * 4 x (11 L / 3 + 2), less. The escape views decode this far around each
 * escape, and EXEC_SCRUB_CUT drops this much (rounded up) from a cut text.
 */
static inline size_t
scrub_extent(const struct exec_scrub *s)
{
    return SCRUB_STRETCH * 4 * (s->longest / 3 + 2);
}

/*
 * All spans of the n bytes at t, into out (exec_scrub_find.c): its own,
 * and unless literal those of its views (exec_scrub_scan with both). Each
 * whole-spelling compare takes its length from out->work. IG_ERR_LIMIT
 * past out->max spans or out of work (the text must be withheld),
 * IG_ERR_NOMEM; out then holds a part. Reads s only; thread safe.
 */
enum ig_status exec_scrub_find_all(const struct exec_scrub *s,
                                   const unsigned char *t, size_t n,
                                   int literal, struct scrub_spans *out) IG_WUR;

/*
 * The spans of the n bytes at t and of the views named in views
 * (SCRUB_VIEW_*), into out; errors as exec_scrub_find_all. A view's own bytes
 * are scanned with the other view only: one level of each
 * (exec_scrub_find.c).
 */
enum ig_status exec_scrub_scan(const struct exec_scrub *s,
                               const unsigned char *t, size_t n, unsigned views,
                               struct scrub_spans *out) IG_WUR;

/* A scanner with exec_scrub_scan's contract. */
typedef enum ig_status (*scrub_scan_fn)(const struct exec_scrub *s,
                                        const unsigned char *t, size_t n,
                                        unsigned views,
                                        struct scrub_spans *out);

/*
 * The spans of t's base64 view (exec_scrub_b64.c): every base64 run
 * whose decoded bytes, scanned by scan (exec_scrub_scan) with views, hold a
 * spelling, whole. Errors as exec_scrub_find_all.
 */
enum ig_status exec_scrub_b64_find(const struct exec_scrub *s,
                                   const unsigned char *t, size_t n,
                                   unsigned views, scrub_scan_fn scan,
                                   struct scrub_spans *out) IG_WUR;

/* Span lists (exec_scrub_spans.c). Add [a, b), b never below the last
   span's end; unite the sorted spans of add into ss. IG_ERR_LIMIT past
   max, IG_ERR_NOMEM. */
enum ig_status exec_scrub_spans_push(struct scrub_spans *ss, size_t a,
                                     size_t b) IG_WUR;
enum ig_status exec_scrub_spans_unite(struct scrub_spans *ss,
                                      const struct scrub_spans *add) IG_WUR;

/*
 * 1 when the n bytes at t hold any spelling (or cannot be scanned), 0
 * when clean; -1 out of memory (exec_scrub.c). Thread safe.
 */
int exec_scrub_holds(const struct exec_scrub *s, const char *t, size_t n);

#endif
