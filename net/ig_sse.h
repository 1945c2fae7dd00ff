/*
 * ig_sse.h - Server-sent events (text/event-stream): an incremental
 * parser for the bytes of a hostile server, and a writer.
 *
 * The parser follows the WHATWG HTML "Server-sent events" interpretation
 * rules. Feed it the stream in chunks of any size (a line, a line end, even
 * a CR|LF pair may be split anywhere); it calls fn once per dispatched
 * event, in order. Lines end in CRLF, LF or CR; a UTF-8 BOM at the very
 * start is skipped; ":..." is a comment; "NAME:VALUE" drops one space after
 * the colon; a line without a colon is a field with an empty value. Fields:
 * data (appends VALUE and "\n"), event, id (ignored when it holds a NUL),
 * retry (ASCII digits only, else ignored); others are ignored. An empty
 * line dispatches: the last event id is set from the id field seen so far,
 * even when nothing is dispatched; nothing is when the data is empty; else
 * the last "\n" of the data is dropped and the event goes out with type
 * "message" unless an event field named another.
 *
 * Caps: one event's data plus the line being read may take at most
 * max_event_bytes; past that the feed fails with IG_ERR_LIMIT and the
 * parser refuses every later feed (the stream is unusable: fail the
 * request). The bytes are not checked as UTF-8 and may hold NUL bytes.
 *
 * Not thread safe; one owner. The writer is a pure function.
 */
#ifndef IG_SSE_H
#define IG_SSE_H

#include <stddef.h>

#include "ig_buf.h"
#include "ig_error.h"

/* One dispatched event. Every pointer is borrowed: valid only during the
   callback. */
struct ig_sse_event {
    const char *type; /* "message" by default */
    size_t type_len;
    const char *data; /* any bytes, NUL bytes included; NUL-terminated */
    size_t data_len;
    const char *id; /* the last event id so far ("" if none) */
    size_t id_len;
    long retry_ms; /* the last valid retry seen, -1 if none */
};

/* Called once per event; a nonzero return stops the feed. */
typedef int (*ig_sse_fn)(void *ctx, const struct ig_sse_event *ev);

/* The parser's state; embed it and use only the functions below. */
struct ig_sse {
    struct ig_buf line;    /* the line being read, without its end */
    struct ig_buf data;    /* the data buffer */
    struct ig_buf type;    /* the event type buffer */
    struct ig_buf id;      /* the last event id buffer */
    struct ig_buf last_id; /* the last event id string (at dispatch) */
    long retry_ms;
    size_t max;
    unsigned bom; /* bytes of a leading BOM matched so far */
    int started;  /* the stream's start (a BOM or not) is settled */
    int after_cr; /* the last byte ended a line with CR */
    int failed;   /* the enum ig_status of a failed feed: refuse the rest */
};

/* Prepare p for a new stream with the cap max_event_bytes (> 0). */
void ig_sse_init(struct ig_sse *p, size_t max_event_bytes);

/*
 * Parse n more bytes of the stream, calling fn(ctx, event) for each event
 * they complete. IG_ERR_LIMIT past the cap, IG_ERR_NOMEM, IG_ERR_INVALID
 * when fn stopped it (err says which); after any error every later feed
 * fails the same way. Events dispatched before the error were delivered.
 */
enum ig_status ig_sse_feed(struct ig_sse *p, const char *buf, size_t n,
                           ig_sse_fn fn, void *ctx, struct ig_err *err) IG_WUR;

/* The last event id string (what a client sends as Last-Event-ID): ""
   until an event block with an id field ended. Borrowed until the next
   feed. */
const char *ig_sse_last_id(const struct ig_sse *p, size_t *len);

/* Free the buffers. p may be initialised again. */
void ig_sse_release(struct ig_sse *p);

/*
 * Append one event to out: "id: ID\n" when id is not NULL, "event: TYPE\n"
 * when type is not NULL, then the len bytes of data split at each '\n'
 * into "data: ...\n" lines, then "\n". IG_ERR_INVALID when id or type holds
 * a CR or LF, or data a CR (the parser would end a line there: it would
 * not read back the same data); IG_ERR_LIMIT past out's cap, IG_ERR_NOMEM.
 * On an error out is as it was.
 */
enum ig_status ig_sse_write(struct ig_buf *out, const char *type,
                            const char *id, const char *data,
                            size_t len) IG_WUR;

#endif
