/*
 * pol.h - intentgate's policy engine: Lua 5.4 policies in a sandbox.
 *
 * A bundle is a directory of `*.lua` policy files (and `*_test.lua` test
 * files). Each policy file returns a function(intent) that returns ALLOW,
 * ESCALATE{...}, BLOCK{...} or nil (no opinion). The intent is a read-only
 * table holding the intent binding (version, intent_id, principal, tenant,
 * action, resource, params, context, created_at, expires_at, and later
 * approval). Combination over all files: any BLOCK wins; else any ESCALATE
 * (requirements merged, strictest wins); else ALLOW if any file allowed;
 * else BLOCK NO_POLICY_MATCHED.
 *
 * Lifecycle: pol_bundle_load() reads and checks a directory once (source,
 * revision); the bundle is immutable and reference counted, shared by all
 * threads. Each evaluating thread owns a struct pol_engine: a long-lived
 * Lua state holding the compiled bundle, reused for every evaluation (never
 * rebuilt per request). Engines are not thread safe; bundles are.
 *
 * Every failure fails closed: pol_engine_eval() always fills a decision,
 * and any error, limit or missing verdict yields BLOCK with a stable reason
 * (POLICY_ERROR, POLICY_LIMIT, NO_POLICY_MATCHED) naming the file.
 */
#ifndef POL_H
#define POL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ig_buf.h"
#include "ig_error.h"
#include "ig_limits.h"

/* The zero value is BLOCK, so uninitialised memory and errors deny. */
enum pol_verdict { POL_BLOCK = 0, POL_ALLOW = 1, POL_ESCALATE = 2 };

/* Sizes of struct pol_decision (core/ig_limits.h tells each). */
#define POL_MAX_REASONS IG_POLICY_REASONS_MAX
#define POL_REASON_MAX IG_POLICY_REASON_MAX   /* one code, "PROTECTED_BRANCH" */
#define POL_MESSAGE_MAX IG_POLICY_MESSAGE_MAX /* human-readable message */
#define POL_MAX_GROUPS IG_POLICY_GROUPS_MAX
#define POL_GROUP_MAX IG_POLICY_GROUP_MAX

struct pol_decision {
    enum pol_verdict verdict;
    size_t nreasons;
    char reasons[POL_MAX_REASONS][POL_REASON_MAX]; /* UPPER_SNAKE codes */
    char message[POL_MESSAGE_MAX];
    /* ESCALATE only: merged requirements (union of groups, largest
       quorum, shortest ttl; 0 means "use the configured default"). */
    size_t ngroups;
    char groups[POL_MAX_GROUPS][POL_GROUP_MAX];
    int quorum;
    int64_t ttl_seconds;
};

/* Per-evaluation limits; pol_limits_default() fills the defaults from
   ig_limits.h. */
struct pol_limits {
    size_t memory_bytes;       /* Lua heap cap per engine */
    int64_t instructions;      /* VM instructions per evaluation */
    int64_t wall_microseconds; /* wall clock per evaluation */
};

void pol_limits_default(struct pol_limits *l);

/*
 * Quota counter backed by the store: record one hit of key now and return
 * how many hits key has had in the last window_seconds (this one included).
 * Returns -1 on error (the policy then fails closed with POLICY_ERROR).
 * Called from the evaluating thread.
 */
typedef int64_t (*pol_count_fn)(void *ctx, const char *key,
                                int64_t window_seconds);

struct pol_bundle;
struct pol_engine;

/*
 * Load the bundle in dir: every `*.lua` file that is not `*_test.lua`,
 * in name order. Each must compile as text (bytecode refused) and, run
 * once in a sandbox, return a function. settings (may be NULL) is a JSON
 * object exposed read-only to policies as the global `config` (e.g.
 * quota_per_minute). The revision is "sha256:" + hex SHA-256 over the
 * sorted (file name, NUL, size, NUL, content) of every .lua file in dir,
 * tests included. IG_ERR_INVALID (err names the file and line),
 * IG_ERR_NOTFOUND for a missing dir or a dir without policies, IG_ERR_IO,
 * IG_ERR_LIMIT over IG_POLICY_MAX_FILES or IG_POLICY_FILE_MAX_BYTES.
 * On IG_OK *out has one reference.
 */
enum ig_status pol_bundle_load(const char *dir, const json_t *settings,
                               struct pol_bundle **out,
                               struct ig_err *err) IG_WUR;

/* Reference counting (thread safe). unref(NULL) is fine. */
void pol_bundle_ref(struct pol_bundle *b);
void pol_bundle_unref(struct pol_bundle *b);

/* "sha256:…"; valid while the bundle lives. */
const char *pol_bundle_revision(const struct pol_bundle *b);

/*
 * A new engine for bundle b (takes its own reference) with limits l (NULL
 * for defaults) and counter callback count/count_ctx (count may be NULL:
 * count() then fails closed). IG_ERR_INVALID when a policy fails to load.
 */
enum ig_status pol_engine_new(struct pol_bundle *b, const struct pol_limits *l,
                              pol_count_fn count, void *count_ctx,
                              struct pol_engine **out,
                              struct ig_err *err) IG_WUR;

void pol_engine_free(struct pol_engine *e);

/* The bundle this engine evaluates (borrowed). */
struct pol_bundle *pol_engine_bundle(const struct pol_engine *e);

/*
 * Evaluate intent (a JSON object, the binding) and fill *out. Never fails:
 * errors become BLOCK POLICY_ERROR / POLICY_LIMIT with a message naming the
 * file. Not thread safe: one engine per thread.
 */
void pol_engine_eval(struct pol_engine *e, const json_t *intent,
                     struct pol_decision *out);

/* 1 when s (length n) matches ^[A-Z][A-Z0-9_]*$ and fits POL_REASON_MAX. */
int pol_reason_valid(const char *s, size_t n);

/* "ALLOW", "ESCALATE" or "BLOCK". */
const char *pol_verdict_name(enum pol_verdict v);

/*
 * The explain trace: which policy file returned which verdict in one
 * evaluation, in file (name) order. Files that returned nil (no opinion)
 * are left out. A file that failed gets one last entry, ERROR (reason
 * POLICY_ERROR) or LIMIT (POLICY_LIMIT), and evaluation stops there; its
 * message is the decision's own. A failure before any file ran (the intent
 * could not be converted, the engine is unusable) leaves the trace empty.
 * At most IG_POLICY_MAX_FILES entries; each entry holds copies, so a trace
 * outlives the engine and bundle that filled it.
 *
 * A trace is reusable: each pol_engine_eval_traced() resets it first. It
 * is plain memory, not thread safe: one per evaluating thread, like the
 * engine. JSON form (pol_trace_json), the "trace" of intent.decided:
 *   [{"policy":"git.lua","verdict":"ESCALATE","reasons":["PROTECTED_BRANCH"]},
 *    {"policy":"quota.lua","verdict":"ALLOW","reasons":[]}]
 */
struct pol_trace;

/* What one file returned; the first three equal enum pol_verdict. */
enum pol_trace_verdict {
    POL_TRACE_BLOCK = POL_BLOCK,
    POL_TRACE_ALLOW = POL_ALLOW,
    POL_TRACE_ESCALATE = POL_ESCALATE,
    POL_TRACE_ERROR, /* the file raised an error or returned no verdict */
    POL_TRACE_LIMIT  /* the evaluation's budget ran out in this file */
};

/* An empty trace; NULL on out of memory. free(NULL) is fine. */
struct pol_trace *pol_trace_new(void);
void pol_trace_free(struct pol_trace *t);

/*
 * pol_engine_eval, and fill t (reset first) with each file's verdict and
 * wall time. t may be NULL: then exactly pol_engine_eval, same cost (no
 * clock read).
 */
void pol_engine_eval_traced(struct pol_engine *e, const json_t *intent,
                            struct pol_decision *out, struct pol_trace *t);

/* Number of entries. */
size_t pol_trace_len(const struct pol_trace *t);
/* Entry i (< pol_trace_len): the file name (valid while t is unchanged),
   verdict, wall time in nanoseconds (CLOCK_MONOTONIC) and reasons (0 or 1
   today; j < pol_trace_nreasons). */
const char *pol_trace_policy(const struct pol_trace *t, size_t i);
enum pol_trace_verdict pol_trace_verdict(const struct pol_trace *t, size_t i);
int64_t pol_trace_ns(const struct pol_trace *t, size_t i);
size_t pol_trace_nreasons(const struct pol_trace *t, size_t i);
const char *pol_trace_reason(const struct pol_trace *t, size_t i, size_t j);
/* "ALLOW", "ESCALATE", "BLOCK", "ERROR" or "LIMIT". */
const char *pol_trace_verdict_name(enum pol_trace_verdict v);

/*
 * The trace as the JSON array above (a new reference; no timings); NULL
 * on out of memory. pol_trace_entry_json: entry i alone, the same object.
 */
json_t *pol_trace_json(const struct pol_trace *t) IG_WUR;
json_t *pol_trace_entry_json(const struct pol_trace *t, size_t i) IG_WUR;

/*
 * The same array appended to b as canonical JSON text (RFC 8785, what
 * ig_canon_write makes of pol_trace_json), without building it in
 * jansson first: what the PDP embeds in every intent.decided. IG_OK,
 * IG_ERR_LIMIT at b's cap, IG_ERR_NOMEM.
 */
enum ig_status pol_trace_canon(const struct pol_trace *t,
                               struct ig_buf *b) IG_WUR;

/*
 * Run every `*_test.lua` in the bundle's dir against the bundle and print
 * one line per case ("ok", or "FAIL" with what differed) to out, then a
 * summary "N passed, M failed". Returns the number of failures (0 = all
 * passed); -1 when the tests could not run (err says why). A dir with no
 * test files is an error: a bundle must be tested.
 */
int pol_bundle_test(struct pol_bundle *b, FILE *out, struct ig_err *err);

/* ---- coverage of a bundle's policies by its tests (test runner only) ---- */

/* Which lines and if/elseif branches of each policy file the cases ran. */
struct pol_coverage;

/*
 * pol_bundle_test, and with cov non-NULL also coverage: every case is
 * decided by the same plain engine (same lines, same result), then run
 * again in a second engine whose policies carry branch probes and a line
 * hook (pol_cover.h), which only observes. *cov is then a new report (free
 * with pol_coverage_free), NULL when -1 is returned. A case the two
 * engines decide differently is a bug the report names; it never changes
 * the result. Not thread safe with another coverage run on this thread.
 */
int pol_bundle_test_cover(struct pol_bundle *b, FILE *out,
                          struct pol_coverage **cov, struct ig_err *err);

/*
 * The report, per policy file in name order (test files are not
 * reported), as text:
 *   coverage git.lua: lines 41/44 (93%), branches 17/20 (85%)
 *     not run: 57, 58, 88
 *     branch not taken: 61 `if` false (no case skipped it), 73 `elseif` true
 *   total: lines 380/402 (94.5%), branches 130/151 (86.1%)
 * or as JSON ({"files":[{"file","lines":{"run","total","not_run":[..]},
 * "branches":{"taken","total","not_taken":[{"line","kind","outcome"}]}
 * or null with "branches_note"}],"total":{...},"mismatches":N}; NULL on
 * out-of-memory). free(NULL) is fine.
 */
void pol_coverage_print(const struct pol_coverage *c, FILE *out);
json_t *pol_coverage_json(const struct pol_coverage *c);
void pol_coverage_free(struct pol_coverage *c);

#endif
