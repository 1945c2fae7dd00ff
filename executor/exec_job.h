/*
 * exec_job.h - one admitted execution, run on a worker while its HTTP
 * connection is suspended, answered as one JSON object or (Accept:
 * application/x-ndjson) as a stream of lines.
 *
 * The HTTP thread admits the request (exec_admit: every check, a slot),
 * suspends the connection and hands the job to the pool; the worker
 * redeems, runs and reports, then resumes the connection. A refusal at
 * redemption is always a plain JSON error. A stream sends
 *   {"stream":"stdout","data":"…"}   (or "data_b64url": not UTF-8)
 * lines as output arrives and ends with the plain reply's object. The
 * job is reference counted: the request, the worker and a stream
 * response each hold one.
 */
#ifndef EXEC_JOB_H
#define EXEC_JOB_H

#include <microhttpd.h>

#include "exec_execute.h"
#include "exec_pool.h"

struct exec_job;

typedef enum MHD_Result (*exec_send_json_fn)(struct MHD_Connection *c,
                                             unsigned int status, json_t *v);

/*
 * Admit body (a checked execute body; a reference is taken) and start it:
 * NULL with *out set (the caller's reference; the connection is now
 * suspended and will be resumed), or the refusal (*status set, nothing
 * started). Call from the access handler.
 */
json_t *exec_job_start(struct exec_ctx *x, struct exec_pool *pool,
                       struct MHD_Connection *c, json_t *body, int stream,
                       struct exec_job **out, unsigned int *status);

/*
 * The access handler runs again for a request with a job (it was
 * resumed): queue the reply, or the stream, or suspend again when
 * nothing is ready yet.
 */
enum MHD_Result exec_job_resumed(struct exec_job *j, struct MHD_Connection *c,
                                 exec_send_json_fn send_json);

/* Drop a reference. NULL is fine. */
void exec_job_unref(struct exec_job *j);

#endif
