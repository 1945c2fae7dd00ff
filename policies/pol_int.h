/*
 * pol_int.h - private declarations shared by the policy engine's files.
 *
 * The engine is split by concern, in layers: each file uses only files
 * listed above it (scripts/check-cycles.py holds CI to that).
 *   pol_utf8.c     one valid UTF-8 character, encoding, copying as text
 *   pol_value.c    read-only tables: JSON -> Lua proxies, next/raw*
 *   pol_vm.c       one Lua state: capped allocator, instruction and wall
 *                  clock budget, failing a run, loading a chunk
 *   pol_stdlib.c   the wrapped string/table functions (plain find, capped
 *                  rep and concat, budget-charged insert/remove/sort/unpack)
 *   pol_helpers.c  glob, starts_with, ends_with, count, approved
 *   pol_net.c      cidr_contains, ip_is_private, the host rules
 *   pol_url.c      parse_url
 *   pol_text.c     clean_text, resource_canonical, git_ref_valid
 *   pol_verdict.c  ALLOW/ESCALATE/BLOCK values and combining them
 *   pol_sandbox.c  the allowlisted environment built from all of the above
 *   pol_bundle.c   reading a bundle directory, its revision, refcounting
 *   pol_eval.c     struct pol_engine: compiled bundle, evaluation, recovery
 *   pol_load.c     pol_bundle_load: read a bundle, prove it evaluates
 *   pol_test.c     pol_bundle_test: running a bundle's *_test.lua cases
 */
#ifndef POL_INT_H
#define POL_INT_H

#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ig_hash.h"
#include "ig_limits.h"
#include "pol.h"

/* Instructions between two calls of the budget hook (a granularity, not
   a limit: the limits are the IG_POLICY_* of ig_limits.h). */
#define POL_HOOK_GRAIN 1000

/* One file of a bundle, NUL-terminated source. */
struct pol_file {
    char *name;
    char *src;
    size_t len;
};

struct pol_bundle {
    atomic_long refs;
    char *dir;
    struct pol_file *files; /* policies, in name order */
    size_t nfiles;
    struct pol_file *tests; /* *_test.lua, in name order */
    size_t ntests;
    json_t *settings; /* a JSON object, never NULL */
    char revision[IG_HASH_STRLEN + 1];
};

/* How a protected call ended. */
enum pol_status {
    POL_OK = 0,
    POL_FAIL_ERROR, /* -> BLOCK POLICY_ERROR */
    POL_FAIL_LIMIT  /* -> BLOCK POLICY_LIMIT */
};

/*
 * One sandboxed Lua state and its budget. The state's extra space points
 * back at the struct, so the allocator, hook and helpers find it.
 *
 * Failures are sticky: once a limit trips (budget, memory, a size cap) or
 * count() fails, the current run fails whatever the policy does next, even
 * if it catches the error with pcall.
 */
struct pol_vm {
    lua_State *L;
    struct pol_limits lim;
    size_t mem_used;
    int mem_refused;     /* the allocator refused to grow the heap */
    int budget_on;       /* a run is in progress */
    int64_t steps_left;  /* instructions left in this run */
    int hook_count;      /* current count-hook period */
    int64_t deadline_us; /* CLOCK_MONOTONIC deadline of this run */
    enum pol_status sticky;
    char sticky_msg[POL_MESSAGE_MAX];
    pol_count_fn count;
    void *count_ctx;
    const char *file; /* file running now, for messages */
};

/* ---- pol_utf8.c ---- */

/*
 * Copy n bytes of src into dst (size dstsz >= 1) as valid UTF-8 text: bad
 * bytes and control characters become '?', truncation keeps whole
 * characters, always NUL-terminated.
 */
void pol_copy_text(char *dst, size_t dstsz, const char *src, size_t n);
/*
 * Length (1-4) of the valid UTF-8 character at s (n > 0 bytes left), or 0
 * when the bytes there are not one (overlong, surrogate, truncated...).
 */
size_t pol_utf8_char(const unsigned char *s, size_t n);
/* Write cp (at most U+10FFFF) as UTF-8 to out (4 bytes); its length. */
size_t pol_utf8_encode(unsigned long cp, char *out);

/* ---- pol_bundle.c ---- */

/* 1 when name ends in "_test.lua". */
int pol_is_test_name(const char *name);
/*
 * pol_bundle_load without its last step: list, read and hash dir, but
 * compile nothing (pol_load.c adds that). Errors and *out as
 * pol_bundle_load.
 */
enum ig_status pol_bundle_read(const char *dir, const json_t *settings,
                               struct pol_bundle **out,
                               struct ig_err *err) IG_WUR;

/* ---- pol_sandbox.c ---- */

/*
 * Create the state (pol_vm_create) with the allowlisted environment and
 * the global config built from settings (a JSON object or NULL).
 * IG_ERR_NOMEM or IG_ERR_INVALID (bad limits, settings too large for the
 * heap).
 */
enum ig_status pol_vm_open(struct pol_vm *vm, const struct pol_limits *l,
                           const json_t *settings, pol_count_fn count,
                           void *count_ctx, struct ig_err *err) IG_WUR;

/* ---- pol_vm.c ---- */

/*
 * A bare state with the capped allocator and the panic handler, its
 * extra space pointing at vm, and no environment yet. l NULL: defaults.
 * IG_ERR_INVALID for limits below IG_POLICY_MEMORY_MIN / 1, IG_ERR_NOMEM.
 */
enum ig_status pol_vm_create(struct pol_vm *vm, const struct pol_limits *l,
                             pol_count_fn count, void *count_ctx,
                             struct ig_err *err) IG_WUR;
/*
 * Make the table on top of the stack (popped) the environment of every
 * chunk pol_vm_load() loads from now on, and the registry's globals.
 */
void pol_vm_set_env(lua_State *L);
/* Close the state (NULL-safe on an unopened vm). */
void pol_vm_close(struct pol_vm *vm);
/* The vm owning L. */
struct pol_vm *pol_vm_of(lua_State *L);
/* Start a budgeted run: reset budget, deadline and sticky state. */
void pol_vm_begin(struct pol_vm *vm);
/* End the run: remove the hook. */
void pol_vm_end(struct pol_vm *vm);
/*
 * Compile f as text with the sandbox environment and push the chunk.
 * On failure writes "name:line: msg" to msg and returns POL_FAIL_ERROR.
 */
enum pol_status pol_vm_load(struct pol_vm *vm, const struct pol_file *f,
                            char *msg, size_t msgsz);
/*
 * lua_pcall the function below nargs arguments and map the result: limits
 * (budget, memory, caps) -> POL_FAIL_LIMIT, errors -> POL_FAIL_ERROR, with
 * a message naming vm->file written to msg (results are left on success).
 */
enum pol_status pol_vm_pcall(struct pol_vm *vm, int nargs, int nres, char *msg,
                             size_t msgsz);
/* Charge n units of C work to the budget; raises when it is spent. */
void pol_vm_charge(lua_State *L, int64_t n);
/*
 * Fail the run with a sticky status and message ("file:line: " first) and
 * raise it; use as `return pol_vm_fail(L, ...)`. Never returns.
 */
int pol_vm_fail(lua_State *L, enum pol_status st, const char *fmt, ...)
    IG_PRINTF(3, 4);

/* ---- pol_stdlib.c ---- */

/*
 * Push the sandbox string table (also installed as the string metatable's
 * __index) and table table, built from the opened real libraries at
 * string_idx and table_idx.
 */
void pol_push_string_lib(lua_State *L, int string_idx);
void pol_push_table_lib(lua_State *L, int table_idx);

/* ---- pol_value.c ---- */

/* Replace the table on top of the stack by a read-only proxy for it. */
void pol_freeze(lua_State *L);
/* Like pol_freeze, for the global environment (friendlier write error). */
void pol_freeze_env(lua_State *L);
/* When the value at idx is a read-only proxy, push its data and return 1. */
int pol_proxy_data(lua_State *L, int idx);
/* Push v as read-only Lua values (raises on depth or memory). */
void pol_push_json(lua_State *L, const json_t *v);
/* Create the `null` sentinel, store it in the registry and push it. */
void pol_push_new_null(lua_State *L);
/* Push the `null` sentinel. */
void pol_push_null(lua_State *L);
/* Sandbox versions of next, rawget, rawset, rawlen (proxy-aware). */
int pol_lua_next(lua_State *L);
int pol_lua_rawget(lua_State *L);
int pol_lua_rawset(lua_State *L);
int pol_lua_rawlen(lua_State *L);

/* ---- pol_helpers.c, pol_net.c, pol_url.c and pol_text.c ---- */

/* Set the helper globals (glob, starts_with, ...) in the table at idx. */
void pol_open_helpers(lua_State *L, int idx);
void pol_open_net(lua_State *L, int idx);
void pol_open_url(lua_State *L, int idx);
void pol_open_text(lua_State *L, int idx);

/* A literal IP address; IPv4 in b[0..3]. */
struct pol_ip {
    int v6;
    unsigned char b[16];
};

/*
 * Parse s (n bytes, any bytes) as a strict dotted-quad IPv4 or an IPv6
 * address (inet_pton), optionally in [brackets]; an IPv6 "%zone" is
 * dropped. 1 on success.
 */
int pol_ip_parse(const char *s, size_t n, struct pol_ip *ip);
/* 1 when the last label of h (one final dot ignored) is numeric (WHATWG). */
int pol_ends_in_number(const char *h, size_t n);
/*
 * 1 when h (n bytes) is a DNS name as parse_url and ip_is_private accept
 * it: labels of 1..IG_DNS_LABEL_MAX bytes of [A-Za-z0-9_-], at most
 * IG_DNS_NAME_MAX bytes (one final dot allowed), last label not numeric.
 */
int pol_host_name_ok(const char *h, size_t n);
/*
 * ip_is_private's answer for the host h (n bytes, any bytes, NUL
 * included): 1 unless h is a public address or a well-formed name that
 * does not resolve locally (pol_net.c tells the rules). Thread-safe.
 */
int pol_host_private(const char *h, size_t n);
/*
 * parse_url without Lua, for tests and fuzzing: 1 when s (n bytes) is a
 * URL parse_url accepts, with its lowercased host copied to host (hostsz
 * bytes, truncated, NUL-terminated) and its port (0 when none) in *port.
 */
int pol_url_valid(const char *s, size_t n, char *host, size_t hostsz,
                  long *port);

/* Why a text helper refused its input. */
struct pol_fault {
    const char *code; /* static: "FORMAT_CHARACTER", "EMPTY_SEGMENT", ... */
    size_t at;        /* 0-based byte offset of the fault */
    uint32_t cp;      /* the character at fault, where there is one */
    char detail[112]; /* one line for a message; byte numbers from 1 */
};

/*
 * The checks of clean_text, resource_canonical and git_ref_valid on s (n
 * bytes, NUL bytes included; pol_text.c tells the rules): 1 when s
 * passes, else 0 with f filled in. Thread-safe, no allocation.
 */
int pol_text_clean(const char *s, size_t n, struct pol_fault *f);
int pol_resource_canonical(const char *s, size_t n, struct pol_fault *f);
int pol_git_ref_valid(const char *s, size_t n, struct pol_fault *f);

/* ---- pol_verdict.c ---- */

/* Set ALLOW, ESCALATE and BLOCK in the table at idx. */
void pol_open_verdicts(lua_State *L, int idx);

/* Collects the verdicts of one evaluation. */
struct pol_acc {
    int any_allow, any_escalate, any_block;
    struct pol_decision block;
    struct pol_decision esc;
};

void pol_acc_init(struct pol_acc *a);
/*
 * Add the value at idx returned by file. Returns POL_OK, or
 * POL_FAIL_ERROR with msg set for a value that is not a verdict or nil.
 */
enum pol_status pol_acc_add(struct pol_acc *a, lua_State *L, int idx,
                            const char *file, char *msg, size_t msgsz);
/* The combined decision (BLOCK NO_POLICY_MATCHED when nobody answered). */
void pol_acc_finish(const struct pol_acc *a, struct pol_decision *out);
/* Fill out as BLOCK with one reason and a message. */
void pol_decision_fail(struct pol_decision *out, const char *reason,
                       const char *msg);

/* One traced file (pol.h tells the trace). */
struct pol_trace_entry {
    enum pol_trace_verdict verdict;
    int64_t ns;
    char reason[POL_REASON_MAX]; /* "" when the verdict had none */
    char policy[NAME_MAX + 1];   /* a bundle file name (a d_name) */
};

struct pol_trace {
    size_t n;
    struct pol_trace_entry e[IG_POLICY_MAX_FILES];
};

/*
 * Record that file returned the value at idx after ns nanoseconds: a
 * verdict is appended; nil and non-verdicts are not (pol_acc_add refuses
 * the latter, and pol_trace_fail then records the ERROR).
 */
void pol_trace_put(struct pol_trace *t, lua_State *L, int idx, const char *file,
                   int64_t ns);
/*
 * Record that file failed with st (ERROR or LIMIT) after ns nanoseconds:
 * replaces the entry pol_trace_put made for file just before, else
 * appends.
 */
void pol_trace_fail(struct pol_trace *t, const char *file, enum pol_status st,
                    int64_t ns);

#endif
