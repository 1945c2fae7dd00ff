/*
 * witness_add.h - the tlog-witness add-checkpoint call, from the request
 * body to the answer, without HTTP: parse (400), find the log by the
 * note's origin line (404), check the log's signature (403), then the
 * state's decision (witness_state.h: 400, 409, 422 or 200 with the
 * cosignature). Every refusal is one line of text naming the problem;
 * a 409's body is the stored size, of type text/x.tlog.size.
 */
#ifndef WITNESS_ADD_H
#define WITNESS_ADD_H

#include <stddef.h>
#include <stdint.h>

#include "ig_buf.h"
#include "witness_config.h"
#include "witness_state.h"

#define WITNESS_TYPE_TEXT "text/plain; charset=utf-8"
#define WITNESS_TYPE_SIZE "text/x.tlog.size"

struct witness_answer {
    unsigned int status;
    const char *type; /* Content-Type (static) */
    struct ig_buf body;
};

/* Prepare a (empty) answer; release its body with ig_buf_release. */
void witness_answer_init(struct witness_answer *a);

/* Fill a with status and the one line problem (a newline is added). */
void witness_answer_text(struct witness_answer *a, unsigned int status,
                         const char *problem);

/*
 * Answer the add-checkpoint body[0..len) for the logs of c, cosigning as
 * sg at time now (seconds). Logs witness.cosigned (info), witness.evidence
 * (error, a refused checkpoint the log signed) and witness.db_error.
 * Thread safe as witness_state_submit is.
 */
void witness_add_checkpoint(const struct witness_config *c,
                            struct witness_state *st,
                            const struct witness_signer *sg, const char *body,
                            size_t len, int64_t now, struct witness_answer *a);

#endif
